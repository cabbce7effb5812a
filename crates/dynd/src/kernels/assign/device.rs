//! The CUDA C of the numeric conversions (DESIGN §14): the rules of the
//! table in `numeric.rs`, written for the device types (bool, the integers
//! of 8 to 64 bits, float32, float64), so a device cast computes and
//! checks exactly what the host's does. The tests of `dynd-cuda` run both
//! on every pair and mode and compare.
//!
//! | pair | nocheck | checked: fails when |
//! |---|---|---|
//! | int ← int | `(D)x` (two's complement) | x is out of D's range (all checked modes) |
//! | int ← float | truncates; saturates; NaN → 0 (spelled out: C leaves it undefined) | NaN, ±inf, trunc(x) out of range; fractional/inexact: also trunc(x) ≠ x |
//! | float ← int | `(D)x`, to nearest | inexact only: the result is not x |
//! | float ← float | `(D)x`, to nearest | a finite x becomes infinite; inexact: any rounding (NaN → NaN is exact) |
//! | bool ← x | `x != 0` | x is neither 0 nor 1 (all checked modes) |
//! | x ← bool | 0 or 1 | never |
//!
//! Expressions are in terms of `x`, the source value in its CUDA C type.

use super::ErrorMode;
use crate::types::BuiltinType;

/// A conversion's CUDA C: the value, and when a checked mode fails.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceConversion {
    /// The converted value (nocheck), an expression in `x`.
    pub expr: String,
    /// `true` when `x` fails the mode's check; `None` when nothing fails.
    pub bad: Option<String>,
}

/// The range of an integer type as C constants (`long long` or
/// `unsigned long long`).
fn int_range(b: BuiltinType) -> (String, String) {
    let bits = 8 * b.data_size() as u32;
    if b.is_unsigned_int() {
        let max = if bits == 64 {
            u64::MAX
        } else {
            (1u64 << bits) - 1
        };
        ("0LL".into(), format!("{max}ULL"))
    } else {
        let max = (1i64 << (bits - 1)).wrapping_sub(1);
        (format!("(-{max}LL - 1)"), format!("{max}LL"))
    }
}

/// The float bounds `[lo, hi)` an integer type's values lie in, both exact
/// powers of two (or 0): `-2^(n-1)` and `2^(n-1)`, or `0` and `2^n`.
fn float_range(b: BuiltinType) -> (String, String) {
    let bits = 8 * b.data_size() as i32;
    if b.is_unsigned_int() {
        ("0.0".into(), format!("{:.1}", 2f64.powi(bits)))
    } else {
        let h = 2f64.powi(bits - 1);
        (format!("{:.1}", -h), format!("{h:.1}"))
    }
}

/// The CUDA C of converting `from` to `to` under `mode`, when both are
/// device types ([`BuiltinType::cuda_c`]).
///
/// ```
/// use dynd::kernels::assign::{ErrorMode, device_conversion};
/// use dynd::types::BuiltinType as B;
/// let c = device_conversion(B::Float64, B::UInt8, ErrorMode::Fractional).unwrap();
/// assert!(c.bad.unwrap().contains("trunc(x) != x"));
/// assert_eq!(device_conversion(B::Int8, B::Int32, ErrorMode::Inexact).unwrap().bad, None);
/// ```
pub fn device_conversion(
    from: BuiltinType,
    to: BuiltinType,
    mode: ErrorMode,
) -> Option<DeviceConversion> {
    use BuiltinType as B;
    let s = from.cuda_c()?;
    let d = to.cuda_c()?;
    let checked = mode != ErrorMode::NoCheck;
    let inexact = mode == ErrorMode::Inexact;
    let fractional = matches!(
        mode,
        ErrorMode::Fractional | ErrorMode::Default | ErrorMode::Inexact
    );
    let conv = |expr: String, bad: Option<String>| {
        Some(DeviceConversion {
            expr,
            bad: bad.filter(|_| checked),
        })
    };
    if from == to {
        return conv("x".into(), None);
    }
    if from == B::Bool {
        return conv(format!("({d})(x ? 1 : 0)"), None);
    }
    if to == B::Bool {
        return conv("(x != 0)".into(), Some("!(x == 0 || x == 1)".into()));
    }
    match (from.is_float(), to.is_float()) {
        // int <- int: wraps; checked, the value must be in range (the
        // bounds compared in the source type, where they fit).
        (false, false) => {
            let (lo, hi) = int_range(to);
            let (fu, tu) = (from.is_unsigned_int(), to.is_unsigned_int());
            let wider = from.data_size() > to.data_size();
            let bad = match (fu, tu) {
                (false, false) if wider => Some(format!("(x < ({s}){lo} || x > ({s}){hi})")),
                (true, true) if wider => Some(format!("(x > ({s}){hi})")),
                (false, true) if wider => Some(format!("(x < 0 || x > ({s}){hi})")),
                (false, true) => Some("(x < 0)".to_string()),
                (true, false) if from.data_size() >= to.data_size() => {
                    Some(format!("(x > ({s}){hi})"))
                }
                _ => None,
            };
            conv(format!("({d})x"), bad)
        }
        // int <- float: Rust's `as`, spelled out; checked, trunc(x) must
        // be in range (NaN and infinities are not), and for fractional and
        // inexact, equal to x.
        (true, false) => {
            let (lo, hi) = float_range(to);
            let (min, max) = int_range(to);
            let expr = format!(
                "(isnan(x) ? ({d})0 : x <= ({s}){lo} ? ({d}){min} : x >= ({s}){hi} ? ({d})({max}) : ({d})x)"
            );
            let range = format!("!(trunc(x) >= ({s}){lo} && trunc(x) < ({s}){hi})");
            let bad = if fractional {
                format!("({range} || trunc(x) != x)")
            } else {
                format!("({range})")
            };
            conv(expr, Some(bad))
        }
        // float <- int: to nearest; inexact when the result is not x (the
        // result is checked in range before it converts back).
        (false, true) => {
            let (lo, hi) = float_range(from);
            let bad = inexact.then(|| {
                format!("(!(({d})x >= ({d}){lo} && ({d})x < ({d}){hi}) || ({s})(({d})x) != x)")
            });
            conv(format!("({d})x"), bad)
        }
        // float <- float: to nearest; a finite value must stay finite,
        // and for inexact, round-trip.
        (true, true) => {
            let bad = if inexact {
                format!("(!isnan(x) && ({s})(({d})x) != x)")
            } else if to.data_size() < from.data_size() {
                format!("(isfinite(x) && isinf(({d})x))")
            } else {
                return conv(format!("({d})x"), None);
            };
            conv(format!("({d})x"), Some(bad))
        }
    }
}
