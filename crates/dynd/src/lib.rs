//! # dynd
//!
//! Typed, possibly ragged n-dimensional arrays over reference-counted memory
//! blocks, with a runtime type system spoken as datashape text
//! (`3 * var * {x: int32, name: string}`).
//!
//! - [`types`]: the runtime types, datashape parsing and printing.
//! - [`memblock`]: reference-counted memory blocks (DESIGN §1.2).
//! - [`array`]: arrays — a preamble plus arrmeta over shared data — views,
//!   JSON in and out.
//!
//! ```
//! use dynd::Array;
//! let a = Array::from_json("2 * var * int32", "[[1, 2], [3]]").unwrap();
//! assert_eq!(a.to_json(), "[[1,2],[3]]");
//! assert_eq!(a.index(&[1.into(), 0.into()]).unwrap().to_json(), "3");
//! ```

#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

pub mod array;
pub mod callable;
pub mod compute;
pub mod error;
pub mod kernels;
pub mod layout;
pub mod memblock;
pub mod types;

pub use array::{Array, Index};
pub use error::{Error, ErrorKind, Result};
pub use types::Type;
