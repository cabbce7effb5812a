//! Callables of one fixed signature whose kernels dynd did not write: Rust
//! functions and closures ([`Callable::from_fn1`] and its kin) and third
//! parties' deferred ckernels ([`Callable::from_deferred`]). One type serves
//! both, so that they resolve and report a mismatch alike: they accept
//! exactly their argument types, and their kernels only ever see present
//! elements.
//!
//! [`Callable::from_fn1`]: super::Callable::from_fn1
//! [`Callable::from_deferred`]: super::Callable::from_deferred

use super::{CallableImpl, no_match};
use crate::error::Result;
use crate::kernels::{CKernelBuilder, KernelArgs};
use crate::types::{CallableSignature, Type};
use std::pin::Pin;

/// What builds the kernels of a [`Fixed`] callable.
pub(super) trait BuildKernel: Send + Sync + 'static {
    /// Builds the kernel for `args` at `offset`.
    ///
    /// # Safety
    /// As [`CallableImpl::instantiate`].
    unsafe fn instantiate(
        &self,
        ckb: Pin<&mut CKernelBuilder>,
        offset: usize,
        args: KernelArgs<'_>,
    ) -> Result<usize>;
}

/// A scalar callable of one fixed signature, its kernels built by `B`.
pub(super) struct Fixed<B> {
    pub(super) name: String,
    /// The result type, then one type per argument.
    pub(super) types: Vec<Type>,
    sig: Type,
    build: B,
}

impl<B: BuildKernel> Fixed<B> {
    /// The callable `name` of `types` (the result's first); with no types at
    /// all its signature is `Any`, for the caller to refuse.
    pub(super) fn new(name: String, types: Vec<Type>, build: B) -> Self {
        let sig = match types.split_first() {
            Some((ret, args)) => Type::callable(CallableSignature {
                positional: args.to_vec(),
                keywords: Vec::new(),
                ret: ret.clone(),
            }),
            None => Type::any(),
        };
        Fixed {
            name,
            types,
            sig,
            build,
        }
    }
}

impl<B: BuildKernel> CallableImpl for Fixed<B> {
    fn name(&self) -> &str {
        &self.name
    }

    fn signature(&self) -> &Type {
        &self.sig
    }

    fn resolve(&self, args: &[Type]) -> Result<Type> {
        match self.types.split_first() {
            Some((ret, own)) if args == own => Ok(ret.clone()),
            _ => Err(no_match(&self.name, &self.sig, args)),
        }
    }

    unsafe fn instantiate(
        &self,
        ckb: Pin<&mut CKernelBuilder>,
        offset: usize,
        args: KernelArgs<'_>,
    ) -> Result<usize> {
        // SAFETY: the caller keeps CallableImpl::instantiate's contract,
        // which is BuildKernel::instantiate's.
        unsafe { self.build.instantiate(ckb, offset, args) }
    }

    /// A kernel someone else wrote sees present elements only.
    fn runs_over_missing(&self) -> bool {
        false
    }
}
