//! The kernel description against dynd's host calls: for random arrays of
//! every device type (optional or not, broadcast, reversed views, host
//! scalars), the interpreter running the description of a call gives
//! exactly what the host call gives — the same values, the same missing
//! elements, the same error. The description is made from device arrays
//! of a host-backed test device (dynd's `test-device` feature), as a real
//! device call makes it.

use dynd::callable::arith;
use dynd::exec::testing::HostBackedDevice;
use dynd::memblock::DeviceId;
use dynd::types::BuiltinType;
use dynd::{Array, Index, callable};
use dynd_cuda::interp;
use dynd_cuda::kernel::{Elementwise, device_types};

use crate::common::array;
use proptest::prelude::*;
use std::sync::Once;

const DEV: DeviceId = DeviceId::Cuda(50);

fn install() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        HostBackedDevice::install(50);
    });
}

/// Runs `name` on `args` through the description and the interpreter, and
/// on the host; returns both outcomes as text.
fn both(name: &str, host_args: &[Array], reverse: &[bool]) -> (String, String) {
    // Views: the first dim reversed where asked, on the host and on the
    // device alike.
    let view = |a: &Array, rev: bool| {
        if rev && a.ndim() > 0 {
            a.index(&[Index::slice(None, None, -1)]).unwrap()
        } else {
            a.clone()
        }
    };
    let hosts: Vec<Array> = host_args
        .iter()
        .zip(reverse)
        .map(|(a, &r)| view(a, r))
        .collect();
    let refs: Vec<&Array> = hosts.iter().collect();
    let expected = match callable::lookup(name).unwrap().call(&refs) {
        Ok(r) => r.to_json(),
        Err(e) => format!("error: {}", e.message()),
    };
    // 0-d arguments stay host scalars; others go to the device.
    let devs: Vec<Array> = host_args
        .iter()
        .zip(reverse)
        .map(|(a, &r)| {
            if a.ndim() == 0 {
                a.clone()
            } else {
                view(&a.to_device(DEV).unwrap(), r)
            }
        })
        .collect();
    let drefs: Vec<&Array> = devs.iter().collect();
    let tps: Vec<dynd::Type> = devs.iter().map(|a| a.tp().clone()).collect();
    let out_tp = match callable::lookup(name).unwrap().resolve(&tps) {
        Ok(t) => t,
        Err(e) => return (expected, format!("error: {}", e.message())),
    };
    let dout = Array::empty_on(DEV, out_tp.clone()).unwrap();
    let k = match name {
        "where" => Elementwise::for_where(&dout, &drefs),
        _ => Elementwise::for_call(arith::function(name).unwrap(), &dout, &drefs),
    };
    let k = match k {
        Ok(k) => k,
        Err(e) => return (expected, format!("error: {}", e.message())),
    };
    let out = Array::empty(out_tp).unwrap();
    let inputs: Vec<Array> = devs.iter().map(|a| a.to_host().unwrap()).collect();
    let irefs: Vec<&Array> = inputs.iter().collect();
    let got = match interp::run(&k, &out, &irefs) {
        Ok(()) => out.to_json(),
        Err(e) => format!("error: {}", e.message()),
    };
    (expected, got)
}

fn names(arity: usize) -> Vec<&'static str> {
    arith::functions()
        .filter(|f| f.arity() == arity)
        .map(|f| f.name())
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn binary_descriptions_compute_what_the_host_computes(
        f in 0usize..64,
        ta in 0usize..11, tb in 0usize..11,
        oa in any::<bool>(), ob in any::<bool>(),
        shape in prop::collection::vec(1usize..4, 1..3),
        b_dims in 0usize..3,
        ra in any::<bool>(), rb in any::<bool>(),
        vals in prop::collection::vec((-4i64..5, any::<bool>()), 1..12),
    ) {
        install();
        let types: Vec<BuiltinType> = device_types().collect();
        let names = names(2);
        let name = names[f % names.len()];
        let (ta, tb) = (types[ta % types.len()], types[tb % types.len()]);
        let a = array(ta, oa, &shape, &vals);
        // b: the trailing dims of a's shape (broadcast), or a 0-d scalar.
        let bshape: Vec<usize> = shape[shape.len() - b_dims.min(shape.len())..].to_vec();
        let b = array(tb, ob && !bshape.is_empty(), &bshape, &vals[vals.len() / 2..]);
        let (expected, got) = both(name, &[a, b], &[ra, rb]);
        if expected.starts_with("error") || got.starts_with("error") {
            // The device refuses some types (a Type error before running)
            // the host computes; otherwise errors match word for word.
            if !got.contains("on the device") {
                prop_assert_eq!(expected, got, "{}({}, {})", name, ta, tb);
            }
        } else {
            prop_assert_eq!(expected, got, "{}({}, {})", name, ta, tb);
        }
    }

    #[test]
    fn unary_descriptions_compute_what_the_host_computes(
        f in 0usize..64,
        t in 0usize..11,
        optional in any::<bool>(),
        shape in prop::collection::vec(0usize..4, 1..3),
        rev in any::<bool>(),
        vals in prop::collection::vec((-4i64..5, any::<bool>()), 1..12),
    ) {
        install();
        let types: Vec<BuiltinType> = device_types().collect();
        let names = names(1);
        let name = names[f % names.len()];
        let t = types[t % types.len()];
        let a = array(t, optional, &shape, &vals);
        let (expected, got) = both(name, &[a], &[rev]);
        if !got.contains("on the device") {
            prop_assert_eq!(expected, got, "{}({})", name, t);
        }
    }
}

#[test]
fn division_by_zero_fails_with_the_host_message() {
    install();
    let a = Array::from(vec![7i32, 8, 9]);
    let b = Array::from(vec![1i32, 0, 3]);
    let (expected, got) = both("divide", &[a, b], &[false, false]);
    assert!(expected.contains("division by zero"), "{expected}");
    assert_eq!(expected, got);
    // Under a missing dividend, a zero divisor is no error.
    let a = Array::from_json("3 * ?int32", "[7, null, 9]").unwrap();
    let b = Array::from(vec![1i32, 0, 3]);
    let (expected, got) = both("divide", &[a, b], &[false, false]);
    assert_eq!(expected, "[7,null,3]");
    assert_eq!(expected, got);
}

#[test]
fn every_function_and_type_pair_matches_the_host() {
    // A sweep: every function on every pair of device types (optional on
    // one side), on 2 x 3 arrays with a broadcast second argument.
    install();
    let types: Vec<BuiltinType> = device_types().collect();
    let vals: Vec<(i64, bool)> = (-3..4).map(|v| (v, v == 1)).collect();
    let (mut compared, mut refused) = (0, 0);
    for f in arith::functions() {
        for &ta in &types {
            for &tb in &types {
                let a = array(ta, true, &[2, 3], &vals);
                let args = if f.arity() == 1 {
                    vec![a]
                } else {
                    vec![a, array(tb, false, &[3], &vals[2..])]
                };
                let rev = vec![true; args.len()];
                let (expected, got) = both(f.name(), &args, &rev);
                if got.contains("on the device") {
                    refused += 1;
                    continue;
                }
                assert_eq!(expected, got, "{}({ta}, {tb})", f.name());
                compared += 1;
            }
        }
    }
    // Refusals are the pairs whose common type the device lacks (int64
    // with uint64 gives int128, for one).
    assert!(compared > 1500, "compared {compared}, refused {refused}");
    assert!(
        refused < compared / 5,
        "compared {compared}, refused {refused}"
    );
}

#[test]
fn where_matches_the_host_for_every_condition_and_value_type() {
    install();
    let types: Vec<BuiltinType> = device_types().collect();
    let vals: Vec<(i64, bool)> = (-3..4).map(|v| (v, v == 2)).collect();
    let (mut compared, mut refused) = (0, 0);
    for &tc in &types {
        for &tx in &types {
            for &ty in &types {
                for optional in [false, true] {
                    // cond broadcasts from [3], x is 2 x 3, y a host scalar
                    // or a 2 x 3 array.
                    let cond = array(tc, optional, &[3], &vals);
                    let x = array(tx, optional, &[2, 3], &vals[1..]);
                    let y = if optional {
                        array(ty, false, &[], &vals[3..])
                    } else {
                        array(ty, false, &[2, 3], &vals[2..])
                    };
                    let (expected, got) = both("where", &[cond, x, y], &[false, true, false]);
                    if got.contains("on the device") {
                        refused += 1;
                        continue;
                    }
                    assert_eq!(expected, got, "where({tc}, {tx}, {ty}) optional {optional}");
                    compared += 1;
                }
            }
        }
    }
    assert!(compared > 2000, "compared {compared}, refused {refused}");
}
