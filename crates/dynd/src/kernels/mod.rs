//! CKernels: relocatable kernels callable through a fixed C ABI (DESIGN
//! §1.4, §5).
//!
//! A ckernel is a block of memory that starts with a [`CKernelPrefix`] —
//! `{function, destructor}` — followed by the kernel's own data and then its
//! children, each again a prefix plus data. The function is an
//! [`ExprSingle`] or an [`ExprStrided`], chosen by the [`KernelRequest`] the
//! kernel was built for; it returns 0, or -1 with the error in the
//! thread-local slot ([`crate::error`]). A [`CKernelBuilder`] owns the block.
//!
//! - [`CKernelPrefix`], the prototypes and [`KernelRequest`]: the ABI
//!   types; [`KernelRef`] calls a kernel through its prefix (Rust- or
//!   C-built alike).
//! - [`CKernelBuilder`]: the buffer — 16 words inline, then the heap.
//! - [`Kernel`]: kernels written as plain Rust structs; generic trampolines
//!   make the `extern "C"` functions and the destructor.
//! - [`loops`]: the one loop selector — contiguous, broadcast (stride 0),
//!   strided, and ragged runs of rows — that every strided loop asks.
//! - `broadcast`: the one broadcast rule and its error wording (DESIGN §6).
//!
//! # Memory rules
//!
//! - **Relocatable.** The builder grows by moving the whole tree to a new
//!   buffer with `memcpy`. A kernel never stores a pointer into the kernel
//!   memory (its own or another kernel's); it reaches a child by the child's
//!   offset relative to itself ([`Kernel::child_offsets`],
//!   [`KernelRef::child`]). Any Rust value is relocatable in this sense —
//!   a move *is* a `memcpy` — so kernel structs can own `Box`es, `Arc`s and
//!   `Vec`s freely. Kernel memory is only pointer-aligned; a kernel type may
//!   not need more.
//! - **Offsets, not pointers, while building.** Growth invalidates every
//!   address in the buffer. The builder's API speaks in offsets and its
//!   accessors borrow the builder, so no address survives a growth.
//!   `emplace` returns the offset just past the kernel: the slot for its
//!   first child, or for whatever is built next.
//! - **Zero means "not built".** All new kernel memory is zero-filled, and a
//!   zero prefix has no destructor. A kernel's destructor is installed
//!   together with its data, before its children are built, and skips
//!   children that were never built; so if building fails halfway, dropping
//!   the builder still frees exactly what was built, once.
//! - **The root owns the tree.** The builder destroys the root kernel; each
//!   kernel's destructor destroys its children.
//! - **Shared while running.** Kernel functions take the kernel by shared
//!   reference and keep no scratch in it, so one built kernel may be called
//!   from many threads at once (a kernel needing an intermediate buffer
//!   uses a bounded one on its own stack, per call). Kernels written in C
//!   must keep the same contract, and be destructible from any thread.
//! - **Errors are statuses.** Nothing unwinds across the ABI: a Rust
//!   kernel's `Err` becomes status -1 with the error in the slot, a panic
//!   becomes an `External` error, and Rust callers get `Result` back.
//! - **No allocation on the hot path.** A kernel tree that fits in the 16
//!   inline words is built and called without touching the heap.
//!
//! # Example: a parent with a child
//!
//! ```
//! use dynd::kernels::{CKernelBuilder, Kernel, KernelRef, KernelRequest, kernel_size};
//! use std::pin::pin;
//!
//! /// `dst = src` for int32.
//! struct Copy32;
//! impl Kernel for Copy32 {
//!     const NSRC: usize = 1;
//!     unsafe fn single(&self, _k: KernelRef<'_>, dst: *mut u8, src: &[*const u8]) -> dynd::Result<()> {
//!         // SAFETY: int32 elements (Kernel::single 1); unaligned reads are fine.
//!         unsafe { dst.cast::<i32>().write_unaligned(src[0].cast::<i32>().read_unaligned()) };
//!         Ok(())
//!     }
//! }
//!
//! /// Follows a pointer, then runs its child on the target.
//! struct Deref {
//!     child: [usize; 1],
//! }
//! impl Kernel for Deref {
//!     const NSRC: usize = 1;
//!     unsafe fn single(&self, k: KernelRef<'_>, dst: *mut u8, src: &[*const u8]) -> dynd::Result<()> {
//!         // SAFETY: the source is a pointer to the child's source type.
//!         let target = unsafe { src[0].cast::<*const u8>().read_unaligned() };
//!         // SAFETY: child[0] is this kernel's child, built for Single.
//!         unsafe { k.child(self.child[0]).call_single(dst, &[target]) }
//!     }
//!     fn child_offsets(&self) -> &[usize] {
//!         &self.child
//!     }
//! }
//!
//! let mut ckb = pin!(CKernelBuilder::new());
//! let child = [kernel_size::<Deref>()];
//! // SAFETY: 0 is a free slot; `child` names the slot emplace reserves.
//! let at = unsafe { ckb.as_mut().emplace(0, KernelRequest::Single, Deref { child }) }.unwrap();
//! // SAFETY: `at` is the free slot just past the parent: its child's slot.
//! unsafe { ckb.as_mut().emplace(at, KernelRequest::Single, Copy32) }.unwrap();
//!
//! let value = 42i32;
//! let pointer: *const i32 = &value;
//! let mut out = 0i32;
//! // SAFETY: built for Single; the source is a pointer to an int32.
//! unsafe { ckb.call_single((&raw mut out).cast(), &[(&raw const pointer).cast()]) }.unwrap();
//! assert_eq!(out, 42);
//! ```

mod args;
pub mod assign;
pub(crate) mod broadcast;
mod builder;
mod kernel;
pub(crate) mod lift;
pub mod loops;
pub mod mask;
mod prefix;

pub use args::KernelArgs;
pub use builder::CKernelBuilder;
pub use kernel::{Kernel, Strided, kernel_size};
pub use prefix::{
    CKernelPrefix, Destructor, ExprSingle, ExprStrided, KERNEL_ALIGN, KernelRef, KernelRequest,
};

#[cfg(test)]
mod tests;
