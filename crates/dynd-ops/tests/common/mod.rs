//! Helpers shared by the test files: run every expression on the serial
//! executor and on parallel executors of 2 and 3 threads, and insist on
//! identical bits.

#![allow(dead_code)]

use dynd_ops::{Element, Executor, Expr, LvalueOp, Operator, Parallel, Serial, Shape, Tensor};
use std::sync::OnceLock;

/// The executors every test runs on.
pub fn executors() -> [&'static dyn Executor; 3] {
    static P2: OnceLock<Parallel> = OnceLock::new();
    static P3: OnceLock<Parallel> = OnceLock::new();
    [
        &Serial,
        P2.get_or_init(|| Parallel::new(2).unwrap()),
        P3.get_or_init(|| Parallel::new(3).unwrap()),
    ]
}

/// The elements' bits, as text (NaN and -0.0 included).
pub fn bits<T: Element>(t: &[T]) -> String {
    format!("{t:?}")
}

/// Evaluates `op` on every executor; asserts that all agree bit for bit;
/// returns the serial result.
pub fn both<O: Operator + Clone>(op: O) -> Tensor<O::Elem, O::Shape> {
    let mut first: Option<Tensor<O::Elem, O::Shape>> = None;
    for ex in executors() {
        let t = Expr::new(op.clone())
            .eval(ex)
            .unwrap_or_else(|e| panic!("{} on {}: {e}", op.name(), ex.name()));
        match &first {
            None => first = Some(t),
            Some(f) => {
                assert_eq!(f.sizes(), t.sizes());
                assert_eq!(
                    bits(f.as_slice()),
                    bits(t.as_slice()),
                    "{} differs between serial and {}",
                    op.name(),
                    ex.name()
                );
            }
        }
    }
    first.unwrap()
}

/// Runs `make(out) = rhs` on every executor into a fresh copy of `init`;
/// asserts that all agree; returns the serial result.
pub fn both_set<T, S, F>(init: &Tensor<T, S>, run: F) -> Tensor<T, S>
where
    T: Element,
    S: Shape,
    F: Fn(&mut Tensor<T, S>, &dyn Executor),
{
    let mut first: Option<Tensor<T, S>> = None;
    for ex in executors() {
        let mut t = init.clone();
        run(&mut t, ex);
        match &first {
            None => first = Some(t),
            Some(f) => assert_eq!(
                bits(f.as_slice()),
                bits(t.as_slice()),
                "differs on {}",
                ex.name()
            ),
        }
    }
    first.unwrap()
}

/// Asserts `lhs.set(rhs).run(ex)` is an error of `kind` on every executor
/// and returns the message.
pub fn set_error<L, R>(make: impl Fn() -> (L, R), kind: dynd::ErrorKind) -> String
where
    L: LvalueOp,
    R: Operator<Elem = L::Elem, Shape = L::Shape>,
{
    let mut msg = String::new();
    for ex in executors() {
        let (l, r) = make();
        let e = l.set(r).run(ex).expect_err("expected an error");
        assert_eq!(e.kind(), kind, "{e}");
        msg = e.to_string();
    }
    msg
}

/// `t(n, m, k) = n * 168 + m * 14 + k` of the acceptance tests.
pub fn t10_12_14() -> Tensor<i64, [usize; 3]> {
    Tensor::from_fn([10, 12, 14], |[n, m, k]| (n * 168 + m * 14 + k) as i64)
}

/// A float tensor with distinct, irregular values.
pub fn irregular<S: Shape>(sizes: S) -> Tensor<f64, S> {
    let mut i = 0u64;
    Tensor::from_fn(sizes, |_| {
        i += 1;
        ((i.wrapping_mul(2654435761) % 1000) as f64) / 7.0 - 50.0
    })
}
