//! [`CKernelBuilder`]: the memory a ckernel tree lives in (the ABI's
//! `dynd_ckernel_builder`, DESIGN §5).
//!
//! The C struct is `{data, capacity, static_data[16]}`, and `data` points at
//! `static_data` until the kernel outgrows it — the struct points into
//! itself, so it must not move once `data` is set. In Rust the builder is
//! `!Unpin` and used pinned (usually on the stack, with
//! [`std::pin::pin!`]); [`CKernelBuilder::new`] leaves `data` null, meaning
//! "inline, not pointed yet", and the first pinned use points it. C (and
//! Rust code acting for C) constructs one in place with
//! [`CKernelBuilder::construct_in_place`].
//!
//! Nothing hands out a pointer into the buffer that survives a growth: the
//! Rust API speaks in offsets, and its accessors borrow the builder.

use super::kernel::{Kernel, Node, kernel_size};
use super::prefix::{CKernelPrefix, KERNEL_ALIGN, KernelRef, KernelRequest};
use crate::error::{Error, Result, clear_last_error};
use std::alloc::Layout;
use std::marker::PhantomPinned;
use std::mem::{offset_of, size_of};
use std::pin::Pin;
use std::ptr::{self, NonNull};

/// Words in the inline buffer.
const INLINE_WORDS: usize = 16;

/// Owns a ckernel tree: a pointer-aligned, zero-filled buffer whose first
/// bytes are the root kernel's prefix. 16 words inline; larger trees move to
/// the heap (allocate, copy, free — a `memcpy` move, which kernels are built
/// to survive).
///
/// Dropping the builder (or [`CKernelBuilder::reset`]) runs the root
/// kernel's destructor, which destroys its children.
///
/// ```
/// use dynd::kernels::{CKernelBuilder, Kernel, KernelRef, KernelRequest};
/// use std::pin::pin;
///
/// /// `dst = src * factor` on float64.
/// struct Scale(f64);
/// impl Kernel for Scale {
///     const NSRC: usize = 1;
///     unsafe fn single(&self, _k: KernelRef<'_>, dst: *mut u8, src: &[*const u8]) -> dynd::Result<()> {
///         // SAFETY: the caller passes float64 elements (Kernel::single 1).
///         unsafe { *dst.cast::<f64>() = *src[0].cast::<f64>() * self.0 };
///         Ok(())
///     }
/// }
///
/// let mut ckb = pin!(CKernelBuilder::new());
/// // SAFETY: offset 0 of a new builder is a free slot.
/// unsafe { ckb.as_mut().emplace(0, KernelRequest::Single, Scale(2.5)) }.unwrap();
/// let (x, mut y) = (4.0f64, 0.0f64);
/// // SAFETY: built for Single with one float64 source.
/// unsafe { ckb.call_single((&raw mut y).cast(), &[(&raw const x).cast()]) }.unwrap();
/// assert_eq!(y, 10.0);
/// ```
#[repr(C)]
pub struct CKernelBuilder {
    /// The buffer: `static_data` or a heap block of `capacity` bytes; null
    /// in a builder made by `new` and not used pinned yet (= inline).
    data: *mut isize,
    /// Bytes in the buffer (a multiple of the pointer size).
    capacity: isize,
    static_data: [isize; INLINE_WORDS],
    _pinned: PhantomPinned,
}

const _: () = assert!(size_of::<CKernelBuilder>() == 18 * size_of::<usize>());
const _: () = assert!(std::mem::align_of::<CKernelBuilder>() == KERNEL_ALIGN);
const _: () = assert!(offset_of!(CKernelBuilder, data) == 0);
const _: () = assert!(offset_of!(CKernelBuilder, capacity) == size_of::<usize>());
const _: () = assert!(offset_of!(CKernelBuilder, static_data) == 2 * size_of::<usize>());
const _: () = assert!(CKernelBuilder::INLINE_CAPACITY >= size_of::<CKernelPrefix>());

// SAFETY: the builder owns its buffer. The kernels in it are Send + Sync:
// Rust kernels by the `Kernel` bound, foreign ones by the ABI's contract
// (module docs: a kernel may be called from many threads at once and
// destroyed on any). The `&self` methods only read the buffer and call
// kernel functions, which take the kernel by shared reference.
unsafe impl Send for CKernelBuilder {}
// SAFETY: as for Send.
unsafe impl Sync for CKernelBuilder {}

impl CKernelBuilder {
    /// Bytes in the inline buffer (16 words): kernels this small need no
    /// heap memory.
    pub const INLINE_CAPACITY: usize = INLINE_WORDS * size_of::<isize>();

    /// An empty builder, to be pinned before use
    /// (`std::pin::pin!(CKernelBuilder::new())`). Its `data` stays null —
    /// "inline" — until the first pinned call points it at the inline
    /// buffer, so the value can be moved freely until then.
    pub const fn new() -> CKernelBuilder {
        CKernelBuilder {
            data: ptr::null_mut(),
            capacity: CKernelBuilder::INLINE_CAPACITY as isize,
            static_data: [0; INLINE_WORDS],
            _pinned: PhantomPinned,
        }
    }

    /// Constructs an empty builder at `this` with `data` already pointing at
    /// its inline buffer (the C face's `dynd_ckernel_builder_construct`).
    ///
    /// # Safety
    /// 1. `this` is valid for writes of a `CKernelBuilder` and aligned.
    /// 2. It does not hold a live builder (that one would leak).
    /// 3. The builder is not moved until [`CKernelBuilder::destruct_in_place`].
    pub unsafe fn construct_in_place(this: *mut CKernelBuilder) {
        // SAFETY: (1) valid and aligned for writes.
        unsafe {
            this.write(CKernelBuilder::new());
            (*this).data = (&raw mut (*this).static_data).cast();
        }
    }

    /// Destroys the builder at `this`: runs the root destructor and frees
    /// the heap buffer (`dynd_ckernel_builder_destruct`).
    ///
    /// # Safety
    /// 1. `this` holds a builder (made by `construct_in_place`, or pinned
    ///    there) that has not moved since, and that nothing uses afterwards
    ///    except a new `construct_in_place`.
    pub unsafe fn destruct_in_place(this: *mut CKernelBuilder) {
        // SAFETY: (1) a live builder that is dropped once, in place.
        unsafe { ptr::drop_in_place(this) };
    }

    /// The pinned builder at `this`, for calling the Rust API on a builder
    /// the C face was given.
    ///
    /// # Safety
    /// 1. `this` holds a live builder that does not move while it lives.
    /// 2. Nothing else accesses it during `'a`.
    pub unsafe fn pin_from_raw<'a>(this: *mut CKernelBuilder) -> Pin<&'a mut CKernelBuilder> {
        // SAFETY: (1) live, aligned, and never moved; (2) unaliased for 'a.
        unsafe { Pin::new_unchecked(&mut *this) }
    }

    /// [`CKernelBuilder::ensure_capacity`] for the C face: a negative
    /// request is an `InvalidArgument` error.
    ///
    /// # Safety
    /// As for [`CKernelBuilder::pin_from_raw`], for the duration of the call.
    pub unsafe fn ensure_capacity_raw(this: *mut CKernelBuilder, requested: isize) -> Result<()> {
        let requested = non_negative(requested)?;
        // SAFETY: the caller's guarantees are pin_from_raw's.
        unsafe { CKernelBuilder::pin_from_raw(this) }.ensure_capacity(requested)
    }

    /// [`CKernelBuilder::ensure_capacity_leaf`] for the C face: a negative
    /// request is an `InvalidArgument` error.
    ///
    /// # Safety
    /// As for [`CKernelBuilder::pin_from_raw`], for the duration of the call.
    pub unsafe fn ensure_capacity_leaf_raw(
        this: *mut CKernelBuilder,
        requested: isize,
    ) -> Result<()> {
        let requested = non_negative(requested)?;
        // SAFETY: the caller's guarantees are pin_from_raw's.
        unsafe { CKernelBuilder::pin_from_raw(this) }.ensure_capacity_leaf(requested)
    }

    /// The buffer's address, as C reads it from `data`: valid until the next
    /// growth or reset. Kernel memory at an offset is `raw_data(this) + offset`.
    ///
    /// # Safety
    /// As for [`CKernelBuilder::pin_from_raw`], for the duration of the call.
    pub unsafe fn raw_data(this: *mut CKernelBuilder) -> *mut u8 {
        // SAFETY: the caller's guarantees are pin_from_raw's.
        unsafe { CKernelBuilder::pin_from_raw(this) }
            .inner()
            .base_mut()
    }

    /// A raw pointer to this builder for the C face (with `data` pointing at
    /// the buffer, as C expects). The builder is pinned, so the pointer stays
    /// valid while it lives; using it while `self` is borrowed is the
    /// caller's business.
    pub fn as_mut_ptr(self: Pin<&mut Self>) -> *mut CKernelBuilder {
        let this = self.inner();
        this.base_mut();
        this
    }

    /// Bytes in the buffer.
    pub fn capacity(&self) -> usize {
        self.capacity as usize
    }

    /// `true` while the kernel fits in the inline buffer.
    pub fn is_inline(&self) -> bool {
        self.data.is_null() || ptr::eq(self.data, self.static_data.as_ptr())
    }

    /// Makes the buffer at least `requested` bytes plus room for one more
    /// [`CKernelPrefix`], the slot for a child. New memory is zero-filled;
    /// existing kernels move with the buffer (offsets stay valid, addresses
    /// do not).
    ///
    /// Errors: `InvalidArgument` when the request overflows, `Alloc` when
    /// memory cannot be had.
    pub fn ensure_capacity(self: Pin<&mut Self>, requested: usize) -> Result<()> {
        let with_child = requested
            .checked_add(size_of::<CKernelPrefix>())
            .ok_or_else(|| too_large(requested))?;
        self.ensure_capacity_leaf(with_child)
    }

    /// Makes the buffer at least `requested` bytes (no room for a child:
    /// for leaf kernels). Otherwise as [`CKernelBuilder::ensure_capacity`].
    pub fn ensure_capacity_leaf(self: Pin<&mut Self>, requested: usize) -> Result<()> {
        self.inner().grow(requested)
    }

    /// Destroys the root kernel (and so the tree) and returns to the empty,
    /// inline, all-zero state.
    pub fn reset(self: Pin<&mut Self>) {
        let this = self.inner();
        this.destroy_root();
        this.free_heap();
        this.static_data = [0; INLINE_WORDS];
        this.data = (&raw mut this.static_data).cast();
        this.capacity = CKernelBuilder::INLINE_CAPACITY as isize;
    }

    /// Writes `kernel` at `offset`, with the function for `request` and a
    /// destructor (none when the kernel owns nothing), and returns the offset
    /// just past it — the slot for its first child, which this reserves
    /// (zeroed) too. See [`Kernel`] for how children are reached.
    ///
    /// Errors: `InvalidArgument` when `offset` is not pointer-aligned or a
    /// kernel is already built there; growth errors as for
    /// [`CKernelBuilder::ensure_capacity`]. On error `kernel` is dropped and
    /// the builder is unchanged.
    ///
    /// # Safety
    /// 1. `offset` is a free slot: no constructed kernel's memory lies at or
    ///    after it. Offset 0 of a new or reset builder is one; so is the
    ///    offset the latest `emplace` (or kernel factory) returned.
    /// 2. Every nonzero entry of `kernel.child_offsets()` — now and after
    ///    any later change — is the distance from `offset` to a slot of this
    ///    builder reserved for this kernel's child, and no other kernel
    ///    names that slot. [`kernel_size::<K>()`](kernel_size) is the first
    ///    child's slot; later children go at the offset returned by building
    ///    the one before.
    pub unsafe fn emplace<K: Kernel>(
        mut self: Pin<&mut Self>,
        offset: usize,
        request: KernelRequest,
        kernel: K,
    ) -> Result<usize> {
        const {
            assert!(
                std::mem::align_of::<K>() <= KERNEL_ALIGN,
                "a kernel may only need pointer alignment"
            )
        };
        if !offset.is_multiple_of(KERNEL_ALIGN) {
            return Err(Error::invalid_argument(format!(
                "kernel offset {offset} is not a multiple of {KERNEL_ALIGN}"
            )));
        }
        let end = offset
            .checked_add(kernel_size::<K>())
            .ok_or_else(|| too_large(offset))?;
        self.as_mut().ensure_capacity(end)?;
        let this = self.inner();
        // SAFETY: end + a prefix <= capacity, so the node lies in the buffer.
        let node = unsafe { this.base_mut().add(offset) }.cast::<Node<K>>();
        // SAFETY: `node` is in bounds and pointer-aligned (offset and the
        // buffer are), and Node<K> has pointer alignment (asserted above).
        if !unsafe { &(*node).prefix }.is_empty() {
            return Err(Error::invalid_argument(format!(
                "a kernel is already built at offset {offset}"
            )));
        }
        // SAFETY: in bounds and aligned as above; (1) the slot holds no
        // constructed kernel, so nothing is overwritten that needs dropping;
        // (2) the child offsets satisfy Node::new's contract.
        unsafe { node.write(Node::new(kernel, request)) };
        Ok(end)
    }

    /// The prefix at `offset`, to inspect a kernel or a slot. (The root's
    /// is safely at hand: `root().prefix()`.)
    ///
    /// Errors: `Index` when `offset` is out of the buffer or not
    /// pointer-aligned.
    ///
    /// # Safety
    /// 1. The prefix-sized bytes at `offset` are not inside a kernel's data
    ///    (whose padding may be uninitialised): `offset` is where a kernel
    ///    starts, or lies past every kernel (zero-filled memory).
    pub unsafe fn prefix(&self, offset: usize) -> Result<&CKernelPrefix> {
        let ptr = self.checked_ptr(offset, size_of::<CKernelPrefix>())?;
        // SAFETY: in bounds and aligned; (1) the bytes are a written prefix
        // or zeros, both valid prefixes; the borrow of `self` keeps them.
        Ok(unsafe { &*ptr.cast::<CKernelPrefix>() })
    }

    /// The kernel data of the `K` built at `offset`.
    ///
    /// Errors: `Index` when a `K` there would not fit in the buffer.
    ///
    /// # Safety
    /// 1. A `K` was emplaced at `offset` and not destroyed.
    pub unsafe fn kernel<K: Kernel>(&self, offset: usize) -> Result<&K> {
        let ptr = self
            .checked_ptr(offset, kernel_size::<K>())?
            .cast::<Node<K>>();
        // SAFETY: (1) a Node<K> lies there; the borrow of `self` keeps it.
        Ok(unsafe { &(*ptr).kernel })
    }

    /// The kernel data of the `K` built at `offset`, mutably (to record a
    /// child offset once the child is built, say).
    ///
    /// Errors: `Index` when a `K` there would not fit in the buffer.
    ///
    /// # Safety
    /// 1. A `K` was emplaced at `offset` and not destroyed.
    /// 2. Changes keep [`CKernelBuilder::emplace`]'s second promise.
    pub unsafe fn kernel_mut<K: Kernel>(self: Pin<&mut Self>, offset: usize) -> Result<&mut K> {
        let this = self.inner();
        this.checked_ptr(offset, kernel_size::<K>())?;
        // SAFETY: checked in bounds; the pointer comes from the unique borrow.
        let ptr = unsafe { this.base_mut().add(offset) }.cast::<Node<K>>();
        // SAFETY: (1) a Node<K> lies there; the unique borrow of `self`
        // keeps it alive and unaliased.
        Ok(unsafe { &mut (*ptr).kernel })
    }

    /// A handle to the root kernel (at offset 0), for calling it or reaching
    /// its children.
    pub fn root(&self) -> KernelRef<'_> {
        // SAFETY: the buffer is never empty (it holds at least a prefix) and
        // is zero-filled or holds constructed kernels: root() borrows `self`,
        // so nothing can grow, reset or write it meanwhile; kernel functions
        // only read it.
        unsafe { KernelRef::from_raw(NonNull::new_unchecked(self.base().cast_mut().cast())) }
    }

    /// Calls the root kernel's single function (see
    /// [`KernelRef::call_single`]); the thread's error slot is cleared
    /// first, so an error after the call is this call's.
    ///
    /// # Safety
    /// As for [`KernelRef::call_single`].
    pub unsafe fn call_single(&self, dst: *mut u8, src: &[*const u8]) -> Result<()> {
        clear_last_error();
        // SAFETY: the caller's guarantees.
        unsafe { self.root().call_single(dst, src) }
    }

    /// Calls the root kernel's strided function (see
    /// [`KernelRef::call_strided`]); the error slot is cleared first.
    ///
    /// # Safety
    /// As for [`KernelRef::call_strided`].
    pub unsafe fn call_strided(
        &self,
        dst: *mut u8,
        dst_stride: isize,
        src: &[*const u8],
        src_stride: &[isize],
        count: usize,
    ) -> Result<()> {
        clear_last_error();
        // SAFETY: the caller's guarantees.
        unsafe {
            self.root()
                .call_strided(dst, dst_stride, src, src_stride, count)
        }
    }

    // ---- internals ----

    /// The unpinned builder, for the internals (which never move it).
    fn inner(self: Pin<&mut Self>) -> &mut CKernelBuilder {
        // SAFETY: no caller moves the builder out of the returned reference.
        unsafe { self.get_unchecked_mut() }
    }

    /// The buffer for reading.
    fn base(&self) -> *const u8 {
        if self.is_inline() {
            self.static_data.as_ptr().cast()
        } else {
            self.data.cast_const().cast()
        }
    }

    /// The buffer for writing; points `data` at the inline buffer if it was
    /// not yet. Only called on a pinned builder (or in `drop`), so the
    /// inline address stays right.
    fn base_mut(&mut self) -> *mut u8 {
        if self.is_inline() {
            let inline: *mut isize = (&raw mut self.static_data).cast();
            self.data = inline;
            inline.cast()
        } else {
            self.data.cast()
        }
    }

    /// The address of `size` bytes at `offset`, checked in bounds and aligned.
    fn checked_ptr(&self, offset: usize, size: usize) -> Result<*const u8> {
        let fits = offset
            .checked_add(size)
            .is_some_and(|end| end <= self.capacity());
        if !fits || !offset.is_multiple_of(KERNEL_ALIGN) {
            return Err(Error::index(format!(
                "{size} kernel bytes at offset {offset} do not fit a {}-byte builder (or are misaligned)",
                self.capacity()
            )));
        }
        // SAFETY: offset + size <= capacity, inside the buffer.
        Ok(unsafe { self.base().add(offset) })
    }

    fn grow(&mut self, requested: usize) -> Result<()> {
        let old_cap = self.capacity();
        if requested <= old_cap {
            return Ok(());
        }
        if requested > isize::MAX as usize {
            return Err(too_large(requested));
        }
        // Double, so a tree built piece by piece costs O(log n) moves; keep a
        // multiple of the pointer size (the ABI's total-size rule).
        let want = requested
            .checked_next_multiple_of(KERNEL_ALIGN)
            .ok_or_else(|| too_large(requested))?;
        let new_cap = want.max(
            old_cap
                .saturating_mul(2)
                .min(isize::MAX as usize & !(KERNEL_ALIGN - 1)),
        );
        let layout = Layout::from_size_align(new_cap, KERNEL_ALIGN)
            .map_err(|_| Error::alloc(format!("cannot allocate a {new_cap}-byte kernel buffer")))?;
        let out_of_memory = || {
            Error::alloc(format!(
                "out of memory growing a kernel buffer to {new_cap} bytes"
            ))
        };
        let new = if self.is_inline() {
            // SAFETY: the layout's size is > old_cap >= 128, non-zero.
            let new = unsafe { std::alloc::alloc_zeroed(layout) };
            if new.is_null() {
                return Err(out_of_memory());
            }
            // SAFETY: both regions are old_cap bytes (the inline buffer and
            // the start of the new block) and do not overlap.
            unsafe { ptr::copy_nonoverlapping(self.base_mut(), new, old_cap) };
            new
        } else {
            let old_layout = heap_layout(old_cap);
            // SAFETY: `data` was allocated with `old_layout` (heap buffers
            // always have exactly `capacity` bytes), and new_cap is non-zero
            // and fits isize once rounded to the alignment (checked above).
            let new = unsafe { std::alloc::realloc(self.data.cast(), old_layout, new_cap) };
            if new.is_null() {
                return Err(out_of_memory());
            }
            // SAFETY: the block has new_cap bytes; zero the tail past the old
            // contents.
            unsafe { ptr::write_bytes(new.add(old_cap), 0, new_cap - old_cap) };
            new
        };
        self.data = new.cast();
        self.capacity = new_cap as isize;
        Ok(())
    }

    fn destroy_root(&mut self) {
        let root = self.base_mut().cast::<CKernelPrefix>();
        // SAFETY: the root prefix is in the buffer, empty or constructed; the
        // builder owns the root and destroys it once (destroy leaves the
        // prefix empty).
        unsafe { CKernelPrefix::destroy(root) };
    }

    fn free_heap(&mut self) {
        if !self.is_inline() {
            // SAFETY: heap buffers are allocated with exactly this layout.
            unsafe { std::alloc::dealloc(self.data.cast(), heap_layout(self.capacity())) };
            self.data = ptr::null_mut();
            self.capacity = CKernelBuilder::INLINE_CAPACITY as isize;
        }
    }
}

/// The layout of a heap buffer of `capacity` bytes.
fn heap_layout(capacity: usize) -> Layout {
    // SAFETY: only called for the capacity of a live heap buffer, which
    // passed `Layout::from_size_align` with this alignment when allocated.
    unsafe { Layout::from_size_align_unchecked(capacity, KERNEL_ALIGN) }
}

fn non_negative(requested: isize) -> Result<usize> {
    usize::try_from(requested).map_err(|_| {
        Error::invalid_argument(format!("requested kernel capacity {requested} is negative"))
    })
}

fn too_large(requested: usize) -> Error {
    Error::invalid_argument(format!(
        "requested kernel capacity {requested} is too large (overflows isize)"
    ))
}

impl Default for CKernelBuilder {
    fn default() -> CKernelBuilder {
        CKernelBuilder::new()
    }
}

impl Drop for CKernelBuilder {
    fn drop(&mut self) {
        // `drop` runs in place: a builder that was used pinned has not moved.
        self.destroy_root();
        self.free_heap();
    }
}

impl std::fmt::Debug for CKernelBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CKernelBuilder")
            .field("capacity", &self.capacity)
            .field("inline", &self.is_inline())
            .field("root", self.root().prefix())
            .finish()
    }
}
