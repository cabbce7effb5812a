//! Scalar callables from Rust functions and closures.

use super::Callable;
use super::fixed::{BuildKernel, Fixed};
use crate::error::Result;
use crate::kernels::loops::{Operand, Plan, select};
use crate::kernels::{CKernelBuilder, Kernel, KernelArgs, KernelRef, Strided};
use crate::types::NativeType;
use crate::types::Type;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::Arc;

/// The kernel: calls the function on each element. It is also what builds
/// its callable's kernels: each a clone of it.
struct FnKernel<F, A, R> {
    f: Arc<F>,
    _types: PhantomData<fn(A) -> R>,
}

macro_rules! fn_callable {
    ($n:literal; $($a:ident $i:tt),*) => {
        impl<F, $($a: NativeType,)* R: NativeType> Kernel for FnKernel<F, ($($a,)*), R>
        where
            F: Fn($($a),*) -> Result<R> + Send + Sync + 'static,
        {
            const NSRC: usize = $n;

            unsafe fn single(&self, _k: KernelRef<'_>, dst: *mut u8, src: &[*const u8]) -> Result<()> {
                // SAFETY: each source holds a value of its type and the
                // destination has room for an R (Kernel::single 1).
                unsafe {
                    let r = (self.f)($($a::load(src[$i])),*)?;
                    r.store(dst);
                }
                Ok(())
            }

            unsafe fn strided(&self, _k: KernelRef<'_>, run: Strided<'_>) -> Result<()> {
                let (dst, dst_stride, src, src_stride, count) = run.parts();
                let plan = select(
                    Operand::of::<R>(dst.cast_const(), dst_stride),
                    &[$(Operand::of::<$a>(src[$i], src_stride[$i])),*],
                    count,
                    false,
                );
                if plan == Plan::Contiguous {
                    // A plain slice loop that LLVM can vectorise.
                    // SAFETY: (1) `count` contiguous, aligned elements each,
                    // and the output overlaps no input (the selector checked
                    // both), so the slices do not alias.
                    let out = unsafe { std::slice::from_raw_parts_mut(dst as *mut R, count) };
                    $(
                        // SAFETY: the selector found this source contiguous,
                        // aligned and apart from the output, `count` long.
                        #[allow(non_snake_case)]
                        let $a = unsafe { std::slice::from_raw_parts(src[$i] as *const $a, count) };
                    )*
                    for j in 0..count {
                        out[j] = (self.f)($($a[j]),*)?;
                    }
                    return Ok(());
                }
                for j in 0..count as isize {
                    // SAFETY: element j of each strided range (Kernel::strided 1).
                    unsafe {
                        let r = (self.f)($($a::load(src[$i].offset(j * src_stride[$i]))),*)?;
                        r.store(dst.offset(j * dst_stride));
                    }
                }
                Ok(())
            }
        }

        impl<F, $($a: NativeType,)* R: NativeType> BuildKernel for FnKernel<F, ($($a,)*), R>
        where
            F: Fn($($a),*) -> Result<R> + Send + Sync + 'static,
        {
            unsafe fn instantiate(
                &self,
                ckb: Pin<&mut CKernelBuilder>,
                offset: usize,
                args: KernelArgs<'_>,
            ) -> Result<usize> {
                let k = FnKernel::<F, ($($a,)*), R> { f: self.f.clone(), _types: PhantomData };
                // SAFETY: (1) `offset` is a free slot; the kernel has no
                // children.
                unsafe { ckb.emplace(offset, args.req, k) }
            }
        }
    };
}
fn_callable!(1; A 0);
fn_callable!(2; A 0, B 1);
fn_callable!(3; A 0, B 1, C 2);

impl Callable {
    /// A scalar callable `(A) -> R` from a function.
    ///
    /// ```
    /// use dynd::{Array, callable::Callable};
    /// let square = Callable::from_fn1("square", |x: f64| x * x);
    /// let a = Array::from_json("2 * var * float64", "[[1, 2], [3]]").unwrap();
    /// assert_eq!(square.call(&[&a]).unwrap().to_json(), "[[1.0,4.0],[9.0]]");
    /// ```
    pub fn from_fn1<A: NativeType, R: NativeType>(
        name: &str,
        f: impl Fn(A) -> R + Send + Sync + 'static,
    ) -> Callable {
        Callable::try_from_fn1(name, move |a| Ok(f(a)))
    }

    /// A scalar callable `(A, B) -> R` from a function.
    pub fn from_fn2<A: NativeType, B: NativeType, R: NativeType>(
        name: &str,
        f: impl Fn(A, B) -> R + Send + Sync + 'static,
    ) -> Callable {
        Callable::try_from_fn2(name, move |a, b| Ok(f(a, b)))
    }

    /// A fallible scalar callable `(A) -> R`: an `Err` stops the call.
    pub fn try_from_fn1<A: NativeType, R: NativeType>(
        name: &str,
        f: impl Fn(A) -> Result<R> + Send + Sync + 'static,
    ) -> Callable {
        from_kernel::<_, (A,), R>(name, vec![Type::builtin(A::TYPE)], f)
    }

    /// A fallible scalar callable `(A, B) -> R`.
    pub fn try_from_fn2<A: NativeType, B: NativeType, R: NativeType>(
        name: &str,
        f: impl Fn(A, B) -> Result<R> + Send + Sync + 'static,
    ) -> Callable {
        let args = vec![Type::builtin(A::TYPE), Type::builtin(B::TYPE)];
        from_kernel::<_, (A, B), R>(name, args, f)
    }

    /// A fallible scalar callable `(A, B, C) -> R`.
    pub fn try_from_fn3<A: NativeType, B: NativeType, C: NativeType, R: NativeType>(
        name: &str,
        f: impl Fn(A, B, C) -> Result<R> + Send + Sync + 'static,
    ) -> Callable {
        let args = vec![
            Type::builtin(A::TYPE),
            Type::builtin(B::TYPE),
            Type::builtin(C::TYPE),
        ];
        from_kernel::<_, (A, B, C), R>(name, args, f)
    }
}

/// The callable `name` over the argument types `args` whose kernels call
/// `f` on each element.
fn from_kernel<F, A, R: NativeType>(name: &str, args: Vec<Type>, f: F) -> Callable
where
    FnKernel<F, A, R>: BuildKernel,
{
    let types = std::iter::once(Type::builtin(R::TYPE))
        .chain(args)
        .collect();
    let k = FnKernel {
        f: Arc::new(f),
        _types: PhantomData,
    };
    Callable::new(Fixed::new(name.to_string(), types, k))
}
