//! Writing kernels in Rust: the [`Kernel`] trait, and the generic
//! trampolines that turn an implementation into the ABI's `extern "C"`
//! functions and destructor.
//!
//! A kernel of type `K` is stored as a [`Node<K>`]: the prefix, then `K`
//! itself. The trampolines cast the prefix pointer back to the node, call
//! the trait method, and translate: `Ok` to status 0, `Err` to -1 with the
//! error in the thread-local slot, a panic to -1 with an `External` error.

use super::prefix::{
    CKernelPrefix, Destructor, ExprSingle, ExprStrided, KERNEL_ALIGN, KernelRef, KernelRequest,
};
use crate::error::{Error, Result, set_last_error};
use smallvec::SmallVec;
use std::any::Any;
use std::mem::{offset_of, size_of};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::ptr::NonNull;

/// A ckernel written in Rust: a plain struct holding the kernel's data.
///
/// Kernels are built into a [`CKernelBuilder`](super::CKernelBuilder) with
/// [`emplace`](super::CKernelBuilder::emplace) and called through the ABI's
/// function pointers; they take the kernel by shared reference and may run on
/// many threads at once, so they keep no scratch in the kernel (use the
/// stack, per call).
///
/// The struct is moved with the builder's buffer by `memcpy`, which every
/// Rust value survives. It must not hold a pointer into the buffer: it
/// reaches its children by offset ([`Kernel::child_offsets`],
/// [`KernelRef::child`]). It may own heap resources (a `Box`, an `Arc`): the
/// destructor drops it exactly once.
pub trait Kernel: Send + Sync + 'static {
    /// The number of sources (`n` in the prototypes; 1 for unary kernels).
    const NSRC: usize;

    /// Computes one destination element from `src` (`NSRC` pointers).
    /// `k` is this kernel's own handle, for reaching its children.
    ///
    /// # Safety
    /// 1. `dst` is a writable element and each `src[i]` a readable one, of
    ///    the types and arrmeta this kernel was built for.
    /// 2. `k` is the handle of the node holding `self`.
    unsafe fn single(&self, k: KernelRef<'_>, dst: *mut u8, src: &[*const u8]) -> Result<()>;

    /// Computes `run.count` destination elements from the sources of
    /// [`Strided`] `run`. The default calls [`Kernel::single`] once per
    /// element (for up to 8 sources without allocating); override it with a
    /// real loop where speed matters.
    ///
    /// # Safety
    /// 1. `run`'s ranges are valid ([`Strided`]) for the types and arrmeta
    ///    this kernel was built for.
    /// 2. `k` is the handle of the node holding `self`.
    unsafe fn strided(&self, k: KernelRef<'_>, run: Strided<'_>) -> Result<()> {
        let mut dst = run.dst;
        let mut src: SmallVec<[*const u8; 8]> = SmallVec::from_slice(run.src);
        for i in 0..run.count {
            // SAFETY: (1) element i of each range is valid; (2) same `k`.
            // A missing value assigned to a non-option names element i.
            unsafe { self.single(k, dst, &src) }
                .map_err(|e| super::assign::option::at_index(e, i))?;
            // Wrapping: past the last element the pointers are never used.
            dst = dst.wrapping_offset(run.dst_stride);
            for (p, &stride) in src.iter_mut().zip(run.src_stride) {
                *p = p.wrapping_offset(stride);
            }
        }
        Ok(())
    }

    /// The offsets of this kernel's children, relative to its own prefix
    /// (0 = not built yet, skipped). The destructor destroys each nonzero
    /// one before dropping `self`; the builder's
    /// [`emplace`](super::CKernelBuilder::emplace) states what they must
    /// point at. Leaves keep the default (none).
    ///
    /// When this is empty at `emplace` and `Self` has no drop glue, the
    /// kernel gets no destructor at all (the "trivial leaf"), so a list that
    /// starts empty must live in a type with drop glue (a `Vec`) to grow.
    fn child_offsets(&self) -> &[usize] {
        &[]
    }
}

/// The operands of one strided call: `count` destination elements
/// `dst_stride` bytes apart from `dst`, computed from the elements
/// `src_stride[i]` bytes apart from each `src[i]` (one pointer and one
/// stride per source).
///
/// The pointers are raw: a [`Kernel::strided`] implementation may rely on
/// its caller's promise that, for every `j < count`, `dst + j * dst_stride`
/// is a writable element and `src[i] + j * src_stride[i]` a readable one.
#[derive(Debug, Clone, Copy)]
pub struct Strided<'a> {
    /// The first destination element.
    pub dst: *mut u8,
    /// Bytes between destination elements.
    pub dst_stride: isize,
    /// The first element of each source.
    pub src: &'a [*const u8],
    /// Bytes between the elements of each source.
    pub src_stride: &'a [isize],
    /// The number of elements.
    pub count: usize,
}

impl<'a> Strided<'a> {
    /// One element: `dst` from `src`, strides 0 (`src_stride` must hold
    /// one zero per source).
    pub fn one(dst: *mut u8, src: &'a [*const u8], zeros: &'a [isize]) -> Strided<'a> {
        Strided {
            dst,
            dst_stride: 0,
            src,
            src_stride: zeros,
            count: 1,
        }
    }

    /// `(dst, dst_stride, src, src_stride, count)`, for a loop that names
    /// them.
    pub fn parts(self) -> (*mut u8, isize, &'a [*const u8], &'a [isize], usize) {
        (
            self.dst,
            self.dst_stride,
            self.src,
            self.src_stride,
            self.count,
        )
    }
}

/// How a `K` lies in the builder: the prefix, then the kernel data.
#[repr(C)]
pub(crate) struct Node<K> {
    pub prefix: CKernelPrefix,
    pub kernel: K,
}

impl<K: Kernel> Node<K> {
    /// The node for `kernel` built for `request`.
    ///
    /// The destructor it installs destroys the children `kernel` names, so
    /// the node must be written where [`CKernelBuilder::emplace`]'s
    /// promises hold (it is only called there).
    ///
    /// [`CKernelBuilder::emplace`]: super::CKernelBuilder::emplace
    pub fn new(kernel: K, request: KernelRequest) -> Node<K> {
        const { assert!(offset_of!(Node<K>, prefix) == 0) };
        let mut prefix = CKernelPrefix::empty();
        match request {
            KernelRequest::Single => prefix.set_single(single_trampoline::<K> as ExprSingle),
            KernelRequest::Strided => prefix.set_strided(strided_trampoline::<K> as ExprStrided),
        }
        if std::mem::needs_drop::<K>() || !kernel.child_offsets().is_empty() {
            // SAFETY: the destructor of a Node<K> is destroy_trampoline::<K>
            // (set_destructor 1).
            unsafe { prefix.set_destructor(Some(destroy_trampoline::<K> as Destructor)) };
        }
        Node { prefix, kernel }
    }
}

/// The bytes a `K` takes in the builder — prefix plus data, a multiple of
/// the pointer size — which is also the offset, relative to it, of the slot
/// [`emplace`](super::CKernelBuilder::emplace) reserves for its first child.
pub const fn kernel_size<K: Kernel>() -> usize {
    // Node<K> has pointer alignment (emplace refuses more), so its size is
    // already a multiple of KERNEL_ALIGN.
    size_of::<Node<K>>().next_multiple_of(KERNEL_ALIGN)
}

/// The node a trampoline was called for.
///
/// # Safety
/// 1. `self_` is the prefix of a constructed `Node<K>`, alive and not
///    written for `'a`.
unsafe fn node<'a, K: Kernel>(self_: *mut CKernelPrefix) -> (&'a K, KernelRef<'a>) {
    // SAFETY: (1) non-null, a live Node<K> that is only read.
    unsafe {
        let ptr = NonNull::new_unchecked(self_);
        (
            &(*ptr.as_ptr().cast::<Node<K>>()).kernel,
            KernelRef::from_raw(ptr),
        )
    }
}

/// `K::single` behind the [`ExprSingle`] prototype.
///
/// # Safety
/// The prototype's contract: `self_` is a `Node<K>` built for Single,
/// `src` holds `K::NSRC` pointers, and the data pointers satisfy
/// [`Kernel::single`].
unsafe extern "C" fn single_trampoline<K: Kernel>(
    dst: *mut u8,
    src: *const *const u8,
    self_: *mut CKernelPrefix,
) -> i32 {
    report(catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: the caller passes the Node<K> this function was installed in.
        let (kernel, k) = unsafe { node::<K>(self_) };
        // SAFETY: the caller passes K::NSRC source pointers.
        let src = unsafe { sources(src, K::NSRC) };
        // SAFETY: the data pointers are the caller's (single 1); `k` is the
        // node's own handle (single 2).
        unsafe { kernel.single(k, dst, src) }
    })))
}

/// `K::strided` behind the [`ExprStrided`] prototype.
///
/// # Safety
/// The prototype's contract: `self_` is a `Node<K>` built for Strided,
/// `src` and `src_stride` hold `K::NSRC` entries, and the data ranges
/// satisfy [`Kernel::strided`].
unsafe extern "C" fn strided_trampoline<K: Kernel>(
    dst: *mut u8,
    dst_stride: isize,
    src: *const *const u8,
    src_stride: *const isize,
    count: usize,
    self_: *mut CKernelPrefix,
) -> i32 {
    report(catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: the caller passes the Node<K> this function was installed in.
        let (kernel, k) = unsafe { node::<K>(self_) };
        // SAFETY: the caller passes K::NSRC pointers and strides.
        let (src, src_stride) = unsafe { (sources(src, K::NSRC), sources(src_stride, K::NSRC)) };
        let run = Strided {
            dst,
            dst_stride,
            src,
            src_stride,
            count,
        };
        // SAFETY: the data ranges are the caller's (strided 1); `k` is the
        // node's own handle (strided 2).
        unsafe { kernel.strided(k, run) }
    })))
}

/// Destroys a `Node<K>`: its children (nonzero child offsets), then the
/// kernel data. A panic in a `Drop` is caught and swallowed — a destructor
/// has nowhere to report it — leaking whatever was not dropped yet.
///
/// # Safety
/// [`Destructor`]'s contract: `self_` is a constructed `Node<K>`, owned by
/// the caller and not used again.
unsafe extern "C" fn destroy_trampoline<K: Kernel>(self_: *mut CKernelPrefix) {
    let result = catch_unwind(AssertUnwindSafe(|| {
        let node = self_.cast::<Node<K>>();
        // SAFETY: a live Node<K>; the borrow ends before the drop below.
        let children = unsafe { (*node).kernel.child_offsets() };
        for &offset in children {
            if offset != 0 {
                // SAFETY: a child offset names a slot of this kernel's child
                // that is empty or constructed (emplace 2), owned by this
                // kernel and destroyed only here.
                unsafe { CKernelPrefix::destroy(self_.byte_add(offset)) };
            }
        }
        // SAFETY: the kernel data is live and owned; it is dropped once.
        unsafe { std::ptr::drop_in_place(&raw mut (*node).kernel) };
    }));
    if let Err(payload) = result {
        forget_payload(payload);
    }
}

/// `n` pointers (or strides) at `ptr` as a slice; empty for `n == 0`, when
/// `ptr` may be null.
///
/// # Safety
/// 1. When `n > 0`, `ptr` points at `n` initialised values that live and
///    stay unwritten for `'a`.
unsafe fn sources<'a, T>(ptr: *const T, n: usize) -> &'a [T] {
    if n == 0 {
        return &[];
    }
    // SAFETY: (1).
    unsafe { std::slice::from_raw_parts(ptr, n) }
}

/// A trampoline's status: 0 for `Ok`, -1 with the error recorded otherwise.
#[inline]
fn report(result: std::thread::Result<Result<()>>) -> i32 {
    match result {
        Ok(Ok(())) => 0,
        Ok(Err(error)) => {
            set_last_error(&error);
            -1
        }
        Err(payload) => {
            let error = Error::external(format!("a kernel panicked: {}", panic_message(&*payload)));
            forget_payload(payload);
            set_last_error(&error);
            -1
        }
    }
}

fn panic_message(payload: &(dyn Any + Send)) -> &str {
    if let Some(s) = payload.downcast_ref::<&str>() {
        s
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s
    } else {
        "(no message)"
    }
}

/// Drops a panic payload, whose own `Drop` could panic again; that second
/// panic must not unwind out of an `extern "C"` function either.
fn forget_payload(payload: Box<dyn Any + Send>) {
    if let Err(second) = catch_unwind(AssertUnwindSafe(move || drop(payload))) {
        std::mem::forget(second);
    }
}
