//! Every integration test of this crate, as one test binary: each file
//! beside this one is a module of it. One binary links the crate once
//! (a binary per file linked it ~40 times, which took minutes and
//! gigabytes of disk); `cargo test -p CRATE -- MODULE::` runs one file's
//! tests.

mod array_ergonomics;
mod arrays;
mod arrow;
mod assign;
mod assign_alloc;
mod assign_text;
mod bad_inputs;
mod bfloat16;
mod callable_arith;
mod callable_core;
mod callable_reduce;
mod callable_strings;
mod common;
mod datashape;
mod dlpack;
mod exec_families;
mod external;
mod infer;
mod json;
mod json_lines;
mod json_numbers;
mod kernels_core;
mod layering;
mod ndarray_interop;
mod null_propagation;
mod nulls;
mod option_rows;
mod option_types;
mod ragged_index;
mod ragged_outputs;
mod reduce_missing;
mod segmented;
mod select;
mod select_props;
mod sorting;
mod sorting_props;
mod stress;
mod strided_copy;
