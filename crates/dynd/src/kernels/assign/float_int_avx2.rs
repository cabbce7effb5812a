//! One-pass float64 → int32 in the AVX2 build, for `nocheck` and
//! `overflow`: `cvttpd2dq` converts four values at once and gives
//! `i32::MIN` for anything out of range or NaN, so a group with no
//! `i32::MIN` among its results had every value in range.
//!
//! - `nocheck`: a chunk with no `i32::MIN` result is done in a single pass
//!   over the source. Only a chunk with one (out-of-range values, NaN, or
//!   a true -2147483648) goes through the generic loop of
//!   [`super::numeric`], which gives the exact semantics (saturation,
//!   NaN → 0). The generic loop checks a chunk's range and then converts
//!   it: two passes, which left `astype(int32)` of a 1000×1000 array at
//!   0.85× NumPy's.
//! - `overflow`: each group of eight results is stored only when none is
//!   `i32::MIN`. At the first group with one, the rest of the chunk goes to
//!   the generic loop, which finds the failing value (and writes nothing
//!   of what it was given) or converts a true -2147483648 exactly. So the
//!   failing element and everything after it are untouched, as
//!   `Array::assign` promises; values before it in its chunk may be
//!   written. The generic check-then-convert took 0.20 ms for the
//!   1000×1000 cast into a new array, 0.70× NumPy's unchecked `astype`;
//!   this loop takes what `nocheck` takes (0.14 ms in a standalone loop).
//!   Converting into an L1 buffer and copying out a passed chunk (so that
//!   nothing of a failing chunk is written) took 0.18 ms.
//!
//! `fractional` and `inexact` keep the generic loop: the one-pass
//! conversion with a round-trip compare measured 10–15% slower for
//! `fractional` than the generic check-then-convert.

#![cfg(target_arch = "x86_64")]

use super::CHUNK;
use super::ErrorMode;
use crate::error::Result;
use std::any::TypeId;
use std::arch::x86_64::{
    __m128i, _mm_cmpeq_epi32, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi32, _mm_setzero_si128,
    _mm_storeu_si128, _mm_testz_si128, _mm256_cvttpd_epi32, _mm256_loadu_pd,
};

/// Converts `s` into `d` chunk by chunk when `D ← S` is `i32 ← f64` and the
/// mode is `nocheck` or `overflow`, calling `fallback` for each chunk (in
/// `overflow`, the rest of each chunk) that holds a suspect value; `None`
/// for any other pair or mode. `fallback` must write nothing of what it is
/// given when it fails.
///
/// # Safety
/// 1. The CPU supports AVX2.
pub(super) unsafe fn try_chunks<D: 'static, S: 'static>(
    mode: ErrorMode,
    d: &mut [D],
    s: &[S],
    mut fallback: impl FnMut(&mut [D], &[S]) -> Result<()>,
) -> Option<Result<()>> {
    if TypeId::of::<D>() != TypeId::of::<i32>() || TypeId::of::<S>() != TypeId::of::<f64>() {
        return None;
    }
    if mode != ErrorMode::NoCheck && mode != ErrorMode::Overflow {
        return None;
    }
    for (dc, sc) in d.chunks_mut(CHUNK).zip(s.chunks(CHUNK)) {
        let n = dc.len().min(sc.len());
        // SAFETY: D is i32 and S is f64 (the TypeIds above), so these are
        // the same slices at their own types.
        let (di, sf) = unsafe {
            (
                std::slice::from_raw_parts_mut(dc.as_mut_ptr().cast::<i32>(), n),
                std::slice::from_raw_parts(sc.as_ptr().cast::<f64>(), n),
            )
        };
        // How much of the chunk is done; the fallback takes the rest (in
        // nocheck, a chunk with a suspect value is converted again whole).
        // SAFETY: (1) the CPU has AVX2.
        let done = unsafe {
            match mode {
                ErrorMode::Overflow => convert_checked(di, sf),
                _ if convert(di, sf) => n,
                _ => 0,
            }
        };
        if done < n
            && let Err(e) = fallback(&mut dc[done..], &sc[done..])
        {
            return Some(Err(e));
        }
    }
    Some(Ok(()))
}

/// `d[i] = s[i]` truncated, for the values in range; returns `false` when
/// some result is `i32::MIN` (then `d` holds unspecified values for the
/// suspect lanes, and the caller converts the chunk again).
///
/// # Safety
/// 1. The CPU supports AVX2.
#[target_feature(enable = "avx2")]
unsafe fn convert(d: &mut [i32], s: &[f64]) -> bool {
    let n = d.len().min(s.len());
    let four = n / 4 * 4;
    let min = _mm_set1_epi32(i32::MIN);
    let mut suspect = _mm_setzero_si128();
    let mut i = 0;
    while i < four {
        // SAFETY: i + 4 <= n, so four f64 are readable at s[i..] and four
        // i32 writable at d[i..] (unaligned loads and stores).
        unsafe {
            let r = _mm256_cvttpd_epi32(_mm256_loadu_pd(s.as_ptr().add(i)));
            suspect = _mm_or_si128(suspect, _mm_cmpeq_epi32(r, min));
            _mm_storeu_si128(d.as_mut_ptr().add(i).cast::<__m128i>(), r);
        }
        i += 4;
    }
    let mut clean = _mm_movemask_epi8(suspect) == 0;
    for j in four..n {
        let x = s[j];
        // The range of values that truncate into i32 (NaN fails both).
        if x > -2147483649.0 && x < 2147483648.0 && x as i32 != i32::MIN {
            d[j] = x as i32;
        } else {
            clean = false;
        }
    }
    clean
}

/// `d[i] = s[i]` truncated, eight at a time, up to the first group of eight
/// with an `i32::MIN` result (or fewer than eight values left); returns how
/// many were converted. Nothing from that group on is written.
///
/// # Safety
/// 1. The CPU supports AVX2.
#[target_feature(enable = "avx2")]
unsafe fn convert_checked(d: &mut [i32], s: &[f64]) -> usize {
    let n = d.len().min(s.len());
    let min = _mm_set1_epi32(i32::MIN);
    let mut i = 0;
    while i + 8 <= n {
        // SAFETY: i + 8 <= n, so eight f64 are readable at s[i..] and eight
        // i32 writable at d[i..] (unaligned loads and stores).
        unsafe {
            let a = _mm256_cvttpd_epi32(_mm256_loadu_pd(s.as_ptr().add(i)));
            let b = _mm256_cvttpd_epi32(_mm256_loadu_pd(s.as_ptr().add(i + 4)));
            let suspect = _mm_or_si128(_mm_cmpeq_epi32(a, min), _mm_cmpeq_epi32(b, min));
            if _mm_testz_si128(suspect, suspect) == 0 {
                break;
            }
            _mm_storeu_si128(d.as_mut_ptr().add(i).cast::<__m128i>(), a);
            _mm_storeu_si128(d.as_mut_ptr().add(i + 4).cast::<__m128i>(), b);
        }
        i += 8;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fast path in `mode` over `s` into a destination of 7s, with
    /// `fallback` for the chunks (or rests of chunks) it hands back.
    fn fast_path(
        mode: ErrorMode,
        s: &[f64],
        fallback: impl FnMut(&mut [i32], &[f64]) -> Result<()>,
    ) -> (Vec<i32>, Result<()>) {
        let mut d = vec![7i32; s.len()];
        // SAFETY: the callers checked for AVX2.
        let r = unsafe { try_chunks(mode, &mut d, s, fallback) }
            .expect("i32 <- f64 in nocheck and overflow takes the fast path");
        (d, r)
    }

    /// The fast path in nocheck, with the plain saturating conversion as
    /// the fallback (what the generic loop does in nocheck); also returns
    /// the indices of the chunks that fell back.
    fn run(s: &[f64]) -> (Vec<i32>, Vec<usize>) {
        let mut fell_back = Vec::new();
        let (d, r) = fast_path(ErrorMode::NoCheck, s, |dc, sc| {
            fell_back.push((sc.as_ptr() as usize - s.as_ptr() as usize) / 8 / CHUNK);
            for (d, &x) in dc.iter_mut().zip(sc) {
                *d = x as i32;
            }
            Ok(())
        });
        r.unwrap();
        (d, fell_back)
    }

    #[test]
    fn matches_rust_as_in_nocheck() {
        if !std::is_x86_feature_detected!("avx2") {
            return;
        }
        // Five chunks, the last one short with a scalar tail (1027 % 4 = 3).
        let mut s: Vec<f64> = (0..1027).map(|i| i as f64 * 1.7 - 800.3).collect();
        for (k, x) in [
            (3, f64::NAN),
            (300, 1e10),
            (301, -1e10),
            (600, -2147483648.0),
            (1026, -2147483648.9),
        ] {
            s[k] = x;
        }
        let (d, fell_back) = run(&s);
        let want: Vec<i32> = s.iter().map(|&x| x as i32).collect();
        assert_eq!(d, want);
        assert_eq!(fell_back, vec![0, 1, 2, 4]);
        let (d, fell_back) = run(&[1.5, -2.5, 3.0]);
        assert_eq!((d, fell_back), (vec![1, -2, 3], vec![]));
    }

    /// The fast path in overflow, with the generic loop's behaviour as the
    /// fallback: check the range of what it is given, then convert it, or
    /// fail writing none of it.
    fn run_overflow(s: &[f64]) -> (Vec<i32>, Result<()>) {
        fast_path(ErrorMode::Overflow, s, |dc, sc| {
            let in_range = |x: f64| x > -2147483649.0 && x < 2147483648.0;
            if let Some(&x) = sc.iter().find(|&&x| !in_range(x)) {
                return Err(crate::error::Error::new(
                    crate::error::ErrorKind::Overflow,
                    format!("{x} is out of range"),
                ));
            }
            for (d, &x) in dc.iter_mut().zip(sc) {
                *d = x as i32;
            }
            Ok(())
        })
    }

    #[test]
    fn overflow_mode_converts_in_range_values_and_leaves_the_failure_untouched() {
        if !std::is_x86_feature_detected!("avx2") {
            return;
        }
        // In range, with true -2147483648s (suspect results that are
        // right) and a short last chunk with a tail of 3.
        let mut s: Vec<f64> = (0..1027).map(|i| i as f64 * 1.7 - 800.3).collect();
        for k in [0, 255, 256, 600, 1026] {
            s[k] = -2147483648.9;
        }
        s[9] = 2147483647.9;
        let (d, r) = run_overflow(&s);
        r.unwrap();
        assert_eq!(d, s.iter().map(|&x| x as i32).collect::<Vec<_>>());
        // A failure at every position of a group and across chunk ends:
        // everything from it on keeps its 7, everything before it holds
        // either its 7 or its value.
        for bad in [0, 1, 7, 8, 13, 255, 256, 263, 700, 1020, 1024, 1026] {
            for x in [f64::NAN, 2147483648.0, -2147483649.0, f64::INFINITY] {
                let mut t = s.clone();
                t[bad] = x;
                let (d, r) = run_overflow(&t);
                let e = r.expect_err("an out-of-range value fails");
                assert_eq!(e.message(), format!("{x} is out of range"), "at {bad}");
                assert!(d[bad..].iter().all(|&v| v == 7), "{x} at {bad}");
                for (j, (&v, &x)) in d[..bad].iter().zip(&t).enumerate() {
                    assert!(v == 7 || v == x as i32, "{x} at {bad}: d[{j}] = {v}");
                }
            }
        }
    }

    #[test]
    fn other_pairs_and_modes_are_not_taken() {
        if !std::is_x86_feature_detected!("avx2") {
            return;
        }
        let mut f = vec![0f32; 4];
        // SAFETY: AVX2 was detected above.
        let none = unsafe { try_chunks(ErrorMode::NoCheck, &mut f, &[1.0f64; 4], |_, _| Ok(())) };
        assert!(none.is_none());
        let mut i = vec![0i32; 4];
        for mode in [ErrorMode::Fractional, ErrorMode::Inexact] {
            // SAFETY: AVX2 was detected above.
            let none = unsafe { try_chunks(mode, &mut i, &[1.0f64; 4], |_, _| Ok(())) };
            assert!(none.is_none());
        }
    }
}
