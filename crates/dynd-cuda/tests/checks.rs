//! The device checks: each runs on the device it is given — a CUDA GPU
//! (`gpu`, when one is present) or the host emulator (`emulated`, on
//! every machine) — and compares with the host.

use crate::common::{floats, host};
use dynd::callable::{self, arith};
use dynd::memblock::DeviceId;
use dynd::types::BuiltinType;
use dynd::{Array, ErrorKind, Index, compute};
use dynd_cuda::kernel::device_types;

/// Arrays of every device type, plain and optional, and their views, go
/// to the device and back unchanged; so does 100 MB.
pub fn arrays_round_trip(dev: DeviceId) {
    for b in device_types() {
        for optional in [false, true] {
            let a = host(b, &[4, 5], optional, 3);
            let d = a.to_device(dev).unwrap();
            assert_eq!(d.device(), dev);
            assert_eq!(d.to_host().unwrap().to_json(), a.to_json(), "{b}");
            // Views stay views on the device.
            let v = d
                .index(&[Index::slice(None, None, -1), Index::slice(Some(1), None, 2)])
                .unwrap();
            let hv = a
                .index(&[Index::slice(None, None, -1), Index::slice(Some(1), None, 2)])
                .unwrap();
            assert_eq!(v.device(), dev);
            assert_eq!(v.to_host().unwrap().to_json(), hv.to_json(), "{b}");
        }
    }
    // Large: 100 MB each way.
    let big = Array::from((0..12_500_000).map(|i| i as f64).collect::<Vec<_>>());
    let back = big.to_device(dev).unwrap().to_host().unwrap();
    assert!(back == big);
}

/// Every function of the arithmetic family on every pair of device types
/// (the second from `second`, or every type) with broadcasting and missing
/// values gives the host's values, or the host's error.
pub fn every_function_on_every_type(dev: DeviceId, second: Option<&[BuiltinType]>) {
    let (mut compared, mut refused) = (0, 0);
    for f in arith::functions() {
        for ta in device_types() {
            let seconds: Vec<BuiltinType> = match second {
                Some(s) => s.to_vec(),
                None => device_types().collect(),
            };
            for tb in seconds {
                let a = host(ta, &[3, 4], true, 1);
                let b = host(tb, &[4], false, 2);
                let args: Vec<Array> = if f.arity() == 1 { vec![a] } else { vec![a, b] };
                let hrefs: Vec<&Array> = args.iter().collect();
                let expected = callable::lookup(f.name()).unwrap().call(&hrefs);
                let devs: Vec<Array> = args.iter().map(|x| x.to_device(dev).unwrap()).collect();
                let drefs: Vec<&Array> = devs.iter().collect();
                let got = callable::lookup(f.name()).unwrap().call(&drefs);
                match (expected, got) {
                    (Ok(e), Ok(g)) => {
                        assert_eq!(g.device(), dev);
                        let g = g.to_host().unwrap();
                        if f.is_math() && f.name() != "sqrt" {
                            // Transcendental functions: within their
                            // documented ulps (docs/cuda.md): 4 in
                            // float64, 8 in float32, relative to
                            // max(|x|, 1).
                            let single = e.tp().dtype().to_string().contains("float32");
                            let ulps = if single {
                                8.0 * f64::from(f32::EPSILON)
                            } else {
                                4.0 * f64::EPSILON
                            };
                            for (x, y) in floats(&e).iter().zip(&floats(&g)) {
                                let close = (x - y).abs() <= ulps * x.abs().max(1.0);
                                assert!(
                                    x.is_nan() && y.is_nan() || x == y || close,
                                    "{}({ta}): {x} vs {y}",
                                    f.name()
                                );
                            }
                        } else {
                            assert_eq!(e.to_json(), g.to_json(), "{}({ta}, {tb})", f.name());
                        }
                        compared += 1;
                    }
                    (Err(e), Err(g)) => {
                        if g.message().contains("on the device") {
                            refused += 1;
                        } else {
                            assert_eq!(e.kind(), g.kind(), "{}: {e} / {g}", f.name());
                            assert!(g.message().contains(e.message()), "{}: {e} / {g}", f.name());
                            compared += 1;
                        }
                    }
                    (Ok(_), Err(g)) if g.message().contains("on the device") => refused += 1,
                    (e, g) => panic!("{}({ta}, {tb}): host {e:?}, device {g:?}", f.name()),
                }
            }
        }
    }
    let pairs = arith::functions().count()
        * device_types().count()
        * second.map_or(device_types().count(), <[_]>::len);
    assert!(
        compared * 5 > pairs * 3,
        "compared {compared} of {pairs}, refused {refused}"
    );
}

/// A failing element (integer division by zero) is the host's error, with
/// its index; a missing one does not fail.
pub fn errors_are_the_hosts_with_the_index(dev: DeviceId) {
    let a = Array::from_json("2 * 3 * int32", "[[1,2,3],[4,5,6]]")
        .unwrap()
        .to_device(dev)
        .unwrap();
    let b = Array::from_json("3 * int32", "[1,0,3]")
        .unwrap()
        .to_device(dev)
        .unwrap();
    let e = compute::divide(&a, &b).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.message().contains("division by zero"), "{e}");
    assert!(e.message().contains("[0, 1]"), "{e}");
    // A missing dividend over a zero divisor is no error.
    let m = Array::from_json("3 * ?int32", "[1,null,3]")
        .unwrap()
        .to_device(dev)
        .unwrap();
    let ok = compute::divide(&m, &b).unwrap();
    assert_eq!(ok.to_json(), "[1,null,1]");
}

/// Host vectors do not join device arrays; host scalars do.
pub fn mixing_devices_is_refused(dev: DeviceId) {
    let d = Array::from(vec![1.0f64, 2.0]).to_device(dev).unwrap();
    let h = Array::from(vec![1.0f64, 2.0]);
    let e = compute::add(&d, &h).unwrap_err();
    assert!(e.message().contains("mixes devices"), "{e}");
    // A host scalar is fine.
    let r = compute::add(&d, &Array::from(0.5f64)).unwrap();
    assert_eq!(r.to_json(), "[1.5,2.5]");
    // Not on the device yet: a Type error saying so.
    let e = compute::is_null(&d).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Type);
    assert!(e.message().contains("does not run on the device"), "{e}");
}

/// `where` over every condition and value type equals the host's.
pub fn where_equals_the_host(dev: DeviceId) {
    for tc in device_types() {
        for tx in device_types() {
            let cond = host(tc, &[4], true, 3);
            let x = host(tx, &[3, 4], true, 1);
            let y = Array::from(0.5f64);
            let expected = compute::where_(&cond, &x, &y);
            let (dc, dx) = (cond.to_device(dev).unwrap(), x.to_device(dev).unwrap());
            let got = compute::where_(&dc, &dx, &y);
            match (expected, got) {
                (Ok(e), Ok(g)) => {
                    assert_eq!(g.device(), dev);
                    assert_eq!(e.to_json(), g.to_json(), "where({tc}, {tx}, 0.5)");
                }
                (Err(_), Err(g)) => assert!(g.message().contains("on the device"), "{g}"),
                (e, g) => panic!("where({tc}, {tx}): host {e:?}, device {g:?}"),
            }
        }
    }
}

/// The shapes and axes the reduction checks take: C-contiguous ones over
/// each axis, several axes, every axis and none; keepdims; a long extent
/// (split over blocks); empty extents and outputs.
fn reduction_cases() -> Vec<(Vec<usize>, Option<Vec<isize>>, bool)> {
    vec![
        (vec![3, 200], Some(vec![1]), false),
        (vec![3, 200], Some(vec![0]), true),
        (vec![4, 5, 6], Some(vec![0, 2]), false),
        (vec![4, 5, 6], Some(vec![-2]), true),
        (vec![700], None, false),
        (vec![2, 3], Some(vec![]), false),
        (vec![0, 3], Some(vec![0]), false),
        (vec![3, 0], None, true),
    ]
}

/// `true` when two float values agree within `tol` relative to
/// max(|x|, 1) (or are both NaN, or equal).
fn close(x: f64, y: f64, tol: f64) -> bool {
    x == y || x.is_nan() && y.is_nan() || (x - y).abs() <= tol * x.abs().max(1.0)
}

/// Every built-in reduction of every device type (the first from `types`,
/// or all), plain and optional, over the shapes and axes above and a
/// strided view, gives the host's result type and values — integers
/// exactly, floats within 1e-5 (float32) or 1e-12 (float64) relative —
/// or the host's error.
pub fn reductions_equal_the_host(dev: DeviceId, types: Option<&[BuiltinType]>) {
    use dynd::callable::reduce::BuiltinReduction;
    let types: Vec<BuiltinType> = match types {
        Some(t) => t.to_vec(),
        None => device_types().collect(),
    };
    let mut compared = 0;
    for kind in BuiltinReduction::ALL {
        for &b in &types {
            for optional in [false, true] {
                let mut cases: Vec<(Array, String, Option<Vec<isize>>, bool)> = reduction_cases()
                    .into_iter()
                    .map(|(shape, axes, keep)| {
                        (
                            host(b, &shape, optional, 5),
                            format!("{shape:?}"),
                            axes,
                            keep,
                        )
                    })
                    .collect();
                // A view with negative and non-unit steps.
                let whole = host(b, &[6, 8], optional, 2);
                let view = whole
                    .index(&[Index::slice(None, None, -1), Index::slice(Some(1), None, 3)])
                    .unwrap();
                cases.push((view, "a view".into(), Some(vec![0]), false));
                for (h, what, axes, keep) in cases {
                    reduction_equals_the_host(dev, &h, &what, kind, axes.as_deref(), keep);
                    compared += 1;
                }
            }
        }
    }
    assert_eq!(compared, 12 * types.len() * 2 * 9);
}

/// `kind` over `axes` with `keep` of the host array `h` (named `what`) on
/// `dev` gives the host's result type and values — integers exactly,
/// floats within 1e-5 (float32) or 1e-12 (float64) relative — or the
/// host's error.
pub fn reduction_equals_the_host(
    dev: DeviceId,
    h: &Array,
    what: &str,
    kind: dynd::callable::reduce::BuiltinReduction,
    axes: Option<&[isize]>,
    keep: bool,
) {
    let f = dynd::callable::reduce::Reduction::builtin(kind).with(axes, keep);
    let expected = f.call(&[h]);
    let got = f.call(&[&h.to_device(dev).unwrap()]);
    let name = format!("{}({what} of {}, {axes:?}, {keep})", kind.name(), h.tp());
    match (expected, got) {
        (Ok(e), Ok(g)) => {
            assert_eq!(g.device(), dev, "{name}");
            let g = g.to_host().unwrap();
            assert_eq!(e.tp(), g.tp(), "{name}");
            let t = e.tp().dtype().to_string();
            if t.contains("float") {
                let tol = if t.contains("float32") { 1e-5 } else { 1e-12 };
                let (x, y) = (floats(&e), floats(&g));
                assert_eq!(x.len(), y.len(), "{name}");
                for (x, y) in x.iter().zip(&y) {
                    assert!(close(*x, *y, tol), "{name}: {e} vs {g}");
                }
                // Missing stays missing.
                assert_eq!(
                    e.to_json().matches("null").count(),
                    g.to_json().matches("null").count(),
                    "{name}: {e} vs {g}"
                );
            } else {
                assert_eq!(e.to_json(), g.to_json(), "{name}");
            }
        }
        (Err(e), Err(g)) => {
            assert_eq!(e.kind(), g.kind(), "{name}: {e} / {g}");
            assert!(g.message().contains(e.message()), "{name}: {e} / {g}");
        }
        (e, g) => panic!("{name}: host {e:?}, device {g:?}"),
    }
}

/// Values that take every path of the numeric conversions: in and out of
/// each integer range, fractions, the edges of float32, NaN, infinities.
const CAST_VALUES: &str = "[0, 1, -1, 2.5, -2.5, 0.1, 127, 128, -128, -129, 255, 256, 65535, 65536, \
    2147483647, 2147483648, -2147483649, 4294967296, 16777217, 9007199254740993, 1e19, -1e19, \
    1e30, 1e39, NaN, Infinity, -Infinity, -0.5]";

/// Every cast between device types (both in `types`, or all), plain and
/// optional on each side, under every error mode: the values the host gives, or the host's error for
/// the same first failing element — and then, on what follows it, again,
/// until the rest converts, so every element's check is compared.
pub fn casts_equal_the_host(dev: DeviceId, types: Option<&[BuiltinType]>) {
    let types: Vec<BuiltinType> = match types {
        Some(t) => t.to_vec(),
        None => device_types().collect(),
    };
    casts_from_equal_the_host(dev, &types, &types);
}

/// [`casts_equal_the_host`] from the types `from` (each to every one of
/// `types`): the GPU run takes each source type on a thread of its own.
pub fn casts_from_equal_the_host(dev: DeviceId, from: &[BuiltinType], types: &[BuiltinType]) {
    use dynd::kernels::assign::ErrorMode;
    // With a subset of types, `default` (the same checks as `fractional`)
    // is left out too.
    let modes: Vec<ErrorMode> = ErrorMode::ALL
        .into_iter()
        .filter(|m| *m != ErrorMode::Default || types.len() == device_types().count())
        .collect();
    let values = Array::from_json("28 * float64", CAST_VALUES).unwrap();
    let mut compared = 0;
    for &from in from {
        for optional in [false, true] {
            let q = if optional { "?" } else { "" };
            // The values as `from` (saturated, as the host's nocheck does),
            // every fifth one missing when optional.
            let src = values
                .cast(format!("28 * {q}{from}").as_str(), ErrorMode::NoCheck)
                .unwrap();
            if optional {
                for i in (3..28).step_by(5) {
                    src.index(&[Index::At(i)])
                        .unwrap()
                        .assign_json("null")
                        .unwrap();
                }
            }
            let dsrc = src.to_device(dev).unwrap();
            for &to in types {
                for to_q in ["", "?"] {
                    for &mode in &modes {
                        let mut start = 0usize;
                        loop {
                            let rest = Index::slice(Some(start as isize), None, 1);
                            let (h, d) =
                                (src.index(&[rest]).unwrap(), dsrc.index(&[rest]).unwrap());
                            let tp = format!("{} * {to_q}{to}", 28 - start);
                            let name = format!("{} -> {tp} ({mode:?}) from {start}", h.tp());
                            let expected = h.cast(tp.as_str(), mode);
                            let got = d.cast(tp.as_str(), mode);
                            compared += 1;
                            match (expected, got) {
                                (Ok(e), Ok(g)) => {
                                    assert_eq!(g.device(), dev, "{name}");
                                    assert_eq!(
                                        e.to_json(),
                                        g.to_host().unwrap().to_json(),
                                        "{name}"
                                    );
                                    break;
                                }
                                (Err(e), Err(g)) => {
                                    assert_eq!(e.kind(), g.kind(), "{name}: {e} / {g}");
                                    assert!(g.message().contains(e.message()), "{name}: {e} / {g}");
                                    // The failing element's index, then on
                                    // from the one after it.
                                    let at = g
                                        .message()
                                        .split("at index [")
                                        .nth(1)
                                        .and_then(|t| t.split(']').next())
                                        .and_then(|t| t.parse::<usize>().ok());
                                    let Some(at) = at else {
                                        panic!("{name}: no index in {g}")
                                    };
                                    start += at + 1;
                                    if start >= 28 {
                                        break;
                                    }
                                }
                                (e, g) => panic!("{name}: host {e:?}, device {g:?}"),
                            }
                        }
                    }
                }
            }
        }
    }
    assert!(compared >= from.len() * 2 * types.len() * 2 * modes.len());
}

/// Assignments on the device: broadcasting a row, a 0-d host scalar, into
/// a strided view, and a failing one naming its index; host and device
/// arrays do not mix.
pub fn assignments_broadcast_and_fail_as_on_the_host(dev: DeviceId) {
    use dynd::kernels::assign::ErrorMode;
    let h = Array::from_json("2 * 3 * int16", "[[0,0,0],[0,0,0]]").unwrap();
    let d = h.to_device(dev).unwrap();
    let row = Array::from_json("3 * float64", "[1, 2, 3]").unwrap();
    d.assign(&row.to_device(dev).unwrap(), ErrorMode::Default)
        .unwrap();
    assert_eq!(d.to_json(), "[[1,2,3],[1,2,3]]");
    d.index(&[Index::slice(None, None, 1), Index::slice(None, None, -2)])
        .unwrap()
        .assign(&Array::from(7u8), ErrorMode::Default)
        .unwrap();
    assert_eq!(d.to_json(), "[[7,2,7],[7,2,7]]");
    let bad = Array::from_json("3 * float64", "[1, 2.5, 1e9]").unwrap();
    let e = d
        .assign(&bad.to_device(dev).unwrap(), ErrorMode::Default)
        .unwrap_err();
    let host = h.assign(&bad, ErrorMode::Default).unwrap_err();
    assert_eq!(e.kind(), host.kind(), "{e}");
    assert!(e.message().contains("at index [0, 1]"), "{e}");
    assert!(e.message().contains(host.message()), "{e} / {host}");
    // Missing values into a plain destination fail, naming the element.
    let m = Array::from_json("3 * ?int32", "[1, null, 3]").unwrap();
    let e = d
        .assign(&m.to_device(dev).unwrap(), ErrorMode::NoCheck)
        .unwrap_err();
    assert!(e.message().contains("missing value"), "{e}");
    let e = d.assign(&row, ErrorMode::Default).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    assert!(e.message().contains("nothing moves implicitly"), "{e}");
}

/// dynd-ops expressions on the device (`dynd_cuda::ops::Cuda`): one kernel
/// per assignment, the values `Serial` gives on the same data on the host
/// (and the same errors), broadcasting within and across ranks, scalars,
/// casts and comparisons; what has no device form, and device views on a
/// host executor, are refused by name.
pub fn ops_fuse_and_equal_the_host(dev: DeviceId) {
    use dynd_ops::{ArrayView, DeviceView, Serial, cast, gt, logical_and, lt, sqrt, to_array};
    let DeviceId::Cuda(ordinal) = dev else {
        panic!("{dev}")
    };
    let cuda = dynd_cuda::ops::Cuda::new(ordinal);
    let f = |seed: i64| host(BuiltinType::Float64, &[3, 700], false, seed);
    let (a, b, c) = (f(1), f(2), f(3));
    let row = host(BuiltinType::Float64, &[700], false, 4);
    let dv = |x: &Array| DeviceView::<f64, [usize; 2]>::new(&x.to_device(dev).unwrap()).unwrap();
    let hv = |x: &Array| ArrayView::<f64, [usize; 2]>::new(x).unwrap();
    let (da, db, dc) = (dv(&a), dv(&b), dv(&c));
    let (ha, hb, hc) = (hv(&a), hv(&b), hv(&c));
    // a * b + c: one launch, Serial's values bit for bit.
    let before = dynd_cuda::launch::launches();
    let got = cuda.eval(&(&da * &db + &dc)).unwrap();
    assert_eq!(
        dynd_cuda::launch::launches() - before,
        1,
        "a * b + c is one kernel"
    );
    let want = to_array(ha.clone() * hb.clone() + hc.clone(), &Serial).unwrap();
    assert_eq!(got.to_host().unwrap().to_json(), want.to_json());
    // Broadcasting a row across ranks, a scalar, a math function.
    let drow = DeviceView::<f64, [usize; 1]>::new(&row.to_device(dev).unwrap()).unwrap();
    let hrow = ArrayView::<f64, [usize; 1]>::new(&row).unwrap();
    let got = cuda.eval(&((&da + drow) * 0.5 - sqrt(&db * &db))).unwrap();
    let want = to_array(
        (ha.clone() + hrow) * 0.5 - sqrt(hb.clone() * hb.clone()),
        &Serial,
    )
    .unwrap();
    assert_eq!(floats(&got.to_host().unwrap()), floats(&want));
    // Comparisons and logic into bool; a saturating cast to int16.
    let got = cuda.eval(&logical_and(gt(&da, &db), lt(&da, &dc))).unwrap();
    let want = to_array(
        logical_and(gt(ha.clone(), hb.clone()), lt(ha.clone(), hc)),
        &Serial,
    )
    .unwrap();
    assert_eq!(got.to_host().unwrap().to_json(), want.to_json());
    let got = cuda.eval(&cast::<i16, _>(&da * 9000.5)).unwrap();
    let want = to_array(cast::<i16, _>(ha * 9000.5), &Serial).unwrap();
    assert_eq!(got.to_host().unwrap().to_json(), want.to_json());
    // Integer division by zero: the host's error, with the index.
    let i = Array::from_json("2 * 3 * int32", "[[7, 8, 9], [10, 11, 12]]").unwrap();
    let z = Array::from_json("2 * 3 * int32", "[[1, 2, 3], [4, 0, 6]]").unwrap();
    let di = DeviceView::<i32, [usize; 2]>::new(&i.to_device(dev).unwrap()).unwrap();
    let dz = DeviceView::<i32, [usize; 2]>::new(&z.to_device(dev).unwrap()).unwrap();
    let e = cuda.eval(&(&di / &dz + 1)).unwrap_err();
    let host_e = to_array(
        ArrayView::<i32, [usize; 2]>::new(&i).unwrap()
            / ArrayView::<i32, [usize; 2]>::new(&z).unwrap()
            + 1,
        &Serial,
    )
    .unwrap_err();
    assert_eq!(e.kind(), host_e.kind(), "{e}");
    assert!(e.message().contains(host_e.message()), "{e} / {host_e}");
    assert!(e.message().contains("[1, 1]"), "{e}");
    // Into an existing device array; a wrong output type is refused.
    let out = Array::empty_on(dev, "3 * 700 * float64").unwrap();
    cuda.assign(&out, &(&da * 0.0)).unwrap();
    assert!(floats(&out.to_host().unwrap()).iter().all(|x| *x == 0.0));
    let ints = Array::empty_on(dev, "3 * 700 * int64").unwrap();
    let e = cuda.assign(&ints, &(&da * 0.0)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Type, "{e}");
    // No device form: a reduction. Device views on a host executor.
    let e = cuda.eval(&dynd_ops::sum(&da)).unwrap_err();
    assert!(e.message().contains("has no device form"), "{e}");
    let e = to_array(&da + &db, &Serial).unwrap_err();
    assert!(e.message().contains("do not read device memory"), "{e}");
}

/// One reduction of each launch plan — a thread per output, a group per
/// output, a block per output, an extent split over blocks — for sum,
/// argmin and var, against the host: few launches, every path of the
/// reduction kernels (what the sanitizers run).
pub fn reductions_of_each_plan(dev: DeviceId) {
    use dynd::callable::reduce::BuiltinReduction as R;
    let n = 3_000_000;
    let big = Array::from(
        (0..n)
            .map(|i| ((i as u64 * 7919) % 10007) as f64 * 0.25 - 1000.0)
            .collect::<Vec<_>>(),
    );
    let cases: Vec<(Array, Option<Vec<isize>>)> = vec![
        (
            host(BuiltinType::Float64, &[1000, 10], true, 3),
            Some(vec![-1]),
        ),
        (
            host(BuiltinType::Float64, &[100, 1000], false, 4),
            Some(vec![-1]),
        ),
        (big.reshape(&[30, 100_000]).unwrap(), Some(vec![-1])),
        (big, None),
    ];
    for (h, axes) in cases {
        for kind in [R::Sum, R::ArgMin, R::Var] {
            reduction_equals_the_host(dev, &h, "a plan", kind, axes.as_deref(), false);
        }
    }
}

/// Outputs that overlap an argument in another layout read a copy, as on
/// the host: a shifted add, an assignment from the reverse of itself, the
/// dynd-ops executor writing over an operand's reverse.
pub fn overlapping_outputs_read_a_copy(dev: DeviceId) {
    use dynd::kernels::assign::ErrorMode;
    let h = Array::from_json("6 * int32", "[1, 2, 3, 4, 5, 6]").unwrap();
    let d = h.to_device(dev).unwrap();
    let (head, tail) = (
        Index::slice(None, Some(5), 1),
        Index::slice(Some(1), None, 1),
    );
    let add = callable::lookup("add").unwrap();
    for a in [&h, &d] {
        add.call_into(
            &a.index(&[tail]).unwrap(),
            &[&a.index(&[head]).unwrap(), &Array::from(10i32)],
        )
        .unwrap();
    }
    assert_eq!(d.to_json(), h.to_json());
    assert_eq!(h.to_json(), "[1,11,12,13,14,15]");
    let rev = Index::slice(None, None, -1);
    for a in [&h, &d] {
        a.assign(&a.index(&[rev]).unwrap(), ErrorMode::Default)
            .unwrap();
    }
    assert_eq!(d.to_json(), h.to_json());
    assert_eq!(h.to_json(), "[15,14,13,12,11,1]");
    // dynd-ops on the device: out = reverse(out) + 1 through a view.
    let DeviceId::Cuda(ordinal) = dev else {
        panic!("{dev}")
    };
    let cuda = dynd_cuda::ops::Cuda::new(ordinal);
    let view = dynd_ops::DeviceView::<i32, [usize; 1]>::new(&d.index(&[rev]).unwrap()).unwrap();
    cuda.assign(&d, &(view + 1)).unwrap();
    assert_eq!(d.to_json(), "[2,12,13,14,15,16]");
}

/// A host ragged array `N * var * b` (`?b` when optional) with rows of
/// the given lengths, values from `seed`; when optional, every third value
/// and the whole of row 1 are missing.
pub fn ragged(b: BuiltinType, optional: bool, lens: &[usize], seed: i64) -> Array {
    let mut k = 0i64;
    let rows: Vec<String> = lens
        .iter()
        .enumerate()
        .map(|(r, &n)| {
            let vals: Vec<String> = (0..n)
                .map(|_| {
                    k += 1;
                    if optional && (k % 3 == 0 || r == 1) {
                        "null".into()
                    } else {
                        crate::common::value(b, (k * 7 + seed) % 11 - 5)
                    }
                })
                .collect();
            format!("[{}]", vals.join(","))
        })
        .collect();
    let tp = format!(
        "{} * var * {}{b}",
        lens.len(),
        if optional { "?" } else { "" }
    );
    Array::from_json(tp.as_str(), &format!("[{}]", rows.join(","))).unwrap()
}

/// Every built-in reduction over the var dim of ragged arrays (empty rows,
/// all-missing rows, rows longer than a block, a reversed view, fixed dims
/// around, long rows among short ones: a block each) equals the host's;
/// other axes are refused by name.
pub fn ragged_reductions_equal_the_host(dev: DeviceId, types: Option<&[BuiltinType]>) {
    use dynd::callable::reduce::BuiltinReduction;
    let types: Vec<BuiltinType> = match types {
        Some(t) => t.to_vec(),
        None => device_types().collect(),
    };
    let lens = [0usize, 3, 1, 40, 0, 7, 300, 2];
    for kind in BuiltinReduction::ALL {
        for &b in &types {
            for optional in [false, true] {
                let h = ragged(b, optional, &lens, 3);
                let rev = h.index(&[Index::slice(None, None, -1)]).unwrap();
                for (x, what) in [(&h, "rows"), (&rev, "reversed rows")] {
                    for keep in [false, true] {
                        reduction_equals_the_host(dev, x, what, kind, Some(&[-1]), keep);
                    }
                }
            }
        }
    }
    // Skewed rows: 1500 short rows (mean length 4, so a few lanes a row)
    // and long ones of 1100 (all missing when optional: row 1) and 3000,
    // which take a block each in a second launch.
    let skewed: Vec<usize> = (0..1500)
        .map(|r| match r {
            1 => 1100,
            700 => 3000,
            _ => [0, 3, 1, 5][r % 4],
        })
        .collect();
    for kind in BuiltinReduction::ALL {
        for &b in &types {
            for optional in [false, true] {
                let h = ragged(b, optional, &skewed, 5);
                reduction_equals_the_host(dev, &h, "skewed rows", kind, Some(&[-1]), false);
            }
        }
    }
    let launches = |lens: &[usize]| {
        let d = ragged(BuiltinType::Float64, false, lens, 5)
            .to_device(dev)
            .unwrap();
        let before = dynd_cuda::launch::launches();
        compute::sum(&d, Some(&[-1]), false).unwrap();
        dynd_cuda::launch::launches() - before
    };
    // The second launch comes whenever the values could hold a long row
    // (it reads the count the first left on the device).
    assert_eq!(
        launches(&skewed),
        launches(&[0, 3, 1, 5]) + 1,
        "long rows: a second launch"
    );
    // Fixed dims around the rows.
    let h = Array::from_json(
        "2 * 2 * var * float64",
        "[[[1.5, 2], []], [[3], [4, 5, 6]]]",
    )
    .unwrap();
    reduction_equals_the_host(
        dev,
        &h,
        "2 * 2 rows",
        BuiltinReduction::Mean,
        Some(&[-1]),
        false,
    );
    // Axis 0 (position by position) and every axis.
    for kind in BuiltinReduction::ALL {
        for &b in &types {
            for optional in [false, true] {
                let h = ragged(b, optional, &lens, 3);
                let rev = h.index(&[Index::slice(None, None, -1)]).unwrap();
                let empty = ragged(b, optional, &[], 3);
                for (x, what) in [(&h, "rows"), (&rev, "reversed rows"), (&empty, "no rows")] {
                    for keep in [false, true] {
                        reduction_equals_the_host(dev, x, what, kind, Some(&[0]), keep);
                        reduction_equals_the_host(dev, x, what, kind, None, keep);
                    }
                }
            }
        }
    }
    let g = Array::from_json("2 * 2 * var * int32", "[[[1], [2, 3]], [[], [4]]]").unwrap();
    for kind in [BuiltinReduction::Sum, BuiltinReduction::ArgMax] {
        reduction_equals_the_host(dev, &g, "2 * 2 rows", kind, None, false);
    }
    // No axis at all is refused by name.
    let d = g.to_device(dev).unwrap();
    let e = compute::sum(&d, Some(&[]), false).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Type, "{e}");
    assert!(
        e.message().contains("does not run on the device yet"),
        "{e}"
    );
    // The device array prints through the host.
    let small = ragged(BuiltinType::Int16, true, &[2, 0, 3], 1);
    assert_eq!(small.to_device(dev).unwrap().to_json(), small.to_json());
}

/// `[fixed dims] * var * T` of `b` (optional when asked), row `i` (C order
/// over `shape`) of length `lens[i % lens.len()]`, values from `seed`.
pub fn ragged_nd(
    b: BuiltinType,
    optional: bool,
    shape: &[usize],
    lens: &[usize],
    seed: i64,
) -> Array {
    fn nest(shape: &[usize], rows: &mut dyn Iterator<Item = String>) -> String {
        match shape.split_first() {
            None => rows.next().unwrap_or_else(|| "[]".into()),
            Some((&n, rest)) => {
                let items: Vec<String> = (0..n).map(|_| nest(rest, rows)).collect();
                format!("[{}]", items.join(","))
            }
        }
    }
    let n: usize = shape.iter().product();
    let flat = ragged(
        b,
        optional,
        &(0..n).map(|i| lens[i % lens.len()]).collect::<Vec<_>>(),
        seed,
    );
    let mut rows = (0..n).map(|i| flat.index(&[Index::from(i)]).unwrap().to_json());
    let dims: String = shape.iter().map(|n| format!("{n} * ")).collect();
    let tp = format!("{dims}var * {}{b}", if optional { "?" } else { "" });
    Array::from_json(tp.as_str(), &nest(shape, &mut rows)).unwrap()
}

/// Every built-in reduction over every set of axes of `N * M * var * T`
/// and `N * M * K * var * T` that is not the var dim alone — fixed axes
/// (position by position when the var dim stays), fixed axes and the var
/// dim, every axis — with keepdims, on empty rows, rows longer than a
/// block, all-missing rows, a dim of 0 and views (reversed, stepped),
/// equals the host's.
pub fn ragged_reductions_over_fixed_axes_equal_the_host(
    dev: DeviceId,
    types: Option<&[BuiltinType]>,
) {
    use dynd::callable::reduce::BuiltinReduction;
    let types: Vec<BuiltinType> = match types {
        Some(t) => t.to_vec(),
        None => vec![BuiltinType::Int32, BuiltinType::Float64],
    };
    let lens = [2usize, 0, 5, 1, 300, 3, 0];
    let mut compared = 0;
    for &b in &types {
        for optional in [false, true] {
            let two = ragged_nd(b, optional, &[3, 4], &lens, 5);
            let three = ragged_nd(b, optional, &[2, 3, 2], &lens, 9);
            let empty_inner = ragged_nd(b, optional, &[3, 0], &lens, 1);
            let view = two
                .index(&[Index::slice(None, None, -1), Index::slice(Some(1), None, 2)])
                .unwrap();
            for (x, what) in [
                (&two, "3 * 4 rows"),
                (&three, "2 * 3 * 2 rows"),
                (&empty_inner, "3 * 0 rows"),
                (&view, "a reversed, stepped view"),
            ] {
                let nk = x.tp().ndim() - 1;
                for mask in 1..(1u32 << (nk + 1)) {
                    let axes: Vec<isize> = (0..=nk)
                        .filter(|d| mask & (1 << d) != 0)
                        .map(|d| d as isize)
                        .collect();
                    if axes == [nk as isize] {
                        continue; // the var dim alone: ragged_reductions_equal_the_host
                    }
                    for kind in BuiltinReduction::ALL {
                        // keepdims changes only the result's type: one array checks it.
                        let keeps: &[bool] = if what.starts_with("3 * 4") {
                            &[false, true]
                        } else {
                            &[false]
                        };
                        for &keep in keeps {
                            reduction_equals_the_host(dev, x, what, kind, Some(&axes), keep);
                            compared += 1;
                        }
                    }
                }
            }
        }
    }
    assert!(compared > 1000, "{compared} comparisons");
    // An output given: a fixed result is written into it (any layout); a
    // ragged result refuses it by name.
    let h = ragged_nd(BuiltinType::Float64, true, &[3, 4], &lens, 2);
    let d = h.to_device(dev).unwrap();
    let over = |axes: &[isize]| {
        dynd::callable::reduce::Reduction::builtin(BuiltinReduction::Sum).with(Some(axes), false)
    };
    let want = over(&[1, 2]).call(&[&h]).unwrap();
    let o = Array::empty_on(dev, "3 * float64").unwrap();
    over(&[1, 2]).call_into(&o, &[&d]).unwrap();
    assert_eq!(o.to_host().unwrap().to_json(), want.to_json());
    let wide = Array::from_json("6 * float64", "[9, 9, 9, 9, 9, 9]")
        .unwrap()
        .to_device(dev)
        .unwrap();
    let every_other = wide.index(&[Index::slice(None, None, 2)]).unwrap();
    over(&[1, 2]).call_into(&every_other, &[&d]).unwrap();
    let w: Vec<f64> = floats(&wide.to_host().unwrap());
    let e = floats(&want);
    assert_eq!((w[0], w[2], w[4]), (e[0], e[1], e[2]));
    assert_eq!(
        (w[1], w[3], w[5]),
        (9.0, 9.0, 9.0),
        "only the view's elements are written"
    );
    let total = Array::empty_on(dev, "float64").unwrap();
    over(&[0, 1, 2]).call_into(&total, &[&d]).unwrap();
    assert!(close(
        floats(&total.to_host().unwrap())[0],
        floats(&over(&[0, 1, 2]).call(&[&h]).unwrap())[0],
        1e-12
    ));
    let bad = Array::empty_on(dev, "4 * float64").unwrap();
    let e = over(&[1, 2]).call_into(&bad, &[&d]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Type, "{e}");
    assert!(
        e.message()
            .contains("the output's type must be the result's"),
        "{e}"
    );
    // Ragged rows (the var dim kept) into an output's rows: of another
    // type, refused by name; of the result's, written.
    let rows = Array::empty_on(dev, "4 * float64").unwrap();
    let e = over(&[0]).call_into(&rows, &[&d]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Type, "{e}");
    assert!(
        e.message()
            .contains("the output's type must be the result's"),
        "{e}"
    );
    let expected = over(&[0]).call(&[&h]).unwrap();
    let rows = expected.to_device(dev).unwrap();
    rows.assign(
        &Array::from(0.0f64),
        dynd::kernels::assign::ErrorMode::NoCheck,
    )
    .unwrap();
    over(&[0]).call_into(&rows, &[&d]).unwrap();
    assert_eq!(
        floats(&rows.to_host().unwrap()).len(),
        floats(&expected).len()
    );
    for (x, y) in floats(&rows.to_host().unwrap())
        .iter()
        .zip(floats(&expected))
    {
        assert!(close(*x, y, 1e-12), "{rows} / {expected}");
    }
}

/// Elementwise functions over ragged device arrays with host scalars
/// (`x + 1.0`, `x > 2`, …) equal the host's, on rows with empty and
/// missing values and on a reversed view; a failing element is the host's
/// error with its `[row, position]`; what is not on the device yet says so.
pub fn ragged_elementwise_equals_the_host(dev: DeviceId, types: Option<&[BuiltinType]>) {
    let types: Vec<BuiltinType> = match types {
        Some(t) => t.to_vec(),
        None => device_types().collect(),
    };
    let lens = [2usize, 0, 5, 1, 40];
    let (mut compared, mut refused) = (0, 0);
    for &b in &types {
        for optional in [false, true] {
            let h = ragged(b, optional, &lens, 2);
            let rev = h.index(&[Index::slice(None, None, -1)]).unwrap();
            for x in [&h, &rev] {
                let d = x.to_device(dev).unwrap();
                for (name, scalar) in [
                    ("add", Some(Array::from(1.5f64))),
                    ("multiply", Some(Array::from(3i32))),
                    ("greater", Some(Array::from(2i8))),
                    ("negative", None),
                    ("sqrt", None),
                    ("logical_not", None),
                ] {
                    let f = callable::lookup(name).unwrap();
                    let (hargs, dargs): (Vec<&Array>, Vec<&Array>) = match &scalar {
                        Some(s) => (vec![x, s], vec![&d, s]),
                        None => (vec![x], vec![&d]),
                    };
                    let expected = f.call(&hargs);
                    let got = f.call(&dargs);
                    let what = format!("{name}({})", x.tp());
                    match (expected, got) {
                        (Ok(e), Ok(g)) => {
                            assert_eq!(g.device(), dev, "{what}");
                            assert_eq!(e.tp(), g.tp(), "{what}");
                            let g = g.to_host().unwrap();
                            if name == "sqrt" {
                                let (a, c) = (floats(&e), floats(&g));
                                assert!(
                                    a.iter().zip(&c).all(|(p, q)| close(*p, *q, 1e-6)),
                                    "{what}: {e} vs {g}"
                                );
                            } else {
                                assert_eq!(e.to_json(), g.to_json(), "{what}");
                            }
                            compared += 1;
                        }
                        (Err(e), Err(g)) => {
                            assert_eq!(e.kind(), g.kind(), "{what}: {e} / {g}");
                            compared += 1;
                        }
                        (Ok(_), Err(g)) if refused_for_int128(&g) => refused += 1,
                        (e, g) => panic!("{what}: host {e:?}, device {g:?}"),
                    }
                }
            }
        }
    }
    // Only uint64's multiply by an int32 and comparison with an int8
    // (int128 on the host) are refused.
    let uint64 = types.contains(&BuiltinType::UInt64);
    assert_eq!(refused, if uint64 { 2 * 2 * 2 } else { 0 });
    assert!(compared + refused >= types.len() * 2 * 2 * 6);
    // A failing element: the host's error, with its row and position.
    let x = Array::from_json("3 * var * int32", "[[4], [6, 8], [1]]").unwrap();
    let z = Array::from(0i32);
    let e = compute::divide(&x.to_device(dev).unwrap(), &z).unwrap_err();
    let host = compute::divide(&x.index(&[Index::At(0), Index::At(0)]).unwrap(), &z).unwrap_err();
    assert_eq!(e.kind(), host.kind(), "{e}");
    assert!(e.message().contains(host.message()), "{e} / {host}");
    assert!(e.message().contains("[0, 0]"), "{e}");
    // Rows in order take the flat path (a kernel over the values, one
    // moving the descriptors); reversed rows the row-aware kernel.
    let d = x.to_device(dev).unwrap();
    let one = Array::from(1i32);
    let before = dynd_cuda::launch::launches();
    let r = compute::add(&d, &one).unwrap();
    assert_eq!(dynd_cuda::launch::launches() - before, 2);
    assert_eq!(r.to_json(), "[[5],[7,9],[2]]");
    let rev = d.index(&[Index::slice(None, None, -1)]).unwrap();
    let before = dynd_cuda::launch::launches();
    let r = compute::add(&rev, &one).unwrap();
    assert_eq!(dynd_cuda::launch::launches() - before, 1);
    assert_eq!(r.to_json(), "[[2],[7,9],[5]]");
    // Long rows out of order take a group of lanes each: every value is
    // computed, and the first failing element (here at position 37 of the
    // long row, not lane 0's) is the host's error with its index.
    let vals: Vec<String> = (0..100)
        .map(|j| {
            if j == 37 || j == 90 {
                "0".into()
            } else {
                (j + 1).to_string()
            }
        })
        .collect();
    let x = Array::from_json(
        "2 * var * int32",
        &format!("[[{}], [5, 6, 7]]", vals.join(",")),
    )
    .unwrap();
    let hrev = x.index(&[Index::slice(None, None, -1)]).unwrap();
    let drev = x
        .to_device(dev)
        .unwrap()
        .index(&[Index::slice(None, None, -1)])
        .unwrap();
    let (h, g) = (
        compute::add(&hrev, &one).unwrap(),
        compute::add(&drev, &one).unwrap(),
    );
    assert_eq!(h.to_json(), g.to_json());
    let e = compute::divide(&one, &drev).unwrap_err();
    let host = compute::divide(&one, &hrev).unwrap_err();
    assert_eq!(e.kind(), host.kind(), "{e}");
    assert!(e.message().contains("[1, 37]"), "{e}");
    // A value no row reaches fails in the flat kernel: the row-aware
    // kernel decides, and computes the rows.
    let x = Array::from_json("2 * var * int32", "[[0, 0], [2, 4]]").unwrap();
    let tail = x
        .to_device(dev)
        .unwrap()
        .index(&[Index::slice(Some(1), None, 1)])
        .unwrap();
    let ten = Array::from(10i32);
    let got = compute::floor_divide(&ten, &tail).unwrap();
    assert_eq!(got.to_json(), "[[5,2]]");
}

/// The row operations of each ragged row — `cumsum`, `cumprod`, `sort`,
/// `argsort`, ascending and descending — equal the host's on rows that are
/// empty, all missing, shorter and longer than a sorting run, reversed,
/// and on floats with NaN, `-0.0` and missing values; a given output is
/// refused by name.
pub fn ragged_rows_equal_the_host(dev: DeviceId, types: Option<&[BuiltinType]>) {
    use dynd::callable::sort::{self, SortOptions};
    let types: Vec<BuiltinType> = match types {
        Some(t) => t.to_vec(),
        None => device_types().collect(),
    };
    let down = SortOptions { descending: true };
    let ops: Vec<(&str, callable::Callable)> = vec![
        ("cumsum", callable::lookup("cumsum").unwrap()),
        ("cumprod", callable::lookup("cumprod").unwrap()),
        ("sort", callable::lookup("sort").unwrap()),
        ("argsort", callable::lookup("argsort").unwrap()),
        ("sort descending", sort::sort(down)),
        ("argsort descending", sort::argsort(down)),
    ];
    let lens = [3usize, 4, 0, 17, 1, 40, 300, 2];
    let mut inputs: Vec<Array> = Vec::new();
    for &b in &types {
        for optional in [false, true] {
            let h = ragged(b, optional, &lens, 5);
            let rev = h.index(&[Index::slice(None, None, -1)]).unwrap();
            inputs.push(h);
            inputs.push(rev);
        }
    }
    inputs.push(
        Array::from_json(
            "3 * var * ?float64",
            "[[NaN, -0.0, null, 0.0, -Infinity, 2.5, NaN, -0.0, 1e300], [], [null, NaN, 0.0]]",
        )
        .unwrap(),
    );
    inputs.push(
        Array::from_json(
            "2 * 2 * var * float32",
            "[[[3, NaN, -0.0, 0.0, 1], []], [[2, 2, -1], [Infinity, -Infinity, NaN]]]",
        )
        .unwrap(),
    );
    // Fixed arrays: rows along the innermost dim, views among them.
    let m = Array::from_json(
        "3 * 4 * ?int16",
        "[[3, null, -1, 3], [0, 0, 0, 0], [null, 7, -7, 2]]",
    )
    .unwrap();
    inputs.push(m.permute(&[1, 0]).unwrap());
    inputs.push(
        m.index(&[Index::slice(None, None, -1), Index::slice(None, None, 2)])
            .unwrap(),
    );
    inputs.push(m);
    inputs.push(Array::from_json("5 * float64", "[2, NaN, -0.0, 0.0, -1]").unwrap());
    inputs.push(Array::from_json("0 * int32", "[]").unwrap());
    inputs.push(
        Array::from_json("2 * 2 * 40 * uint8", &{
            let row: Vec<String> = (0..40).map(|k| ((k * 37) % 11).to_string()).collect();
            let row = format!("[{}]", row.join(","));
            format!("[[{row}, {row}], [{row}, {row}]]")
        })
        .unwrap(),
    );
    let mut compared = 0;
    for x in &inputs {
        let d = x.to_device(dev).unwrap();
        for (name, f) in &ops {
            let what = format!("{name}({})", x.tp());
            match (f.call(&[x]), f.call(&[&d])) {
                (Ok(e), Ok(g)) => {
                    assert_eq!(g.device(), dev, "{what}");
                    assert_eq!(e.tp(), g.tp(), "{what}");
                    assert_eq!(e.to_json(), g.to_host().unwrap().to_json(), "{what}");
                    compared += 1;
                }
                (Err(e), Err(g)) => {
                    assert_eq!(e.kind(), g.kind(), "{what}: {e} / {g}");
                    compared += 1;
                }
                (e, g) => panic!("{what}: host {e:?}, device {g:?}"),
            }
        }
    }
    assert_eq!(compared, inputs.len() * ops.len());
    // The signs of zeros: -0.0 sorts first (to_json prints both alike).
    let x = Array::from_json("1 * var * float64", "[[0.0, -0.0, NaN, 1]]").unwrap();
    let host = compute::sort(&x).unwrap();
    let got = compute::sort(&x.to_device(dev).unwrap())
        .unwrap()
        .to_host()
        .unwrap();
    let bits = |a: &Array| -> Vec<u64> { floats(a).iter().map(|v| v.to_bits()).collect() };
    assert_eq!(bits(&host), bits(&got));
    // A given output takes the result's rows (the outputs check covers
    // the rest).
    let d = x.to_device(dev).unwrap();
    let out = compute::cumsum(&d.index(&[Index::slice(None, None, -1)]).unwrap()).unwrap();
    callable::lookup("cumsum")
        .unwrap()
        .call_into(&out, &[&d])
        .unwrap();
    assert_eq!(
        bits(&out.to_host().unwrap()),
        bits(&compute::cumsum(&x).unwrap())
    );
}

/// Equal results, or errors of the same kind and message; or the device's
/// refusal to compute in 128-bit integers (uint64 beside a signed integer
/// computes in int128 on the host; the device computes in at most 64 bits,
/// docs/cuda.md).
fn same_outcome(what: &str, host: dynd::Result<Array>, dev: dynd::Result<Array>, on: DeviceId) {
    match (host, dev) {
        (Ok(e), Ok(g)) => {
            assert_eq!(g.device(), on, "{what}");
            assert_eq!(e.tp(), g.tp(), "{what}");
            assert_eq!(e.to_json(), g.to_host().unwrap().to_json(), "{what}");
        }
        (Err(e), Err(g)) => {
            assert_eq!(e.kind(), g.kind(), "{what}: {e} / {g}");
            assert_eq!(e.message(), g.message(), "{what}");
        }
        (Ok(_), Err(g)) if refused_for_int128(&g) => {}
        (e, g) => panic!("{what}: host {e:?}, device {g:?}"),
    }
}

/// The device's error for a call the host computes in int128 or uint128:
/// a `Type` error that names the type and the device.
pub fn refused_for_int128(g: &dynd::Error) -> bool {
    g.kind() == ErrorKind::Type && g.message().contains("int128") && g.message().contains("device")
}

/// Integers and slices within each row (`x[:, 0]`, `x[:, -1]`,
/// `x[:, 1:3]`, reversed rows, rows picked after), `filter` by a ragged
/// mask and `take` by ragged indices equal the host's, errors included
/// (an integer or index out of range of a row, a mask row of another
/// length); what the device computes next on a sliced view too.
pub fn ragged_selection_equals_the_host(dev: DeviceId, types: Option<&[BuiltinType]>) {
    let types: Vec<BuiltinType> = match types {
        Some(t) => t.to_vec(),
        None => device_types().collect(),
    };
    let full = [3usize, 4, 1, 17, 2, 40, 5];
    let gaps = [3usize, 0, 1, 17, 0, 40, 2];
    let all = Index::ALL;
    let ixs = [
        vec![all, Index::At(0)],
        vec![all, Index::At(-1)],
        vec![all, Index::At(2)],
        vec![all, Index::slice(Some(1), Some(3), 1)],
        vec![all, Index::slice(None, None, -1)],
        vec![all, Index::slice(Some(-2), None, 1)],
        vec![all, Index::slice(Some(5), Some(1), -2)],
        vec![all, Index::slice(None, Some(0), 1)],
        vec![Index::At(3), Index::At(-2)],
        vec![
            Index::slice(Some(1), None, 2),
            Index::slice(Some(1), None, 3),
        ],
        vec![Index::At(5), Index::slice(Some(2), Some(30), 4)],
    ];
    let mut n = 0;
    for &b in &types {
        for optional in [false, true] {
            for lens in [&full[..], &gaps[..]] {
                let h = ragged(b, optional, lens, 7);
                let rev = h.index(&[Index::slice(None, None, -1)]).unwrap();
                for x in [&h, &rev] {
                    let d = x.to_device(dev).unwrap();
                    for ix in &ixs {
                        let what = format!("{}[{ix:?}]", x.tp());
                        same_outcome(&what, x.index(ix), d.index(ix), dev);
                        n += 1;
                    }
                    // The device computes on what it sliced: a reversed
                    // and a strided view of each row.
                    for ix in [&ixs[4], &ixs[9]] {
                        let (hv, dv) = (x.index(ix).unwrap(), d.index(ix).unwrap());
                        for name in ["cumsum", "sort"] {
                            let f = callable::lookup(name).unwrap();
                            same_outcome(name, f.call(&[&hv]), f.call(&[&dv]), dev);
                        }
                        let s = Array::from(1i8);
                        same_outcome("add", compute::add(&hv, &s), compute::add(&dv, &s), dev);
                        same_outcome(
                            "max",
                            compute::max(&hv, Some(&[-1]), false),
                            compute::max(&dv, Some(&[-1]), false),
                            dev,
                        );
                    }
                    // filter by a mask computed on the device (against an
                    // unsigned zero: uint64 beside a signed integer
                    // computes in int128, which the device refuses).
                    let (hm, dm) = (
                        compute::greater(x, &Array::from(0u8)).unwrap(),
                        compute::greater(&d, &Array::from(0u8)).unwrap(),
                    );
                    same_outcome(
                        "filter",
                        compute::filter(x, &hm),
                        compute::filter(&d, &dm),
                        dev,
                    );
                    n += 1;
                }
            }
        }
    }
    assert!(n >= types.len() * 2 * 2 * 2 * (ixs.len() + 1));
    // A mask row of another length: the host's error.
    let x = Array::from_json("3 * var * int32", "[[1, 2], [3], [4, 5, 6]]").unwrap();
    let m = Array::from_json(
        "3 * var * ?bool",
        "[[true, null], [true, false], [false, true, true]]",
    )
    .unwrap();
    let (dx, dm) = (x.to_device(dev).unwrap(), m.to_device(dev).unwrap());
    same_outcome(
        "filter",
        compute::filter(&x, &m),
        compute::filter(&dx, &dm),
        dev,
    );
    let m = Array::from_json(
        "3 * var * ?bool",
        "[[true, null], [null], [false, true, true]]",
    )
    .unwrap();
    let dm = m.to_device(dev).unwrap();
    same_outcome(
        "filter",
        compute::filter(&x, &m),
        compute::filter(&dx, &dm),
        dev,
    );
    // take by ragged indices: negative, missing, of each integer type, and
    // out of range.
    for (tp, json) in [
        ("3 * var * int64", "[[1, -2, 0], [], [2, 2, -3, 0]]"),
        ("3 * var * ?int8", "[[null, 1], [0, null, -1], [2]]"),
        ("3 * var * uint16", "[[1, 0], [0], [2, 1, 0]]"),
        ("3 * var * int32", "[[0], [1], [0]]"),
        ("3 * var * uint64", "[[0], [18446744073709551615], [0]]"),
        ("3 * var * int16", "[[0], [0], [-4]]"),
    ] {
        let i = Array::from_json(tp, json).unwrap();
        let di = i.to_device(dev).unwrap();
        for x in [&x, &m] {
            let dx = x.to_device(dev).unwrap();
            let what = format!("take({}, {tp})", x.tp());
            same_outcome(&what, compute::take(x, &i), compute::take(&dx, &di), dev);
        }
    }
    // Long index rows (a group of lanes each), and one out of range at
    // position 33 of a long row (not lane 0's).
    let xl = ragged(BuiltinType::Float64, true, &[50, 7, 50], 3);
    let row = |n: usize, f: &dyn Fn(i64) -> i64| {
        let v: Vec<String> = (0..n as i64).map(|j| f(j).to_string()).collect();
        format!("[{}]", v.join(","))
    };
    let good = format!(
        "[{}, {}, {}]",
        row(40, &|j| (j * 7) % 50 - 25),
        row(6, &|j| j),
        row(45, &|j| (j * 3) % 50)
    );
    let bad = format!(
        "[{}, {}, {}]",
        row(40, &|j| j),
        row(6, &|j| j),
        row(45, &|j| if j == 33 { 50 } else { j })
    );
    for json in [good, bad] {
        let i = Array::from_json("3 * var * int64", &json).unwrap();
        let (dx, di) = (xl.to_device(dev).unwrap(), i.to_device(dev).unwrap());
        let what = format!("take({}, long index rows)", xl.tp());
        same_outcome(&what, compute::take(&xl, &i), compute::take(&dx, &di), dev);
    }
    // Fixed dims around the rows; arguments that do not match are refused.
    let x = Array::from_json(
        "2 * 2 * var * float64",
        "[[[1.5, 2], []], [[3], [4, 5, 6]]]",
    )
    .unwrap();
    let d = x.to_device(dev).unwrap();
    for ix in [&ixs[1], &ixs[3]] {
        same_outcome("2 * 2 rows", x.index(ix), d.index(ix), dev);
    }
    let e = compute::filter(&d, &dm).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Type, "{e}");
    assert!(e.message().contains("the same fixed dims"), "{e}");
    let e = compute::filter(&dx, &m).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
}

/// The ragged kernels at the sizes where plans change: one row of 10⁶
/// values (longer than any block, sorted by one thread) and 10⁶ rows of
/// length 0 or 1 (many more rows than threads: grid-stride loops), each
/// operation equal to the host's.
pub fn ragged_extremes_equal_the_host(dev: DeviceId) {
    let n = 1_000_000usize;
    let long: Vec<String> = (0..n).map(|k| ((k * 7919) % 1000).to_string()).collect();
    let long = Array::from_json("1 * var * int64", &format!("[[{}]]", long.join(","))).unwrap();
    let short: Vec<&str> = (0..n)
        .map(|k| if k % 3 == 0 { "[]" } else { "[5]" })
        .collect();
    let short = Array::from_json(
        format!("{n} * var * int32").as_str(),
        &format!("[{}]", short.join(",")),
    )
    .unwrap();
    for x in [&long, &short] {
        let d = x.to_device(dev).unwrap();
        let what = x.tp().to_string();
        for name in ["sum", "max", "argmin", "mean", "count"] {
            let f = callable::lookup(name).unwrap();
            let f = dynd::callable::reduce::Reduction::of(&f)
                .unwrap()
                .with(Some(&[-1]), false);
            let (h, g) = (f.call(&[x]), f.call(&[&d]));
            same_outcome(&format!("{name}({what})"), h, g, dev);
        }
        for name in ["cumsum", "sort", "argsort"] {
            let f = callable::lookup(name).unwrap();
            same_outcome(&format!("{name}({what})"), f.call(&[x]), f.call(&[&d]), dev);
        }
        let s = Array::from(500i32);
        same_outcome("add", compute::add(x, &s), compute::add(&d, &s), dev);
        let (hm, dm) = (
            compute::greater(x, &s).unwrap(),
            compute::greater(&d, &s).unwrap(),
        );
        same_outcome(
            "filter",
            compute::filter(x, &hm),
            compute::filter(&d, &dm),
            dev,
        );
        let ix = [Index::ALL, Index::slice(Some(-1), None, 1)];
        same_outcome("x[:, -1:]", x.index(&ix), d.index(&ix), dev);
    }
}

/// Each ragged row and selection kernel once, on small arrays (what the
/// memory checkers run: valgrind over the emulator, compute-sanitizer on a
/// GPU): an integer and a slice of each row, filter (count, scan, fill),
/// take, a scan and a sort of each row, two ragged arrays broadcast and
/// `where`, each equal to the host's.
pub fn ragged_kernels_once(dev: DeviceId) {
    let x = Array::from_json(
        "4 * var * ?float64",
        "[[1, null, 3], [], [NaN, -2], [4, 0, 4, 9]]",
    )
    .unwrap();
    let d = x.to_device(dev).unwrap();
    let i = Array::from_json("4 * var * int8", "[[2, -1], [], [0], [3, 3, 0]]").unwrap();
    let di = i.to_device(dev).unwrap();
    let (hm, dm) = (
        compute::greater(&x, &Array::from(0.5f64)).unwrap(),
        compute::greater(&d, &Array::from(0.5f64)).unwrap(),
    );
    let cases: Vec<(&str, dynd::Result<Array>, dynd::Result<Array>)> = vec![
        (
            "x[:, -1]",
            x.index(&[Index::ALL, Index::At(-1)]),
            d.index(&[Index::ALL, Index::At(-1)]),
        ),
        (
            "x[:, 1:]",
            x.index(&[Index::ALL, Index::slice(Some(1), None, 1)]),
            d.index(&[Index::ALL, Index::slice(Some(1), None, 1)]),
        ),
        ("filter", compute::filter(&x, &hm), compute::filter(&d, &dm)),
        ("take", compute::take(&x, &i), compute::take(&d, &di)),
        ("cumsum", compute::cumsum(&x), compute::cumsum(&d)),
        ("argsort", compute::argsort(&x), compute::argsort(&d)),
        (
            "x * x",
            compute::multiply(&x, &x),
            compute::multiply(&d, &d),
        ),
        (
            "where(x > 0.5, x, 0)",
            compute::where_(&hm, &x, &Array::from(0.0f64)),
            compute::where_(&dm, &d, &Array::from(0.0f64)),
        ),
    ];
    for (what, h, g) in cases {
        same_outcome(what, h, g, dev);
    }
    // The reductions over other axes: the var dim kept (longest rows, a
    // fold per position) and reduced (a fold per group), with and without
    // chunks, argmax's row offsets.
    {
        use dynd::callable::reduce::BuiltinReduction as R;
        let g = ragged_nd(BuiltinType::Float64, true, &[3, 4], &[2, 0, 5, 1, 300], 3);
        for (kind, axes) in [
            (R::Sum, vec![0isize]),
            (R::ArgMax, vec![1]),
            (R::Mean, vec![1, 2]),
            (R::ArgMin, vec![0, 2]),
            (R::Max, vec![0, 1, 2]),
        ] {
            reduction_equals_the_host(dev, &g, "3 * 4 rows", kind, Some(&axes), false);
        }
    }
    // Rows in order go to the device as offsets, and a kernel builds the
    // descriptors; rows out of order go as descriptors built on the host.
    let before = dynd_cuda::launch::launches();
    let d = x.to_device(dev).unwrap();
    assert_eq!(dynd_cuda::launch::launches() - before, 1);
    assert_eq!(d.to_json(), x.to_json());
    let rev = x.index(&[Index::slice(None, None, -1)]).unwrap();
    let before = dynd_cuda::launch::launches();
    let d = rev.to_device(dev).unwrap();
    assert_eq!(dynd_cuda::launch::launches() - before, 0);
    assert_eq!(d.to_json(), rev.to_json());
}

/// Elementwise functions of several device arrays with ragged ones among
/// them, broadcast per §6, equal the host's: two ragged arrays (rows of
/// length 1 broadcasting), one value per row (`N * 1 * T`, from a
/// reduction with keepdims), a fixed dim lined up with the var dim (a
/// fixed result), fixed dims broadcast, host scalars beside; rows that do
/// not broadcast and failing elements are the host's errors.
pub fn ragged_broadcasting_equals_the_host(dev: DeviceId, types: Option<&[BuiltinType]>) {
    let types: Vec<BuiltinType> = match types {
        Some(t) => t.to_vec(),
        None => device_types().collect(),
    };
    let check = |what: &str, h: dynd::Result<Array>, d: dynd::Result<Array>| match (h, d) {
        (Ok(e), Ok(g)) => {
            assert_eq!(g.device(), dev, "{what}");
            assert_eq!(e.tp(), g.tp(), "{what}");
            assert_eq!(e.to_json(), g.to_host().unwrap().to_json(), "{what}");
        }
        (Err(e), Err(g)) => {
            assert_eq!(e.kind(), g.kind(), "{what}: {e} / {g}");
            assert!(g.message().contains(e.message()), "{what}: {e} / {g}");
        }
        (e, g) => panic!("{what}: host {e:?}, device {g:?}"),
    };
    let lens = [3usize, 0, 1, 17, 2, 40];
    let ones = [1usize, 0, 1, 1, 2, 1];
    let mut n = 0;
    for &b in &types {
        for optional in [false, true] {
            let x = ragged(b, optional, &lens, 3);
            let y = ragged(b, !optional, &lens, 8);
            let z = ragged(BuiltinType::Float64, false, &ones, 1);
            let m = compute::max(&y, Some(&[-1]), true).unwrap();
            let (dx, dy, dz, dm) = (
                x.to_device(dev).unwrap(),
                y.to_device(dev).unwrap(),
                z.to_device(dev).unwrap(),
                m.to_device(dev).unwrap(),
            );
            // where, with a condition computed on the device (against an
            // unsigned zero: uint64 beside a signed integer computes in
            // int128, which the device refuses by name).
            let (hc, dc) = (
                compute::greater(&x, &Array::from(0u8)).unwrap(),
                compute::greater(&dx, &Array::from(0u8)).unwrap(),
            );
            if b == BuiltinType::UInt64 {
                let e = compute::greater(&dx, &Array::from(0i8)).unwrap_err();
                assert!(refused_for_int128(&e), "{e}");
                assert!(compute::greater(&x, &Array::from(0i8)).is_ok());
            }
            let (one, two) = (Array::from(1i8), Array::from(2.5f64));
            check(
                "where(x > 0, x, y)",
                compute::where_(&hc, &x, &y),
                compute::where_(&dc, &dx, &dy),
            );
            check(
                "where(x > 0, 1, 2.5)",
                compute::where_(&hc, &one, &two),
                compute::where_(&dc, &one, &two),
            );
            check(
                "where(x, max(y, keepdims), x)",
                compute::where_(&x, &m, &x),
                compute::where_(&dx, &dm, &dx),
            );
            for name in ["add", "multiply", "greater", "floor_divide"] {
                let f = callable::lookup(name).unwrap();
                for (what, h, d) in [
                    ("x, y", vec![&x, &y], vec![&dx, &dy]),
                    ("x, rows of 1", vec![&x, &z], vec![&dx, &dz]),
                    ("rows of 1, x", vec![&z, &x], vec![&dz, &dx]),
                    ("x, max(y, keepdims)", vec![&x, &m], vec![&dx, &dm]),
                    ("x, x", vec![&x, &x], vec![&dx, &dx]),
                ] {
                    let what = format!("{name}({what}) of {}", x.tp());
                    check(&what, f.call(&h), f.call(&d));
                    n += 1;
                }
            }
        }
    }
    assert!(n >= types.len() * 2 * 4 * 5);
    // Rows that do not broadcast: the host's Broadcast error.
    let x = ragged(BuiltinType::Int32, false, &lens, 1);
    let rev = x.index(&[Index::slice(None, None, -1)]).unwrap();
    let (dx, dr) = (x.to_device(dev).unwrap(), rev.to_device(dev).unwrap());
    check(
        "x + reversed x",
        compute::add(&x, &rev),
        compute::add(&dx, &dr),
    );
    // A fixed dim lined up with the var dim: a fixed result when every
    // row has its length or 1; other rows fail.
    let r = Array::from_json("3 * var * float64", "[[1, 2, 3], [4], [5, 6, 7]]").unwrap();
    let w = Array::from_json("3 * float64", "[10, 20, 30]").unwrap();
    let (drr, dw) = (r.to_device(dev).unwrap(), w.to_device(dev).unwrap());
    check("r + w", compute::add(&r, &w), compute::add(&drr, &dw));
    check(
        "w * r",
        compute::multiply(&w, &r),
        compute::multiply(&dw, &drr),
    );
    let bad = Array::from_json("2 * var * float64", "[[1, 2, 3], [4, 5]]").unwrap();
    let dbad = bad.to_device(dev).unwrap();
    check("bad + w", compute::add(&bad, &w), compute::add(&dbad, &dw));
    // Fixed dims broadcast: 2 * 3 * var against 3 * var, and a host scalar.
    let a = Array::from_json(
        "2 * 3 * var * int64",
        "[[[1], [2, 3], []], [[4], [5, 6], []]]",
    )
    .unwrap();
    let c = Array::from_json("3 * var * int64", "[[10], [20, 30], []]").unwrap();
    let (da, dc) = (a.to_device(dev).unwrap(), c.to_device(dev).unwrap());
    check("a + c", compute::add(&a, &c), compute::add(&da, &dc));
    let f = callable::lookup("add").unwrap();
    let s = Array::from(0.5f32);
    let h = compute::add(&compute::add(&a, &c).unwrap(), &s);
    let d = compute::add(&f.call(&[&da, &dc]).unwrap(), &s);
    check("a + c + 0.5", h, d);
    // A failing element (integer division by zero): the host's error.
    let zero = Array::from_json("3 * var * int64", "[[1], [0, 1], []]").unwrap();
    let dzero = zero.to_device(dev).unwrap();
    check(
        "c // zero",
        compute::floor_divide(&c, &zero),
        compute::floor_divide(&dc, &dzero),
    );
    // A host array beside them is refused by name.
    let e = compute::add(&dc, &c).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
}

/// `concatenate` of device arrays equals the host's: fixed arrays (views
/// too), ragged arrays with fixed dims (reversed rows, sliced rows, empty
/// rows), top-level var dims; mixing fixed and var outermost dims is
/// refused by name.
pub fn concatenate_equals_the_host(dev: DeviceId) {
    let cat = |what: &str, hs: &[&Array]| {
        let ds: Vec<Array> = hs.iter().map(|a| a.to_device(dev).unwrap()).collect();
        let dr: Vec<&Array> = ds.iter().collect();
        same_outcome(
            what,
            compute::concatenate(hs),
            compute::concatenate(&dr),
            dev,
        );
    };
    let a = Array::from_json("3 * 2 * int32", "[[1, 2], [3, 4], [5, 6]]").unwrap();
    let b = Array::from_json("1 * 2 * int32", "[[7, 8]]").unwrap();
    let at = a.permute(&[1, 0]).unwrap();
    let a2 = a.index(&[Index::slice(None, None, -2)]).unwrap();
    cat("fixed", &[&a, &b]);
    cat("fixed views", &[&a2, &b, &a]);
    cat("transposed", &[&at, &at]);
    let x = ragged(BuiltinType::Float64, true, &[3, 0, 2, 17], 4);
    let y = ragged(BuiltinType::Float64, true, &[1, 40], 9);
    let xr = x.index(&[Index::slice(None, None, -1)]).unwrap();
    let xs = x
        .index(&[Index::ALL, Index::slice(None, None, -1)])
        .unwrap();
    cat("ragged", &[&x, &y]);
    cat("ragged views", &[&xr, &y, &xs, &x]);
    let g = Array::from_json("2 * 2 * var * int8", "[[[1], []], [[2, 3], [4]]]").unwrap();
    let h = Array::from_json("1 * 2 * var * int8", "[[[5, 6, 7], [8]]]").unwrap();
    cat("fixed dims over rows", &[&g, &h]);
    let t = Array::from_json("var * int64", "[1, 2, 3]").unwrap();
    let u = Array::from_json("var * int64", "[]").unwrap();
    cat("top-level var", &[&t, &u, &t]);
    // Long rows: groups of lanes a row, on the emulator wider than a block
    // (the fill kernel's groups span blocks, up to the whole grid).
    let long = |n: usize, k: i64| {
        let vals: Vec<String> = (0..n as i64)
            .map(|i| ((i * k) % 1009).to_string())
            .collect();
        Array::from_json("var * int64", &format!("[{}]", vals.join(", "))).unwrap()
    };
    let (l1, l2) = (long(1000, 7), long(37, 3));
    cat("long top-level var", &[&l1, &u, &l2, &l1]);
    let lx = ragged(BuiltinType::Float64, false, &[300, 0, 5, 129], 6);
    let lxr = lx.index(&[Index::slice(None, None, -1)]).unwrap();
    let lxs = lx
        .index(&[Index::ALL, Index::slice(None, None, -3)])
        .unwrap();
    cat("long rows", &[&lx, &lxr]);
    cat("long row views", &[&lxr, &lxs, &lx]);
    let f = Array::from_json("2 * int64", "[4, 5]").unwrap();
    let (dt, df) = (t.to_device(dev).unwrap(), f.to_device(dev).unwrap());
    let e = compute::concatenate(&[&dt, &df]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Type, "{e}");
    assert!(e.message().contains("concatenate on"), "{e}");
    let e = compute::concatenate(&[&dt, &t]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
}

/// One long row (a 1-D array of 5000 and 70 000 elements: the radix sort
/// and the chunked scan) sorts and argsorts exactly as the host does —
/// stable, NaN then missing last, ascending and descending — and scans as
/// the host does: integers exactly, floats within 1e-12 (float64) or 1e-5
/// (float32) relative (the additions are grouped by chunk).
pub fn long_rows_equal_the_host(dev: DeviceId, types: Option<&[BuiltinType]>) {
    use dynd::callable::sort::{self, SortOptions};
    let types: Vec<BuiltinType> = match types {
        Some(t) => t.to_vec(),
        None => device_types().collect(),
    };
    let down = SortOptions { descending: true };
    let sorts = [
        sort::sort(SortOptions::default()),
        sort::argsort(SortOptions::default()),
        sort::sort(down),
        sort::argsort(down),
    ];
    for &b in &types {
        for optional in [false, true] {
            for n in [5000usize, 70_000] {
                let vals: Vec<(i64, bool)> = (0..n as i64)
                    .map(|k| ((k * 7919) % 23 - 11, k % 7 == 3))
                    .collect();
                let x = crate::common::array(b, optional, &[n], &vals);
                let x = if n == 70_000 {
                    x.index(&[Index::slice(None, None, -2)]).unwrap()
                } else {
                    x
                };
                let d = x.to_device(dev).unwrap();
                for f in &sorts {
                    let what = format!("{}({}) of {n}", f.name(), x.tp());
                    same_outcome(&what, f.call(&[&x]), f.call(&[&d]), dev);
                }
                for name in ["cumsum", "cumprod"] {
                    let f = callable::lookup(name).unwrap();
                    let what = format!("{name}({})", x.tp());
                    let (h, g) = (f.call(&[&x]).unwrap(), f.call(&[&d]).unwrap());
                    assert_eq!(h.tp(), g.tp(), "{what}");
                    let g = g.to_host().unwrap();
                    if matches!(b, BuiltinType::Float32 | BuiltinType::Float64) {
                        let tol = if b == BuiltinType::Float32 {
                            1e-5
                        } else {
                            1e-12
                        };
                        let (p, q) = (floats(&h), floats(&g));
                        assert!(p.iter().zip(&q).all(|(u, v)| close(*u, *v, tol)), "{what}");
                    } else {
                        assert_eq!(h.to_json(), g.to_json(), "{what}");
                    }
                }
            }
        }
    }
    // NaNs (of both signs), -0.0 and infinities in a long row.
    let special = ["NaN", "-0.0", "0.0", "Infinity", "-Infinity", "1.5"];
    let json: Vec<&str> = (0..6000)
        .map(|k| special[(k * 5) % special.len()])
        .collect();
    let x = Array::from_json("6000 * float64", &format!("[{}]", json.join(","))).unwrap();
    let x = compute::concatenate(&[&x, &compute::negative(&x).unwrap()]).unwrap();
    let d = x.to_device(dev).unwrap();
    for f in &sorts {
        same_outcome(f.name(), f.call(&[&x]), f.call(&[&d]), dev);
    }
    let bits = |a: &Array| -> Vec<u64> { floats(a).iter().map(|v| v.to_bits()).collect() };
    let (h, g) = (compute::sort(&x).unwrap(), compute::sort(&d).unwrap());
    assert_eq!(bits(&h), bits(&g.to_host().unwrap()));
    // Long rows among others: rows of a 2-D array, ragged rows of 5000 and
    // 4100 values beside short and empty ones (the long ones take the
    // grid together, after the thread-per-row kernel skipped them; the many
    // launches of their radix sorts and scans tell), and reversed rows
    // (a thread each).
    let lens = [5000usize, 3, 0, 4100, 7];
    for optional in [false, true] {
        let r = ragged(BuiltinType::Float64, optional, &lens, 5);
        let rev = r
            .index(&[Index::ALL, Index::slice(None, None, -1)])
            .unwrap();
        let vals: Vec<(i64, bool)> = (0..3 * 4500)
            .map(|k| ((k * 7919) % 23 - 11, k % 7 == 3))
            .collect();
        let m = crate::common::array(BuiltinType::Int32, optional, &[3, 4500], &vals);
        // Reversed on the device (to_device would pack the rows in order).
        let drev = r
            .to_device(dev)
            .unwrap()
            .index(&[Index::ALL, Index::slice(None, None, -1)])
            .unwrap();
        for (what, x, d, long) in [
            ("ragged", &r, r.to_device(dev).unwrap(), true),
            ("reversed rows", &rev, drev, false),
            ("3 * 4500", &m, m.to_device(dev).unwrap(), true),
        ] {
            let cumsum = callable::lookup("cumsum").unwrap();
            for f in sorts.iter().chain([&cumsum]) {
                let before = dynd_cuda::launch::launches();
                let (h, g) = (f.call(&[x]), f.call(&[&d]));
                let launches = dynd_cuda::launch::launches() - before;
                let name = format!("{}({what}, {})", f.name(), x.tp());
                if f.name() == "cumsum" && what != "3 * 4500" {
                    // Float sums group their terms: compared to rounding.
                    let (h, g) = (h.unwrap(), g.unwrap().to_host().unwrap());
                    let (p, q) = (floats(&h), floats(&g));
                    assert_eq!(p.len(), q.len(), "{name}");
                    assert!(
                        p.iter().zip(&q).all(|(u, v)| close(*u, *v, 1e-12)),
                        "{name}"
                    );
                } else {
                    same_outcome(&name, h, g, dev);
                }
                assert_eq!(launches > 3, long, "{name}: {launches} launches");
            }
        }
    }
}

/// Many long rows at once (`dynd_cuda::long_row::run_segments`, which
/// the long rows of ragged and 2-D arrays take): 300 rows — more than 256,
/// so the row index takes three nibbles of passes — of lengths 0 to 70, the
/// segments listed by hand from a device array's descriptors, give each
/// row the host's `sort` / `argsort` (both orders: stable, NaN then
/// missing last) and `cumsum` / `cumprod` (one chunk per row here: the
/// host's bits). The same rows as one 2-D array of 300 long rows through
/// `sort` give the host's result.
pub fn many_long_rows_equal_the_host(dev: DeviceId, types: Option<&[BuiltinType]>) {
    use dynd::callable::sort::{RowOp, SortOptions};
    use dynd_cuda::long_row;
    let DeviceId::Cuda(ordinal) = dev else {
        panic!("{dev}")
    };
    let backend = dynd_cuda::launch::backend(ordinal).unwrap();
    let b: &dyn dynd_cuda::launch::Backend = &*backend;
    let types: Vec<BuiltinType> = match types {
        Some(t) => t.to_vec(),
        None => device_types().collect(),
    };
    let lens: Vec<usize> = (0..300).map(|r| [0, 1, 5, 17, 33, 2, 70][r % 7]).collect();
    let flat = |json: &str| -> Vec<String> {
        json.split(['[', ']', ','])
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(String::from)
            .collect()
    };
    let down = SortOptions { descending: true };
    let ops = [
        RowOp::Sort(SortOptions::default()),
        RowOp::ArgSort(SortOptions::default()),
        RowOp::Sort(down),
        RowOp::ArgSort(down),
        RowOp::CumSum,
        RowOp::CumProd,
    ];
    for &t in &types {
        for optional in [false, true] {
            let x = ragged(t, optional, &lens, 4);
            let d = x.to_device(dev).unwrap();
            let layout = d.ragged_layout().unwrap();
            assert_eq!(layout.strides, [16], "a fresh device array's descriptors");
            let mut descs = vec![0u8; 300 * 16];
            // SAFETY: the device array's 300 descriptors of 16 bytes.
            unsafe { b.copy_to_host(&mut descs, d.data_ptr()).unwrap() };
            let word = |k: usize| u64::from_le_bytes(descs[8 * k..8 * k + 8].try_into().unwrap());
            for op in ops {
                let host = match op {
                    RowOp::Sort(o) => dynd::callable::sort::sort(o),
                    RowOp::ArgSort(o) => dynd::callable::sort::argsort(o),
                    _ => dynd::callable::lookup(op.name()).unwrap(),
                };
                let what = format!("{op:?} of {}", x.tp());
                let expected = match host.call(&[&x]) {
                    Ok(h) => h,
                    // What the host refuses (a sort of complex numbers)
                    // the device never gets.
                    Err(_) => continue,
                };
                let out_elem = expected.tp().dtype().clone();
                let ob = out_elem
                    .option_value()
                    .unwrap_or(&out_elem)
                    .as_builtin()
                    .unwrap();
                let total: usize = lens.iter().sum();
                let result = Array::empty_on(
                    dev,
                    dynd::Type::parse(&format!("{total} * {out_elem}")).unwrap(),
                )
                .unwrap();
                let mut at = 0usize;
                let list = long_row::Segment::list_bytes((0..300).map(|r| {
                    let out = result.data_ptr() as u64 + (at * ob.data_size()) as u64;
                    at += lens[r];
                    long_row::Segment {
                        first: word(2 * r) + layout.offset as u64,
                        len: lens[r] as u64,
                        out,
                    }
                }));
                let (_list_block, dlist) = b.alloc(list.len()).unwrap();
                // SAFETY: a fresh allocation of the list's bytes.
                unsafe { b.copy_to_device(dlist, &list).unwrap() };
                let before = dynd_cuda::launch::launches();
                // SAFETY: each segment's values are its row's (from the
                // descriptors), its result `lens[r]` elements of `result`
                // at the row's place, apart from the others'.
                unsafe {
                    long_row::run_segments(
                        b,
                        op,
                        ((t, optional), ob),
                        (dlist, 300, 70),
                        layout.stride,
                    )
                    .unwrap()
                };
                let launches = dynd_cuda::launch::launches() - before;
                let got = result.to_host().unwrap();
                let (got, expected) = (flat(&got.to_json()), flat(&expected.to_json()));
                assert_eq!(got.len(), expected.len(), "{what}");
                if let Some(i) = (0..got.len()).find(|&i| got[i] != expected[i]) {
                    panic!(
                        "{what}: value {i} is {}, the host's {}",
                        got[i], expected[i]
                    );
                }
                // A fixed number of launches: the offsets (a kernel and a
                // 3-launch scan), then for sorts the items, the passes (the
                // row index's three nibbles among them), the writes; for scans
                // the three kernels.
                let (keys, row_passes) = dynd_cuda::radix::segmented_passes((t, optional), 300);
                assert_eq!(row_passes, 3, "299 takes three nibbles");
                let per_pass = dynd_cuda::radix::pass_launches(b, total);
                let want = match op {
                    RowOp::Sort(_) | RowOp::ArgSort(_) => {
                        4 + 1 + per_pass * (keys + row_passes) + 1
                    }
                    _ => 4 + 3,
                };
                assert_eq!(launches, want, "{what}");
            }
        }
    }
    // The same rows through `sort` as a 2-D array of long rows (each of
    // `long_row::MIN_LENGTH`): 300 of them would be 1.2 M values, so a few
    // of them here (the count does not change the path).
    let m = long_row::MIN_LENGTH;
    let vals: Vec<(i64, bool)> = (0..5 * m as i64)
        .map(|k| ((k * 7919) % 29 - 14, k % 11 == 5))
        .collect();
    for &t in &types {
        let x = crate::common::array(t, true, &[5, m], &vals);
        let d = x.to_device(dev).unwrap();
        for f in ["sort", "argsort", "cumsum"] {
            let f = dynd::callable::lookup(f).unwrap();
            let what = format!("{}(5 * {m} * ?{t})", f.name());
            // Small integers: float sums are exact in any grouping.
            same_outcome(&what, f.call(&[&x]), f.call(&[&d]), dev);
        }
    }
}

/// A host array `N * var * var * b` (`?b` when optional): outer rows of
/// the given numbers of inner rows, inner rows of lengths cycling through
/// 0..5, values from `seed`; when optional, every fourth value missing.
pub fn nested(b: BuiltinType, optional: bool, outer: &[usize], seed: i64) -> Array {
    let mut k = 0i64;
    let mut len = 0usize;
    let rows: Vec<String> = outer
        .iter()
        .map(|&m| {
            let inner: Vec<String> = (0..m)
                .map(|_| {
                    len = (len + 2) % 5;
                    let vals: Vec<String> = (0..len)
                        .map(|_| {
                            k += 1;
                            if optional && k % 4 == 0 {
                                "null".into()
                            } else {
                                crate::common::value(b, (k * 5 + seed) % 9 - 4)
                            }
                        })
                        .collect();
                    format!("[{}]", vals.join(","))
                })
                .collect();
            format!("[{}]", inner.join(","))
        })
        .collect();
    let tp = format!(
        "{} * var * var * {}{b}",
        outer.len(),
        if optional { "?" } else { "" }
    );
    Array::from_json(tp.as_str(), &format!("[{}]", rows.join(","))).unwrap()
}

/// Nested var dims (`N * var * var * T`) on the device: they round-trip,
/// and the elementwise functions with host scalars, the row operations
/// and the reductions over the innermost dim equal the host's, on views
/// too; what does not run there says so.
pub fn nested_equal_the_host(dev: DeviceId, types: Option<&[BuiltinType]>) {
    use dynd::callable::reduce::BuiltinReduction;
    let types: Vec<BuiltinType> = match types {
        Some(t) => t.to_vec(),
        None => device_types().collect(),
    };
    let mut n = 0;
    for &b in &types {
        for optional in [false, true] {
            let h = nested(b, optional, &[3, 0, 1, 4], 2);
            let views = [
                h.clone(),
                h.index(&[Index::slice(None, None, -1)]).unwrap(),
                h.index(&[Index::ALL, Index::slice(None, None, -1)])
                    .unwrap(),
            ];
            for x in &views {
                let d = x.to_device(dev).unwrap();
                assert_eq!(d.to_host().unwrap().to_json(), x.to_json(), "{}", x.tp());
                for (name, scalar) in [
                    ("add", Some(Array::from(2i8))),
                    ("greater", Some(Array::from(0.5f64))),
                    ("negative", None),
                    ("cumsum", None),
                    ("sort", None),
                    ("argsort", None),
                ] {
                    let f = callable::lookup(name).unwrap();
                    let (hargs, dargs): (Vec<&Array>, Vec<&Array>) = match &scalar {
                        Some(s) => (vec![x, s], vec![&d, s]),
                        None => (vec![x], vec![&d]),
                    };
                    let what = format!("{name}({})", x.tp());
                    same_outcome(&what, f.call(&hargs), f.call(&dargs), dev);
                    n += 1;
                }
                for kind in [
                    BuiltinReduction::Sum,
                    BuiltinReduction::Max,
                    BuiltinReduction::ArgMin,
                    BuiltinReduction::Mean,
                    BuiltinReduction::Count,
                ] {
                    reduction_equals_the_host(dev, x, "nested", kind, Some(&[-1]), false);
                    n += 1;
                }
            }
        }
    }
    assert_eq!(n, types.len() * 2 * 3 * 11);
    // Over both var dims and every axis, the reductions that compose (the
    // first and last types: the emulator under valgrind runs this too).
    let ends = [types[0], types[types.len() - 1]];
    for &b in &ends {
        for optional in [false, true] {
            let h = nested(b, optional, &[3, 0, 1, 4], 7);
            let rev = h.index(&[Index::slice(None, None, -1)]).unwrap();
            for x in [&h, &rev] {
                for kind in [
                    BuiltinReduction::Sum,
                    BuiltinReduction::Prod,
                    BuiltinReduction::Min,
                    BuiltinReduction::Max,
                    BuiltinReduction::Count,
                    BuiltinReduction::Any,
                    BuiltinReduction::All,
                    BuiltinReduction::Mean,
                ] {
                    if kind == BuiltinReduction::Mean && b == BuiltinType::Float32 {
                        continue;
                    }
                    for axes in [Some(&[-2isize, -1][..]), Some(&[1, 2][..]), None] {
                        reduction_equals_the_host(dev, x, "nested", kind, axes, false);
                    }
                }
            }
        }
    }
    // Over the outer var dim (position by position over the inner rows of
    // each outer row), with the fixed dim too, every reduction.
    for &b in &ends {
        for optional in [false, true] {
            let h = nested(b, optional, &[3, 0, 1, 4], 11);
            let rev = h.index(&[Index::slice(None, None, -1)]).unwrap();
            for x in [&h, &rev] {
                for kind in BuiltinReduction::ALL {
                    reduction_equals_the_host(dev, x, "nested", kind, Some(&[-2]), false);
                    // Both var dims and every axis: the stateful ones here.
                    reduction_equals_the_host(dev, x, "nested", kind, Some(&[-2, -1]), false);
                    reduction_equals_the_host(dev, x, "nested", kind, None, false);
                    if !matches!(kind, BuiltinReduction::ArgMin | BuiltinReduction::ArgMax) {
                        reduction_equals_the_host(dev, x, "nested", kind, Some(&[0, 1]), false);
                    }
                }
            }
        }
    }
    let h = nested(BuiltinType::Int32, false, &[3, 0, 1, 4], 11);
    let e = compute::argmax(&h.to_device(dev).unwrap(), Some(&[0, 1]), false).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Type, "{e}");
    assert!(
        e.message().contains("positions are not counted there yet"),
        "{e}"
    );
    // What does not run there says so.
    let d = nested(BuiltinType::Int32, false, &[2, 1], 1)
        .to_device(dev)
        .unwrap();
    for e in [
        compute::sum(&d, Some(&[0]), false).unwrap_err(),
        compute::sum(&d, Some(&[-2]), true).unwrap_err(),
        compute::sum(&d, Some(&[-1]), true).unwrap_err(),
        compute::is_null(&d).unwrap_err(),
    ] {
        assert_eq!(e.kind(), ErrorKind::Type, "{e}");
        assert!(e.message().contains("nested var dims"), "{e}");
    }
}

/// Records with var fields (`N * {a: var * T, b: U}`) go to the device and
/// back, and a var field of them is a ragged device array every ragged
/// operation runs on, equal to the host's.
pub fn records_with_var_fields_equal_the_host(dev: DeviceId) {
    let json = r#"[{"a":[1.5,2],"b":1},{"a":[],"b":2},{"a":[3,-1,null],"b":3},{"a":[4],"b":4}]"#;
    let x = Array::from_json("4 * {a: var * ?float64, b: int16}", json).unwrap();
    for v in [x.clone(), x.index(&[Index::slice(None, None, -2)]).unwrap()] {
        let d = v.to_device(dev).unwrap();
        assert_eq!(d.to_host().unwrap().to_json(), v.to_json());
        let (ha, da) = (v.field("a").unwrap(), d.field("a").unwrap());
        assert_eq!(da.device(), dev);
        let s = Array::from(1.0f64);
        same_outcome("a + 1", compute::add(&ha, &s), compute::add(&da, &s), dev);
        same_outcome(
            "sum(a)",
            compute::sum(&ha, Some(&[-1]), false),
            compute::sum(&da, Some(&[-1]), false),
            dev,
        );
        same_outcome("sort(a)", compute::sort(&ha), compute::sort(&da), dev);
        let (hm, dm) = (
            compute::greater(&ha, &s).unwrap(),
            compute::greater(&da, &s).unwrap(),
        );
        same_outcome(
            "a[a > 1]",
            compute::filter(&ha, &hm),
            compute::filter(&da, &dm),
            dev,
        );
        let (hb, db) = (v.field("b").unwrap(), d.field("b").unwrap());
        same_outcome(
            "b * 2",
            compute::multiply(&hb, &s),
            compute::multiply(&db, &s),
            dev,
        );
    }
}

/// `run` on host copies of `arrays` and on device copies (`dst` first):
/// the arrays (and those `watch` gives, made before `run`: views sharing
/// them) equal afterwards, or both fail alike (the device's message
/// holding the host's).
fn same_writes(
    dev: DeviceId,
    what: &str,
    arrays: &[&Array],
    watch: &dyn Fn(&[Array]) -> Vec<Array>,
    run: &dyn Fn(&[Array]) -> dynd::Result<()>,
) {
    let h: Vec<Array> = arrays.iter().map(|a| a.copy().unwrap()).collect();
    let d: Vec<Array> = arrays.iter().map(|a| a.to_device(dev).unwrap()).collect();
    let (hw, dw) = (watch(&h), watch(&d));
    match (run(&h), run(&d)) {
        (Ok(()), Ok(())) => {
            for (e, g) in hw.iter().chain(&h).zip(dw.iter().chain(&d)) {
                assert_eq!(g.device(), dev, "{what}");
                assert_eq!(e.to_json(), g.to_host().unwrap().to_json(), "{what}");
            }
        }
        (Err(e), Err(g)) => {
            assert_eq!(e.kind(), g.kind(), "{what}: {e} / {g}");
            assert!(g.message().contains(e.message()), "{what}: {e} / {g}");
        }
        (e, g) => panic!("{what}: host {e:?}, device {g:?}"),
    }
}

/// Outputs given for ragged results and assignments into ragged device
/// arrays, against the host doing the same on host copies: the output's
/// values afterwards (and what views sharing it see), or the host's error.
///
/// - assignments into rows: converted, a row of 1 and a 0-d host scalar
///   broadcast, a fixed array along the rows, fixed dims broadcast, rows
///   of other lengths, values failing the mode, missing values into plain
///   rows, a reversed view of the destination (read from a copy); and
///   ragged rows into a fixed array (a stepped view);
/// - elementwise calls into rows (another array, in place, its reversed
///   rows, rows of other lengths, a wrong type) and into a fixed output;
/// - row operations (`sort`, `argsort`, `cumsum`, `filter`, `take`) into
///   outputs whose rows they replace, a view with an offset among them,
///   and a fixed output; a stepped view is refused by name;
/// - lifted results: a reduction with ragged rows, `concatenate`.
pub fn ragged_outputs_equal_the_host(dev: DeviceId) {
    use dynd::kernels::assign::ErrorMode;
    let on = |h: &Array| h.to_device(dev).unwrap();
    let check = |what: &str,
                 arrays: &[&Array],
                 watch: &dyn Fn(&[Array]) -> Vec<Array>,
                 run: &dyn Fn(&[Array]) -> dynd::Result<()>| {
        same_writes(dev, what, arrays, watch, run)
    };
    let none = |_: &[Array]| Vec::new();
    let j = |tp: &str, json: &str| Array::from_json(tp, json).unwrap();
    let x = j("4 * var * int32", "[[1, 2, 3], [], [4], [5, 6]]");
    let xf = j("4 * var * float64", "[[0.5, 2, 3], [], [7.25], [9, -1]]");
    let xm = j(
        "4 * var * ?float64",
        "[[0.5, null, 3], [], [null], [9, -1]]",
    );
    let ones = j("4 * var * float64", "[[10], [], [20], [30]]");
    let long = j("4 * var * int32", "[[1, 2, 3], [], [4, 5], [5, 6]]");
    let w3 = j("3 * float64", "[1, 2, 3]");
    let sq = j(
        "4 * var * int16",
        "[[1, 2, 3], [4, 5, 6], [7, 8, 9], [0, 1, 2]]",
    );
    let assign =
        |mode: ErrorMode| move |a: &[Array]| -> dynd::Result<()> { a[0].assign(&a[1], mode) };
    // Assignments into rows.
    for (what, src) in [
        ("float64 rows", &xf),
        ("optional rows", &xm),
        ("rows of 1", &ones),
        ("rows of other lengths", &long),
    ] {
        for mode in [
            ErrorMode::NoCheck,
            ErrorMode::Default,
            ErrorMode::Fractional,
        ] {
            check(
                &format!("x ← {what} ({mode:?})"),
                &[&x, src],
                &none,
                &assign(mode),
            );
            check(
                &format!("x? ← {what} ({mode:?})"),
                &[&xm, src],
                &none,
                &assign(mode),
            );
        }
    }
    check("x ← 7 (a host scalar)", &[&x], &none, &|a| {
        a[0].assign(&Array::from(7.0f64), ErrorMode::Default)
    });
    check("x ← 2.5 (fails the mode)", &[&x], &none, &|a| {
        a[0].assign(&Array::from(2.5f64), ErrorMode::Fractional)
    });
    check(
        "sq ← a fixed row",
        &[&sq, &w3],
        &none,
        &assign(ErrorMode::Default),
    );
    check(
        "x ← a fixed row",
        &[&x, &w3],
        &none,
        &assign(ErrorMode::Default),
    );
    let x23 = ragged_nd(BuiltinType::Int64, false, &[2, 4], &[3, 0, 1, 2], 5);
    let x4 = ragged_nd(BuiltinType::Int32, false, &[4], &[3, 0, 1, 2], 9);
    check(
        "2 * 4 * var ← 4 * var",
        &[&x23, &x4],
        &none,
        &assign(ErrorMode::Default),
    );
    check(
        "4 * var ← 2 * 4 * var",
        &[&x4, &x23],
        &none,
        &assign(ErrorMode::Default),
    );
    // Long rows (a group of lanes each): into rows, and into a fixed array.
    let lens = [100usize, 3, 0, 64];
    let xl = ragged(BuiltinType::Int32, false, &lens, 1);
    let yl = ragged(BuiltinType::Float64, false, &lens, 2);
    check(
        "long rows ← long rows",
        &[&xl, &yl],
        &none,
        &assign(ErrorMode::NoCheck),
    );
    let fl = crate::common::array(BuiltinType::Int64, false, &[4, 100], &[(0, false); 400]);
    let rl = ragged(BuiltinType::Float64, false, &[100, 1, 100, 100], 4);
    check(
        "fixed ← long rows",
        &[&fl, &rl],
        &none,
        &assign(ErrorMode::NoCheck),
    );
    check("sq ← its reversed rows", &[&sq], &none, &|a| {
        let rev = a[0].index(&[Index::slice(None, None, -1)])?;
        a[0].assign(&rev, ErrorMode::Default)
    });
    // Rows into a fixed array, and into a stepped view of one.
    let fixed = j("4 * 3 * int32", "[[0,0,0],[0,0,0],[0,0,0],[0,0,0]]");
    let rows3 = j("4 * var * float64", "[[1, 2, 3], [4], [5, 6, 7], [8]]");
    check(
        "fixed ← rows",
        &[&fixed, &rows3],
        &none,
        &assign(ErrorMode::Default),
    );
    check(
        "fixed ← x",
        &[&fixed, &x],
        &none,
        &assign(ErrorMode::Default),
    );
    let wide = j(
        "4 * 5 * int32",
        "[[0,0,0,0,0],[0,0,0,0,0],[0,0,0,0,0],[0,0,0,0,0]]",
    );
    check("stepped fixed ← rows", &[&wide, &rows3], &none, &|a| {
        let v = a[0].index(&[Index::slice(None, None, -1), Index::slice(None, None, 2)])?;
        v.assign(&a[1], ErrorMode::Default)
    });
    // Elementwise calls into rows.
    let add = callable::lookup("add").unwrap();
    let one = Array::from(1i32);
    let call_into = |f: &callable::Callable, out: usize, args: &[usize]| {
        let f = f.clone();
        let args = args.to_vec();
        let one = &one;
        move |a: &[Array]| -> dynd::Result<()> {
            let refs: Vec<&Array> = args.iter().map(|&i| &a[i]).collect();
            let mut with = refs;
            if with.len() == 1 {
                with.push(one);
            }
            f.call_into(&a[out], &with)
        }
    };
    check(
        "add(x, 1) into another",
        &[&x, &x.copy().unwrap()],
        &none,
        &call_into(&add, 1, &[0]),
    );
    check(
        "add(x, 1) in place",
        &[&x],
        &none,
        &call_into(&add, 0, &[0]),
    );
    check(
        "add(x, x) in place",
        &[&x],
        &none,
        &call_into(&add, 0, &[0, 0]),
    );
    check(
        "add(x, 1) into rows of other lengths",
        &[&x, &long],
        &none,
        &call_into(&add, 1, &[0]),
    );
    check(
        "add(x, rows of 1) into x",
        &[&x, &j("4 * var * int32", "[[1], [], [2], [3]]")],
        &none,
        &call_into(&add, 0, &[0, 1]),
    );
    check("add(sq reversed, 1) into sq", &[&sq], &none, &|a| {
        let rev = a[0].index(&[Index::slice(None, None, -1)])?;
        add.call_into(&a[0], &[&rev, &Array::from(1i16)])
    });
    // An output of another type: a Type error on both, the device's
    // naming the output (the host casts no ragged results either).
    let e = add
        .call_into(&on(&xf), &[&on(&x), &Array::from(1i32)])
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Type, "{e}");
    assert!(
        e.message().contains("the output is 4 * var * float64"),
        "{e}"
    );
    let host = add.call_into(&xf.copy().unwrap(), &[&x, &Array::from(1i32)]);
    assert_eq!(host.unwrap_err().kind(), ErrorKind::Type);
    check("where(x > 2, x, 0) into x", &[&x], &none, &|a| {
        let c = compute::greater(&a[0], &Array::from(2i32))?;
        callable::lookup("where")
            .unwrap()
            .call_into(&a[0], &[&c, &a[0], &Array::from(0i32)])
    });
    check(
        "add(rows, w) into a fixed view",
        &[&fixed, &rows3, &w3],
        &none,
        &|a| {
            let tp = j("4 * 3 * float64", "[[0,0,0],[0,0,0],[0,0,0],[0,0,0]]");
            let o = if a[1].device().is_cpu() { tp } else { on(&tp) };
            add.call_into(&o, &[&a[1], &a[2]])?;
            a[0].assign(&o, ErrorMode::NoCheck)
        },
    );
    // Row operations replace the output's rows.
    let o = j("4 * var * int32", "[[9], [9, 9, 9, 9], [], [9]]");
    let mask = j(
        "4 * var * bool",
        "[[true, false, true], [], [false], [true, true]]",
    );
    let idx = j("4 * var * int64", "[[2, 0, 0], [], [0, 0, 0], [-1]]");
    for (name, args) in [
        ("sort", vec![0usize]),
        ("argsort", vec![0]),
        ("cumsum", vec![0]),
        ("filter", vec![0, 2]),
        ("take", vec![0, 3]),
    ] {
        let f = callable::lookup(name).unwrap();
        let tps: Vec<dynd::Type> = args
            .iter()
            .map(|&i| [&x, &o, &mask, &idx][i].tp().clone())
            .collect();
        let tp = f.resolve(&tps).unwrap();
        let hargs: Vec<&Array> = args.iter().map(|&i| [&x, &o, &mask, &idx][i]).collect();
        let run = |a: &[Array]| {
            let refs: Vec<&Array> = args.iter().map(|&i| &a[i]).collect();
            f.call_into(&a[1], &refs)
        };
        // Into an output of the result's row lengths (zeros): written.
        let same = f.call(&hargs).unwrap().copy().unwrap();
        same.assign(&Array::from(0i8), ErrorMode::NoCheck).unwrap();
        assert_eq!(same.tp(), &tp);
        check(
            &format!("{name} into rows of its lengths"),
            &[&x, &same, &mask, &idx],
            &|a| vec![a[1].clone()],
            &run,
        );
        // Into rows of other lengths: the host replaces them; a device
        // values block cannot grow, so the device says so.
        let other = j(&tp.to_string(), "[[9], [9, 9, 9, 9], [], [9]]");
        let dargs: Vec<Array> = args.iter().map(|&i| on([&x, &o, &mask, &idx][i])).collect();
        let refs: Vec<&Array> = dargs.iter().collect();
        assert!(f.call_into(&other.copy().unwrap(), &hargs).is_ok());
        let e = f.call_into(&on(&other), &refs).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Type, "{name}: {e}");
        assert!(
            e.message().contains("must have the result's row lengths"),
            "{e}"
        );
        // Of another type: refused by name.
        let bad = on(&j("4 * var * float32", "[[1], [], [], []]"));
        let e = f.call_into(&bad, &refs).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Type, "{name}: {e}");
    }
    // Rows of a fixed dim: into a fixed output.
    check(
        "sort of sq into a fixed output",
        &[
            &j("4 * 3 * int16", "[[0,0,0],[0,0,0],[0,0,0],[0,0,0]]"),
            &j("4 * 3 * int16", "[[3,1,2],[6,5,4],[9,8,7],[2,1,0]]"),
        ],
        &none,
        &|a| callable::lookup("sort").unwrap().call_into(&a[0], &[&a[1]]),
    );
    // Lifted results: a reduction keeping the var dim, concatenate.
    let m3 = ragged_nd(BuiltinType::Int32, false, &[3, 2], &[2, 0, 3], 4);
    let sum =
        dynd::callable::reduce::Reduction::builtin(dynd::callable::reduce::BuiltinReduction::Sum)
            .with(Some(&[0]), false);
    let sum0 = |a: &[Array]| sum.call_into(&a[1], &[&a[0]]);
    let s = sum.call(&[&m3]).unwrap();
    check(
        "sum(axis=0) into rows",
        &[&m3, &s.copy().unwrap()],
        &none,
        &sum0,
    );
    let cat = callable::lookup("concatenate").unwrap();
    let c = cat.call(&[&x, &long]).unwrap();
    check(
        "concatenate into rows",
        &[&x, &long, &c.copy().unwrap()],
        &none,
        &|a| cat.call_into(&a[2], &[&a[0], &a[1]]),
    );
    check(
        "concatenate into rows of other lengths",
        &[&x, &long, &cat.call(&[&long, &x]).unwrap()],
        &none,
        &|a| cat.call_into(&a[2], &[&a[0], &a[1]]),
    );
}

/// Rows that may be missing (`[fixed dims] * ?var * T`) on the device:
/// to the device and back unchanged (views too), their parts, indexing
/// within the rows (`x[:, i]` missing where the row is, slices keeping
/// missing rows missing), `concatenate` (with plain var arrays beside),
/// each equal to the host's, errors included; elementwise and row calls
/// (missing where an argument's row is) as on the host; reductions, which
/// the host refuses on `?var`, refused alike.
pub fn option_rows_equal_the_host(dev: DeviceId) {
    let j = |tp: &str, json: &str| Array::from_json(tp, json).unwrap();
    let xs = [
        j("5 * ?var * int32", "[[1, 2, 3], null, [], [4], null]"),
        j("4 * ?var * int32", "[[1, 2, 3], null, [5, 6], null]"),
        j(
            "2 * 3 * ?var * ?float64",
            "[[[1.5, null], null, [2.5]], [null, [], [null, 3.5, 4.5]]]",
        ),
        j("3 * ?var * bool", "[[true], null, [false, true]]"),
        j("0 * ?var * int8", "[]"),
        j("?var * int16", "[7, 8]"),
    ];
    let rev = |a: &Array| a.index(&[Index::slice(None, None, -1)]).unwrap();
    let mut compared = 0;
    for h in &xs {
        for (what, h) in [("", h.clone()), (" reversed", rev(h))] {
            let top = h.tp().to_string().starts_with('?');
            if top && !what.is_empty() {
                continue;
            }
            let name = format!("{}{what}", h.tp());
            let d = h.to_device(dev).unwrap();
            assert_eq!(d.device(), dev, "{name}");
            assert_eq!(d.tp(), h.tp(), "{name}");
            assert_eq!(d.to_host().unwrap().to_json(), h.to_json(), "{name}");
            if !top {
                let ((hr, hp), (dr, dp)) = (h.option_rows().unwrap(), d.option_rows().unwrap());
                assert_eq!(dr.to_host().unwrap().to_json(), hr.to_json(), "{name}");
                assert_eq!(dp.to_host().unwrap().to_json(), hp.to_json(), "{name}");
            }
            // The fixed dims above the rows.
            let k = h.tp().to_string().matches(" * ").count() - 1;
            let within = |ix: Index| -> Vec<Index> {
                let mut v = vec![Index::ALL; k];
                v.push(ix);
                v
            };
            for (what, ix) in [
                ("[.., 0]", within(Index::At(0))),
                ("[.., -1]", within(Index::At(-1))),
                ("[.., 5]", within(Index::At(5))),
                ("[.., 1:]", within(Index::slice(Some(1), None, 1))),
                ("[.., ::-1]", within(Index::slice(None, None, -1))),
                ("[.., :]", within(Index::ALL)),
                ("[.., 0:0]", within(Index::slice(Some(0), Some(0), 1))),
            ] {
                same_outcome(&format!("{name}{what}"), h.index(&ix), d.index(&ix), dev);
                compared += 1;
            }
            if !top {
                // Fixed dims first, then within the rows.
                let ix = [
                    Index::slice(Some(1), None, 1),
                    Index::slice(Some(1), None, 1),
                ];
                same_outcome(&format!("{name}[1:, 1:]"), h.index(&ix), d.index(&ix), dev);
            }
        }
    }
    assert!(compared >= 7 * 10, "{compared}");
    // concatenate: of `?var` arrays, and with plain var rows beside.
    let cat = callable::lookup("concatenate").unwrap();
    let (x, y) = (&xs[0], &xs[1]);
    let plain = j("2 * var * int32", "[[9], []]");
    for (what, args) in [
        ("x, y", vec![x, y]),
        ("x, plain", vec![x, &plain]),
        ("plain, y, x", vec![&plain, y, x]),
    ] {
        let d: Vec<Array> = args.iter().map(|a| a.to_device(dev).unwrap()).collect();
        let dr: Vec<&Array> = d.iter().collect();
        let hr: Vec<&Array> = args.to_vec();
        same_outcome(
            &format!("concatenate({what})"),
            cat.call(&hr),
            cat.call(&dr),
            dev,
        );
    }
    // Records with `?var` fields: to the device and back; a field is rows
    // that may be missing, a record apart, indexed as above.
    let recs = j(
        "4 * {a: ?var * float64, b: int32, c: var * ?int16}",
        r#"[{"a": [1.5, 2], "b": 1, "c": [1]}, {"a": null, "b": 2, "c": []},
            {"a": [], "b": 3, "c": [null, 2]}, {"a": [3, -1], "b": 4, "c": [5]}]"#,
    );
    for h in [recs.clone(), rev(&recs)] {
        let d = h.to_device(dev).unwrap();
        assert_eq!(d.to_host().unwrap().to_json(), h.to_json(), "{}", h.tp());
        let (ha, da) = (h.field("a").unwrap(), d.field("a").unwrap());
        assert_eq!(da.to_host().unwrap().to_json(), ha.to_json());
        for ix in [
            [Index::ALL, Index::At(-1)],
            [Index::ALL, Index::slice(Some(1), None, 1)],
        ] {
            same_outcome("field a of records", ha.index(&ix), da.index(&ix), dev);
        }
    }
    // Elementwise and row calls on `?var` (missing where a row is), as on
    // the host: with a scalar, two such arrays missing in different rows,
    // a plain ragged array beside, a mask computed on the device; what
    // the host refuses (reductions: `?var * T` is an element) the device
    // refuses alike.
    let z = j("5 * ?var * int32", "[null, [7, 8, 9], [], [1], [2, 2]]");
    let p = j("5 * var * int32", "[[1, 1, 1], [5], [], [0], [3, 4]]");
    let long = j(
        "2 * ?var * float64",
        &format!(
            "[[{}], null]",
            (0..300)
                .map(|i| ((i * 37) % 101).to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    );
    let (d, dz, dp) = (
        x.to_device(dev).unwrap(),
        z.to_device(dev).unwrap(),
        p.to_device(dev).unwrap(),
    );
    // Both computed (not refused alike), and equal.
    let computed = |what: &str, h: dynd::Result<Array>, g: dynd::Result<Array>, on: DeviceId| {
        assert!(h.is_ok(), "{what} on the host: {h:?}");
        same_outcome(what, h, g, on);
    };
    let one = Array::from(1i32);
    computed("x + 1", compute::add(x, &one), compute::add(&d, &one), dev);
    computed(
        "x * z",
        compute::multiply(x, &z),
        compute::multiply(&d, &dz),
        dev,
    );
    computed(
        "x - p",
        compute::subtract(x, &p),
        compute::subtract(&d, &dp),
        dev,
    );
    computed(
        "p - x",
        compute::subtract(&p, x),
        compute::subtract(&dp, &d),
        dev,
    );
    let (hm, dm) = (
        compute::greater(x, &one).unwrap(),
        compute::greater(&d, &one).unwrap(),
    );
    computed(
        "filter(x, x > 1)",
        compute::filter(x, &hm),
        compute::filter(&d, &dm),
        dev,
    );
    computed(
        "where(x > 1, x, z)",
        compute::where_(&hm, x, &z),
        compute::where_(&dm, &d, &dz),
        dev,
    );
    for name in ["sort", "argsort", "cumsum", "cumprod", "negative"] {
        let f = callable::lookup(name).unwrap();
        for (what, h) in [
            ("x", x),
            ("z", &z),
            ("long", &long),
            ("reversed x", &rev(x)),
        ] {
            let dh = h.to_device(dev).unwrap();
            computed(
                &format!("{name}({what})"),
                f.call(&[h]),
                f.call(&[&dh]),
                dev,
            );
        }
    }
    let sum = callable::lookup("sum").unwrap();
    same_outcome("sum", sum.call(&[x]), sum.call(&[&d]), dev);
    assert!(sum.call(&[x]).is_err());
}

/// Indexing within nested rows (`[fixed dims] * var * var * T`) on the
/// device equals the host's: an integer and slices of the outer rows and
/// of the inner rows (reversed too), after indices of the fixed dims, on
/// views (reversed, sliced: inner rows no outer row reaches), errors
/// included; what is computed on a selection after.
pub fn nested_selection_equals_the_host(dev: DeviceId) {
    let j = |tp: &str, json: &str| Array::from_json(tp, json).unwrap();
    let xs = [
        j(
            "3 * var * var * int32",
            "[[[1, 2], [], [3]], [], [[4, 5, 6], [7]]]",
        ),
        j(
            "3 * var * var * int32",
            "[[[1, 2], [8], [3]], [[9]], [[4, 5, 6], [7]]]",
        ),
        j(
            "2 * 2 * var * var * ?float64",
            "[[[[1.5, null]], []], [[[2.5], [null, 3.5, 4.5]], [[0.5]]]]",
        ),
        // Row 0's inner rows are empty: a view of the others does not
        // reach them.
        j("3 * var * var * int64", "[[[], [1]], [[2, 3]], [[4]]]"),
    ];
    let a = Index::ALL;
    let s = |lo: Option<isize>, step: isize| Index::slice(lo, None, step);
    let mut compared = 0;
    for x in &xs {
        let views = [
            ("", x.clone()),
            ("[::-1]", x.index(&[s(None, -1)]).unwrap()),
            ("[1:]", x.index(&[s(Some(1), 1)]).unwrap()),
        ];
        for (view, h) in views {
            let d = h.to_device(dev).unwrap();
            let k = h.tp().to_string().matches(" * ").count() - 2;
            let at = |tail: &[Index]| -> Vec<Index> {
                let mut v = vec![a; k];
                v.extend_from_slice(tail);
                v
            };
            for (what, ix) in [
                ("[.., 0]", at(&[Index::At(0)])),
                ("[.., -1]", at(&[Index::At(-1)])),
                ("[.., 1:]", at(&[s(Some(1), 1)])),
                ("[.., ::-1]", at(&[s(None, -1)])),
                ("[.., :, 0]", at(&[a, Index::At(0)])),
                ("[.., :, -1]", at(&[a, Index::At(-1)])),
                ("[.., :, 1:]", at(&[a, s(Some(1), 1)])),
                ("[.., :, ::-1]", at(&[a, s(None, -1)])),
                ("[.., 1:, 0]", at(&[s(Some(1), 1), Index::At(0)])),
                ("[.., ::-1, 1:]", at(&[s(None, -1), s(Some(1), 1)])),
                ("[0, .., :, 0]", {
                    let mut v = vec![Index::At(0)];
                    v.extend(vec![a; k]);
                    v.truncate(k);
                    v.extend([a, Index::At(0)]);
                    v
                }),
            ] {
                let name = format!("{}{view}{what}", x.tp());
                let (hs, ds) = (h.index(&ix), d.index(&ix));
                // What the device computes next on a selection.
                if let (Ok(hs), Ok(ds)) = (&hs, &ds) {
                    same_outcome(
                        &format!("{name} + 1"),
                        compute::add(hs, &Array::from(1i8)),
                        compute::add(ds, &Array::from(1i8)),
                        dev,
                    );
                }
                same_outcome(&name, hs, ds, dev);
                compared += 1;
            }
        }
    }
    assert_eq!(compared, 4 * 3 * 11);
}

/// Several nested device arrays (`[fixed dims] * var * var * T`) in one
/// call — the arithmetic functions, `where`, `filter` by a nested mask,
/// `take` by nested indices — equal the host's: arrays of the same rows,
/// views laid out alike or otherwise (packed first), inner rows of 1
/// broadcasting, errors (inner rows that do not broadcast, a mask row of
/// another length, an index out of range); outer rows of other lengths
/// are the host's error, or a `Type` error where the host broadcasts them.
pub fn nested_calls_equal_the_host(dev: DeviceId) {
    let j = |tp: &str, json: &str| Array::from_json(tp, json).unwrap();
    let x = j(
        "3 * var * var * int32",
        "[[[1, 2], [], [3]], [], [[4, 5, 6], [7]]]",
    );
    let y = j(
        "3 * var * var * int32",
        "[[[5, 0], [], [9]], [], [[1, 1, 2], [8]]]",
    );
    let ones = j(
        "3 * var * var * float64",
        "[[[0.5], [], [2.5]], [], [[1.5], [3]]]",
    );
    let idx = j(
        "3 * var * var * int64",
        "[[[1, 0, -1], [], []], [], [[2], [0, 0]]]",
    );
    let far = j("3 * var * var * int64", "[[[2], [], []], [], [[2], [0]]]");
    let other = j(
        "3 * var * var * int32",
        "[[[1, 2], [], [3, 4]], [], [[4, 5, 6], [7]]]",
    );
    let outer1 = j("3 * var * var * int32", "[[[1]], [], [[4]]]");
    let outer2 = j(
        "3 * var * var * int32",
        "[[[1, 2], [3]], [], [[4, 5, 6], [7]]]",
    );
    let rev = |a: &Array| a.index(&[Index::slice(None, None, -1)]).unwrap();
    let m = compute::greater(&x, &Array::from(2i32)).unwrap();
    let cases: Vec<(&str, &str, Vec<Array>)> = vec![
        ("add", "x, y", vec![x.clone(), y.clone()]),
        ("multiply", "x, rows of 1", vec![x.clone(), ones.clone()]),
        ("greater", "x, y", vec![x.clone(), y.clone()]),
        ("add", "x[::-1], y[::-1]", vec![rev(&x), rev(&y)]),
        (
            "subtract",
            "x[::-1], packed y[::-1]",
            vec![rev(&x), rev(&y).copy().unwrap()],
        ),
        (
            "where",
            "m, x, 0",
            vec![m.clone(), x.clone(), Array::from(0i32)],
        ),
        ("where", "m, x, y", vec![m.clone(), x.clone(), y.clone()]),
        ("filter", "x, m", vec![x.clone(), m.clone()]),
        ("filter", "x[::-1], m[::-1]", vec![rev(&x), rev(&m)]),
        ("take", "x, idx", vec![x.clone(), idx.clone()]),
        ("floor_divide", "x, y (a zero)", vec![x.clone(), y.clone()]),
        (
            "add",
            "x, inner rows of other lengths",
            vec![x.clone(), other.clone()],
        ),
        (
            "filter",
            "x, a mask of other lengths",
            vec![
                x.clone(),
                compute::greater(&other, &Array::from(2i32)).unwrap(),
            ],
        ),
        (
            "take",
            "x, an index out of range",
            vec![x.clone(), far.clone()],
        ),
        (
            "add",
            "x, outer rows of other lengths",
            vec![x.clone(), outer2.clone()],
        ),
    ];
    for (name, what, args) in &cases {
        let f = callable::lookup(name).unwrap();
        let h: Vec<&Array> = args.iter().collect();
        // Host scalars stay on the host.
        let d: Vec<Array> = args
            .iter()
            .map(|a| {
                if a.ndim() == 0 {
                    a.clone()
                } else {
                    a.to_device(dev).unwrap()
                }
            })
            .collect();
        let dr: Vec<&Array> = d.iter().collect();
        let what = format!("{name}({what})");
        match (f.call(&h), f.call(&dr)) {
            (Ok(e), Ok(g)) => {
                assert_eq!(g.device(), dev, "{what}");
                assert_eq!(e.tp(), g.tp(), "{what}");
                assert_eq!(e.to_json(), g.to_host().unwrap().to_json(), "{what}");
            }
            (Err(e), Err(g)) => {
                assert_eq!(e.kind(), g.kind(), "{what}: {e} / {g}");
                assert!(g.message().contains(e.message()), "{what}: {e} / {g}");
            }
            (e, g) => panic!("{what}: host {e:?}, device {g:?}"),
        }
    }
    // concatenate: of nested arrays, views too (outer rows reversed: packed
    // first); beside a ragged array, refused by name.
    let cat = callable::lookup("concatenate").unwrap();
    let inner_rev = x
        .index(&[Index::ALL, Index::slice(None, None, -1)])
        .unwrap();
    for (what, args) in [
        ("x, y", vec![x.clone(), y.clone()]),
        ("x, x[::-1], y", vec![x.clone(), rev(&x), y.clone()]),
        ("x, x[:, ::-1]", vec![x.clone(), inner_rev.clone()]),
        (
            "x[1:], ones",
            vec![
                x.index(&[Index::slice(Some(1), None, 1)]).unwrap(),
                ones.clone(),
            ],
        ),
    ] {
        let h: Vec<&Array> = args.iter().collect();
        let d: Vec<Array> = args.iter().map(|a| a.to_device(dev).unwrap()).collect();
        let dr: Vec<&Array> = d.iter().collect();
        same_outcome(
            &format!("concatenate({what})"),
            cat.call(&h),
            cat.call(&dr),
            dev,
        );
    }
    // A device view whose outer rows run backwards (packed first).
    let dx = x.to_device(dev).unwrap();
    let drev = dx
        .index(&[Index::ALL, Index::slice(None, None, -1)])
        .unwrap();
    assert_eq!(drev.nested_layout().unwrap().levels[0].1, -16);
    same_outcome(
        "concatenate(x, device x[:, ::-1])",
        cat.call(&[&x, &inner_rev]),
        cat.call(&[&dx, &drev]),
        dev,
    );
    let flat = j("2 * var * int32", "[[1], []]").to_device(dev).unwrap();
    let e = cat.call(&[&x.to_device(dev).unwrap(), &flat]).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Type), "{e}");
    // Outer rows of 1 beside longer ones broadcast (every array expanded
    // to the common outer rows), both ways round, in where and filter too.
    let (dx, d1) = (x.to_device(dev).unwrap(), outer1.to_device(dev).unwrap());
    same_outcome(
        "x + outer rows of 1",
        compute::add(&x, &outer1),
        compute::add(&dx, &d1),
        dev,
    );
    same_outcome(
        "outer rows of 1 - x",
        compute::subtract(&outer1, &x),
        compute::subtract(&d1, &dx),
        dev,
    );
    let m1 = compute::greater(&outer1, &Array::from(2i32)).unwrap();
    let dm1 = m1.to_device(dev).unwrap();
    same_outcome(
        "where(outer rows of 1, x, y)",
        compute::where_(&m1, &x, &y),
        compute::where_(&dm1, &dx, &y.to_device(dev).unwrap()),
        dev,
    );
}

/// Assignments into nested device arrays and outputs given on nested var
/// dims, against the host doing the same on host copies: a host scalar,
/// nested rows converted, rows of 1 broadcasting at either level, rows of
/// other lengths (the host's error), a view of some outer rows (the rows
/// it does not reach are left alone), elementwise calls and sorts into an
/// output of the result's rows, in place too.
pub fn nested_outputs_equal_the_host(dev: DeviceId) {
    use dynd::kernels::assign::ErrorMode;
    let on = |h: &Array| h.to_device(dev).unwrap();
    let check = |what: &str,
                 arrays: &[&Array],
                 watch: &dyn Fn(&[Array]) -> Vec<Array>,
                 run: &dyn Fn(&[Array]) -> dynd::Result<()>| {
        let h: Vec<Array> = arrays.iter().map(|a| a.copy().unwrap()).collect();
        let d: Vec<Array> = arrays.iter().map(|a| on(a)).collect();
        let (hw, dw) = (watch(&h), watch(&d));
        match (run(&h), run(&d)) {
            (Ok(()), Ok(())) => {
                for (e, g) in hw.iter().chain(&h).zip(dw.iter().chain(&d)) {
                    assert_eq!(e.to_json(), g.to_host().unwrap().to_json(), "{what}");
                }
            }
            (Err(e), Err(g)) => {
                assert_eq!(e.kind(), g.kind(), "{what}: {e} / {g}");
                assert!(g.message().contains(e.message()), "{what}: {e} / {g}");
            }
            (e, g) => panic!("{what}: host {e:?}, device {g:?}"),
        }
    };
    let none = |_: &[Array]| Vec::new();
    let j = |tp: &str, json: &str| Array::from_json(tp, json).unwrap();
    let x = j(
        "3 * var * var * int32",
        "[[[1, 2], [], [3]], [], [[4, 5, 6], [7]]]",
    );
    let xf = j(
        "3 * var * var * float64",
        "[[[5, 0], [], [9]], [], [[1, 1, 2], [8]]]",
    );
    let ones = j(
        "3 * var * var * float64",
        "[[[0.5], [], [2.5]], [], [[1.5], [3]]]",
    );
    let outer1 = j("3 * var * var * float64", "[[[0.5, 1]], [], [[1.5]]]");
    let other = j(
        "3 * var * var * int32",
        "[[[1, 2], [], [3, 4]], [], [[4, 5, 6], [7]]]",
    );
    let assign = |a: &[Array]| a[0].assign(&a[1], ErrorMode::Default);
    check("x ← 7", &[&x], &none, &|a| {
        a[0].assign(&Array::from(7.0f64), ErrorMode::Default)
    });
    check("x ← float64 rows", &[&x, &xf], &none, &assign);
    check("x ← inner rows of 1", &[&x, &ones], &none, &|a| {
        a[0].assign(&a[1], ErrorMode::NoCheck)
    });
    check("x ← outer rows of 1", &[&x, &outer1], &none, &|a| {
        a[0].assign(&a[1], ErrorMode::NoCheck)
    });
    check("x ← rows of other lengths", &[&x, &other], &none, &assign);
    check("x ← 2.5 (fails the mode)", &[&x], &none, &|a| {
        a[0].assign(&Array::from(2.5f64), ErrorMode::Fractional)
    });
    // A view of the last two outer rows: the first is left alone.
    let views = std::cell::RefCell::new(Vec::new());
    check(
        "x[1:] ← 0",
        &[&x],
        &|a| {
            let v = a[0].index(&[Index::slice(Some(1), None, 1)]).unwrap();
            views.borrow_mut().push(v.clone());
            vec![v]
        },
        &|_| {
            let v = views.borrow_mut().remove(0);
            v.assign(&Array::from(0i32), ErrorMode::Default)
        },
    );
    // Outputs given: elementwise into rows of the result's, in place too;
    // a sort; rows of other lengths; another type.
    let add = callable::lookup("add").unwrap();
    check(
        "add(x, 1) into other rows",
        &[&x, &x.copy().unwrap()],
        &none,
        &|a| add.call_into(&a[1], &[&a[0], &Array::from(1i32)]),
    );
    check("add(x, x) in place", &[&x], &none, &|a| {
        add.call_into(&a[0], &[&a[0], &a[0]])
    });
    check(
        "add(x, 1) into rows of other lengths",
        &[&x, &other],
        &none,
        &|a| add.call_into(&a[1], &[&a[0], &Array::from(1i32)]),
    );
    let sort = callable::lookup("sort").unwrap();
    check(
        "sort(x) into rows of its lengths",
        &[&x, &x.copy().unwrap()],
        &none,
        &|a| sort.call_into(&a[1], &[&a[0]]),
    );
    // Row results into outer rows of other lengths: the host's error; into
    // inner rows of other lengths (which the host replaces): a device
    // values block cannot grow, and the device says so.
    let inner_other = j(
        "3 * var * var * int32",
        "[[[9], [9, 9, 9], []], [], [[9], [9, 9]]]",
    );
    let outer_other = j("3 * var * var * int32", "[[[9]], [], [[9], [9]]]");
    let cumsum = callable::lookup("cumsum").unwrap();
    check(
        "sort(x) into outer rows of other lengths",
        &[&x, &outer_other],
        &none,
        &|a| sort.call_into(&a[1], &[&a[0]]),
    );
    let t = cumsum.resolve(&[x.tp().clone()]).unwrap();
    let o64 = outer_other.cast(t, ErrorMode::NoCheck).unwrap();
    check(
        "cumsum(x) into outer rows of other lengths",
        &[&x, &o64],
        &none,
        &|a| cumsum.call_into(&a[1], &[&a[0]]),
    );
    assert!(sort.call_into(&inner_other.copy().unwrap(), &[&x]).is_ok());
    let e = sort.call_into(&on(&inner_other), &[&on(&x)]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Type, "{e}");
    assert!(
        e.message().contains("must have the result's row lengths"),
        "{e}"
    );
    let e = add
        .call_into(&on(&xf), &[&on(&x), &Array::from(1i32)])
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Type, "{e}");
}

/// Three and four var levels (`N * var * var * var * T`, …) on the device:
/// they round-trip, and what runs on the innermost rows — the elementwise
/// functions with host scalars, the row operations, the reductions over
/// axis -1 — equals the host's (every level above moved onto the
/// result), on a reversed view too; other reductions say what runs.
pub fn deep_nested_equal_the_host(dev: DeviceId) {
    use dynd::callable::reduce::{BuiltinReduction, Reduction};
    let j = |tp: &str, json: &str| Array::from_json(tp, json).unwrap();
    let xs = [
        j(
            "2 * var * var * var * int32",
            "[[[[1, 2], []], [], [[3], [4, 5, 6]]], [[[7]], [[], [8, 9]]]]",
        ),
        j(
            "3 * var * var * var * ?float64",
            "[[[[1.5, null], [2]]], [], [[[], [null]], [[3, -1, 0.5]]]]",
        ),
        j(
            "2 * var * var * var * var * int16",
            "[[[[[1], [2, 3]], [[]]], []], [[[[4, 5]]]]]",
        ),
    ];
    let mut compared = 0;
    for h in &xs {
        for h in [h.clone(), h.index(&[Index::slice(None, None, -1)]).unwrap()] {
            let d = h.to_device(dev).unwrap();
            assert_eq!(d.to_host().unwrap().to_json(), h.to_json(), "{}", h.tp());
            let name = h.tp().to_string();
            for (what, f, args) in [
                ("x + 2", "add", vec![Array::from(2i8)]),
                ("x > 0", "greater", vec![Array::from(0.0f64)]),
                ("-x", "negative", vec![]),
                ("sort", "sort", vec![]),
                ("cumsum", "cumsum", vec![]),
            ] {
                let f = callable::lookup(f).unwrap();
                let mut ha = vec![&h];
                ha.extend(args.iter());
                let mut da = vec![&d];
                da.extend(args.iter());
                same_outcome(&format!("{what} of {name}"), f.call(&ha), f.call(&da), dev);
                compared += 1;
            }
            for kind in [
                BuiltinReduction::Sum,
                BuiltinReduction::Max,
                BuiltinReduction::ArgMin,
                BuiltinReduction::Mean,
                BuiltinReduction::Count,
            ] {
                reduction_equals_the_host(dev, &h, "deep", kind, Some(&[-1]), false);
                compared += 1;
            }
            let e = Reduction::builtin(BuiltinReduction::Sum)
                .with(Some(&[-2]), false)
                .call(&[&d])
                .unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Type, "{e}");
            assert!(e.message().contains("axis -1"), "{e}");
        }
    }
    assert_eq!(compared, 3 * 2 * 10);
}
