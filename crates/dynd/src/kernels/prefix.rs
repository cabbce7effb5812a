//! The ckernel ABI: the prefix every kernel starts with, the function
//! prototypes, the request that picks one, and [`KernelRef`], a handle that
//! calls a kernel through its prefix (DESIGN §5, `dynd_ckernel_prefix`).

use crate::error::{Error, Result, take_last_error};
use std::ffi::c_void;
use std::marker::PhantomData;
use std::mem::{align_of, offset_of, size_of};
use std::ptr::NonNull;

/// Destroys the kernel whose prefix is at the argument, and (through their
/// own prefixes) its children: the ABI's `destructor` field.
pub type Destructor = unsafe extern "C" fn(self_: *mut CKernelPrefix);

/// The single prototype: one destination element from `n` source elements
/// (`src` points at `n` pointers; `n` is fixed when the kernel is built).
/// Returns 0 on success, -1 on failure with the error in the thread-local
/// slot ([`crate::error::set_last_error`]). The ABI's `dynd_expr_single_t`.
pub type ExprSingle =
    unsafe extern "C" fn(dst: *mut u8, src: *const *const u8, self_: *mut CKernelPrefix) -> i32;

/// The strided prototype: `count` destination elements, `dst_stride` bytes
/// apart, from `n` sources with `src_stride[i]` bytes between elements of
/// source `i`. Status as for [`ExprSingle`]. The ABI's `dynd_expr_strided_t`.
pub type ExprStrided = unsafe extern "C" fn(
    dst: *mut u8,
    dst_stride: isize,
    src: *const *const u8,
    src_stride: *const isize,
    count: usize,
    self_: *mut CKernelPrefix,
) -> i32;

/// Which prototype a kernel is built for; the caller knows it from the
/// request it made (`DYND_KERNEL_REQUEST_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum KernelRequest {
    /// The prefix's function is an [`ExprSingle`].
    Single = 0,
    /// The prefix's function is an [`ExprStrided`].
    Strided = 1,
}

impl KernelRequest {
    /// The request for a C ABI value (`kernreq`).
    pub fn from_raw(raw: u32) -> Result<KernelRequest> {
        match raw {
            0 => Ok(KernelRequest::Single),
            1 => Ok(KernelRequest::Strided),
            _ => Err(Error::invalid_argument(format!(
                "unknown kernel request {raw} (expected 0 = single or 1 = strided)"
            ))),
        }
    }
}

const _: () = assert!(size_of::<KernelRequest>() == 4);

/// The start of every ckernel: its function (an [`ExprSingle`] or an
/// [`ExprStrided`], as requested) and its destructor. The kernel's own data
/// follows it, then its children. All zero means "not built": no function,
/// nothing to destroy.
///
/// The fields are private because the destructor is trusted by
/// [`CKernelBuilder`](super::CKernelBuilder)'s `Drop`: setting it is
/// `unsafe` ([`CKernelPrefix::set_destructor`]).
#[repr(C)]
pub struct CKernelPrefix {
    function: *mut c_void,
    destructor: Option<Destructor>,
}

const _: () = assert!(size_of::<CKernelPrefix>() == 2 * size_of::<usize>());
const _: () = assert!(align_of::<CKernelPrefix>() == align_of::<usize>());
const _: () = assert!(offset_of!(CKernelPrefix, function) == 0);
const _: () = assert!(offset_of!(CKernelPrefix, destructor) == size_of::<usize>());
const _: () = assert!(size_of::<Option<Destructor>>() == size_of::<usize>());

/// The alignment of every kernel in a builder (pointer alignment): kernel
/// memory may be moved by `memcpy` to any address with this alignment, so no
/// kernel may rely on more.
pub const KERNEL_ALIGN: usize = align_of::<CKernelPrefix>();

impl CKernelPrefix {
    /// A prefix with no function and no destructor (the all-zero state).
    pub const fn empty() -> CKernelPrefix {
        CKernelPrefix {
            function: std::ptr::null_mut(),
            destructor: None,
        }
    }

    /// `true` when neither the function nor the destructor is set.
    pub fn is_empty(&self) -> bool {
        self.function.is_null() && self.destructor.is_none()
    }

    /// The function pointer as stored (null when not built).
    pub fn function(&self) -> *mut c_void {
        self.function
    }

    /// The destructor, if the kernel has one.
    pub fn destructor(&self) -> Option<Destructor> {
        self.destructor
    }

    /// Sets the function to a single-prototype function.
    pub fn set_single(&mut self, f: ExprSingle) {
        self.function = f as *mut c_void;
    }

    /// Sets the function to a strided-prototype function.
    pub fn set_strided(&mut self, f: ExprStrided) {
        self.function = f as *mut c_void;
    }

    /// Sets the destructor.
    ///
    /// # Safety
    /// 1. `destructor`, called with this prefix's address, destroys exactly
    ///    what the memory behind this prefix holds (it will be called by the
    ///    owner of the kernel — its parent or the builder — once).
    pub unsafe fn set_destructor(&mut self, destructor: Option<Destructor>) {
        self.destructor = destructor;
    }

    /// The function as a single-prototype pointer (`None` when not built).
    ///
    /// # Safety
    /// 1. The kernel was built for [`KernelRequest::Single`].
    pub unsafe fn single_fn(&self) -> Option<ExprSingle> {
        // SAFETY: (1) a non-null function of a kernel built for Single was
        // stored from an ExprSingle; data and function pointers have the same
        // size on every platform dynd supports (asserted below).
        (!self.function.is_null())
            .then(|| unsafe { std::mem::transmute::<*mut c_void, ExprSingle>(self.function) })
    }

    /// The function as a strided-prototype pointer (`None` when not built).
    ///
    /// # Safety
    /// 1. The kernel was built for [`KernelRequest::Strided`].
    pub unsafe fn strided_fn(&self) -> Option<ExprStrided> {
        // SAFETY: as in `single_fn`, for Strided (1).
        (!self.function.is_null())
            .then(|| unsafe { std::mem::transmute::<*mut c_void, ExprStrided>(self.function) })
    }

    /// Destroys the kernel at `this`: takes its destructor (leaving the
    /// prefix empty, so a second call does nothing) and calls it. A prefix
    /// with no destructor — never built, or a kernel that owns nothing — is
    /// left empty and nothing else happens.
    ///
    /// # Safety
    /// 1. `this` points at a prefix, valid for reads and writes, that is
    ///    either empty or starts a constructed kernel.
    /// 2. The caller owns that kernel (it is the builder for the root, or
    ///    the kernel's parent) and nothing uses it afterwards.
    pub unsafe fn destroy(this: *mut CKernelPrefix) {
        // SAFETY: (1) `this` is valid for reads and writes.
        let destructor = unsafe {
            (*this).function = std::ptr::null_mut();
            (*this).destructor.take()
        };
        if let Some(destructor) = destructor {
            // SAFETY: (1) the kernel is constructed, so its destructor matches
            // its memory; (2) we own it and nothing uses it again.
            unsafe { destructor(this) };
        }
    }
}

const _: () = assert!(size_of::<*mut c_void>() == size_of::<ExprSingle>());

impl Default for CKernelPrefix {
    fn default() -> CKernelPrefix {
        CKernelPrefix::empty()
    }
}

impl std::fmt::Debug for CKernelPrefix {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CKernelPrefix")
            .field("function", &self.function)
            .field("destructor", &self.destructor.map(|d| d as *const c_void))
            .finish()
    }
}

/// An empty prefix to point at for "no child": calling it reports an error.
struct EmptyPrefix(CKernelPrefix);
// SAFETY: the empty prefix is never written (KernelRef only reads prefixes)
// and holds no pointers to anything.
unsafe impl Sync for EmptyPrefix {}
static EMPTY_PREFIX: EmptyPrefix = EmptyPrefix(CKernelPrefix::empty());

/// A borrowed handle to a built kernel, for calling it: the root of a
/// builder ([`CKernelBuilder::root`](super::CKernelBuilder::root)), the
/// kernel a trampoline is running, or one of its children
/// ([`KernelRef::child`]). Only the prefix is assumed, so the kernel may have
/// been written by C code.
///
/// Calls take the kernel by shared reference: one kernel may run on many
/// threads at once.
#[derive(Clone, Copy)]
pub struct KernelRef<'a> {
    ptr: NonNull<CKernelPrefix>,
    _borrow: PhantomData<&'a CKernelPrefix>,
}

impl<'a> KernelRef<'a> {
    /// A handle to the kernel whose prefix is at `ptr`.
    ///
    /// # Safety
    /// 1. `ptr` points at a prefix (aligned, readable) that is empty or
    ///    starts a constructed kernel, together with all the memory that
    ///    kernel and its children use.
    /// 2. That memory stays valid, and is not written except by the kernel
    ///    functions themselves, for `'a`.
    pub unsafe fn from_raw(ptr: NonNull<CKernelPrefix>) -> KernelRef<'a> {
        KernelRef {
            ptr,
            _borrow: PhantomData,
        }
    }

    /// The raw prefix pointer, as kernel functions receive it in `self_`.
    pub fn as_ptr(&self) -> *mut CKernelPrefix {
        self.ptr.as_ptr()
    }

    /// The prefix.
    pub fn prefix(&self) -> &'a CKernelPrefix {
        // SAFETY: (from_raw 1, 2) the prefix is readable for 'a.
        unsafe { self.ptr.as_ref() }
    }

    /// The child kernel `offset` bytes after this one. An offset of 0 means
    /// "no child" and gives a handle to an empty kernel, whose calls fail
    /// with an error (so a parent whose child was never built reports it
    /// instead of calling itself).
    ///
    /// # Safety
    /// 1. `offset` is 0 or one of this kernel's child offsets (see
    ///    [`Kernel::child_offsets`](super::Kernel::child_offsets)): a
    ///    pointer-aligned position, inside the same buffer, whose prefix is
    ///    empty or starts a constructed kernel.
    pub unsafe fn child(&self, offset: usize) -> KernelRef<'a> {
        if offset == 0 {
            return KernelRef {
                ptr: NonNull::from(&EMPTY_PREFIX.0),
                _borrow: PhantomData,
            };
        }
        // SAFETY: (1) the child lies inside the same buffer, so the add
        // stays in bounds and the result is non-null.
        let ptr = unsafe { self.ptr.byte_add(offset) };
        KernelRef {
            ptr,
            _borrow: PhantomData,
        }
    }

    /// Calls the kernel's single function: one destination element from
    /// `src.len()` source elements.
    ///
    /// Errors: the kernel's own error (read from the thread-local slot), an
    /// `External` error when the kernel failed without setting one, or
    /// `InvalidArgument` when the kernel was never built.
    ///
    /// # Safety
    /// 1. The kernel was built for [`KernelRequest::Single`] with
    ///    `src.len()` sources.
    /// 2. `dst` and every `src[i]` point at an element of the type and
    ///    arrmeta the kernel was built for: `dst` writable, sources readable.
    #[inline]
    pub unsafe fn call_single(&self, dst: *mut u8, src: &[*const u8]) -> Result<()> {
        // SAFETY: (1) built for Single.
        let Some(f) = (unsafe { self.prefix().single_fn() }) else {
            return Err(not_built());
        };
        // SAFETY: (1) `f` has this prototype and src has the kernel's number
        // of sources; (2) the data pointers are valid; `self.ptr` is the
        // kernel's own prefix (from_raw 1).
        let status = unsafe { f(dst, src.as_ptr(), self.ptr.as_ptr()) };
        status_to_result(status)
    }

    /// Calls the kernel's strided function over `count` elements.
    ///
    /// Errors as for [`KernelRef::call_single`], and `InvalidArgument` when
    /// `src` and `src_stride` differ in length.
    ///
    /// # Safety
    /// 1. The kernel was built for [`KernelRequest::Strided`] with
    ///    `src.len()` sources.
    /// 2. For every `j < count`, `dst + j * dst_stride` is a writable element
    ///    and `src[i] + j * src_stride[i]` a readable one, of the types and
    ///    arrmeta the kernel was built for.
    #[inline]
    pub unsafe fn call_strided(
        &self,
        dst: *mut u8,
        dst_stride: isize,
        src: &[*const u8],
        src_stride: &[isize],
        count: usize,
    ) -> Result<()> {
        if src.len() != src_stride.len() {
            return Err(Error::invalid_argument(format!(
                "{} source pointers but {} source strides",
                src.len(),
                src_stride.len()
            )));
        }
        // SAFETY: (1) built for Strided.
        let Some(f) = (unsafe { self.prefix().strided_fn() }) else {
            return Err(not_built());
        };
        // SAFETY: (1) `f` has this prototype and both arrays have the
        // kernel's number of sources; (2) the data ranges are valid.
        let status = unsafe {
            f(
                dst,
                dst_stride,
                src.as_ptr(),
                src_stride.as_ptr(),
                count,
                self.ptr.as_ptr(),
            )
        };
        status_to_result(status)
    }
}

impl std::fmt::Debug for KernelRef<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KernelRef")
            .field("ptr", &self.ptr)
            .field("prefix", self.prefix())
            .finish()
    }
}

fn not_built() -> Error {
    Error::invalid_argument("the kernel has not been built (its function pointer is null)")
}

/// Turns a kernel status into a `Result`, taking the error from the slot.
#[inline]
fn status_to_result(status: i32) -> Result<()> {
    if status == 0 {
        return Ok(());
    }
    Err(take_last_error().unwrap_or_else(|| {
        Error::external(format!(
            "a kernel returned status {status} without setting an error"
        ))
    }))
}
