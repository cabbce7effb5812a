//! Reductions skip missing values (DESIGN §6).

use dynd::compute as r;
use dynd::{Array, ErrorKind, Result};

fn a(tp: &str, json: &str) -> Array {
    Array::from_json(tp, json).unwrap_or_else(|e| panic!("{tp} {json}: {e}"))
}

fn show(x: Result<Array>) -> String {
    match x {
        Ok(x) => format!("{} {}", x.tp(), x.to_json()),
        Err(e) => format!("error[{:?}]: {}", e.kind(), e.message()),
    }
}

#[test]
fn smoke() {
    let x = a("3 * var * ?float64", "[[1, null, 3], [], [null, null]]");
    for (name, f) in [
        ("sum", r::sum as fn(&Array, Option<&[isize]>, bool) -> Result<Array>),
        ("prod", r::prod),
        ("min", r::min),
        ("max", r::max),
        ("mean", r::mean),
        ("count", r::count),
        ("argmin", r::argmin),
        ("argmax", r::argmax),
        ("var", r::var),
        ("std", r::std),
        ("all", r::all),
        ("any", r::any),
    ] {
        println!("{name}: {} | {} | {}", show(f(&x, Some(&[-1]), false)), show(f(&x, None, false)), show(f(&x, Some(&[0]), false)));
    }
    let _ = ErrorKind::Index;
}
