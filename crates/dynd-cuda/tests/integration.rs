//! dynd-cuda's integration tests, one binary (as every crate's: see
//! docs/testing.md), one module per area:
//!
//! - `compile`: every generated kernel compiles with NVRTC;
//! - `interp`: kernel descriptions, run by the host interpreter, against
//!   dynd's host calls;
//! - `checks`: the device checks, against the host, run by
//!   - `emulated`: on the host emulator (the generated CUDA C compiled by
//!     the C++ compiler), on every machine;
//!   - `gpu`: on a CUDA device (each test prints `SKIP: no CUDA device`
//!     and passes without one, unless `DYND_REQUIRE_GPU=1`).

mod checks;
mod common;
mod compile;
mod emulated;
mod gpu;
mod interp;
