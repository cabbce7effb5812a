//! JSON Lines parse throughput (MB/s of text): records as `var * {x:
//! float64, y: int64, s: string}`, 1M lines (200K with `--quick`), on one
//! thread and on two (the reader splits large inputs at line ends).
//!
//! Line `i` is `{"x": <number i>, "y": i, "s": "r<i mod 100>"}` with the
//! json group's [`number`], a formula that `bench/compare.py` repeats.

use crate::harness::{Ctx, median_time, or_skip};
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

fn parse(ctx: &Ctx, name: &str, pool: &dynd::exec::Executor, count: usize, text: &str) {
    let Some(a) = or_skip(
        ctx,
        name,
        pool.install(|| Array::from_json_lines(TYPE, text)),
    ) else {
        return;
    };
    assert_eq!(a.len().ok(), Some(count));
    let t = pool.install(|| {
        median_time(ctx.runs, || {
            black_box(Array::from_json_lines(TYPE, text).expect("parse"));
        })
    });
    text_row(ctx, name, count, t, text, TYPE);
}

pub fn run(ctx: &Ctx) {
    let count = if ctx.quick { 200_000 } else { 1_000_000 };
    let text = records_lines(count);
    parse(ctx, "json lines records", &ctx.one, count, &text);
    parse(ctx, "json lines records, 2 threads", &ctx.two, count, &text);
    // The same records as one JSON array, for the cost of reading by lines.
    let array = format!("[{}]", text.trim_end().replace('\n', ",\n"));
    let tp = format!("{count} * {{x: float64, y: int64, s: string}}");
    let t = median_time(ctx.runs, || {
        black_box(Array::from_json(tp.as_str(), &array).expect("parse"));
    });
    text_row(ctx, "json array of the same records", count, t, &array, &tp);
}
