//! Transforms: operators that need a temporary — matmul, sort, argsort,
//! cumsum, and the FFTs (`fft`, `ifft`, `fft2`, `ifft2`, through `rustfft`). They allocate and compute it in the prepare step and free it in
//! the finish step (MatX's `PreRun`/`PostRun`); the executor runs both.
//! Read outside an executor (before `prepare`), they compute each element on
//! demand, slowly but correctly.
//!
//! ```
//! use dynd_ops::{matmul, sort, SortDir, Tensor, Serial, Operator};
//! let a = Tensor::from_vec([2, 2], vec![1.0f64, 2.0, 3.0, 4.0]).unwrap();
//! let c = matmul(&a, &a).unwrap().eval(&Serial).unwrap();
//! assert_eq!(c.as_slice(), &[7.0, 10.0, 15.0, 22.0]);
//! let s = sort(&a, SortDir::Descending).eval(&Serial).unwrap();
//! assert_eq!(s.as_slice(), &[2.0, 1.0, 4.0, 3.0]);
//! ```

use crate::assign::materialize;
use crate::element::{Element, Num};
use crate::executor::{Executor, TASK_ELEMS, grain_ranges, par_pieces};
use crate::operator::{Expr, MemRegion, Operator, cached_hooks, read_line};
use crate::rank::{Shape, fmt_shape, numel, rank_at_least};
use crate::tensor::Tensor;
use dynd::{Error, Result};
use num_complex::Complex;
use std::ops::Range;

/// Implements `get`, `fill_line` and `contiguous_line` from a prepared
/// `cache: Option<Tensor>`, falling back to `self.compute(idx)`.
macro_rules! cached_access {
    ($T:ty, $S:ty) => {
        #[inline]
        fn get(&self, idx: $S) -> $T {
            match &self.cache {
                Some(t) => (&t).get(idx),
                None => self.compute(idx),
            }
        }
        #[inline]
        fn fill_line(&self, idx: $S, axis: usize, step: isize, out: &mut [$T]) {
            match &self.cache {
                Some(t) => (&t).fill_line(idx, axis, step, out),
                None => crate::operator::default_fill_line(self, idx, axis, step, out),
            }
        }
        #[inline]
        fn contiguous_line(&self, idx: $S, axis: usize, step: isize, len: usize) -> Option<&[$T]> {
            let t = self.cache.as_ref()?;
            t.contiguous_line(idx, axis, step, len)
        }
    };
}

// ---------------------------------------------------------------- matmul

/// Element types [`matmul`] supports (through the `matrixmultiply` crate).
pub trait Gemm: Num {
    /// `c = a * b` for row-major `a` (`m x k`), `b` (`k x n`), `c` (`m x n`).
    ///
    /// # Panics
    /// When a slice is shorter than its matrix.
    fn gemm(m: usize, k: usize, n: usize, a: &[Self], b: &[Self], c: &mut [Self]);
}

macro_rules! gemm_impl {
    ($t:ty, $f:ident) => {
        impl Gemm for $t {
            fn gemm(m: usize, k: usize, n: usize, a: &[Self], b: &[Self], c: &mut [Self]) {
                assert!(
                    a.len() >= m * k && b.len() >= k * n && c.len() >= m * n,
                    "gemm: slices too short"
                );
                if m == 0 || n == 0 {
                    return;
                }
                if k == 0 {
                    c[..m * n].fill(0.0);
                    return;
                }
                // SAFETY: the three slices hold at least m*k, k*n and m*n
                // elements (checked above), addressed row-major with the
                // strides given; `c` is exclusively borrowed.
                unsafe {
                    matrixmultiply::$f(
                        m,
                        k,
                        n,
                        1.0,
                        a.as_ptr(),
                        k as isize,
                        1,
                        b.as_ptr(),
                        n as isize,
                        1,
                        0.0,
                        c.as_mut_ptr(),
                        n as isize,
                        1,
                    )
                }
            }
        }
    };
}
gemm_impl!(f32, sgemm);
gemm_impl!(f64, dgemm);

/// Rows of the output computed by one matmul task.
const MATMUL_ROWS: usize = 64;

/// A batch of matrix products.
#[derive(Clone)]
pub struct MatmulOp<A: Operator, B> {
    a: A,
    b: B,
    sizes: A::Shape,
    k: usize,
    cache: Option<Tensor<A::Elem, A::Shape>>,
}

impl<A, B> MatmulOp<A, B>
where
    A: Operator,
    B: Operator<Elem = A::Elem, Shape = A::Shape>,
    A::Elem: Gemm,
{
    fn compute(&self, idx: A::Shape) -> A::Elem {
        let r = A::Shape::RANK;
        let (mut ia, mut ib) = (idx, idx);
        let mut acc = A::Elem::ZERO;
        for p in 0..self.k {
            ia[r - 1] = p;
            ib[r - 2] = p;
            acc = acc.plus(self.a.get(ia).times(self.b.get(ib)));
        }
        acc
    }
}

impl<A, B> Operator for MatmulOp<A, B>
where
    A: Operator,
    B: Operator<Elem = A::Elem, Shape = A::Shape>,
    A::Elem: Gemm,
{
    type Elem = A::Elem;
    type Shape = A::Shape;
    fn sizes(&self) -> A::Shape {
        self.sizes
    }
    cached_access!(A::Elem, A::Shape);
    fn name(&self) -> String {
        format!("matmul({}, {})", self.a.name(), self.b.name())
    }
    fn validate(&self) -> Result<()> {
        self.a.validate()?;
        self.b.validate()
    }
    fn prepare(&mut self, ex: &dyn Executor) -> Result<()> {
        let ta = materialize(&mut self.a, ex)?;
        let tb = materialize(&mut self.b, ex)?;
        let r = A::Shape::RANK;
        let (m, n, k) = (self.sizes[r - 2], self.sizes[r - 1], self.k);
        let mut c = Tensor::<A::Elem, A::Shape>::zeros(self.sizes);
        let batches = numel(&self.sizes).checked_div(m * n).unwrap_or(0);
        let mut ranges: Vec<Range<usize>> = Vec::new();
        for bt in 0..batches {
            for row in (0..m).step_by(MATMUL_ROWS) {
                let rows = MATMUL_ROWS.min(m - row);
                let start = (bt * m + row) * n;
                ranges.push(start..start + rows * n);
            }
        }
        let (sa, sb) = (ta.as_slice(), tb.as_slice());
        par_pieces(ex, c.as_mut_slice(), &ranges, &|rg, piece| {
            let bt = rg.start / (m * n);
            let row = (rg.start % (m * n)) / n;
            let rows = piece.len() / n;
            let a = &sa[(bt * m + row) * k..(bt * m + row + rows) * k];
            let b = &sb[bt * k * n..(bt + 1) * k * n];
            A::Elem::gemm(rows, k, n, a, b, piece);
        });
        self.cache = Some(c);
        Ok(())
    }
    fn finish(&mut self) {
        self.cache = None;
    }
    fn visit_memory(&self, f: &mut dyn FnMut(MemRegion)) {
        self.a.visit_memory(f);
        self.b.visit_memory(f);
    }
}

/// The matrix product of the last two dims of `a` (`.. x m x k`) and `b`
/// (`.. x k x n`), batched over the leading dims (which must match);
/// computed by the `matrixmultiply` crate in the prepare step, in blocks of
/// 64 rows per task.
///
/// # Errors
/// `Broadcast` when the inner dims or the batch dims differ (naming both
/// shapes).
pub fn matmul<A, B>(a: A, b: B) -> Result<Expr<MatmulOp<A, B>>>
where
    A: Operator,
    B: Operator<Elem = A::Elem, Shape = A::Shape>,
    A::Elem: Gemm,
{
    rank_at_least::<A::Shape, 2>();
    let r = A::Shape::RANK;
    let (sa, sb) = (a.sizes(), b.sizes());
    let batch_ok = (0..r - 2).all(|d| sa[d] == sb[d]);
    if sa[r - 1] != sb[r - 2] || !batch_ok {
        return Err(Error::broadcast(format!(
            "matmul: shapes {} and {} do not multiply (need [.., m, k] and [.., k, n] with equal batch dims)",
            fmt_shape(sa.as_ref()),
            fmt_shape(sb.as_ref())
        )));
    }
    let mut sizes = sa;
    sizes[r - 1] = sb[r - 1];
    Ok(Expr(MatmulOp {
        a,
        b,
        sizes,
        k: sa[r - 1],
        cache: None,
    }))
}

// ---------------------------------------------------------------- sort

/// Sort order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SortDir {
    /// Smallest first; NaNs last.
    Ascending,
    /// Largest first; NaNs first.
    Descending,
}

impl SortDir {
    fn cmp<T: Element>(self, a: &T, b: &T) -> std::cmp::Ordering {
        match self {
            SortDir::Ascending => T::total_order(a, b),
            SortDir::Descending => T::total_order(b, a),
        }
    }
}

/// Row ranges of a contiguous tensor with rows of `len`, about
/// [`TASK_ELEMS`] elements per range.
fn row_ranges(total: usize, len: usize) -> Vec<Range<usize>> {
    if len == 0 {
        return Vec::new();
    }
    grain_ranges(total, (TASK_ELEMS / len).max(1) * len)
}

/// What a sort produces from a row of `E`: the sorted values
/// ([`SortValues`]) or the sorting positions ([`SortPositions`]).
pub trait SortKind<E: Element>: Send + Sync + 'static {
    /// The result element.
    type Out: Element;
    /// The name in operator names.
    const NAME: &'static str;
    /// Sorts one row: `vals` may be reordered; `out` gets the result.
    fn sort_row(dir: SortDir, vals: &mut [E], out: &mut [Self::Out]);
}

/// [`sort`]'s kind: the values.
#[derive(Clone, Copy, Debug)]
pub struct SortValues;
impl<E: Element> SortKind<E> for SortValues {
    type Out = E;
    const NAME: &'static str = "sort";
    fn sort_row(dir: SortDir, vals: &mut [E], out: &mut [E]) {
        vals.sort_unstable_by(|a, b| dir.cmp(a, b));
        out.copy_from_slice(vals);
    }
}

/// [`argsort`]'s kind: positions within the row, stably sorted.
#[derive(Clone, Copy, Debug)]
pub struct SortPositions;
impl<E: Element> SortKind<E> for SortPositions {
    type Out = i64;
    const NAME: &'static str = "argsort";
    fn sort_row(dir: SortDir, vals: &mut [E], out: &mut [i64]) {
        for (k, o) in out.iter_mut().enumerate() {
            *o = k as i64;
        }
        out.sort_by(|&i, &j| dir.cmp(&vals[i as usize], &vals[j as usize]));
    }
}

/// Each row (last dim) sorted, or the positions that would sort it.
pub struct SortOp<O: Operator, K: SortKind<O::Elem>> {
    op: O,
    dir: SortDir,
    cache: Option<Tensor<K::Out, O::Shape>>,
}

impl<O: Operator + Clone, K: SortKind<O::Elem>> Clone for SortOp<O, K> {
    fn clone(&self) -> Self {
        SortOp {
            op: self.op.clone(),
            dir: self.dir,
            cache: self.cache.clone(),
        }
    }
}

impl<O: Operator, K: SortKind<O::Elem>> SortOp<O, K> {
    fn row_len(&self) -> usize {
        let r = O::Shape::RANK;
        if r == 0 { 1 } else { self.op.sizes()[r - 1] }
    }

    fn compute(&self, idx: O::Shape) -> K::Out {
        let r = O::Shape::RANK;
        let len = self.row_len();
        let mut start = idx;
        if r > 0 {
            start[r - 1] = 0;
        }
        let mut vals = vec![O::Elem::default(); len];
        read_line(&self.op, start, r.saturating_sub(1), 1, &mut vals);
        let mut out = vec![K::Out::default(); len];
        K::sort_row(self.dir, &mut vals, &mut out);
        out[if r == 0 { 0 } else { idx[r - 1] }]
    }
}

impl<O: Operator, K: SortKind<O::Elem>> Operator for SortOp<O, K> {
    type Elem = K::Out;
    type Shape = O::Shape;
    fn sizes(&self) -> O::Shape {
        self.op.sizes()
    }
    cached_access!(K::Out, O::Shape);
    fn name(&self) -> String {
        format!("{}({})", K::NAME, self.op.name())
    }
    fn validate(&self) -> Result<()> {
        self.op.validate()
    }
    fn prepare(&mut self, ex: &dyn Executor) -> Result<()> {
        let input = materialize(&mut self.op, ex)?;
        let len = self.row_len();
        let mut out = Tensor::<K::Out, O::Shape>::zeros(input.sizes());
        let ranges = row_ranges(input.as_slice().len(), len);
        let (src, dir) = (input.as_slice(), self.dir);
        par_pieces(ex, out.as_mut_slice(), &ranges, &|rg, piece| {
            let mut vals = Vec::with_capacity(len);
            for (row, o) in src[rg].chunks(len).zip(piece.chunks_mut(len)) {
                vals.clear();
                vals.extend_from_slice(row);
                K::sort_row(dir, &mut vals, o);
            }
        });
        self.cache = Some(out);
        Ok(())
    }
    cached_hooks!(op);
}

/// Each row (along the last dim) sorted; NaNs last when ascending.
pub fn sort<O: Operator>(op: O, dir: SortDir) -> Expr<SortOp<O, SortValues>> {
    Expr(SortOp {
        op,
        dir,
        cache: None,
    })
}

/// For each row (along the last dim), the positions within the row that
/// would sort it (a stable sort: equal values keep their order).
pub fn argsort<O: Operator>(op: O, dir: SortDir) -> Expr<SortOp<O, SortPositions>> {
    Expr(SortOp {
        op,
        dir,
        cache: None,
    })
}

// ---------------------------------------------------------------- cumsum

/// Running sums along one dim.
#[derive(Clone)]
pub struct CumsumOp<O: Operator> {
    op: O,
    axis: usize,
    cache: Option<Tensor<O::Elem, O::Shape>>,
}

impl<O: Operator> CumsumOp<O>
where
    O::Elem: Num,
{
    fn compute(&self, idx: O::Shape) -> O::Elem {
        let mut i = idx;
        let mut acc = O::Elem::ZERO;
        for p in 0..=idx[self.axis] {
            i[self.axis] = p;
            acc = acc.plus(self.op.get(i));
        }
        acc
    }
}

impl<O: Operator> Operator for CumsumOp<O>
where
    O::Elem: Num,
{
    type Elem = O::Elem;
    type Shape = O::Shape;
    fn sizes(&self) -> O::Shape {
        self.op.sizes()
    }
    cached_access!(O::Elem, O::Shape);
    fn name(&self) -> String {
        format!("cumsum<{}>({})", self.axis, self.op.name())
    }
    fn validate(&self) -> Result<()> {
        self.op.validate()
    }
    fn prepare(&mut self, ex: &dyn Executor) -> Result<()> {
        let mut t = materialize(&mut self.op, ex)?;
        let sizes = t.sizes();
        let n = sizes[self.axis];
        let inner: usize = sizes.as_ref()[self.axis + 1..].iter().product();
        let block = n * inner;
        if let Some(per_task) = TASK_ELEMS.checked_div(block) {
            let total = t.as_slice().len();
            let ranges = grain_ranges(total, per_task.max(1) * block);
            par_pieces(ex, t.as_mut_slice(), &ranges, &|_, piece| {
                for blk in piece.chunks_mut(block) {
                    for i in 1..n {
                        let (prev, cur) = blk[(i - 1) * inner..(i + 1) * inner].split_at_mut(inner);
                        for (c, &p) in cur.iter_mut().zip(prev.iter()) {
                            *c = p.plus(*c);
                        }
                    }
                }
            });
        }
        self.cache = Some(t);
        Ok(())
    }
    cached_hooks!(op);
}

/// Running sums along `axis`: element `i` is the sum of elements `0..=i`
/// (added in order, so the prepared and the on-demand values agree).
///
/// # Errors
/// `Index` for a bad axis.
pub fn cumsum<O: Operator>(op: O, axis: usize) -> Result<Expr<CumsumOp<O>>>
where
    O::Elem: Num,
{
    if axis >= O::Shape::RANK {
        return Err(Error::index(format!(
            "cumsum: axis {axis} is out of range for an operator of rank {}",
            O::Shape::RANK
        )));
    }
    Ok(Expr(CumsumOp {
        op,
        axis,
        cache: None,
    }))
}

// ---------------------------------------------------------------- fft

/// Which transform an FFT operator scales, and by how much (MatX's
/// `FFTNorm`, NumPy's `norm`): with `N` the number of points transformed
/// (`n`, or `rows * cols` in 2-D).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FftNorm {
    /// Forward unscaled, inverse scaled by `1/N` (the default of MatX and
    /// NumPy): `ifft(fft(x)) == x`.
    #[default]
    Backward,
    /// Forward scaled by `1/N`, inverse unscaled.
    Forward,
    /// Both scaled by `1/sqrt(N)` (unitary).
    Ortho,
}

impl FftNorm {
    fn factor(self, inverse: bool, n: usize) -> f64 {
        match (self, inverse) {
            (FftNorm::Backward, false) | (FftNorm::Forward, true) => 1.0,
            (FftNorm::Backward, true) | (FftNorm::Forward, false) => 1.0 / n as f64,
            (FftNorm::Ortho, _) => 1.0 / (n as f64).sqrt(),
        }
    }
}

/// The real types whose complex numbers [`fft`] transforms (through the
/// `rustfft` crate): `f32` and `f64`.
pub trait FftFloat: crate::element::Float + rustfft::FftNum {}
impl FftFloat for f32 {}
impl FftFloat for f64 {}

/// A discrete Fourier transform along the last dim (or the last two).
#[derive(Clone)]
pub struct FftOp<O: Operator> {
    op: O,
    /// 1 or 2: how many trailing dims are transformed.
    dims: usize,
    inverse: bool,
    norm: FftNorm,
    cache: Option<Tensor<O::Elem, O::Shape>>,
}

/// Transforms each run of `n` in `data` (`data.len()` a multiple of `n`)
/// and scales it by `scale`.
fn fft_runs<F: FftFloat>(fft: &dyn rustfft::Fft<F>, data: &mut [Complex<F>], scale: F) {
    if data.is_empty() {
        return;
    }
    let mut scratch = vec![Complex::new(F::zero(), F::zero()); fft.get_inplace_scratch_len()];
    fft.process_with_scratch(data, &mut scratch);
    if scale != F::one() {
        for z in data.iter_mut() {
            *z = z.scale(scale);
        }
    }
}

/// Transforms the columns of each `rows x cols` matrix in `data`.
fn fft_cols<F: FftFloat>(
    fft: &dyn rustfft::Fft<F>,
    data: &mut [Complex<F>],
    rows: usize,
    cols: usize,
) {
    let mut col = vec![Complex::new(F::zero(), F::zero()); rows];
    let mut scratch = vec![Complex::new(F::zero(), F::zero()); fft.get_inplace_scratch_len()];
    for m in data.chunks_mut(rows * cols) {
        for c in 0..cols {
            for (r, z) in col.iter_mut().enumerate() {
                *z = m[r * cols + c];
            }
            fft.process_with_scratch(&mut col, &mut scratch);
            for (r, z) in col.iter().enumerate() {
                m[r * cols + c] = *z;
            }
        }
    }
}

impl<O, F> FftOp<O>
where
    O: Operator<Elem = Complex<F>>,
    F: FftFloat,
    Complex<F>: Element,
{
    fn plan(&self, n: usize) -> std::sync::Arc<dyn rustfft::Fft<F>> {
        let mut planner = rustfft::FftPlanner::<F>::new();
        if self.inverse {
            planner.plan_fft_inverse(n)
        } else {
            planner.plan_fft_forward(n)
        }
    }

    /// The transformed trailing block (`rows * cols` values, `rows` 1 in
    /// 1-D) in place.
    fn transform(&self, data: &mut [Complex<F>], rows: usize, cols: usize) {
        let n = rows * cols;
        let scale = F::of_f64(self.norm.factor(self.inverse, n));
        fft_runs(&*self.plan(cols), data, scale);
        if self.dims == 2 && rows > 1 {
            fft_cols(&*self.plan(rows), data, rows, cols);
        }
    }

    fn block(&self, sizes: &O::Shape) -> (usize, usize) {
        let r = O::Shape::RANK;
        let cols = sizes[r - 1];
        let rows = if self.dims == 2 { sizes[r - 2] } else { 1 };
        (rows, cols)
    }

    /// One element, computed alone (outside an executor): its block read
    /// and transformed.
    fn compute(&self, idx: O::Shape) -> Complex<F> {
        let sizes = self.op.sizes();
        let (rows, cols) = self.block(&sizes);
        let r = O::Shape::RANK;
        let mut data = Vec::with_capacity(rows * cols);
        let mut i = idx;
        for a in 0..rows {
            if self.dims == 2 {
                i[r - 2] = a;
            }
            for b in 0..cols {
                i[r - 1] = b;
                data.push(self.op.get(i));
            }
        }
        self.transform(&mut data, rows, cols);
        let a = if self.dims == 2 { idx[r - 2] } else { 0 };
        data[a * cols + idx[r - 1]]
    }
}

impl<O, F> Operator for FftOp<O>
where
    O: Operator<Elem = Complex<F>>,
    F: FftFloat,
    Complex<F>: Element,
{
    type Elem = O::Elem;
    type Shape = O::Shape;
    fn sizes(&self) -> O::Shape {
        self.op.sizes()
    }
    cached_access!(O::Elem, O::Shape);
    fn name(&self) -> String {
        let f = if self.inverse { "ifft" } else { "fft" };
        let d = if self.dims == 2 { "2" } else { "" };
        format!("{f}{d}({})", self.op.name())
    }
    fn validate(&self) -> Result<()> {
        self.op.validate()
    }
    fn prepare(&mut self, ex: &dyn Executor) -> Result<()> {
        let mut t = materialize(&mut self.op, ex)?;
        let (rows, cols) = self.block(&t.sizes());
        let block = rows * cols;
        if let Some(blocks) = TASK_ELEMS.checked_div(block) {
            let per_task = blocks.max(1) * block;
            let total = t.as_slice().len();
            let ranges = grain_ranges(total, per_task);
            par_pieces(ex, t.as_mut_slice(), &ranges, &|_, piece| {
                for b in piece.chunks_mut(block) {
                    self.transform(b, rows, cols);
                }
            });
        }
        self.cache = Some(t);
        Ok(())
    }
    cached_hooks!(op);
}

fn fft_op<O: Operator>(op: O, dims: usize, inverse: bool, norm: FftNorm) -> Expr<FftOp<O>> {
    Expr(FftOp {
        op,
        dims,
        inverse,
        norm,
        cache: None,
    })
}

/// The transforms: each `$name` (default scaling, [`FftNorm::Backward`])
/// and its `$with` form taking the scaling, over the last `$dims` dims.
macro_rules! fft_fns {
    ($(
        $(#[$doc:meta])*
        fn $name:ident;
        $(#[$wdoc:meta])*
        fn $with:ident: $dims:literal dims, inverse: $inverse:literal;
    )*) => {$(
        $(#[$doc])*
        pub fn $name<O, F>(op: O) -> Expr<FftOp<O>>
        where
            O: Operator<Elem = Complex<F>>,
            F: FftFloat,
            Complex<F>: Element,
        {
            $with(op, FftNorm::Backward)
        }
        $(#[$wdoc])*
        pub fn $with<O, F>(op: O, norm: FftNorm) -> Expr<FftOp<O>>
        where
            O: Operator<Elem = Complex<F>>,
            F: FftFloat,
            Complex<F>: Element,
        {
            rank_at_least::<O::Shape, $dims>();
            fft_op(op, $dims, $inverse, norm)
        }
    )*};
}

fft_fns! {
    /// The discrete Fourier transform along the last dim, of every run of it:
    /// `X[k] = sum_j x[j] e^(-2 pi i j k / n)`, unscaled (MatX's `fft` with
    /// its default [`FftNorm::Backward`]; computed by `rustfft`, any `n`).
    /// Real input converts with [`to_complex`](crate::to_complex).
    fn fft;
    /// [`fft`] with the scaling `norm`.
    fn fft_with: 1 dims, inverse: false;

    /// The inverse transform along the last dim: `x[j] = (1/n) sum_k X[k]
    /// e^(2 pi i j k / n)` (MatX's `ifft`, scaled by `1/n` by default), so
    /// `ifft(fft(x)) == x` up to rounding.
    fn ifft;
    /// [`ifft`] with the scaling `norm`.
    fn ifft_with: 1 dims, inverse: true;

    /// The 2-D transform over the last two dims of every matrix (MatX's
    /// `fft2`; unscaled by default).
    fn fft2;
    /// [`fft2`] with the scaling `norm`.
    fn fft2_with: 2 dims, inverse: false;

    /// The inverse 2-D transform (MatX's `ifft2`; scaled by `1/(rows cols)`
    /// by default).
    fn ifft2;
    /// [`ifft2`] with the scaling `norm`.
    fn ifft2_with: 2 dims, inverse: true;
}
