//! The Arrow C Data Interface (DESIGN §12): round trips against arrays
//! built with arrow-rs, for every mapped type, sliced arrays, nulls,
//! nested lists of structs; the release of a foreign array runs exactly
//! once; malformed structs are typed errors.

#![cfg(feature = "arrow")]

use crate::common;
use common::assert_error;

use arrow_array::Array as _;
use arrow_array::builder::{Int32Builder, ListBuilder, StringBuilder};
use arrow_array::ffi::{FFI_ArrowArray, FFI_ArrowSchema, to_ffi};
use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::types::Int32Type;
use arrow_array::*;
use arrow_buffer::{Buffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field, Fields, Schema};
use dynd::interop::arrow::{
    from_arrow_array, from_arrow_stream, from_record_batch, to_arrow_array, to_arrow_stream,
    to_record_batch,
};
use dynd::{Array, ErrorKind};
use half::f16;
use std::ptr::NonNull;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Imports an arrow-rs array through the C structs.
fn via_ffi(a: &dyn arrow_array::Array) -> dynd::Result<dynd::Array> {
    let (array, schema) = to_ffi(&a.to_data()).unwrap();
    Array::from_arrow(schema, array)
}

/// dynd → C structs → arrow-rs, validated.
fn to_arrow_rs(a: &Array) -> ArrayRef {
    let (schema, array) = a.to_arrow().unwrap();
    // SAFETY: the structs were just exported by dynd.
    let data = unsafe { arrow_array::ffi::from_ffi(array, &schema) }.unwrap();
    data.validate_full().unwrap();
    make_array(data)
}

/// dynd → Arrow → dynd keeps type and values.
fn round_trip(ds: &str, json: &str) {
    let a = Array::from_json(ds, json).unwrap();
    let (schema, array) = a.to_arrow().unwrap();
    let b = Array::from_arrow(schema, array).unwrap();
    assert_eq!(b.tp().to_string(), ds, "type of {ds}");
    assert_eq!(b.to_json(), a.to_json(), "values of {ds}");
    // and through arrow-rs's own validation
    let arr = to_arrow_rs(&a);
    assert_eq!(arr.len(), a.shape()[0].unwrap());
}

#[test]
fn every_primitive_round_trips() {
    for t in [
        "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32",
        "float64",
    ] {
        round_trip(&format!("3 * {t}"), "[1, 0, 1]");
        round_trip(&format!("3 * ?{t}"), "[1, null, 0]");
    }
    round_trip("3 * bool", "[true, false, true]");
    round_trip("3 * ?bool", "[true, null, false]");
    round_trip("2 * float16", "[1.5, -2]");
    round_trip("4 * string", r#"["a", "", "héllo", "xyz"]"#);
    round_trip("3 * ?string", r#"["a", null, ""]"#);
    round_trip("2 * bytes", r#"["6162ff", ""]"#);
}

#[test]
fn primitives_match_arrow_rs_values_and_share_memory() {
    let src = Float64Array::from(vec![1.0, 2.5, -3.0]);
    let a = via_ffi(&src).unwrap();
    assert_eq!(a.tp().to_string(), "3 * float64");
    assert_eq!(a.to_json(), "[1.0,2.5,-3.0]");
    assert!(!a.is_writable());
    assert_eq!(
        a.data_ptr().cast_const(),
        src.values().as_ptr().cast::<u8>()
    );
    let back = to_arrow_rs(&a);
    let f = back.as_any().downcast_ref::<Float64Array>().unwrap();
    assert_eq!(
        f.values().as_ptr(),
        src.values().as_ptr(),
        "export is zero-copy"
    );
    let h = Float16Array::from(vec![f16::from_f32(0.5)]);
    assert_eq!(via_ffi(&h).unwrap().tp().to_string(), "1 * float16");
    let u = UInt64Array::from(vec![u64::MAX - 1, 0]);
    assert_eq!(
        via_ffi(&u).unwrap().to_json(),
        format!("[{},0]", u64::MAX - 1)
    );
}

#[test]
fn nulls_become_options_and_back() {
    let src = Int32Array::from(vec![Some(1), None, Some(3)]);
    let a = via_ffi(&src).unwrap();
    assert_eq!(a.tp().to_string(), "3 * ?int32");
    assert_eq!(a.to_json(), "[1,null,3]");
    let back = to_arrow_rs(&a);
    let i = back.as_any().downcast_ref::<Int32Array>().unwrap();
    assert_eq!(i, &src);
    let b = BooleanArray::from(vec![Some(true), None, Some(false)]);
    let a = via_ffi(&b).unwrap();
    assert_eq!(a.to_json(), "[true,null,false]");
    assert_eq!(
        to_arrow_rs(&a)
            .as_any()
            .downcast_ref::<BooleanArray>()
            .unwrap(),
        &b
    );
    let s = StringArray::from(vec![Some("x"), None, Some("")]);
    let a = via_ffi(&s).unwrap();
    assert_eq!(a.to_json(), r#"["x",null,""]"#);
    assert_eq!(
        to_arrow_rs(&a)
            .as_any()
            .downcast_ref::<StringArray>()
            .unwrap(),
        &s
    );
}

#[test]
fn a_value_equal_to_the_na_sentinel_is_an_error() {
    let src = Int32Array::from(vec![Some(i32::MIN), None]);
    let e = via_ffi(&src).unwrap_err();
    assert_error(&e, ErrorKind::InvalidArgument, "index 0");
}

#[test]
fn sliced_arrays_import_from_their_offset() {
    let src = Int64Array::from((0..10).collect::<Vec<i64>>()).slice(3, 4);
    assert_eq!(via_ffi(&src).unwrap().to_json(), "[3,4,5,6]");
    let s = StringArray::from(vec!["a", "bb", "ccc", "dddd"]).slice(1, 2);
    assert_eq!(via_ffi(&s).unwrap().to_json(), r#"["bb","ccc"]"#);
    let b = BooleanArray::from(vec![true, false, true, true, false]).slice(2, 3);
    assert_eq!(via_ffi(&b).unwrap().to_json(), "[true,true,false]");
    let l = ListArray::from_iter_primitive::<Int32Type, _, _>(vec![
        Some(vec![Some(1)]),
        Some(vec![Some(2), Some(3)]),
        None,
        Some(vec![]),
    ])
    .slice(1, 3);
    let a = via_ffi(&l).unwrap();
    assert_eq!(a.tp().to_string(), "3 * ?var * ?int32");
    assert_eq!(a.to_json(), "[[2,3],null,[]]");
    let back = to_arrow_rs(&a);
    assert_eq!(back.as_any().downcast_ref::<ListArray>().unwrap(), &l);
}

#[test]
fn fixed_dims_are_fixed_size_lists() {
    round_trip("2 * 3 * int32", "[[1, 2, 3], [4, 5, 6]]");
    round_trip(
        "2 * 2 * 2 * float64",
        "[[[1, 2], [3, 4]], [[5, 6], [7, 8]]]",
    );
    let a = Array::from_json("2 * 3 * int32", "[[1, 2, 3], [4, 5, 6]]").unwrap();
    let (schema, _array) = a.to_arrow().unwrap();
    assert_eq!(schema.format(), "+w:3");
    let child = Int32Array::from(vec![1, 2, 3, 4, 5, 6, 7, 8]);
    let f = Arc::new(Field::new("item", DataType::Int32, false));
    let fsl = FixedSizeListArray::new(f, 2, Arc::new(child), None).slice(1, 2);
    let a = via_ffi(&fsl).unwrap();
    assert_eq!(a.tp().to_string(), "2 * 2 * int32");
    assert_eq!(a.to_json(), "[[3,4],[5,6]]");
}

#[test]
fn var_dims_are_lists_and_every_list_kind_imports() {
    round_trip("3 * var * float64", "[[1, 2], [], [3]]");
    round_trip("2 * var * var * int16", "[[[1], [2, 3]], [[]]]");
    round_trip("2 * var * string", r#"[["a", "b"], ["c"]]"#);
    let values = Arc::new(Int32Array::from(vec![1, 2, 3, 4]));
    let f = Arc::new(Field::new("item", DataType::Int32, false));
    let large = LargeListArray::new(
        f.clone(),
        OffsetBuffer::new(ScalarBuffer::from(vec![0i64, 1, 4])),
        values.clone(),
        None,
    );
    assert_eq!(via_ffi(&large).unwrap().to_json(), "[[1],[2,3,4]]");
    // ListView rows may overlap and come in any order.
    let view = ListViewArray::new(
        f,
        ScalarBuffer::from(vec![2i32, 0, 1]),
        ScalarBuffer::from(vec![2i32, 1, 3]),
        values,
        None,
    );
    let a = via_ffi(&view).unwrap();
    assert_eq!(a.tp().to_string(), "3 * var * int32");
    assert_eq!(a.to_json(), "[[3,4],[1],[2,3,4]]");
    // out-of-order rows export by a gather
    let back = to_arrow_rs(&a);
    let l = back.as_any().downcast_ref::<ListArray>().unwrap();
    assert_eq!(l.value_offsets(), &[0, 2, 3, 6]);
}

#[test]
fn view_strings_import() {
    let long = "a string longer than twelve bytes";
    let s = StringViewArray::from(vec![Some("short"), None, Some(long)]);
    let a = via_ffi(&s).unwrap();
    assert_eq!(a.tp().to_string(), "3 * ?string");
    assert_eq!(a.to_json(), format!(r#"["short",null,"{long}"]"#));
    let b = BinaryViewArray::from(vec![&b"xy"[..], long.as_bytes()]);
    assert_eq!(via_ffi(&b).unwrap().tp().to_string(), "2 * bytes");
    let l = LargeStringArray::from(vec!["p", "q"]);
    assert_eq!(via_ffi(&l).unwrap().to_json(), r#"["p","q"]"#);
}

#[test]
fn structs_and_nested_lists_of_structs() {
    round_trip(
        "2 * {a: int32, b: string}",
        r#"[{"a": 1, "b": "x"}, {"a": 2, "b": "yy"}]"#,
    );
    round_trip(
        "2 * var * {x: float64, tags: var * string}",
        r#"[[{"x": 1, "tags": ["p"]}, {"x": 2, "tags": []}], []]"#,
    );
    round_trip("3 * ?{a: int8}", r#"[{"a": 1}, null, {"a": 3}]"#);
    round_trip(
        "2 * {a: ?float64, b: ?var * int32}",
        r#"[{"a": null, "b": [1]}, {"a": 2, "b": null}]"#,
    );
    // nested list of structs built with arrow-rs, sliced
    let inner = StructArray::from(vec![
        (
            Arc::new(Field::new("k", DataType::Int32, false)),
            Arc::new(Int32Array::from(vec![1, 2, 3])) as ArrayRef,
        ),
        (
            Arc::new(Field::new("v", DataType::Utf8, true)),
            Arc::new(StringArray::from(vec![Some("a"), None, Some("c")])) as ArrayRef,
        ),
    ]);
    let f = Arc::new(Field::new("item", inner.data_type().clone(), false));
    let l = ListArray::new(
        f,
        OffsetBuffer::new(ScalarBuffer::from(vec![0i32, 2, 2, 3])),
        Arc::new(inner),
        None,
    );
    let a = via_ffi(&l).unwrap();
    assert_eq!(a.tp().to_string(), "3 * var * {k: int32, v: ?string}");
    assert_eq!(
        a.to_json(),
        r#"[[{"k":1,"v":"a"},{"k":2,"v":null}],[],[{"k":3,"v":"c"}]]"#
    );
    let s = via_ffi(&l.slice(1, 2)).unwrap();
    assert_eq!(s.to_json(), r#"[[],[{"k":3,"v":"c"}]]"#);
    assert_eq!(
        to_arrow_rs(&a)
            .as_any()
            .downcast_ref::<ListArray>()
            .unwrap(),
        &l
    );
}

#[test]
fn tuples_export_as_structs_with_positional_names() {
    let a = Array::from_json("2 * (int32, string)", r#"[[1, "a"], [2, "b"]]"#).unwrap();
    let arr = to_arrow_array(&a).unwrap();
    let s = arr.as_any().downcast_ref::<StructArray>().unwrap();
    assert_eq!(s.column_names(), vec!["f0", "f1"]);
}

#[test]
fn types_without_an_arrow_form_are_named() {
    for (ds, json, name) in [
        ("2 * int128", "[1, 2]", "int128"),
        ("1 * complex[float64]", "[[1, 2]]", "complex"),
        ("2 * uint128", "[1, 2]", "uint128"),
    ] {
        let a = Array::from_json(ds, json).unwrap();
        let e = a.to_arrow().unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Type);
        assert!(
            e.message().contains(name) && e.message().contains("no Arrow form"),
            "{e}"
        );
    }
    let scalar = Array::from_json("int32", "3").unwrap();
    assert_eq!(scalar.to_arrow().unwrap_err().kind(), ErrorKind::Type);
}

#[test]
fn top_level_var_dims_export_their_row() {
    let a = Array::from_json("var * int32", "[5, 6, 7]").unwrap();
    let arr = to_arrow_array(&a).unwrap();
    assert_eq!(
        arr.as_any()
            .downcast_ref::<Int32Array>()
            .unwrap()
            .values()
            .as_ref(),
        &[5, 6, 7]
    );
}

#[test]
fn record_batches_are_arrays_of_structs() {
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("name", DataType::Utf8, true),
    ]));
    let batch = RecordBatch::try_new(
        schema,
        vec![
            Arc::new(Int64Array::from(vec![1, 2])),
            Arc::new(StringArray::from(vec![Some("a"), None])),
        ],
    )
    .unwrap();
    let a = from_record_batch(&batch).unwrap();
    assert_eq!(a.tp().to_string(), "2 * {id: int64, name: ?string}");
    assert_eq!(a.to_json(), r#"[{"id":1,"name":"a"},{"id":2,"name":null}]"#);
    let back = to_record_batch(&a).unwrap();
    assert_eq!(back, batch);
    let not_structs = Array::from_json("2 * int32", "[1, 2]").unwrap();
    assert_eq!(
        to_record_batch(&not_structs).unwrap_err().kind(),
        ErrorKind::Type
    );
    assert_eq!(
        from_arrow_array(&Int32Array::from(vec![4]))
            .unwrap()
            .to_json(),
        "[4]"
    );
}

#[test]
fn streams_join_their_chunks() {
    let schema = Arc::new(Schema::new(vec![
        Field::new("x", DataType::Int32, false),
        Field::new("s", DataType::Utf8, false),
    ]));
    let mk = |x: Vec<i32>, s: Vec<&str>| {
        RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(Int32Array::from(x)),
                Arc::new(StringArray::from(s)),
            ],
        )
    };
    let batches = vec![mk(vec![1, 2], vec!["a", "b"]), mk(vec![3], vec!["c"])];
    let reader = RecordBatchIterator::new(batches, schema.clone());
    let a = from_arrow_stream(FFI_ArrowArrayStream::new(Box::new(reader))).unwrap();
    assert_eq!(a.tp().to_string(), "3 * {x: int32, s: string}");
    assert_eq!(
        a.to_json(),
        r#"[{"x":1,"s":"a"},{"x":2,"s":"b"},{"x":3,"s":"c"}]"#
    );
    let empty = RecordBatchIterator::new(Vec::new(), schema.clone());
    let a = from_arrow_stream(FFI_ArrowArrayStream::new(Box::new(empty))).unwrap();
    assert_eq!(a.tp().to_string(), "0 * {x: int32, s: string}");
}

#[test]
fn a_stream_of_one_batch_keeps_its_rows() {
    let schema = Arc::new(Schema::new(vec![Field::new("x", DataType::Int32, false)]));
    let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(Int32Array::from(vec![7, 8]))]);
    let reader = RecordBatchIterator::new(vec![batch], schema);
    let a = from_arrow_stream(FFI_ArrowArrayStream::new(Box::new(reader))).unwrap();
    assert_eq!(a.tp().to_string(), "2 * {x: int32}");
    assert_eq!(a.to_json(), r#"[{"x":7},{"x":8}]"#);
}

#[test]
fn streams_of_any_type_round_trip() {
    for (tp, json) in [
        ("3 * var * ?int32", "[[1,null],[],[3]]"),
        (
            "2 * {x: int32, s: string}",
            r#"[{"x":1,"s":"a"},{"x":2,"s":"bc"}]"#,
        ),
        ("3 * ?float64", "[1.5,null,3.0]"),
        ("2 * 2 * int16", "[[1,2],[3,4]]"),
        ("0 * string", "[]"),
    ] {
        let a = Array::from_json(tp, json).unwrap();
        let b = from_arrow_stream(to_arrow_stream(&a).unwrap()).unwrap();
        assert_eq!(b.tp().to_string(), tp, "{tp}");
        assert_eq!(b.to_json(), json, "{tp}");
    }
    // Arrays without dims or without an Arrow form are typed errors.
    let scalar = Array::from_json("int32", "1").unwrap();
    assert_eq!(
        to_arrow_stream(&scalar).unwrap_err().kind(),
        ErrorKind::Type
    );
}

#[test]
fn an_exported_stream_is_read_by_arrow_rs() {
    let a = Array::from_json("3 * ?int64", "[1, null, 3]").unwrap();
    let reader =
        arrow_array::ffi_stream::ArrayStreamReader::try_new(to_arrow_stream(&a).unwrap()).unwrap();
    assert!(reader.field().is_nullable());
    let chunks: Vec<ArrayRef> = reader.map(|c| c.unwrap()).collect();
    assert_eq!(chunks.len(), 1);
    let ints = chunks[0].as_any().downcast_ref::<Int64Array>().unwrap();
    assert_eq!(
        ints.iter().collect::<Vec<_>>(),
        vec![Some(1), None, Some(3)]
    );
    // A stream dropped unread releases its array.
    drop(to_arrow_stream(&a).unwrap());
}

/// An arrow-rs buffer whose owner counts its drops: the producer's
/// release, seen from Rust.
fn counted_buffer(values: Vec<i32>, drops: &Arc<AtomicUsize>) -> Buffer {
    struct Owner(#[allow(dead_code)] Vec<i32>, Arc<AtomicUsize>);
    impl Drop for Owner {
        fn drop(&mut self) {
            self.1.fetch_add(1, Ordering::SeqCst);
        }
    }
    let len = values.len() * 4;
    let ptr = NonNull::new(values.as_ptr().cast_mut().cast::<u8>()).unwrap();
    let owner = Arc::new(Owner(values, drops.clone()));
    // SAFETY: the vector's bytes live in `owner`, which the buffer holds.
    unsafe { Buffer::from_custom_allocation(ptr, len, owner) }
}

#[test]
fn the_release_runs_once_when_the_last_view_goes() {
    let drops = Arc::new(AtomicUsize::new(0));
    let src = Int32Array::new(
        ScalarBuffer::new(counted_buffer(vec![1, 2, 3], &drops), 0, 3),
        None,
    );
    let (array, schema) = to_ffi(&src.to_data()).unwrap();
    drop(src);
    let a = Array::from_arrow(schema, array).unwrap();
    let b = a.clone();
    drop(a);
    assert_eq!(drops.load(Ordering::SeqCst), 0);
    assert_eq!(b.to_json(), "[1,2,3]");
    drop(b);
    assert_eq!(drops.load(Ordering::SeqCst), 1);
}

#[test]
fn the_release_runs_once_when_import_fails() {
    let drops = Arc::new(AtomicUsize::new(0));
    let src = Int32Array::new(
        ScalarBuffer::new(counted_buffer(vec![i32::MIN, 2], &drops), 0, 2),
        Some(vec![true, false].into()),
    );
    let (array, schema) = to_ffi(&src.to_data()).unwrap();
    drop(src);
    // a valid value equal to ?int32's NA: refused after taking ownership
    assert!(Array::from_arrow(schema, array).is_err());
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    // refused by the structural checks: a format dynd does not import
    let drops = Arc::new(AtomicUsize::new(0));
    let src = Int32Array::new(
        ScalarBuffer::new(counted_buffer(vec![7], &drops), 0, 1),
        None,
    );
    let (array, _) = to_ffi(&src.to_data()).unwrap();
    drop(src);
    let date = FFI_ArrowSchema::try_from(&DataType::Date32).unwrap();
    let e = Array::from_arrow(date, array).unwrap_err();
    assert_error(&e, ErrorKind::Type, "\"tdD\"");
    assert_eq!(drops.load(Ordering::SeqCst), 1);
}

#[test]
fn misuse_is_a_typed_error() {
    // mismatched children: a struct schema of two fields over one child
    let one = StructArray::from(vec![(
        Arc::new(Field::new("a", DataType::Int32, false)),
        Arc::new(Int32Array::from(vec![1])) as ArrayRef,
    )]);
    let (array, _) = to_ffi(&one.to_data()).unwrap();
    let two = DataType::Struct(Fields::from(vec![
        Field::new("a", DataType::Int32, false),
        Field::new("b", DataType::Int32, false),
    ]));
    let schema = FFI_ArrowSchema::try_from(&two).unwrap();
    let e = Array::from_arrow(schema, array).unwrap_err();
    assert_error(&e, ErrorKind::InvalidArgument, "children");
    // released structs
    let e = Array::from_arrow(FFI_ArrowSchema::empty(), FFI_ArrowArray::empty()).unwrap_err();
    assert_error(&e, ErrorKind::InvalidArgument, "released");
    // a schema whose format disagrees with the buffers
    let (array, _) = to_ffi(&Int32Array::from(vec![1]).to_data()).unwrap();
    let schema = FFI_ArrowSchema::try_from(&DataType::Utf8).unwrap();
    let e = Array::from_arrow(schema, array).unwrap_err();
    assert!(e.message().contains("buffers"), "{e}");
    // invalid UTF-8 in a Utf8 column
    let bad = BinaryArray::from(vec![&[0xffu8, 0xfe][..]]);
    let (array, _) = to_ffi(&bad.to_data()).unwrap();
    let schema = FFI_ArrowSchema::try_from(&DataType::Utf8).unwrap();
    assert_eq!(
        Array::from_arrow(schema, array).unwrap_err().kind(),
        ErrorKind::InvalidArgument
    );
}

#[test]
fn builders_nested_list_of_strings() {
    let mut b = ListBuilder::new(StringBuilder::new());
    b.values().append_value("x");
    b.append(true);
    b.append(false);
    b.values().append_value("y");
    b.values().append_value("zz");
    b.append(true);
    let l = b.finish();
    let a = via_ffi(&l).unwrap();
    assert_eq!(a.tp().to_string(), "3 * ?var * ?string");
    assert_eq!(a.to_json(), r#"[["x"],null,["y","zz"]]"#);
    let mut ib = ListBuilder::new(Int32Builder::new());
    ib.append_value([Some(1)]);
    assert_eq!(via_ffi(&ib.finish()).unwrap().to_json(), "[[1]]");
}

mod random {
    use super::*;
    use proptest::prelude::*;

    fn rows() -> impl Strategy<Value = Vec<Option<Vec<Option<i32>>>>> {
        proptest::collection::vec(
            proptest::option::of(proptest::collection::vec(
                proptest::option::of(-1000i32..1000),
                0..5,
            )),
            0..20,
        )
    }

    fn json(rows: &[Option<Vec<Option<i32>>>]) -> String {
        let row = |r: &Option<Vec<Option<i32>>>| match r {
            None => "null".to_string(),
            Some(v) => format!(
                "[{}]",
                v.iter()
                    .map(|x| x.map_or("null".to_string(), |x| x.to_string()))
                    .collect::<Vec<_>>()
                    .join(",")
            ),
        };
        format!("[{}]", rows.iter().map(row).collect::<Vec<_>>().join(","))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// arrow-rs → dynd reads each row as a plain loop over the input
        /// does, and dynd → arrow-rs gives the same array back.
        #[test]
        fn ragged_optional_rows_round_trip(rows in rows(), start in 0usize..5) {
            let l = ListArray::from_iter_primitive::<Int32Type, _, _>(rows.clone());
            let start = start.min(rows.len());
            let l = l.slice(start, rows.len() - start);
            let a = via_ffi(&l).unwrap();
            prop_assert_eq!(a.to_json(), json(&rows[start..]));
            let back = to_arrow_rs(&a);
            prop_assert_eq!(back.as_any().downcast_ref::<ListArray>().unwrap(), &l);
        }
    }
}
