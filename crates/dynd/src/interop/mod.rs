//! Data in and out of other systems (DESIGN §12): the Arrow C Data
//! Interface, DLPack, and `ndarray` views — zero-copy wherever the layouts
//! allow. Foreign buffers are held by external memory blocks
//! ([`Array::from_external`](crate::Array::from_external)) whose release runs
//! the producer's callback exactly once.
//!
//! Each exchange format is one module here; the optional ones sit behind a
//! cargo feature of the same name.

#[cfg(feature = "arrow")]
pub mod arrow;
pub mod dlpack;
#[cfg(feature = "ndarray")]
pub mod ndarray;
