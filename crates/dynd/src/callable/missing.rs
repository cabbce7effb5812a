//! Missing values through scalar callables (DESIGN §6): a scalar callable
//! called on `?T` arguments that it does not accept as they are is called
//! on their value types, and its result becomes optional — missing where
//! any argument is missing. The kernel author does nothing: Rust closures,
//! the built-in functions and third parties' deferred ckernels all get it.
//!
//! A callable that takes option types itself (the string functions) is
//! called as it is. The logical functions use Kleene logic
//! ([`Missing::KleeneAnd`], [`Missing::KleeneOr`]): `false and missing` is
//! false, `true or missing` is true.
//!
//! How it runs: a wrapper kernel (`Propagate`) takes each strided call in
//! chunks of [`CHUNK`] elements, marks the missing ones (a typed comparison
//! with each optional argument's NA value), runs the callable's own kernel
//! and writes NA where something was missing. When every type is a builtin
//! number and the callable allows it ([`CallableImpl::runs_over_missing`]:
//! the built-in functions do) the kernel runs over the whole chunk — a
//! missing element is a value there, computed and then overwritten — so the
//! inner loop stays the vectorised one; should that fail (integer division
//! meeting an NA sentinel), and otherwise always, it runs over the present
//! runs only, so an error always comes from a present element, and a Rust
//! closure or a third party's kernel never sees a missing value.

use super::CallableImpl;
use super::arith::Truthy;
use super::select::by_size;
use crate::error::{Error, Result};
use crate::kernels::{CKernelBuilder, Kernel, KernelArgs, KernelRef, Strided, kernel_size};
use crate::layout::na;
use crate::types::{BuiltinType, NativeType, Type};
use crate::with_native;
use smallvec::SmallVec;
use std::pin::Pin;

/// Elements per chunk of the missing-value mask.
pub const CHUNK: usize = 256;

/// Elements per block of the fast path (the kernel, then the NA fill, while
/// the block is in cache).
pub(crate) const BLOCK: usize = 512;

/// The most arguments a callable may take for missing values to propagate.
const MAX_ARGS: usize = 4;

/// What a scalar callable's result is where an argument is missing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Missing {
    /// Missing (arithmetic, comparisons, math, every callable by default).
    Propagate,
    /// Kleene `and` of truthiness: false where a present argument is
    /// false, else missing.
    KleeneAnd,
    /// Kleene `or` of truthiness: true where a present argument is true,
    /// else missing.
    KleeneOr,
}

/// The value types of `dtypes` (options stripped), when any is optional.
fn values(dtypes: &[Type]) -> Option<SmallVec<[Type; 4]>> {
    dtypes.iter().any(|t| t.option_value().is_some()).then(|| {
        dtypes
            .iter()
            .map(|t| t.option_value().unwrap_or(t).clone())
            .collect()
    })
}

/// The element result of scalar callable `imp` on element types `dtypes`:
/// its own resolution, or, where it does not take the option types given,
/// the option of its result on their value types.
pub(crate) fn resolve(imp: &dyn CallableImpl, dtypes: &[Type]) -> Result<Type> {
    let e = match imp.resolve(dtypes) {
        Ok(t) => return Ok(t),
        Err(e) => e,
    };
    match values(dtypes) {
        None => Err(e),
        Some(v) => match imp.resolve(&v) {
            Ok(r) if r.option_value().is_some() => Ok(r),
            Ok(r) => Type::option(r),
            // Neither: the error for the types as given.
            Err(_) => Err(e),
        },
    }
}

/// Builds scalar callable `imp`'s element kernel for `el`, wrapped in a
/// [`Propagate`] when missing values need it (see [`resolve`]).
///
/// # Safety
/// As [`CallableImpl::instantiate`], with `el.dst_tp` what [`resolve`]
/// gives for `el.src_tps`.
pub(crate) unsafe fn instantiate(
    imp: &dyn CallableImpl,
    mut ckb: Pin<&mut CKernelBuilder>,
    offset: usize,
    el: KernelArgs<'_>,
) -> Result<usize> {
    // Wrapped when an argument is optional and `imp` does not take the
    // types as they are (resolved only then: no option, no wrapper).
    let vals = values(el.src_tps).filter(|_| imp.resolve(el.src_tps).is_err());
    let Some(vals) = vals else {
        // SAFETY: the caller's promises; check_and_instantiate checks the
        // types.
        return unsafe { imp.check_and_instantiate(ckb, offset, el) };
    };
    let n = el.nsrc();
    if n > MAX_ARGS {
        return Err(Error::invalid_argument(format!(
            "{}: missing values propagate through at most {MAX_ARGS} arguments, not {n}",
            imp.name()
        )));
    }
    let r = imp.resolve(&vals)?;
    let want = if r.option_value().is_some() {
        r.clone()
    } else {
        Type::option(r.clone())?
    };
    if want != *el.dst_tp {
        return Err(Error::type_error(format!(
            "{} computes {want} for ({}), not {}",
            imp.name(),
            super::type_list(el.src_tps),
            el.dst_tp
        )));
    }
    el.check_counts(imp.name())?;
    let mut optional = [None; MAX_ARGS];
    for (slot, t) in optional.iter_mut().zip(el.src_tps) {
        *slot = match t.option_value().map(Type::as_builtin) {
            None => None,
            Some(Some(b)) => Some(b),
            Some(None) => {
                return Err(Error::type_error(format!(
                    "{}: missing values of {t} do not propagate yet (only options of numbers and bool)",
                    imp.name()
                )));
            }
        };
    }
    let all_numbers = imp.runs_over_missing()
        && vals.iter().all(|t| t.as_builtin().is_some())
        && r.as_builtin().is_some();
    let rule = imp.missing();
    if rule != Missing::Propagate
        && (r.as_builtin() != Some(BuiltinType::Bool)
            || n != 2
            || vals.iter().any(|t| t.as_builtin().is_none()))
    {
        return Err(Error::type_error(format!(
            "{}: Kleene logic takes two numbers and gives bool",
            imp.name()
        )));
    }
    if rule == Missing::Propagate && all_numbers {
        let flags: SmallVec<[bool; MAX_ARGS]> = optional[..n].iter().map(Option::is_some).collect();
        let inner = KernelArgs::new(&r, el.dst_meta, &vals, el.src_metas, el.req);
        // SAFETY: `offset` is free (the caller's promise); the types are
        // value types `imp` accepts (resolved above), laid out as the
        // options given (DESIGN §4).
        let fused = unsafe { imp.instantiate_propagating(ckb.as_mut(), offset, inner, &flags) };
        if let Some(end) = fused? {
            return Ok(end);
        }
    }
    let vals_builtin: [Option<BuiltinType>; MAX_ARGS] =
        std::array::from_fn(|i| vals.get(i).and_then(Type::as_builtin));
    macro_rules! build {
        ($n:literal) => {{
            let k = Propagate::<$n> {
                child: [kernel_size::<Propagate<$n>>()],
                optional: std::array::from_fn(|i| optional[i].map(Bits::of)),
                values: std::array::from_fn(|i| vals_builtin[i]),
                dst: want.clone(),
                fill: r
                    .as_builtin()
                    .map(Bits::of)
                    .filter(|_| rule == Missing::Propagate),
                all_numbers,
                rule,
            };
            // SAFETY: (1) `offset` is free (the caller's promise); the child
            // goes in the slot emplace reserves.
            unsafe { ckb.as_mut().emplace(offset, el.req, k) }?
        }};
    }
    let at = match n {
        1 => build!(1),
        2 => build!(2),
        3 => build!(3),
        _ => build!(4),
    };
    let inner = KernelArgs::new(
        &r,
        el.dst_meta,
        &vals,
        el.src_metas,
        crate::kernels::KernelRequest::Strided,
    );
    // SAFETY: `at` is the child slot emplace reserved; an option's arrmeta
    // is its value type's (DESIGN §4), so every pointer is valid arrmeta of
    // the value types; they are ones `imp` accepts (resolved above).
    unsafe { imp.instantiate(ckb, at, inner) }
}

/// Runs `$body` with `$u` the unsigned integer of `$bits`' width and `$na`
/// its NA value as one.
macro_rules! by_width {
    ($bits:expr, |$u:ident, $na:ident| $body:expr) => {{
        let all = u128::from_le_bytes($bits.na);
        // `Bits` are 1, 2, 4, 8 or 16 bytes wide, every width `by_size` has.
        match by_size!($bits.size, |$u| {
            let $na = all as $u;
            $body
        }) {
            Some(r) => r,
            None => unreachable!("Bits of {} bytes", $bits.size),
        }
    }};
}

/// A builtin type's NA as bits: its width and value, for marking and
/// writing missing elements with integer compares and stores that LLVM
/// vectorises.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Bits {
    /// Bytes: 1, 2, 4, 8 or 16.
    size: usize,
    /// The NA value's bytes (the low `size` of them).
    na: [u8; 16],
}

impl Bits {
    pub(crate) fn of(b: BuiltinType) -> Bits {
        let bytes = na::builtin_na(b).unwrap_or([0; 16]);
        Bits {
            size: b.data_size(),
            na: bytes,
        }
    }

    /// The NA test of a sentinel option's value type `value` as bits, for
    /// every type with an NA value (DESIGN §4): a builtin's NA; char's
    /// `0xFFFFFFFF`; the null `begin` pointer (the first 8 bytes) of a
    /// string, bytes or pointer. `None` for a type without one (void, and
    /// the flag-byte kinds).
    pub(crate) fn of_sentinel(value: &Type) -> Option<Bits> {
        use crate::types::TypeKind;
        match value.kind() {
            TypeKind::Builtin(b) => na::builtin_na(*b).map(|_| Bits::of(*b)),
            TypeKind::Char => Some(Bits::new(4, &na::CHAR_NA.to_le_bytes())),
            TypeKind::String | TypeKind::Bytes | TypeKind::Pointer(_) => {
                Some(Bits::new(size_of::<usize>(), &[0; 8]))
            }
            _ => None,
        }
    }

    /// The value `bytes` (1, 2, 4, 8 or 16 of them, little-endian as the
    /// data is) as the bits of one element: what [`fill_where`] writes.
    pub(crate) fn new(size: usize, bytes: &[u8]) -> Bits {
        let mut na = [0u8; 16];
        na[..bytes.len()].copy_from_slice(bytes);
        Bits { size, na }
    }

    /// Sets `mask[j]` where element `j` of `src` (`stride` bytes apart) is
    /// NA.
    ///
    /// # Safety
    /// 1. `mask.len()` elements of this width at `stride` are readable.
    pub(crate) unsafe fn mark(self, src: *const u8, stride: isize, mask: &mut [u8]) {
        // SAFETY: (1), for the width of `self`.
        by_width!(self, |U, na| unsafe { mark_as::<U>(src, stride, na, mask) })
    }

    /// Copies the `n` elements of `src` (`stride` bytes apart) that are not
    /// NA to `dst`, packed and in order; returns how many. One branch-free
    /// pass: each element is stored, and the output position moves on only
    /// past a value.
    ///
    /// # Safety
    /// 1. `n` elements of this width at `stride` are readable from `src`,
    ///    and `n` are writable, contiguous, from `dst`, apart from them.
    pub(crate) unsafe fn compact(
        self,
        src: *const u8,
        stride: isize,
        n: usize,
        dst: *mut u8,
    ) -> usize {
        // SAFETY: (1), for the width of `self`.
        by_width!(self, |U, na| unsafe {
            compact_as::<U>(src, stride, na, n, dst)
        })
    }

    /// Writes NA to element `j` of `dst` wherever `mask[j]` is set.
    ///
    /// # Safety
    /// 1. `mask.len()` elements of this width at `stride` are writable.
    unsafe fn fill(self, dst: *mut u8, stride: isize, mask: &[u8]) {
        // SAFETY: (1), for the width of `self`.
        by_width!(self, |U, na| unsafe { fill_as::<U>(dst, stride, na, mask) })
    }
}

/// Writes `dst_na` to element `j` of `dst` wherever element `j` of `src`
/// is `src_na`, and elsewhere element `j` of `from` when given (the
/// values computed into a contiguous scratch block), else leaves `dst` as
/// it is. With `from` it is one pass that reads the source and the scratch
/// and stores every output element once, which LLVM vectorises when both
/// are contiguous; in place (no `from`) the compiler may make the blend a
/// masked store, slow on some CPUs, so the hot paths give a scratch block.
///
/// # Safety
/// 1. `n` elements of `src`'s width at `sstride` are readable, and `n` of
///    `dst`'s at `dstride` writable.
/// 2. `from`, when given, points to `n` contiguous, aligned elements of
///    `dst`'s width that do not overlap `dst`.
pub(crate) unsafe fn fill_where(
    src: (*const u8, isize, Bits),
    dst: (*mut u8, isize, Bits),
    n: usize,
    from: Option<*const u8>,
) {
    by_width!(src.2, |U, sna| {
        by_width!(dst.2, |V, dna| {
            // SAFETY: (1), (2), for these widths.
            unsafe { where_as::<U, V>((src.0, src.1, sna), (dst.0, dst.1, dna), n, from) }
        })
    })
}

/// Writes `dst_na` to element `j` of `dst` wherever element `j` of `src`
/// is `src_na`, and leaves every other element as it is: a compare pass
/// over the source that gathers 64 elements' tests into one bit mask, then
/// a store at each set bit only. Missing values are usually few, so this
/// stores far less than a blend, and unlike an in-place blend it never
/// becomes a masked vector store (microcoded, and slow, on some CPUs).
///
/// # Safety
/// 1. `n` elements of `src`'s width at `sstride` are readable, and `n` of
///    `dst`'s at `dstride` writable; `dst`'s range does not overlap `src`'s.
pub(crate) unsafe fn patch_where(
    src: (*const u8, isize, Bits),
    dst: (*mut u8, isize, Bits),
    n: usize,
) {
    by_width!(src.2, |U, sna| {
        by_width!(dst.2, |V, dna| {
            #[cfg(target_arch = "x86_64")]
            if std::is_x86_feature_detected!("avx2") {
                // SAFETY: (1), for these widths; the CPU has AVX2.
                return unsafe { patch_avx2::<U, V>((src.0, src.1, sna), (dst.0, dst.1, dna), n) };
            }
            // SAFETY: (1), for these widths.
            unsafe { patch_as::<U, V>((src.0, src.1, sna), (dst.0, dst.1, dna), n) }
        })
    })
}

/// [`patch_as`] compiled for AVX2.
///
/// # Safety
/// 1. As [`patch_where`]; the CPU supports AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn patch_avx2<U: bytemuck::Pod + PartialEq, V: bytemuck::Pod>(
    src: (*const u8, isize, U),
    dst: (*mut u8, isize, V),
    n: usize,
) {
    // SAFETY: (1).
    unsafe { patch_as::<U, V>(src, dst, n) }
}

/// [`patch_where`] for source width `U` and output width `V`.
///
/// # Safety
/// As [`patch_where`].
#[inline(always)]
unsafe fn patch_as<U: bytemuck::Pod + PartialEq, V: bytemuck::Pod>(
    (src, sstride, sna): (*const u8, isize, U),
    (dst, dstride, dna): (*mut u8, isize, V),
    n: usize,
) {
    let contiguous = sstride == size_of::<U>() as isize && src.align_offset(align_of::<U>()) == 0;
    let mut done = 0;
    while done < n {
        let m = (n - done).min(64);
        let at = src.wrapping_offset(done as isize * sstride);
        let mut bits = 0u64;
        if contiguous && m == 64 {
            // SAFETY: (1): 64 contiguous, aligned, readable elements.
            let s = unsafe { &*at.cast::<[U; 64]>() };
            for (k, v) in s.iter().enumerate() {
                bits |= u64::from(*v == sna) << k;
            }
        } else {
            for k in 0..m {
                // SAFETY: (1) element done + k is readable.
                let v = unsafe {
                    at.wrapping_offset(k as isize * sstride)
                        .cast::<U>()
                        .read_unaligned()
                };
                bits |= u64::from(v == sna) << k;
            }
        }
        while bits != 0 {
            let k = (done + bits.trailing_zeros() as usize) as isize;
            // SAFETY: (1) element k < n of the output is writable.
            unsafe {
                dst.wrapping_offset(k * dstride)
                    .cast::<V>()
                    .write_unaligned(dna)
            };
            bits &= bits - 1;
        }
        done += m;
    }
}

/// Scratch room for one block of [`BLOCK`] elements of any builtin width,
/// aligned for every width; left uninitialised (a kernel call may cover a
/// single short row, and zeroing 8 KiB each time would cost more than the
/// row), and only what a kernel wrote into it is read back.
pub(crate) type Scratch = [std::mem::MaybeUninit<u128>; BLOCK];

/// A new, uninitialised [`Scratch`].
#[inline(always)]
pub(crate) fn scratch() -> Scratch {
    [std::mem::MaybeUninit::uninit(); BLOCK]
}

/// `d[j] = if s[j] == sna { dna } else { t[j] }`, with `t` the values
/// computed (or `d` itself when in place): a blend with a lane mask, not a
/// conditional store, which LLVM vectorises; built for AVX2 too and picked
/// at run time (the 64-bit lane compare needs SSE4.1, which the x86-64
/// baseline lacks), as the arithmetic loops are.
#[inline(always)]
fn blend<U: PartialEq + Copy, V: Lane>(s: &[U], sna: U, t: Option<&[V]>, d: &mut [V], dna: V) {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2, the only requirement of the AVX2 build.
        return unsafe { blend_avx2(s, sna, t, d, dna) };
    }
    blend_body(s, sna, t, d, dna)
}

/// [`blend_body`] compiled for AVX2.
///
/// # Safety
/// 1. The CPU supports AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn blend_avx2<U: PartialEq + Copy, V: Lane>(
    s: &[U],
    sna: U,
    t: Option<&[V]>,
    d: &mut [V],
    dna: V,
) {
    blend_body(s, sna, t, d, dna)
}

#[inline(always)]
fn blend_body<U: PartialEq + Copy, V: Lane>(s: &[U], sna: U, t: Option<&[V]>, d: &mut [V], dna: V) {
    match t {
        Some(t) => {
            for ((x, v), y) in d.iter_mut().zip(s).zip(t) {
                let m = V::all(*v == sna);
                *x = (*y & !m) | (dna & m);
            }
        }
        None => {
            for (x, v) in d.iter_mut().zip(s) {
                let m = V::all(*v == sna);
                *x = (*x & !m) | (dna & m);
            }
        }
    }
}

/// An unsigned integer lane of one element's width, for the branch-free
/// blends (here and in `where`).
pub(crate) trait Lane:
    bytemuck::Pod
    + std::ops::BitAnd<Output = Self>
    + std::ops::BitOr<Output = Self>
    + std::ops::Not<Output = Self>
{
    /// All ones when `b`, else zero.
    fn all(b: bool) -> Self;
}

macro_rules! lanes {
    ($($u:ty),*) => {$(
        impl Lane for $u {
            #[inline(always)]
            fn all(b: bool) -> $u {
                (b as $u).wrapping_neg()
            }
        }
    )*};
}
lanes!(u8, u16, u32, u64, u128);

/// [`fill_where`] for source width `U` and output width `V`.
///
/// # Safety
/// As [`fill_where`].
#[inline(always)]
unsafe fn where_as<U: bytemuck::Pod + PartialEq, V: Lane>(
    (src, sstride, sna): (*const u8, isize, U),
    (dst, dstride, dna): (*mut u8, isize, V),
    n: usize,
    from: Option<*const u8>,
) {
    let contiguous = sstride == size_of::<U>() as isize
        && dstride == size_of::<V>() as isize
        && src.align_offset(align_of::<U>()) == 0
        && dst.align_offset(align_of::<V>()) == 0;
    if contiguous {
        // SAFETY: (1), (2): contiguous, aligned elements; the scratch is
        // apart from the output; the output is not the source's memory for
        // a new output, and when it is (in place) each element is read
        // before it is written.
        let (s, t, d) = unsafe {
            (
                std::slice::from_raw_parts(src.cast::<U>(), n),
                from.map(|t| std::slice::from_raw_parts(t.cast::<V>(), n)),
                std::slice::from_raw_parts_mut(dst.cast::<V>(), n),
            )
        };
        blend(s, sna, t, d, dna);
    } else {
        for j in 0..n as isize {
            // SAFETY: (1), (2) element j of each is valid.
            unsafe {
                let out = dst.wrapping_offset(j * dstride).cast::<V>();
                if src
                    .wrapping_offset(j * sstride)
                    .cast::<U>()
                    .read_unaligned()
                    == sna
                {
                    out.write_unaligned(dna);
                } else if let Some(t) = from {
                    out.write_unaligned(t.cast::<V>().offset(j).read());
                }
            }
        }
    }
}

/// [`Bits::mark`] for width `U`: a slice loop when the elements are
/// contiguous and aligned, else a strided one.
///
/// # Safety
/// As [`Bits::mark`].
#[inline(always)]
unsafe fn mark_as<U: bytemuck::Pod + PartialEq>(
    src: *const u8,
    stride: isize,
    na: U,
    mask: &mut [u8],
) {
    if stride == size_of::<U>() as isize && src.align_offset(align_of::<U>()) == 0 {
        // SAFETY: (1): contiguous, aligned, readable elements.
        let s = unsafe { std::slice::from_raw_parts(src.cast::<U>(), mask.len()) };
        for (m, v) in mask.iter_mut().zip(s) {
            *m |= (*v == na) as u8;
        }
    } else {
        for (j, m) in mask.iter_mut().enumerate() {
            // SAFETY: (1) element j is readable.
            let v = unsafe {
                src.wrapping_offset(j as isize * stride)
                    .cast::<U>()
                    .read_unaligned()
            };
            *m |= (v == na) as u8;
        }
    }
}

/// [`Bits::compact`] for width `U`.
///
/// # Safety
/// As [`Bits::compact`].
#[inline(always)]
unsafe fn compact_as<U: bytemuck::Pod + PartialEq>(
    src: *const u8,
    stride: isize,
    na: U,
    n: usize,
    dst: *mut u8,
) -> usize {
    let out = dst.cast::<U>();
    let mut k = 0usize;
    for j in 0..n as isize {
        // SAFETY: (1) element j is readable; output slot k <= j is
        // writable (k only counts elements already read).
        unsafe {
            let v = src.wrapping_offset(j * stride).cast::<U>().read_unaligned();
            out.add(k).write_unaligned(v);
            k += (v != na) as usize;
        }
    }
    k
}

/// [`Bits::fill`] for width `U`.
///
/// # Safety
/// As [`Bits::fill`].
#[inline(always)]
unsafe fn fill_as<U: bytemuck::Pod>(dst: *mut u8, stride: isize, na: U, mask: &[u8]) {
    if stride == size_of::<U>() as isize && dst.align_offset(align_of::<U>()) == 0 {
        // SAFETY: (1): contiguous, aligned, writable elements.
        let d = unsafe { std::slice::from_raw_parts_mut(dst.cast::<U>(), mask.len()) };
        for (x, &m) in d.iter_mut().zip(mask) {
            *x = if m != 0 { na } else { *x };
        }
    } else {
        for (j, &m) in mask.iter().enumerate() {
            if m != 0 {
                // SAFETY: (1) element j is writable.
                unsafe {
                    dst.wrapping_offset(j as isize * stride)
                        .cast::<U>()
                        .write_unaligned(na)
                };
            }
        }
    }
}

/// The wrapper kernel: marks missing elements, runs the callable's own
/// kernel (its one child) and writes NA (or the Kleene result) where an
/// argument was missing.
struct Propagate<const N: usize> {
    child: [usize; 1],
    /// Each argument's NA bits when it is optional.
    optional: [Option<Bits>; N],
    /// Each argument's value type when it is a builtin (for Kleene logic).
    values: [Option<BuiltinType>; N],
    /// The output element type, an option.
    dst: Type,
    /// The output's NA bits, when it is a builtin and missing is missing.
    fill: Option<Bits>,
    /// Every argument and the result are builtin numbers: the child may
    /// run over missing elements (their values are plain data).
    all_numbers: bool,
    rule: Missing,
}

/// The truthiness of a value of builtin type `b`.
///
/// # Safety
/// 1. The value is readable at `src`.
unsafe fn truthy(b: BuiltinType, src: *const u8) -> bool {
    // SAFETY: (1).
    with_native!(b, |T| unsafe { T::load(src) }.truthy()).unwrap_or(false)
}

impl<const N: usize> Propagate<N> {
    /// Runs the child over the present runs of `mask` in chunk `run`.
    ///
    /// # Safety
    /// As [`Kernel::strided`] for `run`, `k` this kernel's handle.
    unsafe fn present_runs(&self, k: KernelRef<'_>, run: Strided<'_>, mask: &[u8]) -> Result<()> {
        // SAFETY: the child slot holds the callable's own kernel, built for
        // Strided.
        let child = unsafe { k.child(self.child[0]) };
        let mut j = 0;
        while j < mask.len() {
            if mask[j] != 0 {
                j += 1;
                continue;
            }
            let start = j;
            while j < mask.len() && mask[j] == 0 {
                j += 1;
            }
            let srcs: [*const u8; N] = std::array::from_fn(|i| {
                run.src[i].wrapping_offset(start as isize * run.src_stride[i])
            });
            // SAFETY: elements [start, j) of every range are valid (the
            // caller's promise for the chunk).
            unsafe {
                child.call_strided(
                    run.dst.wrapping_offset(start as isize * run.dst_stride),
                    run.dst_stride,
                    &srcs,
                    run.src_stride,
                    j - start,
                )
            }?;
        }
        Ok(())
    }

    /// Writes the result of the missing element `j` of chunk `run`, one
    /// element at a time (Kleene logic, and results that are not builtin).
    ///
    /// # Safety
    /// 1. Element `j` of every range of `run` is valid.
    unsafe fn write_missing(&self, run: &Strided<'_>, j: usize) -> Result<()> {
        let dst = run.dst.wrapping_offset(j as isize * run.dst_stride);
        let at = |i: usize| run.src[i].wrapping_offset(j as isize * run.src_stride[i]);
        if self.rule != Missing::Propagate {
            let mut known = None;
            for i in 0..N {
                let Some(b) = self.values[i] else {
                    continue;
                };
                let mut missing = [0u8];
                if let Some(bits) = self.optional[i] {
                    // SAFETY: (1) element j of source i is readable.
                    unsafe { bits.mark(at(i), 0, &mut missing) };
                }
                if missing[0] == 0 {
                    // SAFETY: (1).
                    let t = unsafe { truthy(b, at(i)) };
                    match (self.rule, t) {
                        (Missing::KleeneAnd, false) => known = Some(false),
                        (Missing::KleeneOr, true) => known = Some(true),
                        _ => {}
                    }
                }
            }
            if let Some(v) = known {
                // SAFETY: (1) the output element is a bool byte.
                unsafe { dst.write(v as u8) };
                return Ok(());
            }
        }
        let value = self.dst.option_value().unwrap_or(&self.dst);
        // SAFETY: (1) the output element is writable data of the value type.
        unsafe { na::write_na(value, dst) }
    }
}

impl<const N: usize> Kernel for Propagate<N> {
    const NSRC: usize = N;

    unsafe fn single(&self, k: KernelRef<'_>, dst: *mut u8, src: &[*const u8]) -> Result<()> {
        // SAFETY: one element is a strided call of count 1.
        unsafe { self.strided(k, Strided::one(dst, src, &[0; N])) }
    }

    unsafe fn strided(&self, k: KernelRef<'_>, run: Strided<'_>) -> Result<()> {
        // SAFETY: the child slot holds the callable's own kernel, built for
        // Strided.
        let child = unsafe { k.child(self.child[0]) };
        if let (Some(fill), true) = (self.fill, self.all_numbers)
            && !self.output_overlaps_an_option(&run)
        {
            // Numbers, missing is missing: the callable's kernel over a
            // block, then NA wherever an argument is NA, while the block is
            // in cache. Should the kernel fail, the masked path finds out
            // whether a present element did.
            if !self.output_overlaps_a_source(&run) {
                // The output is apart from every argument: the kernel
                // writes it directly, then NA goes where an argument was
                // missing (read again while the block is in cache). Should
                // the kernel fail, the masked path redoes the block; it
                // overwrote no argument.
                return by_windows::<N>(&run, BLOCK, |block| {
                    let (srcs, n) = (block.src, block.count);
                    // SAFETY: the block's ranges are valid (Kernel::strided
                    // 1).
                    let ran = unsafe {
                        child.call_strided(block.dst, block.dst_stride, srcs, block.src_stride, n)
                    };
                    if ran.is_err() {
                        // SAFETY: as above.
                        return unsafe { self.masked(k, block) };
                    }
                    for (i, bits) in self.optional.iter().enumerate() {
                        if let Some(bits) = bits {
                            // SAFETY: the block's ranges are valid and the
                            // output overlaps no argument.
                            unsafe {
                                patch_where(
                                    (srcs[i], run.src_stride[i], *bits),
                                    (block.dst, block.dst_stride, fill),
                                    n,
                                )
                            };
                        }
                    }
                    Ok(())
                });
            }
            let mut scratch = scratch();
            return by_windows::<N>(&run, BLOCK, |block| {
                let (srcs, n) = (block.src, block.count);
                // The kernel writes the block into scratch; the last
                // optional argument's pass then stores each output element
                // once (NA or the value), earlier ones (when several are
                // optional) mark the scratch in place.
                let tmp = scratch.as_mut_ptr().cast::<u8>();
                let width = fill.size as isize;
                // SAFETY: the block's sources are valid (Kernel::strided 1);
                // the scratch has room for `n <= BLOCK` elements of the
                // output's width, contiguous.
                let ran = unsafe { child.call_strided(tmp, width, srcs, block.src_stride, n) };
                if ran.is_ok() {
                    let last = self.optional.iter().rposition(Option::is_some);
                    for (i, bits) in self.optional.iter().enumerate() {
                        if let Some(bits) = bits {
                            let src = (srcs[i], run.src_stride[i], *bits);
                            if Some(i) == last {
                                // SAFETY: the block's ranges are valid; the
                                // output overlaps no optional source and
                                // not the scratch, which holds n values.
                                unsafe {
                                    fill_where(
                                        src,
                                        (block.dst, block.dst_stride, fill),
                                        n,
                                        Some(tmp),
                                    )
                                };
                            } else {
                                // SAFETY: the scratch holds n values of the
                                // output's width, contiguous.
                                unsafe { fill_where(src, (tmp, width, fill), n, None) };
                            }
                        }
                    }
                } else {
                    // SAFETY: as above.
                    unsafe { self.masked(k, block) }?;
                }
                Ok(())
            });
        }
        // SAFETY: the caller's promises.
        unsafe { self.masked(k, run) }
    }

    fn child_offsets(&self) -> &[usize] {
        &self.child
    }
}

impl<const N: usize> Propagate<N> {
    /// `true` when the output's range overlaps an optional argument's (an
    /// in-place call): the missing elements must then be marked before
    /// the kernel overwrites them.
    fn output_overlaps_an_option(&self, run: &Strided<'_>) -> bool {
        let out = span(
            run.dst,
            run.dst_stride,
            run.count,
            self.fill.map_or(16, |b| b.size),
        );
        self.optional.iter().enumerate().any(|(i, bits)| {
            bits.is_some_and(|b| {
                spans_overlap(out, span(run.src[i], run.src_stride[i], run.count, b.size))
            })
        })
    }

    /// `true` when the output's range overlaps any argument's.
    fn output_overlaps_a_source(&self, run: &Strided<'_>) -> bool {
        let out_size = self.fill.map_or(16, |b| b.size);
        (0..N).any(|i| {
            let size = self.optional[i].map_or(16, |b| b.size);
            spans_overlap(
                span(run.dst, run.dst_stride, run.count, out_size),
                span(run.src[i], run.src_stride[i], run.count, size),
            )
        })
    }

    /// The general path: chunk by chunk, mark the missing elements, run
    /// the kernel (over the whole chunk of numbers, or its present runs),
    /// then write the missing results.
    ///
    /// # Safety
    /// As [`Kernel::strided`].
    unsafe fn masked(&self, k: KernelRef<'_>, run: Strided<'_>) -> Result<()> {
        // SAFETY: the child slot holds the callable's own kernel, built for
        // Strided.
        let child = unsafe { k.child(self.child[0]) };
        let mut mask = [0u8; CHUNK];
        by_windows::<N>(&run, CHUNK, |chunk| {
            let (srcs, n) = (chunk.src, chunk.count);
            let mask = &mut mask[..n];
            mask.fill(0);
            for (i, bits) in self.optional.iter().enumerate() {
                if let Some(bits) = bits {
                    // SAFETY: `n` elements of source i are readable
                    // (Kernel::strided 1).
                    unsafe { bits.mark(srcs[i], run.src_stride[i], mask) };
                }
            }
            let any = mask.iter().fold(0u8, |a, &m| a | m) != 0;
            // SAFETY: the chunk's ranges are valid (Kernel::strided 1).
            let whole = || unsafe {
                child.call_strided(chunk.dst, chunk.dst_stride, srcs, chunk.src_stride, n)
            };
            if !any {
                whole()?;
            } else if !(self.all_numbers && whole().is_ok()) {
                // SAFETY: as above, for the present runs.
                unsafe { self.present_runs(k, chunk, mask) }?;
            }
            if any {
                if let Some(bits) = self.fill {
                    // SAFETY: the chunk's `n` output elements are writable.
                    unsafe { bits.fill(chunk.dst, chunk.dst_stride, mask) };
                } else {
                    for j in (0..n).filter(|&j| mask[j] != 0) {
                        // SAFETY: element j of the chunk is valid.
                        unsafe { self.write_missing(&chunk, j) }?;
                    }
                }
            }
            Ok(())
        })
    }
}

/// The bytes `[lo, hi)` that `count` elements of `size` bytes, `stride`
/// apart from `p`, span (an element of an unknown size counts as 16).
fn span(p: *const u8, stride: isize, count: usize, size: usize) -> (usize, usize) {
    let last = p.wrapping_offset(stride.wrapping_mul(count.saturating_sub(1) as isize));
    let (lo, hi) = if stride < 0 { (last, p) } else { (p, last) };
    (lo as usize, (hi as usize).saturating_add(size))
}

/// Whether two byte spans share a byte.
fn spans_overlap(a: (usize, usize), b: (usize, usize)) -> bool {
    a.0 < b.1 && b.0 < a.1
}

/// Calls `f` on `run` cut into windows of at most `size` elements, each a
/// run of its own (its `N` sources moved to the window's start); stops at
/// the first error.
#[inline(always)]
fn by_windows<const N: usize>(
    run: &Strided<'_>,
    size: usize,
    mut f: impl FnMut(Strided<'_>) -> Result<()>,
) -> Result<()> {
    let mut done = 0;
    while done < run.count {
        let n = (run.count - done).min(size);
        let at = done as isize;
        let srcs: [*const u8; N] =
            std::array::from_fn(|i| run.src[i].wrapping_offset(at * run.src_stride[i]));
        f(Strided {
            dst: run.dst.wrapping_offset(at * run.dst_stride),
            src: &srcs,
            count: n,
            ..*run
        })?;
        done += n;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `patch_where` against a plain loop: every length up to past two
    /// masks, contiguous and strided sources and outputs, 8- and 4-byte
    /// elements.
    #[test]
    fn patch_where_writes_na_exactly_where_the_source_is_na() {
        let f64_bits = Bits::of(BuiltinType::Float64);
        let i32_bits = Bits::of(BuiltinType::Int32);
        let (f64_na, i32_na) = (<f64 as NativeType>::NA, <i32 as NativeType>::NA);
        for n in (0..200).chain([511, 512, 513, 4097]) {
            for (sstep, dstep) in [(1usize, 1usize), (2, 1), (1, 3)] {
                let src: Vec<f64> = (0..n * sstep)
                    .map(|i| {
                        if (i * 7919) % 13 < 2 {
                            f64_na
                        } else {
                            i as f64
                        }
                    })
                    .collect();
                let mut dst = vec![1.5f64; n * dstep];
                let mut want = dst.clone();
                for j in 0..n {
                    if src[j * sstep].to_bits() == f64_na.to_bits() {
                        want[j * dstep] = f64_na;
                    }
                }
                // SAFETY: n elements at these strides are in the vectors,
                // which do not overlap.
                unsafe {
                    patch_where(
                        (src.as_ptr().cast(), 8 * sstep as isize, f64_bits),
                        (dst.as_mut_ptr().cast(), 8 * dstep as isize, f64_bits),
                        n,
                    )
                };
                let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&dst), bits(&want), "n {n}, steps {sstep} {dstep}");
                // A float64 source into an int32 output.
                let mut out = vec![5i32; n];
                // SAFETY: as above.
                unsafe {
                    patch_where(
                        (src.as_ptr().cast(), 8 * sstep as isize, f64_bits),
                        (out.as_mut_ptr().cast(), 4, i32_bits),
                        n,
                    )
                };
                for (j, x) in out.iter().enumerate() {
                    let missing = src[j * sstep].to_bits() == f64_na.to_bits();
                    assert_eq!(*x, if missing { i32_na } else { 5 }, "n {n} at {j}");
                }
            }
        }
    }
}
