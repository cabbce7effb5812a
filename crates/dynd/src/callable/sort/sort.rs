//! The row kernels of `sort` and `argsort`: builtin numbers on ordered
//! unsigned keys (insertion sort for short rows, the standard library's
//! unstable sort for long ones, a vectorised quicksort for long rows of
//! 64-bit keys: [`super::simd`]), and strings and bytes by their bytes.

use super::sample::{Scratch, Slot, argsort_split};
use super::split::{SPLIT_SORT_MIN, sort_split};
use super::{Rows, SortOptions};
use crate::callable::rows::copy_kernel;
use crate::error::{Error, Result};
use crate::exec::{self, Shared, TASK_ELEMENTS};
use crate::kernels::{CKernelBuilder, Kernel, KernelRef, KernelRequest, Strided, kernel_size};
use crate::layout::StringData;
use crate::types::{NativeType, Type, TypeKind};
use crate::{for_each_native, with_native};
use std::marker::PhantomData;
use std::pin::Pin;

/// Rows up to this long are insertion-sorted.
const INSERTION_MAX: usize = 24;

/// `true` for the element types `sort` orders (options aside).
pub(super) fn sortable(value: &Type) -> bool {
    match value.kind() {
        TypeKind::String | TypeKind::Bytes => true,
        _ => value
            .as_builtin()
            .and_then(|b| with_native!(b, bool signed unsigned half ieee => |T| ()))
            .is_some(),
    }
}

// ------------------------------------------------------------------- keys

/// An unsigned key: implemented for the unsigned integers alone (the
/// argsort's scratch pairs rely on it: any bytes are a key).
pub(super) trait Radix: Copy + Ord + Default + Send + Sync + 'static {
    /// The key that orders the other way.
    fn flip(self) -> Self;
    /// Sorts a long run of keys ascending.
    fn sort_long(v: &mut [Self]) {
        v.sort_unstable();
    }
    /// Sorts a long run of keys on `threads` threads its own way, or
    /// returns `false` having done nothing (then [`sort_split`] does it).
    fn sort_threads(v: &mut [Self], threads: usize) -> bool {
        let _ = (v, threads);
        false
    }
}

macro_rules! radix {
    ($($u:ty),*) => {$(
        impl Radix for $u {
            #[inline(always)]
            fn flip(self) -> Self {
                !self
            }
        }
    )*};
}
radix!(u8, u16, u32, u128);

impl Radix for u64 {
    #[inline(always)]
    fn flip(self) -> Self {
        !self
    }
    fn sort_long(v: &mut [Self]) {
        super::simd::sort_u64(v);
    }
    fn sort_threads(v: &mut [Self], threads: usize) -> bool {
        super::simd::sort_u64_split(v, threads)
    }
}

/// A builtin number as an unsigned key that orders as the values do.
pub(super) trait SortKey: NativeType {
    /// The key.
    type U: Radix;
    /// The key of a (non-NaN) value; a bijection except for bool.
    fn key(r: Self::Raw) -> Self::U;
    /// The value of a key.
    fn unkey(u: Self::U) -> Self::Raw;
    /// `true` for a NaN.
    #[inline(always)]
    fn is_nan(r: Self::Raw) -> bool {
        let _ = r;
        false
    }
    /// `true` for the NA value, bit for bit.
    #[inline(always)]
    fn is_na(r: Self::Raw) -> bool {
        bytemuck::bytes_of(&r) == bytemuck::bytes_of(&Self::NA)
    }
}

macro_rules! unsigned_key {
    ($($t:ty),*) => {$(
        impl SortKey for $t {
            type U = $t;
            #[inline(always)]
            fn key(r: $t) -> $t { r }
            #[inline(always)]
            fn unkey(u: $t) -> $t { u }
        }
    )*};
}
for_each_native!(unsigned => unsigned_key);

macro_rules! signed_key {
    ($($t:ty => $u:ty),*) => {$(
        impl SortKey for $t {
            type U = $u;
            #[inline(always)]
            fn key(r: $t) -> $u { (r as $u) ^ (1 << (<$u>::BITS - 1)) }
            #[inline(always)]
            fn unkey(u: $u) -> $t { (u ^ (1 << (<$u>::BITS - 1))) as $t }
        }
    )*};
}
signed_key!(i8 => u8, i16 => u16, i32 => u32, i64 => u64, i128 => u128);

/// Floats: a set sign bit flips every bit, a clear one sets the sign bit
/// (IEEE total order on the bits).
macro_rules! float_key {
    ($($t:ty => $u:ty, $to:ident, $from:ident, $nan:expr;)*) => {$(
        impl SortKey for $t {
            type U = $u;
            #[inline(always)]
            fn key(r: $t) -> $u {
                let b = r.$to();
                let sign = 1 << (<$u>::BITS - 1);
                if b & sign != 0 { !b } else { b | sign }
            }
            #[inline(always)]
            fn unkey(u: $u) -> $t {
                let sign = 1 << (<$u>::BITS - 1);
                <$t>::$from(if u & sign != 0 { u & !sign } else { !u })
            }
            #[inline(always)]
            fn is_nan(r: $t) -> bool {
                let b = r.$to();
                (b & !(1 << (<$u>::BITS - 1))) > $nan
            }
            #[inline(always)]
            fn is_na(r: $t) -> bool {
                r.$to() == <$t as NativeType>::NA.$to()
            }
        }
    )*};
}
float_key!(
    f64 => u64, to_bits, from_bits, 0x7ff0_0000_0000_0000u64;
    f32 => u32, to_bits, from_bits, 0x7f80_0000u32;
    half::f16 => u16, to_bits, from_bits, 0x7c00u16;
    half::bf16 => u16, to_bits, from_bits, 0x7f80u16;
);

impl SortKey for bool {
    type U = u8;
    #[inline(always)]
    fn key(r: crate::types::B8) -> u8 {
        (r.0 != 0) as u8
    }
    #[inline(always)]
    fn unkey(u: u8) -> crate::types::B8 {
        crate::types::B8(u)
    }
}

// ------------------------------------------------------------- the sorts

/// Sorts `(key, position)` pairs by key, stably: the positions are
/// distinct, so an unstable sort of the whole pairs is a stable sort by
/// key (and the fastest measured here: the standard library's
/// pattern-defeating quicksort beat an LSD radix sort on 10M keys).
pub(super) fn stable_sort_pairs<U: Radix>(v: &mut [(U, usize)]) {
    if v.len() <= INSERTION_MAX {
        insertion_sort(v, |a, b| a.0 < b.0);
    } else {
        sort_split(v, |p| p.sort_unstable());
    }
}

/// Sorts keys ascending (equal keys being equal values, order among them
/// does not matter).
pub(super) fn sort_keys<U: Radix>(v: &mut [U]) {
    if v.len() <= INSERTION_MAX {
        insertion_sort(v, |a, b| a < b);
    } else if v.len() < SPLIT_SORT_MIN || !U::sort_threads(v, exec::num_threads()) {
        sort_split(v, U::sort_long);
    }
}

/// Stable insertion sort by `less`.
#[inline]
fn insertion_sort<E: Copy>(v: &mut [E], less: impl Fn(&E, &E) -> bool) {
    for i in 1..v.len() {
        let x = v[i];
        let mut j = i;
        while j > 0 && less(&x, &v[j - 1]) {
            v[j] = v[j - 1];
            j -= 1;
        }
        v[j] = x;
    }
}

// --------------------------------------------------------- numbers' kernel

/// One row of `sort` or `argsort` over builtin numbers `T` (or `?T`).
struct NumKernel<T> {
    rows: Rows,
    /// argsort (int64 positions) rather than sort.
    arg: bool,
    /// The elements are `?T`.
    opt: bool,
    descending: bool,
    _t: PhantomData<fn() -> T>,
}

/// Where an element sorts: values by key, then NaNs, then missing.
#[derive(Clone, Copy, PartialEq)]
enum Class {
    Value,
    NaN,
    Missing,
}

impl<T: SortKey> NumKernel<T> {
    #[inline(always)]
    fn class(&self, r: T::Raw) -> Class {
        if self.opt && T::is_na(r) {
            Class::Missing
        } else if T::is_nan(r) {
            Class::NaN
        } else {
            Class::Value
        }
    }

    /// One pass over a row of `n` elements, `load(j)` reading element j:
    /// `value(j, r)` for each value (neither NaN nor missing); returns how
    /// many are NaN and how many missing.
    #[inline(always)]
    fn classify(
        &self,
        n: usize,
        load: impl Fn(usize) -> T::Raw,
        mut value: impl FnMut(usize, T::Raw),
    ) -> (usize, usize) {
        let (mut nans, mut missing) = (0, 0);
        for j in 0..n {
            let r = load(j);
            match self.class(r) {
                Class::Missing => missing += 1,
                Class::NaN => nans += 1,
                Class::Value => value(j, r),
            }
        }
        (nans, missing)
    }

    /// `sort`: the keys of the row's `n` elements from `src` into `keys`,
    /// sorted. Returns how many are present (the rest, missing, get no
    /// key: the caller writes NA there, as a bool's key would not keep it).
    ///
    /// # Safety
    /// 1. `n` elements `stride` apart from `src` are readable.
    unsafe fn sort_into(
        &self,
        src: *const u8,
        n: usize,
        stride: isize,
        keys: &mut [T::U],
    ) -> usize {
        let at = |j: usize| src.wrapping_offset(j as isize * stride);
        // SAFETY: (1) for each j < n.
        let load = |j: usize| unsafe { at(j).cast::<T::Raw>().read_unaligned() };
        // SAFETY: (1).
        if unsafe { self.keys_split((src, n, stride), keys) } {
            sort_keys(&mut keys[..n]);
            if self.descending {
                keys[..n].reverse();
            }
            return n;
        }
        let mut m = 0;
        let (nans, missing) = self.classify(n, load, |_, r| {
            keys[m] = T::key(r);
            m += 1;
        });
        if nans > 0 {
            let mut k = m;
            for j in 0..n {
                let r = load(j);
                if self.class(r) == Class::NaN {
                    keys[k] = T::key(r);
                    k += 1;
                }
            }
        }
        debug_assert_eq!(m + nans + missing, n);
        sort_keys(&mut keys[..m]);
        if self.descending {
            keys[..m].reverse();
        }
        m + nans
    }

    /// A long row's keys into `keys` by position, in pieces on the
    /// executor's threads: `true` when every element was a value (neither
    /// NaN nor missing), and `false` when the row is short, there is one
    /// thread, or some element was not a value (the serial pass then
    /// places those last).
    ///
    /// # Safety
    /// 1. `n` elements `stride` apart from `src` are readable (`row` is
    ///    `(src, n, stride)`).
    unsafe fn keys_split(&self, row: (*const u8, usize, isize), keys: &mut [T::U]) -> bool {
        let (src, n, stride) = row;
        if n < SPLIT_SORT_MIN || exec::num_threads() < 2 {
            return false;
        }
        let (src, out) = (Shared(src), Shared(keys.as_mut_ptr()));
        let all_values = exec::flat(n, TASK_ELEMENTS, |s, c| {
            for j in s..s + c {
                // SAFETY: (1) j < n; keys has room for n, and each piece
                // writes only its own positions.
                let r = unsafe {
                    src.get()
                        .wrapping_offset(j as isize * stride)
                        .cast::<T::Raw>()
                        .read_unaligned()
                };
                if self.class(r) != Class::Value {
                    return Err(Error::invalid_argument("not a value"));
                }
                // SAFETY: as above.
                unsafe { out.get().add(j).write(T::key(r)) };
            }
            Ok(())
        });
        all_values.is_ok()
    }

    /// `argsort`: the row's positions in order into `out`.
    ///
    /// # Safety
    /// 1. `n` elements `stride` apart from `src` are readable.
    /// 2. `n` int64 `out_stride` apart from `out` are writable.
    unsafe fn argsort_into(
        &self,
        src: *const u8,
        n: usize,
        stride: isize,
        out: *mut u8,
        out_stride: isize,
    ) -> Result<()> {
        let at = |j: usize| src.wrapping_offset(j as isize * stride);
        // SAFETY: (1) for each j < n.
        let load = |j: usize| unsafe { at(j).cast::<T::Raw>().read_unaligned() };
        if n >= SPLIT_SORT_MIN && exec::num_threads() > 1 {
            let (src, out) = (Shared(src), Shared(out));
            let slot = |j: usize| {
                // SAFETY: (1) j < n.
                let r = unsafe {
                    src.get()
                        .wrapping_offset(j as isize * stride)
                        .cast::<T::Raw>()
                        .read_unaligned()
                };
                match self.class(r) {
                    Class::Value => {
                        let k = T::key(r);
                        Slot::Value(if self.descending { k.flip() } else { k })
                    }
                    Class::NaN => Slot::NaN,
                    Class::Missing => Slot::Missing,
                }
            };
            let put = |w: usize, j: usize| {
                // SAFETY: (2) w < n; each w is written once, by one task.
                unsafe {
                    out.get()
                        .wrapping_offset(w as isize * out_stride)
                        .cast::<i64>()
                        .write_unaligned(j as i64)
                }
            };
            return argsort_split(n, slot, put, stable_sort_pairs);
        }
        // A long row's pairs come from dynd's buffers (no page fault per
        // 4 KiB of a fresh allocation on every call), a short row's from
        // the heap.
        let (mut long, mut short);
        let pairs: &mut [(T::U, usize)] = if n >= SPLIT_SORT_MIN {
            long = Scratch::new(n)?;
            long.as_mut_slice()
        } else {
            short = vec![(T::U::default(), 0); n];
            &mut short
        };
        let mut m = 0usize;
        let (nans, missing) = self.classify(n, load, |j, r| {
            let k = T::key(r);
            pairs[m] = (if self.descending { k.flip() } else { k }, j);
            m += 1;
        });
        let pairs = &mut pairs[..m];
        stable_sort_pairs(pairs);
        let mut w = 0usize;
        let mut put = |j: usize| {
            // SAFETY: (2) w < n.
            unsafe {
                out.wrapping_offset(w as isize * out_stride)
                    .cast::<i64>()
                    .write_unaligned(j as i64)
            };
            w += 1;
        };
        for &(_, j) in pairs.iter() {
            put(j);
        }
        if nans > 0 {
            for j in 0..n {
                let r = load(j);
                if self.class(r) == Class::NaN {
                    put(j);
                }
            }
        }
        if missing > 0 {
            for j in 0..n {
                if T::is_na(load(j)) {
                    put(j);
                }
            }
        }
        Ok(())
    }
}

impl<T: SortKey> Kernel for NumKernel<T> {
    const NSRC: usize = 1;

    unsafe fn single(&self, k: KernelRef<'_>, dst: *mut u8, src: &[*const u8]) -> Result<()> {
        // SAFETY: one row is a strided run of one (Kernel::single 1).
        unsafe { self.strided(k, Strided::one(dst, src, &[0])) }
    }

    unsafe fn strided(&self, _k: KernelRef<'_>, run: Strided<'_>) -> Result<()> {
        let name = if self.arg { "argsort" } else { "sort" };
        // SAFETY: (Kernel::strided 1) a valid run; each row is sorted into
        // its opened output row.
        unsafe {
            self.rows.each_row(name, &run, |row, out, out_stride| {
                self.row(row, out, out_stride)
            })
        }
    }
}

impl<T: SortKey> NumKernel<T> {
    /// Sorts (or argsorts) one row into its output row.
    ///
    /// # Safety
    /// 1. The row's `n` elements (`(first, n, stride)`) are readable and
    ///    `n` outputs `out_stride` apart from `out` writable (an opened
    ///    output row).
    unsafe fn row(
        &self,
        (first, n, stride): (*const u8, usize, isize),
        out: *mut u8,
        out_stride: isize,
    ) -> Result<()> {
        if self.arg {
            // SAFETY: the row's n elements are readable, the output row's
            // n int64 writable.
            return unsafe { self.argsort_into(first, n, stride, out, out_stride) };
        }
        let size = size_of::<T::Raw>();
        let in_place = out_stride == size as isize && out.cast::<T::U>().is_aligned();
        let mut scratch = Vec::new();
        let keys: &mut [T::U] = if in_place {
            // SAFETY: n contiguous, aligned outputs of the key's size (every
            // key type has the size and alignment of its raw type), apart
            // from the source (a new output); any bits are a key.
            unsafe { std::slice::from_raw_parts_mut(out.cast::<T::U>(), n) }
        } else {
            scratch.resize(n, T::U::default());
            &mut scratch
        };
        // SAFETY: the row's n elements are readable; `keys` has room for n.
        let present = unsafe { self.sort_into(first, n, stride, keys) };
        let (keys, out) = (Shared(keys.as_ptr()), Shared(out));
        let pieces = if n >= SPLIT_SORT_MIN {
            TASK_ELEMENTS
        } else {
            n
        };
        exec::flat(n, pieces, |s, c| {
            for j in s..s + c {
                // SAFETY: key j of n; read before output j, which it may
                // share bytes with (in place), is written.
                let k = unsafe { keys.get().add(j).read() };
                let v = if j < present { T::unkey(k) } else { T::NA };
                // SAFETY: output j is writable (n of them at out_stride),
                // each piece writing its own.
                unsafe {
                    out.get()
                        .wrapping_offset(j as isize * out_stride)
                        .cast::<T::Raw>()
                        .write_unaligned(v)
                };
            }
            Ok(())
        })
    }
}

// ----------------------------------------------------------- text's kernel

/// One row of `sort` or `argsort` over strings or bytes (or options of
/// them): sorted by their bytes; `sort` copies the elements through its
/// child (an assignment).
struct TextKernel {
    rows: Rows,
    arg: bool,
    opt: bool,
    descending: bool,
    child: [usize; 1],
}

/// The bytes of the string or bytes at `p`; `None` when missing (a null
/// `begin`, in an option).
///
/// # Safety
/// 1. `p` is a readable string or bytes element whose bytes live while the
///    slice is used.
unsafe fn text<'a>(p: *const u8, opt: bool) -> Option<&'a [u8]> {
    // SAFETY: (1).
    let s: StringData = unsafe { p.cast::<StringData>().read_unaligned() };
    if s.begin.is_null() {
        return if opt { None } else { Some(&[]) };
    }
    let len = (s.end as usize).saturating_sub(s.begin as usize);
    // SAFETY: (1) the bytes [begin, end) are readable.
    Some(unsafe { std::slice::from_raw_parts(s.begin.cast_const(), len) })
}

impl Kernel for TextKernel {
    const NSRC: usize = 1;

    unsafe fn single(&self, k: KernelRef<'_>, dst: *mut u8, src: &[*const u8]) -> Result<()> {
        let name = if self.arg { "argsort" } else { "sort" };
        // SAFETY: the source is an element of the row's dim.
        let (first, n, stride) = unsafe { self.rows.src.row(src[0]) };
        let at = |j: usize| first.wrapping_offset(j as isize * stride);
        let mut present: Vec<(&[u8], usize)> = Vec::with_capacity(n);
        let mut missing = Vec::new();
        for j in 0..n {
            // SAFETY: element j of the row is readable; its bytes live
            // through this call.
            match unsafe { text(at(j), self.opt) } {
                Some(s) => present.push((s, j)),
                None => missing.push(j),
            }
        }
        if self.descending {
            present.sort_by(|a, b| b.0.cmp(a.0));
        } else {
            present.sort_by(|a, b| a.0.cmp(b.0));
        }
        let order = present.iter().map(|p| p.1).chain(missing);
        // SAFETY: the destination is an element of the output's dim.
        let (out, out_stride) = unsafe { self.rows.dst.open(name, dst, n) }?;
        if self.arg {
            for (w, j) in order.enumerate() {
                // SAFETY: output w < n is a writable int64.
                unsafe {
                    out.wrapping_offset(w as isize * out_stride)
                        .cast::<i64>()
                        .write_unaligned(j as i64)
                };
            }
            return Ok(());
        }
        // SAFETY: the child was built for Strided, element to element.
        let copy = unsafe { k.child(self.child[0]) };
        for (w, j) in order.enumerate() {
            // SAFETY: output w < n is writable, element j readable.
            unsafe {
                copy.call_strided(
                    out.wrapping_offset(w as isize * out_stride),
                    0,
                    &[at(j)],
                    &[0],
                    1,
                )
            }
            .map_err(|e| e.context(format!("{name}: element {j}")))?;
        }
        Ok(())
    }

    fn child_offsets(&self) -> &[usize] {
        &self.child
    }
}

// ---------------------------------------------------------- instantiation

/// Builds the row kernel of `sort` (or `argsort`, `arg`) at `offset`.
///
/// # Safety
/// 1. `offset` is a free slot of `ckb`.
/// 2. `rows` reads rows of elements `src` and writes rows of `dst`, whose
///    arrmeta are given.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn instantiate(
    mut ckb: Pin<&mut CKernelBuilder>,
    offset: usize,
    req: KernelRequest,
    rows: Rows,
    dst: (&Type, *const u8),
    src: (&Type, *const u8),
    arg: bool,
    options: SortOptions,
) -> Result<usize> {
    let elem = src.0;
    let opt = elem.option_value().is_some();
    let value = elem.option_value().unwrap_or(elem);
    let descending = options.descending;
    if let Some(b) = value.as_builtin() {
        // The macro writes one arm per type (only one runs): `rows` moves
        // out of the Option in whichever does.
        let mut rows = Some(rows);
        let built = with_native!(b, bool signed unsigned half ieee => |T| match rows.take() {
            Some(rows) => {
                let k = NumKernel::<T> { rows, arg, opt, descending, _t: PhantomData };
                // SAFETY: (1).
                unsafe { ckb.as_mut().emplace(offset, req, k) }
            }
            None => Err(Error::invalid_argument("sort: built twice")),
        });
        return built
            .unwrap_or_else(|| Err(Error::type_error(format!("sort does not order {elem}"))));
    }
    if !matches!(value.kind(), TypeKind::String | TypeKind::Bytes) {
        return Err(Error::type_error(format!("sort does not order {elem}")));
    }
    let k = TextKernel {
        rows,
        arg,
        opt,
        descending,
        child: [if arg { 0 } else { kernel_size::<TextKernel>() }],
    };
    // SAFETY: (1); the child (sort only) goes in the slot emplace reserves.
    let at = unsafe { ckb.as_mut().emplace(offset, req, k) }?;
    if arg {
        return Ok(at);
    }
    // SAFETY: `at` is the reserved slot; (2) the elements' arrmeta.
    unsafe { copy_kernel(ckb, at, dst, src) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys_order<T: SortKey + Copy>(sorted: &[T]) {
        for w in sorted.windows(2) {
            let (a, b) = (T::key(w[0].to_raw()), T::key(w[1].to_raw()));
            assert!(a < b, "{:?} < {:?}", w[0], w[1]);
        }
        for &x in sorted {
            assert_eq!(
                bytemuck::bytes_of(&T::unkey(T::key(x.to_raw()))),
                bytemuck::bytes_of(&x.to_raw())
            );
        }
    }

    #[test]
    fn keys_order_as_values() {
        keys_order(&[
            f64::NEG_INFINITY,
            -1e300,
            -1.0,
            -0.0,
            0.0,
            5e-324,
            1.0,
            f64::INFINITY,
        ]);
        keys_order(&[f32::NEG_INFINITY, -1.0, -0.0, 0.0, 1.0, f32::INFINITY]);
        keys_order(&[i64::MIN, -1, 0, 1, i64::MAX]);
        keys_order(&[i8::MIN, -1, 0, 1, i8::MAX]);
        keys_order(&[0u16, 1, u16::MAX]);
        keys_order(&[
            half::f16::NEG_INFINITY,
            half::f16::from_f32(-1.0),
            half::f16::ZERO,
            half::f16::INFINITY,
        ]);
        keys_order(&[i128::MIN, 0, i128::MAX]);
        assert!(f64::is_nan(f64::NAN) && f64::is_nan(-f64::NAN) && !f64::is_nan(f64::INFINITY));
        assert!(<f64 as SortKey>::is_na(<f64 as NativeType>::NA));
    }

    #[test]
    fn pairs_sort_stably() {
        let mut v: Vec<(u64, usize)> = (0..5000)
            .map(|i| ((i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) % 97, i))
            .collect();
        let mut want = v.clone();
        want.sort_by_key(|p| p.0);
        stable_sort_pairs(&mut v);
        assert_eq!(v, want);
        let mut k: Vec<u32> = (0..3000u32)
            .rev()
            .map(|i| i.wrapping_mul(2654435761))
            .collect();
        let mut want = k.clone();
        want.sort();
        sort_keys(&mut k);
        assert_eq!(k, want);
    }
}
