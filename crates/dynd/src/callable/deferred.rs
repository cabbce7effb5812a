//! Third parties' kernels: the raw deferred ckernel of DESIGN §5
//! (`dynd_deferred_ckernel`), made into a scalar callable that dynd lifts
//! over any dims like its own.
//!
//! A deferred ckernel names its concrete types (destination first), an
//! opaque `data` pointer, an instantiate function that writes a kernel into
//! the builder, and a free function, called exactly once when the last
//! reference to the callable goes.

use super::{Callable, CallableImpl, no_match};
use crate::error::{Error, Result};
use crate::kernels::{CKernelBuilder, KernelArgs};
use crate::types::{CallableSignature, Type};
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

struct DeferredCallable {
    d: Deferred,
    sig: Type,
}

// SAFETY: the deferred ckernel contract (DESIGN §2, §5) makes a third
// party's instantiate function callable from any thread and its data free
// of thread affinity; dynd never mutates `data`.
unsafe impl Send for DeferredCallable {}
// SAFETY: the deferred ckernel contract (DESIGN §2, §5) makes a third party's instantiate
// function callable from any thread and its data free of thread affinity; dynd never
// mutates `data`.
unsafe impl Sync for DeferredCallable {}

impl Drop for DeferredCallable {
    fn drop(&mut self) {
        if let Some(free) = self.d.free.take() {
            // SAFETY: `data` came with this free function; `take` makes this
            // the one call.
            unsafe { free(self.d.data) }
        }
    }
}

impl CallableImpl for DeferredCallable {
    fn name(&self) -> &str {
        &self.d.name
    }
    fn signature(&self) -> &Type {
        &self.sig
    }
    fn resolve(&self, args: &[Type]) -> Result<Type> {
        if args == &self.d.types[1..] {
            Ok(self.d.types[0].clone())
        } else {
            Err(no_match(&self.d.name, &self.sig, args))
        }
    }
    /// A third party's kernel sees present elements only.
    fn runs_over_missing(&self) -> bool {
        false
    }
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
            unsafe { (self.d.instantiate)(self.d.data, raw, off, metas.as_ptr(), args.req as u32) };
        if end < 0 {
            return Err(crate::error::take_last_error().unwrap_or_else(|| {
                Error::external(format!(
                    "{}: the deferred ckernel's instantiate function failed without setting an error",
                    self.d.name
                ))
            }));
        }
        let end = end as usize;
        if end <= offset {
            return Err(Error::external(format!(
                "{}: instantiate returned offset {end}, not past {offset}",
                self.d.name
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
        let sig = match d.types.split_first() {
            Some((ret, args)) => Type::callable(CallableSignature {
                positional: args.to_vec(),
                keywords: Vec::new(),
                ret: ret.clone(),
            }),
            None => Type::any(),
        };
        // Made first, so its Drop frees `data` whatever happens next.
        let c = DeferredCallable { d, sig };
        if c.d.types.len() < 2 {
            return Err(Error::invalid_argument(format!(
                "deferred ckernel {} needs a destination and at least one source type, got {}",
                c.d.name,
                c.d.types.len()
            )));
        }
        if c.d.types.len() > 1 + crate::kernels::lift::MAX_SOURCES {
            return Err(Error::invalid_argument(format!(
                "deferred ckernel {} has {} sources; at most {} are supported",
                c.d.name,
                c.d.types.len() - 1,
                crate::kernels::lift::MAX_SOURCES
            )));
        }
        if let Some(t) = c.d.types.iter().find(|t| t.is_symbolic()) {
            return Err(Error::type_error(format!(
                "deferred ckernel {} has a symbolic type {t}; its types must be concrete",
                c.d.name
            )));
        }
        Ok(Callable::new(c))
    }
}
