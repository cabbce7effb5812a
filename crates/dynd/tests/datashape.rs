//! Datashape parsing and printing: canonical text round-trips exactly,
//! non-canonical text prints canonically, malformed text is a parse error
//! naming its line and column, and no input makes the parser panic.

use dynd::types::{BuiltinType, CallableSignature, Encoding, SymbolicDim, Type, TypeKind};
use dynd::{Error, ErrorKind};
use proptest::prelude::*;
use std::collections::HashSet;

fn parse(text: &str) -> Type {
    Type::parse(text).unwrap_or_else(|e| panic!("{text:?} should parse: {e}"))
}

fn parse_err(text: &str) -> Error {
    match Type::parse(text) {
        Ok(t) => panic!("{text:?} should not parse, but gave {t}"),
        Err(e) => e,
    }
}

// ---------------------------------------------------------------------------
// Canonical text round-trips exactly
// ---------------------------------------------------------------------------

const CANONICAL: &[&str] = &[
    // builtins
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "int128",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "uint128",
    "float16",
    "float32",
    "float64",
    "complex[float32]",
    "complex[float64]",
    "void",
    // strings and bytes
    "string",
    "bytes",
    "char",
    "fixed_string[10]",
    "fixed_string[1, 'ascii']",
    "fixed_string[10, 'utf16']",
    "fixed_string[10, 'utf32']",
    "fixed_string[3, 'ucs2']",
    "fixed_bytes[4]",
    "fixed_bytes[8, align=4]",
    "fixed_bytes[32, align=16]",
    // dims
    "3 * int32",
    "0 * int32",
    "var * float64",
    "3 * var * {x: int32, name: string}",
    "2 * 3 * 4 * 5 * uint8",
    "var * var * var * string",
    // options and pointers
    "?int16",
    "?string",
    "?bytes",
    "?char",
    "?complex[float64]",
    "?pointer[int32]",
    "pointer[3 * int32]",
    "pointer[pointer[var * string]]",
    "3 * ?bool",
    // structs
    "{}",
    "{x: int32}",
    "{x: int32, 'Quoted Name!': float64}",
    "{'': int8, '1abc': int8, 'it\\'s': int8, 'back\\\\slash': int8}",
    "{'tab\\there': int8, 'new\\nline': int8, 'ctl\\u0001': int8, 'é': int8}",
    "{var: int32, int32: float64, Fixed: bool, _x1: int8}",
    "{a: {b: {c: 2 * (int32, ?float64)}}}",
    // tuples
    "()",
    "(int32)",
    "(int32, float64)",
    "((), {}, (int8, (int16)))",
    "2 * (string, var * int32)",
    // symbolic
    "Fixed * T",
    "Dim * int32",
    "N * N * float64",
    "N * M * var * T",
    "... * T",
    "Dims... * int32",
    "3 * ... * Fixed * T",
    "Any",
    "?T",
    "?Any",
    "{x: T, y: N * U}",
    "pointer[Dims... * T]",
    // callables
    "() -> int32",
    "(int32) -> int32",
    "(N * T, x: float64) -> N * T",
    "(N * T, N * T) -> N * T",
    "(x: int32, 'y z': float64) -> ()",
    "(Dims... * T, axis: int32, keepdims: bool) -> Dims... * T",
    "((int32) -> int32, int32) -> int32",
    "() -> () -> int32",
    "{f: (int32) -> int32}",
    "pointer[(int32) -> int32]",
];

#[test]
fn canonical_text_round_trips_exactly() {
    for &text in CANONICAL {
        let tp = parse(text);
        assert_eq!(tp.to_string(), text, "print(parse({text:?}))");
        assert_eq!(Type::parse(&tp.to_string()), Ok(tp.clone()), "{text:?}");
        // `str::parse` goes through the same parser.
        assert_eq!(text.parse::<Type>(), Ok(tp));
    }
}

#[test]
fn every_builtin_round_trips() {
    for b in BuiltinType::ALL {
        assert_eq!(parse(b.name()), Type::builtin(b));
        assert_eq!(Type::builtin(b).to_string(), b.name());
    }
}

#[test]
fn parsed_types_are_built_by_the_constructors() {
    assert_eq!(
        parse("3 * var * {x: int32, name: string}"),
        Type::fixed_dim(
            3,
            Type::var_dim(
                Type::struct_of([("x", Type::int32()), ("name", Type::string())]).unwrap()
            )
        )
    );
    assert_eq!(
        parse("fixed_string[10, 'utf32']"),
        Type::fixed_string(10, Encoding::Utf32).unwrap()
    );
    assert_eq!(
        parse("fixed_bytes[8, align=4]"),
        Type::fixed_bytes(8, 4).unwrap()
    );
    assert_eq!(
        parse("?int16"),
        Type::option(Type::builtin(BuiltinType::Int16)).unwrap()
    );
    assert_eq!(parse("pointer[int32]"), Type::pointer(Type::int32()));
    assert_eq!(parse("(int32)"), Type::tuple_of([Type::int32()]));
    assert_eq!(parse("Any"), Type::any());
    assert_eq!(parse("T"), Type::type_var("T").unwrap());
    let t = || Type::type_var("T").unwrap();
    assert_eq!(
        parse("Fixed * T"),
        Type::symbolic_dim(SymbolicDim::Fixed, t())
    );
    assert_eq!(parse("Dim * T"), Type::symbolic_dim(SymbolicDim::Any, t()));
    assert_eq!(
        parse("N * T"),
        Type::symbolic_dim(SymbolicDim::Named("N".into()), t())
    );
    assert_eq!(
        parse("... * T"),
        Type::symbolic_dim(SymbolicDim::Ellipsis(None), t())
    );
    assert_eq!(
        parse("Dims... * T"),
        Type::symbolic_dim(SymbolicDim::Ellipsis(Some("Dims".into())), t())
    );
    let n_t = Type::symbolic_dim(SymbolicDim::Named("N".into()), t());
    assert_eq!(
        parse("(N * T, x: float64) -> N * T"),
        Type::callable(CallableSignature {
            positional: vec![n_t.clone()],
            keywords: vec![("x".into(), Type::float64())],
            ret: n_t,
        })
    );
    assert!(matches!(
        parse("(int32) -> int32").kind(),
        TypeKind::Callable(_)
    ));
    assert!(matches!(parse("(int32)").kind(), TypeKind::Tuple(_)));
}

// ---------------------------------------------------------------------------
// Non-canonical text prints canonically
// ---------------------------------------------------------------------------

const NON_CANONICAL: &[(&str, &str)] = &[
    // libdynd's older fixed-dim spelling
    ("fixed[3] * int32", "3 * int32"),
    (
        "2 * fixed[3] * var * fixed[1] * float64",
        "2 * 3 * var * 1 * float64",
    ),
    // aliases
    ("int", "int32"),
    ("real", "float64"),
    ("complex", "complex[float64]"),
    ("complex64", "complex[float32]"),
    ("complex128", "complex[float64]"),
    ("intptr", "int64"), // (64-bit targets)
    ("uintptr", "uint64"),
    ("complex[ float32 ]", "complex[float32]"),
    // option spellings
    ("option[int32]", "?int32"),
    ("option[ string ]", "?string"),
    ("3 * option[T]", "3 * ?T"),
    // repeated dims
    ("7**3 * int32", "7 * 7 * 7 * int32"),
    ("7 ** 1 * int32", "7 * int32"),
    ("Fixed**2 * T", "Fixed * Fixed * T"),
    ("var**2 * int8", "var * var * int8"),
    ("N**2 * float64", "N * N * float64"),
    ("Dim**2 * 2**2 * T", "Dim * Dim * 2 * 2 * T"),
    // whitespace and comments
    (
        "  3*var*{x:int32,name:string}  ",
        "3 * var * {x: int32, name: string}",
    ),
    ("\n3\t*\n  int32\n", "3 * int32"),
    ("(N*T,x:float64)->N*T", "(N * T, x: float64) -> N * T"),
    ("Dims ... * T", "Dims... * T"),
    ("fixed_string [ 10 , 'utf16' ]", "fixed_string[10, 'utf16']"),
    ("3 * # the outer dim\n  int32 # the element\n", "3 * int32"),
    ("007 * int32", "7 * int32"),
    // defaults omitted
    ("fixed_string[10, 'utf8']", "fixed_string[10]"),
    ("fixed_string[10, \"utf8\"]", "fixed_string[10]"),
    ("fixed_string[10, 'utf-16']", "fixed_string[10, 'utf16']"),
    ("fixed_bytes[4, align=1]", "fixed_bytes[4]"),
    ("fixed_bytes[4, align = 2]", "fixed_bytes[4, align=2]"),
    // trailing commas
    ("{x: int32, }", "{x: int32}"),
    ("{x: int32,}", "{x: int32}"),
    ("(int32,)", "(int32)"),
    ("(int32, float64, )", "(int32, float64)"),
    ("(int32, x: bool,) -> int8", "(int32, x: bool) -> int8"),
    // quoting
    ("{'x': int32}", "{x: int32}"),
    ("{\"x\": int32}", "{x: int32}"),
    ("{\"Quoted Name!\": int32}", "{'Quoted Name!': int32}"),
    ("{\"it's\": int32}", "{'it\\'s': int32}"),
    ("{'say \\\"hi\\\"': int32}", "{'say \"hi\"': int32}"),
    ("{'\\u00e9\\u0041': int32}", "{'éA': int32}"),
    ("{'\\ud83d\\ude00': int32}", "{'😀': int32}"),
    ("{'\\u007f': int32}", "{'\\u007f': int32}"),
    ("('x': int32) -> int32", "(x: int32) -> int32"),
];

#[test]
fn non_canonical_text_prints_canonically() {
    for &(text, canonical) in NON_CANONICAL {
        let tp = parse(text);
        assert_eq!(tp.to_string(), canonical, "print(parse({text:?}))");
        assert_eq!(parse(canonical), tp, "{text:?} and {canonical:?}");
    }
}

// ---------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------

/// (input, the (line, column) the message starts with, words the message
/// contains).
#[rustfmt::skip]
const ERRORS: &[(&str, (usize, usize), &[&str])] = &[
    ("float64+", (1, 8), &["unexpected '+'", "expected end of input"]),
    ("3 * int32 * float64", (1, 5), &["'int32' is not a dimension", "'*'"]),
    ("float65", (1, 1), &["unrecognized data type", "float65"]),
    ("3 * floatt64", (1, 5), &["unrecognized data type", "floatt64"]),
    ("float128", (1, 1), &["float128 is not supported"]),
    ("fixed_string[0]", (1, 14), &["fixed_string", "0"]),
    ("fixed_string[10, 'utf7']", (1, 18), &["unknown string encoding", "utf7"]),
    ("fixed_string[10, utf8]", (1, 18), &["quoted encoding name"]),
    ("fixed_string", (1, 13), &["expected '['", "end of input"]),
    ("fixed_string[10", (1, 16), &["expected ']'"]),
    ("fixed_bytes[0]", (1, 13), &["fixed_bytes", "0"]),
    ("fixed[3 * int32", (1, 9), &["expected ']' to close 'fixed['", "'*'"]),
    ("fixed[x] * int32", (1, 7), &["expected the size of the fixed dimension", "'x'"]),
    ("fixed[3]", (1, 9), &["expected '*' after the dimension 'fixed[3]'"]),
    ("fixed * int32", (1, 1), &["unrecognized data type 'fixed'"]),
    ("fixed_bytes[4, align=3]", (1, 22), &["alignment", "3"]),
    ("fixed_bytes[4, align=8]", (1, 22), &["multiple"]),
    ("fixed_bytes[4, algn=2]", (1, 16), &["expected 'align='"]),
    ("", (1, 1), &["expected a type", "end of input"]),
    ("   \n  ", (2, 3), &["expected a type", "end of input"]),
    ("3 *", (1, 4), &["expected a type", "end of input"]),
    ("3", (1, 2), &["expected '*' after the dimension '3'", "end of input"]),
    ("3 int32", (1, 3), &["expected '*'", "'int32'"]),
    ("var", (1, 4), &["expected '*' after the dimension 'var'"]),
    ("Fixed", (1, 6), &["expected '*' after the dimension 'Fixed'"]),
    ("Dims...", (1, 8), &["expected '*' after the dimension 'Dims...'"]),
    ("{x int32}", (1, 4), &["expected ':'", "'x'", "'int32'"]),
    ("{x: int32", (1, 10), &["expected ',' or '}'", "end of input"]),
    ("{x: int32 y: int8}", (1, 11), &["expected ',' or '}'", "'y'"]),
    ("{,}", (1, 2), &["expected a field name or '}'", "','"]),
    ("{x: int32, x: int8}", (1, 12), &["duplicate field name 'x'"]),
    ("(int32, ", (1, 9), &["expected a type", "end of input"]),
    ("(int32 float64)", (1, 8), &["expected ',' or ')'"]),
    ("(x: int32)", (1, 2), &["tuple", "names"]),
    ("('x' int32)", (1, 6), &["expected ':' after the name 'x'"]),
    ("-3 * int32", (1, 1), &["expected a type", "'-'"]),
    ("99999999999999999999999 * int32", (1, 1), &["dimension size", "too large"]),
    ("9223372036854775807 * int64", (1, 1), &["type too large"]),
    ("{a: 4611686018427387903 * int8, b: 4611686018427387903 * int8}", (1, 1), &["type too large"]),
    ("fixed_string[9223372036854775807, 'utf32']", (1, 14), &["type too large"]),
    ("??int32", (1, 2), &["option", "not supported"]),
    ("?void", (1, 2), &["option", "not supported"]),
    ("?int32 * int32", (1, 2), &["'int32' is not a dimension"]),
    ("option", (1, 7), &["expected '[' after 'option'"]),
    ("pointer[", (1, 9), &["expected a type", "end of input"]),
    ("pointer[int32", (1, 14), &["expected ']' to close 'pointer['"]),
    ("pointer int32", (1, 9), &["expected '[' after 'pointer'"]),
    ("complex[int32]", (1, 9), &["complex[int32] is not supported", "float32", "float64"]),
    ("complex[float64", (1, 16), &["expected ']'"]),
    ("{'abc: int32}", (1, 2), &["unterminated quoted string"]),
    ("{\"abc: int32}", (1, 2), &["unterminated quoted string"]),
    ("{'a\\qb': int32}", (1, 4), &["invalid escape", "\\q"]),
    ("{'\\u12g4': int32}", (1, 3), &["unicode escape"]),
    ("7**0 * int32", (1, 4), &["repeat count", "at least 1"]),
    ("7** * int32", (1, 5), &["expected a repeat count"]),
    ("7**2 int32", (1, 6), &["expected '*' after the repeat count"]),
    ("7**99999999999999999999999 * int32", (1, 4), &["too large"]),
    ("7**1000000000 * int32", (1, 1), &["nesting too deep"]),
    ("(x: int32, float64) -> int32", (1, 12), &["positional argument", "keyword argument 'x'"]),
    ("(x: int32, x: float64) -> int32", (1, 12), &["duplicate keyword argument name 'x'"]),
    ("(int32) ->", (1, 11), &["expected a type", "end of input"]),
    ("3 * (int32) -> int32", (1, 5), &["callable"]),
    ("... * ... * T", (1, 7), &["only one ellipsis"]),
    ("...**2 * T", (1, 1), &["only one ellipsis"]),
    ("T * ... * Dims... * int8", (1, 11), &["only one ellipsis"]),
    ("{x: int32} * int32", (1, 1), &["'{x: int32}' is not a dimension"]),
    ("Any * int32", (1, 1), &["'Any' is not a dimension"]),
    ("int32 ** 2", (1, 1), &["'int32' is not a dimension", "'**'"]),
    ("int32 int32", (1, 7), &["unexpected 'int32' after the type"]),
    ("int32)", (1, 6), &["unexpected ')' after the type"]),
    ("dims... * int32", (1, 1), &["unrecognized data type 'dims'"]),
    ("int32 # comment\n+", (2, 1), &["unexpected '+'"]),
    ("{\n  x: int32,\n  é: int8\n}", (3, 3), &["expected a field name", "'é'"]),
    ("\té", (1, 2), &["expected a type", "'é'"]),
    // Columns count characters, not bytes.
    ("{'日本': int32, '日本': int8}", (1, 15), &["duplicate field name '日本'"]),
];

#[test]
fn malformed_text_is_a_parse_error_naming_the_position() {
    for &(text, (line, column), words) in ERRORS {
        let position = format!("line {line}, column {column}");
        let err = parse_err(text);
        assert_eq!(err.kind(), ErrorKind::Parse, "{text:?}: {err}");
        let message = err.message();
        assert!(
            message.starts_with(&format!("{position}: ")),
            "{text:?}: expected the message to start with {position:?}, got {message:?}"
        );
        for word in words {
            assert!(
                message.contains(word),
                "{text:?}: expected {word:?} in {message:?}"
            );
        }
    }
}

#[test]
fn the_documented_messages_read_well() {
    assert_eq!(
        parse_err("float64+").message(),
        "line 1, column 8: unexpected '+' after the type; expected end of input"
    );
    assert_eq!(
        parse_err("3 * int32 * float64").message(),
        "line 1, column 5: 'int32' is not a dimension, so it cannot be followed by '*'"
    );
    assert_eq!(
        parse_err("float65").message(),
        "line 1, column 1: unrecognized data type 'float65'"
    );
    assert_eq!(
        parse_err("{x int32}").message(),
        "line 1, column 4: expected ':' after the name 'x', found 'int32'"
    );
}

#[test]
fn nesting_is_bounded() {
    fn pointers(n: usize) -> String {
        format!("{}int32{}", "pointer[".repeat(n - 1), "]".repeat(n - 1))
    }
    // 256 levels are fine, 257 are not.
    let deep = parse(&pointers(256));
    assert_eq!(deep.to_string(), pointers(256));
    let err = parse_err(&pointers(257));
    assert!(err.message().contains("nesting too deep"), "{err}");

    // The most stack-hungry nestings, at the limit, on a test thread's
    // default stack.
    let tuples = format!("{}int32{}", "(".repeat(255), ")".repeat(255));
    assert_eq!(parse(&tuples).to_string(), tuples);
    let structs = format!("{}int32{}", "{a: ".repeat(255), "}".repeat(255));
    assert_eq!(parse(&structs).to_string(), structs);
    let callables = format!("{}int32{}", "(x: ".repeat(255), ") -> T".repeat(255));
    assert_eq!(parse(&callables).to_string(), callables);
    let err = parse_err(&format!("({tuples})"));
    assert!(err.message().contains("nesting too deep"), "{err}");

    let options = format!("{}int32", "?".repeat(300));
    assert!(parse_err(&options).message().contains("nesting too deep"));
    let dims = format!("{}int32", "2 * ".repeat(300));
    assert!(parse_err(&dims).message().contains("nesting too deep"));
    assert_eq!(parse("1**255 * int8").ndim(), 255);
    assert!(
        parse_err("1**256 * int8")
            .message()
            .contains("nesting too deep")
    );
    // Far too deep for the stack if it were not bounded.
    let huge = "(".repeat(1_000_000);
    assert!(parse_err(&huge).message().contains("nesting too deep"));
    let huge = "{a:".repeat(1_000_000);
    assert!(parse_err(&huge).message().contains("nesting too deep"));
}

// ---------------------------------------------------------------------------
// Property tests
// ---------------------------------------------------------------------------

/// Names that need quoting, and identifiers that look like keywords.
const TRICKY_NAMES: &[&str] = &[
    "",
    "Quoted Name!",
    "it's",
    "say \"hi\"",
    "back\\slash",
    "1abc",
    "with space",
    "tab\there",
    "new\nline",
    "\r",
    "\u{1}",
    "\u{7f}",
    "é",
    "日本語",
    "😀",
    "#hash",
    "a-b",
    "var",
    "int32",
    "Fixed",
    "Dim",
    "Any",
    "T",
    "string",
    "fixed_string",
    "_",
];

fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "[a-z_][a-zA-Z0-9_]{0,6}",
        2 => "\\PC{0,6}",
        1 => any::<String>().prop_map(|s| s.chars().take(8).collect()),
        2 => prop::sample::select(TRICKY_NAMES).prop_map(str::to_owned),
    ]
}

/// Distinct names, in order.
fn unique(names: Vec<String>) -> Vec<String> {
    let mut seen = HashSet::new();
    names
        .into_iter()
        .filter(|n| seen.insert(n.clone()))
        .collect()
}

fn encoding() -> impl Strategy<Value = Encoding> {
    prop::sample::select(vec![
        Encoding::Ascii,
        Encoding::Utf8,
        Encoding::Utf16,
        Encoding::Utf32,
        Encoding::Ucs2,
    ])
}

fn type_var_name() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec!["T", "U", "R", "A1", "Dims", "Elem_Type"])
            .prop_map(str::to_owned),
        // Any upper-case identifier that is not a keyword.
        "[A-Z][a-zA-Z0-9_]{0,5}".prop_filter("reserved", |n| !matches!(
            n.as_str(),
            "Any" | "Fixed" | "Dim"
        )),
    ]
}

fn leaf() -> impl Strategy<Value = Type> {
    prop_oneof![
        prop::sample::select(BuiltinType::ALL.to_vec()).prop_map(Type::builtin),
        Just(Type::string()),
        Just(Type::bytes()),
        Just(Type::char()),
        (1usize..100, encoding()).prop_map(|(n, e)| Type::fixed_string(n, e).unwrap()),
        (0u32..5, 1usize..6).prop_map(|(a, k)| {
            let align = 1usize << a;
            Type::fixed_bytes(align * k, align).unwrap()
        }),
        type_var_name().prop_map(|n| Type::type_var(n).unwrap()),
        Just(Type::any()),
    ]
}

/// `true` when the dim list at the top of `t` has an ellipsis.
fn has_ellipsis(t: &Type) -> bool {
    let mut t = t;
    loop {
        match t.kind() {
            TypeKind::SymbolicDim {
                dim: SymbolicDim::Ellipsis(_),
                ..
            } => return true,
            _ => match t.dim_elem() {
                Some(e) => t = e,
                None => return false,
            },
        }
    }
}

/// A type that may be a dim's element: a callable is wrapped in a tuple.
fn dim_elem(t: Type) -> Type {
    if matches!(t.kind(), TypeKind::Callable(_)) {
        Type::tuple_of([t])
    } else {
        t
    }
}

fn symbolic_dim() -> impl Strategy<Value = SymbolicDim> {
    prop_oneof![
        Just(SymbolicDim::Fixed),
        Just(SymbolicDim::Any),
        type_var_name().prop_map(SymbolicDim::Named),
        Just(SymbolicDim::Ellipsis(None)),
        type_var_name().prop_map(|n| SymbolicDim::Ellipsis(Some(n))),
    ]
}

fn any_type() -> impl Strategy<Value = Type> {
    leaf().prop_recursive(6, 64, 5, |inner| {
        prop_oneof![
            (0usize..6, inner.clone()).prop_map(|(n, t)| Type::fixed_dim(n, dim_elem(t))),
            inner.clone().prop_map(|t| Type::var_dim(dim_elem(t))),
            (symbolic_dim(), inner.clone()).prop_map(|(d, t)| {
                let t = dim_elem(t);
                // One ellipsis per dim list.
                let d = match d {
                    SymbolicDim::Ellipsis(_) if has_ellipsis(&t) => SymbolicDim::Fixed,
                    d => d,
                };
                Type::symbolic_dim(d, t)
            }),
            prop::collection::vec((name(), inner.clone()), 0..5).prop_map(|fields| {
                let names = unique(fields.iter().map(|(n, _)| n.clone()).collect());
                let types = fields.into_iter().map(|(_, t)| t);
                Type::struct_of(names.into_iter().zip(types)).unwrap()
            }),
            prop::collection::vec(inner.clone(), 0..5).prop_map(Type::tuple_of),
            inner.clone().prop_map(Type::pointer),
            // Options of options, void, symbolic dims and callables are refused.
            inner
                .clone()
                .prop_map(|t| Type::option(t.clone()).unwrap_or(t)),
            (
                prop::collection::vec(inner.clone(), 0..4),
                prop::collection::vec((name(), inner.clone()), 0..3),
                inner.clone(),
            )
                .prop_map(|(positional, kw, ret)| {
                    let names = unique(kw.iter().map(|(n, _)| n.clone()).collect());
                    let keywords = names
                        .into_iter()
                        .zip(kw.into_iter().map(|(_, t)| t))
                        .collect();
                    Type::callable(CallableSignature {
                        positional,
                        keywords,
                        ret,
                    })
                }),
        ]
    })
}

/// A random edit of a string: delete, insert or duplicate around a char index.
#[derive(Debug, Clone)]
enum Mutation {
    Delete(usize, usize),
    Insert(usize, char),
    Duplicate(usize, usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let significant = prop::sample::select(
        "*[](){}?,:'\"\\-> .#=0123456789aZ_\n\té😀"
            .chars()
            .collect::<Vec<_>>(),
    );
    prop_oneof![
        (any::<usize>(), 1usize..4).prop_map(|(i, n)| Mutation::Delete(i, n)),
        (any::<usize>(), prop_oneof![significant, any::<char>()])
            .prop_map(|(i, c)| Mutation::Insert(i, c)),
        (any::<usize>(), 1usize..12).prop_map(|(i, n)| Mutation::Duplicate(i, n)),
    ]
}

fn mutate(text: &str, mutations: &[Mutation]) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    for m in mutations {
        let at = |i: usize, len: usize| if len == 0 { 0 } else { i % (len + 1) };
        match *m {
            Mutation::Delete(i, n) => {
                let start = at(i, chars.len());
                let end = (start + n).min(chars.len());
                chars.drain(start..end);
            }
            Mutation::Insert(i, c) => {
                let pos = at(i, chars.len());
                chars.insert(pos, c);
            }
            Mutation::Duplicate(i, n) => {
                let start = at(i, chars.len());
                let end = (start + n).min(chars.len());
                let copy: Vec<char> = chars[start..end].to_vec();
                chars.splice(start..start, copy);
            }
        }
    }
    chars.into_iter().collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn parse_inverts_print(t in any_type()) {
        let text = t.to_string();
        let parsed = Type::parse(&text);
        prop_assert_eq!(parsed.as_ref(), Ok(&t), "text: {}", text);
        let reprinted = parsed.map(|p| p.to_string());
        prop_assert_eq!(reprinted, Ok(text));
    }

    #[test]
    fn arbitrary_text_never_panics(text in prop_oneof![
        any::<String>(),
        "[ -~\n]{0,40}",
        "[0-9*(){}\\[\\]?,: a-zA-Z'\"\\\\.#=>-]{0,40}",
    ]) {
        if let Err(e) = Type::parse(&text) {
            prop_assert_eq!(e.kind(), ErrorKind::Parse);
            prop_assert!(e.message().starts_with("line "), "{}", e);
        }
    }

    #[test]
    fn mutated_datashapes_never_panic(
        t in any_type(),
        mutations in prop::collection::vec(mutation(), 1..4),
    ) {
        let text = mutate(&t.to_string(), &mutations);
        match Type::parse(&text) {
            // Whatever parses is canonical after one print.
            Ok(parsed) => {
                let printed = parsed.to_string();
                prop_assert_eq!(Type::parse(&printed), Ok(parsed), "from {:?}", text);
            }
            Err(e) => {
                prop_assert_eq!(e.kind(), ErrorKind::Parse);
                prop_assert!(e.message().starts_with("line "), "{}", e);
            }
        }
    }
}
