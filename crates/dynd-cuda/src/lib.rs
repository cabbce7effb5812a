//! The CUDA device of dynd (DESIGN §14).
//!
//! - [`kernel`]: the description of an elementwise kernel, made from a
//!   call of one of dynd's functions on device arrays; [`reduce`]: of a
//!   reduction (fixed dims, or the var dim of a ragged array), with its
//!   CUDA C and launch plan; [`ragged_axes`]: of a ragged array over its
//!   outer axis (position by position) or every axis; [`ragged`]: elementwise functions over ragged
//!   device arrays (one ragged array and host scalars); [`broadcast`]:
//!   several device arrays, ragged among them, broadcast per §6; [`rows`]: `cumsum`, `cumprod`, `sort`, `argsort` of
//!   each row of a device array, [`long_row`] of long rows (one, or many
//!   at once: a chunked scan), [`radix`] their stable radix sort; [`select`]: integers and slices
//!   of each row, `filter` and `take` of ragged device arrays;
//!   [`concat`]: `concatenate` of fixed and of ragged device arrays;
//!   [`nested`]: functions on nested var dims, through the innermost rows;
//! - [`codegen`]: its CUDA C; [`nvrtc`]: compiled once per (source,
//!   architecture) and cached;
//! - [`interp`]: the same description run on the host, so it is tested on
//!   machines without a GPU;
//! - [`probe`]: whether NVRTC, the driver and a device are present;
//! - [`runtime`]: the devices (memory, copies, launches) and [`install`],
//!   which registers them with dynd; [`calls`]: dynd's functions on
//!   device arrays; [`launch`]: the launches of each kernel, through a
//!   [`launch::Backend`];
//! - [`ops`]: the `Cuda` executor of dynd-ops expressions, one fused
//!   kernel per assignment;
//! - [`emulator`]: a backend that runs the generated CUDA C on the host
//!   (the system's C++ compiler, one host thread per CUDA thread), so the
//!   generated code itself is tested on machines without a GPU.
//!
//! ```
//! // Without a driver this says why; with one, arrays move to "cuda:0".
//! match dynd_cuda::install() {
//!     Ok(n) => assert!(n >= 1),
//!     Err(e) => assert_eq!(e.kind(), dynd::ErrorKind::External),
//! }
//! ```
//!
//! Nothing CUDA is linked at build time: cudarc loads libcuda and libnvrtc
//! when first used, after [`probe`] has checked they exist. Without them
//! the crate builds, its host tests pass, and its GPU tests print
//! `SKIP: no CUDA device (<reason>)`.

pub mod broadcast;
pub mod calls;
pub mod codegen;
pub mod concat;
pub mod disk_cache;
pub mod emulator;
pub mod interp;
pub mod kernel;
pub mod launch;
pub mod long_row;
pub mod nested;
pub mod nvrtc;
pub mod ops;
pub mod option_rows;
pub mod outputs;
pub mod pool;
pub mod probe;
pub mod radix;
pub mod ragged;
pub mod ragged_axes;
pub mod reduce;
pub mod rows;
pub mod runtime;
pub mod select;

pub use runtime::{device_count, install, is_available};
