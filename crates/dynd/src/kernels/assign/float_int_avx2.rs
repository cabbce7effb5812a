//! One-pass float64 → int32 in the AVX2 build, in every mode:
//! `cvttpd2dq` converts four values at once and gives `i32::MIN` for
//! anything out of range or NaN, so a chunk with no `i32::MIN` among its
//! results had every value in range and is done in a single pass over the
//! source. `fractional` (and `inexact`, the same for this pair) also
//! converts each result back and compares it with its source: equal means
//! no fractional part was dropped. Only a chunk with an `i32::MIN` result
//! (out-of-range values, NaN, or a true -2147483648) goes through the
//! generic checked loop of [`super::numeric`], which gives its exact
//! semantics (saturation and NaN → 0 for `nocheck`, the error for
//! `overflow`). The generic loop checks a chunk's sources and then
//! converts them: two passes, which left `astype(int32)` of a 1000×1000
//! array at 0.85× NumPy's.
//!
//! The checked modes convert into a buffer in L1 and copy it out only when
//! it passed, so that a failing chunk leaves the destination untouched, as
//! the generic loop promises.

#![cfg(target_arch = "x86_64")]

use super::ErrorMode;
use super::numeric::CHUNK;
use crate::error::Result;
use std::any::TypeId;
use std::arch::x86_64::{
    __m128i, _CMP_NEQ_UQ, _mm_cmpeq_epi32, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi32,
    _mm_setzero_si128, _mm_storeu_si128, _mm256_cmp_pd, _mm256_cvtepi32_pd, _mm256_cvttpd_epi32,
    _mm256_loadu_pd, _mm256_movemask_pd,
};

/// Converts `s` into `d` chunk by chunk when `D ← S` is `i32 ← f64`,
/// calling `fallback` for each chunk that holds a suspect value; `None`
/// for any other pair.
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
    // Checked modes buffer; fractional ones also compare.
    let (buffered, exact) = match mode {
        ErrorMode::NoCheck => (false, false),
        ErrorMode::Overflow => (true, false),
        ErrorMode::Fractional | ErrorMode::Default | ErrorMode::Inexact => (true, true),
    };
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
        let clean = if buffered {
            let mut buf = [0i32; CHUNK];
            // SAFETY: (1) the CPU has AVX2.
            let clean = unsafe {
                if exact {
                    convert::<true>(&mut buf[..n], sf)
                } else {
                    convert::<false>(&mut buf[..n], sf)
                }
            };
            if clean {
                di.copy_from_slice(&buf[..n]);
            }
            clean
        } else {
            // SAFETY: (1) the CPU has AVX2.
            unsafe { convert::<false>(di, sf) }
        };
        if !clean && let Err(e) = fallback(dc, sc) {
            return Some(Err(e));
        }
    }
    Some(Ok(()))
}

/// `d[i] = s[i]` truncated, for the values in range; returns `false` when
/// some result is `i32::MIN`, or with `EXACT` when some value had a
/// fractional part (then `d` holds unspecified values for the suspect
/// lanes, and the caller converts the chunk again).
///
/// # Safety
/// 1. The CPU supports AVX2.
#[target_feature(enable = "avx2")]
unsafe fn convert<const EXACT: bool>(d: &mut [i32], s: &[f64]) -> bool {
    let n = d.len().min(s.len());
    let four = n / 4 * 4;
    let min = _mm_set1_epi32(i32::MIN);
    let mut suspect = _mm_setzero_si128();
    let mut inexact = 0i32;
    let mut i = 0;
    while i < four {
        // SAFETY: i + 4 <= n, so four f64 are readable at s[i..] and four
        // i32 writable at d[i..] (unaligned loads and stores).
        unsafe {
            let v = _mm256_loadu_pd(s.as_ptr().add(i));
            let r = _mm256_cvttpd_epi32(v);
            suspect = _mm_or_si128(suspect, _mm_cmpeq_epi32(r, min));
            if EXACT {
                // Unequal (or unordered: NaN) after the round trip.
                let back = _mm256_cvtepi32_pd(r);
                inexact |= _mm256_movemask_pd(_mm256_cmp_pd::<_CMP_NEQ_UQ>(back, v));
            }
            _mm_storeu_si128(d.as_mut_ptr().add(i).cast::<__m128i>(), r);
        }
        i += 4;
    }
    let mut clean = _mm_movemask_epi8(suspect) == 0 && inexact == 0;
    for j in four..n {
        let x = s[j];
        // The range of values that truncate into i32 (NaN fails both).
        if x > -2147483649.0
            && x < 2147483648.0
            && x as i32 != i32::MIN
            && (!EXACT || x as i32 as f64 == x)
        {
            d[j] = x as i32;
        } else {
            clean = false;
        }
    }
    clean
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(mode: ErrorMode, s: &[f64]) -> (Vec<i32>, Result<()>) {
        assert!(std::is_x86_feature_detected!("avx2"));
        let mut d = vec![7i32; s.len()];
        // The fallback is the plain saturating conversion (nocheck) or an
        // error (overflow), as the generic loop would do.
        // SAFETY: AVX2 was detected just above.
        let r = unsafe {
            try_chunks(mode, &mut d, s, |dc: &mut [i32], sc: &[f64]| {
                if mode == ErrorMode::Overflow {
                    return Err(crate::Error::overflow("bad"));
                }
                for (d, &x) in dc.iter_mut().zip(sc) {
                    *d = x as i32;
                }
                Ok(())
            })
        }
        .expect("i32 <- f64 takes the fast path");
        (d, r)
    }

    #[test]
    fn matches_rust_as_in_nocheck() {
        if !std::is_x86_feature_detected!("avx2") {
            return;
        }
        let mut s: Vec<f64> = (0..1000).map(|i| i as f64 * 1.7 - 800.3).collect();
        for (k, x) in [
            (3, f64::NAN),
            (300, 1e10),
            (301, -1e10),
            (600, -2147483648.0),
            (998, f64::INFINITY),
            (999, -2147483648.9),
        ] {
            s[k] = x;
        }
        let (d, r) = run(ErrorMode::NoCheck, &s);
        r.unwrap();
        let want: Vec<i32> = s.iter().map(|&x| x as i32).collect();
        assert_eq!(d, want);
    }

    #[test]
    fn overflow_leaves_a_failing_chunk_untouched() {
        if !std::is_x86_feature_detected!("avx2") {
            return;
        }
        let mut s: Vec<f64> = (0..600).map(|i| i as f64).collect();
        s[CHUNK + 5] = 3e9;
        let (d, r) = run(ErrorMode::Overflow, &s);
        assert!(r.is_err());
        assert!(d[..CHUNK].iter().enumerate().all(|(i, &v)| v == i as i32));
        assert!(d[CHUNK..].iter().all(|&v| v == 7));
        // Other pairs and modes are not taken.
        let mut f = vec![0f32; 4];
        // SAFETY: the tests run where AVX2 was detected above.
        let none = unsafe { try_chunks(ErrorMode::NoCheck, &mut f, &[1.0f64; 4], |_, _| Ok(())) };
        assert!(none.is_none());
    }
}

#[cfg(test)]
mod fractional_tests {
    use super::*;

    /// Which chunks the fast path sends to the fallback, in `mode`.
    fn suspects(mode: ErrorMode, s: &[f64]) -> Vec<usize> {
        let mut d = vec![0i32; s.len()];
        let mut seen = Vec::new();
        // SAFETY: the callers checked for AVX2.
        unsafe {
            try_chunks(mode, &mut d, s, |_: &mut [i32], sc: &[f64]| {
                seen.push((sc.as_ptr() as usize - s.as_ptr() as usize) / 8 / CHUNK);
                Ok(())
            })
        }
        .expect("taken")
        .unwrap();
        seen
    }

    #[test]
    fn fractions_nan_and_range_are_suspect_in_fractional_mode() {
        if !std::is_x86_feature_detected!("avx2") {
            return;
        }
        let mut s: Vec<f64> = (0..5 * CHUNK).map(|i| i as f64 - 300.0).collect();
        s[CHUNK + 1] = 2.5;
        s[3 * CHUNK + 2] = f64::NAN;
        s[5 * CHUNK - 1] = 0.25;
        assert_eq!(suspects(ErrorMode::Fractional, &s), vec![1, 3, 4]);
        assert_eq!(suspects(ErrorMode::Overflow, &s), vec![3]);
        assert_eq!(suspects(ErrorMode::NoCheck, &s), vec![3]);
        // A scalar tail (a length that is not a multiple of 4).
        let t = [1.0, 2.0, 3.0, 4.0, 5.5];
        assert_eq!(suspects(ErrorMode::Default, &t), vec![0]);
        assert_eq!(suspects(ErrorMode::Overflow, &t), Vec::<usize>::new());
        assert_eq!(
            suspects(ErrorMode::Inexact, &[-0.0, 7.0, -2147483648.5]),
            vec![0]
        );
        assert_eq!(
            suspects(ErrorMode::Inexact, &[-0.0, 7.0, -5.0, 1e9, 3.0]),
            Vec::<usize>::new()
        );
    }
}
