//! String functions (`dynd::compute`'s string family): exact values,
//! code point indexes, lifting and broadcasting over fixed and var dims
//! (split adding its own var dim), empty strings, missing values, errors,
//! the registry, large calls on several threads, and property tests against
//! Rust's `str` methods.

use crate::common;
use common::{Call, Side, a, check_calls, elems, whole, with_callable_kernel};

use dynd::callable::lookup;
use dynd::compute as strings;
use dynd::{Array, ErrorKind, Index};
use proptest::prelude::*;

fn s(v: &str) -> Array {
    Array::from(v)
}

/// The elements of a 1-d array (fixed, or an outermost var dim), each
/// read by `read`.
fn elements_of<T>(x: &Array, read: impl Fn(&Array) -> dynd::Result<T>) -> Vec<T> {
    let n = x.shape()[0].expect("a known outer size");
    (0..n as isize)
        .map(|i| {
            x.index(&[Index::At(i)])
                .and_then(|e| read(&e))
                .unwrap_or_else(|e| panic!("element {i} of {x}: {e}"))
        })
        .collect()
}

/// The strings of a 1-d array.
fn strings_of(x: &Array) -> Vec<String> {
    elements_of(x, |e| e.as_str().map(str::to_string))
}

/// The int64 values of a 1-d array.
fn ints_of(x: &Array) -> Vec<i64> {
    elements_of(x, Array::as_scalar::<i64>)
}

/// The bool values of a 1-d array.
fn bools_of(x: &Array) -> Vec<bool> {
    elements_of(x, Array::as_scalar::<bool>)
}

fn check(r: &Array, tp: &str, json: &str) {
    assert_eq!(r.tp().to_string(), tp, "{r}");
    assert_eq!(r.to_json(), json, "{r}");
}

/// [`check`] on a result that must be `Ok`.
fn check_ok(r: dynd::Result<Array>, tp: &str, json: &str) {
    let r = r.unwrap_or_else(|e| panic!("expected {tp} {json}: {e}"));
    check(&r, tp, json);
}

#[test]
fn find_split_and_friends_give_exact_values() {
    let words = Array::from(vec!["abc", "ababc", "ababab", "abd"]);
    check_ok(strings::find(&words, &s("abc")), "4 * int64", "[0,2,-1,-1]");
    check_ok(
        strings::split(&s("xaxxbxxxc"), &s("x")),
        "var * string",
        r#"["","a","","b","","","c"]"#,
    );
}

#[test]
fn every_function_on_scalars() {
    let two = |f: fn(&Array, &Array) -> dynd::Result<Array>, x: &str, y: &str| {
        f(&s(x), &s(y)).unwrap().to_json()
    };
    assert_eq!(two(strings::find, "hello", "l"), "2");
    assert_eq!(two(strings::rfind, "hello", "l"), "3");
    assert_eq!(two(strings::rfind, "hello", "z"), "-1");
    assert_eq!(two(strings::count_substring, "aaaa", "aa"), "2");
    assert_eq!(two(strings::count_substring, "abcabc", "bc"), "2");
    assert_eq!(two(strings::startswith, "hello", "he"), "true");
    assert_eq!(two(strings::startswith, "hello", "lo"), "false");
    assert_eq!(two(strings::endswith, "hello", "lo"), "true");
    assert_eq!(two(strings::endswith, "hello", "he"), "false");
    assert_eq!(two(strings::contains, "hello", "ell"), "true");
    assert_eq!(two(strings::contains, "hello", "elo"), "false");
    assert_eq!(two(strings::concat, "ab", "cd"), r#""abcd""#);
    let r = strings::replace(&s("a-b-c"), &s("-"), &s("+=")).unwrap();
    check(&r, "string", r#""a+=b+=c""#);
    let r = strings::replace(&s("aaaa"), &s("aa"), &s("b")).unwrap();
    assert_eq!(r.as_str().unwrap(), "bb");
}

#[test]
fn indexes_count_code_points() {
    let h = s("héllo");
    assert_eq!(strings::find(&h, &s("l")).unwrap().to_json(), "2");
    assert_eq!(strings::rfind(&h, &s("l")).unwrap().to_json(), "3");
    assert_eq!(strings::find(&h, &s("é")).unwrap().to_json(), "1");
    assert_eq!(strings::find(&h, &s("o")).unwrap().to_json(), "4");
    assert_eq!(strings::rfind(&h, &s("")).unwrap().to_json(), "5");
    assert_eq!(strings::count_substring(&h, &s("")).unwrap().to_json(), "6");
    let e = s("😀é😀");
    assert_eq!(strings::rfind(&e, &s("😀")).unwrap().to_json(), "2");
    assert_eq!(
        strings::count_substring(&e, &s("😀")).unwrap().to_json(),
        "2"
    );
    let r = strings::split(&s("αβγβδ"), &s("β")).unwrap();
    assert_eq!(strings_of(&r), ["α", "γ", "δ"]);
    let r = strings::replace(&h, &s(""), &s("·")).unwrap();
    assert_eq!(r.as_str().unwrap(), "·h·é·l·l·o·");
}

/// Calls lifted over dims: a scalar pattern broadcast over var dims, the
/// pattern as the array, and missing values propagating. One row each.
#[rustfmt::skip]
const LIFTED: &[Call] = &[
    // A scalar pattern broadcasts over var dims.
    ("find", &[("3 * var * string", r#"[["abc", "xabc"], [], ["cab", "b", ""]]"#), ("string", r#""b""#)], ("3 * var * int64", "[[1,2],[],[2,0,-1]]")),
    ("contains", &[("3 * var * string", r#"[["abc", "xabc"], [], ["cab", "b", ""]]"#), ("string", r#""ab""#)], ("3 * var * bool", "[[true,true],[],[true,false,false]]")),
    ("concat", &[("3 * var * string", r#"[["abc", "xabc"], [], ["cab", "b", ""]]"#), ("string", r#""!""#)], ("3 * var * string", r#"[["abc!","xabc!"],[],["cab!","b!","!"]]"#)),
    ("replace", &[("3 * var * string", r#"[["abc", "xabc"], [], ["cab", "b", ""]]"#), ("string", r#""b""#), ("string", r#""BB""#)], ("3 * var * string", r#"[["aBBc","xaBBc"],[],["caBB","BB",""]]"#)),
    // The pattern as the array: one string searched for many patterns.
    ("startswith", &[("string", r#""abc""#), ("2 * string", r#"["a", "c"]"#)], ("2 * bool", "[true,false]")),
    // Missing values propagate.
    ("find", &[("3 * ?string", r#"["abc", null, ""]"#), ("string", r#""b""#)], ("3 * ?int64", "[1,null,-1]")),
    ("count_substring", &[("3 * ?string", r#"["abc", null, ""]"#), ("string", r#""""#)], ("3 * ?int64", "[4,null,1]")),
    ("endswith", &[("3 * ?string", r#"["abc", null, ""]"#), ("string", r#""c""#)], ("3 * ?bool", "[true,null,false]")),
    ("concat", &[("string", r#""<""#), ("3 * ?string", r#"["abc", null, ""]"#)], ("3 * ?string", r#"["<abc",null,"<"]"#)),
    ("replace", &[("string", r#""axb""#), ("3 * ?string", r#"[null, "x", ""]"#), ("string", r#""-""#)], ("3 * ?string", r#"[null,"a-b","-a-x-b-"]"#)),
];

#[test]
fn scalar_patterns_broadcast_and_missing_values_propagate() {
    check_calls(LIFTED);
}

#[test]
fn empty_strings() {
    let e = s("");
    assert_eq!(strings::find(&e, &e).unwrap().to_json(), "0");
    assert_eq!(strings::rfind(&e, &e).unwrap().to_json(), "0");
    assert_eq!(strings::find(&e, &s("a")).unwrap().to_json(), "-1");
    assert_eq!(strings::count_substring(&e, &e).unwrap().to_json(), "1");
    assert_eq!(
        strings::count_substring(&s("abc"), &e).unwrap().to_json(),
        "4"
    );
    assert_eq!(strings::startswith(&e, &e).unwrap().to_json(), "true");
    assert_eq!(strings::endswith(&s("a"), &e).unwrap().to_json(), "true");
    assert_eq!(strings::contains(&e, &e).unwrap().to_json(), "true");
    assert_eq!(strings::contains(&e, &s("a")).unwrap().to_json(), "false");
    assert_eq!(strings::concat(&e, &e).unwrap().as_str().unwrap(), "");
    assert_eq!(
        strings::replace(&e, &e, &s("x")).unwrap().as_str().unwrap(),
        "x"
    );
    assert_eq!(
        strings::replace(&e, &s("a"), &s("x"))
            .unwrap()
            .as_str()
            .unwrap(),
        ""
    );
    check_ok(strings::split(&e, &s("x")), "var * string", r#"[""]"#);
    check_ok(
        strings::split(&s("x"), &s("x")),
        "var * string",
        r#"["",""]"#,
    );
    check_ok(
        strings::split(&s("abc"), &s("abcd")),
        "var * string",
        r#"["abc"]"#,
    );
}

#[test]
fn replace_with_an_empty_old_inserts_everywhere() {
    let r = strings::replace(&s("abc"), &s(""), &s("-")).unwrap();
    check(&r, "string", r#""-a-b-c-""#);
    let r = strings::replace(&s("abc"), &s(""), &s("")).unwrap();
    assert_eq!(r.as_str().unwrap(), "abc");
    let x = Array::from(vec!["ab", ""]);
    check_ok(
        strings::replace(&x, &s(""), &s("_")),
        "2 * string",
        r#"["_a_b_","_"]"#,
    );
}

#[test]
fn concat_broadcasts_two_arrays() {
    let x = a("2 * 1 * string", r#"[["a"], ["b"]]"#);
    let y = a("3 * string", r#"["x", "y", "z"]"#);
    check_ok(
        strings::concat(&x, &y),
        "2 * 3 * string",
        r#"[["ax","ay","az"],["bx","by","bz"]]"#,
    );
    check_ok(
        strings::concat(&y, &x),
        "2 * 3 * string",
        r#"[["xa","ya","za"],["xb","yb","zb"]]"#,
    );
    // var against var, size 1 broadcasting.
    let v = a("2 * var * string", r#"[["p", "q"], ["r"]]"#);
    let w = a("2 * var * string", r#"[["1"], ["2", "3"]]"#);
    check_ok(
        strings::concat(&v, &w),
        "2 * var * string",
        r#"[["p1","q1"],["r2","r3"]]"#,
    );
    // Shapes that do not broadcast name both.
    let e = strings::concat(&a("2 * string", r#"["a","b"]"#), &y).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Broadcast, "{e}");
    assert!(
        e.message().contains("(2)") && e.message().contains("(3)"),
        "{e}"
    );
}

#[test]
fn split_adds_a_var_dim() {
    let x = a("2 * string", r#"["a,b", ",c,"]"#);
    let r = strings::split(&x, &s(",")).unwrap();
    check(&r, "2 * var * string", r#"[["a","b"],["","c",""]]"#);
    // One separator per string.
    let seps = a("2 * string", r#"["a", "c"]"#);
    let r = strings::split(&x, &seps).unwrap();
    check(&r, "2 * var * string", r#"[["",",b"],[",",","]]"#);
    // Over a var dim: one var dim more.
    let v = a("3 * var * string", r#"[["a b", "c"], [], ["d e f"]]"#);
    let r = strings::split(&v, &s(" ")).unwrap();
    check(
        &r,
        "3 * var * var * string",
        r#"[[["a","b"],["c"]],[],[["d","e","f"]]]"#,
    );
    // Broadcasting both ways: 2 * 1 against 3 seps.
    let x = a("2 * 1 * string", r#"[["a-b_c"], ["-_"]]"#);
    let seps = a("3 * string", r#"["-", "_", "x"]"#);
    let r = strings::split(&x, &seps).unwrap();
    check(
        &r,
        "2 * 3 * var * string",
        r#"[[["a","b_c"],["a-b","c"],["a-b_c"]],[["","_"],["-",""],["-_"]]]"#,
    );
    // The registered callable resolves the same way.
    let f = lookup("split").unwrap();
    let tp = f
        .resolve(&[
            dynd::Type::parse("2 * string").unwrap(),
            dynd::Type::string(),
        ])
        .unwrap();
    assert_eq!(tp.to_string(), "2 * var * string");
    // Shapes that do not broadcast name the real result type.
    let e = strings::split(&a("2 * string", r#"["a","b"]"#), &seps).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Broadcast, "{e}");
    assert!(!e.message().contains("(var * string)"), "{e}");
    // So do var elements that do not broadcast, found as it runs.
    let v = a("2 * var * string", r#"[["a", "b"], ["c"]]"#);
    let w = a("2 * var * string", r#"[["a", "b", "c"], ["c"]]"#);
    let e = strings::split(&v, &w).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Broadcast, "{e}");
    assert!(e.message().contains("into 2 * var * var * string"), "{e}");
}

#[test]
fn split_into_an_existing_output() {
    let f = lookup("split").unwrap();
    let out = Array::empty("2 * var * string").unwrap();
    let x = a("2 * string", r#"["1 2", "3"]"#);
    f.call_into(&out, &[&x, &s(" ")]).unwrap();
    assert_eq!(out.to_json(), r#"[["1","2"],["3"]]"#);
    // A wrong output type is a Type error.
    let bad = Array::empty("2 * string").unwrap();
    let e = f.call_into(&bad, &[&x, &s(" ")]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Type, "{e}");
}

#[test]
fn errors_are_typed_and_name_the_problem() {
    // Not strings: a Type error naming the signature.
    let e = strings::find(&Array::from(3i32), &s("a")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Type, "{e}");
    assert!(e.message().contains("(string, string) -> int64"), "{e}");
    assert!(e.message().contains("int32"), "{e}");
    let e = strings::concat(&a("3 * int32", "[1,2,3]"), &s("a")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Type, "{e}");
    assert!(e.message().contains("(string, string) -> string"), "{e}");
    assert!(e.message().contains("3 * int32"), "{e}");
    let e = strings::split(&a("2 * float64", "[1,2]"), &s("a")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Type, "{e}");
    assert!(
        e.message().contains("(string, string) -> var * string"),
        "{e}"
    );
    let e = strings::replace(&s("a"), &s("b"), &Array::from(1.5f64)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Type, "{e}");
    assert!(
        e.message().contains("(string, string, string) -> string"),
        "{e}"
    );
    // The wrong number of arguments.
    let e = lookup("find").unwrap().call(&[&s("a")]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Type, "{e}");
    // An empty separator, as Python's ValueError.
    let e = strings::split(&s("abc"), &s("")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    assert!(e.message().contains("empty separator"), "{e}");
    let e = strings::split(&a("2 * string", r#"["a","b"]"#), &s("")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
}

#[test]
fn invalid_utf8_is_a_parse_error() {
    let x = s("ab");
    // SAFETY: a fresh 0-d string array this test owns: its data is one
    // {begin, end} over two bytes in its own block, which nothing else reads.
    unsafe {
        let d = x
            .data_ptr()
            .cast::<dynd::array::StringData>()
            .read_unaligned();
        *d.begin.add(1) = 0xff;
    }
    for e in [
        strings::find(&x, &s("a")).unwrap_err(),
        strings::concat(&s("a"), &x).unwrap_err(),
    ] {
        assert_eq!(e.kind(), ErrorKind::Parse, "{e}");
        assert!(e.message().contains("utf-8"), "{e}");
        assert!(e.message().contains("argument"), "{e}");
    }
}

#[test]
fn split_refuses_missing_values() {
    let x = a("3 * ?string", r#"["abc", null, ""]"#);
    // split has no missing result: a Type error.
    let e = strings::split(&x, &s(",")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Type, "{e}");
    assert!(e.message().contains("?string"), "{e}");
}

#[test]
fn every_function_is_registered() {
    for name in [
        "find",
        "rfind",
        "count_substring",
        "replace",
        "split",
        "startswith",
        "endswith",
        "contains",
        "concat",
    ] {
        let f = lookup(name).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(f.name(), name);
    }
    let r = lookup("rfind")
        .unwrap()
        .call(&[&s("abab"), &s("ab")])
        .unwrap();
    assert_eq!(r.to_json(), "2");
}

#[test]
fn large_calls_match_element_by_element() {
    // Large enough for the parallel outer loop: string outputs are
    // allocated from several threads at once.
    let n = 140_000;
    let words: Vec<String> = (0..n).map(|i| format!("w{i}x{}", i % 7)).collect();
    let x = Array::from(words.iter().map(String::as_str).collect::<Vec<_>>());
    let r = strings::concat(&x, &s("!")).unwrap();
    let got = strings_of(&r);
    assert!(got.iter().zip(&words).all(|(g, w)| *g == format!("{w}!")));
    let r = strings::find(&x, &s("x")).unwrap();
    let got = ints_of(&r);
    assert!(
        got.iter()
            .zip(&words)
            .all(|(g, w)| *g == w.find('x').unwrap() as i64)
    );
    let r = strings::split(&x, &s("x")).unwrap();
    assert_eq!(r.tp().to_string(), format!("{n} * var * string"));
    let last = r.index(&[Index::At(n as isize - 1)]).unwrap();
    assert_eq!(
        strings_of(&last),
        words[n - 1].split('x').collect::<Vec<_>>()
    );
}

/// Raw pointers handed to the test's threads.
#[derive(Clone, Copy)]
struct Ptr(*mut u8);
// SAFETY: the pointers address arrays that outlive the scoped threads;
// each thread writes only its own rows.
unsafe impl Send for Ptr {}
// SAFETY: the pointers address arrays that outlive the scoped threads; each thread writes
// only its own rows.
unsafe impl Sync for Ptr {}
impl Ptr {
    /// The pointer (a method, so closures capture the whole wrapper).
    fn get(self) -> *mut u8 {
        self.0
    }
}

#[test]
fn one_kernel_runs_on_several_threads() {
    use dynd::kernels::KernelRequest;
    const ROWS: usize = 4000;
    const THREADS: usize = 4;
    let words: Vec<String> = (0..ROWS).map(|i| format!("a{i}b")).collect();
    let x = Array::from(words.iter().map(String::as_str).collect::<Vec<_>>());
    let tail = s("+tail");
    let sub = s("b");
    for name in ["concat", "replace", "rfind"] {
        let f = lookup(name).unwrap();
        let (out_tp, args): (&str, Vec<&Array>) = match name {
            "concat" => ("string", vec![&x, &tail]),
            "replace" => ("string", vec![&x, &sub, &tail]),
            _ => ("int64", vec![&x, &sub]),
        };
        let out = Array::empty(format!("{ROWS} * {out_tp}").as_str()).unwrap();
        // The rows of `x` and `out`, the patterns as they are.
        let sides: Vec<Side<'_>> = args
            .iter()
            .map(|a| if a.ndim() == 1 { elems(a) } else { whole(a) })
            .collect();
        with_callable_kernel(&f, elems(&out), &sides, KernelRequest::Strided, |ckb| {
            let dst = Ptr(out.data_ptr());
            let dst_stride = out.tp().dtype().data_size() as isize;
            let firsts: Vec<Ptr> = args.iter().map(|a| Ptr(a.data_ptr())).collect();
            let strides: Vec<isize> = args
                .iter()
                .map(|a| if a.ndim() == 1 { 16 } else { 0 })
                .collect();
            std::thread::scope(|scope| {
                for t in 0..THREADS {
                    let (firsts, strides) = (&firsts, &strides);
                    scope.spawn(move || {
                        let per = ROWS / THREADS;
                        let start = (t * per) as isize;
                        let srcs: Vec<*const u8> = firsts
                            .iter()
                            .zip(strides)
                            .map(|(p, s)| p.get().wrapping_offset(start * s) as *const u8)
                            .collect();
                        // SAFETY: built for Strided over the row types; rows
                        // [start, start + per) of `out` are this thread's alone.
                        unsafe {
                            ckb.call_strided(
                                dst.get().wrapping_offset(start * dst_stride),
                                dst_stride,
                                &srcs,
                                strides,
                                per,
                            )
                        }
                        .unwrap();
                    });
                }
            });
        })
        .unwrap();
        for (i, w) in words.iter().enumerate() {
            let got = out.index(&[Index::At(i as isize)]).unwrap();
            match name {
                "concat" => assert_eq!(got.as_str().unwrap(), format!("{w}+tail")),
                "replace" => assert_eq!(got.as_str().unwrap(), w.replace('b', "+tail")),
                _ => assert_eq!(got.as_scalar::<i64>().unwrap(), w.len() as i64 - 1),
            }
        }
    }
}

/// Python's `find` result from Rust's byte offsets.
fn cp_index(s: &str, at: Option<usize>) -> i64 {
    at.map_or(-1, |b| s[..b].chars().count() as i64)
}

/// Short strings over a small alphabet (with multi-byte characters) so
/// that patterns occur often.
fn text(max: usize) -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![Just('a'), Just('b'), Just('é'), Just('😀')],
        0..max,
    )
    .prop_map(|v| v.into_iter().collect())
}

proptest! {
    #[test]
    fn scalars_agree_with_std(hay in text(12), pat in text(3), new in text(3)) {
        let (h, p) = (s(&hay), s(&pat));
        prop_assert_eq!(strings::find(&h, &p).unwrap().as_scalar::<i64>().unwrap(), cp_index(&hay, hay.find(&*pat)));
        prop_assert_eq!(strings::rfind(&h, &p).unwrap().as_scalar::<i64>().unwrap(), cp_index(&hay, hay.rfind(&*pat)));
        prop_assert_eq!(strings::count_substring(&h, &p).unwrap().as_scalar::<i64>().unwrap(), hay.matches(&*pat).count() as i64);
        prop_assert_eq!(strings::startswith(&h, &p).unwrap().as_scalar::<bool>().unwrap(), hay.starts_with(&*pat));
        prop_assert_eq!(strings::endswith(&h, &p).unwrap().as_scalar::<bool>().unwrap(), hay.ends_with(&*pat));
        prop_assert_eq!(strings::contains(&h, &p).unwrap().as_scalar::<bool>().unwrap(), hay.contains(&*pat));
        let r = strings::replace(&h, &p, &s(&new)).unwrap();
        prop_assert_eq!(r.as_str().unwrap(), hay.replace(&*pat, &new));
        let r = strings::concat(&h, &p).unwrap();
        prop_assert_eq!(r.as_str().unwrap(), format!("{hay}{pat}"));
        if pat.is_empty() {
            prop_assert_eq!(strings::split(&h, &p).unwrap_err().kind(), ErrorKind::InvalidArgument);
        } else {
            let r = strings::split(&h, &p).unwrap();
            prop_assert_eq!(strings_of(&r), hay.split(&*pat).collect::<Vec<_>>());
        }
    }

    #[test]
    fn lifted_calls_agree_with_std(hays in proptest::collection::vec(text(10), 0..6), pat in text(2).prop_filter("a separator", |p| !p.is_empty())) {
        let x = Array::from(hays.iter().map(String::as_str).collect::<Vec<_>>());
        let p = s(&pat);
        let want_find: Vec<i64> = hays.iter().map(|h| cp_index(h, h.find(&*pat))).collect();
        prop_assert_eq!(ints_of(&strings::find(&x, &p).unwrap()), want_find);
        let want_rfind: Vec<i64> = hays.iter().map(|h| cp_index(h, h.rfind(&*pat))).collect();
        prop_assert_eq!(ints_of(&strings::rfind(&x, &p).unwrap()), want_rfind);
        let want_count: Vec<i64> = hays.iter().map(|h| h.matches(&*pat).count() as i64).collect();
        prop_assert_eq!(ints_of(&strings::count_substring(&x, &p).unwrap()), want_count);
        let want: Vec<bool> = hays.iter().map(|h| h.starts_with(&*pat)).collect();
        prop_assert_eq!(bools_of(&strings::startswith(&x, &p).unwrap()), want);
        let want: Vec<bool> = hays.iter().map(|h| h.ends_with(&*pat)).collect();
        prop_assert_eq!(bools_of(&strings::endswith(&x, &p).unwrap()), want);
        let want: Vec<bool> = hays.iter().map(|h| h.contains(&*pat)).collect();
        prop_assert_eq!(bools_of(&strings::contains(&x, &p).unwrap()), want);
        let want: Vec<String> = hays.iter().map(|h| h.replace(&*pat, "_")).collect();
        prop_assert_eq!(strings_of(&strings::replace(&x, &p, &s("_")).unwrap()), want);
        let r = strings::split(&x, &p).unwrap();
        prop_assert_eq!(r.tp().to_string(), format!("{} * var * string", hays.len()));
        for (i, h) in hays.iter().enumerate() {
            let row = r.index(&[Index::At(i as isize)]).unwrap();
            prop_assert_eq!(strings_of(&row), h.split(&*pat).collect::<Vec<_>>());
        }
    }
}
