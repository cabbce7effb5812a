//! Elementwise operators: arithmetic (also as `+ - * / %` and unary `-`),
//! math functions, comparisons, logical operators, `select` and casts.
//!
//! Operands broadcast as in NumPy: an operand of lower rank gets leading
//! dims of size 1 ([`Broadcast`]; a rank-0 operator, such as [`scalar`],
//! combines with any rank), then a dim of size 1 in one operand broadcasts
//! against the other's. Sizes that do not match are reported when the
//! expression runs (or by [`Expr::try_sizes`]), as a `Broadcast` error
//! naming both shapes. (`select` takes operands of one rank.)
//!
//! Complex elements (`Complex<f32>`, `Complex<f64>`) go through `+ - * /`,
//! negation, `eq`/`ne`, `pow` and the math functions of
//! [`Math`](crate::Math); [`abs`] of a complex number is its (real)
//! magnitude, and [`real`], [`imag`], [`conj`], [`angle`] and
//! [`to_complex`] convert.
//!
//! ```
//! use dynd_ops::{Tensor, Serial, Operator, sqrt, maximum, gt, select};
//! let a = Tensor::from_vec([4], vec![1.0f64, 4.0, 9.0, 16.0]).unwrap();
//! let r = select(gt(&a, 5.0f64 * dynd_ops::ones([1])), sqrt(&a), -&a).eval(&Serial).unwrap();
//! assert_eq!(r.as_slice(), &[-1.0, -4.0, 3.0, 4.0]);
//! let m = maximum(&a, dynd_ops::fill([4], 5.0)).eval(&Serial).unwrap();
//! assert_eq!(m.as_slice(), &[5.0, 5.0, 9.0, 16.0]);
//! ```

use crate::device::DeviceExpr;
use crate::element::{Element, Float, Math, Num};
use crate::operator::{
    Broadcast, Expr, LINE_CHUNK, LineBuf, Operator, advance, forward_hooks, line_slice,
};
use crate::rank::{Shape, fmt_shape};
use crate::tensor::{Tensor, TensorView};
use dynd::compute::scalar;
use dynd::types::NativeType;
use dynd::{Array, Error, Result};
use num_complex::Complex;
use num_traits::AsPrimitive;
use std::marker::PhantomData;
use std::sync::Mutex;

/// A scalar function applied elementwise.
pub trait UnaryFn<T>: Send + Sync + 'static {
    /// The result type.
    type Out: Element;
    /// The function's name in operator names.
    fn name() -> String;
    /// The function.
    fn apply(x: T) -> Self::Out;
    /// The operator of the device argument `a` on a device
    /// ([`DeviceExpr`]), when the function has a device form (dynd's
    /// function of the same values); the default has none.
    fn device(a: Option<DeviceExpr>) -> Option<DeviceExpr> {
        let _ = a;
        None
    }
}

/// A scalar function of two operands applied elementwise.
pub trait BinaryFn<A, B>: Send + Sync + 'static {
    /// The result type.
    type Out: Element;
    /// `true` when some pairs are errors ([`BinaryFn::bad`]).
    const CHECKED: bool = false;
    /// The function's name in operator names.
    fn name() -> String;
    /// The function: total (never panics), also for pairs that
    /// [`BinaryFn::bad`] rejects.
    fn apply(a: A, b: B) -> Self::Out;
    /// `true` when the pair is an error (branch-free: a line's check
    /// vectorises).
    #[inline(always)]
    fn bad(_a: A, _b: B) -> bool {
        false
    }
    /// The error for a pair [`BinaryFn::bad`] rejects.
    fn error(_a: A, _b: B) -> Error {
        Error::invalid_argument("invalid arguments")
    }
    /// The operator of the device arguments on a device ([`DeviceExpr`]),
    /// when the function has a device form (dynd's function of the same
    /// values); the default has none.
    fn device(a: Option<DeviceExpr>, b: Option<DeviceExpr>) -> Option<DeviceExpr> {
        let _ = (a, b);
        None
    }
}

/// The first error a checked element operation met, by index in C order
/// (so the report does not depend on the executor's order of work).
pub(crate) struct ErrorSlot<S>(Mutex<Option<(S, Error)>>);

impl<S: Shape> ErrorSlot<S> {
    pub(crate) fn new() -> Self {
        ErrorSlot(Mutex::new(None))
    }
    /// Keeps `e` at `idx` if it comes before the error kept so far.
    #[cold]
    pub(crate) fn record(&self, idx: S, e: Error) {
        let mut slot = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if slot.as_ref().is_none_or(|(i, _)| idx.as_ref() < i.as_ref()) {
            *slot = Some((idx, e));
        }
    }
    pub(crate) fn clear(&self) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }
    pub(crate) fn check(&self) -> Result<()> {
        match &*self.0.lock().unwrap_or_else(|p| p.into_inner()) {
            Some((_, e)) => Err(e.clone()),
            None => Ok(()),
        }
    }
}

/// The broadcast shape of two operand shapes (the first where they clash).
#[inline]
pub(crate) fn broadcast_sizes<S: Shape>(a: &S, b: &S) -> S {
    let mut s = *a;
    for d in 0..S::RANK {
        if a[d] == 1 {
            s[d] = b[d];
        }
    }
    s
}

pub(crate) fn check_broadcast<S: Shape>(what: &str, a: &S, b: &S) -> Result<()> {
    for d in 0..S::RANK {
        if a[d] != b[d] && a[d] != 1 && b[d] != 1 {
            return Err(Error::broadcast(format!(
                "{what}: operand shapes {} and {} do not match (dim {d}: {} vs {})",
                fmt_shape(a.as_ref()),
                fmt_shape(b.as_ref()),
                a[d],
                b[d]
            )));
        }
    }
    Ok(())
}

/// The operand's index and step for the output run at `idx` along `axis`:
/// broadcast dims (size 1 in the operand) stay at 0.
#[inline(always)]
fn operand_run<S: Shape>(idx: S, sizes: &S, out: &S, axis: usize, step: isize) -> (S, isize) {
    let mut i = idx;
    for d in 0..S::RANK {
        if sizes[d] == 1 && out[d] != 1 {
            i[d] = 0;
        }
    }
    let s = if S::RANK > 0 && sizes[axis] == 1 {
        0
    } else {
        step
    };
    (i, s)
}

#[inline(always)]
fn operand_index<S: Shape>(idx: S, sizes: &S) -> S {
    let mut i = idx;
    for d in 0..S::RANK {
        if sizes[d] == 1 {
            i[d] = 0;
        }
    }
    i
}

/// A constant: a scalar in an expression (all sizes 1, broadcasting), or a
/// filled shape ([`fill`](crate::fill), [`zeros`](crate::zeros), [`ones`](crate::ones)).
#[derive(Clone, Copy, Debug)]
pub struct ConstOp<T, S> {
    value: T,
    sizes: S,
}

impl<T: Element, S: Shape> ConstOp<T, S> {
    /// `value` with every size 1 (broadcasts against any shape).
    pub fn scalar(value: T) -> Self {
        ConstOp {
            value,
            sizes: S::filled(1),
        }
    }
    pub(crate) fn new(sizes: S, value: T) -> Self {
        ConstOp { value, sizes }
    }
}

impl<T: Element, S: Shape> Operator for ConstOp<T, S> {
    type Elem = T;
    type Shape = S;
    fn sizes(&self) -> S {
        self.sizes
    }
    #[inline(always)]
    fn get(&self, _idx: S) -> T {
        self.value
    }
    #[inline(always)]
    fn fill_line(&self, _idx: S, _axis: usize, _step: isize, out: &mut [T]) {
        out.fill(self.value);
    }
    fn name(&self) -> String {
        format!("{:?}", self.value)
    }
    fn validate(&self) -> Result<()> {
        Ok(())
    }
    fn device_expr(&self) -> Option<DeviceExpr> {
        Some(DeviceExpr::Scalar(Array::from(self.value)))
    }
    forward_hooks!();
}

/// `F` applied to every element of `A`.
pub struct UnaryOp<A, F> {
    a: A,
    _f: PhantomData<fn() -> F>,
}

impl<A: Clone, F> Clone for UnaryOp<A, F> {
    fn clone(&self) -> Self {
        UnaryOp {
            a: self.a.clone(),
            _f: PhantomData,
        }
    }
}

impl<A, F> UnaryOp<A, F> {
    pub(crate) fn new(a: A) -> Self {
        UnaryOp { a, _f: PhantomData }
    }
}

impl<A: Operator, F: UnaryFn<A::Elem>> Operator for UnaryOp<A, F> {
    type Elem = F::Out;
    type Shape = A::Shape;
    #[inline(always)]
    fn sizes(&self) -> A::Shape {
        self.a.sizes()
    }
    #[inline(always)]
    fn get(&self, idx: A::Shape) -> F::Out {
        F::apply(self.a.get(idx))
    }
    #[inline]
    fn fill_line(&self, idx: A::Shape, axis: usize, step: isize, out: &mut [F::Out]) {
        let mut buf = LineBuf::new();
        let mut j = 0;
        while j < out.len() {
            let k = LINE_CHUNK.min(out.len() - j);
            let x = line_slice(
                &self.a,
                advance(idx, axis, j, step),
                axis,
                step,
                k,
                &mut buf,
            );
            for (o, &v) in out[j..j + k].iter_mut().zip(x) {
                *o = F::apply(v);
            }
            j += k;
        }
    }
    fn name(&self) -> String {
        format!("{}({})", F::name(), self.a.name())
    }
    fn validate(&self) -> Result<()> {
        self.a.validate()
    }
    fn device_expr(&self) -> Option<DeviceExpr> {
        F::device(self.a.device_expr())
    }
    forward_hooks!(a);
}

/// `F` applied to the elements of `A` and `B` pairwise (with broadcasting).
pub struct BinaryOp<A: Operator, B, F> {
    a: A,
    b: B,
    asz: A::Shape,
    bsz: A::Shape,
    sz: A::Shape,
    /// The first pair `F` rejected since the operator was prepared.
    err: ErrorSlot<A::Shape>,
    _f: PhantomData<fn() -> F>,
}

impl<A: Operator + Clone, B: Clone, F> Clone for BinaryOp<A, B, F> {
    fn clone(&self) -> Self {
        BinaryOp {
            a: self.a.clone(),
            b: self.b.clone(),
            asz: self.asz,
            bsz: self.bsz,
            sz: self.sz,
            err: ErrorSlot::new(),
            _f: PhantomData,
        }
    }
}

impl<A: Operator, B: Operator<Shape = A::Shape>, F> BinaryOp<A, B, F> {
    pub(crate) fn new(a: A, b: B) -> Self {
        let (asz, bsz) = (a.sizes(), b.sizes());
        BinaryOp {
            a,
            b,
            asz,
            bsz,
            sz: broadcast_sizes(&asz, &bsz),
            err: ErrorSlot::new(),
            _f: PhantomData,
        }
    }
}

impl<A, B, F> Operator for BinaryOp<A, B, F>
where
    A: Operator,
    B: Operator<Shape = A::Shape>,
    F: BinaryFn<A::Elem, B::Elem>,
{
    type Elem = F::Out;
    type Shape = A::Shape;
    #[inline(always)]
    fn sizes(&self) -> A::Shape {
        self.sz
    }
    #[inline(always)]
    fn get(&self, idx: A::Shape) -> F::Out {
        let (x, y) = (
            self.a.get(operand_index(idx, &self.asz)),
            self.b.get(operand_index(idx, &self.bsz)),
        );
        if F::CHECKED && F::bad(x, y) {
            self.err.record(idx, F::error(x, y));
        }
        F::apply(x, y)
    }
    #[inline]
    fn fill_line(&self, idx: A::Shape, axis: usize, step: isize, out: &mut [F::Out]) {
        let (ia, sa) = operand_run(idx, &self.asz, &self.sz, axis, step);
        let (ib, sb) = operand_run(idx, &self.bsz, &self.sz, axis, step);
        let mut ba = LineBuf::new();
        let mut bb = LineBuf::new();
        let mut j = 0;
        while j < out.len() {
            let k = LINE_CHUNK.min(out.len() - j);
            let xa = line_slice(&self.a, advance(ia, axis, j, sa), axis, sa, k, &mut ba);
            let xb = line_slice(&self.b, advance(ib, axis, j, sb), axis, sb, k, &mut bb);
            if F::CHECKED
                && xa
                    .iter()
                    .zip(xb)
                    .fold(false, |acc, (&x, &y)| acc | F::bad(x, y))
            {
                self.record_first(idx, axis, step, j, xa, xb);
            }
            for ((o, &x), &y) in out[j..j + k].iter_mut().zip(xa).zip(xb) {
                *o = F::apply(x, y);
            }
            j += k;
        }
    }
    fn name(&self) -> String {
        format!("{}({}, {})", F::name(), self.a.name(), self.b.name())
    }
    fn validate(&self) -> Result<()> {
        self.a.validate()?;
        self.b.validate()?;
        check_broadcast(&F::name(), &self.asz, &self.bsz)
    }
    fn device_expr(&self) -> Option<DeviceExpr> {
        F::device(self.a.device_expr(), self.b.device_expr())
    }
    fn prepare(&mut self, ex: &dyn crate::executor::Executor) -> Result<()> {
        self.err.clear();
        self.a.prepare(ex)?;
        self.b.prepare(ex)
    }
    fn finish(&mut self) {
        self.a.finish();
        self.b.finish();
    }
    fn visit_memory(&self, f: &mut dyn FnMut(crate::operator::MemRegion)) {
        self.a.visit_memory(f);
        self.b.visit_memory(f);
    }
    fn check_errors(&self) -> Result<()> {
        self.a.check_errors()?;
        self.b.check_errors()?;
        self.err.check()
    }
}

impl<A, B, F> BinaryOp<A, B, F>
where
    A: Operator,
    B: Operator<Shape = A::Shape>,
    F: BinaryFn<A::Elem, B::Elem>,
{
    /// Records the first rejected pair of a chunk that has one: `xa[0]`
    /// and `xb[0]` are at position `j` of the line from `idx`.
    #[cold]
    #[inline(never)]
    fn record_first(
        &self,
        idx: A::Shape,
        axis: usize,
        step: isize,
        j: usize,
        xa: &[A::Elem],
        xb: &[B::Elem],
    ) {
        if let Some(i) = xa.iter().zip(xb).position(|(&x, &y)| F::bad(x, y)) {
            let at = if A::Shape::RANK == 0 {
                idx
            } else {
                advance(idx, axis, j + i, step)
            };
            self.err.record(at, F::error(xa[i], xb[i]));
        }
    }
}

/// `if c { a } else { b }` elementwise (with broadcasting).
#[derive(Clone)]
pub struct SelectOp<C: Operator, A, B> {
    c: C,
    a: A,
    b: B,
    csz: C::Shape,
    asz: C::Shape,
    bsz: C::Shape,
    sz: C::Shape,
}

impl<C, A, B> Operator for SelectOp<C, A, B>
where
    C: Operator<Elem = bool>,
    A: Operator<Shape = C::Shape>,
    B: Operator<Elem = A::Elem, Shape = C::Shape>,
{
    type Elem = A::Elem;
    type Shape = C::Shape;
    fn sizes(&self) -> C::Shape {
        self.sz
    }
    #[inline(always)]
    fn get(&self, idx: C::Shape) -> A::Elem {
        if self.c.get(operand_index(idx, &self.csz)) {
            self.a.get(operand_index(idx, &self.asz))
        } else {
            self.b.get(operand_index(idx, &self.bsz))
        }
    }
    #[inline]
    fn fill_line(&self, idx: C::Shape, axis: usize, step: isize, out: &mut [A::Elem]) {
        let (ic, sc) = operand_run(idx, &self.csz, &self.sz, axis, step);
        let (ia, sa) = operand_run(idx, &self.asz, &self.sz, axis, step);
        let (ib, sb) = operand_run(idx, &self.bsz, &self.sz, axis, step);
        let (mut bc, mut ba, mut bb) = (LineBuf::new(), LineBuf::new(), LineBuf::new());
        let mut j = 0;
        while j < out.len() {
            let k = LINE_CHUNK.min(out.len() - j);
            let xc = line_slice(&self.c, advance(ic, axis, j, sc), axis, sc, k, &mut bc);
            let xa = line_slice(&self.a, advance(ia, axis, j, sa), axis, sa, k, &mut ba);
            let xb = line_slice(&self.b, advance(ib, axis, j, sb), axis, sb, k, &mut bb);
            for (((o, &c), &x), &y) in out[j..j + k].iter_mut().zip(xc).zip(xa).zip(xb) {
                *o = if c { x } else { y };
            }
            j += k;
        }
    }
    fn name(&self) -> String {
        format!(
            "select({}, {}, {})",
            self.c.name(),
            self.a.name(),
            self.b.name()
        )
    }
    fn validate(&self) -> Result<()> {
        self.c.validate()?;
        self.a.validate()?;
        self.b.validate()?;
        check_broadcast("select", &self.csz, &self.asz)?;
        check_broadcast("select", &self.csz, &self.bsz)?;
        check_broadcast("select", &self.asz, &self.bsz)
    }
    forward_hooks!(c, a, b);
}

/// `if c { a } else { b }`, elementwise: MatX's `if_else`.
pub fn select<C, A, B>(c: C, a: A, b: B) -> Expr<SelectOp<C, A, B>>
where
    C: Operator<Elem = bool>,
    A: Operator<Shape = C::Shape>,
    B: Operator<Elem = A::Elem, Shape = C::Shape>,
{
    let (csz, asz, bsz) = (c.sizes(), a.sizes(), b.sizes());
    let sz = broadcast_sizes(&broadcast_sizes(&csz, &asz), &bsz);
    Expr(SelectOp {
        c,
        a,
        b,
        csz,
        asz,
        bsz,
        sz,
    })
}

/// A scalar as a rank-0 operator, which broadcasts against any rank, for
/// the function forms: `add(&a, scalar(2.0))`.
pub fn scalar<T: Element>(value: T) -> Expr<ConstOp<T, [usize; 0]>> {
    Expr(ConstOp::scalar(value))
}

/// `A` seen at the rank it has when broadcast against `B`.
pub type BLeft<A, B> = <<A as Operator>::Shape as Broadcast<<B as Operator>::Shape>>::Left<A>;
/// `B` seen at the rank it has when broadcast against `A`.
pub type BRight<A, B> = <<A as Operator>::Shape as Broadcast<<B as Operator>::Shape>>::Right<B>;
/// The elementwise operator `F` of `A` and `B`, broadcast across ranks.
pub type Binary<A, B, F> = Expr<BinaryOp<BLeft<A, B>, BRight<A, B>, F>>;

/// `F(a, b)` with the operands broadcast across ranks.
#[inline]
pub(crate) fn binary<A, B, F>(a: A, b: B) -> Binary<A, B, F>
where
    A: Operator,
    B: Operator<Elem = A::Elem>,
    A::Shape: Broadcast<B::Shape>,
{
    Expr(BinaryOp::new(
        <A::Shape as Broadcast<B::Shape>>::left(a),
        <A::Shape as Broadcast<B::Shape>>::right(b),
    ))
}

/// The function `$fname` that applies the unary scalar function `$F` to
/// an operator.
macro_rules! unary_face {
    ($(#[$doc:meta])* $fname:ident, $F:ident) => {
        $(#[$doc])*
        pub fn $fname<A: Operator>(a: A) -> Expr<UnaryOp<A, $F>>
        where
            $F: UnaryFn<A::Elem>,
        {
            Expr(UnaryOp::new(a))
        }
    };
}

macro_rules! unary_fns {
    ($($(#[$doc:meta])* $fname:ident, $F:ident, [$($bound:tt)*], $Out:ty, |$x:ident| $body:expr;)*) => {$(
        #[doc = concat!("The scalar function of [`", stringify!($fname), "`].")]
        #[derive(Clone, Copy, Debug, Default)]
        pub struct $F;
        impl<T: $($bound)*> UnaryFn<T> for $F {
            type Out = $Out;
            fn name() -> String {
                stringify!($fname).into()
            }
            #[inline(always)]
            fn apply($x: T) -> $Out {
                $body
            }
            fn device(a: Option<DeviceExpr>) -> Option<DeviceExpr> {
                let name = crate::device::dynd_name(stringify!($fname))?;
                crate::device::call(name, <$Out as NativeType>::TYPE, [a])
            }
        }
        unary_face!($(#[$doc])* $fname, $F);
    )*};
}

unary_fns! {
    /// `-a` (wrapping for integers; complex numbers too).
    neg, NegF, [Num], T, |x| x.negate();
    /// `|a|` (wrapping for the most negative integer; for complex numbers,
    /// the real magnitude).
    abs, AbsF, [Num], T, |x| x.magnitude();
    /// -1, 0 or 1 by the sign of `a` (NaN for NaN; `-0.0`/`0.0` kept).
    sign, SignF, [Num], T, |x| x.sign();
    /// Square root (complex: the principal root).
    sqrt, SqrtF, [Math], T, |x| Math::sqrt(x);
    /// `e^a`.
    exp, ExpF, [Math], T, |x| Math::exp(x);
    /// Natural logarithm (complex: the principal branch).
    log, LogF, [Math], T, |x| Math::ln(x);
    /// Base-2 logarithm.
    log2, Log2F, [Math], T, |x| Math::log2(x);
    /// Base-10 logarithm.
    log10, Log10F, [Math], T, |x| Math::log10(x);
    /// Sine.
    sin, SinF, [Math], T, |x| Math::sin(x);
    /// Cosine.
    cos, CosF, [Math], T, |x| Math::cos(x);
    /// Tangent.
    tan, TanF, [Math], T, |x| Math::tan(x);
    /// Arcsine.
    asin, AsinF, [Math], T, |x| Math::asin(x);
    /// Arccosine.
    acos, AcosF, [Math], T, |x| Math::acos(x);
    /// Arctangent.
    atan, AtanF, [Math], T, |x| Math::atan(x);
    /// Hyperbolic sine.
    sinh, SinhF, [Math], T, |x| Math::sinh(x);
    /// Hyperbolic cosine.
    cosh, CoshF, [Math], T, |x| Math::cosh(x);
    /// Hyperbolic tangent.
    tanh, TanhF, [Math], T, |x| Math::tanh(x);
    /// Largest integer not above `a`.
    floor, FloorF, [Float], T, |x| x.floor();
    /// Smallest integer not below `a`.
    ceil, CeilF, [Float], T, |x| x.ceil();
    /// Nearest integer, halves away from zero (Rust's `round`; NumPy rounds
    /// halves to even).
    round, RoundF, [Float], T, |x| x.round();
    /// `true` where `a` is NaN (complex: either part).
    isnan, IsNanF, [Math], bool, |x| Math::is_nan(x);
    /// `true` where `a` is infinite (complex: either part).
    isinf, IsInfF, [Math], bool, |x| Math::is_infinite(x);
    /// Logical not.
    logical_not, NotF, [Into<bool> + Element], bool, |x| !x.into();
}

/// Complex-only unary functions: `$F` for `Complex<f32>` and `Complex<f64>`.
macro_rules! complex_fns {
    ($($(#[$doc:meta])* $fname:ident, $F:ident, |$x:ident: $t:ident| -> $Out:ident { $body:expr };)*) => {$(
        #[doc = concat!("The scalar function of [`", stringify!($fname), "`].")]
        #[derive(Clone, Copy, Debug, Default)]
        pub struct $F;
        complex_fns!(@impl $F, $fname, f32, |$x: $t| -> $Out { $body });
        complex_fns!(@impl $F, $fname, f64, |$x: $t| -> $Out { $body });
        unary_face!($(#[$doc])* $fname, $F);
    )*};
    (@impl $F:ident, $fname:ident, $r:ty, |$x:ident: $t:ident| -> $Out:ident { $body:expr }) => {
        impl UnaryFn<Complex<$r>> for $F {
            type Out = complex_fns!(@out $r, $Out);
            fn name() -> String {
                stringify!($fname).into()
            }
            #[inline(always)]
            fn apply($x: Complex<$r>) -> Self::Out {
                $body
            }
        }
    };
    (@out $r:ty, Real) => { $r };
    (@out $r:ty, Cplx) => { Complex<$r> };
}

complex_fns! {
    /// The real part of a complex number.
    real, RealF, |z: C| -> Real { z.re };
    /// The imaginary part of a complex number.
    imag, ImagF, |z: C| -> Real { z.im };
    /// The complex conjugate.
    conj, ConjF, |z: C| -> Cplx { z.conj() };
    /// The argument (phase angle, in `(-pi, pi]`) of a complex number.
    angle, AngleF, |z: C| -> Real { z.arg() };
}

/// `|z|` of a complex number (`hypot(re, im)`), and `-z`.
macro_rules! complex_abs_neg {
    ($($r:ty),*) => {$(
        impl UnaryFn<Complex<$r>> for AbsF {
            type Out = $r;
            fn name() -> String {
                "abs".into()
            }
            #[inline(always)]
            fn apply(z: Complex<$r>) -> $r {
                z.norm()
            }
        }
        impl UnaryFn<Complex<$r>> for NegF {
            type Out = Complex<$r>;
            fn name() -> String {
                "neg".into()
            }
            #[inline(always)]
            fn apply(z: Complex<$r>) -> Complex<$r> {
                -z
            }
        }
        impl UnaryFn<$r> for ToComplexF {
            type Out = Complex<$r>;
            fn name() -> String {
                "to_complex".into()
            }
            #[inline(always)]
            fn apply(x: $r) -> Complex<$r> {
                Complex::new(x, 0.0)
            }
        }
    )*};
}

/// The scalar function of [`to_complex`].
#[derive(Clone, Copy, Debug, Default)]
pub struct ToComplexF;

complex_abs_neg!(f32, f64);

/// A real operator as complex numbers with imaginary part 0.
pub fn to_complex<A: Operator>(a: A) -> Expr<UnaryOp<A, ToComplexF>>
where
    ToComplexF: UnaryFn<A::Elem>,
{
    Expr(UnaryOp::new(a))
}

/// The public function `$fname(a, b)` of the binary scalar function `$F`.
macro_rules! binary_face {
    ($(#[$doc:meta])* $fname:ident, $F:ident) => {
        $(#[$doc])*
        pub fn $fname<A, B>(a: A, b: B) -> Binary<A, B, $F>
        where
            A: Operator,
            B: Operator<Elem = A::Elem>,
            A::Shape: Broadcast<B::Shape>,
            $F: BinaryFn<A::Elem, A::Elem>,
        {
            binary(a, b)
        }
    };
}

macro_rules! binary_fns {
    ($($(#[$doc:meta])* $fname:ident, $F:ident, [$($bound:tt)*], $Out:ty, |$x:ident, $y:ident| $body:expr;)*) => {$(
        #[doc = concat!("The scalar function of [`", stringify!($fname), "`].")]
        #[derive(Clone, Copy, Debug, Default)]
        pub struct $F;
        impl<T: $($bound)*> BinaryFn<T, T> for $F {
            type Out = $Out;
            fn name() -> String {
                stringify!($fname).into()
            }
            #[inline(always)]
            fn apply($x: T, $y: T) -> $Out {
                $body
            }
            fn device(a: Option<DeviceExpr>, b: Option<DeviceExpr>) -> Option<DeviceExpr> {
                let name = crate::device::dynd_name(stringify!($fname))?;
                crate::device::call(name, <$Out as NativeType>::TYPE, [a, b])
            }
        }
        binary_face!($(#[$doc])* $fname, $F);
    )*};
}

/// Functions that are dynd's scalar operations ([`dynd::compute::scalar`]):
/// the same values and the same errors as the dynd callables.
macro_rules! dynd_fns {
    ($($(#[$doc:meta])* $fname:ident, $F:ident, $Op:ident;)*) => {$(
        #[doc = concat!("The scalar function of [`", stringify!($fname), "`]: dynd's [`", stringify!($Op), "`](dynd::compute::scalar::", stringify!($Op), ").")]
        #[derive(Clone, Copy, Debug, Default)]
        pub struct $F;
        impl<T: Element> BinaryFn<T, T> for $F
        where
            scalar::$Op: scalar::BinaryOp<T, Out = T>,
        {
            type Out = T;
            const CHECKED: bool = <scalar::$Op as scalar::BinaryOp<T>>::CHECKED;
            fn name() -> String {
                stringify!($fname).into()
            }
            #[inline(always)]
            fn apply(a: T, b: T) -> T {
                <scalar::$Op as scalar::BinaryOp<T>>::apply(a, b)
            }
            #[inline(always)]
            fn bad(a: T, b: T) -> bool {
                <scalar::$Op as scalar::BinaryOp<T>>::bad(a, b)
            }
            fn error(a: T, b: T) -> Error {
                <scalar::$Op as scalar::BinaryOp<T>>::error(a, b)
            }
            fn device(a: Option<DeviceExpr>, b: Option<DeviceExpr>) -> Option<DeviceExpr> {
                let name = crate::device::dynd_name(stringify!($fname))?;
                crate::device::call(name, <T as NativeType>::TYPE, [a, b])
            }
        }
        binary_face!($(#[$doc])* $fname, $F);
    )*};
}

dynd_fns! {
    /// `a + b` (wrapping for integers; complex numbers too).
    add, AddF, Add;
    /// `a - b` (wrapping for integers).
    sub, SubF, Subtract;
    /// `a * b` (wrapping for integers).
    mul, MulF, Multiply;
    /// `a / b` (integers: truncating; a zero divisor is an `InvalidArgument`
    /// error and `MIN / -1` an `Overflow` error from `run`/`eval`, as in dynd).
    div, DivF, Divide;
    /// `a % b`, with the sign of `a` (integers: a zero divisor is an
    /// `InvalidArgument` error from `run`/`eval`, as in dynd).
    rem, RemF, Modulo;
}

binary_fns! {
    /// `a` raised to `b` (complex: the principal value).
    pow, PowF, [Math], T, |a, b| Math::pow(a, b);
    /// The angle of the point `(b, a)`: `atan2(y = a, x = b)`.
    atan2, Atan2F, [Float], T, |a, b| a.atan2(b);
    /// The larger of `a` and `b` (NaN if either is NaN, like NumPy's `maximum`).
    maximum, MaxF, [Num], T, |a, b| if a.is_nan_value() || a >= b { a } else { b };
    /// The smaller of `a` and `b` (NaN if either is NaN, like NumPy's `minimum`).
    minimum, MinF, [Num], T, |a, b| if a.is_nan_value() || a <= b { a } else { b };
    /// `a < b`.
    lt, LtF, [Num], bool, |a, b| a < b;
    /// `a <= b`.
    le, LeF, [Num], bool, |a, b| a <= b;
    /// `a > b`.
    gt, GtF, [Num], bool, |a, b| a > b;
    /// `a >= b`.
    ge, GeF, [Num], bool, |a, b| a >= b;
    /// `a == b`.
    eq, EqF, [Element], bool, |a, b| a == b;
    /// `a != b`.
    ne, NeF, [Element], bool, |a, b| a != b;
    /// Logical and.
    logical_and, AndF, [Into<bool> + Element], bool, |a, b| a.into() & b.into();
    /// Logical or.
    logical_or, OrF, [Into<bool> + Element], bool, |a, b| a.into() | b.into();
    /// Logical exclusive or.
    logical_xor, XorF, [Into<bool> + Element], bool, |a, b| a.into() ^ b.into();
}

/// The scalar function of [`cast`]: Rust's `as` conversion to `U`
/// (float to integer saturates; NaN becomes 0).
pub struct CastF<U>(PhantomData<fn() -> U>);

impl<T: AsPrimitive<U>, U: Element> UnaryFn<T> for CastF<U> {
    type Out = U;
    fn name() -> String {
        format!("cast<{}>", U::NAME)
    }
    #[inline(always)]
    fn apply(x: T) -> U {
        x.as_()
    }
    fn device(a: Option<DeviceExpr>) -> Option<DeviceExpr> {
        Some(DeviceExpr::Cast {
            to: U::TYPE,
            arg: Box::new(a?),
        })
    }
}

/// Every element converted to `U` as by Rust's `as` (float to integer
/// saturates, NaN to 0; `bool` to numbers gives 0 or 1). To get `bool`, compare:
/// `ne(a, scalar(0))`.
pub fn cast<U: Element, A: Operator>(a: A) -> Expr<UnaryOp<A, CastF<U>>>
where
    A::Elem: AsPrimitive<U>,
{
    Expr(UnaryOp::new(a))
}

impl<O: Operator> Expr<O> {
    /// [`cast`] as a method: `expr.cast::<f32>()`.
    pub fn cast<U: Element>(self) -> Expr<UnaryOp<O, CastF<U>>>
    where
        O::Elem: AsPrimitive<U>,
    {
        cast(self.0)
    }
}

/// `+ - * / %` (with operators or scalars of the element type on either
/// side) and unary `-` for a user-facing operator type.
macro_rules! std_ops {
    ([$($gen:tt)*] $ty:ty) => {
        $crate::elementwise::std_ops!(@op [$($gen)*] $ty, Add, add, AddF, [f32 f64 i8 i16 i32 i64 u8 u16 u32 u64 num_complex::Complex<f32> num_complex::Complex<f64>]);
        $crate::elementwise::std_ops!(@op [$($gen)*] $ty, Sub, sub, SubF, [f32 f64 i8 i16 i32 i64 u8 u16 u32 u64 num_complex::Complex<f32> num_complex::Complex<f64>]);
        $crate::elementwise::std_ops!(@op [$($gen)*] $ty, Mul, mul, MulF, [f32 f64 i8 i16 i32 i64 u8 u16 u32 u64 num_complex::Complex<f32> num_complex::Complex<f64>]);
        $crate::elementwise::std_ops!(@op [$($gen)*] $ty, Div, div, DivF, [f32 f64 i8 i16 i32 i64 u8 u16 u32 u64 num_complex::Complex<f32> num_complex::Complex<f64>]);
        $crate::elementwise::std_ops!(@op [$($gen)*] $ty, Rem, rem, RemF, [f32 f64 i8 i16 i32 i64 u8 u16 u32 u64]);
        impl<$($gen)*> std::ops::Neg for $ty
        where
            $ty: $crate::operator::Operator,
            $crate::elementwise::NegF: $crate::elementwise::UnaryFn<
                <$ty as $crate::operator::Operator>::Elem,
            >,
        {
            type Output = $crate::operator::Expr<$crate::elementwise::UnaryOp<$ty, $crate::elementwise::NegF>>;
            fn neg(self) -> Self::Output {
                $crate::operator::Expr($crate::elementwise::UnaryOp::new(self))
            }
        }
    };
    (@op [$($gen:tt)*] $ty:ty, $Tr:ident, $m:ident, $F:ident, [$($s:ty)*]) => {
        impl<$($gen)*, Rhs> std::ops::$Tr<Rhs> for $ty
        where
            $ty: $crate::operator::Operator,
            Rhs: $crate::operator::Operator<Elem = <$ty as $crate::operator::Operator>::Elem>,
            <$ty as $crate::operator::Operator>::Shape: $crate::operator::Broadcast<Rhs::Shape>,
            $crate::elementwise::$F: $crate::elementwise::BinaryFn<
                <$ty as $crate::operator::Operator>::Elem,
                <$ty as $crate::operator::Operator>::Elem,
            >,
        {
            type Output = $crate::elementwise::Binary<$ty, Rhs, $crate::elementwise::$F>;
            fn $m(self, rhs: Rhs) -> Self::Output {
                $crate::elementwise::binary(self, rhs)
            }
        }
        $crate::elementwise::std_ops!(@scalar [$($gen)*] $ty, $Tr, $m, $F, $($s)*);
    };
    (@scalar $gens:tt $ty:ty, $Tr:ident, $m:ident, $F:ident, $($s:ty)*) => {$(
        $crate::elementwise::std_ops!(@one $gens $ty, $Tr, $m, $F, $s);
    )*};
    (@one [$($gen:tt)*] $ty:ty, $Tr:ident, $m:ident, $F:ident, $s:ty) => {
        impl<$($gen)*> std::ops::$Tr<$s> for $ty
        where
            $ty: $crate::operator::Operator<Elem = $s>,
        {
            type Output = $crate::operator::Expr<$crate::elementwise::BinaryOp<
                $ty,
                $crate::elementwise::ConstOp<$s, <$ty as $crate::operator::Operator>::Shape>,
                $crate::elementwise::$F,
            >>;
            fn $m(self, rhs: $s) -> Self::Output {
                $crate::operator::Expr($crate::elementwise::BinaryOp::new(
                    self,
                    $crate::elementwise::ConstOp::scalar(rhs),
                ))
            }
        }
        impl<$($gen)*> std::ops::$Tr<$ty> for $s
        where
            $ty: $crate::operator::Operator<Elem = $s>,
        {
            type Output = $crate::operator::Expr<$crate::elementwise::BinaryOp<
                $crate::elementwise::ConstOp<$s, <$ty as $crate::operator::Operator>::Shape>,
                $ty,
                $crate::elementwise::$F,
            >>;
            fn $m(self, rhs: $ty) -> Self::Output {
                $crate::operator::Expr($crate::elementwise::BinaryOp::new(
                    $crate::elementwise::ConstOp::scalar(self),
                    rhs,
                ))
            }
        }
    };
}
pub(crate) use std_ops;

std_ops!([O] Expr<O>);
std_ops!(['a, T: Element, S: Shape] TensorView<'a, T, S>);
std_ops!(['a, T: Element, S: Shape] &'a Tensor<T, S>);
