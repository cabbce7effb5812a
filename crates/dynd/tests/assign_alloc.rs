//! Building a scalar or 1-d strided assignment kernel allocates nothing,
//! and neither does calling it (a counting global allocator watches).

mod common;

use common::{scalar, whole, with_assign_kernel};
use dynd::kernels::KernelRequest::{Single, Strided};
use dynd::kernels::assign::ErrorMode;
use dynd::{Array, Type};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

struct Counting;
thread_local! { static COUNT: Cell<usize> = const { Cell::new(0) }; }

// SAFETY: forwards to the system allocator, only counting calls.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        COUNT.with(|c| c.set(c.get() + 1));
        // SAFETY: forwarded with the caller's layout.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        // SAFETY: forwarded.
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        COUNT.with(|c| c.set(c.get() + 1));
        // SAFETY: forwarded.
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocations<R>(f: impl FnOnce() -> R) -> (R, usize) {
    let before = COUNT.with(Cell::get);
    let r = f();
    (r, COUNT.with(Cell::get) - before)
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
