//! The Arrow C Data Interface (DESIGN §12), through arrow-rs's
//! `FFI_ArrowSchema`/`FFI_ArrowArray` structs (feature `arrow`).
//!
//! - [`Array::to_arrow`] / [`Array::from_arrow`]: a dynd array ↔ the two C
//!   structs; the outermost dim is the Arrow array's length.
//! - [`to_arrow_array`] / [`from_arrow_array`]: ↔ arrow-rs [`ArrayRef`].
//! - [`to_record_batch`] / [`from_record_batch`]: `N * {a: A, …}` (or
//!   `var * {…}`) ↔ [`RecordBatch`], one column per field.
//! - [`from_arrow_stream`] / [`to_arrow_stream`]: an
//!   `FFI_ArrowArrayStream` (record batches or chunks of any type) → one
//!   array (see [its docs](from_arrow_stream) for how the chunks join), and
//!   an array → a stream of one chunk.
//!
//! The type mapping is in [`schema`]; what is zero-copy and what copies,
//! in `export` and `import` (and docs/interop.md). An imported array is
//! read-only: it may be the producer's memory. A foreign array's release
//! callback runs exactly once, when the last dynd array over its buffers
//! is gone — or before `from_arrow` returns an error.
//!
//! ```
//! use dynd::Array;
//! let a = Array::from_json("3 * var * ?int32", "[[1, null], [], [3]]").unwrap();
//! let (schema, array) = a.to_arrow().unwrap();
//! assert_eq!(schema.format(), "+l");
//! let b = Array::from_arrow(schema, array).unwrap();
//! assert_eq!(b.tp().to_string(), "3 * var * ?int32");
//! assert_eq!(b.to_json(), "[[1,null],[],[3]]");
//! ```

mod export;
mod import;
pub mod schema;
mod stream;

pub use arrow_array::ffi::{FFI_ArrowArray, FFI_ArrowSchema};
pub use arrow_array::ffi_stream::FFI_ArrowArrayStream;
pub use stream::{from_arrow_stream, to_arrow_stream};

use crate::array::Array;
use crate::error::{Error, Result};
use arrow_array::{Array as _, ArrayRef, RecordBatch, StructArray};
use arrow_data::ArrayData;
use arrow_schema::ffi::Flags;

/// An arrow-rs error as a dynd error.
fn arrow_err(what: &str, e: arrow_schema::ArrowError) -> Error {
    Error::invalid_argument(format!("{what}: {e}"))
}

impl Array {
    /// Exports this array through the Arrow C Data Interface: the schema
    /// (the root field, nullable when the elements are options) and the
    /// array, whose length is the outermost dim. Zero-copy where the
    /// layouts allow (see the [module docs](crate::interop::arrow)); the
    /// consumer calls both structs' release (dropping them does).
    ///
    /// # Errors
    /// [`Type`](crate::ErrorKind::Type) for an array without dims, or whose
    /// element type has no Arrow form (the message names it: int128,
    /// complex, pointers, …).
    pub fn to_arrow(&self) -> Result<(FFI_ArrowSchema, FFI_ArrowArray)> {
        let (data, field) = export::export(self)?;
        let schema = FFI_ArrowSchema::try_from(&field)
            .map_err(|e| arrow_err("arrow-rs cannot describe the exported type", e))?;
        Ok((schema, FFI_ArrowArray::new(&data)))
    }

    /// Imports an array from the Arrow C Data Interface, taking ownership
    /// of both structs: `N * T` for an Arrow array of length N; nullable
    /// fields (or columns with nulls) become `?T`. The values stay in the
    /// producer's buffers where possible; the array's release runs once,
    /// when the last dynd array over them is dropped, and the schema's
    /// before this returns. On error both have been released.
    ///
    /// # Errors
    /// - [`Type`](crate::ErrorKind::Type): a format dynd does not import
    ///   (the message names the format string), or a dictionary.
    /// - [`InvalidArgument`](crate::ErrorKind::InvalidArgument): released
    ///   structs, children counts that disagree, null children, wrong
    ///   buffer counts, or data arrow-rs's validation rejects (offsets out
    ///   of bounds, invalid UTF-8, …).
    pub fn from_arrow(schema: FFI_ArrowSchema, array: FFI_ArrowArray) -> Result<Array> {
        schema::check_structs(&schema, &array)?;
        let nullable = schema.flags().is_some_and(|f| f.contains(Flags::NULLABLE));
        // SAFETY: the structs were checked structurally above; their
        // buffers are the producer's promise (the C Data Interface's
        // contract), and validate_full checks what can be checked
        // (lengths, offsets, UTF-8) before dynd reads them.
        let data = unsafe { arrow_array::ffi::from_ffi(array, &schema) }
            .map_err(|e| arrow_err("arrow-rs cannot import the ArrowArray", e))?;
        from_data(&data, nullable)
    }
}

/// `data` validated, then imported.
fn from_data(data: &ArrayData, nullable: bool) -> Result<Array> {
    data.validate_full()
        .map_err(|e| arrow_err("the Arrow data is invalid", e))?;
    import::import(data, nullable)
}

/// A dynd array (of one or more dims) as an arrow-rs array (see
/// [`Array::to_arrow`]).
///
/// ```
/// use arrow_array::{Array as _, Float64Array};
/// let a = dynd::Array::from_json("3 * float64", "[1, 2.5, 4]").unwrap();
/// let arr = dynd::interop::arrow::to_arrow_array(&a).unwrap();
/// let f = arr.as_any().downcast_ref::<Float64Array>().unwrap();
/// assert_eq!(f.values().as_ref(), &[1.0, 2.5, 4.0]);
/// ```
pub fn to_arrow_array(a: &Array) -> Result<ArrayRef> {
    let (data, _) = export::export(a)?;
    Ok(arrow_array::make_array(data))
}

/// An arrow-rs array as a dynd array `N * T` (see [`Array::from_arrow`];
/// the buffers are shared, not copied, where the layouts allow). Only
/// columns with nulls become options: an `ArrayRef` carries no field.
pub fn from_arrow_array(a: &dyn arrow_array::Array) -> Result<Array> {
    from_data(&a.to_data(), false)
}

/// A record batch as `N * {col: T, …}`, one field per column; nullable
/// columns become `?T` fields.
pub fn from_record_batch(batch: &RecordBatch) -> Result<Array> {
    let s = StructArray::from(batch.clone());
    let data = s.to_data();
    let fields = batch.schema().fields().clone();
    let dt = arrow_schema::DataType::Struct(fields);
    // StructArray::from keeps the schema's fields (and their nullability)
    // as its data type.
    debug_assert_eq!(data.data_type(), &dt);
    from_data(&data, false)
}

/// `N * {…}` or `var * {…}` as a record batch, one column per field.
///
/// # Errors
/// [`Type`](crate::ErrorKind::Type) when the elements are not a struct
/// (an optional struct has no record batch form either).
pub fn to_record_batch(a: &Array) -> Result<RecordBatch> {
    let arr = to_arrow_array(a)?;
    let Some(s) = arr.as_any().downcast_ref::<StructArray>() else {
        return Err(Error::type_error(format!(
            "a record batch needs an array of structs, not {}",
            a.tp()
        )));
    };
    if s.null_count() > 0 || a.tp().dtype().option_value().is_some() {
        return Err(Error::type_error(format!(
            "a record batch cannot have missing rows; {} has optional structs",
            a.tp()
        )));
    }
    Ok(RecordBatch::from(s.clone()))
}
