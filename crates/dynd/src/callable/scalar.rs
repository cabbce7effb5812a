//! Scalar callables from Rust functions and closures.

use super::{Callable, CallableImpl, no_match};
use crate::error::Result;
use crate::kernels::loops::{Operand, Plan, select};
use crate::kernels::{CKernelBuilder, Kernel, KernelArgs, KernelRef, Strided};
use crate::types::NativeType;
use crate::types::{CallableSignature, Type};
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::Arc;

/// A scalar callable over `N` arguments of fixed Rust types.
struct FnCallable<F, A, R> {
    name: String,
    sig: Type,
    args: Vec<Type>,
    f: Arc<F>,
    _types: PhantomData<fn(A) -> R>,
}

fn signature(args: &[Type], ret: Type) -> Type {
    Type::callable(CallableSignature {
        positional: args.to_vec(),
        keywords: Vec::new(),
        ret,
    })
}

/// The kernel: calls the function on each element.
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

        impl<F, $($a: NativeType,)* R: NativeType> CallableImpl for FnCallable<F, ($($a,)*), R>
        where
            F: Fn($($a),*) -> Result<R> + Send + Sync + 'static,
        {
            fn name(&self) -> &str {
                &self.name
            }
            fn signature(&self) -> &Type {
                &self.sig
            }
            fn resolve(&self, args: &[Type]) -> Result<Type> {
                if args == self.args.as_slice() {
                    Ok(Type::builtin(R::TYPE))
                } else {
                    Err(no_match(&self.name, &self.sig, args))
                }
            }
            /// A closure sees present elements only.
            fn runs_over_missing(&self) -> bool {
                false
            }
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
        let args = vec![Type::builtin(A::TYPE)];
        Callable::new(FnCallable::<_, (A,), R> {
            name: name.to_string(),
            sig: signature(&args, Type::builtin(R::TYPE)),
            args,
            f: Arc::new(f),
            _types: PhantomData,
        })
    }

    /// A fallible scalar callable `(A, B) -> R`.
    pub fn try_from_fn2<A: NativeType, B: NativeType, R: NativeType>(
        name: &str,
        f: impl Fn(A, B) -> Result<R> + Send + Sync + 'static,
    ) -> Callable {
        let args = vec![Type::builtin(A::TYPE), Type::builtin(B::TYPE)];
        Callable::new(FnCallable::<_, (A, B), R> {
            name: name.to_string(),
            sig: signature(&args, Type::builtin(R::TYPE)),
            args,
            f: Arc::new(f),
            _types: PhantomData,
        })
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
        Callable::new(FnCallable::<_, (A, B, C), R> {
            name: name.to_string(),
            sig: signature(&args, Type::builtin(R::TYPE)),
            args,
            f: Arc::new(f),
            _types: PhantomData,
        })
    }
}
