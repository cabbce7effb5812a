//! Type inference from JSON and JSON Lines (DESIGN §8's rules): the
//! examples, conflicts, and a property test that the inferred type reads
//! the text it came from.

use dynd::{Array, ErrorKind, infer_type, infer_type_lines};
use proptest::prelude::*;

#[test]
fn design_examples() {
    for (json, want) in [
        ("[[1,2],null,[3,4]]", "3 * ?2 * int64"),
        ("[[1,2],[3]]", "2 * var * int64"),
        ("[[1,2],[3,4]]", "2 * 2 * int64"),
        ("[1, 2.5, null]", "3 * ?float64"),
        ("[1, 2, 3]", "3 * int64"),
        ("[true, null]", "2 * ?bool"),
        (r#"["a", "b"]"#, "2 * string"),
        (
            r#"[{"a": 1, "b": "x"}, {"b": "y", "a": 2.5}, {"a": 3, "c": [true]}]"#,
            "3 * {a: float64, b: ?string, c: ?1 * bool}",
        ),
        (r#"[{"a": null}, {"a": [1]}]"#, "2 * {a: ?1 * int64}"),
        ("[[[1], [2, 3]], [[4]]]", "2 * var * var * int64"),
        ("[[[1], [2]], [[4], [5]]]", "2 * 2 * 1 * int64"),
        ("[NaN, Infinity, -1]", "3 * float64"),
        ("[[], [1]]", "2 * var * int64"),
        (r#"{"a": 1}"#, "{a: int64}"),
        ("null", "?float64"),
        ("[{}, {}]", "2 * {}"),
        ("[]", "0 * float64"),
        ("[[], []]", "2 * 0 * float64"),
        ("[null]", "1 * ?float64"),
        ("5", "int64"),
        ("[true, false]", "2 * bool"),
        ("[9223372036854775807, 9223372036854775808]", "2 * float64"),
    ] {
        let t = infer_type(json).unwrap_or_else(|e| panic!("{json}: {e}"));
        assert_eq!(t.to_string(), want, "{json}");
        // The text reads under its type.
        Array::from_json(&t, json).unwrap_or_else(|e| panic!("{json} as {t}: {e}"));
    }
}

#[test]
fn lines_give_n_star_t() {
    let text =
        "{\"name\": \"a\", \"n\": 1}\r\n\n{\"name\": \"b\", \"n\": null}\n{\"name\": \"c\"}\n";
    let t = infer_type_lines(text).unwrap();
    assert_eq!(t.to_string(), "3 * {name: string, n: ?int64}");
    let a = Array::from_json_lines(&t, text).unwrap();
    assert_eq!(
        a.to_json(),
        r#"[{"name":"a","n":1},{"name":"b","n":null},{"name":"c","n":null}]"#
    );
    assert_eq!(infer_type_lines("").unwrap().to_string(), "0 * float64");
    assert_eq!(
        infer_type_lines("[1]\n[2, 3]\n").unwrap().to_string(),
        "2 * var * int64"
    );
}

#[test]
fn conflicts_and_bad_json_are_errors() {
    let cases: &[(&str, bool, ErrorKind, &str)] = &[
        (
            r#"[{"name": "a"}, {"name": "b"}, {"name": "c"}, {"name": 4}]"#,
            false,
            ErrorKind::Type,
            "at [3].name a number where earlier values are strings",
        ),
        (
            "[1, [2]]",
            false,
            ErrorKind::Type,
            "at [1] a list where earlier values are numbers",
        ),
        (
            "[[1], {\"a\": 1}]",
            false,
            ErrorKind::Type,
            "at [1] an object where earlier values are lists",
        ),
        (
            "[true, 1]",
            false,
            ErrorKind::Type,
            "at [1] a number where earlier values are booleans",
        ),
        (
            "{\"x\": [1]}\n{\"x\": [\"s\"]}\n",
            true,
            ErrorKind::Type,
            "at [1].x[0] a string where earlier values are numbers (JSON line 2, column 8)",
        ),
        ("[1, 2", false, ErrorKind::Parse, "JSON line 1, column 6"),
        ("[1, 2] x", false, ErrorKind::Parse, "unexpected text"),
        ("[01]", false, ErrorKind::Parse, "malformed number"),
        (
            r#"[{"a": 1, "a": 2}]"#,
            false,
            ErrorKind::Parse,
            "duplicate key",
        ),
        ("[\"a\\q\"]", false, ErrorKind::Parse, "invalid escape"),
        ("1\n2 3\n", true, ErrorKind::Parse, "JSON line 2, column 3"),
        ("[1,\n2]\n", true, ErrorKind::Parse, "JSON line 1, column 4"),
    ];
    for (text, lines, kind, want) in cases {
        let e = if *lines {
            infer_type_lines(text).unwrap_err()
        } else {
            infer_type(text).unwrap_err()
        };
        assert_eq!(e.kind(), *kind, "{text:?}: {e}");
        assert!(e.message().contains(want), "{text:?}: {e}");
    }
    // Deep nesting is an error, not a stack overflow.
    let deep = "[".repeat(100_000);
    assert_eq!(infer_type(&deep).unwrap_err().kind(), ErrorKind::Parse);
}

/// A shape of JSON values to generate.
#[derive(Debug, Clone)]
enum Gen {
    Bool,
    Int,
    Float,
    Str,
    /// A list of this many items.
    Fixed(usize, Box<Gen>),
    /// A list of 0 to 3 items.
    Var(Box<Gen>),
    Object(Vec<(String, Gen)>),
    /// Sometimes null (and, as a field, sometimes absent).
    Opt(Box<Gen>),
}

fn gen_strategy() -> impl Strategy<Value = Gen> {
    let leaf = prop_oneof![
        Just(Gen::Bool),
        Just(Gen::Int),
        Just(Gen::Float),
        Just(Gen::Str)
    ];
    leaf.prop_recursive(4, 24, 4, |inner| {
        prop_oneof![
            (0usize..4, inner.clone()).prop_map(|(n, g)| Gen::Fixed(n, Box::new(g))),
            inner.clone().prop_map(|g| Gen::Var(Box::new(g))),
            prop::collection::vec(inner.clone(), 0..4).prop_map(|gs| {
                Gen::Object(
                    gs.into_iter()
                        .enumerate()
                        .map(|(i, g)| (["a", "b c", "é", "d"][i].to_string(), g))
                        .collect(),
                )
            }),
            inner.prop_map(|g| match g {
                Gen::Opt(_) => g,
                g => Gen::Opt(Box::new(g)),
            }),
        ]
    })
}

/// A small deterministic random source (the property's seed drives it).
struct Rng(u64);

impl Rng {
    fn next(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n.max(1)
    }
}

/// Writes one random value of `g` as JSON.
fn write_value(g: &Gen, r: &mut Rng, out: &mut String) {
    match g {
        Gen::Bool => out.push_str(if r.next(2) == 0 { "true" } else { "false" }),
        Gen::Int => out.push_str(&(r.next(2001) as i64 - 1000).to_string()),
        // Always with a fraction, so the position stays float64.
        Gen::Float => out.push_str(&format!("{}.25", r.next(200) as i64 - 100)),
        Gen::Str => {
            let s = ["", "x", "q\"uote", "ünï", "tab\t", "a b"][r.next(6) as usize];
            out.push_str(&format!("{s:?}"));
        }
        Gen::Fixed(n, e) => write_list(e, *n, r, out),
        Gen::Var(e) => {
            let n = r.next(4) as usize;
            write_list(e, n, r, out)
        }
        Gen::Object(fields) => {
            out.push('{');
            let mut first = true;
            for (name, f) in fields {
                if matches!(f, Gen::Opt(_)) && r.next(4) == 0 {
                    continue;
                }
                if !first {
                    out.push(',');
                }
                first = false;
                out.push_str(&format!("{name:?}:"));
                write_value(f, r, out);
            }
            out.push('}');
        }
        Gen::Opt(v) => {
            if r.next(3) == 0 {
                out.push_str("null");
            } else {
                write_value(v, r, out);
            }
        }
    }
}

fn write_list(e: &Gen, n: usize, r: &mut Rng, out: &mut String) {
    out.push('[');
    for i in 0..n {
        if i > 0 {
            out.push_str(", ");
        }
        write_value(e, r, out);
    }
    out.push(']');
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// For random JSON values of a random shape, the inferred type reads
    /// the text, the array prints JSON that infers the same type and reads
    /// back equal, and JSON Lines of the same values infer the same type.
    #[test]
    fn inferred_type_reads_the_text(g in gen_strategy(), n in 0usize..6, seed in 1u64..u64::MAX) {
        let mut r = Rng(seed);
        let values: Vec<String> = (0..n)
            .map(|_| {
                let mut s = String::new();
                write_value(&g, &mut r, &mut s);
                s
            })
            .collect();
        let text = format!("[{}]", values.join(", "));
        let t = infer_type(&text).map_err(|e| TestCaseError::fail(format!("{text}: {e}")))?;
        let a = Array::from_json(&t, &text)
            .map_err(|e| TestCaseError::fail(format!("{text} as {t}: {e}")))?;
        let out = a.to_json();
        prop_assert_eq!(infer_type(&out).map(|t| t.to_string()).ok(), Some(t.to_string()), "{}", out);
        let b = Array::from_json(&t, &out).map_err(|e| TestCaseError::fail(format!("{out}: {e}")))?;
        prop_assert_eq!(b.to_json(), out.clone());

        let lines = values.join("\n");
        let tl = infer_type_lines(&lines).map_err(|e| TestCaseError::fail(format!("{lines}: {e}")))?;
        prop_assert_eq!(tl.to_string(), t.to_string());
        let c = Array::from_json_lines(&tl, &lines)
            .map_err(|e| TestCaseError::fail(format!("{lines} as {tl}: {e}")))?;
        prop_assert_eq!(c.to_json(), out);
    }
}
