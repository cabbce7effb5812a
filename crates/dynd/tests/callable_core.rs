//! Callables: scalar callables from Rust functions and from a third party's
//! raw deferred ckernel, lifted over fixed and var dims with broadcasting;
//! parallel and serial execution agree.

use crate::common;
use common::{a, assert_error};

use dynd::callable::Callable;
use dynd::callable::deferred::Deferred;
use dynd::callable::dispatch::DispatchBuilder;
use dynd::kernels::CKernelBuilder;
use dynd::{Array, ErrorKind, Index, Type};
use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};

fn add_i32() -> Callable {
    Callable::from_fn2("add_i32", |x: i32, y: i32| x.wrapping_add(y))
}

#[test]
fn lifting_over_var_and_fixed_dims_broadcasts_as_design_section_6() {
    let f = add_i32();
    let x = a("2 * var * int32", "[[1,2,3],[4]]");
    // (y, the type and value of x + y).
    let cases = [
        (
            "2 * 3 * int32",
            "[[5,6,7],[8,9,10]]",
            "2 * 3 * int32",
            "[[6,8,10],[12,13,14]]",
        ),
        (
            "2 * var * int32",
            "[[5],[6,7]]",
            "2 * var * int32",
            "[[6,7,8],[10,11]]",
        ),
    ];
    for (ty, jy, rt, rj) in cases {
        let r = f.call(&[&x, &a(ty, jy)]).unwrap();
        assert_eq!(r.tp().to_string(), rt, "{x} + {jy}");
        assert_eq!(r.to_json(), rj, "{x} + {jy}");
    }
}

#[test]
fn broadcasting_rules_and_errors() {
    let f = add_i32();
    let cases = [
        (
            "3 * int32",
            "[1,2,3]",
            "int32",
            "10",
            "3 * int32",
            "[11,12,13]",
        ),
        (
            "2 * 1 * int32",
            "[[1],[2]]",
            "3 * int32",
            "[10,20,30]",
            "2 * 3 * int32",
            "[[11,21,31],[12,22,32]]",
        ),
        (
            "var * int32",
            "[1,2]",
            "1 * int32",
            "[5]",
            "var * int32",
            "[6,7]",
        ),
        (
            "2 * var * int32",
            "[[1,2],[3]]",
            "2 * 1 * int32",
            "[[10],[20]]",
            "2 * var * int32",
            "[[11,12],[23]]",
        ),
        (
            "var * var * int32",
            "[[1],[2,3]]",
            "int32",
            "100",
            "var * var * int32",
            "[[101],[102,103]]",
        ),
    ];
    for (t1, j1, t2, j2, rt, rj) in cases {
        let r = f.call(&[&a(t1, j1), &a(t2, j2)]).unwrap();
        assert_eq!(
            (r.tp().to_string().as_str(), r.to_json().as_str()),
            (rt, rj),
            "{t1} + {t2}"
        );
        // Arguments the other way round give the same.
        let r = f.call(&[&a(t2, j2), &a(t1, j1)]).unwrap();
        assert_eq!(r.to_json(), rj, "{t2} + {t1}");
    }
    // (x, y, the error's kind where checked, text its message contains).
    type Case<'a> = (
        &'a str,
        &'a str,
        &'a str,
        &'a str,
        Option<ErrorKind>,
        &'a str,
    );
    let errors: [Case; 4] = [
        (
            "3 * int32",
            "[1,2,3]",
            "2 * int32",
            "[1,2]",
            Some(ErrorKind::Broadcast),
            "(3) and (2)",
        ),
        (
            "2 * var * int32",
            "[[1,2,3],[4]]",
            "2 * 2 * int32",
            "[[1,2],[3,4]]",
            Some(ErrorKind::Broadcast),
            "size 3 into size 2",
        ),
        (
            "2 * var * int32",
            "[[1,2],[4]]",
            "2 * var * int32",
            "[[1,2,3],[4]]",
            None,
            "a dim of size 3 into size 2",
        ),
        (
            "3 * float64",
            "[1,2,3]",
            "int32",
            "1",
            Some(ErrorKind::Type),
            "add_i32 does not accept",
        ),
    ];
    for (t1, j1, t2, j2, kind, needle) in errors {
        let e = f.call(&[&a(t1, j1), &a(t2, j2)]).unwrap_err();
        if let Some(kind) = kind {
            assert_eq!(e.kind(), kind, "{t1} + {t2}: {e}");
        }
        assert!(e.message().contains(needle), "{t1} + {t2}: {e}");
    }
}

#[test]
fn views_are_read_with_their_strides() {
    let f = Callable::from_fn1("neg", |x: i64| -x);
    let m = a("3 * 4 * int64", "[[0,1,2,3],[4,5,6,7],[8,9,10,11]]");
    let v = m
        .index(&[Index::slice(None, None, -1), Index::slice(Some(1), None, 2)])
        .unwrap();
    assert_eq!(
        f.call(&[&v]).unwrap().to_json(),
        "[[-9,-11],[-5,-7],[-1,-3]]"
    );
    assert_eq!(
        f.call(&[&m.permute(&[1, 0]).unwrap()]).unwrap().to_json(),
        "[[0,-4,-8],[-1,-5,-9],[-2,-6,-10],[-3,-7,-11]]"
    );
}

#[test]
fn fallible_functions_report_errors() {
    let div = Callable::try_from_fn2("div", |x: i32, y: i32| {
        x.checked_div(y)
            .ok_or_else(|| dynd::Error::invalid_argument("integer division by zero"))
    });
    assert_eq!(
        div.call(&[&a("2 * int32", "[7,8]"), &a("int32", "2")])
            .unwrap()
            .to_json(),
        "[3,4]"
    );
    let e = div
        .call(&[&a("2 * int32", "[7,8]"), &a("2 * int32", "[1,0]")])
        .unwrap_err();
    assert!(e.message().contains("division by zero"), "{e}");
}

#[test]
fn parallel_and_serial_results_agree() {
    let f = Callable::from_fn2("fma", |x: f64, y: f64| x * y + 0.5);
    let n = 300_000;
    let xs: Vec<f64> = (0..n).map(|i| (i as f64).sin()).collect();
    let ys: Vec<f64> = (0..n).map(|i| (i as f64) * 0.25).collect();
    let big = f
        .call(&[&Array::from(xs.clone()), &Array::from(ys.clone())])
        .unwrap();
    // Serial: the same computation in small pieces (under the parallel size).
    for start in (0..n).step_by(50_000) {
        let piece = f
            .call(&[
                &Array::from(xs[start..start + 50_000].to_vec()),
                &Array::from(ys[start..start + 50_000].to_vec()),
            ])
            .unwrap();
        let got = big
            .index(&[Index::slice(
                Some(start as isize),
                Some(start as isize + 50_000),
                1,
            )])
            .unwrap();
        assert_eq!(got.to_json(), piece.to_json());
    }
    // And a 2-d case whose rows split across threads, against a Rust loop.
    let m = Array::empty("600 * 1000 * float64").unwrap();
    let r = f.call(&[&m, &Array::from(2.0f64)]).unwrap();
    assert_eq!(r.tp().to_string(), "600 * 1000 * float64");
    assert!(
        r.index(&[599.into(), 999.into()])
            .unwrap()
            .as_scalar::<f64>()
            .unwrap()
            == 0.5
    );
    // An error on one element of a large input reaches the caller.
    let g = Callable::try_from_fn1("check", |x: f64| {
        if x == 123_456.0 {
            Err(dynd::Error::overflow("bad value 123456"))
        } else {
            Ok(x)
        }
    });
    let e = g
        .call(&[&Array::from((0..n).map(|i| i as f64).collect::<Vec<_>>())])
        .unwrap_err();
    assert_error(&e, ErrorKind::Overflow, "bad value 123456");
}

// ---- a third party's kernel, through the raw deferred-ckernel path ----

static FREED: AtomicUsize = AtomicUsize::new(0);

/// `dst = src * factor` for int32, where the factor is this kernel's data.
#[repr(C)]
struct ScaleKernel {
    function: *mut c_void,
    destructor: *mut c_void,
    factor: i32,
}

unsafe extern "C" fn scale_single(dst: *mut u8, src: *const *const u8, k: *mut c_void) -> i32 {
    // SAFETY: the ABI: one int32 source, an int32 destination, our kernel.
    unsafe {
        let f = (*(k as *const ScaleKernel)).factor;
        *(dst as *mut i32) = (*(*src as *const i32)) * f;
    }
    0
}

unsafe extern "C" fn scale_strided(
    dst: *mut u8,
    dst_stride: isize,
    src: *const *const u8,
    src_stride: *const isize,
    count: usize,
    k: *mut c_void,
) -> i32 {
    // SAFETY: the ABI: `count` int32 elements at the strides.
    unsafe {
        let f = (*(k as *const ScaleKernel)).factor;
        let (s, ss) = (*src, *src_stride);
        for i in 0..count as isize {
            let v = *(s.offset(i * ss) as *const i32);
            if v == -1 {
                dynd::error::set_last_error(&dynd::Error::external("the scale kernel refuses -1"));
                return -1;
            }
            *(dst.offset(i * dst_stride) as *mut i32) = v * f;
        }
    }
    0
}

unsafe extern "C" fn scale_instantiate(
    data: *mut c_void,
    ckb: *mut CKernelBuilder,
    offset: isize,
    _arrmeta: *const *const u8,
    kernreq: u32,
) -> isize {
    let end = offset + std::mem::size_of::<ScaleKernel>() as isize;
    // SAFETY: the builder is valid (the instantiate contract); written the
    // way C code would: ensure capacity, then fill the prefix and data.
    unsafe {
        if CKernelBuilder::ensure_capacity_leaf_raw(ckb, end).is_err() {
            return -1;
        }
        let k = CKernelBuilder::raw_data(ckb).offset(offset) as *mut ScaleKernel;
        (*k).function = if kernreq == 0 {
            scale_single as *mut c_void
        } else {
            scale_strided as *mut c_void
        };
        (*k).destructor = std::ptr::null_mut();
        (*k).factor = *(data as *const i32);
    }
    end
}

unsafe extern "C" fn scale_free(data: *mut c_void) {
    FREED.fetch_add(1, Ordering::SeqCst);
    // SAFETY: made by Box::into_raw in the test.
    drop(unsafe { Box::from_raw(data as *mut i32) });
}

#[test]
fn a_third_party_deferred_kernel_is_lifted_over_var_dims() {
    let before = FREED.load(Ordering::SeqCst);
    let factor = Box::into_raw(Box::new(3i32)) as *mut c_void;
    let d = Deferred {
        name: "scale3".into(),
        types: vec![Type::int32(), Type::int32()],
        data: factor,
        instantiate: scale_instantiate,
        free: Some(scale_free),
    };
    // SAFETY: the kernel follows DESIGN §5 and is thread-safe.
    let f = unsafe { Callable::from_deferred(d) }.unwrap();
    let x = a("3 * var * int32", "[[1,2,3],[],[4,5]]");
    let r = f.call(&[&x]).unwrap();
    assert_eq!(r.tp().to_string(), "3 * var * int32");
    assert_eq!(r.to_json(), "[[3,6,9],[],[12,15]]");
    let e = f.call(&[&a("2 * var * int32", "[[1],[-1]]")]).unwrap_err();
    assert_error(&e, ErrorKind::External, "refuses -1");
    assert_eq!(
        f.call(&[&a("float64", "1")]).unwrap_err().kind(),
        ErrorKind::Type
    );
    let g = f.clone();
    drop(f);
    assert_eq!(
        FREED.load(Ordering::SeqCst),
        before,
        "not freed while a clone lives"
    );
    drop(g);
    assert_eq!(
        FREED.load(Ordering::SeqCst),
        before + 1,
        "freed exactly once"
    );
    // A bad deferred kernel is refused, and its data still freed once.
    let bad = Deferred {
        name: "bad".into(),
        types: vec![Type::int32()],
        data: Box::into_raw(Box::new(1i32)) as *mut c_void,
        instantiate: scale_instantiate,
        free: Some(scale_free),
    };
    // SAFETY: the kernel follows DESIGN §5 and is thread-safe.
    let e = unsafe { Callable::from_deferred(bad) }.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert_eq!(FREED.load(Ordering::SeqCst), before + 2);
}

#[test]
fn dispatch_picks_the_most_specific_overload_and_refuses_ambiguity() {
    let generic = Callable::from_fn2("first_f64", |x: f64, _y: f64| x);
    let mut b = DispatchBuilder::new("pick");
    b.add(Callable::from_fn2("pick_i32", |x: i32, y: i32| x * 100 + y))
        .unwrap();
    b.add(generic).unwrap();
    let f = b.build();
    assert_eq!(
        f.call(&[&a("int32", "1"), &a("int32", "2")])
            .unwrap()
            .to_json(),
        "102"
    );
    assert_eq!(
        f.call(&[&a("2 * float64", "[1.5, 2]"), &a("float64", "0")])
            .unwrap()
            .to_json(),
        "[1.5,2.0]"
    );
    let e = f.call(&[&a("int8", "1"), &a("int8", "2")]).unwrap_err();
    assert_error(&e, ErrorKind::Type, "no overload for (int8, int8)");
    // Duplicates are refused at registration.
    let e = b
        .add(Callable::from_fn2("again", |x: i32, _y: i32| x))
        .err()
        .unwrap();
    assert!(e.message().contains("duplicates"), "{e}");
}

/// Contiguous arguments of one shape take the flat path (one strided loop);
/// strided views of the same values take the general lifter. Both agree,
/// for scalars mixed in, for 2-d shapes, for preallocated outputs, for
/// outputs that need a conversion, and above the parallel threshold.
#[test]
fn the_flat_path_agrees_with_the_general_lifter() {
    use dynd::callable::lookup;
    let add = lookup("add").unwrap();
    let less = lookup("less").unwrap();
    for n in [0usize, 1, 7, 1000, 300_001] {
        let wide: Vec<f64> = (0..2 * n).map(|i| (i % 97) as f64 * 0.5 - 3.0).collect();
        let wide = Array::from(wide);
        // Every other element: strided, so not flat.
        let strided = wide.index(&[Index::slice(None, None, 2)]).unwrap();
        let contiguous = strided.copy().unwrap();
        let ones = Array::from(vec![1i32; n]);
        let scalar = Array::from(2.5f64);
        for f in [&add, &less] {
            let general = f.call(&[&strided, &ones]).unwrap();
            let flat = f.call(&[&contiguous, &ones]).unwrap();
            assert_eq!(flat.tp(), general.tp(), "{} n={n}", f.name());
            assert_eq!(flat.to_json(), general.to_json(), "{} n={n}", f.name());
            let general = f.call(&[&scalar, &strided]).unwrap();
            let flat = f.call(&[&scalar, &contiguous]).unwrap();
            assert_eq!(flat.to_json(), general.to_json(), "{} n={n}", f.name());
            // Into a preallocated output of the same type.
            let out = Array::empty(flat.tp().clone()).unwrap();
            f.call_into(&out, &[&scalar, &contiguous]).unwrap();
            assert_eq!(out.to_json(), flat.to_json());
        }
    }
    // 2-d, same shape: flat; against a transposed-back view: general.
    let m = a("2 * 3 * int32", "[[1,2,3],[4,5,6]]");
    let t = a("3 * 2 * int32", "[[10,40],[20,50],[30,60]]")
        .permute(&[1, 0])
        .unwrap();
    let tc = t.copy().unwrap();
    assert_eq!(
        add.call(&[&m, &tc]).unwrap().to_json(),
        add.call(&[&m, &t]).unwrap().to_json()
    );
    assert_eq!(
        add.call(&[&m, &tc]).unwrap().to_json(),
        "[[11,22,33],[44,55,66]]"
    );
    // An output of another type than the computed one goes the general way
    // and is refused the same way.
    let wrong = Array::empty("2 * 3 * float64").unwrap();
    assert_eq!(
        add.call_into(&wrong, &[&m, &tc]).unwrap_err().kind(),
        add.call_into(&wrong, &[&m, &t]).unwrap_err().kind()
    );
    // Shapes that do not broadcast fail the same way on both paths.
    let x = Array::from(vec![1.0f64, 2.0, 3.0]);
    let y = Array::from(vec![1.0f64, 2.0]);
    let e = add.call(&[&x, &y]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Broadcast);
    assert!(
        e.message()
            .contains("cannot broadcast shapes (3) and (2) together"),
        "{}",
        e.message()
    );
    // Types the callable does not take are refused with the full message.
    let s = a("3 * string", r#"["a","b","c"]"#);
    let e = add.call(&[&x, &s]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Type);
    // Integer division by zero still reports from the flat loop.
    let div = lookup("divide").unwrap();
    let e = div
        .call(&[&Array::from(vec![1i32, 2]), &Array::from(vec![1i32, 0])])
        .unwrap_err();
    assert!(e.message().contains("zero"), "{}", e.message());
}

/// `N * var * T` arguments with rows in order in memory take the ragged
/// path (the kernel once per run of rows); rows out of order (a reversed
/// view) take the general lifter. Both agree, and errors are the same.
#[test]
fn the_ragged_path_agrees_with_the_general_lifter() {
    use dynd::callable::lookup;
    let add = lookup("add").unwrap();
    let less = lookup("less").unwrap();
    // Big enough that the JSON reader's arena grows into several chunks
    // (several runs) and the runs are split across threads.
    let rows: Vec<String> = (0..20_000)
        .map(|i| {
            let len = (i * 7) % 23;
            let v: Vec<String> = (0..len).map(|k| format!("{}.5", (i + k) % 100)).collect();
            format!("[{}]", v.join(","))
        })
        .collect();
    let text = format!("[{}]", rows.join(","));
    let x = a("20000 * var * float64", &text);
    let y = a("20000 * var * int32", &text.replace(".5", ""));
    let one = Array::from(1.0f64);
    let rev = Index::slice(None, None, -1);
    let xr = x.index(&[rev]).unwrap();
    let yr = y.index(&[rev]).unwrap();
    for f in [&add, &less] {
        for (fast, general) in [
            (f.call(&[&x, &one]).unwrap(), f.call(&[&xr, &one]).unwrap()),
            (f.call(&[&one, &x]).unwrap(), f.call(&[&one, &xr]).unwrap()),
            (f.call(&[&x, &y]).unwrap(), f.call(&[&xr, &yr]).unwrap()),
        ] {
            assert_eq!(fast.tp(), general.tp());
            assert_eq!(
                fast.index(&[rev]).unwrap().to_json(),
                general.to_json(),
                "{}",
                f.name()
            );
        }
    }
    let r = add
        .call(&[&a("3 * var * int32", "[[1,2],[],[3]]"), &Array::from(10i32)])
        .unwrap();
    assert_eq!(r.tp().to_string(), "3 * var * int32");
    assert_eq!(r.to_json(), "[[11,12],[],[13]]");
    // The result is an ordinary array: its rows can be used again.
    let r2 = add.call(&[&r, &r]).unwrap();
    assert_eq!(r2.to_json(), "[[22,24],[],[26]]");
    // Rows of different sizes do not broadcast: the general path's error.
    let e = add
        .call(&[
            &a("2 * var * int32", "[[1,2],[3]]"),
            &a("2 * var * int32", "[[1,2,3],[4]]"),
        ])
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Broadcast, "{e}");
    // Size-1 rows still broadcast (through the general path).
    let r = add
        .call(&[
            &a("2 * var * int32", "[[1,2],[3]]"),
            &a("2 * var * int32", "[[10],[20]]"),
        ])
        .unwrap();
    assert_eq!(r.to_json(), "[[11,12],[23]]");
    // Integer division by zero reports from the ragged loop.
    let div = lookup("divide").unwrap();
    let e = div
        .call(&[&a("2 * var * int32", "[[1],[2,3]]"), &Array::from(0i32)])
        .unwrap_err();
    assert!(e.message().contains("zero"), "{}", e.message());
}

#[test]
fn a_signature_mismatch_is_said_once_of_the_whole_types() {
    let e = add_i32()
        .call(&[&a("3 * float64", "[1,2,3]"), &a("int32", "1")])
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Type);
    assert_eq!(
        e.message(),
        "add_i32 does not accept arguments (3 * float64, int32); its signature is (int32, int32) -> int32"
    );
    // A specific element-level reason stands alone, not repeated.
    let e = dynd::compute::sqrt(&a("3 * string", r#"["a","b","c"]"#)).unwrap_err();
    assert_eq!(
        e.message(),
        "sqrt takes a number (bool, integer, float or complex); got (string): string is not supported"
    );
}

/// How often [`CountingResolves`] resolved its types.
static RESOLVES: AtomicUsize = AtomicUsize::new(0);

/// A non-scalar callable that counts how often its types are resolved,
/// around a built-in one (it builds the built-in's kernel).
struct CountingResolves(Callable);

impl dynd::callable::CallableImpl for CountingResolves {
    fn name(&self) -> &str {
        "counting"
    }

    fn signature(&self) -> &Type {
        self.0.signature()
    }

    fn is_scalar(&self) -> bool {
        false
    }

    fn resolve(&self, args: &[Type]) -> dynd::Result<Type> {
        RESOLVES.fetch_add(1, Ordering::Relaxed);
        self.0.resolve(args)
    }

    unsafe fn instantiate(
        &self,
        ckb: std::pin::Pin<&mut CKernelBuilder>,
        offset: usize,
        args: dynd::kernels::KernelArgs<'_>,
    ) -> dynd::Result<usize> {
        // SAFETY: the caller's promises, which are the inner callable's.
        unsafe { self.0.instantiate(ckb, offset, args) }
    }
}

#[test]
fn a_call_resolves_its_types_once() {
    let c = Callable::new(CountingResolves(dynd::callable::lookup("sum").unwrap()));
    let x = a("2 * 3 * int64", "[[1,2,3],[4,5,6]]");
    let r = c.call(&[&x]).unwrap();
    assert_eq!(r.to_json(), "21");
    assert_eq!(RESOLVES.load(Ordering::Relaxed), 1, "call");
    // Into an output the caller gives: resolved once, to check its type.
    let out = Array::empty(Type::parse("int64").unwrap()).unwrap();
    c.call_into(&out, &[&x]).unwrap();
    assert_eq!(out.to_json(), "21");
    assert_eq!(RESOLVES.load(Ordering::Relaxed), 2, "call_into");
    // A wrong output type is still refused, naming what it computes.
    let bad = Array::empty(Type::parse("float32").unwrap()).unwrap();
    assert_error(
        &c.call_into(&bad, &[&x]).unwrap_err(),
        ErrorKind::Type,
        "computes int64",
    );
}

#[test]
fn an_argument_aliasing_the_output_is_read_before_any_write() {
    use dynd::callable;
    use dynd::kernels::assign::ErrorMode;
    // A shifted add into the array itself: NumPy's answer, not a running
    // sum, on any thread count (large enough to split).
    let n = 300_000;
    let a = Array::from((0..n).map(|i| i as i64).collect::<Vec<_>>());
    let tail = a.index(&[Index::slice(Some(1), None, 1)]).unwrap();
    let head = a
        .index(&[Index::slice(None, Some(n as isize - 1), 1)])
        .unwrap();
    callable::lookup("add")
        .unwrap()
        .call_into(&tail, &[&head, &Array::from(10i64)])
        .unwrap();
    let v = a.to_vec::<i64>().unwrap();
    assert_eq!(&v[..4], &[0, 10, 11, 12]);
    assert_eq!(v[n - 1], (n as i64 - 2) + 10);
    // An assignment from its own reverse.
    let b = Array::from(vec![1i32, 2, 3, 4, 5]);
    b.assign(
        &b.index(&[Index::slice(None, None, -1)]).unwrap(),
        ErrorMode::Default,
    )
    .unwrap();
    assert_eq!(b.to_json(), "[5,4,3,2,1]");
    // In place in the same layout needs no copy and is right.
    let c = Array::from(vec![1.0f64, 2.0]);
    callable::lookup("multiply")
        .unwrap()
        .call_into(&c, &[&c, &c])
        .unwrap();
    assert_eq!(c.to_json(), "[1.0,4.0]");
}
