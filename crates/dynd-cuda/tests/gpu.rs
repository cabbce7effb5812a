//! Tests on a CUDA device. Without one each prints
//! `SKIP: no CUDA device (<reason>)` and passes; `DYND_REQUIRE_GPU=1`
//! (scripts/gpu-check.sh sets it) makes that a failure. The last test
//! checks the no-device behaviour and runs everywhere.

use dynd::callable::{self, arith};
use dynd::memblock::DeviceId;
use dynd::types::BuiltinType;
use dynd::{Array, ErrorKind, Index, compute};
use dynd_cuda::kernel::device_types;
use dynd_cuda::{nvrtc, probe};

/// An array of `dims` over `b` (`?b` with every third element missing
/// when `optional`), its values from `seed`.
fn host(b: BuiltinType, dims: &[usize], optional: bool, seed: i64) -> Array {
    let n: i64 = dims.iter().product::<usize>().max(1) as i64;
    let vals: Vec<(i64, bool)> = (1..=n)
        .map(|i| ((i * 7 + seed) % 11 - 5, i % 3 == 1))
        .collect();
    crate::common::array(b, optional, dims, &vals)
}

const GPU: DeviceId = DeviceId::Cuda(0);

/// Installs the runtime, or says why the test skips.
fn gpu() -> bool {
    if probe::skip_without_device().is_some() {
        return false;
    }
    dynd_cuda::install().expect("a device is present, so install succeeds");
    true
}

#[test]
fn arrays_round_trip_through_the_device() {
    if !gpu() {
        return;
    }
    for b in device_types() {
        for optional in [false, true] {
            let a = host(b, &[4, 5], optional, 3);
            let d = a.to_device(GPU).unwrap();
            assert_eq!(d.device(), GPU);
            assert_eq!(d.to_host().unwrap().to_json(), a.to_json(), "{b}");
            // Views stay views on the device.
            let v = d
                .index(&[Index::slice(None, None, -1), Index::slice(Some(1), None, 2)])
                .unwrap();
            let hv = a
                .index(&[Index::slice(None, None, -1), Index::slice(Some(1), None, 2)])
                .unwrap();
            assert_eq!(v.device(), GPU);
            assert_eq!(v.to_host().unwrap().to_json(), hv.to_json(), "{b}");
        }
    }
    // Large: 100 MB each way.
    let big = Array::from((0..12_500_000).map(|i| i as f64).collect::<Vec<_>>());
    let back = big.to_device(GPU).unwrap().to_host().unwrap();
    assert!(back == big);
}

#[test]
fn every_function_on_every_type_equals_the_host() {
    if !gpu() {
        return;
    }
    let (mut compared, mut refused) = (0, 0);
    for f in arith::functions() {
        for ta in device_types() {
            for tb in device_types() {
                let a = host(ta, &[3, 4], true, 1);
                let b = host(tb, &[4], false, 2);
                let args: Vec<Array> = if f.arity() == 1 { vec![a] } else { vec![a, b] };
                let hrefs: Vec<&Array> = args.iter().collect();
                let expected = callable::lookup(f.name()).unwrap().call(&hrefs);
                let devs: Vec<Array> = args.iter().map(|x| x.to_device(GPU).unwrap()).collect();
                let drefs: Vec<&Array> = devs.iter().collect();
                let got = callable::lookup(f.name()).unwrap().call(&drefs);
                match (expected, got) {
                    (Ok(e), Ok(g)) => {
                        assert_eq!(g.device(), GPU);
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
    assert!(compared > 1500, "compared {compared}, refused {refused}");
}

/// The values of a float array in C order, missing ones as NaN.
fn floats(a: &Array) -> Vec<f64> {
    a.to_json()
        .replace(['[', ']'], "")
        .split(',')
        .map(|s| s.trim().parse::<f64>().unwrap_or(f64::NAN))
        .collect()
}

#[test]
fn device_errors_are_the_hosts_with_the_index() {
    if !gpu() {
        return;
    }
    let a = Array::from_json("2 * 3 * int32", "[[1,2,3],[4,5,6]]")
        .unwrap()
        .to_device(GPU)
        .unwrap();
    let b = Array::from_json("3 * int32", "[1,0,3]")
        .unwrap()
        .to_device(GPU)
        .unwrap();
    let e = compute::divide(&a, &b).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.message().contains("division by zero"), "{e}");
    assert!(e.message().contains("[0, 1]"), "{e}");
    // A missing dividend over a zero divisor is no error.
    let m = Array::from_json("3 * ?int32", "[1,null,3]")
        .unwrap()
        .to_device(GPU)
        .unwrap();
    let ok = compute::divide(&m, &b).unwrap();
    assert_eq!(ok.to_json(), "[1,null,1]");
}

#[test]
fn a_second_identical_call_compiles_nothing() {
    if !gpu() {
        return;
    }
    let a = Array::from(vec![1.0f64; 1000]).to_device(GPU).unwrap();
    let b = Array::from(vec![2.0f64; 1000]).to_device(GPU).unwrap();
    compute::multiply(&a, &b).unwrap();
    let before = nvrtc::compiles();
    let c = Array::from(vec![3.0f64; 5000]).to_device(GPU).unwrap();
    let r = compute::multiply(&c, &c).unwrap();
    assert_eq!(nvrtc::compiles(), before);
    assert_eq!(r.index(&[Index::At(4999)]).unwrap().to_json(), "9.0");
}

#[test]
fn mixing_devices_and_host_only_callables_are_refused() {
    if !gpu() {
        return;
    }
    let d = Array::from(vec![1.0f64, 2.0]).to_device(GPU).unwrap();
    let h = Array::from(vec![1.0f64, 2.0]);
    let e = compute::add(&d, &h).unwrap_err();
    assert!(e.message().contains("mixes devices"), "{e}");
    // A host scalar is fine.
    let r = compute::add(&d, &Array::from(0.5f64)).unwrap();
    assert_eq!(r.to_json(), "[1.5,2.5]");
    // Not on the device yet: a Type error saying so.
    let e = compute::sum(&d, None, false).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Type);
    assert!(e.message().contains("does not run on the device"), "{e}");
}

#[test]
fn without_a_device_install_says_why() {
    if let Err(reason) = probe::devices() {
        assert!(!dynd_cuda::is_available());
        assert_eq!(dynd_cuda::device_count(), 0);
        let e = dynd_cuda::install().unwrap_err();
        assert_eq!(e.kind(), ErrorKind::External);
        assert_eq!(e.message(), reason);
        let e = Array::from(vec![1i32]).to_device(GPU).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::External);
    } else {
        assert!(dynd_cuda::is_available());
        assert!(dynd_cuda::device_count() >= 1);
    }
}

#[test]
fn where_on_the_device_equals_the_host() {
    if !gpu() {
        return;
    }
    for tc in device_types() {
        for tx in device_types() {
            let cond = host(tc, &[4], true, 3);
            let x = host(tx, &[3, 4], true, 1);
            let y = Array::from(0.5f64);
            let expected = compute::where_(&cond, &x, &y);
            let (dc, dx) = (cond.to_device(GPU).unwrap(), x.to_device(GPU).unwrap());
            let got = compute::where_(&dc, &dx, &y);
            match (expected, got) {
                (Ok(e), Ok(g)) => {
                    assert_eq!(g.device(), GPU);
                    assert_eq!(e.to_json(), g.to_json(), "where({tc}, {tx}, 0.5)");
                }
                (Err(_), Err(g)) => assert!(g.message().contains("on the device"), "{g}"),
                (e, g) => panic!("where({tc}, {tx}): host {e:?}, device {g:?}"),
            }
        }
    }
}
