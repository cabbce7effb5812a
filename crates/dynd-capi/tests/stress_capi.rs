//! Concurrency stress through the C ABI: one kernel built with
//! `dynd_make_assignment_kernel` and called through its raw strided
//! function pointer from several threads, array and memory block handles
//! increfed and decrefed from several threads, and the per-thread error
//! slot (`dynd_error_code`/`dynd_error_message`/`dynd_error_set`) under
//! concurrent failures. Results and final use counts are checked.

use dynd_capi::*;
use std::ffi::{CStr, CString, c_int};
use std::mem::MaybeUninit;
use std::sync::atomic::Ordering;

const THREADS: usize = 4;

/// A raw pointer shared by the threads of one test (the pointee is built
/// before they start and destroyed after they end).
struct Shared<T>(*mut T);
// By hand: derive would require `T: Copy`.
impl<T> Clone for Shared<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Shared<T> {}
// SAFETY: the tests only share pointers to objects that the ABI documents
// as shareable (a built kernel, array and block handles); every use is
// inside `thread::scope`, before the object is destroyed.
unsafe impl<T> Send for Shared<T> {}
// SAFETY: as for Send.
unsafe impl<T> Sync for Shared<T> {}

fn message() -> String {
    // SAFETY: NUL-terminated, valid until the next call on this thread.
    unsafe { CStr::from_ptr(dynd_error_message()) }
        .to_string_lossy()
        .into_owned()
}

#[test]
fn one_c_kernel_called_from_many_threads() {
    const CALLS: usize = 25_000;
    const N: usize = 8;
    // Boxed: the builder must not move once constructed.
    let mut ckb = Box::new(MaybeUninit::<dynd_ckernel_builder>::uninit());
    let ckb_ptr = ckb.as_mut_ptr();
    // SAFETY: constructed in place, never moved; int32 and float64 are
    // builtin ids without arrmeta.
    let end = unsafe {
        dynd_ckernel_builder_construct(ckb_ptr);
        dynd_make_assignment_kernel(
            ckb_ptr,
            0,
            4 as dynd_type,
            std::ptr::null(),
            14 as dynd_type,
            std::ptr::null(),
            DYND_KERNEL_REQUEST_STRIDED,
            DYND_ASSIGN_OVERFLOW,
        )
    };
    assert!(end > 0, "{}", message());
    // The root kernel is at the start of the builder's buffer (its first
    // field, `data`), as a C caller finds it.
    // SAFETY: a constructed builder; `data` is its first word.
    let root = unsafe { *ckb_ptr.cast::<*mut dynd_ckernel_prefix>() };
    // SAFETY: built for the strided request, so `function` has that type.
    let f: dynd_expr_strided_t = unsafe {
        std::mem::transmute::<*mut std::ffi::c_void, dynd_expr_strided_t>((*root).function())
    };
    let root = Shared(root);
    std::thread::scope(|s| {
        for t in 0..THREADS {
            s.spawn(move || {
                let root = root;
                let mut src = [0.0f64; N];
                let mut dst = [0i32; N];
                for i in 0..CALLS {
                    for (j, x) in src.iter_mut().enumerate() {
                        *x = (t * 1_000_000 + i + j) as f64;
                    }
                    let bad = i % 50 == 7;
                    if bad {
                        src[3] = -3e9 - t as f64;
                    }
                    let sp = [src.as_ptr().cast::<u8>()];
                    let ss = [8isize];
                    dynd_error_clear();
                    // SAFETY: the kernel's prototype; N elements each side.
                    let status = unsafe {
                        f(
                            dst.as_mut_ptr().cast(),
                            4,
                            sp.as_ptr(),
                            ss.as_ptr(),
                            N,
                            root.0,
                        )
                    };
                    if bad {
                        assert_eq!(status, -1);
                        assert_eq!(dynd_error_code(), DYND_ERR_OVERFLOW);
                        let want = format!("float64 value {:?} is out of range", -3e9 - t as f64);
                        assert!(message().contains(&want), "thread {t}: {}", message());
                    } else {
                        assert_eq!(status, 0, "thread {t} call {i}: {}", message());
                        assert_eq!(dynd_error_code(), DYND_OK);
                        for (j, y) in dst.iter().enumerate() {
                            assert_eq!(*y, (t * 1_000_000 + i + j) as i32);
                        }
                    }
                }
            });
        }
    });
    // SAFETY: constructed above; no thread uses it any more.
    unsafe { dynd_ckernel_builder_destruct(ckb_ptr) };
}

#[test]
fn handles_increfed_and_decrefed_from_many_threads() {
    const ITERS: usize = 25_000;
    let json = "[1, 2, 3, 4]";
    // SAFETY: a NUL-terminated datashape; `json` is readable for its length.
    let (tp, a) = unsafe {
        let tp = dynd_type_from_datashape(c"4 * int64".as_ptr());
        let a = dynd_array_from_json(tp, json.as_ptr().cast(), json.len());
        (tp, a)
    };
    assert!(!a.is_null(), "{}", message());
    // An array handle is its memory block; its data lives in another.
    let a_block = a.cast::<dynd_memory_block>();
    // SAFETY: `a` is live.
    let data_block = unsafe { dynd_array_data_reference(a) };
    // SAFETY: both blocks are live while `a` is.
    let counts = || unsafe {
        (
            (*a_block).use_count.load(Ordering::Acquire),
            (*data_block).use_count.load(Ordering::Acquire),
        )
    };
    let start = counts();
    let (sa, sd, st) = (Shared(a), Shared(data_block), Shared(tp.cast_mut()));
    std::thread::scope(|s| {
        for _ in 0..THREADS {
            s.spawn(move || {
                let (sa, sd, st) = (sa, sd, st);
                for _ in 0..ITERS {
                    // SAFETY: the main thread holds a reference to each for
                    // the whole scope; every incref is matched by a decref.
                    unsafe {
                        dynd_array_incref(sa.0);
                        dynd_memory_block_incref(sd.0);
                        dynd_type_incref(st.0);
                        assert_eq!(dynd_array_type(sa.0), st.0.cast_const());
                        dynd_memory_block_decref(sd.0);
                        dynd_type_decref(st.0);
                        dynd_array_decref(sa.0);
                    }
                }
            });
        }
    });
    assert_eq!(counts(), start);
    // SAFETY: the handles made above, each released once; the JSON string
    // is freed once.
    unsafe {
        let out = dynd_array_to_json(a);
        assert_eq!(CStr::from_ptr(out).to_str().unwrap(), "[1,2,3,4]");
        dynd_string_free(out);
        dynd_array_decref(a);
        dynd_type_decref(tp);
    }
}

#[test]
fn each_thread_has_its_own_error_slot() {
    const ITERS: usize = 5_000;
    std::thread::scope(|s| {
        for t in 0..THREADS {
            s.spawn(move || {
                for i in 0..ITERS {
                    // A parse error naming this thread's own bad token.
                    let bad = CString::new(format!("float{}", 65 + t * ITERS + i)).unwrap();
                    // SAFETY: a NUL-terminated string.
                    let tp = unsafe { dynd_type_from_datashape(bad.as_ptr()) };
                    assert!(tp.is_null());
                    assert_eq!(dynd_error_code(), DYND_ERR_PARSE);
                    assert!(
                        message().contains(bad.to_str().unwrap()),
                        "thread {t}: {}",
                        message()
                    );
                    // A third party's error, set and read back.
                    let mine = CString::new(format!("thread {t} iteration {i}")).unwrap();
                    let code = DYND_ERR_EXTERNAL - (i % 2) as c_int;
                    // SAFETY: a NUL-terminated message.
                    unsafe { dynd_error_set(code, mine.as_ptr()) };
                    std::thread::yield_now();
                    assert_eq!(dynd_error_code(), code);
                    assert_eq!(message(), mine.to_str().unwrap());
                    dynd_error_clear();
                    assert_eq!(dynd_error_code(), DYND_OK);
                }
            });
        }
    });
}
