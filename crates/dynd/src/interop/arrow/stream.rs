//! The Arrow C stream interface: a stream of Arrow arrays (record
//! batches or arrays of any other type) → one dynd array.
//!
//! How chunks join: every chunk of the stream is read first; one chunk is
//! imported as it is (zero-copy where the layouts allow); several are
//! concatenated by arrow-rs's `MutableArrayData` into one Arrow array (one
//! copy of every buffer, offsets rebased) and that is imported. A stream
//! of record batches (a struct schema, as pyarrow tables give) becomes
//! `N * {col: T, …}`; a stream of another type `T` (a chunked array)
//! `N * T`, or `N * ?T` when the stream's field is nullable. N is the
//! total length of the chunks.

use super::{arrow_err, export, from_data};
use crate::array::Array;
use crate::error::Result;
use arrow_array::ffi::{FFI_ArrowArray, FFI_ArrowSchema};
use arrow_array::ffi_stream::{ArrayStreamReader, FFI_ArrowArrayStream};
use arrow_array::{Array as _, ArrayReader};
use arrow_data::transform::MutableArrayData;
use std::ffi::{CString, c_char, c_int};

/// Reads every chunk of `stream` (taking ownership: its release runs
/// before this returns) and joins them into one array: `N * {…}` for
/// record batches, `N * T` (or `N * ?T`) for chunks of another type.
///
/// # Errors
/// [`InvalidArgument`](crate::ErrorKind::InvalidArgument) when the stream
/// reports an error or a chunk is invalid; the import's errors otherwise.
///
/// ```
/// use arrow_array::{Int32Array, RecordBatch, RecordBatchIterator};
/// use arrow_array::ffi_stream::FFI_ArrowArrayStream;
/// use arrow_schema::{DataType, Field, Schema};
/// use std::sync::Arc;
/// let schema = Arc::new(Schema::new(vec![Field::new("x", DataType::Int32, false)]));
/// let b1 = RecordBatch::try_new(schema.clone(), vec![Arc::new(Int32Array::from(vec![1, 2]))]).unwrap();
/// let b2 = RecordBatch::try_new(schema.clone(), vec![Arc::new(Int32Array::from(vec![3]))]).unwrap();
/// let reader = RecordBatchIterator::new(vec![Ok(b1), Ok(b2)], schema);
/// let stream = FFI_ArrowArrayStream::new(Box::new(reader));
/// let a = dynd::interop::arrow::from_arrow_stream(stream).unwrap();
/// assert_eq!(a.tp().to_string(), "3 * {x: int32}");
/// assert_eq!(a.to_json(), r#"[{"x":1},{"x":2},{"x":3}]"#);
/// ```
pub fn from_arrow_stream(stream: FFI_ArrowArrayStream) -> Result<Array> {
    let reader = ArrayStreamReader::try_new(stream)
        .map_err(|e| arrow_err("cannot read the Arrow stream's schema", e))?;
    let field = reader.field().clone();
    let mut chunks = Vec::new();
    for chunk in reader {
        let chunk = chunk.map_err(|e| {
            arrow_err(
                &format!(
                    "the Arrow stream reported an error at chunk {}",
                    chunks.len()
                ),
                e,
            )
        })?;
        chunks.push(chunk.into_data());
    }
    let data = match chunks.len() {
        0 => arrow_array::new_empty_array(field.data_type()).into_data(),
        1 => chunks.swap_remove(0),
        _ => {
            let total = chunks.iter().map(|c| c.len()).sum();
            let mut m = MutableArrayData::new(chunks.iter().collect(), false, total);
            for (i, c) in chunks.iter().enumerate() {
                m.try_extend(i, 0, c.len())
                    .map_err(|e| arrow_err("cannot join the stream's chunks", e))?;
            }
            m.freeze()
        }
    };
    // A record batch's schema is a struct whose rows are never missing,
    // whatever flag the producer sets on it.
    let nullable =
        field.is_nullable() && !matches!(field.data_type(), arrow_schema::DataType::Struct(_));
    from_data(&data, nullable)
}

/// What a stream made by [`to_arrow_stream`] owns: the root field and
/// the one array, moved out by the first `get_next`.
struct OneArray {
    field: arrow_schema::Field,
    array: Option<FFI_ArrowArray>,
    error: CString,
}

/// Exports `a` as an Arrow C stream of one array (any type: a struct
/// array reads as one record batch; other types as a chunked array of one
/// chunk). The array is exported as [`Array::to_arrow`] does, when the
/// stream is made; the consumer releases the stream (dropping it does).
///
/// # Errors
/// As [`Array::to_arrow`]: [`Type`](crate::ErrorKind::Type) for an array
/// without dims or an element without an Arrow form.
///
/// ```
/// let a = dynd::Array::from_json("3 * var * ?int32", "[[1, null], [], [3]]").unwrap();
/// let stream = dynd::interop::arrow::to_arrow_stream(&a).unwrap();
/// let b = dynd::interop::arrow::from_arrow_stream(stream).unwrap();
/// assert_eq!(b.to_json(), "[[1,null],[],[3]]");
/// ```
pub fn to_arrow_stream(a: &Array) -> Result<FFI_ArrowArrayStream> {
    let (data, field) = export::export(a)?;
    let state = Box::new(OneArray {
        field,
        array: Some(FFI_ArrowArray::new(&data)),
        error: CString::default(),
    });
    // SAFETY: the callbacks below implement the C stream interface over
    // `private_data`, a Box<OneArray> that `one_release` frees once.
    Ok(unsafe {
        FFI_ArrowArrayStream::new_unchecked(
            Some(one_get_schema),
            Some(one_get_next),
            Some(one_last_error),
            Some(one_release),
            Box::into_raw(state).cast(),
        )
    })
}

/// The state of a live stream made by [`to_arrow_stream`].
///
/// # Safety
/// `s` is such a stream, not released.
unsafe fn one_state<'a>(s: *mut FFI_ArrowArrayStream) -> &'a mut OneArray {
    // SAFETY: (caller) private_data is the live Box<OneArray>.
    unsafe { &mut *(*s).private_data().cast::<OneArray>() }
}

unsafe extern "C" fn one_get_schema(
    s: *mut FFI_ArrowArrayStream,
    out: *mut FFI_ArrowSchema,
) -> c_int {
    // SAFETY: the consumer calls this on a live stream with a struct to
    // fill (the C stream interface's contract).
    let st = unsafe { one_state(s) };
    match FFI_ArrowSchema::try_from(&st.field) {
        Ok(schema) => {
            // SAFETY: `out` is the consumer's to fill; it now owns the schema.
            unsafe { std::ptr::write(out, schema) };
            0
        }
        Err(e) => {
            st.error = CString::new(e.to_string().replace('\0', " ")).unwrap_or_default();
            EINVAL
        }
    }
}

unsafe extern "C" fn one_get_next(s: *mut FFI_ArrowArrayStream, out: *mut FFI_ArrowArray) -> c_int {
    // SAFETY: as `one_get_schema`; the array moves out once, then the end
    // of the stream is a released (empty) array.
    unsafe {
        let st = one_state(s);
        let next = st.array.take().unwrap_or_else(FFI_ArrowArray::empty);
        std::ptr::write(out, next);
    }
    0
}

unsafe extern "C" fn one_last_error(s: *mut FFI_ArrowArrayStream) -> *const c_char {
    // SAFETY: as `one_get_schema`; the message lives in the state until the
    // next call or the release.
    let st = unsafe { one_state(s) };
    if st.error.as_bytes().is_empty() {
        std::ptr::null()
    } else {
        st.error.as_ptr()
    }
}

unsafe extern "C" fn one_release(s: *mut FFI_ArrowArrayStream) {
    // SAFETY: called once (by the consumer or `Drop`) on a stream that
    // `to_arrow_stream` made: its state is freed, and the stream is marked
    // released by replacing it with the empty (released) stream.
    unsafe {
        let p = (*s).private_data().cast::<OneArray>();
        if !p.is_null() {
            drop(Box::from_raw(p));
        }
        std::ptr::write(s, FFI_ArrowArrayStream::empty());
    }
}

/// EINVAL, the C stream interface's code for a schema that cannot be
/// described.
const EINVAL: c_int = 22;
