//! The inner loops of reductions.
//!
//! The walk over dims ([`super::plan`]) calls one [`ReduceOp`] for every
//! innermost run it meets: `init` (an output element's first value),
//! `accumulate` (elementwise `dst[j] = op(dst[j], x[j])`, the outer-axis
//! pattern), `fold` (a whole run into one output element, the inner-axis
//! pattern), `fill` (the identity, for empty extents) and `fold_rows` (every
//! row of a var dim into its own output element: the ragged reduction as
//! one segmented loop that reads each row descriptor once).
//!
//! - [`FoldOp`]: the built-in reductions, typed. `fold` keeps [`LANES`]
//!   accumulators (element `j` of a run goes to lane `j % LANES`, the tail
//!   to the combined lanes), so a sum runs at memory speed rather than at
//!   the latency of one dependent add; runs longer than [`BLOCK`] are folded
//!   block by block and the block results combined in order, which lets a
//!   long run fold on several threads with the serial result, bit for bit.
//!   The lane order is the same for contiguous and strided runs.
//! - [`MeanOp`]: a float64 (or complex[float64]) sum, a [`FoldOp`] that
//!   can divide by counts afterwards; [`CountOp`] counts, for means over var dims.
//! - [`UserOp`]: any binary ckernel `(T, T) -> T` (the reduction kernel's
//!   children), called in order, left to right, with no reassociation.

use crate::callable::reduce::BuiltinReduction;
use crate::error::{Error, Result};
use crate::kernels::KernelRef;
use crate::kernels::loops::Rows;
use crate::types::{BuiltinType, NativeType};
use crate::with_native;
use num_complex::Complex;
use std::marker::PhantomData;

/// Accumulators per contiguous fold (DESIGN §10: 4–8 reach memory speed).
pub(super) const LANES: usize = 8;
/// Elements folded before a block result is combined into the run's.
pub(super) const BLOCK: usize = 1 << 14;

/// What an op may reach while it runs: the reduction kernel and its
/// children (a user op's binary kernels).
#[derive(Clone, Copy)]
pub(super) struct Ctx<'a> {
    /// The reduction kernel.
    pub k: KernelRef<'a>,
    /// Offsets of its children, relative to it.
    pub children: &'a [usize],
}

/// One call of an op: `n` output elements `ds` bytes apart from `dst`,
/// `n` source elements `ss` bytes apart from `src` (a side buffer's, for
/// [`ReduceOp::divide`]; unread by [`ReduceOp::fill`]), and the context.
#[derive(Clone, Copy)]
pub(super) struct Span<'a> {
    /// The context of the kernel that owns the op.
    pub cx: Ctx<'a>,
    /// The first output element.
    pub dst: *mut u8,
    /// Bytes from one output element to the next.
    pub ds: isize,
    /// The first source element.
    pub src: *const u8,
    /// Bytes from one source element to the next.
    pub ss: isize,
    /// Elements of each.
    pub n: usize,
    /// The state of the output element a stateful op folds into
    /// ([`ReduceOp::state_size`]; unused by the others).
    pub state: *mut u8,
    /// For [`Staged`], whose outputs are states: the position in the
    /// reduced extent of the first source element (the rest follow it);
    /// `None`: each state counts the values folded into it.
    pub pos: Option<i64>,
}

impl Span<'_> {
    /// Output element `j` (no check: only its use needs `j < n`).
    #[inline(always)]
    pub fn dst_at(&self, j: usize) -> *mut u8 {
        self.dst.wrapping_offset(j as isize * self.ds)
    }

    /// Source element `j` (no check: only its use needs `j < n`).
    #[inline(always)]
    pub fn src_at(&self, j: usize) -> *const u8 {
        self.src.wrapping_offset(j as isize * self.ss)
    }

    /// `dst[j] = v` for every `j < n`.
    ///
    /// # Safety
    /// 1. Every `dst[j]` is writable for a `T`.
    #[inline(always)]
    pub unsafe fn set_each<T: Copy>(&self, v: T) {
        for j in 0..self.n {
            // SAFETY: (1) element j of dst.
            unsafe { st(self.dst_at(j), v) };
        }
    }
}

/// The error of an op without identity asked for one.
fn no_identity() -> Error {
    Error::invalid_argument("the reduction has no identity for an empty extent")
}

/// The error of an op other than a mean asked to divide.
fn only_means() -> Error {
    Error::invalid_argument("only a mean divides by counts")
}

/// The inner loops of one reduction, for one source and result type.
///
/// Safety contract shared by the methods, for their [`Span`] `r`: (1) for
/// every `j < r.n`, `r.dst_at(j)` is a writable result element and
/// `r.src_at(j)` a readable source element (of the types the op was made
/// for); (2) `r.cx` is the context of the kernel that owns the op.
pub(super) trait ReduceOp: Send + Sync + 'static {
    /// `true` when an empty extent reduces to an identity.
    fn has_identity(&self) -> bool;

    /// `dst[j] = x[j]`, converted to the result type.
    ///
    /// # Safety
    /// The trait's contract.
    unsafe fn init(&self, r: Span<'_>) -> Result<()>;

    /// `dst[j] = op(dst[j], x[j])`.
    ///
    /// # Safety
    /// The trait's contract, and every `dst[j]` holds a result value.
    unsafe fn accumulate(&self, r: Span<'_>) -> Result<()>;

    /// `*dst = op(x[0], …, x[n-1])` when `first`, else
    /// `*dst = op(*dst, x[0], …, x[n-1])` (`r.ds` is not used: one output
    /// element). With `n == 0`: the identity when `first` (an error
    /// without one), else nothing; otherwise
    /// [`ReduceOp::fold_nonempty`].
    ///
    /// # Safety
    /// The trait's contract for `src` (with `ds` = 0: one `dst`), and
    /// `*dst` holds a result value unless `first`.
    unsafe fn fold(&self, r: Span<'_>, first: bool) -> Result<()> {
        if r.n > 0 {
            // SAFETY: the caller's promises.
            unsafe { self.fold_nonempty(r, first) }
        } else if first {
            // SAFETY: the caller's promises: one writable output element.
            unsafe { self.fill(Span { ds: 0, n: 1, ..r }) }
        } else {
            Ok(())
        }
    }

    /// [`ReduceOp::fold`] of `n >= 1` elements.
    ///
    /// # Safety
    /// As [`ReduceOp::fold`], and `r.n >= 1`.
    unsafe fn fold_nonempty(&self, r: Span<'_>, first: bool) -> Result<()>;

    /// Folds every row of a var dim into its own output element: row `j`
    /// of `rows` into `r.dst_at(j)` (the span's source side is not used),
    /// as [`ReduceOp::fold`] would row by row (an empty row gives the
    /// identity when `first`), in one segmented loop that reads each row
    /// descriptor once. Returns the values read, or `None` when the op has
    /// no such loop (or an empty row would be an error): the walk then
    /// folds row by row.
    ///
    /// # Safety
    /// The trait's contract for `dst` (`rows.n` elements), every row
    /// descriptor of `rows` is readable and addresses its readable
    /// elements, and each `dst[j]` holds a result value unless `first`.
    unsafe fn fold_rows(&self, r: Span<'_>, rows: Rows, first: bool) -> Result<Option<usize>> {
        let _ = (r, rows, first);
        Ok(None)
    }

    /// `dst[j] = identity` (an error for an op without one); the source is
    /// not read.
    ///
    /// # Safety
    /// The trait's contract for `dst`.
    unsafe fn fill(&self, r: Span<'_>) -> Result<()>;

    /// Bytes of state the op keeps per output element while the walk is
    /// inside the reduced dims (0: it reduces into the output itself).
    fn state_size(&self) -> usize {
        0
    }

    /// Resets the state at `state` for a new output element.
    ///
    /// # Safety
    /// 1. `state` is writable for [`ReduceOp::state_size`] bytes.
    unsafe fn reset(&self, state: *mut u8) {
        let _ = state;
    }

    /// Writes the result of the state at `state` into the output element
    /// `dst`.
    ///
    /// # Safety
    /// 1. `state` was reset (and folded into) by this op; `dst` is a
    ///    writable result element.
    unsafe fn finish(&self, dst: *mut u8, state: *mut u8) -> Result<()> {
        let _ = (dst, state);
        Ok(())
    }

    /// Folds `n` source elements `ss` bytes apart from `src` into the state
    /// at `state`, at positions `pos`, `pos + 1`, … of the reduced extent
    /// (`None`: after the values folded into it before). Stateful ops only;
    /// the others refuse.
    ///
    /// # Safety
    /// 1. `state` holds this op's state (reset, perhaps folded into).
    /// 2. `src + j * ss` is a readable source element for every `j < n`.
    unsafe fn fold_state(
        &self,
        state: *mut u8,
        src: *const u8,
        ss: isize,
        n: usize,
        pos: Option<i64>,
    ) -> Result<()> {
        let _ = (state, src, ss, n, pos);
        Err(Error::invalid_argument(
            "only a stateful reduction folds into a state",
        ))
    }

    /// `dst[j] /= counts[j]`, the counts being the span's source: `f64`s
    /// (means only; other ops refuse).
    ///
    /// # Safety
    /// The trait's contract for `dst`; every `r.src_at(j)` is a readable
    /// `f64`.
    unsafe fn divide(&self, r: Span<'_>) -> Result<()> {
        let _ = r;
        Err(only_means())
    }
}

mod combine;
mod fold;
mod mean;
mod raw;
mod state;
mod user;
mod values;

use crate::kernels::loops::Plan;
use crate::types::B8;
pub(in crate::callable::reduce) use combine::{
    AllK, AnyK, Combine, CountK, MaxK, MinK, ProdK, SumK,
};
pub(in crate::callable::reduce) use fold::FoldOp;
use mean::DivCount;
pub(in crate::callable::reduce) use mean::{CountOp, MeanOp};
use mean::{Divide, Keep};
use raw::{contiguous, ld, plan, st};
pub(in crate::callable::reduce) use state::{
    ArgAcc, MeanAcc, STATE_MAX, Staged, StateBuf, StateOp, VarAcc,
};
pub(in crate::callable::reduce) use user::UserOp;
pub(in crate::callable::reduce) use values::{
    Cvt, Mode, NaRaw, Opt, Plain, Pod, Skip, SkipOpt, Truth,
};

// ---- the built-in table ----
/// Makes a boxed op.
fn make<O: ReduceOp + Default>() -> Box<dyn ReduceOp> {
    Box::new(O::default())
}

/// A constructor of an op.
pub(super) type MakeOp = fn() -> Box<dyn ReduceOp>;

/// The result type of built-in reduction `kind` over elements of type `t`,
/// and its op's constructor; `None` when `kind` does not take `t`. `skip`:
/// the source is `?t` (missing values are skipped); `opt`: the result is
/// optional (`?R`, missing where nothing was reduced: DESIGN §6);
/// `counted`: a mean keeps its own count per output element (a stateful
/// op: the counts differ between output elements in ways the stateless
/// mean's finishing passes cannot follow).
///
/// | source | sum, prod | min, max | mean | all, any | count, argmin, argmax | var, std |
/// |---|---|---|---|---|---|---|
/// | bool | int64 | bool | float64 | bool | int64 | float64 |
/// | int8 … int64 | int64 | same | float64 | bool | int64 | float64 |
/// | uint8 … uint64 | uint64 | same | float64 | bool | int64 | float64 |
/// | int128, uint128 | same | same | float64 | bool | int64 | float64 |
/// | float16 | float16 (float32 inside a run) | float16 | float64 | bool | int64 | float64 |
/// | float32, float64 | same | same | float64 | bool | int64 | float64 |
/// | complex64, complex128 | same | — | complex128 | bool | count only | — |
pub(super) fn builtin(
    kind: BuiltinReduction,
    t: BuiltinType,
    skip: bool,
    opt: bool,
    counted: bool,
) -> Option<(BuiltinType, MakeOp)> {
    use BuiltinReduction as R;
    use BuiltinType as B;
    // Sums and products accumulate in the compute type of the sum type
    // (float32 for a 16-bit float); min and max in the compute type; all
    // and any in truthiness.
    macro_rules! sum_like {
        ($k:ty, $m:ty) => {
            with_native!(t, |T| {
                type S = <T as NativeType>::Sum;
                (
                    <S as NativeType>::TYPE,
                    make::<
                        FoldOp<
                            $k,
                            <T as NativeType>::Raw,
                            <S as NativeType>::Compute,
                            <S as NativeType>::Raw,
                            Keep,
                            $m,
                        >,
                    > as MakeOp,
                )
            })
        };
    }
    macro_rules! min_like {
        ($k:ty, $m:ty) => {
            with_native!(t, bool signed unsigned half ieee => |T| (
                <T as NativeType>::TYPE,
                make::<FoldOp<$k, <T as NativeType>::Raw, <T as NativeType>::Compute, <T as NativeType>::Raw, Keep, $m>>
                    as MakeOp,
            ))
        };
    }
    macro_rules! all_like {
        ($k:ty, $m:ty) => {
            with_native!(t, |T| (
                B::Bool,
                make::<FoldOp<$k, <T as NativeType>::Raw, Truth, B8, Keep, $m>> as MakeOp,
            ))
        };
    }
    macro_rules! count {
        ($m:ty) => {
            with_native!(t, |T| (
                B::Int64,
                make::<FoldOp<CountK, <T as NativeType>::Raw, i64, i64, Keep, $m>> as MakeOp,
            ))
        };
    }
    macro_rules! arg {
        ($k:ty, $m:ty) => {
            with_native!(t, bool signed unsigned half ieee => |T| (
                B::Int64,
                make::<StateOp<ArgAcc<$k, <T as NativeType>::Raw, <T as NativeType>::Compute>, $m>>
                    as MakeOp,
            ))
        };
    }
    macro_rules! var {
        ($std:expr, $m:ty) => {
            with_native!(t, bool signed unsigned half ieee => |T| (
                B::Float64,
                make::<StateOp<VarAcc<<T as NativeType>::Raw, $std>, $m>> as MakeOp,
            ))
        };
    }
    macro_rules! mean {
        ($m:ty) => {
            with_native!(t, |T| {
                type M = <T as NativeType>::Mean;
                (
                    <M as NativeType>::TYPE,
                    make::<StateOp<MeanAcc<<T as NativeType>::Raw, M>, $m>> as MakeOp,
                )
            })
        };
    }
    // Which `Mode` a reduction with an optional result runs in (a skipping
    // source always makes the result optional, for these).
    macro_rules! by_mode {
        ($mac:ident!($($a:tt)*)) => {
            match (skip, opt) {
                (true, _) => $mac!($($a)* SkipOpt),
                (false, true) => $mac!($($a)* Opt),
                (false, false) => $mac!($($a)* Plain),
            }
        };
    }
    match kind {
        R::Sum if skip => sum_like!(SumK, Skip),
        R::Sum => sum_like!(SumK, Plain),
        R::Prod if skip => sum_like!(ProdK, Skip),
        R::Prod => sum_like!(ProdK, Plain),
        R::All if skip => all_like!(AllK, Skip),
        R::All => all_like!(AllK, Plain),
        R::Any if skip => all_like!(AnyK, Skip),
        R::Any => all_like!(AnyK, Plain),
        R::Count if skip => count!(Skip),
        R::Count => count!(Plain),
        R::Min => by_mode!(min_like!(MinK,)),
        R::Max => by_mode!(min_like!(MaxK,)),
        R::ArgMin => by_mode!(arg!(MinK,)),
        R::ArgMax => by_mode!(arg!(MaxK,)),
        R::Var => by_mode!(var!(false,)),
        R::Std => by_mode!(var!(true,)),
        R::Mean if skip || counted => by_mode!(mean!()),
        R::Mean => with_native!(t, |T| {
            type M = <T as NativeType>::Mean;
            (
                <M as NativeType>::TYPE,
                if opt {
                    make::<MeanOp<<T as NativeType>::Raw, M, true>> as MakeOp
                } else {
                    make::<MeanOp<<T as NativeType>::Raw, M, false>> as MakeOp
                },
            )
        }),
    }
}
