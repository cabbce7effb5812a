//! The outermost dim as a Rust collection: [`Array::len`], [`Array::iter`]
//! and `for row in &array`.
//!
//! ```
//! use dynd::Array;
//! let r = Array::from_json("var * var * int32", "[[1, 2], [], [3]]").unwrap();
//! assert_eq!(r.len().unwrap(), 3);
//! let rows: Vec<String> = r.iter().map(|row| row.to_json()).collect();
//! assert_eq!(rows, ["[1,2]", "[]", "[3]"]);
//! for row in &r {
//!     assert_eq!(row.tp().to_string(), "var * int32");
//! }
//! ```

use super::{Array, Index};
use crate::error::{Error, Result};

impl Array {
    /// The length of the outermost dim (a fixed dim's size, or the one
    /// row's length of an outermost var dim).
    ///
    /// Errors: `Type` for a 0-d array (a scalar, a struct), which has no
    /// dim to measure, as NumPy's `len()` of a 0-d array is an error.
    pub fn len(&self) -> Result<usize> {
        self.shape().first().copied().flatten().ok_or_else(|| {
            Error::type_error(format!(
                "len() of a 0-d array of type {}: it has no dims",
                self.tp()
            ))
        })
    }

    /// `true` when the outermost dim has no elements; errors as
    /// [`Array::len`] does.
    pub fn is_empty(&self) -> Result<bool> {
        Ok(self.len()? == 0)
    }

    /// The elements of the outermost dim, each a view (as `self.index(&[i])`
    /// gives): rows of a 2-d array, values of a 1-d one. A 0-d array has no
    /// outermost dim and yields nothing ([`Array::len`] says why).
    pub fn iter(&self) -> Iter<'_> {
        Iter {
            array: self,
            front: 0,
            back: self.len().unwrap_or(0),
        }
    }
}

/// The iterator of [`Array::iter`].
#[derive(Clone)]
pub struct Iter<'a> {
    array: &'a Array,
    front: usize,
    back: usize,
}

impl Iter<'_> {
    fn at(&self, i: usize) -> Option<Array> {
        // An integer within the outermost dim's length always indexes: the
        // error arm is not reached.
        self.array.index(&[Index::from(i)]).ok()
    }
}

impl Iterator for Iter<'_> {
    type Item = Array;

    fn next(&mut self) -> Option<Array> {
        if self.front >= self.back {
            return None;
        }
        self.front += 1;
        self.at(self.front - 1)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.back - self.front;
        (n, Some(n))
    }
}

impl DoubleEndedIterator for Iter<'_> {
    fn next_back(&mut self) -> Option<Array> {
        if self.front >= self.back {
            return None;
        }
        self.back -= 1;
        self.at(self.back)
    }
}

impl ExactSizeIterator for Iter<'_> {}

impl<'a> IntoIterator for &'a Array {
    type Item = Array;
    type IntoIter = Iter<'a>;

    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}
