//! Reductions: sum, prod, mean, min, max, any, all, argmax, argmin, var,
//! std (with `ddof`) and median — over all dims (`sum`) or over a list of
//! axes (`sum_axes`), which are permuted last first (MatX's way).
//!
//! A reduction computes its values when an executor prepares it (MatX
//! treats reductions as transforms), so an expression that reads it many
//! times does not recompute it; read outside an executor, it computes each
//! value on demand.
//!
//! # Order of float operations
//! Every output value folds its reduced slice (flattened in C order over the
//! reduced axes, in the order given) in blocks of [`REDUCE_BLOCK`]
//! positions; within a block, 8 interleaved accumulators per chunk of at
//! most [`LINE_CHUNK`] elements, combined pairwise; blocks merged left to
//! right. The split never depends on the executor or its thread count, so
//! serial and parallel runs give bit-identical results. Float sums differ
//! from NumPy's pairwise summation in the last bits.
//!
//! ```
//! use dynd_ops::{ones, sum_axes, mean, var, Operator, Serial, Tensor};
//! let s = sum_axes(ones::<f64, _>([3, 4, 5, 6]), [1, 2, 3]).unwrap();
//! assert_eq!(s.eval(&Serial).unwrap().as_slice(), &[120.0, 120.0, 120.0]);
//! let t = Tensor::from_vec([4], vec![1.0, 2.0, 3.0, 4.0]).unwrap();
//! assert_eq!(mean(&t).get([]), 2.5);
//! assert_eq!(var(&t, 1).get([]), 5.0 / 3.0);
//! ```

use crate::element::{Element, Float, Num};
use crate::executor::{Executor, grain_ranges, par_pieces};
use crate::layout::{PermuteOp, permute};
use crate::operator::{Expr, LINE_CHUNK, LineBuf, Operator, cached_hooks, line_slice};
use crate::rank::{DropDims, Shape, for_runs, numel, ravel, unravel};
use dynd::types::NativeType;
use dynd::{Error, Result};
use num_traits::AsPrimitive;

/// Positions of a reduced slice folded as one block (see the module docs).
pub const REDUCE_BLOCK: usize = 1 << 16;

/// How a reduction folds values.
pub trait Reducer<T: Element>: Clone + Send + Sync + 'static {
    /// The running state.
    type Acc: Copy + Send + Sync;
    /// The result type.
    type Out: Element;
    /// The name in operator names.
    fn name(&self) -> String;
    /// `false` when an empty slice has no result (min, max, argmax, ...).
    fn allows_empty(&self) -> bool {
        true
    }
    /// The state before any value.
    fn init(&self) -> Self::Acc;
    /// Folds `chunk`, whose first value is at flattened position `pos` of
    /// the reduced slice.
    fn accumulate(&self, acc: &mut Self::Acc, chunk: &[T], pos: usize);
    /// Folds `b`, which covers positions after `a`'s, into `a`.
    fn merge(&self, a: Self::Acc, b: Self::Acc) -> Self::Acc;
    /// The result for a slice of `count` values.
    fn finish(&self, acc: Self::Acc, count: usize) -> Self::Out;
}

#[inline(always)]
fn lanes<T: Copy>(x: &[T], id: T, f: impl Fn(T, T) -> T) -> T {
    let mut l = [id; 8];
    let mut it = x.chunks_exact(8);
    for c in &mut it {
        for k in 0..8 {
            l[k] = f(l[k], c[k]);
        }
    }
    let mut tail = id;
    for &v in it.remainder() {
        tail = f(tail, v);
    }
    f(
        f(f(l[0], l[1]), f(l[2], l[3])),
        f(f(f(l[4], l[5]), f(l[6], l[7])), tail),
    )
}

/// [`lanes`] over the values converted to the accumulator type.
#[inline(always)]
fn lanes_as<T: AsPrimitive<A>, A: Num>(x: &[T], id: A, f: impl Fn(A, A) -> A) -> A {
    let mut l = [id; 8];
    let mut it = x.chunks_exact(8);
    for c in &mut it {
        for k in 0..8 {
            l[k] = f(l[k], c[k].as_());
        }
    }
    let mut tail = id;
    for &v in it.remainder() {
        tail = f(tail, v.as_());
    }
    f(
        f(f(l[0], l[1]), f(l[2], l[3])),
        f(f(f(l[4], l[5]), f(l[6], l[7])), tail),
    )
}

/// A reducer that folds with one associative operation of [`Num`] from
/// its identity, in lanes, in dynd's sum type ([`NativeType::Sum`]: int64
/// for the small signed integers, uint64 for the small unsigned ones, as
/// NumPy and dynd's `sum` and `prod`).
macro_rules! fold_reducer {
    ($(#[$doc:meta])* $name:ident, $label:literal, $id:ident, $op:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, Default)]
        pub struct $name;
        impl<T: Num + AsPrimitive<T::Sum>> Reducer<T> for $name
        where
            T::Sum: Num,
        {
            type Acc = T::Sum;
            type Out = T::Sum;
            fn name(&self) -> String {
                $label.into()
            }
            fn init(&self) -> T::Sum {
                <T::Sum as Num>::$id
            }
            #[inline]
            fn accumulate(&self, acc: &mut T::Sum, chunk: &[T], _pos: usize) {
                *acc = acc.$op(lanes_as(chunk, <T::Sum as Num>::$id, <T::Sum as Num>::$op));
            }
            fn merge(&self, a: T::Sum, b: T::Sum) -> T::Sum {
                a.$op(b)
            }
            fn finish(&self, acc: T::Sum, _count: usize) -> T::Sum {
                acc
            }
        }
    };
}
fold_reducer!(
    /// Sum (in the sum type; wrapping for integers).
    SumR, "sum", ZERO, plus
);
fold_reducer!(
    /// Product (in the sum type; wrapping for integers).
    ProdR, "prod", ONE, times
);

/// Arithmetic mean, as dynd's `mean`: the elements summed in float64
/// (lanes, then blocks in order), divided by the count; NaN for an empty
/// slice. The result is float64 whatever the element type (float32 and the
/// integers included), so the lazy `mean` and dynd's agree.
#[derive(Clone, Copy, Debug, Default)]
pub struct MeanR;
impl<T: Num + AsPrimitive<f64>> Reducer<T> for MeanR {
    type Acc = f64;
    type Out = f64;
    fn name(&self) -> String {
        "mean".into()
    }
    fn init(&self) -> f64 {
        0.0
    }
    #[inline]
    fn accumulate(&self, acc: &mut f64, chunk: &[T], _pos: usize) {
        *acc += lanes_as(chunk, 0.0f64, <f64 as Num>::plus);
    }
    fn merge(&self, a: f64, b: f64) -> f64 {
        a + b
    }
    fn finish(&self, acc: f64, count: usize) -> f64 {
        acc / count as f64
    }
}

#[inline(always)]
fn better<T: Num>(x: T, best: T, max: bool) -> bool {
    if best.is_nan_value() {
        false
    } else if x.is_nan_value() {
        true
    } else if max {
        x > best
    } else {
        x < best
    }
}

/// Largest or smallest value; NaN wins (as in NumPy).
#[derive(Clone, Copy, Debug)]
pub struct ExtremeR {
    max: bool,
}
impl<T: Num> Reducer<T> for ExtremeR {
    type Acc = Option<T>;
    type Out = T;
    fn name(&self) -> String {
        if self.max { "max" } else { "min" }.into()
    }
    fn allows_empty(&self) -> bool {
        false
    }
    fn init(&self) -> Option<T> {
        None
    }
    #[inline]
    fn accumulate(&self, acc: &mut Option<T>, chunk: &[T], _pos: usize) {
        let Some((&first, rest)) = chunk.split_first() else {
            return;
        };
        let mut best = match *acc {
            Some(b) if !better(first, b, self.max) => b,
            _ => first,
        };
        for &x in rest {
            if better(x, best, self.max) {
                best = x;
            }
        }
        *acc = Some(best);
    }
    fn merge(&self, a: Option<T>, b: Option<T>) -> Option<T> {
        match (a, b) {
            (Some(x), Some(y)) => Some(if better(y, x, self.max) { y } else { x }),
            (x, None) => x,
            (None, y) => y,
        }
    }
    fn finish(&self, acc: Option<T>, _count: usize) -> T {
        acc.unwrap_or_default()
    }
}

/// Position of the largest or smallest value within the reduced slice; the
/// first one on ties; the first NaN if any.
#[derive(Clone, Copy, Debug)]
pub struct ArgExtremeR {
    max: bool,
}
impl<T: Num> Reducer<T> for ArgExtremeR {
    type Acc = Option<(T, usize)>;
    type Out = i64;
    fn name(&self) -> String {
        if self.max { "argmax" } else { "argmin" }.into()
    }
    fn allows_empty(&self) -> bool {
        false
    }
    fn init(&self) -> Self::Acc {
        None
    }
    #[inline]
    fn accumulate(&self, acc: &mut Self::Acc, chunk: &[T], pos: usize) {
        for (k, &x) in chunk.iter().enumerate() {
            match *acc {
                Some((b, _)) if !better(x, b, self.max) => {}
                _ => *acc = Some((x, pos + k)),
            }
        }
    }
    fn merge(&self, a: Self::Acc, b: Self::Acc) -> Self::Acc {
        match (a, b) {
            (Some(x), Some(y)) => Some(if better(y.0, x.0, self.max) { y } else { x }),
            (x, None) => x,
            (None, y) => y,
        }
    }
    fn finish(&self, acc: Self::Acc, _count: usize) -> i64 {
        acc.map_or(0, |(_, i)| i as i64)
    }
}

/// Logical or / and of `bool`s.
#[derive(Clone, Copy, Debug)]
pub struct LogicR {
    any: bool,
}
impl Reducer<bool> for LogicR {
    type Acc = bool;
    type Out = bool;
    fn name(&self) -> String {
        if self.any { "any" } else { "all" }.into()
    }
    fn init(&self) -> bool {
        !self.any
    }
    #[inline]
    fn accumulate(&self, acc: &mut bool, chunk: &[bool], _pos: usize) {
        if self.any {
            *acc |= chunk.iter().any(|&b| b);
        } else {
            *acc &= chunk.iter().all(|&b| b);
        }
    }
    fn merge(&self, a: bool, b: bool) -> bool {
        if self.any { a | b } else { a & b }
    }
    fn finish(&self, acc: bool, _count: usize) -> bool {
        acc
    }
}

/// Variance (or standard deviation) with `ddof` delta degrees of freedom:
/// `sum((x - mean)^2) / (n - ddof)`, NaN when `n <= ddof`. Chunks are
/// folded exactly (two passes over each chunk) and merged with Chan's
/// formula.
#[derive(Clone, Copy, Debug)]
pub struct VarR {
    ddof: usize,
    std: bool,
}
impl<T: Float> Reducer<T> for VarR {
    /// (count, mean, sum of squared deviations)
    type Acc = (usize, T, T);
    type Out = T;
    fn name(&self) -> String {
        if self.std { "std" } else { "var" }.into()
    }
    fn init(&self) -> Self::Acc {
        (0, <T as Num>::ZERO, <T as Num>::ZERO)
    }
    #[inline]
    fn accumulate(&self, acc: &mut Self::Acc, chunk: &[T], _pos: usize) {
        if chunk.is_empty() {
            return;
        }
        let n = chunk.len();
        let mean = lanes(chunk, <T as Num>::ZERO, T::plus).over(T::of_usize(n));
        let m2 = chunk.iter().fold(<T as Num>::ZERO, |s, &x| {
            let d = x.minus(mean);
            s.plus(d.times(d))
        });
        *acc = Reducer::<T>::merge(self, *acc, (n, mean, m2));
    }
    fn merge(&self, a: Self::Acc, b: Self::Acc) -> Self::Acc {
        if a.0 == 0 {
            return b;
        }
        if b.0 == 0 {
            return a;
        }
        let n = a.0 + b.0;
        let (na, nb, nn) = (T::of_usize(a.0), T::of_usize(b.0), T::of_usize(n));
        let delta = b.1.minus(a.1);
        let mean = a.1.plus(delta.times(nb).over(nn));
        let m2 =
            a.2.plus(b.2)
                .plus(delta.times(delta).times(na).times(nb).over(nn));
        (n, mean, m2)
    }
    fn finish(&self, acc: Self::Acc, count: usize) -> T {
        let v = if count > self.ddof {
            acc.2.over(T::of_usize(count - self.ddof))
        } else {
            T::nan()
        };
        if self.std { v.sqrt() } else { v }
    }
}

/// The shape of a reduction of an operator's trailing dims: the operator's
/// sizes, the kept dims (its first `S::RANK`) and how many values each
/// output element folds (the product of the rest).
#[derive(Clone, Copy)]
struct Folding<I, S> {
    inner: I,
    sizes: S,
    /// Number of values folded per output value.
    m: usize,
}

impl<I: Shape, S: Shape> Folding<I, S> {
    fn of(inner: I) -> Self {
        let mut sizes = S::zeros();
        for d in 0..S::RANK {
            sizes[d] = inner[d];
        }
        let m = inner.as_ref()[S::RANK..].iter().product();
        Folding { inner, sizes, m }
    }

    /// Output `idx`: from `cache` once the expression is prepared, else
    /// computed now by `one`.
    #[inline]
    fn get<T: Copy>(&self, cache: &Option<Vec<T>>, idx: S, one: impl FnOnce(S) -> T) -> T {
        match cache {
            Some(c) => c[ravel(&idx, &self.sizes)],
            None => one(idx),
        }
    }

    /// Whether some output element folds no values at all.
    fn has_empty_slices(&self) -> bool {
        self.m == 0 && numel(&self.sizes) > 0
    }
}

/// The operator index of output element `out`'s first value: `out`, then
/// zeros for the reduced dims.
fn base_of<S: Shape, I: Shape>(out: S) -> I {
    let mut i = I::zeros();
    for d in 0..S::RANK {
        i[d] = out[d];
    }
    i
}

/// A reduction of an operator's trailing dims. Build it with the functions
/// ([`sum`], [`sum_axes`], ...).
#[derive(Clone)]
pub struct ReduceOp<O: Operator, R: Reducer<O::Elem>, S> {
    op: O,
    red: R,
    fold: Folding<O::Shape, S>,
    cache: Option<Vec<R::Out>>,
}

impl<O: Operator, R: Reducer<O::Elem>, S: Shape> ReduceOp<O, R, S> {
    pub(crate) fn new(op: O, red: R) -> Self {
        ReduceOp {
            fold: Folding::of(op.sizes()),
            op,
            red,
            cache: None,
        }
    }

    fn blocks(&self) -> usize {
        self.fold.m.div_ceil(REDUCE_BLOCK).max(1)
    }

    /// Folds block `b` of the slice of output `out`.
    fn reduce_block(&self, out: S, b: usize) -> R::Acc {
        let mut acc = self.red.init();
        let (n, inner) = (O::Shape::RANK, &self.fold.inner);
        let start = b * REDUCE_BLOCK;
        let end = self.fold.m.min(start + REDUCE_BLOCK);
        if start >= end {
            return acc;
        }
        let mut idx: O::Shape = base_of(out);
        if n == S::RANK {
            // Nothing reduced: one value per output.
            self.red.accumulate(&mut acc, &[self.op.get(idx)], 0);
            return acc;
        }
        let mut flat = start;
        for d in (S::RANK..n).rev() {
            idx[d] = flat % inner[d];
            flat /= inner[d];
        }
        let mut buf = LineBuf::new();
        for_runs(idx, inner, S::RANK, n, end - start, |i, at, k| {
            let mut c = 0;
            while c < k {
                let len = LINE_CHUNK.min(k - c);
                let mut ic = i;
                ic[n - 1] += c;
                let x = line_slice(&self.op, ic, n - 1, 1, len, &mut buf);
                self.red.accumulate(&mut acc, x, start + at + c);
                c += len;
            }
        });
        acc
    }

    fn reduce_one(&self, out: S) -> R::Out {
        let mut acc = self.red.init();
        for b in 0..self.blocks() {
            acc = self.red.merge(acc, self.reduce_block(out, b));
        }
        self.red.finish(acc, self.fold.m)
    }

    fn compute(&self, ex: &dyn Executor) -> Vec<R::Out> {
        let n_out = numel(&self.fold.sizes);
        let mut cache = vec![R::Out::default(); n_out];
        let nb = self.blocks();
        if nb > 1 {
            let mut partials = vec![self.red.init(); n_out * nb];
            par_pieces(ex, &mut partials, &grain_ranges(n_out * nb, 1), &|r, p| {
                p[0] = self.reduce_block(unravel(r.start / nb, &self.fold.sizes), r.start % nb);
            });
            for (o, c) in cache.iter_mut().enumerate() {
                let acc = partials[o * nb..(o + 1) * nb]
                    .iter()
                    .fold(self.red.init(), |a, &b| self.red.merge(a, b));
                *c = self.red.finish(acc, self.fold.m);
            }
        } else {
            let grain = REDUCE_BLOCK / self.fold.m.max(1);
            par_pieces(ex, &mut cache, &grain_ranges(n_out, grain), &|r, p| {
                for (k, o) in r.enumerate() {
                    p[k] = self.reduce_one(unravel(o, &self.fold.sizes));
                }
            });
        }
        cache
    }
}

impl<O: Operator, R: Reducer<O::Elem>, S: Shape> Operator for ReduceOp<O, R, S> {
    type Elem = R::Out;
    type Shape = S;
    fn sizes(&self) -> S {
        self.fold.sizes
    }
    fn get(&self, idx: S) -> R::Out {
        self.fold.get(&self.cache, idx, |i| self.reduce_one(i))
    }
    fn contiguous_line(&self, idx: S, axis: usize, step: isize, len: usize) -> Option<&[R::Out]> {
        let c = self.cache.as_ref()?;
        if axis + 1 != S::RANK || step != 1 || idx[axis] + len > self.fold.sizes[axis] {
            return None;
        }
        let at = ravel(&idx, &self.fold.sizes);
        Some(&c[at..at + len])
    }
    fn name(&self) -> String {
        let d = O::Shape::RANK - S::RANK;
        if S::RANK == 0 {
            format!("{}({})", self.red.name(), self.op.name())
        } else {
            format!("{}<{d}>({})", self.red.name(), self.op.name())
        }
    }
    fn validate(&self) -> Result<()> {
        self.op.validate()?;
        if !self.red.allows_empty() && self.fold.has_empty_slices() {
            return Err(Error::invalid_argument(format!(
                "{}: cannot reduce an empty slice (operator shape {:?})",
                self.red.name(),
                self.fold.inner.as_ref()
            )));
        }
        Ok(())
    }
    fn prepare(&mut self, ex: &dyn Executor) -> Result<()> {
        self.op.prepare(ex)?;
        self.cache = Some(self.compute(ex));
        Ok(())
    }
    cached_hooks!(op);
}

/// The permutation that moves `axes` last (in the order given).
pub(crate) fn axes_last<S: Shape>(what: &str, axes: &[usize]) -> Result<S> {
    let n = S::RANK;
    let mut seen = vec![false; n];
    for &a in axes {
        if a >= n || std::mem::replace(&mut seen[a], true) {
            return Err(Error::index(format!(
                "{what}: axes {axes:?} are not distinct axes of a rank-{n} operator"
            )));
        }
    }
    let mut perm = S::zeros();
    let mut k = 0;
    for (d, &s) in seen.iter().enumerate() {
        if !s {
            perm[k] = d;
            k += 1;
        }
    }
    for &a in axes {
        perm[k] = a;
        k += 1;
    }
    Ok(perm)
}

/// A reduction over all dims.
pub type Reduced<O, R> = Expr<ReduceOp<O, R, [usize; 0]>>;
/// A reduction over `D` axes.
pub type ReducedAxes<O, R, const D: usize> =
    Expr<ReduceOp<PermuteOp<O>, R, <<O as Operator>::Shape as DropDims<D>>::Out>>;

fn reduce_all<O: Operator, R: Reducer<O::Elem>>(op: O, red: R) -> Reduced<O, R> {
    Expr(ReduceOp::new(op, red))
}

fn reduce_axes<O, R, const D: usize>(
    what: &str,
    op: O,
    axes: [usize; D],
    red: R,
) -> Result<ReducedAxes<O, R, D>>
where
    O: Operator,
    O::Shape: DropDims<D>,
    R: Reducer<O::Elem>,
{
    let perm = axes_last::<O::Shape>(what, &axes)?;
    Ok(Expr(ReduceOp::new(permute(op, perm)?.0, red)))
}

/// The public reductions, each over all dims (`$all`, with its docs) and
/// over a list of axes (`$axes`, with its own docs, to which the macro adds
/// the errors): the same extra arguments, result type, bounds and
/// [`Reducer`] (`O`'s bound may fix its element type).
macro_rules! reductions {
    ($(
        $(#[$doc:meta])*
        fn $all:ident<O: $op:path>($($arg:ident: $argty:ty),*) -> $out:ty
            where [$($bound:tt)*] = $red:expr;
        $(#[$adoc:meta])*
        fn $axes:ident;
    )*) => {$(
        $(#[$doc])*
        pub fn $all<O: $op>(
            op: O,
            $($arg: $argty,)*
        ) -> Reduced<O, impl Reducer<O::Elem, Out = $out>>
        where
            $($bound)*
        {
            reduce_all(op, $red)
        }
        $(#[$adoc])*
        ///
        /// # Errors
        /// `Index` when the axes are not distinct dims of `op`.
        pub fn $axes<O: $op, const D: usize>(
            op: O,
            axes: [usize; D],
            $($arg: $argty,)*
        ) -> Result<ReducedAxes<O, impl Reducer<O::Elem, Out = $out>, D>>
        where
            $($bound)*
            O::Shape: DropDims<D>,
        {
            reduce_axes(stringify!($all), op, axes, $red)
        }
    )*};
}

reductions! {
    /// The sum, in dynd's sum type (int8 → int64, uint16 → uint64, as NumPy;
    /// floats keep their type), wrapping for integers.
    fn sum<O: Operator>() -> <O::Elem as NativeType>::Sum where [
        O::Elem: Num + AsPrimitive<<O::Elem as NativeType>::Sum>,
        <O::Elem as NativeType>::Sum: Num,
    ] = SumR;
    /// The sum, in dynd's sum type (int8 → int64, uint16 → uint64, as NumPy;
    /// floats keep their type), wrapping for integers.
    /// Over the dims `axes` only: the result keeps the other dims, in order.
    fn sum_axes;

    /// The product, in dynd's sum type, wrapping for integers.
    fn prod<O: Operator>() -> <O::Elem as NativeType>::Sum where [
        O::Elem: Num + AsPrimitive<<O::Elem as NativeType>::Sum>,
        <O::Elem as NativeType>::Sum: Num,
    ] = ProdR;
    /// The product, in dynd's sum type, wrapping for integers.
    /// Over the dims `axes` only: the result keeps the other dims, in order.
    fn prod_axes;

    /// The arithmetic mean in float64, as dynd's `mean` (NaN for an empty
    /// slice): integers and float32 are summed in float64.
    fn mean<O: Operator>() -> f64 where [O::Elem: Num + AsPrimitive<f64>,] = MeanR;
    /// The arithmetic mean in float64, as dynd's `mean` (NaN for an empty
    /// slice).
    /// Over the dims `axes` only: the result keeps the other dims, in order.
    fn mean_axes;

    /// The smallest value (NaN if any is NaN). An empty slice is an error.
    fn min<O: Operator>() -> O::Elem where [O::Elem: Num,] = ExtremeR { max: false };
    /// The smallest value (NaN if any is NaN). An empty slice is an error.
    /// Over the dims `axes` only: the result keeps the other dims, in order.
    fn min_axes;

    /// The largest value (NaN if any is NaN). An empty slice is an error.
    fn max<O: Operator>() -> O::Elem where [O::Elem: Num,] = ExtremeR { max: true };
    /// The largest value (NaN if any is NaN). An empty slice is an error.
    /// Over the dims `axes` only: the result keeps the other dims, in order.
    fn max_axes;

    /// `true` if any element is `true` (`false` for an empty slice).
    fn any<O: Operator<Elem = bool>>() -> bool where [] = LogicR { any: true };
    /// `true` if any element over `axes` is `true`.
    fn any_axes;

    /// `true` if every element is `true` (`true` for an empty slice).
    fn all<O: Operator<Elem = bool>>() -> bool where [] = LogicR { any: false };
    /// `true` if every element over `axes` is `true`.
    fn all_axes;

    /// The position of the largest value **within the reduced slice**: the
    /// flat C-order index over the reduced dims (for [`argmax`], over all dims
    /// — `unravel` it with the operator's sizes to get the index). Ties give
    /// the first; a NaN, the first NaN. An empty slice is an error.
    fn argmax<O: Operator>() -> i64 where [O::Elem: Num,] = ArgExtremeR { max: true };
    /// [`argmax`] over `axes`: each value is the flat position within that
    /// output element's slice, in the order the axes are given (not an index
    /// into the input).
    fn argmax_axes;

    /// As [`argmax`], for the smallest value.
    fn argmin<O: Operator>() -> i64 where [O::Elem: Num,] = ArgExtremeR { max: false };
    /// As [`argmax_axes`], for the smallest value.
    fn argmin_axes;

    /// The variance `sum((x - mean)^2) / (n - ddof)` (NaN when `n <= ddof`):
    /// `ddof = 0` is the population variance, `1` the sample variance.
    fn var<O: Operator>(ddof: usize) -> O::Elem where [O::Elem: Float,] = VarR { ddof, std: false };
    /// [`var`] over `axes`.
    fn var_axes;

    /// The standard deviation: the square root of [`var`].
    fn std<O: Operator>(ddof: usize) -> O::Elem where [O::Elem: Float,] = VarR { ddof, std: true };
    /// [`std()`] over `axes`.
    fn std_axes;
}

// ---------------------------------------------------------------- median, percentile

/// How [`percentile`] picks or interpolates between the sorted values
/// (MatX's `PercentileMethod`, defined as NumPy's methods of the same
/// names). With `n` values sorted as `x[0..n]` and `p = q / 100`:
/// the continuous methods interpolate linearly at the virtual index
/// `v = p * (n + 1 - alpha - beta) + alpha - 1` (clamped to `[0, n - 1]`);
/// the others use `v = p * (n - 1)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PercentileMethod {
    /// `alpha = beta = 1`: `v = p (n - 1)` (NumPy's default).
    Linear,
    /// `x[floor(p (n - 1))]`.
    Lower,
    /// `x[ceil(p (n - 1))]`.
    Higher,
    /// `alpha = beta = 1/2`: `v = p n - 1/2`.
    Hazen,
    /// `alpha = beta = 0`: `v = p (n + 1) - 1`.
    Weibull,
    /// `alpha = beta = 1/3`.
    MedianUnbiased,
    /// `alpha = beta = 3/8`.
    NormalUnbiased,
    /// The mean of `x[floor(v)]` and `x[ceil(v)]`, `v = p (n - 1)`.
    Midpoint,
    /// `x[round(p (n - 1))]`, halves to even (as NumPy).
    Nearest,
}

impl PercentileMethod {
    /// Every method, in the order declared.
    pub const ALL: [PercentileMethod; 9] = [
        PercentileMethod::Linear,
        PercentileMethod::Lower,
        PercentileMethod::Higher,
        PercentileMethod::Hazen,
        PercentileMethod::Weibull,
        PercentileMethod::MedianUnbiased,
        PercentileMethod::NormalUnbiased,
        PercentileMethod::Midpoint,
        PercentileMethod::Nearest,
    ];

    /// `(alpha, beta)` of a continuous method.
    fn alpha_beta(self) -> Option<(f64, f64)> {
        match self {
            PercentileMethod::Linear => Some((1.0, 1.0)),
            PercentileMethod::Hazen => Some((0.5, 0.5)),
            PercentileMethod::Weibull => Some((0.0, 0.0)),
            PercentileMethod::MedianUnbiased => Some((1.0 / 3.0, 1.0 / 3.0)),
            PercentileMethod::NormalUnbiased => Some((3.0 / 8.0, 3.0 / 8.0)),
            _ => None,
        }
    }

    /// The percentile `q` (0 to 100) of the sorted values `x` (not empty).
    pub fn pick<T: Float>(self, x: &[T], q: f64) -> T {
        let n = x.len();
        let last = (n - 1) as f64;
        let p = q / 100.0;
        let at = |i: f64| x[(i.max(0.0) as usize).min(n - 1)];
        let lerp = |v: f64| {
            let v = v.clamp(0.0, last);
            let lo = v.floor();
            let g = T::of_f64(v - lo);
            let (a, b) = (at(lo), at(lo + 1.0));
            // NumPy's `_lerp`: exact at both ends.
            if g.as_f64() >= 0.5 {
                b.minus(b.minus(a).times(T::ONE.minus(g)))
            } else {
                a.plus(b.minus(a).times(g))
            }
        };
        if let Some((alpha, beta)) = self.alpha_beta() {
            return lerp(p * (n as f64 + 1.0 - alpha - beta) + alpha - 1.0);
        }
        let v = p * last;
        match self {
            PercentileMethod::Lower => at(v.floor()),
            PercentileMethod::Higher => at(v.ceil()),
            PercentileMethod::Nearest => at(v.round_ties_even()),
            _ => {
                let (a, b) = (at(v.floor()), at(v.ceil()));
                a.plus(b.minus(a).over(T::of_usize(2)))
            }
        }
    }
}

/// Which order statistic an [`OrderOp`] computes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Pick {
    /// The median: the middle value, or the mean of the two middle values
    /// for an even count (found by selection, not by a sort).
    Median,
    /// The `q`-th percentile (0 to 100) by a method.
    Percentile(f64, PercentileMethod),
}

impl Pick {
    fn what(self) -> &'static str {
        match self {
            Pick::Median => "median",
            Pick::Percentile(..) => "percentile",
        }
    }
}

/// An order statistic ([`median`], [`percentile`]) of an operator's
/// trailing dims: one value per position of the kept dims `S`, computed
/// for all of them in parallel pieces when the expression is prepared.
#[derive(Clone)]
pub struct OrderOp<O: Operator, S> {
    op: O,
    pick: Pick,
    fold: Folding<O::Shape, S>,
    cache: Option<Vec<O::Elem>>,
}

/// [`median`]'s operator.
pub type MedianOp<O, S> = OrderOp<O, S>;
/// [`percentile`]'s operator.
pub type PercentileOp<O, S> = OrderOp<O, S>;

impl<O: Operator, S: Shape> OrderOp<O, S>
where
    O::Elem: Float,
{
    fn new(op: O, pick: Pick) -> Self {
        OrderOp {
            fold: Folding::of(op.sizes()),
            op,
            pick,
            cache: None,
        }
    }

    /// The statistic of the slice under the output position `out`.
    fn one(&self, out: S, scratch: &mut Vec<O::Elem>) -> O::Elem {
        let (n, f) = (O::Shape::RANK, &self.fold);
        let idx: O::Shape = base_of(out);
        scratch.clear();
        scratch.resize(f.m, O::Elem::default());
        if n == S::RANK {
            scratch[0] = self.op.get(idx);
        } else {
            for_runs(idx, &f.inner, S::RANK, n, f.m, |i, at, k| {
                self.op.fill_line(i, n - 1, 1, &mut scratch[at..at + k]);
            });
        }
        if scratch.iter().any(|x| x.is_nan_value()) {
            return <O::Elem as num_traits::Float>::nan();
        }
        match self.pick {
            Pick::Median => median_of(scratch),
            Pick::Percentile(q, method) => {
                scratch.sort_unstable_by(O::Elem::total_order);
                method.pick(scratch, q)
            }
        }
    }
}

/// The median of `x` (not empty, no NaN), reordering it.
fn median_of<T: Float>(x: &mut [T]) -> T {
    let mid = x.len() / 2;
    let (_, &mut hi, _) = x.select_nth_unstable_by(mid, T::total_order);
    if x.len() % 2 == 1 {
        return hi;
    }
    let lo = x[..mid]
        .iter()
        .copied()
        .fold(<T as num_traits::Float>::neg_infinity(), |a, b| {
            if b > a { b } else { a }
        });
    lo.plus(hi.minus(lo).over(T::of_usize(2)))
}

impl<O: Operator, S: Shape> Operator for OrderOp<O, S>
where
    O::Elem: Float,
{
    type Elem = O::Elem;
    type Shape = S;
    fn sizes(&self) -> S {
        self.fold.sizes
    }
    fn get(&self, idx: S) -> O::Elem {
        self.fold
            .get(&self.cache, idx, |i| self.one(i, &mut Vec::new()))
    }
    fn name(&self) -> String {
        match self.pick {
            Pick::Median => format!("median({})", self.op.name()),
            Pick::Percentile(q, method) => {
                format!("percentile<{q}, {method:?}>({})", self.op.name())
            }
        }
    }
    fn validate(&self) -> Result<()> {
        self.op.validate()?;
        if self.fold.has_empty_slices() {
            return Err(Error::invalid_argument(format!(
                "{}: cannot reduce an empty slice",
                self.pick.what()
            )));
        }
        Ok(())
    }
    fn prepare(&mut self, ex: &dyn Executor) -> Result<()> {
        self.op.prepare(ex)?;
        self.cache = Some(per_output(ex, &self.fold, |out, scratch| {
            self.one(out, scratch)
        }));
        Ok(())
    }
    cached_hooks!(op);
}

/// An order statistic over `axes` (moved last, as the other reductions).
fn order_axes<O: Operator, const D: usize>(
    op: O,
    axes: [usize; D],
    pick: Pick,
) -> Result<Expr<OrderOp<PermuteOp<O>, <O::Shape as DropDims<D>>::Out>>>
where
    O::Elem: Float,
    O::Shape: DropDims<D>,
{
    let perm = axes_last::<O::Shape>(pick.what(), &axes)?;
    Ok(Expr(OrderOp::new(permute(op, perm)?.0, pick)))
}

/// The median of all elements (the mean of the two middle values for an
/// even count; NaN if any is NaN). An empty operator is an error.
pub fn median<O: Operator>(op: O) -> Expr<MedianOp<O, [usize; 0]>>
where
    O::Elem: Float,
{
    Expr(OrderOp::new(op, Pick::Median))
}

/// [`median`] over `axes`.
///
/// # Errors
/// `Index` when the axes are not distinct dims of `op`.
pub fn median_axes<O: Operator, const D: usize>(
    op: O,
    axes: [usize; D],
) -> Result<Expr<MedianOp<PermuteOp<O>, <O::Shape as DropDims<D>>::Out>>>
where
    O::Elem: Float,
    O::Shape: DropDims<D>,
{
    order_axes(op, axes, Pick::Median)
}

/// The `q`-th percentile (`q` from 0 to 100, fractions allowed) of all
/// elements, by `method` (MatX's `percentile`; NaN if any is NaN). An
/// empty operator is an error when the expression runs.
///
/// # Errors
/// `InvalidArgument` when `q` is not between 0 and 100.
pub fn percentile<O: Operator>(
    op: O,
    q: f64,
    method: PercentileMethod,
) -> Result<Expr<PercentileOp<O, [usize; 0]>>>
where
    O::Elem: Float,
{
    check_q(q)?;
    Ok(Expr(OrderOp::new(op, Pick::Percentile(q, method))))
}

/// [`percentile`] over `axes`: the result keeps the other dims, in order.
///
/// # Errors
/// `Index` when the axes are not distinct dims of `op`; `InvalidArgument`
/// when `q` is not between 0 and 100.
pub fn percentile_axes<O: Operator, const D: usize>(
    op: O,
    axes: [usize; D],
    q: f64,
    method: PercentileMethod,
) -> Result<Expr<PercentileOp<PermuteOp<O>, <O::Shape as DropDims<D>>::Out>>>
where
    O::Elem: Float,
    O::Shape: DropDims<D>,
{
    check_q(q)?;
    order_axes(op, axes, Pick::Percentile(q, method))
}

/// `InvalidArgument` unless the percentile `q` is between 0 and 100.
fn check_q(q: f64) -> Result<()> {
    if (0.0..=100.0).contains(&q) {
        return Ok(());
    }
    Err(Error::invalid_argument(format!(
        "percentile: q = {q} is not between 0 and 100"
    )))
}

/// One value per output position of `fold` (each reducing `fold.m` input
/// elements), computed by `one` in parallel pieces of about `REDUCE_BLOCK`
/// input elements, each piece with its own scratch vector.
fn per_output<I: Shape, S: Shape, E: Element>(
    ex: &dyn Executor,
    fold: &Folding<I, S>,
    one: impl Fn(S, &mut Vec<E>) -> E + Sync,
) -> Vec<E> {
    let mut cache = vec![E::default(); numel(&fold.sizes)];
    let grain = (REDUCE_BLOCK / fold.m.max(1)).max(1);
    let n = cache.len();
    par_pieces(ex, &mut cache, &grain_ranges(n, grain), &|r, p| {
        let mut scratch = Vec::new();
        for (k, o) in r.enumerate() {
            p[k] = one(unravel(o, &fold.sizes), &mut scratch);
        }
    });
    cache
}
