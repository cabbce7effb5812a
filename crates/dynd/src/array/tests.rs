use super::*;
use crate::memblock::MemoryBlockKind;

/// Reads arrmeta word `i` (8 bytes) of `a`.
fn word(a: &Array, i: usize) -> isize {
    // SAFETY: tests only read words inside `a.tp().arrmeta_size()`.
    unsafe { arrmeta::read::<isize>(a.arrmeta_ptr().add(8 * i)) }
}

fn block_kind(ptr: isize) -> MemoryBlockKind {
    assert_ne!(ptr, 0);
    // SAFETY: `ptr` is a blockref from live arrmeta.
    let kind = unsafe { (*(ptr as *const crate::memblock::MemoryBlockHeader)).kind };
    MemoryBlockKind::from_raw(kind).unwrap()
}

#[test]
fn default_arrmeta_follows_design_section_4() {
    // 3 * var * {x: int32, name: string}
    let a = Array::empty("3 * var * {x: int32, name: string}").unwrap();
    assert_eq!(a.tp().arrmeta_size(), 16 + 24 + 8);
    assert_eq!(a.tp().data_size(), 48);
    assert_eq!(word(&a, 0), 3, "fixed dim_size");
    assert_eq!(word(&a, 1), 16, "fixed stride = sizeof var data");
    assert_eq!(
        block_kind(word(&a, 2)),
        MemoryBlockKind::PodAllocator,
        "var blockref"
    );
    assert_eq!(
        word(&a, 3),
        24,
        "var stride = struct size (int32, pad, string)"
    );
    assert_eq!(word(&a, 4), 0, "var offset");
    assert_eq!(
        block_kind(word(&a, 5)),
        MemoryBlockKind::PodAllocator,
        "string blockref"
    );
    assert_eq!(a.data_ref().kind(), MemoryBlockKind::FixedSizePod);
    assert_eq!(a.memblock().kind(), MemoryBlockKind::Array);

    let p = Array::empty("2 * pointer[3 * int16]").unwrap();
    assert_eq!(p.tp().arrmeta_size(), 16 + 16 + 16);
    assert_eq!((word(&p, 0), word(&p, 1)), (2, 8));
    assert_eq!(
        (word(&p, 2), word(&p, 3)),
        (0, 0),
        "pointer blockref null, offset 0"
    );
    assert_eq!((word(&p, 4), word(&p, 5)), (3, 2), "target arrmeta");

    let s = Array::empty("{a: int8, b: 2 * float64, c: bytes}").unwrap();
    let f = s.tp().fields().unwrap();
    assert_eq!(f.data_offsets(), &[0, 8, 24]);
    assert_eq!(f.arrmeta_offsets(), &[0, 0, 16]);
    assert_eq!((word(&s, 0), word(&s, 1)), (2, 8));
    assert_eq!(block_kind(word(&s, 2)), MemoryBlockKind::PodAllocator);
}

#[test]
fn views_hold_references_to_blockrefs_and_release_them() {
    let a = Array::from_json("var * string", r#"["a", "bb"]"#).unwrap();
    let var_block = word(&a, 0);
    // SAFETY: a live blockref.
    let count = || unsafe {
        (*(var_block as *const crate::memblock::MemoryBlockHeader))
            .use_count
            .load(std::sync::atomic::Ordering::SeqCst)
    };
    assert_eq!(count(), 1);
    {
        let v = a.index(&[Index::ALL]).unwrap();
        // Slicing keeps a dim's kind: `:` shares the var dim's arrmeta, and
        // with it one more reference to its block.
        assert_eq!(v.tp().to_string(), "var * string");
        assert_eq!(count(), 2);
        let w = a.read_only();
        assert_eq!(count(), 3);
        drop(w);
        assert_eq!(v.to_json(), r#"["a","bb"]"#);
    }
    assert_eq!(count(), 1);
}

#[test]
fn data_bytes_counts_what_the_array_reaches() {
    // No references: the type's data size, whatever the values.
    let f = Array::from_json("3 * 2 * float64", "[[1,2],[3,4],[5,6]]").unwrap();
    assert_eq!(f.data_bytes().unwrap(), 48);
    // Records: 40 inline bytes each (int64, string, var), plus the text and rows.
    let r = Array::from_json(
        "2 * {id: int64, kind: string, xs: var * float64}",
        r#"[{"id": 1, "kind": "abc", "xs": [1, 2]}, {"id": 2, "kind": "", "xs": [3]}]"#,
    )
    .unwrap();
    assert_eq!(r.data_bytes().unwrap(), 2 * 40 + 3 + 3 * 8);
    // Two var levels: the inner rows' descriptors and values.
    let n = Array::from_json("var * var * int16", "[[1, 2], [], [3]]").unwrap();
    assert_eq!(n.data_bytes().unwrap(), 16 + 3 * 16 + 3 * 2);
    // A view counts its own rows only.
    let v = Array::from_json("4 * var * int32", "[[1], [2, 3], [4, 5, 6], [7, 8, 9, 10]]").unwrap();
    let tail = v.index(&[Index::slice(Some(2), None, 1)]).unwrap();
    assert_eq!(tail.data_bytes().unwrap(), 2 * 16 + 7 * 4);
    // Missing values reach nothing.
    let o = Array::from_json("3 * ?string", r#"["hello", null, "x"]"#).unwrap();
    assert_eq!(o.data_bytes().unwrap(), o.tp().data_size() + 6);
    // A field of records: the strings of that field alone.
    let k = r.field("kind").unwrap();
    assert_eq!(k.data_bytes().unwrap(), 2 * 16 + 3);
}
