//! Arrays the tests of this crate compute on.

use dynd::Array;
use dynd::types::BuiltinType;

/// One value of `b` as JSON, from a small integer: bool by parity,
/// unsigned integers wrapped into 0..9, floats with a fraction.
pub fn value(b: BuiltinType, v: i64) -> String {
    match b {
        BuiltinType::Bool => (v % 2 != 0).to_string(),
        _ if b.is_unsigned_int() => v.rem_euclid(9).to_string(),
        BuiltinType::Float32 | BuiltinType::Float64 => format!("{v}.25"),
        _ => v.to_string(),
    }
}

/// A host array of `shape` over `b` (`?b` when `optional`), its elements
/// taken in turn from `vals`: a value, and whether it is missing (only
/// when `optional`).
pub fn array(b: BuiltinType, optional: bool, shape: &[usize], vals: &[(i64, bool)]) -> Array {
    fn nested(shape: &[usize], next: &mut dyn FnMut() -> String) -> String {
        match shape.split_first() {
            None => next(),
            Some((&d, rest)) => {
                let items: Vec<String> = (0..d).map(|_| nested(rest, next)).collect();
                format!("[{}]", items.join(","))
            }
        }
    }
    let mut i = 0;
    let mut next = || {
        let (v, null) = vals[i % vals.len()];
        i += 1;
        if optional && null {
            "null".to_string()
        } else {
            value(b, v)
        }
    };
    let json = nested(shape, &mut next);
    let dims: String = shape.iter().map(|d| format!("{d} * ")).collect();
    let tp = format!("{dims}{}{b}", if optional { "?" } else { "" });
    Array::from_json(tp.as_str(), &json).unwrap()
}

/// An array of `dims` over `b` (`?b` with every third element missing
/// when `optional`), its values from `seed`.
pub fn host(b: BuiltinType, dims: &[usize], optional: bool, seed: i64) -> Array {
    let n: i64 = dims.iter().product::<usize>().max(1) as i64;
    let vals: Vec<(i64, bool)> = (1..=n)
        .map(|i| ((i * 7 + seed) % 11 - 5, i % 3 == 1))
        .collect();
    array(b, optional, dims, &vals)
}

/// The values of a float array in C order, missing ones as NaN.
pub fn floats(a: &Array) -> Vec<f64> {
    a.to_json()
        .replace(['[', ']'], "")
        .split(',')
        .map(|s| s.trim().parse::<f64>().unwrap_or(f64::NAN))
        .collect()
}
