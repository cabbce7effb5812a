//! # dynd
//!
//! Typed, possibly ragged, possibly incomplete n-dimensional data over
//! reference-counted memory blocks, with a runtime type system spoken as
//! datashape text (`3 * var * {x: int32, name: ?string}`), relocatable
//! kernels behind a stable C ABI, and callables lifted over every dim.
//!
//! ## Modules, lowest layer first
//!
//! Each module uses only the ones above it in this list (DESIGN §7; the
//! test `tests/layering.rs` fails otherwise).
//!
//! - [`error`]: the one error type, its kinds, and the thread-local slot
//!   errors cross the C ABI through.
//! - [`types`]: runtime types, datashape parsing and printing, and
//!   [`NativeType`](types::NativeType), the one map from Rust scalars to
//!   builtin types.
//! - [`memblock`]: reference-counted memory blocks — fixed data, the POD
//!   arena, object blocks, external blocks holding foreign memory.
//! - [`layout`]: the DESIGN §4 data and arrmeta layouts, NA values and
//!   string bytes that kernels and arrays both read.
//! - [`kernels`]: ckernels, their builder, the one lifter over dims, and
//!   assignment between every pair of types under four error modes.
//! - [`exec`]: the executors (serial, threads, the device hook), task sizes
//!   and the thread pool: the one place that decides how work runs.
//! - [`array`](mod@array): the [`Array`] handle — views, copies, JSON in and out.
//! - [`callable`]: deferred ckernels — elementwise, reductions, strings,
//!   dispatch, a registry by name.
//! - [`compute`]: the user-facing functions of every family (`add`, `sum`,
//!   `split`, ...) and the operators `+ - * / %`.
//! - [`interop`]: data in and out of other systems without copies — the
//!   Arrow C Data Interface, DLPack, `ndarray` views.
//!
//! ## Types
//!
//! ```
//! use dynd::Type;
//! let t = Type::parse("3 * var * {x: int32, name: ?string}").unwrap();
//! assert_eq!(t.to_string(), "3 * var * {x: int32, name: ?string}");
//! assert_eq!((t.data_size(), t.arrmeta_size()), (48, 48));
//! ```
//!
//! ## Arrays and views
//!
//! ```
//! use dynd::{Array, Index};
//! let a = Array::from_json("2 * var * int32", "[[1, 2], [3]]").unwrap();
//! assert_eq!(a.to_json(), "[[1,2],[3]]");
//! assert_eq!(a.index(&[1.into(), 0.into()]).unwrap().to_json(), "3");
//! // A view shares the data: no copy.
//! let m = Array::from_json("2 * 3 * float64", "[[1, 2, 3], [4, 5, 6]]").unwrap();
//! let col = m.index(&[Index::slice(None, None, 1), 2.into()]).unwrap();
//! assert_eq!(col.to_json(), "[3.0,6.0]");
//! assert!(col.shares_data_with(&m));
//! ```
//!
//! ## Assignment and casts
//!
//! ```
//! use dynd::{Array, ErrorKind, kernels::assign::ErrorMode};
//! let a = Array::from_json("3 * float64", "[1, 2.5, 300]").unwrap();
//! assert_eq!(a.cast("3 * int16", ErrorMode::NoCheck).unwrap().to_json(), "[1,2,300]");
//! let e = a.cast("3 * int8", ErrorMode::Default).unwrap_err();
//! assert_eq!(e.kind(), ErrorKind::Fractional);
//! ```
//!
//! ## Callables and compute
//!
//! ```
//! use dynd::{Array, callable::Callable, compute};
//! let a = Array::from_json("2 * var * int32", "[[1, 2, 3], [4]]").unwrap();
//! let b = Array::from_json("2 * 3 * int32", "[[5, 6, 7], [8, 9, 10]]").unwrap();
//! assert_eq!((&a + &b).unwrap().to_json(), "[[6,8,10],[12,13,14]]");
//! assert_eq!(compute::sum(&a, Some(&[1]), false).unwrap().to_json(), "[6,4]");
//! // A Rust closure becomes a callable lifted over every dim.
//! let hyp = Callable::from_fn2("hyp", |x: f64, y: f64| x.hypot(y));
//! let r = hyp.call(&[&Array::from(vec![3.0, 5.0]), &Array::from(4.0)]).unwrap();
//! assert_eq!(r.to_json(), "[5.0,6.4031242374328485]");
//! ```
//!
//! ## Memory blocks and kernels
//!
//! ```
//! use dynd::memblock::MemBlock;
//! let arena = MemBlock::new_pod_allocator(64);
//! assert_eq!(arena.use_count(), 1);
//! let shared = arena.clone();
//! assert_eq!(arena.use_count(), 2);
//! drop(shared);
//! assert_eq!(arena.use_count(), 1);
//! ```
//!
//! The ckernel builder and kernel authoring are in [`kernels`] (with an
//! example there); the C face is the `dynd-capi` crate.

#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

pub mod array;
pub mod callable;
pub mod compute;
pub mod error;
pub mod exec;
pub mod interop;
pub mod kernels;
pub mod layout;
pub mod memblock;
pub mod types;

pub use array::{Array, Index};
pub use array::{infer_type, infer_type_lines};
pub use error::{Error, ErrorKind, Result};
pub use types::Type;
