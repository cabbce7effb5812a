//! The Arrow C stream interface: a stream of record batches → one dynd
//! array.
//!
//! How chunks join: every batch of the stream is read first; one batch is
//! imported as it is (zero-copy where the layouts allow); several are
//! concatenated by arrow-rs's `MutableArrayData` into one Arrow struct
//! column (one copy of every column, offsets rebased) and that column is
//! imported. The result is `N * {col: T, …}`, N the total row count.

use super::{arrow_err, from_data};
use crate::array::Array;
use crate::error::Result;
use arrow_array::ffi_stream::{FFI_ArrowArrayStream, RecordBatchStreamReader};
use arrow_array::{Array as _, RecordBatchReader, StructArray};
use arrow_data::transform::MutableArrayData;

/// Reads every batch of `stream` (taking ownership: its release runs
/// before this returns) and joins them into one `N * {…}` array.
///
/// # Errors
/// [`InvalidArgument`](crate::ErrorKind::InvalidArgument) when the stream
/// reports an error or a batch is invalid; the import's errors otherwise.
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
    let reader = RecordBatchStreamReader::try_new(stream)
        .map_err(|e| arrow_err("cannot read the Arrow stream's schema", e))?;
    let schema = reader.schema();
    let mut chunks = Vec::new();
    for batch in reader {
        let batch = batch.map_err(|e| arrow_err("the Arrow stream reported an error", e))?;
        chunks.push(StructArray::from(batch).into_data());
    }
    let data = match chunks.len() {
        0 => StructArray::new_empty_fields(0, None).into_data(),
        1 => chunks
            .pop()
            .unwrap_or_else(|| StructArray::new_empty_fields(0, None).into_data()),
        _ => {
            let total = chunks.iter().map(|c| c.len()).sum();
            let mut m = MutableArrayData::new(chunks.iter().collect(), false, total);
            for (i, c) in chunks.iter().enumerate() {
                m.try_extend(i, 0, c.len())
                    .map_err(|e| arrow_err("cannot join the stream's batches", e))?;
            }
            m.freeze()
        }
    };
    let data = if chunks.is_empty() && !schema.fields().is_empty() {
        arrow_array::new_empty_array(&arrow_schema::DataType::Struct(schema.fields().clone()))
            .into_data()
    } else {
        data
    };
    from_data(&data, false)
}
