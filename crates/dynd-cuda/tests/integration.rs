//! dynd-cuda's integration tests, one binary (as every crate's: see
//! docs/testing.md), one module per area:
//!
//! - `compile`: every generated kernel compiles with NVRTC;
//! - `interp`: kernel descriptions, run by the host interpreter, against
//!   dynd's host calls;
//! - `gpu`: on a CUDA device (each test prints `SKIP: no CUDA device` and
//!   passes without one, unless `DYND_REQUIRE_GPU=1`).

mod common;
mod compile;
mod gpu;
mod interp;
