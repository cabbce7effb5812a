//! Tests on a CUDA device. Without one each prints
//! `SKIP: no CUDA device (<reason>)` and passes; `DYND_REQUIRE_GPU=1`
//! (scripts/gpu-check.sh sets it) makes that a failure. The checks are
//! the `checks` module's, which the `emulated` tests also run on the host
//! emulator; the last test checks the no-device behaviour and runs
//! everywhere.

use crate::checks;
use dynd::memblock::DeviceId;
use dynd::types::BuiltinType;
use dynd::{Array, ErrorKind, Index, compute};
use dynd_cuda::kernel::device_types;
use dynd_cuda::{nvrtc, probe};

const GPU: DeviceId = DeviceId::Cuda(0);

/// Runs `check` once per device type, each type on a thread of its own:
/// every type's kernels compile with NVRTC (CPU time), so a sweep over
/// every type takes the device machine's cores together instead of one
/// after another. A failing type fails the test (after every type ended).
/// `DYND_GPU_TESTS_SERIAL=1` takes the types one after another on the
/// test's thread (scripts/gpu-check.sh sets it under compute-sanitizer,
/// which lost track of launches from many threads at once).
fn per_type(check: impl Fn(&[BuiltinType]) + Sync) {
    let types: Vec<BuiltinType> = device_types().collect();
    if std::env::var_os("DYND_GPU_TESTS_SERIAL").is_some_and(|v| v == "1") {
        for t in &types {
            check(std::slice::from_ref(t));
        }
        return;
    }
    std::thread::scope(|s| {
        for t in &types {
            let check = &check;
            s.spawn(move || check(std::slice::from_ref(t)));
        }
    });
}

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
    if gpu() {
        checks::arrays_round_trip(GPU);
    }
}

#[test]
fn every_function_on_every_type_equals_the_host() {
    if gpu() {
        per_type(|t| checks::every_function_on_every_type(GPU, Some(t)));
    }
}

#[test]
fn device_errors_are_the_hosts_with_the_index() {
    if gpu() {
        checks::errors_are_the_hosts_with_the_index(GPU);
    }
}

#[test]
fn mixing_devices_is_refused() {
    if gpu() {
        checks::mixing_devices_is_refused(GPU);
    }
}

#[test]
fn where_on_the_device_equals_the_host() {
    if gpu() {
        checks::where_equals_the_host(GPU);
    }
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

/// Freed device memory is kept by the device's pool and handed to the
/// next allocation of its rounded size; `empty_cache` gives it back.
/// (Named `a_second_…`: scripts/gpu-check.sh runs these alone, since the
/// pool is the process's.)
#[test]
fn a_second_allocation_of_a_size_takes_the_freed_block() {
    if !gpu() {
        return;
    }
    let dev = dynd_cuda::runtime::device(0).unwrap();
    dev.empty_cache();
    let a = Array::from(vec![1.5f64; 300_000]).to_device(GPU).unwrap();
    let addr = a.data_ptr() as usize;
    drop(a);
    let cached = dev.cached();
    assert_eq!(cached.blocks, 1, "{cached:?}");
    assert_eq!(cached.bytes, dynd_cuda::pool::rounded(2_400_000));
    // A near size rounds alike: the same block, holding the new values.
    let b = Array::from(vec![2.5f64; 299_999]).to_device(GPU).unwrap();
    assert_eq!(b.data_ptr() as usize, addr);
    assert_eq!(dev.cached().blocks, 0);
    assert_eq!(
        b.index(&[Index::At(299_998)])
            .unwrap()
            .to_host()
            .unwrap()
            .to_json(),
        "2.5"
    );
    drop(b);
    assert!(dev.empty_cache() >= 2_400_000);
    assert_eq!(
        dev.cached(),
        dynd_cuda::pool::Stats {
            bytes: 0,
            blocks: 0
        }
    );
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
fn reductions_equal_the_host() {
    if gpu() {
        per_type(|t| checks::reductions_equal_the_host(GPU, Some(t)));
    }
}

#[test]
fn casts_equal_the_host() {
    if gpu() {
        let all: Vec<BuiltinType> = device_types().collect();
        per_type(|t| checks::casts_from_equal_the_host(GPU, t, &all));
    }
}

#[test]
fn assignments_broadcast_and_fail_as_on_the_host() {
    if gpu() {
        checks::assignments_broadcast_and_fail_as_on_the_host(GPU);
    }
}

#[test]
fn ops_fuse_and_equal_the_host() {
    if gpu() {
        checks::ops_fuse_and_equal_the_host(GPU);
    }
}

#[test]
fn reductions_of_each_plan() {
    if gpu() {
        checks::reductions_of_each_plan(GPU);
    }
}

/// The fused expression at the device's speed: `a * b + c` over 10⁸
/// float64 through the dynd-ops `Cuda` executor (one kernel) and through
/// two dynd calls, checked against the host on a sample; the times are
/// printed for docs/performance.md (bench/gpu_compare.py has the table
/// against CuPy), not asserted.
#[test]
fn fused_a_times_b_plus_c_at_memory_speed() {
    use dynd_ops::DeviceView;
    if !gpu() {
        return;
    }
    let n = 100_000_000usize;
    let v = |k: f64| {
        Array::from((0..n).map(|i| (i % 1000) as f64 * k).collect::<Vec<_>>())
            .to_device(GPU)
            .unwrap()
    };
    let (a, b, c) = (v(0.5), v(0.25), v(2.0));
    let view = |x: &Array| DeviceView::<f64, [usize; 1]>::new(x).unwrap();
    let (da, db, dc) = (view(&a), view(&b), view(&c));
    let cuda = dynd_cuda::ops::Cuda::new(0);
    let out = Array::empty_on(GPU, "100000000 * float64").unwrap();
    cuda.assign(&out, &(&da * &db + &dc)).unwrap();
    let time = |f: &dyn Fn()| {
        let t = std::time::Instant::now();
        for _ in 0..10 {
            f();
        }
        t.elapsed().as_secs_f64() / 10.0
    };
    let fused = time(&|| cuda.assign(&out, &(&da * &db + &dc)).unwrap());
    let calls = time(&|| {
        compute::add(&compute::multiply(&a, &b).unwrap(), &c).unwrap();
    });
    let gb = 4.0 * 8.0 * n as f64 / 1e9;
    println!(
        "BENCH a*b+c over 1e8 float64: dynd-ops Cuda (fused) {:.3} ms ({:.0} GB/s); two dynd calls {:.3} ms",
        fused * 1e3,
        gb / fused,
        calls * 1e3
    );
    let i = 123_457;
    let x = (i % 1000) as f64;
    let got = out.index(&[Index::At(i as isize)]).unwrap().to_json();
    assert_eq!(got.parse::<f64>().unwrap(), x * 0.5 * (x * 0.25) + x * 2.0);
}

#[test]
fn overlapping_outputs_read_a_copy() {
    if gpu() {
        checks::overlapping_outputs_read_a_copy(GPU);
    }
}

#[test]
fn ragged_reductions_equal_the_host() {
    if gpu() {
        per_type(|t| checks::ragged_reductions_equal_the_host(GPU, Some(t)));
    }
}

#[test]
fn ragged_reductions_over_fixed_axes_equal_the_host() {
    if gpu() {
        use BuiltinType as B;
        let types = [B::Int32, B::Int64, B::Float32, B::Float64];
        std::thread::scope(|s| {
            for t in &types {
                s.spawn(move || {
                    checks::ragged_reductions_over_fixed_axes_equal_the_host(
                        GPU,
                        Some(std::slice::from_ref(t)),
                    );
                });
            }
        });
    }
}

#[test]
fn ragged_elementwise_equals_the_host() {
    if gpu() {
        per_type(|t| checks::ragged_elementwise_equals_the_host(GPU, Some(t)));
    }
}

#[test]
fn ragged_rows_equal_the_host() {
    if gpu() {
        per_type(|t| checks::ragged_rows_equal_the_host(GPU, Some(t)));
    }
}

#[test]
fn ragged_selection_equals_the_host() {
    if gpu() {
        per_type(|t| checks::ragged_selection_equals_the_host(GPU, Some(t)));
    }
}

#[test]
fn ragged_extremes_equal_the_host() {
    if gpu() {
        checks::ragged_extremes_equal_the_host(GPU);
    }
}

#[test]
fn ragged_kernels_once() {
    if gpu() {
        checks::ragged_kernels_once(GPU);
    }
}

#[test]
fn ragged_broadcasting_equals_the_host() {
    if gpu() {
        per_type(|t| checks::ragged_broadcasting_equals_the_host(GPU, Some(t)));
    }
}

#[test]
fn concatenate_equals_the_host() {
    if gpu() {
        checks::concatenate_equals_the_host(GPU);
    }
}

#[test]
fn long_rows_equal_the_host() {
    if gpu() {
        per_type(|t| checks::long_rows_equal_the_host(GPU, Some(t)));
    }
}

#[test]
fn many_long_rows_equal_the_host() {
    if gpu() {
        per_type(|t| checks::many_long_rows_equal_the_host(GPU, Some(t)));
    }
}

#[test]
fn nested_equal_the_host() {
    if gpu() {
        per_type(|t| checks::nested_equal_the_host(GPU, Some(t)));
    }
}

#[test]
fn records_with_var_fields_equal_the_host() {
    if gpu() {
        checks::records_with_var_fields_equal_the_host(GPU);
    }
}

#[test]
fn ragged_outputs_equal_the_host() {
    if gpu() {
        checks::ragged_outputs_equal_the_host(GPU);
    }
}

#[test]
fn option_rows_equal_the_host() {
    if gpu() {
        checks::option_rows_equal_the_host(GPU);
    }
}

#[test]
fn nested_selection_equals_the_host() {
    if gpu() {
        checks::nested_selection_equals_the_host(GPU);
    }
}

#[test]
fn nested_calls_equal_the_host() {
    if gpu() {
        checks::nested_calls_equal_the_host(GPU);
    }
}

#[test]
fn nested_outputs_equal_the_host() {
    if gpu() {
        checks::nested_outputs_equal_the_host(GPU);
    }
}

#[test]
fn deep_nested_equal_the_host() {
    if gpu() {
        checks::deep_nested_equal_the_host(GPU);
    }
}
