//! Multiple dispatch: one callable made of overloads whose signatures are
//! type patterns (`(int32, int32) -> int32`, `(T, T) -> T`,
//! `(string, Any) -> bool`). A call goes to the most specific overload that
//! matches the argument types. Registering an overload that could match
//! the same arguments as an existing one, with neither more specific than
//! the other, is an error at registration — never a surprise at call time.
//!
//! Pattern language: concrete types match themselves; a type variable
//! (`T`) matches any type, the same one at each of its places; `Any`
//! matches any type; `?P`, `pointer[P]`, `N * P`, `var * P` and
//! `Fixed * P` / `Dim * P` match structurally.

use super::{Callable, CallableImpl, no_match, type_list};
use crate::error::{Error, Result};
use crate::kernels::{CKernelBuilder, KernelArgs};
use crate::types::{SymbolicDim, Type, TypeKind};
use std::collections::HashMap;
use std::pin::Pin;

type Bindings = HashMap<String, Type>;

/// `true` when `pattern` matches `tp`, extending `b` with the bindings of
/// its type variables. (Type variables inside `tp` are treated as opaque
/// types, which makes this also the "is an instance of" test between
/// patterns.)
fn matches(pattern: &Type, tp: &Type, b: &mut Bindings) -> bool {
    match (pattern.kind(), tp.kind()) {
        (TypeKind::Any, _) => true,
        (TypeKind::TypeVar(name), _) => match b.get(name) {
            Some(bound) => bound == tp,
            None => {
                b.insert(name.clone(), tp.clone());
                true
            }
        },
        (TypeKind::Option(p), TypeKind::Option(t))
        | (TypeKind::Pointer(p), TypeKind::Pointer(t)) => matches(p, t, b),
        (TypeKind::FixedDim { size: n, elem: p }, TypeKind::FixedDim { size: m, elem: t }) => {
            n == m && matches(p, t, b)
        }
        (TypeKind::VarDim { elem: p }, TypeKind::VarDim { elem: t }) => matches(p, t, b),
        (
            TypeKind::SymbolicDim {
                dim: SymbolicDim::Fixed,
                elem: p,
            },
            TypeKind::FixedDim { elem: t, .. },
        )
        | (
            TypeKind::SymbolicDim {
                dim: SymbolicDim::Any,
                elem: p,
            },
            TypeKind::FixedDim { elem: t, .. },
        )
        | (
            TypeKind::SymbolicDim {
                dim: SymbolicDim::Any,
                elem: p,
            },
            TypeKind::VarDim { elem: t },
        ) => matches(p, t, b),
        _ => pattern == tp,
    }
}

fn matches_all(patterns: &[Type], tps: &[Type]) -> bool {
    let mut b = Bindings::new();
    patterns.len() == tps.len() && patterns.iter().zip(tps).all(|(p, t)| matches(p, t, &mut b))
}

/// `true` when some argument list could match both patterns: a one-way
/// unification in each direction is enough for this pattern language
/// (variables bind to the other side's sub-pattern).
fn unify(a: &Type, b: &Type, ba: &mut Bindings, bb: &mut Bindings) -> bool {
    match (a.kind(), b.kind()) {
        (TypeKind::Any, _) | (_, TypeKind::Any) => true,
        (TypeKind::TypeVar(x), _) => match ba.get(x).cloned() {
            Some(bound) => unify(&bound, b, ba, bb),
            None => {
                ba.insert(x.clone(), b.clone());
                true
            }
        },
        (_, TypeKind::TypeVar(y)) => match bb.get(y).cloned() {
            Some(bound) => unify(a, &bound, ba, bb),
            None => {
                bb.insert(y.clone(), a.clone());
                true
            }
        },
        (TypeKind::Option(p), TypeKind::Option(q))
        | (TypeKind::Pointer(p), TypeKind::Pointer(q)) => unify(p, q, ba, bb),
        (TypeKind::FixedDim { size: n, elem: p }, TypeKind::FixedDim { size: m, elem: q }) => {
            n == m && unify(p, q, ba, bb)
        }
        (TypeKind::VarDim { elem: p }, TypeKind::VarDim { elem: q }) => unify(p, q, ba, bb),
        (
            TypeKind::SymbolicDim { elem: p, .. },
            TypeKind::FixedDim { elem: q, .. }
            | TypeKind::VarDim { elem: q }
            | TypeKind::SymbolicDim { elem: q, .. },
        )
        | (
            TypeKind::FixedDim { elem: p, .. } | TypeKind::VarDim { elem: p },
            TypeKind::SymbolicDim { elem: q, .. },
        ) => unify(p, q, ba, bb),
        _ => a == b,
    }
}

fn params(f: &Callable) -> Vec<Type> {
    match f.signature().kind() {
        TypeKind::Callable(sig) => sig.positional.clone(),
        _ => Vec::new(),
    }
}

/// `a` is at least as specific as `b`: every argument list `a` matches, `b`
/// matches too.
fn at_least_as_specific(a: &[Type], b: &[Type]) -> bool {
    matches_all(b, a)
}

fn overlap(a: &[Type], b: &[Type]) -> bool {
    let (mut ba, mut bb) = (Bindings::new(), Bindings::new());
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| unify(x, y, &mut ba, &mut bb))
}

/// Builds a dispatching callable, one overload at a time.
pub struct DispatchBuilder {
    name: String,
    overloads: Vec<(Vec<Type>, Callable)>,
}

impl DispatchBuilder {
    /// An empty overload set called `name`.
    pub fn new(name: &str) -> DispatchBuilder {
        DispatchBuilder {
            name: name.to_string(),
            overloads: Vec::new(),
        }
    }

    /// Adds an overload. Errors (`InvalidArgument`) when its signature is
    /// not a callable type, when an overload with the same parameter
    /// patterns exists, or when it is ambiguous with one: both could match
    /// the same arguments and neither is more specific.
    pub fn add(&mut self, f: Callable) -> Result<&mut DispatchBuilder> {
        let TypeKind::Callable(_) = f.signature().kind() else {
            return Err(Error::invalid_argument(format!(
                "overload {} of {} has signature {}, which is not a callable type",
                f.name(),
                self.name,
                f.signature()
            )));
        };
        let p = params(&f);
        for (q, g) in &self.overloads {
            if !overlap(&p, q) {
                continue;
            }
            let (pq, qp) = (at_least_as_specific(&p, q), at_least_as_specific(q, &p));
            if pq && qp {
                return Err(Error::invalid_argument(format!(
                    "{}: overload {} duplicates the parameters of {} ({})",
                    self.name,
                    f.signature(),
                    g.name(),
                    g.signature()
                )));
            }
            if !pq && !qp {
                return Err(Error::invalid_argument(format!(
                    "{}: overload {} is ambiguous with {}: both match some arguments and neither is more specific",
                    self.name,
                    f.signature(),
                    g.signature()
                )));
            }
        }
        self.overloads.push((p, f));
        Ok(self)
    }

    /// The dispatching callable.
    pub fn build(&self) -> Callable {
        Callable::new(Dispatch {
            name: self.name.clone(),
            sig: Type::any(),
            overloads: self.overloads.clone(),
        })
    }
}

struct Dispatch {
    name: String,
    sig: Type,
    overloads: Vec<(Vec<Type>, Callable)>,
}

impl Dispatch {
    fn select(&self, args: &[Type]) -> Result<&Callable> {
        let candidates: Vec<&(Vec<Type>, Callable)> = self
            .overloads
            .iter()
            .filter(|(p, _)| matches_all(p, args))
            .collect();
        let best = candidates
            .iter()
            .find(|(p, _)| candidates.iter().all(|(q, _)| at_least_as_specific(p, q)));
        match (best, candidates.is_empty()) {
            (Some((_, f)), _) => Ok(f),
            (None, true) => Err(no_match(&self.name, &self.sig, args)),
            (None, false) => Err(Error::type_error(format!(
                "{}: more than one overload matches ({}) and none is most specific",
                self.name,
                type_list(args)
            ))),
        }
    }
}

impl CallableImpl for Dispatch {
    fn name(&self) -> &str {
        &self.name
    }
    fn signature(&self) -> &Type {
        &self.sig
    }
    fn is_scalar(&self) -> bool {
        self.overloads.iter().all(|(_, f)| f.is_scalar())
    }
    fn resolve(&self, args: &[Type]) -> Result<Type> {
        self.select(args)
            .map_err(|_| self.no_overload(args))?
            .implementation()
            .resolve(args)
    }
    unsafe fn instantiate(
        &self,
        ckb: Pin<&mut CKernelBuilder>,
        offset: usize,
        args: KernelArgs<'_>,
    ) -> Result<usize> {
        let f = self
            .select(args.src_tps)
            .map_err(|_| self.no_overload(args.src_tps))?;
        // SAFETY: the caller's promises, for the overload resolve chose.
        unsafe { f.implementation().instantiate(ckb, offset, args) }
    }
}

impl Dispatch {
    fn no_overload(&self, args: &[Type]) -> Error {
        let sigs: Vec<String> = self
            .overloads
            .iter()
            .map(|(_, f)| f.signature().to_string())
            .collect();
        Error::type_error(format!(
            "{} has no overload for ({}); it has {}",
            self.name,
            type_list(args),
            if sigs.is_empty() {
                "none".to_string()
            } else {
                sigs.join(", ")
            }
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Type {
        Type::parse(s).unwrap()
    }

    #[test]
    fn matching_binds_type_variables_consistently() {
        assert!(matches_all(&[t("T"), t("T")], &[t("int32"), t("int32")]));
        assert!(!matches_all(&[t("T"), t("T")], &[t("int32"), t("int64")]));
        assert!(matches_all(&[t("T"), t("U")], &[t("int32"), t("int64")]));
        assert!(matches_all(&[t("?T")], &[t("?string")]));
        assert!(!matches_all(&[t("?T")], &[t("string")]));
        assert!(matches_all(&[t("Fixed * T")], &[t("3 * int8")]));
        assert!(!matches_all(&[t("Fixed * T")], &[t("var * int8")]));
        assert!(matches_all(&[t("Dim * T")], &[t("var * int8")]));
        assert!(matches_all(&[t("Any")], &[t("{x: int8}")]));
    }

    #[test]
    fn specificity_and_overlap() {
        assert!(at_least_as_specific(
            &[t("int32"), t("int32")],
            &[t("T"), t("T")]
        ));
        assert!(!at_least_as_specific(
            &[t("T"), t("T")],
            &[t("int32"), t("int32")]
        ));
        assert!(at_least_as_specific(&[t("T"), t("T")], &[t("T"), t("U")]));
        assert!(overlap(&[t("int32"), t("T")], &[t("T"), t("int64")]));
        assert!(!overlap(&[t("int32"), t("T")], &[t("int64"), t("T")]));
        assert!(!overlap(&[t("T"), t("T")], &[t("int32"), t("int64")]));
    }
}
