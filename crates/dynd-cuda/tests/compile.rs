//! Every kernel the code generator can emit compiles with NVRTC (for
//! `compute_90`, the H100/H200 architecture): each function of the
//! arithmetic family, for each compute type the device has, contiguous and
//! strided, with and without missing values, and with mixed argument types
//! that need casts. A compile error fails the test with NVRTC's log and the
//! numbered source. Without NVRTC the test prints `SKIP: no NVRTC (...)`;
//! CI sets `DYND_REQUIRE_NVRTC=1`, which makes that a failure.

use dynd::callable::arith::{self, Function};
use dynd::kernels::assign::ErrorMode;
use dynd::types::{BuiltinType, Type};
use dynd_cuda::kernel::{Elementwise, Expr, Operand, Place, device_types};
use dynd_cuda::{codegen, nvrtc, probe};

/// A one-op kernel of `f` on arguments `args` (value type, optional), as
/// `Elementwise::for_call` makes them: each argument cast to the compute
/// type.
fn kernel(
    f: &'static Function,
    args: &[(BuiltinType, bool)],
    contiguous: bool,
) -> Option<Elementwise> {
    let values: Vec<Type> = args.iter().map(|(b, _)| Type::builtin(*b)).collect();
    let op = f.device_op(&values).ok()?;
    let place = |b: BuiltinType| {
        if contiguous {
            Place::Strided(vec![b.data_size() as isize])
        } else {
            Place::Strided(vec![-7 * b.data_size() as isize, b.data_size() as isize])
        }
    };
    let shape = if contiguous { vec![100] } else { vec![10, 10] };
    let inputs: Vec<Operand> = args
        .iter()
        .enumerate()
        .map(|(i, &(elem, optional))| Operand {
            elem,
            optional,
            // The last argument of two is a scalar in half the cases.
            place: if i == 1 && contiguous && elem == BuiltinType::Float64 {
                Place::Scalar
            } else {
                place(elem)
            },
        })
        .collect();
    let optional = args.iter().any(|a| a.1);
    let body = Expr::Op {
        name: f.name(),
        op,
        missing: f.missing(),
        args: inputs
            .iter()
            .enumerate()
            .map(|(i, o)| {
                if o.elem == op.compute {
                    Expr::Arg(i)
                } else {
                    Expr::Cast(op.compute, Box::new(Expr::Arg(i)))
                }
            })
            .collect(),
    };
    Some(Elementwise {
        shape,
        inputs,
        out: Operand {
            elem: op.out,
            optional,
            place: place(op.out),
        },
        body,
    })
}

/// A `where` kernel as `Elementwise::for_where` makes it, for the argument
/// types (value type, optional) when the device has the output type.
fn where_kernel(
    cond: (BuiltinType, bool),
    x: (BuiltinType, bool),
    y: (BuiltinType, bool),
    contiguous: bool,
) -> Option<Elementwise> {
    let out = arith::promote(x.0, y.0).filter(|b| b.cuda_c().is_some())?;
    let place = |b: BuiltinType| {
        if contiguous {
            Place::Strided(vec![b.data_size() as isize])
        } else {
            Place::Strided(vec![0, b.data_size() as isize])
        }
    };
    let inputs: Vec<Operand> = [cond, x, y]
        .into_iter()
        .map(|(elem, optional)| Operand {
            elem,
            optional,
            place: place(elem),
        })
        .collect();
    let branch = |i: usize, b: BuiltinType| {
        Box::new(if b == out {
            Expr::Arg(i)
        } else {
            Expr::Cast(out, Box::new(Expr::Arg(i)))
        })
    };
    Some(Elementwise {
        shape: if contiguous { vec![64] } else { vec![8, 8] },
        out: Operand {
            elem: out,
            optional: cond.1 || x.1 || y.1,
            place: place(out),
        },
        body: Expr::Select {
            cond: Box::new(Expr::Arg(0)),
            then: branch(1, x.0),
            otherwise: branch(2, y.0),
        },
        inputs,
    })
}

#[test]
fn every_generated_elementwise_kernel_compiles() {
    if probe::skip_without_nvrtc().is_some() {
        return;
    }
    let mut kernels = Vec::new();
    for f in arith::functions() {
        for c in device_types() {
            for contiguous in [true, false] {
                for optional in [false, true] {
                    let args = vec![(c, optional); f.arity()];
                    kernels.extend(kernel(f, &args, contiguous));
                }
            }
        }
        // Mixed argument types: casts to the compute type in the kernel.
        if f.arity() == 2 {
            use BuiltinType::*;
            for pair in [
                (Int8, Float64),
                (Bool, Int32),
                (UInt64, Int64),
                (UInt8, Float32),
                (Int64, Float32),
            ] {
                kernels.extend(kernel(f, &[(pair.0, false), (pair.1, true)], true));
                kernels.extend(kernel(f, &[(pair.1, true), (pair.0, false)], false));
            }
        }
    }
    // where: every condition type, optional or not, over every pair of
    // value types the output type of which the device has.
    for c in device_types() {
        for x in device_types() {
            for (optional, contiguous) in [(false, true), (true, false)] {
                kernels.extend(where_kernel(
                    (c, optional),
                    (x, false),
                    (BuiltinType::Float64, optional),
                    contiguous,
                ));
                kernels.extend(where_kernel(
                    (c, false),
                    (x, optional),
                    (x, optional),
                    contiguous,
                ));
            }
        }
    }
    assert!(kernels.len() > 700, "only {} kernels", kernels.len());
    let sources: Vec<String> = kernels.iter().map(codegen::source).collect();
    compile_all(&sources);
}

/// What `check` says of each source that fails it, the sources split over
/// every core (a failing check returns its message).
fn failures_of(sources: &[&String], check: impl Fn(&str) -> Option<String> + Sync) -> Vec<String> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let chunk = sources.len().div_ceil(threads).max(1);
    let check = &check;
    std::thread::scope(|s| {
        let handles: Vec<_> = sources
            .chunks(chunk)
            .map(|part| {
                s.spawn(move || part.iter().filter_map(|src| check(src)).collect::<Vec<_>>())
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| {
                h.join()
                    .unwrap_or_else(|_| vec!["a compile thread panicked".into()])
            })
            .collect()
    })
}

/// Compiles every source with NVRTC for [`nvrtc::TEST_ARCH`], on every
/// core (NVRTC compiles separate programs on separate threads), failing
/// with the first error and how many failed; then checks the cache: a
/// second compile of the same sources compiles nothing.
fn compile_all(sources: &[String]) {
    let before = nvrtc::compiles();
    let all: Vec<&String> = sources.iter().collect();
    let failures = failures_of(&all, |src| {
        nvrtc::compile_uncached(src, nvrtc::TEST_ARCH)
            .err()
            .map(|e| e.message().to_string())
    });
    assert!(
        failures.is_empty(),
        "{} of {} kernels failed; the first:\n{}",
        failures.len(),
        sources.len(),
        failures[0]
    );
    assert!(nvrtc::compiles() > before);
    // What an H100 or H200 loads: machine code for sm_90 (NVRTC's own
    // assembler, so register and shared-memory limits are checked here
    // too), for every 16th source of each family.
    let sample: Vec<&String> = sources.iter().step_by(16).collect();
    let cubins = failures_of(&sample, |src| match nvrtc::compile_uncached(src, "sm_90") {
        Ok(nvrtc::Image::Cubin(c)) if c.starts_with(b"\x7fELF") => None,
        Ok(other) => Some(format!("not an ELF CUBIN: {other:?}")),
        Err(e) => Some(e.message().to_string()),
    });
    assert!(cubins.is_empty(), "sm_90: {}", cubins[0]);
    // The cache (checked by identity: other tests compile at the same
    // time, so the global count would race): compiling a source again
    // gives the same PTX.
    for src in sources.iter().take(20) {
        let again = nvrtc::compile(src, nvrtc::TEST_ARCH).unwrap();
        let third = nvrtc::compile(src, nvrtc::TEST_ARCH).unwrap();
        assert!(std::sync::Arc::ptr_eq(&again, &third));
    }
}

#[test]
fn every_generated_conversion_kernel_compiles() {
    use dynd::kernels::assign::ErrorMode;
    use dynd_cuda::kernel::assign_body;
    if probe::skip_without_nvrtc().is_some() {
        return;
    }
    let mut sources = Vec::new();
    for from in device_types() {
        for to in device_types() {
            // Every mode between plain types; the option paths (missing
            // in, NA out, NaN as missing) under one checked mode and
            // nocheck.
            let mut variants: Vec<(bool, bool, ErrorMode)> = ErrorMode::ALL
                .into_iter()
                .map(|m| (false, false, m))
                .collect();
            for m in [ErrorMode::NoCheck, ErrorMode::Overflow] {
                variants.extend([(true, true, m), (false, true, m), (true, false, m)]);
            }
            for (from_opt, to_opt, mode) in variants {
                let input = Operand {
                    elem: from,
                    optional: from_opt,
                    place: Place::Strided(vec![from.data_size() as isize]),
                };
                let body = assign_body(&input, (to, to_opt), mode);
                sources.push(codegen::source(&Elementwise {
                    shape: vec![100],
                    inputs: vec![input],
                    out: Operand {
                        elem: to,
                        optional: to_opt,
                        place: Place::Strided(vec![to.data_size() as isize]),
                    },
                    body,
                }));
            }
        }
    }
    sources.sort();
    sources.dedup();
    assert!(sources.len() > 1000, "only {}", sources.len());
    compile_all(&sources);
}

#[test]
fn every_generated_reduction_kernel_compiles() {
    use dynd::callable::reduce::BuiltinReduction;
    use dynd_cuda::reduce::{self, Reduce};
    if probe::skip_without_nvrtc().is_some() {
        return;
    }
    let mut sources = Vec::new();
    for kind in BuiltinReduction::ALL {
        for b in device_types() {
            for optional in [false, true] {
                let tp = Type::builtin(b);
                let tp = if optional {
                    Type::option(tp).unwrap()
                } else {
                    tp
                };
                let out = kind.result_type(&tp).unwrap();
                let out_opt = out.option_value().is_some();
                let out_b = out.option_value().unwrap_or(&out).as_builtin().unwrap();
                // One kept and one reduced dim (the merged, common case),
                // and several of each (the unravelling loops).
                for (nk, nr) in [(1, 1), (2, 3)] {
                    sources.push(reduce::source(&Reduce {
                        kind,
                        src: (b, optional),
                        out: (out_b, out_opt),
                        kept: vec![4; nk],
                        kept_src: vec![8; nk],
                        kept_out: vec![8; nk],
                        reduced: vec![5; nr],
                        reduced_src: vec![8; nr],
                    }));
                }
            }
        }
    }
    assert_eq!(sources.len(), 12 * device_types().count() * 2 * 2);
    compile_all(&sources);
}

#[test]
fn every_generated_ragged_elementwise_kernel_compiles() {
    use dynd_cuda::kernel::call_body;
    if probe::skip_without_nvrtc().is_some() {
        return;
    }
    let mut sources = Vec::new();
    for f in arith::functions() {
        for c in device_types() {
            for optional in [false, true] {
                let mut inputs = vec![Operand {
                    elem: c,
                    optional,
                    place: Place::Strided(vec![c.data_size() as isize]),
                }];
                if f.arity() == 2 {
                    inputs.push(Operand {
                        elem: BuiltinType::Float64,
                        optional: false,
                        place: Place::Scalar,
                    });
                }
                let values: Vec<Type> = inputs.iter().map(|o| Type::builtin(o.elem)).collect();
                let Ok(op) = f.device_op(&values) else {
                    continue;
                };
                let Ok(body) = call_body(f, &inputs, op.out) else {
                    continue;
                };
                let k = Elementwise {
                    shape: vec![1],
                    inputs,
                    out: Operand {
                        elem: op.out,
                        optional,
                        place: Place::Strided(vec![op.out.data_size() as isize]),
                    },
                    body,
                };
                for nk in [1, 2] {
                    sources.push(dynd_cuda::ragged::source(&k, 0, nk));
                }
            }
        }
    }
    assert!(sources.len() > 400, "only {}", sources.len());
    compile_all(&sources);
}

#[test]
fn every_generated_ragged_reduction_kernel_compiles() {
    use dynd::callable::reduce::BuiltinReduction;
    use dynd_cuda::reduce::{self, RaggedReduce};
    if probe::skip_without_nvrtc().is_some() {
        return;
    }
    let mut sources = Vec::new();
    for kind in BuiltinReduction::ALL {
        for b in device_types() {
            for optional in [false, true] {
                let tp = Type::builtin(b);
                let tp = if optional {
                    Type::option(tp).unwrap()
                } else {
                    tp
                };
                // A reduced var dim makes min, max, mean, … optional.
                let out = Type::var_dim(tp.clone());
                let out = dynd::callable::reduce::Reduction::builtin(kind)
                    .with(Some(&[-1]), false)
                    .resolve(&[Type::fixed_dim(3, out)])
                    .unwrap();
                let out = out.dtype();
                let out_opt = out.option_value().is_some();
                let out_b = out.option_value().unwrap_or(out).as_builtin().unwrap();
                for nk in [1, 2] {
                    sources.push(dynd_cuda::ragged_axes::source(
                        kind,
                        (b, optional),
                        (out_b, out_opt),
                        nk,
                    ));
                    sources.push(reduce::ragged_source(&RaggedReduce {
                        kind,
                        src: (b, optional),
                        out: (out_b, out_opt),
                        kept: vec![4; nk],
                        kept_desc: vec![16; nk],
                        kept_out: vec![8; nk],
                        offset: 0,
                        stride: b.data_size() as isize,
                    }));
                }
            }
        }
    }
    assert_eq!(sources.len(), 12 * device_types().count() * 2 * 2 * 2);
    compile_all(&sources);
}

#[test]
fn every_generated_row_kernel_compiles() {
    use dynd::callable::sort::{RowOp, SortOptions};
    use dynd_cuda::rows::{self, RowKernel};
    if probe::skip_without_nvrtc().is_some() {
        return;
    }
    let down = SortOptions { descending: true };
    let ops = [
        RowOp::CumSum,
        RowOp::CumProd,
        RowOp::Sort(SortOptions::default()),
        RowOp::Sort(down),
        RowOp::ArgSort(SortOptions::default()),
        RowOp::ArgSort(down),
    ];
    let mut sources = Vec::new();
    for op in ops {
        for b in device_types() {
            for optional in [false, true] {
                let tp = Type::builtin(b);
                let tp = if optional {
                    Type::option(tp).unwrap()
                } else {
                    tp
                };
                let out = op.result_elem(&tp).unwrap();
                let out_b = out.option_value().unwrap_or(&out).as_builtin().unwrap();
                for nk in [1, 2] {
                    sources.push(rows::source(&RowKernel {
                        op,
                        src: (b, optional),
                        out: (out_b, out.option_value().is_some()),
                        nk,
                        fixed: nk == 2,
                    }));
                }
            }
        }
    }
    assert_eq!(sources.len(), ops.len() * device_types().count() * 2 * 2);
    // Long rows: the radix sort and the chunked scan, of one row and of
    // many (segmented).
    use dynd_cuda::long_row;
    // The segments' offsets alone (the sort of many rows compiles them so).
    sources.push(long_row::SEGMENT_PRELUDE.to_string());
    for b in device_types() {
        for optional in [false, true] {
            for descending in [false, true] {
                for argsort in [false, true] {
                    for segmented in [false, true] {
                        sources.push(dynd_cuda::radix::source(
                            (b, optional),
                            descending,
                            argsort,
                            segmented,
                        ));
                    }
                }
            }
            for op in [RowOp::CumSum, RowOp::CumProd] {
                let tp = Type::builtin(b);
                let out = op.result_elem(&tp).unwrap();
                let out = out.as_builtin().unwrap();
                sources.push(long_row::scan_source(op, (b, optional), out));
                sources.push(long_row::segmented_scan_source(op, (b, optional), out));
            }
        }
    }
    compile_all(&sources);
}

#[test]
fn every_generated_selection_kernel_compiles() {
    use dynd_cuda::select;
    if probe::skip_without_nvrtc().is_some() {
        return;
    }
    let mut sources = vec![
        select::SCAN_SOURCE.to_string(),
        dynd_cuda::launch::OFFSETS_SOURCE.to_string(),
    ];
    for nk in [1, 2] {
        sources.push(select::slice_source(nk));
        for (e, o) in [(1, 1), (8, 1), (4, 8), (2, 2)] {
            sources.push(dynd_cuda::ragged::rebase_source(e, o, nk));
        }
        sources.push(dynd_cuda::nested::same_source(nk));
        sources.push(dynd_cuda::nested::lengths_source(1 + nk, nk));
        sources.push(dynd_cuda::nested::expand_source(nk));
        sources.push(dynd_cuda::nested::pad_source(nk));
        sources.push(dynd_cuda::nested::lengths_alike_source(nk));
        sources.push(dynd_cuda::rows::long_rows_source(nk));
        // Rows that may be missing: put together, and an integer within.
        for (item, flag) in [(24, 16), (32, 16)] {
            sources.push(dynd_cuda::option_rows::assemble_source(nk, item, flag));
        }
        for t in device_types() {
            let na = dynd_cuda::codegen::na_bits(t);
            sources.push(dynd_cuda::option_rows::at_source(t.data_size(), &na, nk));
        }
        for esize in [1, 2, 4, 8, 16] {
            sources.push(select::at_source(esize, nk));
            sources.push(dynd_cuda::concat::gather_source(esize, nk));
            for mask_opt in [false, true] {
                sources.push(select::filter_source(esize, mask_opt, nk));
            }
        }
        for idx in device_types().filter(|t| t.is_signed_int() || t.is_unsigned_int()) {
            for (esize, na) in [(1, "(unsigned char)2"), (8, "0x7ff00000000007a2ULL")] {
                sources.push(select::take_source(esize, (idx, false), "", nk));
                sources.push(select::take_source(esize, (idx, true), na, nk));
            }
        }
    }
    assert!(sources.len() > 60, "only {}", sources.len());
    compile_all(&sources);
}

#[test]
fn every_generated_ragged_broadcast_kernel_compiles() {
    use dynd_cuda::broadcast::{self, Kind, Out};
    use dynd_cuda::kernel::{Expr, call_body};
    if probe::skip_without_nvrtc().is_some() {
        return;
    }
    let strided = |elem: BuiltinType, optional: bool| Operand {
        elem,
        optional,
        place: Place::Strided(vec![0]),
    };
    let mut sources = Vec::new();
    for f in arith::functions() {
        for c in device_types() {
            for optional in [false, true] {
                let mut inputs = vec![strided(c, optional)];
                let mut kinds = vec![vec![Kind::Ragged]];
                if f.arity() == 2 {
                    inputs.push(strided(BuiltinType::Float64, false));
                    kinds = vec![
                        vec![Kind::Ragged, Kind::Ragged],
                        vec![Kind::Ragged, Kind::Fixed],
                        vec![Kind::Fixed, Kind::Ragged],
                    ];
                }
                let values: Vec<Type> = inputs.iter().map(|o| Type::builtin(o.elem)).collect();
                let Ok(op) = f.device_op(&values) else {
                    continue;
                };
                let Ok(body) = call_body(f, &inputs, op.out) else {
                    continue;
                };
                let k = Elementwise {
                    shape: vec![1],
                    inputs,
                    out: Operand {
                        elem: op.out,
                        optional,
                        place: Place::Strided(vec![op.out.data_size() as isize]),
                    },
                    body,
                };
                // A new var result, a fixed one, an output's rows.
                for (n, kinds) in kinds.iter().enumerate() {
                    let out = [Out::New, Out::Strided, Out::Rows][n];
                    sources.push(broadcast::source(&k, kinds, 1 + n % 2, out));
                }
            }
        }
    }
    // where(cond, x, y) with a scalar branch.
    for c in device_types() {
        let k = Elementwise {
            shape: vec![1],
            inputs: vec![
                strided(BuiltinType::Bool, true),
                strided(c, false),
                Operand {
                    elem: c,
                    optional: false,
                    place: Place::Scalar,
                },
            ],
            out: strided(c, true),
            body: Expr::Select {
                cond: Box::new(Expr::Arg(0)),
                then: Box::new(Expr::Arg(1)),
                otherwise: Box::new(Expr::Arg(2)),
            },
        };
        sources.push(broadcast::source(
            &k,
            &[Kind::Ragged, Kind::Ragged, Kind::Scalar],
            2,
            Out::New,
        ));
    }
    // Assignments: every conversion into an output's rows, and from rows
    // into a fixed output.
    for from in device_types() {
        for to in device_types() {
            for (optional, mode) in [(false, ErrorMode::Default), (true, ErrorMode::NoCheck)] {
                let input = strided(from, optional);
                let body = dynd_cuda::kernel::assign_body(&input, (to, optional), mode);
                let k = Elementwise {
                    shape: vec![1],
                    inputs: vec![input],
                    out: strided(to, optional),
                    body,
                };
                sources.push(broadcast::source(&k, &[Kind::Ragged], 1, Out::Rows));
                sources.push(broadcast::source(&k, &[Kind::Fixed], 2, Out::Rows));
                sources.push(broadcast::source(&k, &[Kind::Ragged], 1, Out::Strided));
                // Into nested rows, from a scalar and from nested rows.
                sources.push(dynd_cuda::nested::assign_source(&k, false, 1));
                let scalar = Elementwise {
                    inputs: vec![Operand {
                        place: Place::Scalar,
                        ..k.inputs[0].clone()
                    }],
                    ..k.clone()
                };
                sources.push(dynd_cuda::nested::assign_source(&scalar, true, 2));
            }
        }
    }
    sources.push(dynd_cuda::outputs::lengths_source(1));
    sources.push(dynd_cuda::outputs::lengths_source(3));
    assert!(sources.len() > 500, "only {}", sources.len());
    compile_all(&sources);
}

#[test]
fn a_compile_error_reports_the_log_and_the_source() {
    if probe::skip_without_nvrtc().is_some() {
        return;
    }
    let e = nvrtc::compile(
        "extern \"C\" __global__ void k() { undefined_thing(); }",
        nvrtc::TEST_ARCH,
    )
    .unwrap_err();
    assert_eq!(e.kind(), dynd::ErrorKind::External);
    assert!(e.message().contains("undefined_thing"), "{e}");
    assert!(e.message().contains("   1 extern"), "{e}");
}

#[test]
fn the_device_gets_machine_code_when_nvrtc_knows_its_architecture() {
    if probe::skip_without_nvrtc().is_some() {
        return;
    }
    let archs = nvrtc::supported_archs().expect("NVRTC lists its architectures");
    assert!(archs.contains(&90), "{archs:?}");
    assert_eq!(nvrtc::arch_for(9, 0), "sm_90");
    // A device newer than NVRTC: PTX for the newest architecture it has.
    let newest = archs.iter().max().unwrap();
    assert_eq!(nvrtc::arch_for(99, 9), format!("compute_{newest}"));
    // Older than any: its own virtual architecture.
    assert_eq!(nvrtc::arch_for(1, 0), "compute_10");
    let src = "extern \"C\" __global__ void k(int* p) { p[threadIdx.x] = 1; }";
    let cubin = nvrtc::compile(src, "sm_90").unwrap();
    assert!(matches!(&*cubin, nvrtc::Image::Cubin(c) if c.starts_with(b"\x7fELF")));
    let ptx = nvrtc::compile(src, "compute_90").unwrap();
    assert!(ptx.ptx().is_some_and(|p| p.contains(".entry k")), "{ptx:?}");
    // Cached per (source, architecture).
    assert!(std::sync::Arc::ptr_eq(
        &cubin,
        &nvrtc::compile(src, "sm_90").unwrap()
    ));
    for bad in ["sm90", "sm_", "compute_x1", "", "gpu_90", "sm_a"] {
        let e = nvrtc::compile(src, bad).unwrap_err();
        assert_eq!(e.kind(), dynd::ErrorKind::External, "{bad}: {e}");
        assert!(e.message().contains("unknown architecture"), "{bad}: {e}");
    }
}

#[test]
fn compiled_kernels_are_kept_on_disk_for_the_next_process() {
    if probe::skip_without_nvrtc().is_some() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("dynd-kernels-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let version = nvrtc::version().expect("NVRTC says its version");
    // Sources no other test makes (the process's cache would answer first).
    let tag = format!("{:?}", std::time::SystemTime::now());
    let src = format!("// {tag} a\nextern \"C\" __global__ void k(int* p) {{ p[0] = 7; }}");
    let made = nvrtc::compile_with(&src, "sm_90", Some(&dir)).unwrap();
    assert_eq!(
        dynd_cuda::disk_cache::load(&dir, &src, "sm_90", &version).as_ref(),
        Some(&*made)
    );
    // What the disk holds is what a later process gets, without NVRTC:
    // an image NVRTC would never make proves where it came from.
    let other = format!("// {tag} b\nextern \"C\" __global__ void k(int* p) {{ p[0] = 8; }}");
    let planted = nvrtc::Image::Cubin(b"\x7fELF planted".to_vec());
    dynd_cuda::disk_cache::store(&dir, &other, "sm_90", &version, &planted);
    let got = nvrtc::compile_with(&other, "sm_90", Some(&dir)).unwrap();
    assert_eq!(*got, planted);
    // Without a disk cache nothing is read or written.
    let third = format!("// {tag} c\nextern \"C\" __global__ void k(int* p) {{ p[0] = 9; }}");
    nvrtc::compile_with(&third, "sm_90", None).unwrap();
    assert_eq!(
        dynd_cuda::disk_cache::load(&dir, &third, "sm_90", &version),
        None
    );
    let _ = std::fs::remove_dir_all(&dir);
}
