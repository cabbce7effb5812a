//! Every integration test of this crate, as one test binary: each file
//! beside this one is a module of it. One binary links the crate once
//! (a binary per file linked it ~40 times, which took minutes and
//! gigabytes of disk); `cargo test -p CRATE -- MODULE::` runs one file's
//! tests.

mod common;
mod layering;
mod ops_acceptance;
mod ops_elementwise;
mod ops_fft;
mod ops_interop;
mod ops_matx;
mod ops_percentile;
mod ops_reduce;
mod ops_shape;
mod ops_views;
mod semantics;
