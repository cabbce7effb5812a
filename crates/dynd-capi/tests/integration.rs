//! Every integration test of this crate, as one test binary: each file
//! beside this one is a module of it. One binary links the crate once
//! (a binary per file linked it ~40 times, which took minutes and
//! gigabytes of disk); `cargo test -p CRATE -- MODULE::` runs one file's
//! tests.

mod bad_inputs_capi;
mod callables;
mod handles;
mod stress_capi;
