//! Third parties' kernels: the raw deferred ckernel of DESIGN §5
//! (`dynd_deferred_ckernel`), made into a scalar callable that dynd lifts
//! over any dims like its own.
//!
//! A deferred ckernel names its concrete types (destination first), an
//! opaque `data` pointer, an instantiate function that writes a kernel into
//! the builder, and a free function, called exactly once when the last
//! reference to the callable goes.

use super::Callable;
use super::fixed::{BuildKernel, Fixed};
use crate::error::{Error, Result};
use crate::kernels::{CKernelBuilder, KernelArgs};
use crate::types::Type;
use std::ffi::c_void;
use std::pin::Pin;

/// The instantiate function of a deferred ckernel:
/// `(data, builder, offset, arrmeta (dst then srcs), request) -> end offset`
/// (or -1 with the error in the thread-local slot).
pub type InstantiateFn = unsafe extern "C" fn(
    self_data: *mut c_void,
    ckb: *mut CKernelBuilder,
    ckb_offset: isize,
    arrmeta: *const *const u8,
    kernreq: u32,
) -> isize;

/// Frees a deferred ckernel's data.
pub type FreeFn = unsafe extern "C" fn(self_data: *mut c_void);

/// A deferred ckernel, with its types already as [`Type`]s.
pub struct Deferred {
    /// Name for messages and the registry.
    pub name: String,
    /// The destination type, then one type per source.
    pub types: Vec<Type>,
    /// The kernel family's own data.
    pub data: *mut c_void,
    /// Builds a kernel.
    pub instantiate: InstantiateFn,
    /// Frees `data`, once (may be `None` for static data).
    pub free: Option<FreeFn>,
}

/// A deferred ckernel's own part: what builds its kernels and frees its
/// data, and the callable's name for its messages.
struct DeferredKernel {
    name: String,
    data: *mut c_void,
    instantiate: InstantiateFn,
    free: Option<FreeFn>,
}

// SAFETY: the deferred ckernel contract (DESIGN §2, §5) makes a third
// party's instantiate function callable from any thread and its data free
// of thread affinity; dynd never mutates `data`.
unsafe impl Send for DeferredKernel {}
// SAFETY: the deferred ckernel contract (DESIGN §2, §5) makes a third party's instantiate
// function callable from any thread and its data free of thread affinity; dynd never
// mutates `data`.
unsafe impl Sync for DeferredKernel {}

impl Drop for DeferredKernel {
    fn drop(&mut self) {
        if let Some(free) = self.free.take() {
            // SAFETY: `data` came with this free function; `take` makes this
            // the one call.
            unsafe { free(self.data) }
        }
    }
}

impl BuildKernel for DeferredKernel {
    unsafe fn instantiate(
        &self,
        ckb: Pin<&mut CKernelBuilder>,
        offset: usize,
        args: KernelArgs<'_>,
    ) -> Result<usize> {
        let mut metas = Vec::with_capacity(1 + args.nsrc());
        metas.push(args.dst_meta);
        metas.extend_from_slice(args.src_metas);
        let off = isize::try_from(offset)
            .map_err(|_| Error::invalid_argument("kernel offset too large"))?;
        crate::error::clear_last_error();
        // `as_mut_ptr` points `data` at the buffer: a builder made by
        // `CKernelBuilder::new` leaves it null until first used, and C code
        // writes its kernel at `ckb->data + offset`.
        let raw = ckb.as_mut_ptr();
        // SAFETY: (1) `offset` is a free slot of the pinned builder, which
        // the C side sees as its `dynd_ckernel_builder`; (2) one arrmeta
        // pointer per type; the instantiate contract is the third party's.
        let end =
            unsafe { (self.instantiate)(self.data, raw, off, metas.as_ptr(), args.req as u32) };
        if end < 0 {
            return Err(crate::error::take_last_error().unwrap_or_else(|| {
                Error::external(format!(
                    "{}: the deferred ckernel's instantiate function failed without setting an error",
                    self.name
                ))
            }));
        }
        let end = end as usize;
        if end <= offset {
            return Err(Error::external(format!(
                "{}: instantiate returned offset {end}, not past {offset}",
                self.name
            )));
        }
        Ok(end)
    }
}

impl Callable {
    /// A scalar callable from a third party's deferred ckernel. The types
    /// must be concrete; the free function is called exactly once, when the
    /// last clone of the callable is dropped (also if this fails).
    ///
    /// # Safety
    /// 1. `instantiate` builds, at the offset it is given, a kernel for the
    ///    request whose functions follow DESIGN §5 for `types` (destination
    ///    first), returning the end offset or -1 with an error set.
    /// 2. It and the kernels it builds may be called from any thread.
    /// 3. `free`, if given, frees `data` and may be called from any thread.
    pub unsafe fn from_deferred(d: Deferred) -> Result<Callable> {
        let Deferred {
            name,
            types,
            data,
            instantiate,
            free,
        } = d;
        // Made first, so its Drop frees `data` whatever happens next.
        let c = Fixed::new(
            name.clone(),
            types,
            DeferredKernel {
                name,
                data,
                instantiate,
                free,
            },
        );
        if c.types.len() < 2 {
            return Err(Error::invalid_argument(format!(
                "deferred ckernel {} needs a destination and at least one source type, got {}",
                c.name,
                c.types.len()
            )));
        }
        if c.types.len() > 1 + crate::kernels::lift::MAX_SOURCES {
            return Err(Error::invalid_argument(format!(
                "deferred ckernel {} has {} sources; at most {} are supported",
                c.name,
                c.types.len() - 1,
                crate::kernels::lift::MAX_SOURCES
            )));
        }
        if let Some(t) = c.types.iter().find(|t| t.is_symbolic()) {
            return Err(Error::type_error(format!(
                "deferred ckernel {} has a symbolic type {t}; its types must be concrete",
                c.name
            )));
        }
        Ok(Callable::new(c))
    }
}
