//! The handle conventions, seen from Rust: type handles are builtin ids or
//! node addresses shared with the Rust `Type`, and an array handle is the
//! array's memory block.

use dynd::memblock::MemBlock;
use dynd::{Array, Type};
use dynd_capi::*;
use std::ffi::CStr;

#[test]
fn type_handles_are_ids_or_shared_nodes() {
    // SAFETY: NUL-terminated strings; every handle is released once.
    unsafe {
        assert_eq!(dynd_type_from_datashape(c"float64".as_ptr()) as usize, 14);
        let tp = dynd_type_from_datashape(c"3 * var * string".as_ptr());
        assert!(tp as usize >= DYND_BUILTIN_TYPE_ID_LIMIT);
        // Borrow it back as a Rust Type: the same node.
        let t = std::mem::ManuallyDrop::new(Type::from_raw(tp as usize).unwrap());
        assert_eq!(t.to_string(), "3 * var * string");
        assert_eq!(t.as_raw(), tp as usize);
        // An array made from it hands back the same handle, borrowed.
        let a = dynd_array_empty(tp);
        assert!(!a.is_null());
        assert_eq!(dynd_array_type(a), tp);
        dynd_type_decref(tp);
        // The array keeps the type alive.
        let ds = dynd_type_to_datashape(dynd_array_type(a));
        assert_eq!(CStr::from_ptr(ds).to_str().unwrap(), "3 * var * string");
        dynd_string_free(ds);
        dynd_array_decref(a);
    }
}

#[test]
fn raw_type_handles_count_references() {
    let t: Type = "{x: int32}".parse().unwrap();
    let raw = t.clone().into_raw();
    assert_eq!(raw, t.as_raw());
    // SAFETY: `raw` owns the reference into_raw gave up; incref adds one,
    // which the two decrefs and from_raw then consume.
    unsafe {
        Type::incref_raw(raw);
        Type::decref_raw(raw);
        let back = Type::from_raw(raw).unwrap();
        assert_eq!(back, t);
    }
    for id in [0usize, 15, 20, 63] {
        // SAFETY: values below the limit are never dereferenced.
        assert!(unsafe { Type::from_raw(id) }.is_none());
    }
    // SAFETY: values below the limit are never dereferenced.
    assert_eq!(unsafe { Type::from_raw(4) }, Some(Type::int32()));
}

#[test]
fn an_array_handle_is_its_memory_block() {
    let a = Array::from_json("2 * int16", "[1, 2]").unwrap();
    let block = a.memblock().clone();
    let back = Array::from_memblock(block).expect("an array block");
    assert_eq!(back.to_json(), "[1,2]");
    // A data block is not an array, and comes back unharmed.
    let data = a.data_ref().clone();
    let data: MemBlock = Array::from_memblock(data).expect_err("not an array");
    assert!(data.ptr_eq(a.data_ref()));
}
