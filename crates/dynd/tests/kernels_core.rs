//! The ckernel core end to end: each construction pattern of the DyND
//! ckernel notes (trivial leaf, leaf with data, leaf owning a resource, one
//! child, a dim kernel over a strided child), kernels written "in C" (only
//! the prefix known), failure halfway through construction, errors and
//! panics, calls from several threads at once, and no heap allocation for
//! small kernels (the test binary's global allocator counts them).

use crate::common;
use common::alloc::allocations as allocations_in;
use common::assert_error;

use dynd::error::{clear_last_error, set_last_error};
use dynd::kernels::{
    CKernelBuilder, CKernelPrefix, Kernel, KernelRef, KernelRequest, Strided, kernel_size,
};
use dynd::{Error, ErrorKind, Result};
use std::mem::size_of;
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

// ---------------------------------------------------------------------------
// Helpers.

/// Counts its own drop: put one in a kernel to see it freed exactly once.
struct Tracker(Arc<AtomicUsize>);

impl Tracker {
    fn new(drops: &Arc<AtomicUsize>) -> Tracker {
        Tracker(drops.clone())
    }
}

impl Drop for Tracker {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

fn counter() -> Arc<AtomicUsize> {
    Arc::new(AtomicUsize::new(0))
}

fn drops(c: &Arc<AtomicUsize>) -> usize {
    c.load(Ordering::SeqCst)
}

fn ptr<T>(x: &T) -> *const u8 {
    (x as *const T).cast()
}

fn mut_ptr<T>(x: &mut T) -> *mut u8 {
    (x as *mut T).cast()
}

/// Element `i` of `s`, as a byte pointer that may walk the whole slice.
fn elem<T>(s: &[T], i: usize) -> *const u8 {
    s.as_ptr().wrapping_add(i).cast()
}

/// Element `i` of `s`, writable, as a byte pointer that may walk the slice.
fn elem_mut<T>(s: &mut [T], i: usize) -> *mut u8 {
    s.as_mut_ptr().wrapping_add(i).cast()
}

/// A pointer-aligned byte buffer for unaligned and offset views.
fn byte_buffer(len: usize) -> Vec<u64> {
    vec![0u64; len.div_ceil(8) + 1]
}

// ---------------------------------------------------------------------------
// Kernels: one per construction pattern.

/// A one-source strided run, element by element: `f(dst, src)` for each.
///
/// # Safety
/// 1. The run's elements are valid (as [`Kernel::strided`] promises), and
///    `f` may be called with any of them.
unsafe fn each_element(
    run: Strided<'_>,
    mut f: impl FnMut(*mut u8, *const u8) -> Result<()>,
) -> Result<()> {
    let (dst, dst_stride, src, src_stride, count) = run.parts();
    let (mut d, mut s) = (dst, src[0]);
    for _ in 0..count {
        f(d, s)?;
        d = d.wrapping_offset(dst_stride);
        s = s.wrapping_offset(src_stride[0]);
    }
    Ok(())
}

/// Trivial leaf: `dst = src` for int32. No data, no destructor.
struct CopyI32;

impl Kernel for CopyI32 {
    const NSRC: usize = 1;

    unsafe fn single(&self, _k: KernelRef<'_>, dst: *mut u8, src: &[*const u8]) -> Result<()> {
        // SAFETY: int32 elements (single 1), maybe unaligned.
        unsafe {
            dst.cast::<i32>()
                .write_unaligned(src[0].cast::<i32>().read_unaligned())
        };
        Ok(())
    }

    unsafe fn strided(&self, k: KernelRef<'_>, run: Strided<'_>) -> Result<()> {
        // SAFETY: (strided 1), each element in turn.
        unsafe { each_element(run, |d, s| self.single(k, d, &[s])) }
    }
}

/// Leaf with data: `dst = src * factor` for float64.
struct Scale {
    factor: f64,
}

impl Kernel for Scale {
    const NSRC: usize = 1;

    unsafe fn single(&self, _k: KernelRef<'_>, dst: *mut u8, src: &[*const u8]) -> Result<()> {
        // SAFETY: float64 elements (single 1), maybe unaligned.
        unsafe {
            let x = src[0].cast::<f64>().read_unaligned();
            dst.cast::<f64>().write_unaligned(x * self.factor);
        }
        Ok(())
    }

    unsafe fn strided(&self, k: KernelRef<'_>, run: Strided<'_>) -> Result<()> {
        // SAFETY: (strided 1), each element in turn.
        unsafe { each_element(run, |d, s| self.single(k, d, &[s])) }
    }
}

/// Leaf owning resources (the "JIT handle" pattern): `dst = src + *add` for
/// int32, with a boxed addend and a drop tracker.
struct AddBoxed {
    add: Box<i32>,
    _tracker: Tracker,
}

impl Kernel for AddBoxed {
    const NSRC: usize = 1;

    unsafe fn single(&self, _k: KernelRef<'_>, dst: *mut u8, src: &[*const u8]) -> Result<()> {
        // SAFETY: int32 elements (single 1).
        unsafe {
            let x = src[0].cast::<i32>().read_unaligned();
            dst.cast::<i32>().write_unaligned(x + *self.add);
        }
        Ok(())
    }
}

/// Binary leaf with the default strided loop: `dst = a + b` for float64.
struct AddF64;

impl Kernel for AddF64 {
    const NSRC: usize = 2;

    unsafe fn single(&self, _k: KernelRef<'_>, dst: *mut u8, src: &[*const u8]) -> Result<()> {
        // SAFETY: float64 elements (single 1).
        unsafe {
            let (a, b) = (
                src[0].cast::<f64>().read_unaligned(),
                src[1].cast::<f64>().read_unaligned(),
            );
            dst.cast::<f64>().write_unaligned(a + b);
        }
        Ok(())
    }
}

/// One child (the "pointer[T] → T" pattern): follows the source pointer,
/// then runs its single child on the target. Optionally owns a tracker.
struct Deref {
    child: [usize; 1],
    _tracker: Option<Tracker>,
}

impl Kernel for Deref {
    const NSRC: usize = 1;

    unsafe fn single(&self, k: KernelRef<'_>, dst: *mut u8, src: &[*const u8]) -> Result<()> {
        // SAFETY: the source element is a pointer to the child's source type.
        let target = unsafe { src[0].cast::<*const u8>().read_unaligned() };
        // SAFETY: child[0] is this kernel's child, built for Single; `target`
        // and `dst` are elements of its types.
        unsafe { k.child(self.child[0]).call_single(dst, &[target]) }
    }

    fn child_offsets(&self) -> &[usize] {
        &self.child
    }
}

/// A dim kernel over a strided child: one call of the child's strided
/// function per row of a 2-D array. The outer dim's size and strides are
/// here; the inner dim's are passed to the child.
struct Rows {
    rows: usize,
    dst_row_stride: isize,
    src_row_stride: isize,
    cols: usize,
    dst_col_stride: isize,
    src_col_stride: isize,
    child: [usize; 1],
}

impl Kernel for Rows {
    const NSRC: usize = 1;

    unsafe fn single(&self, k: KernelRef<'_>, dst: *mut u8, src: &[*const u8]) -> Result<()> {
        // SAFETY: child[0] is this kernel's child, built for Strided.
        let child = unsafe { k.child(self.child[0]) };
        for i in 0..self.rows as isize {
            let d = dst.wrapping_offset(i * self.dst_row_stride);
            let s = src[0].wrapping_offset(i * self.src_row_stride);
            // SAFETY: (single 1) `dst` and `src` are 2-D arrays with these
            // strides, so row i's elements are valid.
            unsafe {
                child.call_strided(
                    d,
                    self.dst_col_stride,
                    &[s],
                    &[self.src_col_stride],
                    self.cols,
                )
            }?;
        }
        Ok(())
    }

    fn child_offsets(&self) -> &[usize] {
        &self.child
    }
}

/// A `Rows` of `rows` × `cols` elements; each side's strides are
/// `[between rows, between columns]`.
fn rows(rows: usize, cols: usize, dst_strides: [isize; 2], src_strides: [isize; 2]) -> Rows {
    Rows {
        rows,
        dst_row_stride: dst_strides[0],
        src_row_stride: src_strides[0],
        cols,
        dst_col_stride: dst_strides[1],
        src_col_stride: src_strides[1],
        child: [kernel_size::<Rows>()],
    }
}

/// A strided parent that chains its strided child through a bounded stack
/// buffer, chunk by chunk: `dst = child(src) + add` for float64. No scratch
/// in the kernel, so it runs on many threads at once.
struct PlusAfter {
    add: f64,
    child: [usize; 1],
}

impl Kernel for PlusAfter {
    const NSRC: usize = 1;

    unsafe fn single(&self, k: KernelRef<'_>, dst: *mut u8, src: &[*const u8]) -> Result<()> {
        // SAFETY: one element is a strided range of one (single 1 = strided 1).
        unsafe { self.strided(k, Strided::one(dst, src, &[0])) }
    }

    unsafe fn strided(&self, k: KernelRef<'_>, run: Strided<'_>) -> Result<()> {
        let (dst, dst_stride, src, src_stride, count) = run.parts();
        const CHUNK: usize = 64;
        let mut tmp = [0f64; CHUNK];
        // SAFETY: child[0] is this kernel's child, always built for Strided.
        let child = unsafe { k.child(self.child[0]) };
        let mut done = 0;
        while done < count {
            let n = CHUNK.min(count - done);
            let s = src[0].wrapping_offset(done as isize * src_stride[0]);
            // SAFETY: source elements done..done+n are valid (strided 1);
            // `tmp` holds n float64s contiguously.
            unsafe { child.call_strided(tmp.as_mut_ptr().cast(), 8, &[s], &[src_stride[0]], n) }?;
            for (j, t) in tmp[..n].iter().enumerate() {
                let d = dst.wrapping_offset((done + j) as isize * dst_stride);
                // SAFETY: destination element done + j is valid (strided 1).
                unsafe { d.cast::<f64>().write_unaligned(t + self.add) };
            }
            done += n;
        }
        Ok(())
    }

    fn child_offsets(&self) -> &[usize] {
        &self.child
    }
}

/// Fails with an overflow error on values above `limit` (int32 → int32).
struct Checked {
    limit: i32,
}

impl Kernel for Checked {
    const NSRC: usize = 1;

    unsafe fn single(&self, _k: KernelRef<'_>, dst: *mut u8, src: &[*const u8]) -> Result<()> {
        // SAFETY: int32 elements (single 1).
        let x = unsafe { src[0].cast::<i32>().read_unaligned() };
        if x > self.limit {
            return Err(Error::overflow(format!(
                "value {x} is above the limit {}",
                self.limit
            )));
        }
        // SAFETY: int32 elements (single 1).
        unsafe { dst.cast::<i32>().write_unaligned(x) };
        Ok(())
    }
}

/// Panics: the trampoline must turn it into an error.
struct Panics;

impl Kernel for Panics {
    const NSRC: usize = 0;

    unsafe fn single(&self, _k: KernelRef<'_>, _dst: *mut u8, _src: &[*const u8]) -> Result<()> {
        panic!("kernel bug on purpose")
    }
}

/// A parent with two children, whose second child's offset is only known
/// once the first is built (so it is recorded afterwards).
struct Pair {
    children: [usize; 2],
    _tracker: Tracker,
}

impl Kernel for Pair {
    const NSRC: usize = 1;

    unsafe fn single(&self, k: KernelRef<'_>, dst: *mut u8, src: &[*const u8]) -> Result<()> {
        for &child in &self.children {
            // SAFETY: both are this kernel's Single children on the same
            // element types (single 1).
            unsafe { k.child(child).call_single(dst, src) }?;
        }
        Ok(())
    }

    fn child_offsets(&self) -> &[usize] {
        &self.children
    }
}

// ---------------------------------------------------------------------------
// A kernel written "in C": only the prefix layout is shared with Rust.

#[repr(C)]
struct CAddConst {
    base: CKernelPrefix,
    add: i32,
    /// Set to return -1 without setting an error.
    fail_silently: i32,
    destroyed: *const AtomicUsize,
}

unsafe extern "C" fn c_add_single(
    dst: *mut u8,
    src: *const *const u8,
    self_: *mut CKernelPrefix,
) -> i32 {
    let k = self_.cast::<CAddConst>();
    // SAFETY: the ABI contract: `self_` is this kernel, `src` holds one
    // pointer to an int32, `dst` is an int32.
    unsafe {
        if (*k).fail_silently != 0 {
            return -1;
        }
        let x = (*src).cast::<i32>().read_unaligned();
        dst.cast::<i32>().write_unaligned(x + (*k).add);
    }
    0
}

unsafe extern "C" fn c_add_destroy(self_: *mut CKernelPrefix) {
    // SAFETY: `self_` is a CAddConst whose counter outlives the kernel.
    unsafe { (*(*self_.cast::<CAddConst>()).destroyed).fetch_add(1, Ordering::SeqCst) };
}

/// A C-style factory: ensure capacity through the raw builder, write the
/// struct, return the offset past it.
///
/// # Safety
/// 1. `ckb` is a live, pinned builder used by nothing else during the call.
/// 2. `offset` is a free slot; `destroyed` outlives the kernel.
unsafe fn make_c_add(
    ckb: *mut CKernelBuilder,
    offset: usize,
    add: i32,
    fail_silently: bool,
    destroyed: &AtomicUsize,
) -> Result<usize> {
    let end = offset + size_of::<CAddConst>();
    // SAFETY: (1).
    unsafe { CKernelBuilder::ensure_capacity_leaf_raw(ckb, end as isize) }?;
    // SAFETY: (1); `end` bytes fit, and the buffer is pointer-aligned.
    unsafe {
        let k = CKernelBuilder::raw_data(ckb)
            .add(offset)
            .cast::<CAddConst>();
        (*k).base.set_single(c_add_single);
        (*k).add = add;
        (*k).fail_silently = fail_silently as i32;
        (*k).destroyed = destroyed;
        // set_destructor 1: c_add_destroy destroys exactly a CAddConst.
        (*k).base.set_destructor(Some(c_add_destroy));
    }
    Ok(end)
}

// ---------------------------------------------------------------------------
// Factories in the DyND shape: (builder, offset, request) → offset past.

/// Emplaces `parent` at `offset`, then has `make_child` build its one child
/// in the slot just past it.
///
/// # Safety
/// 1. `offset` is a free slot of `ckb`.
/// 2. `parent.child_offsets()` is `[kernel_size::<K>()]` (or `[0]`).
unsafe fn make_with_child<K: Kernel>(
    mut ckb: Pin<&mut CKernelBuilder>,
    offset: usize,
    request: KernelRequest,
    parent: K,
    make_child: impl FnOnce(Pin<&mut CKernelBuilder>, usize) -> Result<usize>,
) -> Result<usize> {
    // SAFETY: (1); (2) the child offset names the first child slot, which
    // emplace reserves.
    let at = unsafe { ckb.as_mut().emplace(offset, request, parent) }?;
    make_child(ckb, at)
}

/// # Safety
/// 1. `offset` is a free slot of `ckb`.
unsafe fn make_deref(
    ckb: Pin<&mut CKernelBuilder>,
    offset: usize,
    request: KernelRequest,
    tracker: Option<Tracker>,
    make_child: impl FnOnce(Pin<&mut CKernelBuilder>, usize) -> Result<usize>,
) -> Result<usize> {
    let parent = Deref {
        child: [kernel_size::<Deref>()],
        _tracker: tracker,
    };
    // SAFETY: (1); the parent's child is its first child slot.
    unsafe { make_with_child(ckb, offset, request, parent, make_child) }
}

/// A [`Deref`] for single calls whose drop counts in `drops`.
///
/// # Safety
/// 1. `offset` is a free slot of `ckb`.
unsafe fn tracked_deref(
    ckb: Pin<&mut CKernelBuilder>,
    offset: usize,
    drops: &Arc<AtomicUsize>,
    make_child: impl FnOnce(Pin<&mut CKernelBuilder>, usize) -> Result<usize>,
) -> Result<usize> {
    let tracker = Some(Tracker::new(drops));
    // SAFETY: (1).
    unsafe { make_deref(ckb, offset, KernelRequest::Single, tracker, make_child) }
}

/// # Safety
/// 1. `offset` is a free slot of `ckb`.
unsafe fn make_copy_i32(
    ckb: Pin<&mut CKernelBuilder>,
    offset: usize,
    request: KernelRequest,
) -> Result<usize> {
    // SAFETY: (1); a leaf names no children.
    unsafe { ckb.emplace(offset, request, CopyI32) }
}

/// A factory that finds no kernel for its types and builds nothing.
fn no_kernel_for(_ckb: Pin<&mut CKernelBuilder>, offset: usize) -> Result<usize> {
    Err(Error::type_error(format!(
        "no kernel for the child at offset {offset}"
    )))
}

// ---------------------------------------------------------------------------
// Construction patterns.

#[test]
fn trivial_leaf_is_just_a_prefix() {
    for request in [KernelRequest::Single, KernelRequest::Strided] {
        let mut ckb = pin!(CKernelBuilder::new());
        // SAFETY: 0 is a free slot of a new builder.
        let end = unsafe { make_copy_i32(ckb.as_mut(), 0, request) }.unwrap();
        assert_eq!(end, size_of::<CKernelPrefix>(), "no data after the prefix");
        let prefix = ckb.root().prefix();
        assert!(!prefix.function().is_null());
        assert!(prefix.destructor().is_none(), "nothing to destroy");
        assert!(ckb.is_inline());
    }

    let mut ckb = pin!(CKernelBuilder::new());
    // SAFETY: 0 is a free slot.
    unsafe { make_copy_i32(ckb.as_mut(), 0, KernelRequest::Strided) }.unwrap();
    // Contiguous, strided, reversed and unaligned views of the same data.
    let src: Vec<i32> = (0..10).map(|i| i * 7 - 3).collect();
    let mut dst = vec![0i32; 10];
    // SAFETY: built for Strided; 10 int32s on both sides.
    unsafe { ckb.call_strided(elem_mut(&mut dst, 0), 4, &[elem(&src, 0)], &[4], 10) }.unwrap();
    assert_eq!(dst, src);
    let mut dst = vec![0i32; 5];
    // SAFETY: every second source element, 5 of them.
    unsafe { ckb.call_strided(elem_mut(&mut dst, 0), 4, &[elem(&src, 0)], &[8], 5) }.unwrap();
    assert_eq!(dst, [-3, 11, 25, 39, 53]);
    let mut dst = vec![0i32; 10];
    // SAFETY: the source walked backwards from its last element.
    unsafe { ckb.call_strided(elem_mut(&mut dst, 0), 4, &[elem(&src, 9)], &[-4], 10) }.unwrap();
    assert_eq!(dst, src.iter().rev().copied().collect::<Vec<_>>());
    let mut raw = byte_buffer(41);
    let base = elem_mut(&mut raw, 0);
    // SAFETY: 10 int32s at byte offset 1 (unaligned) fit in 41 bytes.
    unsafe { ckb.call_strided(base.wrapping_add(1), 4, &[elem(&src, 0)], &[4], 10) }.unwrap();
    let mut back = vec![0i32; 10];
    // SAFETY: read them back from the unaligned position.
    unsafe {
        ckb.call_strided(
            elem_mut(&mut back, 0),
            4,
            &[base.wrapping_add(1).cast_const()],
            &[4],
            10,
        )
    }
    .unwrap();
    assert_eq!(back, src);
}

#[test]
fn leaf_with_data_multiplies() {
    let mut single = pin!(CKernelBuilder::new());
    let mut strided = pin!(CKernelBuilder::new());
    // SAFETY: 0 is a free slot of each builder; leaves name no children.
    unsafe {
        let end = single
            .as_mut()
            .emplace(0, KernelRequest::Single, Scale { factor: 2.5 })
            .unwrap();
        assert_eq!(end, 24);
        strided
            .as_mut()
            .emplace(0, KernelRequest::Strided, Scale { factor: -0.5 })
            .unwrap();
    }
    // SAFETY: a Scale was emplaced at 0.
    assert_eq!(unsafe { single.kernel::<Scale>(0) }.unwrap().factor, 2.5);
    let mut y = 0.0f64;
    // SAFETY: built for Single, float64 in and out.
    unsafe { single.call_single(mut_ptr(&mut y), &[ptr(&4.0f64)]) }.unwrap();
    assert_eq!(y, 10.0);

    let src: Vec<f64> = (0..9).map(f64::from).collect();
    let mut dst = vec![0.0f64; 9];
    // SAFETY: built for Strided; 9 float64s each side.
    unsafe { strided.call_strided(elem_mut(&mut dst, 0), 8, &[elem(&src, 0)], &[8], 9) }.unwrap();
    assert_eq!(dst, src.iter().map(|x| x * -0.5).collect::<Vec<_>>());
    // Broadcasting one source element (stride 0) into a strided output.
    let mut dst = vec![1.0f64; 6];
    // SAFETY: 3 destination elements at stride 16 fit in 6 float64s.
    unsafe { strided.call_strided(elem_mut(&mut dst, 0), 16, &[elem(&src, 4)], &[0], 3) }.unwrap();
    assert_eq!(dst, [-2.0, 1.0, -2.0, 1.0, -2.0, 1.0]);
    // Offset, unaligned output.
    let mut raw = byte_buffer(3 + 9 * 8);
    let base = elem_mut(&mut raw, 0).wrapping_add(3);
    // SAFETY: 9 float64s from byte 3 fit.
    unsafe { strided.call_strided(base, 8, &[elem(&src, 0)], &[8], 9) }.unwrap();
    for (i, x) in src.iter().enumerate() {
        // SAFETY: inside the buffer.
        let got = unsafe { base.add(i * 8).cast::<f64>().read_unaligned() };
        assert_eq!(got, x * -0.5);
    }
}

#[test]
fn leaf_owning_a_resource_is_freed_exactly_once() {
    let freed = counter();
    {
        let mut ckb = pin!(CKernelBuilder::new());
        let kernel = AddBoxed {
            add: Box::new(100),
            _tracker: Tracker::new(&freed),
        };
        // SAFETY: 0 is a free slot; a leaf names no children.
        unsafe { ckb.as_mut().emplace(0, KernelRequest::Single, kernel) }.unwrap();
        assert!(ckb.root().prefix().destructor().is_some());
        let mut y = 0i32;
        // SAFETY: built for Single, int32 in and out.
        unsafe { ckb.call_single(mut_ptr(&mut y), &[ptr(&5i32)]) }.unwrap();
        assert_eq!(y, 105);
        // Growing moves the kernel by memcpy: not a drop.
        ckb.as_mut().ensure_capacity_leaf(10_000).unwrap();
        assert!(!ckb.is_inline());
        assert_eq!(drops(&freed), 0);
        // SAFETY: built for Single, int32 in and out.
        unsafe { ckb.call_single(mut_ptr(&mut y), &[ptr(&-5i32)]) }.unwrap();
        assert_eq!(y, 95);
        // Reset frees it; a second kernel is freed when the builder drops.
        ckb.as_mut().reset();
        assert_eq!(drops(&freed), 1);
        let kernel = AddBoxed {
            add: Box::new(1),
            _tracker: Tracker::new(&freed),
        };
        // SAFETY: 0 is a free slot of a reset builder.
        unsafe { ckb.as_mut().emplace(0, KernelRequest::Single, kernel) }.unwrap();
        assert_eq!(drops(&freed), 1);
    }
    assert_eq!(drops(&freed), 2);
}

#[test]
fn binary_leaf_uses_the_default_strided_loop() {
    let mut ckb = pin!(CKernelBuilder::new());
    // SAFETY: 0 is a free slot.
    unsafe { ckb.as_mut().emplace(0, KernelRequest::Strided, AddF64) }.unwrap();
    let a = [1.0f64, 2.0, 3.0, 4.0];
    let b = [10.0f64, 20.0, 30.0, 40.0];
    let mut out = [0.0f64; 4];
    // SAFETY: built for Strided with two float64 sources; 4 elements.
    unsafe {
        ckb.call_strided(
            elem_mut(&mut out, 0),
            8,
            &[elem(&a, 0), elem(&b, 3)],
            &[8, -8],
            4,
        )
    }
    .unwrap();
    assert_eq!(out, [41.0, 32.0, 23.0, 14.0]);
    // SAFETY: count 0 touches nothing.
    unsafe {
        ckb.call_strided(
            std::ptr::null_mut(),
            8,
            &[std::ptr::null(), std::ptr::null()],
            &[8, 8],
            0,
        )
    }
    .unwrap();
}

#[test]
fn one_child_pointer_indirection() {
    for request in [KernelRequest::Single, KernelRequest::Strided] {
        let mut ckb = pin!(CKernelBuilder::new());
        // SAFETY: 0 is a free slot; the child goes in the slot the parent
        // returns, which is the free slot after it.
        let end = unsafe {
            make_deref(ckb.as_mut(), 0, request, None, |ckb, at| {
                make_copy_i32(ckb, at, KernelRequest::Single)
            })
        }
        .unwrap();
        assert_eq!(end, kernel_size::<Deref>() + size_of::<CKernelPrefix>());
        assert!(ckb.is_inline());

        let values = [11i32, 22, 33];
        let pointers: Vec<*const i32> = vec![&values[2], &values[0], &values[1]];
        let mut out = [0i32; 3];
        if request == KernelRequest::Single {
            // SAFETY: built for Single; the source is a pointer to an int32.
            unsafe { ckb.call_single(elem_mut(&mut out, 0), &[elem(&pointers, 0)]) }.unwrap();
            assert_eq!(out, [33, 0, 0]);
        } else {
            // SAFETY: built for Strided; 3 pointers in, 3 int32s out.
            unsafe { ckb.call_strided(elem_mut(&mut out, 0), 4, &[elem(&pointers, 0)], &[8], 3) }
                .unwrap();
            assert_eq!(out, [33, 11, 22]);
        }
    }
}

#[test]
fn dim_kernel_over_a_strided_child_copies_2d() {
    // 3 x 4 int32, row-major.
    let src: Vec<i32> = (0..12).collect();
    let mut ckb = pin!(CKernelBuilder::new());
    let cases = [
        ("copy", rows(3, 4, [16, 4], [16, 4]), src.clone()),
        // A transpose: the 4 x 3 destination reads the source column-major.
        (
            "transpose",
            rows(4, 3, [12, 4], [4, 16]),
            vec![0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11],
        ),
    ];
    for (name, parent, want) in cases {
        ckb.as_mut().reset();
        // SAFETY: 0 is a free slot of the reset builder; the child goes in
        // the slot the parent names.
        unsafe {
            make_with_child(ckb.as_mut(), 0, KernelRequest::Single, parent, |ckb, at| {
                make_copy_i32(ckb, at, KernelRequest::Strided)
            })
        }
        .unwrap();
        let mut dst = vec![0i32; 12];
        // SAFETY: built for Single over 12 int32s on each side, which both
        // cases' strides stay within.
        unsafe { ckb.call_single(elem_mut(&mut dst, 0), &[elem(&src, 0)]) }.unwrap();
        assert_eq!(dst, want, "{name}");
    }
}

#[test]
fn a_deep_tree_grows_onto_the_heap_and_frees_every_node_once() {
    const DEPTH: usize = 20;
    let freed = counter();
    {
        let mut ckb = pin!(CKernelBuilder::new());
        // DEPTH pointer hops: int32 ← *int32 ← **int32 ...
        let mut offset = 0;
        for _ in 0..DEPTH {
            let child = [kernel_size::<Deref>()];
            let kernel = Deref {
                child,
                _tracker: Some(Tracker::new(&freed)),
            };
            // SAFETY: `offset` is the free slot the previous parent named.
            offset =
                unsafe { ckb.as_mut().emplace(offset, KernelRequest::Single, kernel) }.unwrap();
        }
        // SAFETY: the innermost parent's child slot.
        unsafe { make_copy_i32(ckb.as_mut(), offset, KernelRequest::Single) }.unwrap();
        assert!(!ckb.is_inline(), "{DEPTH} nodes outgrow 16 words");

        let value = 7i32;
        let mut chain: Vec<Box<*const u8>> = vec![Box::new(ptr(&value))];
        for _ in 1..DEPTH {
            let next = ptr(&**chain.last().unwrap());
            chain.push(Box::new(next));
        }
        let mut out = 0i32;
        // SAFETY: the source is a DEPTH-fold pointer to an int32.
        unsafe { ckb.call_single(mut_ptr(&mut out), &[ptr(&**chain.last().unwrap())]) }.unwrap();
        assert_eq!(out, 7);
        assert_eq!(drops(&freed), 0);
    }
    assert_eq!(drops(&freed), DEPTH);
}

// ---------------------------------------------------------------------------
// Kernels written in C.

#[test]
fn a_c_child_is_called_through_its_prefix() {
    let destroyed = AtomicUsize::new(0);
    {
        let mut ckb = pin!(CKernelBuilder::new());
        // SAFETY: 0 is a free slot; the C factory writes in the child slot
        // through the raw builder, which nothing else uses meanwhile.
        unsafe {
            make_deref(ckb.as_mut(), 0, KernelRequest::Single, None, |ckb, at| {
                make_c_add(ckb.as_mut_ptr(), at, 1000, false, &destroyed)
            })
        }
        .unwrap();
        let value = 5i32;
        let pointer: *const i32 = &value;
        let mut out = 0i32;
        // SAFETY: built for Single; the source is a pointer to an int32.
        unsafe { ckb.call_single(mut_ptr(&mut out), &[ptr(&pointer)]) }.unwrap();
        assert_eq!(out, 1005);
    }
    assert_eq!(
        destroyed.load(Ordering::SeqCst),
        1,
        "the parent destroyed its C child"
    );
}

#[test]
fn a_c_kernel_failing_without_an_error_is_external() {
    let destroyed = AtomicUsize::new(0);
    let mut ckb = pin!(CKernelBuilder::new());
    // SAFETY: 0 is a free slot; nothing else uses the builder meanwhile.
    unsafe { make_c_add(ckb.as_mut().as_mut_ptr(), 0, 1, true, &destroyed) }.unwrap();
    let mut out = 0i32;
    // SAFETY: built for Single with one int32 source.
    let e = unsafe { ckb.call_single(mut_ptr(&mut out), &[ptr(&1i32)]) }.unwrap_err();
    assert_error(&e, ErrorKind::External, "without setting an error");
    assert_eq!(out, 0);
}

// ---------------------------------------------------------------------------
// Errors and panics.

#[test]
fn kernel_errors_reach_the_caller_through_parents() {
    let mut ckb = pin!(CKernelBuilder::new());
    // SAFETY: 0 is a free slot; the child goes in the parent's child slot.
    unsafe {
        make_deref(ckb.as_mut(), 0, KernelRequest::Strided, None, |ckb, at| {
            ckb.emplace(at, KernelRequest::Single, Checked { limit: 10 })
        })
    }
    .unwrap();
    let values = [1i32, 5, 50, 7];
    let pointers: Vec<*const i32> = values.iter().map(|v| v as *const i32).collect();
    let mut out = [0i32; 4];
    // SAFETY: built for Strided; 4 pointers to int32 in, 4 int32 out.
    let e = unsafe { ckb.call_strided(elem_mut(&mut out, 0), 4, &[elem(&pointers, 0)], &[8], 4) }
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Overflow);
    assert_eq!(e.message(), "value 50 is above the limit 10");
    assert_eq!(
        out,
        [1, 5, 0, 0],
        "elements before the failure were written"
    );
    assert!(
        dynd::error::last_error().is_none(),
        "the caller took the error"
    );
    // SAFETY: the first two elements pass.
    unsafe { ckb.call_strided(elem_mut(&mut out, 0), 4, &[elem(&pointers, 0)], &[8], 2) }.unwrap();
}

#[test]
fn a_panic_becomes_an_error() {
    let mut ckb = pin!(CKernelBuilder::new());
    // SAFETY: 0 is a free slot.
    unsafe { ckb.as_mut().emplace(0, KernelRequest::Single, Panics) }.unwrap();
    // SAFETY: built for Single with no sources; never writes.
    let e = unsafe { ckb.call_single(std::ptr::null_mut(), &[]) }.unwrap_err();
    assert_error(&e, ErrorKind::External, "kernel bug on purpose");
    // The default strided loop panics inside the strided trampoline too.
    ckb.as_mut().reset();
    // SAFETY: 0 is a free slot of the reset builder.
    unsafe { ckb.as_mut().emplace(0, KernelRequest::Strided, Panics) }.unwrap();
    // SAFETY: built for Strided with no sources.
    let e = unsafe { ckb.call_strided(std::ptr::null_mut(), 0, &[], &[], 3) }.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::External);
}

#[test]
fn an_unbuilt_child_is_an_error_not_a_recursion() {
    let mut ckb = pin!(CKernelBuilder::new());
    // Child offset 0 means "none".
    let kernel = Deref {
        child: [0],
        _tracker: None,
    };
    // SAFETY: 0 is a free slot; a zero child offset names no slot.
    unsafe { ckb.as_mut().emplace(0, KernelRequest::Single, kernel) }.unwrap();
    let value = 1i32;
    let pointer: *const i32 = &value;
    let mut out = 0i32;
    // SAFETY: built for Single; the child call fails before touching data.
    let e = unsafe { ckb.call_single(mut_ptr(&mut out), &[ptr(&pointer)]) }.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    // A child slot that was reserved but never built (zero) is the same.
    ckb.as_mut().reset();
    // SAFETY: 0 is a free slot; the named child slot stays zero.
    unsafe { make_deref(ckb.as_mut(), 0, KernelRequest::Single, None, |_, at| Ok(at)) }.unwrap();
    // SAFETY: 0 is a free slot; the named child slot stays zero.
    let e = unsafe { ckb.call_single(mut_ptr(&mut out), &[ptr(&pointer)]) }.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
}

// ---------------------------------------------------------------------------
// Failure during construction.

#[test]
fn child_failure_frees_the_parent_once() {
    let freed = counter();
    {
        let mut ckb = pin!(CKernelBuilder::new());
        // SAFETY: 0 is a free slot; the child factory fails before writing.
        let e = unsafe { tracked_deref(ckb.as_mut(), 0, &freed, no_kernel_for) }.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Type);
        assert_eq!(
            drops(&freed),
            0,
            "the parent stays built until the builder goes"
        );
        // SAFETY: the child slot is past the only kernel built.
        let child = unsafe { ckb.prefix(kernel_size::<Deref>()) }.unwrap();
        assert!(child.is_empty(), "the unbuilt child slot is zero");
    }
    assert_eq!(drops(&freed), 1);
}

#[test]
#[cfg_attr(
    miri,
    ignore = "Miri aborts on allocation failure instead of returning null"
)]
fn child_growth_failure_frees_the_parent_once() {
    let freed = counter();
    {
        let mut ckb = pin!(CKernelBuilder::new());
        // SAFETY: 0 is a free slot; the child asks for an impossible buffer.
        let e = unsafe {
            tracked_deref(ckb.as_mut(), 0, &freed, |mut ckb, at| {
                ckb.as_mut().ensure_capacity_leaf(1 << 50)?;
                make_copy_i32(ckb, at, KernelRequest::Single)
            })
        }
        .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Alloc);
        // The failed builder can be reset and reused.
        ckb.as_mut().reset();
        assert_eq!(drops(&freed), 1);
        // SAFETY: 0 is a free slot of the reset builder.
        unsafe {
            tracked_deref(ckb.as_mut(), 0, &freed, |ckb, at| {
                make_copy_i32(ckb, at, KernelRequest::Single)
            })
        }
        .unwrap();
        let value = 3i32;
        let pointer: *const i32 = &value;
        let mut out = 0i32;
        // SAFETY: built for Single; a pointer to an int32.
        unsafe { ckb.call_single(mut_ptr(&mut out), &[ptr(&pointer)]) }.unwrap();
        assert_eq!(out, 3);
    }
    assert_eq!(drops(&freed), 2);
}

#[test]
fn grandchild_failure_frees_parent_and_child_once() {
    let (parent, child) = (counter(), counter());
    {
        let mut ckb = pin!(CKernelBuilder::new());
        // SAFETY: 0 is a free slot; each level builds in its parent's slot.
        let e = unsafe {
            tracked_deref(ckb.as_mut(), 0, &parent, |ckb, at| {
                tracked_deref(ckb, at, &child, |_, _| {
                    Err(Error::overflow("grandchild refused"))
                })
            })
        }
        .unwrap_err();
        assert_eq!(e.message(), "grandchild refused");
    }
    assert_eq!((drops(&parent), drops(&child)), (1, 1));
}

#[test]
fn second_child_failure_frees_the_first_once() {
    let (parent, first) = (counter(), counter());
    {
        let mut ckb = pin!(CKernelBuilder::new());
        let pair = Pair {
            children: [kernel_size::<Pair>(), 0],
            _tracker: Tracker::new(&parent),
        };
        // SAFETY: 0 is a free slot; the first child offset names the slot
        // emplace reserves; the second is recorded once it is known.
        let e = unsafe {
            let at = ckb
                .as_mut()
                .emplace(0, KernelRequest::Single, pair)
                .unwrap();
            let kernel = AddBoxed {
                add: Box::new(1),
                _tracker: Tracker::new(&first),
            };
            let next = ckb
                .as_mut()
                .emplace(at, KernelRequest::Single, kernel)
                .unwrap();
            // Record the second child's slot, then fail to build it.
            ckb.as_mut().kernel_mut::<Pair>(0).unwrap().children[1] = next;
            no_kernel_for(ckb.as_mut(), next).unwrap_err()
        };
        assert_eq!(e.kind(), ErrorKind::Type);
        // The two-child tree still destroys cleanly with its second slot zero.
    }
    assert_eq!((drops(&parent), drops(&first)), (1, 1));

    // Built completely, both children run in order on the same element: a
    // copy, then `src + 40` over it.
    let mut ckb = pin!(CKernelBuilder::new());
    let pair = Pair {
        children: [kernel_size::<Pair>(), 0],
        _tracker: Tracker::new(&parent),
    };
    // SAFETY: 0 is a free slot; the first child offset names the slot emplace reserves; the
    // second is recorded once it is known; here with the second child built at the recorded
    // slot.
    unsafe {
        let at = ckb
            .as_mut()
            .emplace(0, KernelRequest::Single, pair)
            .unwrap();
        let next = make_copy_i32(ckb.as_mut(), at, KernelRequest::Single).unwrap();
        ckb.as_mut().kernel_mut::<Pair>(0).unwrap().children[1] = next;
        let kernel = AddBoxed {
            add: Box::new(40),
            _tracker: Tracker::new(&first),
        };
        ckb.as_mut()
            .emplace(next, KernelRequest::Single, kernel)
            .unwrap();
    }
    let mut out = 0i32;
    // SAFETY: built for Single, int32 in and out.
    unsafe { ckb.call_single(mut_ptr(&mut out), &[ptr(&2i32)]) }.unwrap();
    assert_eq!(out, 42);
}

// ---------------------------------------------------------------------------
// Threads.

#[test]
fn one_kernel_called_from_four_threads_at_once() {
    const THREADS: usize = 4;
    const ITERATIONS: usize = if cfg!(miri) { 3 } else { 1000 };
    const LEN: usize = 257; // several chunks of PlusAfter's stack buffer
    let mut ckb = pin!(CKernelBuilder::new());
    let parent = PlusAfter {
        add: 0.5,
        child: [kernel_size::<PlusAfter>()],
    };
    // SAFETY: 0 is a free slot; the child is built Strided in its slot.
    unsafe {
        make_with_child(
            ckb.as_mut(),
            0,
            KernelRequest::Strided,
            parent,
            |ckb, at| ckb.emplace(at, KernelRequest::Strided, Scale { factor: 2.0 }),
        )
    }
    .unwrap();
    let kernel: &CKernelBuilder = &ckb;
    std::thread::scope(|scope| {
        for t in 0..THREADS {
            scope.spawn(move || {
                let mut src = vec![0.0f64; LEN];
                let mut dst = vec![0.0f64; LEN];
                for i in 0..ITERATIONS {
                    for (j, x) in src.iter_mut().enumerate() {
                        *x = (t * 1_000_000 + i * 1000 + j) as f64;
                    }
                    // SAFETY: built for Strided over float64; LEN elements
                    // of this thread's own buffers.
                    unsafe {
                        kernel.call_strided(elem_mut(&mut dst, 0), 8, &[elem(&src, 0)], &[8], LEN)
                    }
                    .unwrap();
                    for (x, y) in src.iter().zip(&dst) {
                        assert_eq!(*y, x * 2.0 + 0.5, "thread {t}, iteration {i}");
                    }
                }
            });
        }
    });
}

// ---------------------------------------------------------------------------
// No allocation on the hot path.

#[test]
fn the_allocation_counter_counts() {
    let (n, v) = allocations_in(|| vec![1u8; 100]);
    assert_eq!(n, 1);
    drop(v);
}

#[test]
fn small_kernels_build_and_run_without_allocating() {
    let (n, ()) = allocations_in(|| {
        let src = [1.5f64, 2.5, 3.5, 4.5];
        let mut dst = [0.0f64; 4];
        {
            let mut ckb = pin!(CKernelBuilder::new());
            // SAFETY: 0 is a free slot.
            unsafe {
                ckb.as_mut()
                    .emplace(0, KernelRequest::Single, Scale { factor: 2.0 })
            }
            .unwrap();
            // SAFETY: built for Single, float64 in and out.
            unsafe { ckb.call_single(elem_mut(&mut dst, 0), &[elem(&src, 0)]) }.unwrap();
            assert_eq!(dst[0], 3.0);

            ckb.as_mut().reset();
            // SAFETY: 0 is a free slot of the reset builder.
            unsafe {
                ckb.as_mut()
                    .emplace(0, KernelRequest::Strided, Scale { factor: 2.0 })
            }
            .unwrap();
            // SAFETY: built for Strided; 4 float64s each side.
            unsafe { ckb.call_strided(elem_mut(&mut dst, 0), 8, &[elem(&src, 0)], &[8], 4) }
                .unwrap();
            assert_eq!(dst, [3.0, 5.0, 7.0, 9.0]);
            assert!(ckb.is_inline());
        }
        // A two-level tree still fits inline.
        let mut ckb = pin!(CKernelBuilder::new());
        // SAFETY: 0 is a free slot; the child goes in the parent's slot.
        unsafe {
            make_deref(ckb.as_mut(), 0, KernelRequest::Strided, None, |ckb, at| {
                ckb.emplace(at, KernelRequest::Single, Scale { factor: 10.0 })
            })
        }
        .unwrap();
        assert!(ckb.is_inline());
        let pointers = [elem(&src, 3), elem(&src, 0)];
        // SAFETY: built for Strided; 2 pointers to float64 in, 2 out.
        unsafe { ckb.call_strided(elem_mut(&mut dst, 0), 8, &[elem(&pointers, 0)], &[8], 2) }
            .unwrap();
        assert_eq!(dst[..2], [45.0, 15.0]);
    });
    assert_eq!(n, 0, "building and calling small kernels allocated");
}

#[test]
fn a_stale_error_is_not_reported_for_a_new_call() {
    clear_last_error();
    set_last_error(&Error::parse("left over from elsewhere"));
    let mut ckb = pin!(CKernelBuilder::new());
    // SAFETY: 0 is a free slot.
    unsafe {
        ckb.as_mut()
            .emplace(0, KernelRequest::Single, Checked { limit: 0 })
    }
    .unwrap();
    let mut out = 0i32;
    // SAFETY: built for Single; the kernel fails before writing.
    let e = unsafe { ckb.call_single(mut_ptr(&mut out), &[ptr(&1i32)]) }.unwrap_err();
    assert_eq!(
        e.kind(),
        ErrorKind::Overflow,
        "this call's error, not the stale one"
    );
    assert!(dynd::error::last_error().is_none());
}
