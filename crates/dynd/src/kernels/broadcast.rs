//! The broadcast rule of DESIGN §6 and its error, written once: resolving
//! an elementwise call's output shape, checking an assignment before it is
//! built, and the lifted kernels' run-time checks of var elements all
//! decide with [`fits`] / [`combine`] and word a failure with
//! [`broadcast_error`], which names every shape and type involved:
//!
//! ```text
//! cannot broadcast shape (2, var) into shape (2, 3): a dim of size 2 into size 3 (2 * var * int32 into 2 * 3 * int32)
//! cannot broadcast shapes (3) and (2) together: a dim of size 2 into size 3 (3 * float64 and 2 * float64)
//! ```

use crate::error::Error;
use crate::types::{Type, TypeKind};
use smallvec::SmallVec;

/// Why shapes do not broadcast.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mismatch {
    /// A dim (or a var element) of size `from` met one of size `into`
    /// (neither 1).
    Size {
        /// The size that does not fit.
        from: usize,
        /// The size it had to fit.
        into: usize,
    },
    /// A source has more dims than the destination.
    MoreDims,
}

/// `true` when a dim of size `from` broadcasts into one of size `into`:
/// equal sizes, or `from` is 1 (repeated).
#[inline(always)]
pub(crate) fn fits(from: usize, into: usize) -> bool {
    from == into || from == 1
}

/// The output dim of two dims met at one position (`Some(n)` fixed,
/// `None` var), as §6 says: fixed sizes agree or one is 1; a var dim
/// against fixed N > 1 gives fixed N (each var element is checked when
/// the kernel runs), against fixed 1 or var it gives var.
pub(crate) fn combine(a: Option<usize>, b: Option<usize>) -> Result<Option<usize>, Mismatch> {
    Ok(match (a, b) {
        (Some(a), Some(b)) if fits(b, a) => Some(a),
        (Some(1), Some(b)) => Some(b),
        (Some(a), Some(b)) => return Err(Mismatch::Size { from: b, into: a }),
        (None, Some(1)) | (Some(1), None) | (None, None) => None,
        (None, Some(n)) | (Some(n), None) => Some(n),
    })
}

/// The leading dims of a type: `Some(n)` fixed, `None` var.
pub(crate) fn dims_of(tp: &Type) -> SmallVec<[Option<usize>; 8]> {
    leading_dims(tp, false)
}

/// The leading dims of a type seen through options of dims
/// (`2 * ?3 * int32`: `(2, 3)`): what assignment aligns when an option
/// wraps a dim on either side, so that `2 * ?3 * int32 ← 2 * 3 * int32`
/// pairs the 3s. The same as [`dims_of`] for every type without one.
pub(crate) fn dims_through_options(tp: &Type) -> SmallVec<[Option<usize>; 8]> {
    leading_dims(tp, true)
}

/// The leading dims of `tp`, looking through options of dims when
/// `through_options`.
fn leading_dims(tp: &Type, through_options: bool) -> SmallVec<[Option<usize>; 8]> {
    let mut dims = SmallVec::new();
    let mut t = tp;
    loop {
        match t.kind() {
            TypeKind::FixedDim { size, elem } => {
                dims.push(Some(*size));
                t = elem;
            }
            TypeKind::VarDim { elem } => {
                dims.push(None);
                t = elem;
            }
            TypeKind::Option(v) if through_options && v.is_dim() => t = v,
            _ => return dims,
        }
    }
}

/// A shape for messages: `(2, var, 3)`.
pub(crate) fn shape_text(dims: &[Option<usize>]) -> String {
    let parts: Vec<String> = dims
        .iter()
        .map(|d| d.map_or_else(|| "var".to_string(), |n| n.to_string()))
        .collect();
    format!("({})", parts.join(", "))
}

/// The broadcast error: `srcs` do not broadcast into `dst` (or, without a
/// destination, together), because of `why`. Names each shape and type.
pub(crate) fn broadcast_error(srcs: &[&Type], dst: Option<&Type>, why: Mismatch) -> Error {
    let shapes: Vec<String> = srcs.iter().map(|t| shape_text(&dims_of(t))).collect();
    let types: Vec<String> = srcs.iter().map(|t| t.to_string()).collect();
    let noun = if srcs.len() == 1 { "shape" } else { "shapes" };
    let (target, types) = match dst {
        Some(d) => (
            format!(" into shape {}", shape_text(&dims_of(d))),
            format!("{} into {d}", types.join(", ")),
        ),
        None => (" together".to_string(), types.join(" and ")),
    };
    let why = match why {
        Mismatch::Size { from, into } => format!("a dim of size {from} into size {into}"),
        Mismatch::MoreDims => "the source has more dimensions".to_string(),
    };
    Error::broadcast(format!(
        "cannot broadcast {noun} {}{target}: {why} ({types})",
        shapes.join(" and ")
    ))
}

/// Checks, before anything is built, that every source's dims broadcast to
/// the destination's (aligned from the right), so an error names whole
/// shapes. Var dims are checked per element when the kernel runs.
pub(crate) fn check(dst_tp: &Type, src_tps: &[Type]) -> crate::error::Result<()> {
    let d = dims_through_options(dst_tp);
    for s_tp in src_tps {
        check_dims((dst_tp, &d), (s_tp, &dims_through_options(s_tp)))?;
    }
    Ok(())
}

/// [`check`] for dims the caller has counted: the source's dims `s` (of
/// type `s_tp`) broadcast into the destination's `d` (of `dst_tp`),
/// aligned from the right. The types are for the message.
pub(crate) fn check_dims(
    (dst_tp, d): (&Type, &[Option<usize>]),
    (s_tp, s): (&Type, &[Option<usize>]),
) -> crate::error::Result<()> {
    if s.len() > d.len() {
        return Err(broadcast_error(&[s_tp], Some(dst_tp), Mismatch::MoreDims));
    }
    for (dd, sd) in d[d.len() - s.len()..].iter().zip(s) {
        if let (Some(n), Some(m)) = (dd, sd)
            && !fits(*m, *n)
        {
            return Err(broadcast_error(
                &[s_tp],
                Some(dst_tp),
                Mismatch::Size { from: *m, into: *n },
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn combine_follows_design_section_6() {
        let cases = [
            ((Some(3), Some(3)), Ok(Some(3))),
            ((Some(3), Some(1)), Ok(Some(3))),
            ((Some(1), Some(3)), Ok(Some(3))),
            ((Some(3), Some(2)), Err(Mismatch::Size { from: 2, into: 3 })),
            ((None, Some(4)), Ok(Some(4))),
            ((Some(4), None), Ok(Some(4))),
            ((None, Some(1)), Ok(None)),
            ((Some(1), None), Ok(None)),
            ((None, None), Ok(None)),
        ];
        for ((a, b), want) in cases {
            assert_eq!(combine(a, b), want, "{a:?} with {b:?}");
        }
    }

    #[test]
    fn the_error_names_both_shapes_and_types() {
        let s = Type::parse("2 * var * int32").unwrap();
        let d = Type::parse("2 * 3 * int32").unwrap();
        let e = broadcast_error(&[&s], Some(&d), Mismatch::Size { from: 2, into: 3 });
        assert_eq!(
            e.message(),
            "cannot broadcast shape (2, var) into shape (2, 3): a dim of size 2 into size 3 (2 * var * int32 into 2 * 3 * int32)"
        );
        let a = Type::parse("3 * float64").unwrap();
        let b = Type::parse("2 * float64").unwrap();
        let e = broadcast_error(&[&a, &b], None, Mismatch::Size { from: 2, into: 3 });
        assert_eq!(
            e.message(),
            "cannot broadcast shapes (3) and (2) together: a dim of size 2 into size 3 (3 * float64 and 2 * float64)"
        );
    }
}
