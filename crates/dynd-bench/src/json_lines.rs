//! JSON Lines parse throughput (MB/s of text): records as `var * {x:
//! float64, y: int64, s: string}`, 1M lines (200K with `--quick`), on one
//! thread and on two (on each count of `--threads`; the reader splits
//! large inputs at line ends).
//!
//! Line `i` is `{"x": <number i>, "y": i, "s": "r<i mod 100>"}` with the
//! json group's [`number`], a formula that `bench/compare.py` repeats.

use crate::harness::{Ctx, Measurement, median_time, median_times_threads, or_skip};
use crate::json_parse::{number, text_row};
use dynd::Array;
use std::hint::black_box;

/// The text: `count` lines, each ended by `\n`.
pub fn records_lines(count: usize) -> String {
    let mut s = String::with_capacity(count * 40);
    for i in 0..count {
        s.push_str(&format!(
            "{{\"x\": {}, \"y\": {i}, \"s\": \"r{}\"}}\n",
            number(i),
            i % 100
        ));
    }
    s
}

const TYPE: &str = "var * {x: float64, y: int64, s: string}";

fn parse(ctx: &Ctx, name: &str, count: usize, text: &str) {
    let Some(a) = or_skip(ctx, name, Array::from_json_lines(TYPE, text)) else {
        return;
    };
    assert_eq!(a.len().ok(), Some(count));
    let counts = ctx.counts(&[1, 2]);
    for &c in &counts[1..] {
        let parsed = dynd::exec::with_threads(c, || Array::from_json_lines(TYPE, text));
        assert_eq!(
            parsed.ok().and_then(|p| p.len().ok()),
            Some(count),
            "{c} threads"
        );
    }
    let t = median_times_threads(ctx.runs, &counts, || {
        black_box(Array::from_json_lines(TYPE, text).expect("parse"));
    });
    // The notes of json_parse::text_row.
    let note = |t: std::time::Duration| {
        let mbps = text.len() as f64 / t.as_secs_f64() / 1e6;
        format!("{mbps:.0} MB/s of text; {} bytes; type {TYPE}", text.len())
    };
    ctx.scaling_rows_noted(name, &counts, &t, note, |name, t| {
        Measurement::new(name, count, t, text.len())
    });
}

pub fn run(ctx: &Ctx) {
    let count = if ctx.quick { 200_000 } else { 1_000_000 };
    let text = records_lines(count);
    parse(ctx, "json lines records", count, &text);
    // The same records as one JSON array, for the cost of reading by lines.
    let array = format!("[{}]", text.trim_end().replace('\n', ",\n"));
    let tp = format!("{count} * {{x: float64, y: int64, s: string}}");
    let t = median_time(ctx.runs, || {
        black_box(Array::from_json(tp.as_str(), &array).expect("parse"));
    });
    text_row(ctx, "json array of the same records", count, t, &array, &tp);
}
