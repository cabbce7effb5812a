//! The device checks on the host emulator (`dynd_cuda::emulator`): the
//! generated CUDA C compiled by the system's C++ compiler and run with a
//! host thread per CUDA thread, on every machine. Without a C++17 compiler
//! each test prints `SKIP: no CUDA emulator (<reason>)`;
//! `DYND_REQUIRE_EMULATOR=1` (CI) makes that a failure.

use crate::checks;
use crate::common::host;
use dynd::callable::reduce::BuiltinReduction;
use dynd::memblock::DeviceId;
use dynd::types::BuiltinType;
use dynd_cuda::emulator::{self, Emulator};
use proptest::prelude::*;
use std::sync::OnceLock;

/// The emulated device of these tests.
const EMU: DeviceId = DeviceId::Cuda(30);

/// Installs the emulator once, or says why the test skips.
fn emu() -> bool {
    static INSTALLED: OnceLock<bool> = OnceLock::new();
    *INSTALLED.get_or_init(|| match emulator::available() {
        Ok(()) => {
            Emulator::install(30).expect("the emulator is available");
            true
        }
        Err(why) => {
            assert!(
                std::env::var_os("DYND_REQUIRE_EMULATOR").is_none(),
                "DYND_REQUIRE_EMULATOR is set and there is no emulator: {why}"
            );
            println!("SKIP: no CUDA emulator ({why})");
            false
        }
    })
}

#[test]
fn arrays_round_trip_through_the_emulator() {
    if emu() {
        checks::arrays_round_trip(EMU);
    }
}

#[test]
fn every_function_on_every_type_equals_the_host() {
    // Every first type; second types that cover the promotions (the same
    // type, a float, a narrower integer, bool): every pair takes minutes
    // of compiles, the GPU run does those.
    if emu() {
        use BuiltinType as B;
        checks::every_function_on_every_type(EMU, Some(&[B::Float64, B::Int8, B::Bool, B::UInt32]));
    }
}

#[test]
fn errors_are_the_hosts_with_the_index() {
    if emu() {
        checks::errors_are_the_hosts_with_the_index(EMU);
    }
}

#[test]
fn mixing_devices_is_refused() {
    if emu() {
        checks::mixing_devices_is_refused(EMU);
    }
}

#[test]
fn where_equals_the_host() {
    if emu() {
        checks::where_equals_the_host(EMU);
    }
}

/// The types the emulated sweeps take first: one of each width and kind
/// (each type is a compile per kernel; the GPU run takes all).
const SOME: [BuiltinType; 6] = [
    BuiltinType::Bool,
    BuiltinType::Int8,
    BuiltinType::UInt16,
    BuiltinType::Int64,
    BuiltinType::Float32,
    BuiltinType::Float64,
];

#[test]
fn reductions_equal_the_host() {
    if emu() {
        checks::reductions_equal_the_host(EMU, Some(&SOME));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Random shapes (empty dims included), axes, keepdims, types and
    /// missing values: every reduction equals the host's.
    #[test]
    fn random_reductions_equal_the_host(
        kind in 0..BuiltinReduction::ALL.len(),
        t in 0..SOME.len(),
        optional in any::<bool>(),
        shape in proptest::collection::vec(0usize..6, 0..4),
        mask in 0u8..16,
        all in any::<bool>(),
        keep in any::<bool>(),
        seed in -20i64..20,
    ) {
        if emu() {
            let h = host(SOME[t], &shape, optional, seed);
            let axes: Vec<isize> = (0..shape.len() as isize).filter(|k| mask & (1 << k) != 0).collect();
            let axes = (!all).then_some(axes.as_slice());
            checks::reduction_equals_the_host(EMU, &h, "random", BuiltinReduction::ALL[kind], axes, keep);
        }
    }
}

#[test]
fn casts_equal_the_host() {
    if emu() {
        checks::casts_equal_the_host(EMU, Some(&SOME));
    }
}

#[test]
fn assignments_broadcast_and_fail_as_on_the_host() {
    if emu() {
        checks::assignments_broadcast_and_fail_as_on_the_host(EMU);
    }
}

#[test]
fn ops_fuse_and_equal_the_host() {
    if emu() {
        checks::ops_fuse_and_equal_the_host(EMU);
    }
}

#[test]
fn reductions_of_each_plan() {
    if emu() {
        checks::reductions_of_each_plan(EMU);
    }
}

#[test]
fn overlapping_outputs_read_a_copy() {
    if emu() {
        checks::overlapping_outputs_read_a_copy(EMU);
    }
}

#[test]
fn ragged_reductions_equal_the_host() {
    if emu() {
        checks::ragged_reductions_equal_the_host(EMU, Some(&SOME));
    }
}

#[test]
fn ragged_reductions_over_fixed_axes_equal_the_host() {
    if emu() {
        checks::ragged_reductions_over_fixed_axes_equal_the_host(EMU, None);
    }
}

#[test]
fn ragged_elementwise_equals_the_host() {
    if emu() {
        checks::ragged_elementwise_equals_the_host(EMU, Some(&SOME));
    }
}

#[test]
fn ragged_rows_equal_the_host() {
    if emu() {
        checks::ragged_rows_equal_the_host(EMU, Some(&SOME));
    }
}

#[test]
fn ragged_selection_equals_the_host() {
    if emu() {
        checks::ragged_selection_equals_the_host(EMU, Some(&SOME));
    }
}

#[test]
fn ragged_extremes_equal_the_host() {
    if emu() {
        checks::ragged_extremes_equal_the_host(EMU);
    }
}

#[test]
fn ragged_kernels_once() {
    if emu() {
        checks::ragged_kernels_once(EMU);
    }
}

#[test]
fn ragged_broadcasting_equals_the_host() {
    if emu() {
        checks::ragged_broadcasting_equals_the_host(EMU, Some(&SOME));
    }
}

#[test]
fn concatenate_equals_the_host() {
    if emu() {
        checks::concatenate_equals_the_host(EMU);
    }
}

#[test]
fn long_rows_equal_the_host() {
    if emu() {
        checks::long_rows_equal_the_host(EMU, Some(&SOME));
    }
}

#[test]
fn many_long_rows_equal_the_host() {
    if emu() {
        checks::many_long_rows_equal_the_host(EMU, Some(&SOME));
    }
}

#[test]
fn nested_equal_the_host() {
    if emu() {
        checks::nested_equal_the_host(EMU, Some(&SOME));
    }
}

#[test]
fn records_with_var_fields_equal_the_host() {
    if emu() {
        checks::records_with_var_fields_equal_the_host(EMU);
    }
}

#[test]
fn ragged_outputs_equal_the_host() {
    if emu() {
        checks::ragged_outputs_equal_the_host(EMU);
    }
}

#[test]
fn option_rows_equal_the_host() {
    if emu() {
        checks::option_rows_equal_the_host(EMU);
    }
}

#[test]
fn nested_selection_equals_the_host() {
    if emu() {
        checks::nested_selection_equals_the_host(EMU);
    }
}

#[test]
fn nested_calls_equal_the_host() {
    if emu() {
        checks::nested_calls_equal_the_host(EMU);
    }
}

#[test]
fn nested_outputs_equal_the_host() {
    if emu() {
        checks::nested_outputs_equal_the_host(EMU);
    }
}

#[test]
fn deep_nested_equal_the_host() {
    if emu() {
        checks::deep_nested_equal_the_host(EMU);
    }
}
