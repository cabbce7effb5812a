//! Numeric kernels on every layout: each case runs through the single
//! function element by element, and through the strided function on
//! contiguous, step-2, negative-stride and unaligned (odd offset) buffers;
//! all must agree, values and errors alike (NumPy's casting tests do this).

use super::*;
use crate::error::ErrorKind;
use crate::types::{BuiltinType, NativeType};
use half::f16;
use num_complex::Complex;
use std::pin::{Pin, pin};

/// Bytes of a value, little-endian native.
trait Bytes: NativeType {
    fn put(self, out: &mut [u8]);
    fn get(b: &[u8]) -> Self;
}
impl<T: NativeType> Bytes for T {
    fn put(self, out: &mut [u8]) {
        assert!(out.len() >= T::TYPE.data_size());
        // SAFETY: `out` has room for one value (checked just above).
        unsafe { self.store(out.as_mut_ptr()) }
    }
    fn get(b: &[u8]) -> Self {
        assert!(b.len() >= T::TYPE.data_size());
        // SAFETY: `b` holds one value's bytes (checked just above); `load`
        // reads unaligned, and any bytes are a value of its stored form.
        unsafe { T::load(b.as_ptr()) }
    }
}

/// A new builder holding `dst ← src` between two builtin types, built for
/// `req` under `mode`.
fn builtin_kernel(
    dst: BuiltinType,
    src: BuiltinType,
    req: KernelRequest,
    mode: ErrorMode,
) -> Result<Pin<Box<CKernelBuilder>>> {
    let mut ckb = Box::pin(CKernelBuilder::new());
    // SAFETY: offset 0 of a new builder is free; builtin types have no
    // arrmeta, so the null pointers are never read.
    unsafe {
        make_assignment_kernel(
            ckb.as_mut(),
            0,
            &dst.into(),
            std::ptr::null(),
            &src.into(),
            std::ptr::null(),
            req,
            mode,
        )
    }?;
    Ok(ckb)
}

/// Runs `D ← S` on `values` in every layout under `mode`; returns the
/// converted values (as bit-comparable bytes) or the error kind, after
/// checking that all layouts agree.
fn run_all<D: Bytes, S: Bytes>(
    values: &[S],
    mode: ErrorMode,
) -> std::result::Result<Vec<u8>, ErrorKind> {
    let (ds, ss) = (std::mem::size_of::<D>(), std::mem::size_of::<S>());
    let n = values.len();
    let mut results = Vec::new();

    // Single, element by element.
    {
        let ckb = builtin_kernel(D::TYPE, S::TYPE, KernelRequest::Single, mode).unwrap();
        let mut out = vec![0u8; n * ds];
        let mut r = Ok(());
        for (i, v) in values.iter().enumerate() {
            let mut sb = vec![0u8; ss];
            v.put(&mut sb);
            // SAFETY: built for Single on these builtin types.
            r = unsafe { ckb.call_single(out[i * ds..].as_mut_ptr(), &[sb.as_ptr()]) };
            if r.is_err() {
                break;
            }
        }
        results.push(("single", r.map(|_| out).map_err(|e| e.kind())));
    }

    // Strided layouts: (name, source step in elements, reversed, byte offset)
    for (name, step, reversed, misalign) in [
        ("contiguous", 1usize, false, 0usize),
        ("step 2", 2, false, 0),
        ("negative", 1, true, 0),
        ("negative step 2", 2, true, 0),
        ("unaligned", 1, false, 1),
        ("unaligned step 2", 2, false, 3),
    ] {
        let ckb = builtin_kernel(D::TYPE, S::TYPE, KernelRequest::Strided, mode).unwrap();
        let span = n.max(1) * step;
        let mut src = vec![0u8; span * ss + misalign + 16];
        let mut dst = vec![0u8; span * ds + misalign + 16];
        let (sstride, dstride) = ((step * ss) as isize, (step * ds) as isize);
        // Element i lives at index i*step (or reversed from the end).
        let at = |i: usize, size: usize| {
            let k = if reversed {
                (n - 1 - i) * step
            } else {
                i * step
            };
            misalign + k * size
        };
        for (i, v) in values.iter().enumerate() {
            v.put(&mut src[at(i, ss)..at(i, ss) + ss]);
        }
        let (s0, d0) = if n == 0 {
            (misalign, misalign)
        } else {
            (at(0, ss), at(0, ds))
        };
        let (sstride, dstride) = if reversed {
            (-sstride, -dstride)
        } else {
            (sstride, dstride)
        };
        // SAFETY: built for Strided; n elements at the given strides lie in
        // the buffers.
        let r = unsafe {
            ckb.call_strided(
                dst.as_mut_ptr().add(d0),
                dstride,
                &[src.as_ptr().add(s0)],
                &[sstride],
                n,
            )
        };
        let out: Vec<u8> = (0..n)
            .flat_map(|i| dst[at(i, ds)..at(i, ds) + ds].to_vec())
            .collect();
        results.push((name, r.map(|_| out).map_err(|e| e.kind())));
    }
    let (first_name, first) = results[0].clone();
    for (name, r) in &results[1..] {
        assert_eq!(
            r.as_ref().map_err(|k| *k),
            first.as_ref().map_err(|k| *k),
            "{} <- {} ({mode}): {name} disagrees with {first_name}",
            D::TYPE,
            S::TYPE
        );
    }
    first
}

fn values_of<D: Bytes>(bytes: &[u8]) -> Vec<D> {
    bytes.chunks(std::mem::size_of::<D>()).map(D::get).collect()
}

#[test]
fn exact_cases_of_design_section_6() {
    use ErrorMode::*;
    assert_eq!(
        run_all::<i8, i32>(&[1, 128], Overflow),
        Err(ErrorKind::Overflow)
    );
    assert_eq!(
        run_all::<i8, f64>(&[1.25], Default),
        Err(ErrorKind::Fractional)
    );
    assert_eq!(
        values_of::<i8>(&run_all::<i8, f64>(&[1.25, -3.75], Overflow).unwrap()),
        vec![1, -3]
    );
    assert_eq!(
        values_of::<u16>(&run_all::<u16, i32>(&[-1], NoCheck).unwrap()),
        vec![65535]
    );
    assert_eq!(
        values_of::<f32>(&run_all::<f32, i64>(&[33554433], NoCheck).unwrap()),
        vec![33554432.0]
    );
    assert_eq!(
        run_all::<f32, i64>(&[33554433], Inexact),
        Err(ErrorKind::Inexact)
    );
}

/// `vals` repeated to `n` elements: a spread of values of every kind, many
/// past a chunk boundary so the chunked check sees failures in later chunks
/// too. Under valgrind (scripts/valgrind-tests.sh sets DYND_VALGRIND) at
/// most one chunk and a part: the boundary and the tail are still crossed.
fn long<T: Copy>(vals: &[T], n: usize) -> Vec<T> {
    let n = if std::env::var_os("DYND_VALGRIND").is_some() {
        n.min(CHUNK + 44)
    } else {
        n
    };
    vals.iter().copied().cycle().take(n).collect()
}

#[test]
fn every_layout_agrees_for_every_pair_and_mode() {
    let ints: Vec<i64> = long(
        &[
            0,
            1,
            -1,
            127,
            -128,
            255,
            256,
            65535,
            -32769,
            1 << 40,
            i64::MIN,
            i64::MAX,
        ],
        700,
    );
    let floats: Vec<f64> = long(
        &[
            0.0,
            -0.0,
            1.0,
            0.5,
            -1.5,
            255.0,
            1e10,
            -1e20,
            f64::NAN,
            f64::INFINITY,
            0.1,
            33554433.0,
            1e300,
            -3.5e38,
            f64::NEG_INFINITY,
        ],
        700,
    );
    let small: Vec<i64> = long(&[0, 1, 2, 3, 100, 127], 600);
    let bools: Vec<bool> = long(&[true, false, true], 300);
    for mode in ErrorMode::ALL {
        macro_rules! pair {
            ($d:ty, $s:ty, $vals:expr) => {{
                let v: Vec<$s> = $vals;
                let _ = run_all::<$d, $s>(&v, mode);
            }};
        }
        macro_rules! from_ints {
            ($($d:ty),*) => {$(
                pair!($d, i64, ints.clone());
                pair!($d, i32, ints.iter().map(|&x| x as i32).collect());
                pair!($d, u8, ints.iter().map(|&x| x as u8).collect());
                pair!($d, u64, ints.iter().map(|&x| x as u64).collect());
                pair!($d, i128, ints.iter().map(|&x| (x as i128) << 20).collect());
                pair!($d, f64, floats.clone());
                pair!($d, f32, floats.iter().map(|&x| x as f32).collect());
                pair!($d, f16, floats.iter().map(|&x| f16::from_f64(x)).collect());
                pair!($d, bool, bools.clone());
                pair!($d, Complex<f64>, floats.iter().zip(&small).map(|(&x, &i)| Complex::new(x, (i % 2) as f64)).collect());
                pair!($d, i16, small.iter().map(|&x| x as i16).collect());
            )*};
        }
        from_ints!(
            bool,
            i8,
            i16,
            i32,
            i64,
            i128,
            u8,
            u16,
            u32,
            u64,
            u128,
            f16,
            f32,
            f64,
            Complex<f32>,
            Complex<f64>
        );
    }
}

#[test]
fn a_failure_in_a_later_chunk_is_found_and_earlier_chunks_are_written() {
    let mut v = vec![1i32; 1000];
    v[700] = 1000;
    assert_eq!(
        run_all::<i8, i32>(&v, ErrorMode::Overflow),
        Err(ErrorKind::Overflow)
    );
    let ckb = builtin_kernel(
        BuiltinType::Int8,
        BuiltinType::Int32,
        KernelRequest::Strided,
        ErrorMode::Overflow,
    )
    .unwrap();
    let mut out = vec![0i8; 1000];
    // SAFETY: 1000 contiguous elements each side.
    let e =
        unsafe { ckb.call_strided(out.as_mut_ptr().cast(), 1, &[v.as_ptr().cast()], &[4], 1000) }
            .unwrap_err();
    assert_eq!(e.message(), "int32 value 1000 is out of range for int8");
    assert!(
        out[..512].iter().all(|&x| x == 1),
        "chunks before the failing one are written"
    );
    assert!(
        out[512..].iter().all(|&x| x == 0),
        "the failing chunk and later ones are untouched"
    );
}

#[test]
fn narrowing_floats_check_their_results_chunk_by_chunk() {
    // float64 -> float32 and -> float16 look for infinities among the
    // converted values; infinite sources are not overflow, finite ones that
    // round to infinity are, and the failing chunk is not written.
    let mut v = vec![1.5f64; 1000];
    v[3] = f64::INFINITY;
    v[4] = f64::NEG_INFINITY;
    v[5] = f64::NAN;
    v[6] = f32::MAX as f64; // exactly representable
    for mode in [
        ErrorMode::Overflow,
        ErrorMode::Fractional,
        ErrorMode::Default,
    ] {
        let out =
            values_of::<f32>(&run_all::<f32, f64>(&v, mode).expect("infinities and NaN pass"));
        assert_eq!(out[3], f32::INFINITY);
        assert!(out[5].is_nan());
        assert_eq!(out[6], f32::MAX);
    }
    let mut bad = v.clone();
    bad[600] = 1e39;
    for mode in [
        ErrorMode::Overflow,
        ErrorMode::Fractional,
        ErrorMode::Default,
    ] {
        assert_eq!(run_all::<f32, f64>(&bad, mode), Err(ErrorKind::Overflow));
    }
    let ckb = builtin_kernel(
        BuiltinType::Float32,
        BuiltinType::Float64,
        KernelRequest::Strided,
        ErrorMode::Overflow,
    )
    .unwrap();
    let mut out = vec![0f32; 1000];
    // SAFETY: 1000 contiguous elements each side.
    let e = unsafe {
        ckb.call_strided(
            out.as_mut_ptr().cast(),
            4,
            &[bad.as_ptr().cast()],
            &[8],
            1000,
        )
    }
    .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Overflow);
    assert_eq!(
        e.message(),
        "float64 value 1e39 is out of range for float32"
    );
    assert!(
        out[..512]
            .iter()
            .all(|&x| x == 1.5 || !x.is_finite() || x == f32::MAX)
    );
    assert!(
        out[512..].iter().all(|&x| x == 0.0),
        "the failing chunk is not written"
    );
    let mut halves = vec![1.0f32; 700];
    halves[650] = 65520.0; // rounds to infinity in float16
    halves[10] = f32::INFINITY;
    assert_eq!(
        run_all::<f16, f32>(&halves, ErrorMode::Overflow),
        Err(ErrorKind::Overflow)
    );
    halves[650] = 65504.0;
    assert!(run_all::<f16, f32>(&halves, ErrorMode::Overflow).is_ok());
}

#[test]
fn error_modes_parse_and_round_trip() {
    for m in ErrorMode::ALL {
        assert_eq!(m.name().parse::<ErrorMode>().unwrap(), m);
        assert_eq!(ErrorMode::from_raw(m as i32).unwrap(), m);
    }
    assert_eq!(ErrorMode::Default.resolve(), ErrorMode::Fractional);
    assert_eq!(
        "strict".parse::<ErrorMode>().unwrap_err().kind(),
        ErrorKind::InvalidArgument
    );
    assert_eq!(
        ErrorMode::from_raw(5).unwrap_err().kind(),
        ErrorKind::InvalidArgument
    );
}

#[test]
fn void_and_symbolic_types_are_refused() {
    let mut ckb = pin!(CKernelBuilder::new());
    let e = |dst: &str, src: &str, ckb: std::pin::Pin<&mut CKernelBuilder>| {
        let (d, s) = (Type::parse(dst).unwrap(), Type::parse(src).unwrap());
        // SAFETY: offset 0 of an empty builder; the arrmeta pointers are
        // never read for these types (refused before any kernel is built).
        unsafe {
            make_assignment_kernel(
                ckb,
                0,
                &d,
                std::ptr::null(),
                &s,
                std::ptr::null(),
                KernelRequest::Single,
                ErrorMode::Default,
            )
        }
        .unwrap_err()
    };
    assert_eq!(e("void", "int32", ckb.as_mut()).kind(), ErrorKind::Type);
    assert_eq!(e("int32", "void", ckb.as_mut()).kind(), ErrorKind::Type);
    let sym = e("N * int32", "3 * int32", ckb.as_mut());
    assert!(sym.message().contains("concrete"), "{sym}");
}

#[test]
fn bool_sources_with_other_bytes_than_0_and_1_read_as_true() {
    // C code may store any byte in a bool array; the kernels read bool
    // sources as bytes (a Rust bool holding 2 would be undefined behaviour).
    let bytes = [0u8, 1, 2, 255, 0, 7];
    for (dst, want) in [
        (BuiltinType::Int32, vec![0u8, 1, 1, 1, 0, 1]),
        (BuiltinType::Float64, vec![0, 1, 1, 1, 0, 1]),
        (BuiltinType::UInt8, vec![0, 1, 1, 1, 0, 1]),
    ] {
        for mode in ErrorMode::ALL {
            let ckb = builtin_kernel(dst, BuiltinType::Bool, KernelRequest::Strided, mode).unwrap();
            let size = dst.data_size();
            let mut out = vec![0u8; size * bytes.len()];
            // SAFETY: 6 elements on each side, contiguous.
            unsafe {
                ckb.call_strided(
                    out.as_mut_ptr(),
                    size as isize,
                    &[bytes.as_ptr()],
                    &[1],
                    bytes.len(),
                )
            }
            .unwrap();
            let decode = |c: &[u8]| match dst {
                BuiltinType::Float64 => f64::from_ne_bytes(c.try_into().unwrap()) as u8,
                BuiltinType::Int32 => i32::from_ne_bytes(c.try_into().unwrap()) as u8,
                _ => c[0],
            };
            let got: Vec<u8> = out.chunks(size).map(decode).collect();
            assert_eq!(got, want, "{dst} <- bool ({mode})");
            // The single-element path too.
            let single =
                builtin_kernel(dst, BuiltinType::Bool, KernelRequest::Single, mode).unwrap();
            let mut one = vec![0u8; size];
            // SAFETY: built for Single; one element each side.
            unsafe { single.call_single(one.as_mut_ptr(), &[bytes[2..].as_ptr()]) }.unwrap();
            assert_eq!(decode(&one), 1, "{dst} <- bool 2 ({mode}), single");
        }
    }
}

#[test]
fn float64_to_int32_overflow_leaves_the_failing_element_and_later_ones_untouched() {
    let ckb = builtin_kernel(
        BuiltinType::Int32,
        BuiltinType::Float64,
        KernelRequest::Strided,
        ErrorMode::Overflow,
    )
    .unwrap();
    let src: Vec<f64> = (0..1000).map(|i| i as f64 * 3.5 - 1700.25).collect();
    for (bad, x) in [
        (700, 3e9),
        (517, f64::NAN),
        (0, -2147483649.0),
        (999, 1e300),
    ] {
        let mut v = src.clone();
        v[bad] = x;
        let mut out = vec![-1i32; 1000];
        // SAFETY: 1000 contiguous elements each side.
        let e = unsafe {
            ckb.call_strided(out.as_mut_ptr().cast(), 4, &[v.as_ptr().cast()], &[8], 1000)
        }
        .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Overflow, "{x} at {bad}");
        assert!(
            e.message().contains("out of range for int32"),
            "{}",
            e.message()
        );
        assert!(out[bad..].iter().all(|&o| o == -1), "{x} at {bad}");
        for (j, &o) in out[..bad].iter().enumerate() {
            assert!(o == -1 || o == v[j] as i32, "{x} at {bad}: out[{j}] = {o}");
        }
        // The whole chunk before the failing one's is written.
        let written = bad / numeric::CHUNK * numeric::CHUNK;
        assert!(out[..written].iter().zip(&v).all(|(&o, &x)| o == x as i32));
    }
    // In range, with values that truncate to i32::MIN exactly.
    let mut v = src.clone();
    v[3] = -2147483648.5;
    v[400] = -2147483648.0;
    let mut out = vec![0i32; 1000];
    // SAFETY: 1000 contiguous elements each side.
    unsafe { ckb.call_strided(out.as_mut_ptr().cast(), 4, &[v.as_ptr().cast()], &[8], 1000) }
        .unwrap();
    assert!(out.iter().zip(&v).all(|(&o, &x)| o == x as i32));
}
