//! Concurrency stress: one built kernel called from many threads,
//! arrays and memory blocks cloned and dropped from many threads, one POD
//! allocator shared by threads (directly and through a string-producing
//! kernel), and the thread-local error slot under concurrent failures.
//!
//! Every test checks its results and that use counts return to where they
//! started. Sizes keep the whole file to a few seconds in a debug build
//! (about 4·10^5 kernel calls and refcount operations in all); they run
//! under ASan and valgrind too (scripts/asan-tests.sh, valgrind-tests.sh).

use crate::common;

use common::{elem_meta, elems, scalar, whole, with_assign_kernel, with_callable_kernel};
use dynd::array::BlockrefMeta;
use dynd::callable::lookup;
use dynd::error::{last_error, set_last_error, take_last_error};
use dynd::kernels::KernelRequest;
use dynd::kernels::assign::ErrorMode;
use dynd::memblock::{MemBlock, MemoryBlockHeader};
use dynd::{Array, Error, ErrorKind, Type};
use std::sync::Barrier;
use std::sync::atomic::Ordering;

const THREADS: usize = 4;

/// The use count of the block a raw blockref points at.
///
/// # Safety
/// 1. `block` is a live block (the caller holds a reference to it).
unsafe fn raw_use_count(block: *mut MemoryBlockHeader) -> i32 {
    // SAFETY: (1).
    unsafe { (*block).use_count.load(Ordering::Acquire) }
}

#[test]
fn one_assignment_kernel_called_from_many_threads() {
    const CALLS: usize = 25_000; // per thread: 10^5 calls in all
    const N: usize = 8;
    let (f64_tp, i32_tp) = (Type::float64(), Type::int32());
    let (dst, src) = (scalar(&i32_tp), scalar(&f64_tp));
    with_assign_kernel(
        dst,
        src,
        KernelRequest::Strided,
        ErrorMode::Overflow,
        |kernel| {
            std::thread::scope(|s| {
                for t in 0..THREADS {
                    s.spawn(move || {
                        let mut src = [0.0f64; N];
                        let mut dst = [0i32; N];
                        for i in 0..CALLS {
                            let base = (t * 1_000_000 + i) as f64;
                            for (j, x) in src.iter_mut().enumerate() {
                                *x = base + j as f64 + 0.25;
                            }
                            // Every 64th call fails, with a value only this thread uses.
                            let bad = i % 64 == 0;
                            if bad {
                                src[N / 2] = 1e10 + t as f64;
                            }
                            // SAFETY: built for Strided, int32 <- float64; N
                            // elements on both sides at their natural strides.
                            let r = unsafe {
                                kernel.call_strided(
                                    dst.as_mut_ptr().cast(),
                                    4,
                                    &[src.as_ptr().cast()],
                                    &[8],
                                    N,
                                )
                            };
                            if bad {
                                let e = r.expect_err("1e10 does not fit int32");
                                assert_eq!(e.kind(), ErrorKind::Overflow);
                                let want =
                                    format!("float64 value {:?} is out of range", 1e10 + t as f64);
                                assert!(e.message().contains(&want), "thread {t}: {e}");
                            } else {
                                r.unwrap_or_else(|e| panic!("thread {t} call {i}: {e}"));
                                for (j, y) in dst.iter().enumerate() {
                                    assert_eq!(*y, (t * 1_000_000 + i + j) as i32);
                                }
                            }
                            // The slot holds nothing: another thread's failure never
                            // lands in this thread's slot.
                            assert_eq!(last_error(), None, "thread {t} call {i}");
                        }
                    });
                }
            });
        },
    )
    .unwrap();
}

#[test]
fn one_callable_kernel_called_from_many_threads() {
    const CALLS: usize = 10_000;
    const N: usize = 16;
    let add = lookup("add").unwrap();
    let x = Array::from(0.0f64);
    let tps = [Type::float64(), Type::float64()];
    let out_tp = add.resolve(&tps).unwrap();
    assert_eq!(out_tp, Type::float64());
    // float64 has no arrmeta, so any array's arrmeta pointer (here x's)
    // stands for it.
    let side = whole(&x);
    with_callable_kernel(
        &add,
        side,
        &[side, side],
        KernelRequest::Strided,
        |kernel| {
            std::thread::scope(|s| {
                for t in 0..THREADS {
                    s.spawn(move || {
                        let a: Vec<f64> = (0..N).map(|j| (t * 100 + j) as f64).collect();
                        let mut b = [0.0f64; N];
                        let mut out = [0.0f64; N];
                        for i in 0..CALLS {
                            b.iter_mut().for_each(|v| *v = i as f64 * 0.5);
                            // SAFETY: built for Strided, float64 (+) float64; N
                            // contiguous elements each.
                            unsafe {
                                kernel.call_strided(
                                    out.as_mut_ptr().cast(),
                                    8,
                                    &[a.as_ptr().cast(), b.as_ptr().cast()],
                                    &[8, 8],
                                    N,
                                )
                            }
                            .unwrap();
                            for j in 0..N {
                                assert_eq!(out[j], a[j] + i as f64 * 0.5, "thread {t} call {i}");
                            }
                        }
                    });
                }
            });
        },
    )
    .unwrap();
}

/// The use counts of a numeric array's block and data, and of a string
/// array's block, data and the block its strings' bytes live in.
fn use_counts(nums: &Array, strs: &Array) -> (i32, i32, i32, i32, i32) {
    // The string array's bytes live in the block its element arrmeta
    // (after the fixed dim's) refers to.
    // SAFETY: `N * string` arrmeta is a FixedDimMeta then a BlockrefMeta.
    let str_block = unsafe { elem_meta(strs).cast::<BlockrefMeta>().read().blockref };
    assert!(!str_block.is_null());
    (
        nums.memblock().use_count(),
        nums.data_ref().use_count(),
        strs.memblock().use_count(),
        strs.data_ref().use_count(),
        // SAFETY: `strs` holds a reference to its string block.
        unsafe { raw_use_count(str_block) },
    )
}

#[test]
fn clones_and_views_from_many_threads_restore_use_counts() {
    const ITERS: usize = 25_000;
    let nums = Array::from_json(
        "100 * float64",
        &format!(
            "[{}]",
            (0..100)
                .map(|i| i.to_string())
                .collect::<Vec<_>>()
                .join(",")
        ),
    )
    .unwrap();
    let words: Vec<String> = (0..50).map(|i| format!("word{i}")).collect();
    let strs = Array::from(words.iter().map(String::as_str).collect::<Vec<_>>());
    let start = use_counts(&nums, &strs);
    assert_eq!(start, (1, 1, 1, 1, 1));
    std::thread::scope(|s| {
        for t in 0..THREADS {
            let (nums, strs, words) = (&nums, &strs, &words);
            s.spawn(move || {
                for i in 0..ITERS {
                    let k = (i * 7 + t) % 100;
                    let a = nums.clone();
                    let v = a.index(&[k.into()]).unwrap();
                    assert!(v.shares_data_with(nums));
                    assert_eq!(v.as_scalar::<f64>().unwrap(), k as f64);
                    let block: MemBlock = v.data_ref().clone();
                    assert!(block.use_count() >= 3, "nums data, v and block");
                    drop(a);
                    let w = strs.index(&[(k % 50).into()]).unwrap();
                    assert_eq!(w.as_str().unwrap(), words[k % 50]);
                    let w2 = w.clone();
                    drop(w);
                    assert_eq!(w2.as_str().unwrap(), words[k % 50]);
                }
            });
        }
    });
    let end = use_counts(&nums, &strs);
    assert_eq!(end, start);
}

#[test]
fn raw_incref_decref_from_many_threads() {
    const ITERS: usize = 50_000;
    let block = MemBlock::new_fixed(64, 64).unwrap();
    std::thread::scope(|s| {
        for _ in 0..THREADS {
            let block = &block;
            s.spawn(move || {
                for _ in 0..ITERS {
                    let c = block.clone();
                    let d = c.clone();
                    assert!(d.use_count() >= 3);
                    drop(c);
                    drop(d);
                }
            });
        }
    });
    assert_eq!(block.use_count(), 1);
}

#[test]
fn one_pod_allocator_shared_by_many_threads() {
    const ALLOCS: usize = 10_000;
    let arena = MemBlock::new_pod_allocator(256);
    let chunks: Vec<Vec<(usize, usize, u8)>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..THREADS)
            .map(|t| {
                let arena = &arena;
                s.spawn(move || {
                    let alloc = arena.pod_allocator().unwrap();
                    let mut mine = Vec::with_capacity(ALLOCS);
                    for i in 0..ALLOCS {
                        let size = 1 + (i * 13 + t) % 40;
                        let align = 1 << (i % 4);
                        let p = alloc.allocate(size, align).unwrap();
                        assert_eq!(p as usize % align, 0);
                        let tag = (t * 64 + i % 64) as u8;
                        // SAFETY: `p` is `size` fresh zeroed bytes that only
                        // this thread knows about.
                        let bytes = unsafe { std::slice::from_raw_parts_mut(p, size) };
                        assert!(bytes.iter().all(|b| *b == 0), "fresh memory is zeroed");
                        bytes.fill(tag);
                        mine.push((p as usize, size, tag));
                    }
                    mine
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    // No two allocations overlapped: every one still holds its own tag.
    for (p, size, tag) in chunks.iter().flatten() {
        // SAFETY: allocations live as long as the arena, which is alive.
        let bytes = unsafe { std::slice::from_raw_parts(*p as *const u8, *size) };
        assert!(bytes.iter().all(|b| b == tag));
    }
    assert_eq!(arena.use_count(), 1);
}

#[test]
fn one_string_kernel_allocates_from_one_arena_on_many_threads() {
    const PER_THREAD: usize = 1_000;
    const ROUNDS: usize = 25; // 10^5 string elements written in all
    const CHUNK: usize = 40;
    let out = Array::empty(format!("{} * string", THREADS * PER_THREAD).as_str()).unwrap();
    // SAFETY: `N * string` arrmeta is a FixedDimMeta then the element's
    // (a string's, a BlockrefMeta).
    let arena = unsafe { elem_meta(&out).cast::<BlockrefMeta>().read().blockref };
    // SAFETY: `out` holds a reference to its arena.
    let arena_count = unsafe { raw_use_count(arena) };
    let int32 = Type::int32();
    with_assign_kernel(
        elems(&out),
        scalar(&int32),
        KernelRequest::Strided,
        ErrorMode::Default,
        |kernel| {
            // SAFETY: the kernel holds its own reference to the arena.
            assert_eq!(unsafe { raw_use_count(arena) }, arena_count + 1);
            let base = out.data_ptr() as usize;
            std::thread::scope(|s| {
                for t in 0..THREADS {
                    s.spawn(move || {
                        for round in 0..ROUNDS {
                            let src: Vec<i32> = (0..PER_THREAD)
                                .map(|j| (round * 100_000 + t * PER_THREAD + j) as i32)
                                .collect();
                            for c in (0..PER_THREAD).step_by(CHUNK) {
                                let dst = base + (t * PER_THREAD + c) * 16;
                                // SAFETY: built for Strided, string <- int32; this
                                // thread alone writes elements [t*PER_THREAD, ..)
                                // of `out` (16-byte strings, contiguous).
                                unsafe {
                                    kernel.call_strided(
                                        dst as *mut u8,
                                        16,
                                        &[src[c..].as_ptr().cast()],
                                        &[4],
                                        CHUNK,
                                    )
                                }
                                .unwrap();
                            }
                        }
                    });
                }
            });
        },
    )
    .unwrap();
    // Destroying the kernel gave its reference back.
    // SAFETY: `out` holds a reference to its arena.
    assert_eq!(unsafe { raw_use_count(arena) }, arena_count);
    for i in (0..THREADS * PER_THREAD).step_by(37) {
        let v = out.index(&[i.into()]).unwrap();
        assert_eq!(
            v.as_str().unwrap(),
            ((ROUNDS - 1) * 100_000 + i).to_string()
        );
    }
}

#[test]
fn each_thread_sees_its_own_errors() {
    const ITERS: usize = 2_000;
    let barrier = Barrier::new(THREADS);
    std::thread::scope(|s| {
        for t in 0..THREADS {
            let barrier = &barrier;
            s.spawn(move || {
                for i in 0..ITERS {
                    // A checked cast that overflows with this thread's value.
                    let v = 1000 + (t * ITERS + i) as i32;
                    let e = Array::from(v)
                        .cast("int8", ErrorMode::Overflow)
                        .expect_err("does not fit int8");
                    assert_eq!(e.kind(), ErrorKind::Overflow);
                    assert_eq!(
                        e.message(),
                        format!("int32 value {v} is out of range for int8")
                    );
                    // The slot itself, written and read around a barrier
                    // that every thread passes in between.
                    let mine = Error::index(format!("thread {t} iteration {i}"));
                    set_last_error(&mine);
                    if i % 100 == 0 {
                        barrier.wait();
                    }
                    assert_eq!(last_error().as_ref(), Some(&mine));
                    assert_eq!(take_last_error(), Some(mine));
                    assert_eq!(last_error(), None);
                }
            });
        }
    });
}
