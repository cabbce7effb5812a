//! Generators: operators computed from the index alone (no input).
//!
//! ```
//! use dynd_ops::{linspace, eye, Serial, Operator};
//! let l = linspace(1.0f64, 100.0, 100);
//! assert_eq!(l.get([41]), 42.0);
//! let i = eye::<f32, _>([2, 3]).eval(&Serial).unwrap();
//! assert_eq!(i.as_slice(), &[1.0, 0.0, 0.0, 0.0, 1.0, 0.0]);
//! ```

use crate::element::{Element, Float, Num};
use crate::elementwise::ConstOp;
use crate::operator::{Expr, Operator, forward_hooks};
use crate::rank::{Shape, check_axis, ravel};
use dynd::{Error, Result};
use rand::RngCore;
use rand::distr::Distribution;

/// An operator whose element at `idx` is `f(idx)`.
#[derive(Clone)]
pub struct GenOp<T, S, F> {
    sizes: S,
    name: &'static str,
    f: F,
    _t: std::marker::PhantomData<fn() -> T>,
}

impl<T, S, F> Operator for GenOp<T, S, F>
where
    T: Element,
    S: Shape,
    F: Fn(S) -> T + Send + Sync,
{
    type Elem = T;
    type Shape = S;
    fn sizes(&self) -> S {
        self.sizes
    }
    #[inline(always)]
    fn get(&self, idx: S) -> T {
        (self.f)(idx)
    }
    fn name(&self) -> String {
        self.name.into()
    }
    fn validate(&self) -> Result<()> {
        Ok(())
    }
    forward_hooks!();
}

/// A generator from a function of the index: `generate([3, 3], "upper",
/// |[i, j]| i <= j)`. `name` shows in operator names.
pub fn generate<T, S, F>(sizes: S, name: &'static str, f: F) -> Expr<GenOp<T, S, F>>
where
    T: Element,
    S: Shape,
    F: Fn(S) -> T + Send + Sync,
{
    Expr(GenOp {
        sizes,
        name,
        f,
        _t: std::marker::PhantomData,
    })
}

/// `value` everywhere.
pub fn fill<T: Element, S: Shape>(sizes: S, value: T) -> Expr<ConstOp<T, S>> {
    Expr(ConstOp::new(sizes, value))
}

/// 0 everywhere.
pub fn zeros<T: Num, S: Shape>(sizes: S) -> Expr<ConstOp<T, S>> {
    fill(sizes, T::ZERO)
}

/// 1 everywhere.
pub fn ones<T: Num, S: Shape>(sizes: S) -> Expr<ConstOp<T, S>> {
    fill(sizes, T::ONE)
}

/// `first + i * step`, where `i` is the index along `axis` (MatX's
/// `range<axis>(sizes, first, step)`).
///
/// # Errors
/// `Index` when `axis` is not below the rank.
pub fn range<T: Num, S: Shape>(
    sizes: S,
    axis: usize,
    first: T,
    step: T,
) -> Result<Expr<GenOp<T, S, impl Fn(S) -> T + Send + Sync + Clone>>> {
    check_axis::<S>("range", axis)?;
    Ok(generate(sizes, "range", move |idx: S| {
        first.plus(T::of_usize(idx[axis]).times(step))
    }))
}

/// `n` evenly spaced values from `first` to `last`, both included (the last
/// is exactly `last`, as in NumPy).
pub fn linspace<T: Float>(
    first: T,
    last: T,
    n: usize,
) -> Expr<GenOp<T, [usize; 1], impl Fn([usize; 1]) -> T + Send + Sync + Clone>> {
    let step = if n > 1 {
        last.minus(first).over(T::of_usize(n - 1))
    } else {
        T::ZERO
    };
    generate([n], "linspace", move |[i]: [usize; 1]| {
        if n > 1 && i == n - 1 {
            last
        } else {
            first.plus(T::of_usize(i).times(step))
        }
    })
}

/// Several [`linspace`]s side by side (MatX's `linspace(firsts, lasts, n,
/// axis)`): column `c` runs from `first[c]` to `last[c]` in `n` points
/// along `axis`. With `axis = 0` the shape is `[n, C]`
/// (`linspace_n(&[0.0, 1.0], &[1.0, 3.0], 10, 0)` is `[10, 2]`); with
/// `axis = 1`, `[C, n]`.
///
/// # Errors
/// `InvalidArgument` when `first` and `last` differ in length; `Index` when
/// `axis` is not 0 or 1.
pub fn linspace_n<T: Float>(
    first: &[T],
    last: &[T],
    n: usize,
    axis: usize,
) -> Result<Expr<GenOp<T, [usize; 2], impl Fn([usize; 2]) -> T + Send + Sync + Clone>>> {
    check_axis::<[usize; 2]>("linspace", axis)?;
    if first.len() != last.len() {
        return Err(Error::invalid_argument(format!(
            "linspace: {} first values but {} last values",
            first.len(),
            last.len()
        )));
    }
    let cols: Vec<_> = first
        .iter()
        .zip(last)
        .map(|(&a, &b)| linspace(a, b, n).0.f)
        .collect();
    let c = cols.len();
    let sizes = if axis == 0 { [n, c] } else { [c, n] };
    Ok(generate(sizes, "linspace", move |[i, j]: [usize; 2]| {
        let (p, col) = if axis == 0 { (i, j) } else { (j, i) };
        cols[col]([p])
    }))
}

/// `base ^ linspace(first, last, n)`.
pub fn logspace<T: Float>(
    first: T,
    last: T,
    n: usize,
    base: T,
) -> Expr<GenOp<T, [usize; 1], impl Fn([usize; 1]) -> T + Send + Sync + Clone>> {
    let l = linspace(first, last, n).0;
    generate([n], "logspace", move |i: [usize; 1]| base.powf((l.f)(i)))
}

/// 1 where every index is equal, 0 elsewhere (the identity for rank 2).
pub fn eye<T: Num, S: Shape>(sizes: S) -> Expr<GenOp<T, S, impl Fn(S) -> T + Send + Sync + Clone>> {
    generate(sizes, "eye", |idx: S| {
        let i = idx.as_ref();
        if i.iter().all(|&x| x == i[0]) {
            T::ONE
        } else {
            T::ZERO
        }
    })
}

/// `value` where every index is equal, 0 elsewhere (MatX's generator
/// `diag(sizes, value)`; [`diag`](crate::diag) extracts a diagonal).
pub fn diag_const<T: Num, S: Shape>(
    sizes: S,
    value: T,
) -> Expr<GenOp<T, S, impl Fn(S) -> T + Send + Sync + Clone>> {
    generate(sizes, "diag", move |idx: S| {
        let i = idx.as_ref();
        if i.iter().all(|&x| x == i[0]) {
            value
        } else {
            T::ZERO
        }
    })
}

/// `1, -1, 1, -1, ...` (`(-1)^i`), `n` values.
pub fn alternate<T: Num>(
    n: usize,
) -> Expr<GenOp<T, [usize; 1], impl Fn([usize; 1]) -> T + Send + Sync + Clone>> {
    generate([n], "alternate", |[i]: [usize; 1]| {
        if i % 2 == 0 { T::ONE } else { T::ONE.negate() }
    })
}

/// A counter-based random stream: element `i` of a generator with seed `s`
/// draws from a SplitMix64 stream started at a hash of `(s, i)`. Values so
/// depend on the seed and the element's position only — never on the
/// executor, the thread count or the order of evaluation.
#[derive(Clone, Copy, Debug)]
pub struct CounterRng {
    state: u64,
}

const GOLDEN: u64 = 0x9e37_79b9_7f4a_7c15;

#[inline(always)]
fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl CounterRng {
    /// The stream of element `index` under `seed`.
    #[inline(always)]
    pub fn new(seed: u64, index: u64) -> Self {
        CounterRng {
            state: mix64(seed.wrapping_add(GOLDEN))
                ^ mix64(index.wrapping_mul(GOLDEN).wrapping_add(seed)),
        }
    }
}

impl RngCore for CounterRng {
    #[inline(always)]
    fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(GOLDEN);
        mix64(self.state)
    }
    #[inline(always)]
    fn next_u32(&mut self) -> u32 {
        (self.next_u64() >> 32) as u32
    }
    fn fill_bytes(&mut self, dst: &mut [u8]) {
        for chunk in dst.chunks_mut(8) {
            let v = self.next_u64().to_le_bytes();
            chunk.copy_from_slice(&v[..chunk.len()]);
        }
    }
}

/// Random values from a `rand` distribution, reproducible from a seed.
#[derive(Clone)]
pub struct RandomOp<T, S, D> {
    sizes: S,
    seed: u64,
    dist: D,
    name: &'static str,
    _t: std::marker::PhantomData<fn() -> T>,
}

impl<T, S, D> Operator for RandomOp<T, S, D>
where
    T: Element,
    S: Shape,
    D: Distribution<T> + Send + Sync,
{
    type Elem = T;
    type Shape = S;
    fn sizes(&self) -> S {
        self.sizes
    }
    #[inline]
    fn get(&self, idx: S) -> T {
        let i = ravel(&idx, &self.sizes) as u64;
        self.dist.sample(&mut CounterRng::new(self.seed, i))
    }
    fn name(&self) -> String {
        self.name.into()
    }
    fn validate(&self) -> Result<()> {
        Ok(())
    }
    forward_hooks!();
}

/// Any `rand` distribution as a generator: element `idx` is drawn from
/// [`CounterRng::new(seed, flat index)`](CounterRng).
pub fn random<T, S, D>(sizes: S, seed: u64, dist: D) -> Expr<RandomOp<T, S, D>>
where
    T: Element,
    S: Shape,
    D: Distribution<T> + Send + Sync,
{
    Expr(RandomOp {
        sizes,
        seed,
        dist,
        name: "random",
        _t: std::marker::PhantomData,
    })
}

/// Uniform random values in `[low, high)`, reproducible from `seed`.
///
/// # Errors
/// `InvalidArgument` unless `low < high` (both finite).
pub fn random_uniform<T, S>(
    sizes: S,
    seed: u64,
    low: T,
    high: T,
) -> Result<Expr<RandomOp<T, S, rand::distr::Uniform<T>>>>
where
    T: Element + rand::distr::uniform::SampleUniform,
    T::Sampler: Send + Sync,
    S: Shape,
{
    let dist = rand::distr::Uniform::new(low, high)
        .map_err(|e| Error::invalid_argument(format!("random_uniform({low:?}, {high:?}): {e}")))?;
    let mut r = random(sizes, seed, dist);
    r.0.name = "random_uniform";
    Ok(r)
}

/// Normally distributed random values, reproducible from `seed`.
///
/// # Errors
/// `InvalidArgument` when `std_dev` is negative or either is not finite.
pub fn random_normal<T, S>(
    sizes: S,
    seed: u64,
    mean: T,
    std_dev: T,
) -> Result<Expr<RandomOp<T, S, rand_distr::Normal<T>>>>
where
    T: Float,
    rand_distr::StandardNormal: Distribution<T>,
    S: Shape,
{
    if !(std_dev >= <T as Num>::ZERO
        && num_traits::Float::is_finite(std_dev)
        && num_traits::Float::is_finite(mean))
    {
        return Err(Error::invalid_argument(format!(
            "random_normal({mean:?}, {std_dev:?}): the mean must be finite and the standard deviation finite and not negative"
        )));
    }
    let dist = rand_distr::Normal::new(mean, std_dev).map_err(|e| {
        Error::invalid_argument(format!("random_normal({mean:?}, {std_dev:?}): {e}"))
    })?;
    let mut r = random(sizes, seed, dist);
    r.0.name = "random_normal";
    Ok(r)
}
