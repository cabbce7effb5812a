//! The kernels of this family, written once: a same-type kernel per
//! operation and compute type ([`Unary`], [`Binary`]), and one generic
//! promotion wrapper ([`Promote`]) that converts mismatched inputs.
//!
//! A same-type kernel's strided loop takes one of two shapes, chosen per
//! call: when the output and every operand are contiguous and aligned, or
//! an operand is broadcast (stride 0), a plain slice loop that LLVM
//! vectorises, with no `Result` per element; otherwise an element-by-element
//! loop through unaligned reads. Operations that can fail (integer
//! division) check a chunk of [`CHUNK`] elements with a branch-free pass
//! first and compute it only when it is clean: on error every chunk before
//! the failing one has been written, and nothing from it on (in the
//! element-by-element loop: every element before the failing one).
//!
//! [`Promote`] sits above a same-type kernel when an input's type differs
//! from the compute type: per chunk it converts each such input into a
//! bounded buffer on its own stack through a child assignment kernel
//! (`nocheck`: a promotion cannot fail), then calls the same-type kernel on
//! the buffers. A broadcast input (stride 0) is converted once per call.
//! Nothing is kept in the kernel, so one built kernel runs on many threads.

use crate::error::{Error, Result};
use crate::kernels::assign::{ErrorMode, make_assignment_kernel};
use crate::kernels::loops::{Operand, Run, overlaps, run_of};
use crate::kernels::{CKernelBuilder, Kernel, KernelRef, KernelRequest, Strided, kernel_size};
use crate::types::{BuiltinType, NativeType, Type};
use std::marker::PhantomData;
use std::mem::{MaybeUninit, size_of};
use std::pin::Pin;

/// Elements per chunk, for checked division and promotion buffers.
pub const CHUNK: usize = 256;

/// The largest element a promotion buffer holds (int128, complex\[float64\]).
const MAX_ELEM: usize = 16;

/// A one-argument operation on `T`. Total: every input has a result.
pub trait UnaryOp<T: NativeType>: Send + Sync + 'static {
    /// The result type.
    type Out: NativeType;
    /// The result for one element.
    fn apply(a: T) -> Self::Out;
    /// The same operation in CUDA C (DESIGN §14): an expression in `a` of
    /// the compute type `T` (a typedef in the generated function), `""`
    /// when the device does not have it. Written beside [`UnaryOp::apply`]
    /// so the two cannot drift; used only for types with a
    /// [`BuiltinType::cuda_c`].
    const CUDA: &'static str = "";
}

/// A two-argument operation on `T`.
pub trait BinaryOp<T: NativeType>: Send + Sync + 'static {
    /// The result type.
    type Out: NativeType;
    /// `true` when some inputs are errors ([`BinaryOp::bad`]).
    const CHECKED: bool = false;
    /// The result for one pair. Total (never panics), even for pairs that
    /// [`BinaryOp::bad`] rejects; those results are never stored.
    fn apply(a: T, b: T) -> Self::Out;
    /// `true` when the pair is an error (branch-free, so a chunk's check
    /// vectorises).
    #[inline(always)]
    fn bad(_a: T, _b: T) -> bool {
        false
    }
    /// The error for a pair [`BinaryOp::bad`] rejects.
    fn error(_a: T, _b: T) -> Error {
        Error::invalid_argument("invalid arguments")
    }
    /// [`BinaryOp::apply`] in CUDA C (DESIGN §14): an expression in `a` and
    /// `b` of the compute type `T` (a typedef in the generated function),
    /// total as `apply` is; `""` when the device does not have it. Used only
    /// for types with a [`BuiltinType::cuda_c`].
    const CUDA: &'static str = "";
    /// [`BinaryOp::bad`] in CUDA C, `""` for an operation that cannot fail.
    const CUDA_BAD: &'static str = "";
    /// CUDA C definitions (device function templates) that [`BinaryOp::CUDA`]
    /// calls, `""` for none.
    const CUDA_PRELUDE: &'static str = "";
}

/// One scalar operation on one compute type, as CUDA C (DESIGN §14): what
/// the device code generator emits for it, taken from the operation's
/// `CUDA` constants beside its Rust body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeviceOp {
    /// The compute type (arguments are converted to it first).
    pub compute: BuiltinType,
    /// The result type.
    pub out: BuiltinType,
    /// The result: a CUDA C expression in `a` (and `b`) of type `T`.
    pub expr: &'static str,
    /// When the arguments are an error: a CUDA C condition, `""` for never.
    pub bad: &'static str,
    /// Definitions `expr` or `bad` use, `""` for none.
    pub prelude: &'static str,
}

/// The device form of `Op` on `T`, when both the type and the operation
/// have CUDA C.
const fn device_op(
    compute: BuiltinType,
    out: BuiltinType,
    expr: &'static str,
    bad: &'static str,
    prelude: &'static str,
) -> Option<DeviceOp> {
    if compute.cuda_c().is_none() || out.cuda_c().is_none() || expr.is_empty() {
        return None;
    }
    Some(DeviceOp {
        compute,
        out,
        expr,
        bad,
        prelude,
    })
}

/// A same-type kernel: built with no data and no children.
pub(crate) trait Core: Kernel + Default {
    /// The result type.
    const OUT: BuiltinType;
    /// Builds the kernel's variant over option arguments, when it has one
    /// ([`EmplaceNa`]).
    const EMPLACE_NA: Option<EmplaceNa> = None;
    /// The same operation as CUDA C, when the device has it.
    const DEVICE: Option<DeviceOp> = None;
}

/// Builds a same-type kernel at a free slot and returns the offset past
/// it. The function is `unsafe`: the offset must be a free slot of the
/// builder (as [`CKernelBuilder::emplace`] 1).
pub(crate) type Emplace =
    unsafe fn(Pin<&mut CKernelBuilder>, usize, KernelRequest) -> Result<usize>;

/// Builds, at a free slot, the variant of a binary same-type kernel that
/// takes option arguments (`optional[i]`: argument `i` is one) and writes
/// the result's NA wherever an argument is NA, in the same loop as the
/// values: one pass over memory, where a kernel then a fix-up would make
/// two. Only operations that cannot fail have one (the values under an NA
/// are computed too, and must not raise an error). The function is
/// `unsafe` as [`Emplace`] is.
pub(crate) type EmplaceNa =
    unsafe fn(Pin<&mut CKernelBuilder>, usize, KernelRequest, [bool; 2]) -> Result<usize>;

/// [`Emplace`] for `K`.
///
/// # Safety
/// 1. `offset` is a free slot of `ckb` (as [`CKernelBuilder::emplace`]).
unsafe fn emplace_core<K: Core>(
    ckb: Pin<&mut CKernelBuilder>,
    offset: usize,
    req: KernelRequest,
) -> Result<usize> {
    // SAFETY: (1); a same-type kernel has no children.
    unsafe { ckb.emplace(offset, req, K::default()) }
}

/// A same-type kernel as data: how to build it and what it returns.
#[derive(Clone, Copy)]
pub(crate) struct CoreKernel {
    /// Builds it.
    pub emplace: Emplace,
    /// Its result type.
    pub out: BuiltinType,
    /// Builds its variant over option arguments, when it has one.
    pub emplace_na: Option<EmplaceNa>,
    /// Its CUDA C, when the device has it.
    pub device: Option<DeviceOp>,
}

/// The [`CoreKernel`] for `K`.
pub(crate) fn core<K: Core>() -> CoreKernel {
    CoreKernel {
        emplace: emplace_core::<K>,
        out: K::OUT,
        emplace_na: K::EMPLACE_NA,
        device: K::DEVICE,
    }
}

// ------------------------------------------------------------------ lanes

/// An operand of a contiguous loop: a slice, or one value repeated.
trait Lane<R: Copy>: Copy {
    /// `len` values from `start`.
    fn sub(self, start: usize, len: usize) -> Self;
    /// The values (as many as the loop takes).
    fn values(self) -> impl Iterator<Item = R>;
}

impl<R: Copy> Lane<R> for &[R] {
    #[inline(always)]
    fn sub(self, start: usize, len: usize) -> Self {
        &self[start..start + len]
    }
    #[inline(always)]
    fn values(self) -> impl Iterator<Item = R> {
        self.iter().copied()
    }
}

/// One value, repeated (a broadcast operand).
#[derive(Clone, Copy)]
struct Splat<R>(R);

impl<R: Copy> Lane<R> for Splat<R> {
    #[inline(always)]
    fn sub(self, _start: usize, _len: usize) -> Self {
        self
    }
    #[inline(always)]
    fn values(self) -> impl Iterator<Item = R> {
        std::iter::repeat(self.0)
    }
}

/// How an operand of a strided call can be read.
enum Access<'a, R> {
    Slice(&'a [R]),
    Splat(R),
    Strided,
}

/// How to read `count` elements of `R` at `p` with `stride`, given the
/// output's byte range `(start, length)`, as the loop selector
/// ([`run_of`]) says: a slice only when they are contiguous, aligned and
/// apart from the output.
///
/// # Safety
/// 1. `count > 0`, and the `count` elements at `p` with `stride` are
///    readable and stay unwritten for `'a` except through the output
///    range.
unsafe fn access<'a, R: Copy>(
    p: *const u8,
    stride: isize,
    count: usize,
    out: (*const u8, usize),
) -> Access<'a, R> {
    match run_of(Operand::of::<R>(p, stride)) {
        // SAFETY: (1) element 0 is readable.
        Run::Broadcast => Access::Splat(unsafe { std::ptr::read_unaligned(p.cast::<R>()) }),
        Run::Contiguous if !overlaps(p, count * size_of::<R>(), out.0, out.1) => {
            // SAFETY: (1) `count` contiguous, aligned elements, not written
            // while the slice lives (they do not overlap the output).
            Access::Slice(unsafe { std::slice::from_raw_parts(p.cast::<R>(), count) })
        }
        _ => Access::Strided,
    }
}

/// The output as a slice when it is contiguous and aligned, with its byte
/// range (what [`access`] keeps a source's slice apart from).
///
/// # Safety
/// 1. `count` elements at `dst` with `stride` are writable, and nothing
///    else reads or writes them for `'a` (sources that overlap them are
///    read only through raw pointers, or once before the loop).
unsafe fn out_slice<'a, R>(
    dst: *mut u8,
    stride: isize,
    count: usize,
) -> Option<(&'a mut [R], (*const u8, usize))> {
    if run_of(Operand::of::<R>(dst.cast_const(), stride)) == Run::Contiguous {
        // SAFETY: (1) `count` contiguous, aligned elements, ours alone.
        let out = unsafe { std::slice::from_raw_parts_mut(dst.cast::<R>(), count) };
        let range = (dst.cast_const(), size_of_val(out));
        Some((out, range))
    } else {
        None
    }
}

// ------------------------------------------------------------------ unary

/// `Op` on `T`, one source.
pub(crate) struct Unary<T, Op>(PhantomData<fn() -> (T, Op)>);

impl<T, Op> Default for Unary<T, Op> {
    fn default() -> Self {
        Unary(PhantomData)
    }
}

impl<T: NativeType, Op: UnaryOp<T>> Core for Unary<T, Op> {
    const OUT: BuiltinType = <Op::Out as NativeType>::TYPE;
    const DEVICE: Option<DeviceOp> = device_op(T::TYPE, Self::OUT, Op::CUDA, "", "");
}

#[inline(always)]
fn unary_loop<T: NativeType, Op: UnaryOp<T>>(
    out: &mut [<Op::Out as NativeType>::Raw],
    a: impl Lane<T::Raw>,
) {
    for (o, x) in out.iter_mut().zip(a.values()) {
        *o = Op::apply(T::from_raw(x)).to_raw();
    }
}

impl<T: NativeType, Op: UnaryOp<T>> Kernel for Unary<T, Op> {
    const NSRC: usize = 1;

    unsafe fn single(&self, _k: KernelRef<'_>, dst: *mut u8, src: &[*const u8]) -> Result<()> {
        // SAFETY: (1) src[0] holds a T and dst has room for the result;
        // unaligned access, as the data may be.
        unsafe {
            let a = T::from_raw(std::ptr::read_unaligned(src[0].cast::<T::Raw>()));
            std::ptr::write_unaligned(dst.cast(), Op::apply(a).to_raw());
        }
        Ok(())
    }

    unsafe fn strided(&self, _k: KernelRef<'_>, run: Strided<'_>) -> Result<()> {
        let (dst, dst_stride, src, src_stride, count) = run.parts();
        if count == 0 {
            return Ok(());
        }
        // SAFETY: (1) of Kernel::strided: `count` writable output elements.
        if let Some((out, out_range)) = unsafe { out_slice(dst, dst_stride, count) } {
            // SAFETY: (1) of Kernel::strided: `count` readable source
            // elements; `access` makes a slice only of one that does not
            // overlap the output.
            match unsafe { access::<T::Raw>(src[0], src_stride[0], count, out_range) } {
                Access::Slice(a) => {
                    unary_loop::<T, Op>(out, a);
                    return Ok(());
                }
                Access::Splat(a) => {
                    unary_loop::<T, Op>(out, Splat(a));
                    return Ok(());
                }
                Access::Strided => {}
            }
        }
        for j in 0..count as isize {
            // SAFETY: (1) element j of each range.
            unsafe {
                let a = T::from_raw(std::ptr::read_unaligned(
                    src[0].offset(j * src_stride[0]).cast::<T::Raw>(),
                ));
                std::ptr::write_unaligned(dst.offset(j * dst_stride).cast(), Op::apply(a).to_raw());
            }
        }
        Ok(())
    }
}

// ----------------------------------------------------------------- binary

/// `Op` on `T`, two sources; with `A` (`B`) the first (second) source is
/// an option of `T` and the result is `Op::Out`'s NA wherever it is NA
/// (only for operations that cannot fail: [`EmplaceNa`]).
pub(crate) struct Binary<T, Op, const A: bool = false, const B: bool = false>(
    PhantomData<fn() -> (T, Op)>,
);

impl<T, Op, const A: bool, const B: bool> Default for Binary<T, Op, A, B> {
    fn default() -> Self {
        Binary(PhantomData)
    }
}

impl<T: NativeType, Op: BinaryOp<T>> Core for Binary<T, Op> {
    const OUT: BuiltinType = <Op::Out as NativeType>::TYPE;
    const EMPLACE_NA: Option<EmplaceNa> = if Op::CHECKED {
        None
    } else {
        Some(emplace_na::<T, Op>)
    };
    const DEVICE: Option<DeviceOp> =
        device_op(T::TYPE, Self::OUT, Op::CUDA, Op::CUDA_BAD, Op::CUDA_PRELUDE);
}

/// [`EmplaceNa`] for `Op` on `T`.
///
/// # Safety
/// 1. `offset` is a free slot of `ckb` (as [`CKernelBuilder::emplace`]).
unsafe fn emplace_na<T: NativeType, Op: BinaryOp<T>>(
    ckb: Pin<&mut CKernelBuilder>,
    offset: usize,
    req: KernelRequest,
    optional: [bool; 2],
) -> Result<usize> {
    // SAFETY: (1); the kernels have no children.
    unsafe {
        match optional {
            [true, true] => ckb.emplace(offset, req, Binary::<T, Op, true, true>::default()),
            [true, false] => ckb.emplace(offset, req, Binary::<T, Op, true, false>::default()),
            [false, true] => ckb.emplace(offset, req, Binary::<T, Op, false, true>::default()),
            [false, false] => ckb.emplace(offset, req, Binary::<T, Op>::default()),
        }
    }
}

/// `true` when `x` is `na` bit for bit (a float NA is a NaN, which `==`
/// never matches): one integer compare of the element's width, which
/// vectorises.
#[inline(always)]
fn same_bits<R: bytemuck::Pod>(x: R, na: R) -> bool {
    macro_rules! as_int {
        ($($n:literal => $u:ty),*) => {
            match size_of::<R>() {
                $($n => bytemuck::cast::<R, $u>(x) == bytemuck::cast::<R, $u>(na),)*
                _ => bytemuck::bytes_of(&x) == bytemuck::bytes_of(&na),
            }
        };
    }
    as_int!(1 => u8, 2 => u16, 4 => u32, 8 => u64, 16 => u128)
}

/// The result of `Op` on one pair, or NA where an optional argument is
/// NA (`A`, `B` as [`Binary`]).
#[inline(always)]
fn apply_or_na<T: NativeType, Op: BinaryOp<T>, const A: bool, const B: bool>(
    x: T::Raw,
    y: T::Raw,
) -> <Op::Out as NativeType>::Raw {
    let r = Op::apply(T::from_raw(x), T::from_raw(y)).to_raw();
    if (A && same_bits(x, T::NA)) | (B && same_bits(y, T::NA)) {
        <Op::Out as NativeType>::NA
    } else {
        r
    }
}

/// The contiguous loop: plain when the operation cannot fail, else a
/// branch-free check per chunk, then the chunk.
#[inline(always)]
fn binary_loop<T: NativeType, Op: BinaryOp<T>, const A: bool, const B: bool>(
    out: &mut [<Op::Out as NativeType>::Raw],
    a: impl Lane<T::Raw>,
    b: impl Lane<T::Raw>,
) -> Result<()> {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2, the only requirement of the AVX2 build.
        return unsafe { binary_loop_avx2::<T, Op, A, B>(out, a, b) };
    }
    binary_loop_body::<T, Op, A, B>(out, a, b)
}

/// [`binary_loop_body`] compiled for AVX2 (picked at run time, as NumPy
/// picks its SIMD loops): comparisons into bytes and the narrow types gain
/// most; memory-bound loops are unchanged.
///
/// # Safety
/// 1. The CPU supports AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn binary_loop_avx2<T: NativeType, Op: BinaryOp<T>, const A: bool, const B: bool>(
    out: &mut [<Op::Out as NativeType>::Raw],
    a: impl Lane<T::Raw>,
    b: impl Lane<T::Raw>,
) -> Result<()> {
    binary_loop_body::<T, Op, A, B>(out, a, b)
}

#[inline(always)]
fn binary_loop_body<T: NativeType, Op: BinaryOp<T>, const A: bool, const B: bool>(
    out: &mut [<Op::Out as NativeType>::Raw],
    a: impl Lane<T::Raw>,
    b: impl Lane<T::Raw>,
) -> Result<()> {
    if !Op::CHECKED {
        for ((o, x), y) in out.iter_mut().zip(a.values()).zip(b.values()) {
            *o = apply_or_na::<T, Op, A, B>(x, y);
        }
        return Ok(());
    }
    // Only the operations that cannot fail have option variants.
    debug_assert!(!A && !B);
    let mut start = 0;
    for chunk in out.chunks_mut(CHUNK) {
        let n = chunk.len();
        let (a, b) = (a.sub(start, n), b.sub(start, n));
        let pairs = || {
            a.values()
                .zip(b.values())
                .take(n)
                .map(|(x, y)| (T::from_raw(x), T::from_raw(y)))
        };
        if pairs().fold(false, |acc, (x, y)| acc | Op::bad(x, y))
            && let Some((x, y)) = pairs().find(|&(x, y)| Op::bad(x, y))
        {
            return Err(Op::error(x, y));
        }
        for ((o, x), y) in chunk.iter_mut().zip(a.values()).zip(b.values()) {
            *o = Op::apply(T::from_raw(x), T::from_raw(y)).to_raw();
        }
        start += n;
    }
    Ok(())
}

impl<T: NativeType, Op: BinaryOp<T>, const A: bool, const B: bool> Kernel for Binary<T, Op, A, B> {
    const NSRC: usize = 2;

    unsafe fn single(&self, _k: KernelRef<'_>, dst: *mut u8, src: &[*const u8]) -> Result<()> {
        // SAFETY: (1) each source holds a T; unaligned reads, as the data
        // may be.
        let (x, y) = unsafe {
            (
                std::ptr::read_unaligned(src[0].cast::<T::Raw>()),
                std::ptr::read_unaligned(src[1].cast::<T::Raw>()),
            )
        };
        let (a, b) = (T::from_raw(x), T::from_raw(y));
        if Op::CHECKED && Op::bad(a, b) {
            return Err(Op::error(a, b));
        }
        // SAFETY: (1) dst has room for the result.
        unsafe { std::ptr::write_unaligned(dst.cast(), apply_or_na::<T, Op, A, B>(x, y)) };
        Ok(())
    }

    unsafe fn strided(&self, _k: KernelRef<'_>, run: Strided<'_>) -> Result<()> {
        let (dst, dst_stride, src, src_stride, count) = run.parts();
        if count == 0 {
            return Ok(());
        }
        // SAFETY: (1) of Kernel::strided: `count` writable output elements.
        if let Some((out, out_range)) = unsafe { out_slice(dst, dst_stride, count) } {
            // SAFETY: (1) of Kernel::strided: `count` readable elements of
            // each source; `access` makes a slice only of one that does not
            // overlap the output.
            let (a, b) = unsafe {
                (
                    access::<T::Raw>(src[0], src_stride[0], count, out_range),
                    access::<T::Raw>(src[1], src_stride[1], count, out_range),
                )
            };
            match (a, b) {
                (Access::Slice(a), Access::Slice(b)) => {
                    return binary_loop::<T, Op, A, B>(out, a, b);
                }
                (Access::Slice(a), Access::Splat(b)) => {
                    return binary_loop::<T, Op, A, B>(out, a, Splat(b));
                }
                (Access::Splat(a), Access::Slice(b)) => {
                    return binary_loop::<T, Op, A, B>(out, Splat(a), b);
                }
                (Access::Splat(a), Access::Splat(b)) => {
                    return binary_loop::<T, Op, A, B>(out, Splat(a), Splat(b));
                }
                _ => {}
            }
        }
        for j in 0..count as isize {
            // SAFETY: (1) element j of each source.
            let (x, y) = unsafe {
                (
                    std::ptr::read_unaligned(src[0].offset(j * src_stride[0]).cast::<T::Raw>()),
                    std::ptr::read_unaligned(src[1].offset(j * src_stride[1]).cast::<T::Raw>()),
                )
            };
            let (a, b) = (T::from_raw(x), T::from_raw(y));
            if Op::CHECKED && Op::bad(a, b) {
                return Err(Op::error(a, b));
            }
            // SAFETY: (1) element j of the output.
            unsafe {
                std::ptr::write_unaligned(
                    dst.offset(j * dst_stride).cast(),
                    apply_or_na::<T, Op, A, B>(x, y),
                )
            };
        }
        Ok(())
    }
}

// ---------------------------------------------------------------- promote

/// A chunk of converted values on the stack, aligned for any builtin.
#[repr(C, align(16))]
struct Buffer(MaybeUninit<[u8; CHUNK * MAX_ELEM]>);

/// Converts mismatched inputs into the compute type a chunk at a time,
/// then calls the same-type kernel on the chunk.
pub(crate) struct Promote<const N: usize> {
    /// Offsets of the same-type kernel, then of each source's conversion
    /// (0: the source is already of the compute type).
    children: [usize; 3],
    /// Bytes of one compute-type element (at most `MAX_ELEM`).
    elem_size: usize,
}

impl<const N: usize> Kernel for Promote<N> {
    const NSRC: usize = N;

    unsafe fn single(&self, k: KernelRef<'_>, dst: *mut u8, src: &[*const u8]) -> Result<()> {
        // SAFETY: one element is a strided call of count 1 (strided's
        // promises for count 1 are single's).
        unsafe { self.strided(k, Strided::one(dst, src, &[0; N])) }
    }

    unsafe fn strided(&self, k: KernelRef<'_>, run: Strided<'_>) -> Result<()> {
        let (dst, dst_stride, src, src_stride, count) = run.parts();
        if count == 0 {
            return Ok(());
        }
        let size = self.elem_size as isize;
        // SAFETY: (2) children[0] is this kernel's same-type child, built
        // for Strided.
        let core = unsafe { k.child(self.children[0]) };
        let mut bufs = [const { Buffer(MaybeUninit::uninit()) }; N];
        let mut ptrs = [std::ptr::null::<u8>(); N];
        let mut strides = [0isize; N];
        // A broadcast source is converted once.
        for i in 0..N {
            let conv = self.children[1 + i];
            if conv != 0 && src_stride[i] == 0 {
                let buf = bufs[i].0.as_mut_ptr().cast::<u8>();
                // SAFETY: (2) `conv` is this kernel's conversion child for
                // source i, built for Strided into the compute type; source
                // i's element 0 is readable (1), and the buffer has room for
                // CHUNK elements of up to MAX_ELEM bytes.
                unsafe { k.child(conv).call_strided(buf, size, &[src[i]], &[0], 1) }?;
                ptrs[i] = buf;
            }
        }
        let mut done = 0usize;
        while done < count {
            let n = (count - done).min(CHUNK);
            let at = done as isize;
            for i in 0..N {
                let conv = self.children[1 + i];
                let p = src[i].wrapping_offset(at * src_stride[i]);
                if conv == 0 {
                    ptrs[i] = p;
                    strides[i] = src_stride[i];
                } else if src_stride[i] != 0 {
                    let buf = bufs[i].0.as_mut_ptr().cast::<u8>();
                    // SAFETY: (2) `conv` is this kernel's conversion child for source i,
                    // built for Strided into the compute type; source i's element 0 is
                    // readable (1), and the buffer has room for CHUNK elements of up to
                    // MAX_ELEM bytes; here elements [done, done + n) of source i are readable
                    // (1), and n <= CHUNK.
                    unsafe {
                        k.child(conv)
                            .call_strided(buf, size, &[p], &[src_stride[i]], n)
                    }?;
                    ptrs[i] = buf;
                    strides[i] = size;
                }
            }
            // SAFETY: (2) the same-type child reads n compute-type elements
            // from each operand (the caller's source, or the buffer just
            // written) and writes elements [done, done + n) of the output
            // (1).
            unsafe {
                core.call_strided(
                    dst.wrapping_offset(at * dst_stride),
                    dst_stride,
                    &ptrs,
                    &strides,
                    n,
                )
            }?;
            done += n;
        }
        Ok(())
    }

    fn child_offsets(&self) -> &[usize] {
        &self.children[..N + 1]
    }
}

/// Builds `core` (a same-type kernel on `compute`) over sources of
/// `src_tps`, under a [`Promote`] wrapper when some source is of another
/// type. Returns the offset past what it built.
///
/// # Safety
/// 1. `offset` is a free slot of `ckb` (as [`CKernelBuilder::emplace`]).
/// 2. Each arrmeta pointer is valid arrmeta of its type.
/// 3. `core` builds a same-type kernel on `compute` with `src_tps.len()`
///    sources.
pub(crate) unsafe fn build(
    ckb: Pin<&mut CKernelBuilder>,
    offset: usize,
    req: KernelRequest,
    compute: BuiltinType,
    core: Emplace,
    src_tps: &[Type],
    src_metas: &[*const u8],
) -> Result<usize> {
    let c = Type::builtin(compute);
    if src_tps.iter().all(|t| *t == c) {
        // SAFETY: (1).
        return unsafe { core(ckb, offset, req) };
    }
    if compute.data_size() > MAX_ELEM {
        return Err(Error::type_error(format!(
            "cannot promote to {compute}: elements over {MAX_ELEM} bytes"
        )));
    }
    // SAFETY: the caller's promises.
    unsafe {
        match src_tps.len() {
            1 => build_promote::<1>(ckb, offset, req, &c, core, src_tps, src_metas),
            2 => build_promote::<2>(ckb, offset, req, &c, core, src_tps, src_metas),
            n => Err(Error::invalid_argument(format!(
                "promotion wraps 1 or 2 sources, got {n}"
            ))),
        }
    }
}

/// [`build`] with the wrapper, for `N` sources.
///
/// # Safety
/// As [`build`]; `compute` is a builtin of at most `MAX_ELEM` bytes.
unsafe fn build_promote<const N: usize>(
    mut ckb: Pin<&mut CKernelBuilder>,
    offset: usize,
    req: KernelRequest,
    compute: &Type,
    core: Emplace,
    src_tps: &[Type],
    src_metas: &[*const u8],
) -> Result<usize> {
    if src_tps.len() != N || src_metas.len() != N {
        return Err(Error::invalid_argument(format!(
            "{} source types and {} arrmeta pointers for a {N}-source kernel",
            src_tps.len(),
            src_metas.len()
        )));
    }
    let kernel = Promote::<N> {
        children: [kernel_size::<Promote<N>>(), 0, 0],
        elem_size: compute.data_size(),
    };
    // SAFETY: (1) `offset` is free; children[0] is the slot emplace
    // reserves, where the same-type kernel goes next; the others are 0 and
    // set below to the slots their conversions are built in.
    let first = unsafe { ckb.as_mut().emplace(offset, req, kernel) }?;
    // SAFETY: `first` is the free slot past the wrapper; (3).
    let mut at = unsafe { core(ckb.as_mut(), first, KernelRequest::Strided) }?;
    // A builtin has no arrmeta: any non-null pointer is valid for it.
    let no_meta = std::ptr::NonNull::<u8>::dangling().as_ptr().cast_const();
    for i in 0..N {
        if src_tps[i] == *compute {
            continue;
        }
        let child_at = at;
        // Name the child's slot before building in it, so that a build
        // failing part way is destroyed with this kernel.
        // SAFETY: the kernel at `offset` is a Promote<N>; `child_at` is the
        // free (zeroed) slot the last build reserved, which only this child
        // will use (emplace 2).
        unsafe { ckb.as_mut().kernel_mut::<Promote<N>>(offset) }?.children[1 + i] =
            child_at - offset;
        // SAFETY: (1) `at` is the free slot past everything built so far;
        // (2) the source's arrmeta is the caller's, and the compute type
        // has none.
        at = unsafe {
            make_assignment_kernel(
                ckb.as_mut(),
                child_at,
                compute,
                no_meta,
                &src_tps[i],
                src_metas[i],
                KernelRequest::Strided,
                ErrorMode::NoCheck,
            )
        }?;
    }
    Ok(at)
}
