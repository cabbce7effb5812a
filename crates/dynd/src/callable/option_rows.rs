//! Elementwise and row calls on rows that may be missing (`[fixed dims] *
//! ?var * T`, DESIGN §4), which every list imported from Arrow is (DESIGN
//! §12). Such an array's element is an option of a row (`?(var * T)`), so
//! §6's rule for missing values applies: an elementwise callable lifted
//! into the rows (`x + 1`, `x > y`, `where`) or a row callable (`sort`,
//! `argsort`, `cumsum`, `cumprod`, `filter`, `take`) gives a missing row
//! where any argument's row is missing, and computes the present rows. It
//! runs on the array's two parts ([`Array::option_rows`]: the rows, and
//! the present flags): every argument's rows (plain ragged arguments over
//! the same fixed dims too) are emptied where a row is missing — so a
//! present row never fails to broadcast against a missing one — the call
//! runs on the rows, and [`Array::from_option_rows`] marks the result's
//! rows missing again. On a device the same, on the device.
//!
//! Only calls that fail as they are (with a `Type` error: nothing else
//! takes `?var` rows) come here, so a callable that does take them (the
//! null functions) is called as it is; when the parts do not make a call
//! either, the caller's first error stands. Reductions are not among them:
//! `?var * T` is an element, not a dim (`3 * ?var * T` has one dim), and
//! reducing it is refused as before (`fill_null(x, [])` reads missing rows
//! as empty ones).

use super::Callable;
use crate::array::Array;
use crate::error::{ErrorKind, Result};
use crate::types::TypeKind;

/// Whether `a`'s type is `[fixed dims] * ?var * T` (a cheap test on the
/// type before the parts are taken).
fn has_option_rows(a: &Array) -> bool {
    let mut t = a.tp();
    while let TypeKind::FixedDim { elem, .. } = t.kind() {
        t = elem;
    }
    matches!(t.kind(), TypeKind::Option(v) if matches!(v.kind(), TypeKind::VarDim { .. }))
}

/// `f(args)` through the parts of the arguments with rows that may be
/// missing; `Ok(None)` when no argument has them, `f` is a reduction, looks
/// through options of dims itself, or is neither elementwise nor a row
/// callable, the arguments' fixed dims differ, or the parts do not make a
/// call either (a `Type` error there: the caller's own error says more,
/// naming `?var`).
///
/// # Errors
/// The call's errors on the parts other than `Type` (an index out of a
/// row, a failing element, rows of unequal length that are present).
pub(super) fn call(f: &Callable, args: &[&Array]) -> Result<Option<Array>> {
    let which: Vec<bool> = args.iter().map(|a| has_option_rows(a)).collect();
    if !which.iter().any(|w| *w) {
        return Ok(None);
    }
    let mut parts = Vec::with_capacity(args.len());
    for (a, w) in args.iter().zip(&which) {
        parts.push(if *w {
            match a.option_rows() {
                Ok(p) => Some(p),
                Err(_) => return Ok(None),
            }
        } else {
            None
        });
    }
    // Reductions (`?var * T` is an element, not a dim), and callables that
    // look through options of dims themselves (`fill_null`'s core dims):
    // as they are.
    let tps: Vec<&crate::types::Type> = args.iter().map(|a| a.tp()).collect();
    if f.implementation().as_reduction().is_some() || f.implementation().core_dims(&tps).is_some() {
        return Ok(None);
    }
    let row_types: Vec<_> = args
        .iter()
        .zip(&parts)
        .map(|(a, p)| {
            p.as_ref()
                .map_or_else(|| a.tp().clone(), |(r, _)| r.tp().clone())
        })
        .collect();
    // Row callables must compute each row from the same rows alone, along
    // every fixed dim above them.
    let dims = parts
        .iter()
        .flatten()
        .map(|(_, present)| present.ndim())
        .max()
        .unwrap_or(0);
    if !f.is_scalar() && f.implementation().outer_rows(&row_types) < dims.max(1) {
        return Ok(None);
    }
    match propagate(f, args, &parts) {
        Ok(r) => Ok(Some(r)),
        Err(e) if e.kind() == ErrorKind::Type => Ok(None),
        Err(e) => Err(e),
    }
}

/// The call on the present rows, its result's rows missing where an
/// argument's were.
fn propagate(f: &Callable, args: &[&Array], parts: &[Option<(Array, Array)>]) -> Result<Array> {
    let flags: Vec<&Array> = parts.iter().flatten().map(|(_, p)| p).collect();
    // Every argument with such rows over the same fixed dims (the flags
    // line up row by row).
    if flags.iter().any(|p| p.shape() != flags[0].shape()) {
        return Err(crate::error::Error::type_error(
            "rows that may be missing over different fixed dims",
        ));
    }
    // Kleene logic (`logical_and`, `logical_or`) decides element by
    // element where one side is missing: a whole missing row stands for
    // its elements only where every argument's row is missing alike.
    if f.implementation().missing() != super::missing::Missing::Propagate && flags.len() > 1 {
        let (ne, any) = (super::lookup("not_equal")?, super::lookup("any")?);
        for p in &flags[1..] {
            let differ = any.call(&[&ne.call(&[flags[0], p])?])?;
            if differ.to_device(crate::memblock::DeviceId::Cpu)?.to_json() != "false" {
                return Err(crate::error::Error::type_error(format!(
                    "{}: rows missing in one argument and present in another (Kleene logic \
                     decides element by element)",
                    f.name()
                )));
            }
        }
    }
    // Present where every argument's row is.
    let mut present = flags[0].clone();
    if flags.len() > 1 {
        let and = super::lookup("logical_and")?;
        for p in &flags[1..] {
            present = and.call(&[&present, p])?;
        }
    }
    // A row missing in one argument is emptied in all (a present row
    // beside a missing one must not fail to broadcast), plain ragged
    // arguments over the same fixed dims too.
    let outer: Vec<usize> = present
        .shape()
        .into_iter()
        .map(|d| d.unwrap_or(0))
        .collect();
    let beside = |a: &Array| a.ragged_layout().is_ok_and(|l| l.shape == outer);
    let rows: Vec<Array> = args
        .iter()
        .zip(parts)
        .map(|(a, p)| match p {
            Some((r, _)) => r.rows_where(&present),
            None if beside(a) => a.rows_where(&present),
            None => Ok((*a).clone()),
        })
        .collect::<Result<_>>()?;
    let refs: Vec<&Array> = rows.iter().collect();
    let result = f.call(&refs)?;
    Array::from_option_rows(&result, &present)
}
