//! A device's cache of freed memory (CuPy's memory pool, PyTorch's caching
//! allocator): a block whose last reference goes is kept, by its rounded
//! size, for the next allocation of that size, instead of going back to
//! the driver. `cuMemAlloc` and `cuMemFree` map and unmap pages (and
//! `cuMemFree` waits for the whole device) — for a call like `a + b` over
//! 10⁸ float64 they cost more than the kernel — while a loop of calls
//! asks for the same sizes again and again.
//!
//! Sizes are rounded up to 512 bytes, and to 2 MiB from 1 MiB up, so that
//! near sizes share blocks. A block is reused only for its own rounded
//! size (no splitting: what a block holds is what it was made for). When
//! the driver has no memory left for a new block, every cached block is
//! freed and the allocation tried once more; [`Pool::trim`] frees them on
//! demand (`dynd_cuda::empty_cache`).
//!
//! The pool knows nothing of CUDA: it takes the driver's allocate and free
//! as closures, so its bookkeeping is tested on the host. The runtime
//! waits for the device before a block enters the cache (as `cuMemFree`
//! would have), so no kernel of anyone's, on any stream, still uses a
//! block when it is handed out again.

use std::collections::HashMap;
use std::sync::Mutex;

/// Sizes under this round up to a multiple of [`SMALL_ROUND`].
pub const LARGE: usize = 1 << 20;
/// The rounding of small sizes.
pub const SMALL_ROUND: usize = 512;
/// The rounding of large sizes.
pub const LARGE_ROUND: usize = 2 << 20;

/// The size a request of `bytes` takes from the driver and the cache.
pub fn rounded(bytes: usize) -> usize {
    let bytes = bytes.max(1);
    let r = if bytes < LARGE {
        SMALL_ROUND
    } else {
        LARGE_ROUND
    };
    bytes.div_ceil(r).saturating_mul(r)
}

/// Cached blocks, by rounded size: their device addresses.
#[derive(Debug)]
pub struct Pool {
    free: Mutex<Cached>,
    /// The most bytes the pool keeps; a block past it goes back at once.
    limit: usize,
}

impl Default for Pool {
    fn default() -> Pool {
        Pool::new()
    }
}

#[derive(Debug, Default)]
struct Cached {
    by_size: HashMap<usize, Vec<u64>>,
    bytes: usize,
    blocks: usize,
}

/// What a pool holds: cached bytes and blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stats {
    /// Bytes held in cached blocks (rounded sizes).
    pub bytes: usize,
    /// Cached blocks.
    pub blocks: usize,
}

impl Pool {
    /// An empty pool without a limit.
    pub fn new() -> Pool {
        Pool::with_limit(usize::MAX)
    }

    /// An empty pool that keeps at most `limit` bytes (0: none, every
    /// block goes back to the driver as it is freed).
    pub fn with_limit(limit: usize) -> Pool {
        Pool {
            free: Mutex::default(),
            limit,
        }
    }

    /// The pool the environment asks for: `DYND_CUDA_POOL_LIMIT` bytes
    /// (`0` turns caching off), else no limit.
    ///
    /// # Errors
    /// `InvalidArgument` when the variable is set but not a number of
    /// bytes, naming it and its value.
    pub fn from_env() -> dynd::Result<Pool> {
        Pool::from_setting(std::env::var("DYND_CUDA_POOL_LIMIT").ok().as_deref())
    }

    /// [`Pool::from_env`] of the variable's value (`None`: unset).
    ///
    /// # Errors
    /// As [`Pool::from_env`].
    pub fn from_setting(value: Option<&str>) -> dynd::Result<Pool> {
        match value {
            None => Ok(Pool::new()),
            Some(v) => v
                .trim()
                .parse::<usize>()
                .map(Pool::with_limit)
                .map_err(|_| {
                    dynd::Error::invalid_argument(format!(
                        "DYND_CUDA_POOL_LIMIT must be a number of bytes (0 turns the device \
                     memory pool off), not {v:?}"
                    ))
                }),
        }
    }

    /// A block of at least `bytes`: a cached one of its rounded size, else
    /// a new one from `alloc` (which takes the rounded size). When `alloc`
    /// fails, every cached block is freed through `free` and `alloc` tried
    /// once more; its second error is returned. The block is
    /// `(address, rounded size)`: give both back to [`Pool::release`].
    ///
    /// # Errors
    /// `alloc`'s error, when it fails with nothing left to free.
    pub fn alloc<E>(
        &self,
        bytes: usize,
        alloc: impl Fn(usize) -> Result<u64, E>,
        free: impl Fn(u64),
    ) -> Result<(u64, usize), E> {
        let size = rounded(bytes);
        {
            let mut c = self.lock();
            if let Some(ptr) = c.by_size.get_mut(&size).and_then(Vec::pop) {
                c.bytes -= size;
                c.blocks -= 1;
                return Ok((ptr, size));
            }
        }
        match alloc(size) {
            Ok(p) => Ok((p, size)),
            Err(e) => {
                if self.trim(free) == 0 {
                    return Err(e);
                }
                alloc(size).map(|p| (p, size))
            }
        }
    }

    /// Keeps the block `(ptr, size)` (from [`Pool::alloc`]) for the next
    /// allocation of its size, and returns `true`; `false` when that would
    /// take the pool past its limit: the caller then frees the block. The
    /// caller has made sure nothing uses it.
    #[must_use]
    pub fn release(&self, ptr: u64, size: usize) -> bool {
        let mut c = self.lock();
        if c.bytes.saturating_add(size) > self.limit {
            return false;
        }
        c.by_size.entry(size).or_default().push(ptr);
        c.bytes += size;
        c.blocks += 1;
        true
    }

    /// Frees every cached block through `free`; returns the bytes freed.
    pub fn trim(&self, free: impl Fn(u64)) -> usize {
        let taken = std::mem::take(&mut *self.lock());
        for ptr in taken.by_size.into_values().flatten() {
            free(ptr);
        }
        taken.bytes
    }

    /// The cached bytes and blocks.
    pub fn stats(&self) -> Stats {
        let c = self.lock();
        Stats {
            bytes: c.bytes,
            blocks: c.blocks,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Cached> {
        self.free.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;
    use std::collections::HashSet;

    /// A fake driver: addresses from a counter, at most `cap` bytes live.
    struct Driver {
        next: RefCell<u64>,
        live: RefCell<HashMap<u64, usize>>,
        cap: usize,
        calls: RefCell<usize>,
    }

    impl Driver {
        fn new(cap: usize) -> Driver {
            Driver {
                next: RefCell::new(0x1000),
                live: RefCell::new(HashMap::new()),
                cap,
                calls: RefCell::new(0),
            }
        }
        fn alloc(&self, n: usize) -> Result<u64, String> {
            *self.calls.borrow_mut() += 1;
            let used: usize = self.live.borrow().values().sum();
            if used + n > self.cap {
                return Err(format!("out of memory: {used} + {n} > {}", self.cap));
            }
            let p = *self.next.borrow();
            *self.next.borrow_mut() += n as u64;
            self.live.borrow_mut().insert(p, n);
            Ok(p)
        }
        fn free(&self, p: u64) {
            assert!(
                self.live.borrow_mut().remove(&p).is_some(),
                "double free of {p:#x}"
            );
        }
    }

    #[test]
    fn sizes_round_to_512_bytes_then_2_mib() {
        assert_eq!(rounded(0), 512);
        assert_eq!(rounded(1), 512);
        assert_eq!(rounded(512), 512);
        assert_eq!(rounded(513), 1024);
        assert_eq!(rounded(LARGE - 1), LARGE);
        assert_eq!(rounded(LARGE), 2 << 20);
        assert_eq!(rounded((2 << 20) + 1), 4 << 20);
        assert_eq!(
            rounded(800_000_000),
            800_000_000usize.div_ceil(2 << 20) * (2 << 20)
        );
        // Past the largest multiple: saturated (the driver refuses it).
        assert_eq!(rounded(usize::MAX), usize::MAX);
    }

    #[test]
    fn a_released_block_is_reused_for_its_size_only() {
        let d = Driver::new(1 << 30);
        let pool = Pool::new();
        let (a, sa) = pool.alloc(1000, |n| d.alloc(n), |p| d.free(p)).unwrap();
        assert_eq!(sa, 1024);
        assert!(pool.release(a, sa));
        assert_eq!(
            pool.stats(),
            Stats {
                bytes: 1024,
                blocks: 1
            }
        );
        // Another size: a new block.
        let (b, sb) = pool.alloc(5000, |n| d.alloc(n), |p| d.free(p)).unwrap();
        assert_ne!(a, b);
        assert_eq!(*d.calls.borrow(), 2);
        // The same rounded size: the cached block, no driver call.
        let (c, sc) = pool.alloc(1023, |n| d.alloc(n), |p| d.free(p)).unwrap();
        assert_eq!((c, sc), (a, 1024));
        assert_eq!(*d.calls.borrow(), 2);
        assert_eq!(
            pool.stats(),
            Stats {
                bytes: 0,
                blocks: 0
            }
        );
        assert!(pool.release(b, sb));
        assert!(pool.release(c, sc));
        assert_eq!(pool.trim(|p| d.free(p)), 1024 + 5120);
        assert!(d.live.borrow().is_empty());
        assert_eq!(
            pool.stats(),
            Stats {
                bytes: 0,
                blocks: 0
            }
        );
    }

    #[test]
    fn out_of_memory_frees_the_cache_and_tries_again() {
        let d = Driver::new(8 << 20);
        let pool = Pool::new();
        let (a, sa) = pool.alloc(6 << 20, |n| d.alloc(n), |p| d.free(p)).unwrap();
        assert!(pool.release(a, sa));
        // 4 MiB more does not fit beside the cached 6 MiB: the cache goes.
        let (b, sb) = pool.alloc(4 << 20, |n| d.alloc(n), |p| d.free(p)).unwrap();
        assert_eq!(sb, 4 << 20);
        assert_eq!(pool.stats().blocks, 0);
        assert_eq!(d.live.borrow().len(), 1);
        // Nothing cached and still too big: the driver's error.
        let e = pool
            .alloc(6 << 20, |n| d.alloc(n), |p| d.free(p))
            .unwrap_err();
        assert!(e.contains("out of memory"), "{e}");
        assert!(pool.release(b, sb));
        pool.trim(|p| d.free(p));
        assert!(d.live.borrow().is_empty());
    }

    #[test]
    fn a_limited_pool_keeps_what_fits() {
        let pool = Pool::with_limit(3000);
        assert!(pool.release(0x1000, 1024));
        assert!(pool.release(0x2000, 1536));
        // 1024 more would pass 3000: the caller frees it.
        assert!(!pool.release(0x3000, 1024));
        assert_eq!(
            pool.stats(),
            Stats {
                bytes: 2560,
                blocks: 2
            }
        );
        let off = Pool::with_limit(0);
        assert!(!off.release(0x1000, 512));
        assert_eq!(
            off.stats(),
            Stats {
                bytes: 0,
                blocks: 0
            }
        );
    }

    #[test]
    fn the_limit_comes_from_the_environment() {
        assert_eq!(Pool::from_setting(None).unwrap().limit, usize::MAX);
        assert_eq!(Pool::from_setting(Some(" 4096 ")).unwrap().limit, 4096);
        assert_eq!(Pool::from_setting(Some("0")).unwrap().limit, 0);
        for bad in ["", "-1", "1GB", "lots"] {
            let e = Pool::from_setting(Some(bad)).unwrap_err();
            assert_eq!(e.kind(), dynd::ErrorKind::InvalidArgument);
            assert!(e.message().contains("DYND_CUDA_POOL_LIMIT"), "{e}");
        }
    }

    #[test]
    fn threads_never_get_the_same_block() {
        use std::sync::atomic::{AtomicU64, Ordering};
        let next = AtomicU64::new(0x1000);
        let pool = Pool::new();
        let alloc = |n: usize| Ok::<u64, ()>(next.fetch_add(n as u64, Ordering::SeqCst));
        for _ in 0..4 {
            let (p, s) = pool.alloc(4096, alloc, |_| {}).unwrap();
            assert!(pool.release(p, s));
        }
        let held: Vec<Vec<u64>> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..8)
                .map(|_| {
                    s.spawn(|| {
                        (0..50)
                            .map(|_| pool.alloc(4096, alloc, |_| {}).unwrap().0)
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let all: Vec<u64> = held.into_iter().flatten().collect();
        let distinct: HashSet<u64> = all.iter().copied().collect();
        assert_eq!(distinct.len(), all.len());
    }
}
