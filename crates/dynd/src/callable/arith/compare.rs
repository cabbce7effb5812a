//! Comparisons and the two-argument logical functions, on numbers (in
//! their common type) and on text.
//!
//! - Numbers compare by value in the common type: false < true; floats by
//!   IEEE 754 (NaN is unordered: every comparison with it is false except
//!   `not_equal`, which is true); float16 through float32. Complex numbers
//!   have `equal` and `not_equal` only: ordering them is a `Type` error.
//! - `string` with `string`, and `bytes` with `bytes`, compare
//!   lexicographically by bytes. For utf-8 that is code point order, and a
//!   proper prefix is smaller: `"abcd" < "abcde"`.
//! - `logical_and` and `logical_or` take each side's truthiness
//!   ([`crate::kernels::mask::Truthy`]) and give a bool.

use super::kernels::{Binary, BinaryOp, CoreKernel, core};
use crate::callable::{Callable, CallableImpl, no_match};
use crate::error::Result;
use crate::kernels::mask::Truthy;
use crate::kernels::{CKernelBuilder, Kernel, KernelArgs, KernelRef};
use crate::layout::{StringData, string_bytes};
use crate::types::{BuiltinType, CallableSignature, NativeType, Type};
use crate::{for_each_native, with_native};
use num_complex::Complex;
use std::marker::PhantomData;
use std::pin::Pin;

/// One comparison, for any comparable values.
pub(crate) trait Cmp: Send + Sync + 'static {
    /// `a` compared with `b` by this comparison.
    fn test<K: PartialOrd + ?Sized>(a: &K, b: &K) -> bool;
    /// The same comparison in CUDA C, of `a` and `b` (DESIGN §14).
    const CUDA: &'static str;
}

macro_rules! comparisons {
    ($($name:ident => $e:tt),*) => {$(
        /// A comparison.
        pub(crate) struct $name;
        impl Cmp for $name {
            #[inline(always)]
            fn test<K: PartialOrd + ?Sized>(a: &K, b: &K) -> bool { a $e b }
            const CUDA: &'static str = concat!("a ", stringify!($e), " b");
        }
    )*};
}
comparisons!(Less => <, LessEqual => <=, Equal => ==, NotEqual => !=, Greater => >, GreaterEqual => >=);

/// What a number compares as.
pub(crate) trait Key: NativeType {
    /// The comparable form.
    type K: PartialOrd;
    /// The comparable form of the value.
    fn key(self) -> Self::K;
}

macro_rules! own_key {
    ($($t:ty),*) => {$(
        impl Key for $t {
            type K = $t;
            #[inline(always)]
            fn key(self) -> $t { self }
        }
    )*};
}
for_each_native!(bool signed unsigned ieee => own_key);

macro_rules! half_key {
    ($($t:ty),*) => {$(
        impl Key for $t {
            type K = f32;
            #[inline(always)]
            fn key(self) -> f32 {
                self.to_f32()
            }
        }
    )*};
}
for_each_native!(half => half_key);

/// Complex numbers compare as the pair of their parts. Only `equal` and
/// `not_equal` are offered for them ([`compare`]), where this is exactly
/// complex equality.
impl<F: PartialOrd + NativeType> Key for Complex<F>
where
    Complex<F>: NativeType,
{
    type K = (F, F);
    #[inline(always)]
    fn key(self) -> (F, F) {
        (self.re, self.im)
    }
}

/// A comparison of numbers.
pub(crate) struct Compare<C>(PhantomData<fn() -> C>);

impl<T: Key, C: Cmp> BinaryOp<T> for Compare<C> {
    type Out = bool;
    #[inline(always)]
    fn apply(a: T, b: T) -> bool {
        C::test(&a.key(), &b.key())
    }
    const CUDA: &'static str = C::CUDA;
}

/// `logical_and`.
pub(crate) struct And;
/// `logical_or`.
pub(crate) struct Or;

impl<T: Truthy> BinaryOp<T> for And {
    type Out = bool;
    #[inline(always)]
    fn apply(a: T, b: T) -> bool {
        a.truthy() & b.truthy()
    }
    const CUDA: &'static str = "(a != (T)0) && (b != (T)0)";
}
impl<T: Truthy> BinaryOp<T> for Or {
    type Out = bool;
    #[inline(always)]
    fn apply(a: T, b: T) -> bool {
        a.truthy() | b.truthy()
    }
    const CUDA: &'static str = "(a != (T)0) || (b != (T)0)";
}

/// The ordering comparison `C`'s kernel for `c` (no complex).
fn order<C: Cmp>(c: BuiltinType) -> Option<CoreKernel> {
    with_native!(c, bool signed unsigned half ieee => |T| core::<Binary<T, Compare<C>>>())
}

/// The equality comparison `C`'s kernel for `c` (every numeric type).
fn equality<C: Cmp>(c: BuiltinType) -> Option<CoreKernel> {
    with_native!(c, |T| core::<Binary<T, Compare<C>>>())
}

functions! {
    /// `a < b` elementwise: numbers in their common type, strings and
    /// bytes lexicographically (`"abcd" < "abcde"`).
    ///
    /// ```
    /// use dynd::{Array, compute};
    /// let a = Array::from(vec!["abcd", "b"]);
    /// let b = Array::from(vec!["abcde", "a"]);
    /// assert_eq!(compute::less(&a, &b).unwrap().to_json(), "[true,false]");
    /// ```
    fn less(a, b) Comparison (NO_ORDER) [Less] => order::<Less>;
    /// `a <= b` elementwise (as [`less`]).
    fn less_equal(a, b) Comparison (NO_ORDER) [LessEqual] => order::<LessEqual>;
    /// `a == b` elementwise (as [`less`]; complex numbers too).
    fn equal(a, b) Comparison [Equal] => equality::<Equal>;
    /// `a != b` elementwise (as [`equal`]; NaN is not equal to itself).
    fn not_equal(a, b) Comparison [NotEqual] => equality::<NotEqual>;
    /// `a > b` elementwise (as [`less`]).
    fn greater(a, b) Comparison (NO_ORDER) [Greater] => order::<Greater>;
    /// `a >= b` elementwise (as [`less`]).
    fn greater_equal(a, b) Comparison (NO_ORDER) [GreaterEqual] => order::<GreaterEqual>;
    /// `a and b` elementwise, on truthiness (non-zero is true); a bool
    /// result.
    ///
    /// ```
    /// use dynd::{Array, compute};
    /// let a = Array::from(vec![0i32, 2, 3]);
    /// let b = Array::from(vec![1.5f64, 0.0, -1.0]);
    /// assert_eq!(compute::logical_and(&a, &b).unwrap().to_json(), "[false,false,true]");
    /// ```
    fn logical_and(a, b) Logical {KleeneAnd} => |c| with_native!(c, |T| core::<Binary<T, And>>());
    /// `a or b` elementwise, on truthiness; a bool result.
    fn logical_or(a, b) Logical {KleeneOr} => |c| with_native!(c, |T| core::<Binary<T, Or>>());
}

/// What ordering a complex number is refused with.
const NO_ORDER: &str = ": complex numbers have no order (equal and not_equal work)";

// ------------------------------------------------------------------- text

/// Compares two `string`s (or two `bytes`) by their bytes.
struct TextKernel<C>(PhantomData<fn() -> C>);

impl<C: Cmp> Kernel for TextKernel<C> {
    const NSRC: usize = 2;

    unsafe fn single(&self, _k: KernelRef<'_>, dst: *mut u8, src: &[*const u8]) -> Result<()> {
        // SAFETY: (1) each source is string or bytes data — `{begin, end}`
        // over bytes the arrays being read keep alive — and `dst` is a
        // writable bool.
        unsafe {
            let a: StringData = std::ptr::read_unaligned(src[0].cast());
            let b: StringData = std::ptr::read_unaligned(src[1].cast());
            *dst = C::test(string_bytes(a), string_bytes(b)) as u8;
        }
        Ok(())
    }
}

/// The overload `(T, T) -> bool` of comparison `C` for a text type `T`
/// (`string` or `bytes`).
pub(crate) struct TextCompare<C> {
    name: String,
    tp: Type,
    sig: Type,
    _cmp: PhantomData<fn() -> C>,
}

impl<C: Cmp> TextCompare<C> {
    /// The callable comparing two `tp` values (string or bytes) by `C`,
    /// named `name`.
    pub(crate) fn callable(name: &str, tp: Type) -> Callable {
        Callable::new(TextCompare::<C>::new(name, tp))
    }

    fn new(name: &str, tp: Type) -> TextCompare<C> {
        let sig = Type::callable(CallableSignature {
            positional: vec![tp.clone(), tp.clone()],
            keywords: Vec::new(),
            ret: Type::bool(),
        });
        TextCompare {
            name: name.to_string(),
            tp,
            sig,
            _cmp: PhantomData,
        }
    }
}

impl<C: Cmp> CallableImpl for TextCompare<C> {
    fn name(&self) -> &str {
        &self.name
    }

    fn signature(&self) -> &Type {
        &self.sig
    }

    fn resolve(&self, args: &[Type]) -> Result<Type> {
        if args.len() == 2 && args.iter().all(|a| *a == self.tp) {
            Ok(Type::bool())
        } else {
            Err(no_match(&self.name, &self.sig, args))
        }
    }

    unsafe fn instantiate(
        &self,
        ckb: Pin<&mut CKernelBuilder>,
        offset: usize,
        args: KernelArgs<'_>,
    ) -> Result<usize> {
        // SAFETY: (1) `offset` is free (CallableImpl::instantiate 1); the
        // kernel has no children.
        unsafe { ckb.emplace(offset, args.req, TextKernel::<C>(PhantomData)) }
    }
}
