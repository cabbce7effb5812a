//! One scalar semantics, two faces: for every binary function and every
//! reduction dynd and dynd-ops share, on random inputs with zero divisors,
//! `MIN / -1`, overflow and NaN mixed in, the dynd callable on dynd arrays
//! and the dynd-ops expression give the same type and values, or the same
//! error (kind and message).

use dynd::{Array, compute};
use dynd_ops::{Element, Operator, Parallel, Serial, Tensor, div, max, mean, min, prod, sum};
use proptest::prelude::*;
use std::sync::OnceLock;

/// A dynd result: its type and JSON, or its error kind and message.
type Outcome = Result<(String, String), (dynd::ErrorKind, String)>;

fn outcome(r: dynd::Result<Array>) -> Outcome {
    r.map(|a| (a.tp().to_string(), a.to_json()))
        .map_err(|e| (e.kind(), e.message().to_string()))
}

fn parallel() -> &'static Parallel {
    static P: OnceLock<Parallel> = OnceLock::new();
    P.get_or_init(|| Parallel::new(3).unwrap())
}

/// The dynd-ops expression's outcome, the same on the serial and parallel
/// executors.
fn ops_outcome<O: Operator<Shape = [usize; N]> + Clone, const N: usize>(op: O) -> Outcome
where
    O::Elem: dynd_ops::ArrayElement,
{
    let serial = outcome(dynd_ops::to_array(op.clone(), &Serial));
    let par = outcome(dynd_ops::to_array(op, parallel()));
    assert_eq!(serial, par, "serial and parallel differ");
    serial
}

/// Values of `T` that the edge cases are made of, mixed into random ones.
trait Special: Element + dynd_ops::ArrayElement + Arbitrary {
    fn specials() -> Vec<Self>;
    /// Specials whose sums and products do not depend on the order (wrapping
    /// integers: all; floats: no infinities or huge values, as `0 * inf` or
    /// `MAX + MAX - MAX` would depend on it).
    fn exact_specials() -> Vec<Self> {
        Self::specials()
    }
    /// Small values, exact in any order of summation.
    fn small(i: i8) -> Self;
}

macro_rules! int_special {
    ($($t:ty),*) => {$(
        impl Special for $t {
            fn specials() -> Vec<$t> {
                vec![0, 1, <$t>::MIN, <$t>::MAX, <$t>::MAX / 2 + 1, (0 as $t).wrapping_sub(1)]
            }
            fn small(i: i8) -> $t {
                i as $t
            }
        }
    )*};
}
int_special!(i8, i16, i32, i64, u8, u16, u32, u64);

macro_rules! float_special {
    ($($t:ty),*) => {$(
        impl Special for $t {
            fn specials() -> Vec<$t> {
                vec![0.0, -0.0, 1.0, -1.0, <$t>::NAN, <$t>::INFINITY, <$t>::NEG_INFINITY, <$t>::MAX, <$t>::MIN_POSITIVE]
            }
            fn exact_specials() -> Vec<$t> {
                vec![0.0, -0.0, 1.0, -1.0, <$t>::NAN]
            }
            fn small(i: i8) -> $t {
                (i % 8) as $t
            }
        }
    )*};
}
float_special!(f32, f64);

/// A value: often a special one, otherwise random.
fn value<T: Special>() -> impl Strategy<Value = T> {
    let specials = T::specials();
    prop_oneof![
        1 => any::<T>(),
        1 => proptest::sample::select(specials),
    ]
}

/// Two equally long vectors (1 to 40 values).
fn pair<T: Special>() -> impl Strategy<Value = (Vec<T>, Vec<T>)> {
    (1usize..40).prop_flat_map(|n| {
        (
            proptest::collection::vec(value::<T>(), n),
            proptest::collection::vec(value::<T>(), n),
        )
    })
}

/// A vector of small values (exact sums in any order), with specials.
fn small_vec<T: Special>() -> impl Strategy<Value = Vec<T>> {
    proptest::collection::vec(
        prop_oneof![
            4 => any::<i8>().prop_map(T::small),
            1 => proptest::sample::select(T::exact_specials()),
        ],
        1..40,
    )
}

fn tensor<T: Element>(v: &[T]) -> Tensor<T, [usize; 1]> {
    Tensor::from_vec([v.len()], v.to_vec()).unwrap()
}

macro_rules! semantics {
    ($($m:ident: $t:ty;)*) => {$(
        mod $m {
            use super::*;

            proptest! {
                #![proptest_config(ProptestConfig::with_cases(64))]

                #[test]
                fn binary_functions_agree((x, y) in pair::<$t>()) {
                    let (a, b) = (Array::from(x.clone()), Array::from(y.clone()));
                    let (ta, tb) = (tensor(&x), tensor(&y));
                    prop_assert_eq!(outcome(compute::add(&a, &b)), ops_outcome(&ta + &tb), "add");
                    prop_assert_eq!(outcome(compute::subtract(&a, &b)), ops_outcome(&ta - &tb), "subtract");
                    prop_assert_eq!(outcome(compute::multiply(&a, &b)), ops_outcome(&ta * &tb), "multiply");
                    prop_assert_eq!(outcome(compute::divide(&a, &b)), ops_outcome(div(&ta, &tb)), "divide");
                    prop_assert_eq!(outcome(compute::modulo(&a, &b)), ops_outcome(&ta % &tb), "modulo");
                }

                #[test]
                fn reductions_agree(x in small_vec::<$t>(), y in pair::<$t>()) {
                    // Small values: sums are exact in any order, and so are
                    // products of up to 8 of them (|v| <= 7: 7^8 < 2^24, the
                    // float32 mantissa; longer products of floats round, and
                    // the two crates multiply in different orders).
                    let (a, t) = (Array::from(x.clone()), tensor(&x));
                    prop_assert_eq!(outcome(compute::sum(&a, None, false)), ops_outcome(sum(&t)), "sum");
                    let few = &x[..x.len().min(8)];
                    let (a, t) = (Array::from(few.to_vec()), tensor(few));
                    prop_assert_eq!(outcome(compute::prod(&a, None, false)), ops_outcome(prod(&t)), "prod");
                    // Any values: min and max do not depend on the order.
                    let (a, t) = (Array::from(y.0.clone()), tensor(&y.0));
                    prop_assert_eq!(outcome(compute::min(&a, None, false)), ops_outcome(min(&t)), "min");
                    prop_assert_eq!(outcome(compute::max(&a, None, false)), ops_outcome(max(&t)), "max");
                }
            }
        }
    )*};
}

semantics! {
    i8s: i8;
    i16s: i16;
    i32s: i32;
    i64s: i64;
    u8s: u8;
    u16s: u16;
    u32s: u32;
    u64s: u64;
    f32s: f32;
    f64s: f64;
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// The mean of float64 (dynd's mean of float32 is float64, dynd-ops'
    /// keeps float32, so only float64 is shared).
    #[test]
    fn float64_mean_agrees(x in small_vec::<f64>()) {
        let (a, t) = (Array::from(x.clone()), tensor(&x));
        prop_assert_eq!(outcome(compute::mean(&a, None, false)), ops_outcome(mean(&t)));
    }
}

#[test]
fn division_by_zero_and_int8_sums_agree() {
    // Integer division by zero is an error in both (it gave 0 in dynd-ops).
    let a = Array::from(vec![7i32, 1]);
    let z = Array::from(vec![0i32, 1]);
    let (ta, tz) = (tensor(&[7i32, 1]), tensor(&[0i32, 1]));
    let dynd_err = outcome(compute::divide(&a, &z));
    assert_eq!(
        dynd_err.as_ref().unwrap_err().0,
        dynd::ErrorKind::InvalidArgument
    );
    assert_eq!(dynd_err, ops_outcome(div(&ta, &tz)));
    // int8 sums are int64 in both (dynd-ops wrapped in int8).
    let x = vec![100i8, 100, 100];
    let s = ops_outcome(sum(&tensor(&x)));
    assert_eq!(s, Ok(("int64".to_string(), "300".to_string())));
    assert_eq!(s, outcome(compute::sum(&Array::from(x), None, false)));
}
