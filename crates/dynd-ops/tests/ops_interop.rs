//! dynd arrays as operators and outputs, assignment errors, overlapping
//! outputs, executors and tracing.

use crate::common;
use common::{both, executors, set_error};
use dynd::{Array, ErrorKind};
use dynd_ops::*;

#[test]
fn ops_array_view_reads_a_3x4_float64_array() {
    let a = Array::from_json("3 * 4 * float64", "[[1,2,3,4],[5,6,7,8],[9,10,11,12]]").unwrap();
    let v = ArrayView::<f64, [usize; 2]>::new(&a).unwrap();
    assert_eq!(v.sizes(), [3, 4]);
    assert_eq!(v.get([2, 1]), 10.0);
    let t = both(v.clone() * 2.0);
    assert_eq!(t.at([1, 3]), 16.0);
    let back = Tensor::<f64, [usize; 2]>::from_array(&a).unwrap();
    assert_eq!(
        back.as_slice(),
        &(1..=12).map(f64::from).collect::<Vec<_>>()[..]
    );
    // A permuted dynd view has non-C strides; the operator follows them.
    let p = a.permute(&[1, 0]).unwrap();
    let pv = ArrayView::<f64, [usize; 2]>::new(&p).unwrap();
    assert_eq!(both(pv), both(transpose(v)));
    // The view keeps the array alive.
    let v2 = ArrayView::<f64, [usize; 2]>::new(
        &Array::from_json("2 * 2 * float64", "[[1,2],[3,4]]").unwrap(),
    )
    .unwrap();
    assert_eq!(both(v2).as_slice(), &[1.0, 2.0, 3.0, 4.0]);
}

#[test]
fn ops_array_views_check_the_type() {
    let a = Array::from_json("3 * 4 * float64", "[[1,2,3,4],[5,6,7,8],[9,10,11,12]]").unwrap();
    let e = ArrayView::<f32, [usize; 2]>::new(&a).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Type);
    assert!(
        e.to_string().contains("float64") && e.to_string().contains("float32"),
        "{e}"
    );
    assert_eq!(
        ArrayView::<f64, [usize; 3]>::new(&a).unwrap_err().kind(),
        ErrorKind::Type
    );
    assert_eq!(
        ArrayView::<f64, [usize; 1]>::new(&a).unwrap_err().kind(),
        ErrorKind::Type
    );
    let var = Array::from_json("2 * var * int32", "[[1, 2], [3]]").unwrap();
    let e = ArrayView::<i32, [usize; 2]>::new(&var).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Type);
    assert!(e.to_string().contains("var"), "{e}");
    let s = Array::from_json("2 * string", r#"["a", "b"]"#).unwrap();
    assert_eq!(
        ArrayView::<i64, [usize; 1]>::new(&s).unwrap_err().kind(),
        ErrorKind::Type
    );
    let ro = a.read_only();
    assert!(ArrayView::<f64, [usize; 2]>::new(&ro).is_ok());
    let e = ArrayViewMut::<f64, [usize; 2]>::new(&ro).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.to_string().contains("read-only"), "{e}");
}

#[test]
fn ops_results_go_into_dynd_arrays() {
    let x = Array::from_json("4 * int32", "[1, 2, 3, 4]").unwrap();
    let v = ArrayView::<i32, [usize; 1]>::new(&x).unwrap();
    for ex in executors() {
        let r = to_array(v.clone() * v.clone() - 1, ex).unwrap();
        assert_eq!(r.tp().to_string(), "4 * int32");
        assert_eq!(r.to_json(), "[0,3,8,15]");
        let b = gt(v.clone(), scalar(2)).to_array(ex).unwrap();
        assert_eq!(b.tp().to_string(), "4 * bool");
        assert_eq!(b.to_json(), "[false,false,true,true]");
        // Sums of int32 are int64, as dynd's sum (and NumPy's).
        let s = sum(v.clone()).to_array(ex).unwrap();
        assert_eq!(s.tp().to_string(), "int64");
        assert_eq!(s.to_json(), "10");
    }
    // In place, into an existing (permuted) array.
    let out = Array::empty("2 * 3 * float64").unwrap();
    let ot = out.permute(&[1, 0]).unwrap();
    for ex in executors() {
        ArrayViewMut::<f64, [usize; 2]>::new(&ot)
            .unwrap()
            .set(range([3, 2], 0, 1.0, 1.0).unwrap())
            .run(ex)
            .unwrap();
        assert_eq!(out.to_json(), "[[1.0,2.0,3.0],[1.0,2.0,3.0]]");
    }
    let t = Tensor::from_vec([2, 2], vec![1u8, 2, 3, 4]).unwrap();
    assert_eq!(t.to_array().unwrap().to_json(), "[[1,2],[3,4]]");
}

#[test]
fn ops_set_size_mismatch_names_both_shapes() {
    let msg = set_error(
        || {
            let out = Array::empty("3 * 4 * float64").unwrap();
            let src = Array::empty("4 * 4 * float64").unwrap();
            (
                ArrayViewMut::<f64, [usize; 2]>::new(&out).unwrap(),
                ArrayView::<f64, [usize; 2]>::new(&src).unwrap(),
            )
        },
        ErrorKind::Broadcast,
    );
    assert!(msg.contains("[4, 4]") && msg.contains("[3, 4]"), "{msg}");
    for ex in executors() {
        let mut out = Tensor::<f64, [usize; 2]>::zeros([3, 4]);
        let src = Tensor::<f64, [usize; 2]>::full([4, 4], 1.0);
        let e = out.set(&src).run(ex).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Broadcast);
        assert!(
            e.to_string().contains("[4, 4]") && e.to_string().contains("[3, 4]"),
            "{e}"
        );
        assert!(
            out.as_slice().iter().all(|&x| x == 0.0),
            "the output is untouched"
        );
    }
}

#[test]
fn ops_an_output_that_overlaps_its_input_reads_first() {
    for ex in executors() {
        let a = Array::from_json("3 * 3 * int64", "[[1,2,3],[4,5,6],[7,8,9]]").unwrap();
        let r = ArrayView::<i64, [usize; 2]>::new(&a).unwrap();
        let w = ArrayViewMut::<i64, [usize; 2]>::new(&a).unwrap();
        w.set(transpose(r.clone()) + 0).run(ex).unwrap();
        assert_eq!(a.to_json(), "[[1,4,7],[2,5,8],[3,6,9]]");
        // Shifted in place along a row.
        let w = ArrayViewMut::<i64, [usize; 2]>::new(&a).unwrap();
        w.set(shift(r, 1, 1).unwrap()).run(ex).unwrap();
        assert_eq!(a.to_json(), "[[7,1,4],[8,2,5],[9,3,6]]");
    }
}

#[test]
fn ops_rank_zero_and_empty_outputs() {
    let a = common::irregular([3, 3]);
    let mut out = Tensor::<f64, [usize; 0]>::zeros([]);
    for ex in executors() {
        out.set(sum(&a)).run(ex).unwrap();
        assert_eq!(out.at([]), a.as_slice().iter().sum::<f64>());
    }
    assert_eq!(both(scalar::<f64>(2.5) * 2.0).as_slice(), &[5.0]);
    let e = Tensor::<f64, [usize; 3]>::zeros([2, 0, 3]);
    assert_eq!(both(&e + 1.0).sizes(), [2, 0, 3]);
    let mut z = Tensor::<f64, [usize; 2]>::zeros([0, 5]);
    for ex in executors() {
        z.set(fill([0, 5], 1.0)).run(ex).unwrap();
    }
}

#[test]
fn ops_executors_report_threads_and_names() {
    let p = Parallel::new(3).unwrap();
    assert_eq!(p.num_threads(), 3);
    assert_eq!(p.name(), "parallel(3)");
    assert_eq!(Serial.num_threads(), 1);
    assert_eq!(Serial.name(), "serial");
    let hits = std::sync::atomic::AtomicUsize::new(0);
    p.run_tasks(100, &|_| {
        hits.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    });
    assert_eq!(hits.into_inner(), 100);
}

/// A tracing subscriber that records the `op` field of every span, with
/// the thread that opened it.
struct Spans(std::sync::Mutex<Vec<(std::thread::ThreadId, String)>>);

impl tracing::Subscriber for Spans {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, span: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        struct V<'a>(&'a Spans);
        impl tracing::field::Visit for V<'_> {
            fn record_debug(&mut self, f: &tracing::field::Field, v: &dyn std::fmt::Debug) {
                if f.name() == "op" {
                    let me = std::thread::current().id();
                    self.0.0.lock().unwrap().push((me, format!("{v:?}")));
                }
            }
        }
        span.record(&mut V(self));
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, _: &tracing::Event<'_>) {}
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

#[test]
fn ops_runs_open_a_tracing_span_named_after_the_expression() {
    // The process-wide subscriber, not a scoped one: tracing caches each
    // callsite's interest globally, and other tests of this binary run the
    // same callsite on their threads, so a scoped subscriber raced them
    // (the interest cached as "never": a CI flake, twice). A global one is
    // in every callsite's interest from its setting on; the spans of this
    // test's thread are the ones compared.
    let spans = std::sync::Arc::new(Spans(std::sync::Mutex::new(Vec::new())));
    tracing::subscriber::set_global_default(spans.clone())
        .expect("no other test of this binary sets the global subscriber");
    let t = common::t10_12_14();
    let mut out = Tensor::<i64, [usize; 2]>::zeros([120, 14]);
    out.set(lcollapse::<2, _>(permute(&t, [1, 0, 2]).unwrap()))
        .run(&Serial)
        .unwrap();
    let me = std::thread::current().id();
    let got: Vec<String> = spans
        .0
        .lock()
        .unwrap()
        .iter()
        .filter(|(t, _)| *t == me)
        .map(|(_, op)| op.clone())
        .collect();
    assert_eq!(
        got,
        vec!["set(tensor, lcollapse<2>(permute(tensor)))".to_string()]
    );
}

#[test]
fn ops_an_output_whose_parts_share_memory_is_refused() {
    let a = Array::from_json("2 * 2 * int32", "[[1,2],[3,4]]").unwrap();
    for ex in executors() {
        let w1 = ArrayViewMut::<i32, [usize; 2]>::new(&a).unwrap();
        let w2 = ArrayViewMut::<i32, [usize; 2]>::new(&a).unwrap();
        let e = concat(0, w1, w2)
            .unwrap()
            .set(fill([4, 2], 0))
            .run(ex)
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        assert_eq!(a.to_json(), "[[1,2],[3,4]]");
    }
}

/// An executor that calls every task twice, from two threads.
struct Stutter;
impl Executor for Stutter {
    fn name(&self) -> String {
        "stutter".into()
    }
    fn num_threads(&self) -> usize {
        2
    }
    fn run_tasks(&self, n: usize, task: &(dyn Fn(usize) + Sync)) {
        std::thread::scope(|s| {
            s.spawn(|| (0..n).for_each(task));
            s.spawn(|| (0..n).rev().for_each(task));
        });
    }
}

#[test]
fn ops_a_task_runs_once_even_if_an_executor_repeats_it() {
    let n = 3 * TASK_ELEMS;
    let a = Tensor::from_fn([n], |[i]| i as f64);
    let mut out = Tensor::<f64, [usize; 1]>::zeros([n]);
    out.set(&a + 1.0).run(&Stutter).unwrap();
    assert!(
        out.as_slice()
            .iter()
            .enumerate()
            .all(|(i, &x)| x == i as f64 + 1.0)
    );
    let s = sum(&a).eval(&Stutter).unwrap();
    assert_eq!(s.at([]), both(sum(&a)).at([]));
}
