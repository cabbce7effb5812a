//! Building a scalar or 1-d strided assignment kernel allocates nothing,
//! and neither does calling it (the test binary's counting global allocator watches).

use crate::common;

use common::{scalar, whole, with_assign_kernel};
use dynd::kernels::KernelRequest::{Single, Strided};
use dynd::kernels::assign::ErrorMode;
use dynd::{Array, Type};

/// Runs `f`; returns its result and how many allocations it made on this
/// thread.
fn allocations<R>(f: impl FnOnce() -> R) -> (R, usize) {
    let (n, r) = common::alloc::allocations(f);
    (r, n)
}

#[test]
fn scalar_and_strided_kernels_build_and_run_without_allocating() {
    let dst =
        Array::from_json("1000 * int32", &format!("[{}]", vec!["0"; 1000].join(","))).unwrap();
    let src = Array::from_json(
        "1000 * float64",
        &format!("[{}]", vec!["2"; 1000].join(",")),
    )
    .unwrap();
    let (f64_t, i32_t) = (Type::float64(), Type::int32());
    for mode in ErrorMode::ALL {
        // A scalar kernel, built and called single and strided.
        let ((), n) = allocations(|| {
            with_assign_kernel(scalar(&i32_t), scalar(&f64_t), Strided, mode, |k| {
                // SAFETY: built for Strided on int32 <- float64, 1000 elements.
                unsafe { k.call_strided(dst.data_ptr(), 4, &[src.data_ptr()], &[8], 1000) }
            })
            .unwrap()
            .unwrap();
        });
        assert_eq!(n, 0, "scalar kernel in mode {mode}");
        // A 1-d kernel over the arrays' own types and arrmeta.
        let ((), n) = allocations(|| {
            with_assign_kernel(whole(&dst), whole(&src), Single, mode, |k| {
                // SAFETY: built for Single on the arrays' data.
                unsafe { k.call_single(dst.data_ptr(), &[src.data_ptr()]) }
            })
            .unwrap()
            .unwrap();
        });
        assert_eq!(n, 0, "1-d kernel in mode {mode}");
    }
    assert!(dst.to_json().starts_with("[2,2,2"));
}
