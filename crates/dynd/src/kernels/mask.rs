//! Mask and run primitives that kernels of several families share (DESIGN
//! §7: "mask and run primitives" live in `kernels/`): the NA bits of an
//! element type ([`Bits`]) and marking, compacting and filling by a byte
//! mask; writing NA (or a fill) where a mask says ([`fill_where`],
//! [`patch_where`]); lane blends; and [`by_size`], which runs generic code
//! on the unsigned integer of an element's width. Missing-value
//! propagation (`callable::missing`), `where`, `take` and the null
//! functions are built on them.

use crate::for_each_native;
use crate::layout::na;
use crate::types::NativeType;
use crate::types::{BuiltinType, Type};
use num_complex::Complex;

/// Elements per chunk of the missing-value mask.
pub const CHUNK: usize = 256;

/// Elements per block of the fast path (the kernel, then the NA fill, while
/// the block is in cache).
pub(crate) const BLOCK: usize = 512;

/// Runs `f` with `$U` the unsigned integer of `$size` bytes (1, 2, 4, 8 or
/// 16); `None` for other sizes.
macro_rules! by_size {
    ($size:expr, |$U:ident| $body:expr) => {
        $crate::kernels::mask::by_size!(@widths $size, |$U| $body;
            1 => u8, 2 => u16, 4 => u32, 8 => u64, 16 => u128)
    };
    (@widths $size:expr, |$U:ident| $body:expr; $($n:literal => $t:ty),*) => {
        match $size {
            $($n => {
                type $U = $t;
                Some($body)
            })*
            _ => None,
        }
    };
}
pub(crate) use by_size;

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
    pub(crate) size: usize,
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
    pub(crate) unsafe fn fill(self, dst: *mut u8, stride: isize, mask: &[u8]) {
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

/// Truthiness: what the logical functions see of a number.
pub(crate) trait Truthy: NativeType {
    /// `true` unless the value is zero (or false).
    fn truthy(self) -> bool;
}

macro_rules! truthy_real {
    ($zero:expr; $($t:ty),*) => {$(
        impl Truthy for $t {
            #[inline(always)]
            fn truthy(self) -> bool { self != $zero }
        }
    )*};
}
for_each_native!(signed unsigned => truthy_real!(0;));
for_each_native!(ieee => truthy_real!(0.0;));

impl Truthy for bool {
    #[inline(always)]
    fn truthy(self) -> bool {
        self
    }
}
impl Truthy for crate::types::B8 {
    #[inline(always)]
    fn truthy(self) -> bool {
        self.get()
    }
}
macro_rules! truthy_half {
    ($($t:ty),*) => {$(
        impl Truthy for $t {
            #[inline(always)]
            fn truthy(self) -> bool {
                // Anything but +0 and -0 (NaN included).
                self.to_bits() & 0x7fff != 0
            }
        }
    )*};
}
for_each_native!(half => truthy_half);
impl<F: Default + PartialEq> Truthy for Complex<F>
where
    Complex<F>: NativeType,
{
    #[inline(always)]
    fn truthy(self) -> bool {
        (self.re != F::default()) | (self.im != F::default())
    }
}
