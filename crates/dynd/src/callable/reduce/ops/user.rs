//! User reductions from a binary ckernel.

use super::*;

/// A user reduction: the reduction kernel's children are the binary
/// kernel `(T, T) -> T`, built for Single (child 0) and for Strided
/// (child 1). Values are copied bytewise (`T` is plain data: no arrmeta,
/// no blockrefs). The kernels are called in place — the destination is
/// also the first source — as NumPy calls a ufunc's loop in a reduction.
pub(in crate::callable::reduce) struct UserOp {
    /// Bytes of one `T`.
    pub size: usize,
    /// The identity's bytes, converted to `T`.
    pub identity: Option<Box<[u8]>>,
}

impl UserOp {
    /// Copies one value.
    ///
    /// # Safety
    /// 1. `src` is readable and `dst` writable for `self.size` bytes.
    unsafe fn copy(&self, dst: *mut u8, src: *const u8) {
        // SAFETY: (1); `copy` allows overlap.
        unsafe { std::ptr::copy(src, dst, self.size) };
    }

    /// The child kernel `i`.
    ///
    /// # Safety
    /// 1. `cx` is the context of the kernel that owns this op (its
    ///    children are the op's two kernels).
    unsafe fn child<'a>(&self, cx: Ctx<'a>, i: usize) -> Result<KernelRef<'a>> {
        let offset = cx.children.get(i).copied().unwrap_or(0);
        // SAFETY: (1) a child offset of the kernel `cx.k` (0 gives an
        // empty kernel whose calls fail).
        Ok(unsafe { cx.k.child(offset) })
    }
}

impl ReduceOp for UserOp {
    fn has_identity(&self) -> bool {
        self.identity.is_some()
    }

    unsafe fn init(&self, r: Span<'_>) -> Result<()> {
        for j in 0..r.n {
            // SAFETY: element j of each range, `size` bytes each.
            unsafe { self.copy(r.dst_at(j), r.src_at(j)) };
        }
        Ok(())
    }

    unsafe fn accumulate(&self, r: Span<'_>) -> Result<()> {
        let Span {
            cx,
            dst,
            ds,
            src,
            ss,
            n,
            ..
        } = r;
        // SAFETY: child 1 was built for Strided over (T, T) -> T; element j
        // of dst is both the destination and the first source.
        unsafe {
            self.child(cx, 1)?
                .call_strided(dst, ds, &[dst.cast_const(), src], &[ds, ss], n)
        }
    }

    unsafe fn fold_nonempty(&self, r: Span<'_>, first: bool) -> Result<()> {
        // SAFETY: the caller's promises.
        let single = unsafe { self.child(r.cx, 0) }?;
        let mut j = 0;
        if first {
            // SAFETY: element 0 of src; dst is writable.
            unsafe { self.copy(r.dst, r.src) };
            j = 1;
        }
        while j < r.n {
            // SAFETY: child 0 was built for Single over (T, T) -> T; dst
            // holds a T and is the destination and the first source.
            unsafe { single.call_single(r.dst, &[r.dst.cast_const(), r.src_at(j)]) }?;
            j += 1;
        }
        Ok(())
    }

    unsafe fn fill(&self, r: Span<'_>) -> Result<()> {
        let Some(id) = &self.identity else {
            return Err(no_identity());
        };
        for j in 0..r.n {
            // SAFETY: element j of dst; the identity has `size` bytes.
            unsafe { self.copy(r.dst_at(j), id.as_ptr()) };
        }
        Ok(())
    }
}
