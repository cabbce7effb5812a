//! The modules of `src/` are layers: each may use only the modules listed
//! before it under "# Layers" in the crate docs (`src/lib.rs`). This test
//! reads the sources and fails on any use of a later module — by its path
//! (`crate::assign::eval`, `$crate::tensor::…`, `crate::{assign::eval}`) or
//! through a crate-root re-export (`crate::Tensor`, which lives in
//! `tensor`). Comments are not code: doc links may point anywhere.

use std::collections::HashMap;
use std::path::Path;

/// The module names of the numbered "# Layers" list in `lib.rs`, in order.
fn layers(lib: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut inside = false;
    for line in lib.lines() {
        let Some(doc) = line.strip_prefix("//!") else {
            continue;
        };
        let doc = doc.trim();
        if doc.starts_with('#') {
            inside = doc == "# Layers";
            continue;
        }
        if !inside {
            continue;
        }
        let Some((num, rest)) = doc.split_once(". `") else {
            continue;
        };
        if num.chars().all(|c| c.is_ascii_digit()) && !num.is_empty() {
            let name = rest.split('`').next().unwrap_or_default();
            out.push(name.to_string());
        }
    }
    out
}

/// The crate-root names `lib.rs` re-exports (`pub use module::{A, B};`),
/// each with the module it comes from.
fn reexports(lib: &str) -> HashMap<String, String> {
    let mut out = HashMap::new();
    for stmt in code(lib).split(';') {
        let stmt = stmt.trim();
        let Some(path) = stmt.strip_prefix("pub use ") else {
            continue;
        };
        let Some((module, names)) = path.split_once("::") else {
            continue;
        };
        if module == "crate" {
            continue; // inside `pub mod detail`: not a root name
        }
        let names = names.trim_start_matches('{').trim_end_matches('}');
        for name in names.split(',') {
            let name = name.trim();
            if !name.is_empty() {
                out.insert(name.to_string(), module.trim().to_string());
            }
        }
    }
    out
}

/// The source with every comment removed (string literals kept).
fn code(src: &str) -> String {
    let mut out = String::with_capacity(src.len());
    let b = src.as_bytes();
    let (mut i, mut in_str, mut block) = (0, false, 0usize);
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied();
        if block > 0 {
            if c == b'*' && next == Some(b'/') {
                block -= 1;
                i += 2;
            } else {
                if c == b'/' && next == Some(b'*') {
                    block += 1;
                    i += 1;
                }
                i += 1;
            }
            continue;
        }
        if in_str {
            if c == b'\\' {
                out.push_str(&src[i..i + 2]);
                i += 2;
                continue;
            }
            in_str = c != b'"';
        } else if c == b'"' && !(i > 0 && b[i - 1] == b'\'' && next == Some(b'\'')) {
            in_str = true;
        } else if c == b'/' && next == Some(b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            continue;
        } else if c == b'/' && next == Some(b'*') {
            block = 1;
            i += 2;
            continue;
        }
        let len = src[i..].chars().next().map_or(1, char::len_utf8);
        out.push_str(&src[i..i + len]);
        i += len;
    }
    out
}

/// The first path segment of every `crate::` path in `code` (both names of
/// a grouped `crate::{a::X, b}`), with its line number.
fn crate_paths(code: &str) -> Vec<(String, usize)> {
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let mut out = Vec::new();
    for (n, line) in code.lines().enumerate() {
        let mut rest = line;
        while let Some(at) = rest.find("crate::") {
            let before = rest[..at].chars().next_back();
            rest = &rest[at + "crate::".len()..];
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                continue; // `my_crate::`, not this crate
            }
            if let Some(group) = rest.strip_prefix('{') {
                let mut depth = 0;
                let mut entry_start = true;
                for (k, c) in group.char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' if depth == 0 => break,
                        '}' => depth -= 1,
                        ',' if depth == 0 => entry_start = true,
                        c if c.is_whitespace() => {}
                        _ if entry_start => {
                            out.push((ident(&group[k..]), n + 1));
                            entry_start = false;
                        }
                        _ => {}
                    }
                }
            } else {
                out.push((ident(rest), n + 1));
            }
        }
    }
    out
}

/// Every use of a later layer in `files` (`(module name, source)`), as
/// readable lines; `lib` is the text of `lib.rs`.
fn violations(files: &[(String, String)], lib: &str) -> Vec<String> {
    let order = layers(lib);
    let roots = reexports(lib);
    let rank = |m: &str| order.iter().position(|x| x == m);
    let mut bad = Vec::new();
    if order.is_empty() {
        bad.push("lib.rs has no numbered \"# Layers\" list".to_string());
    }
    for m in &order {
        if !files.iter().any(|(f, _)| f == m) {
            bad.push(format!("layer `{m}` has no file src/{m}.rs"));
        }
    }
    for (module, src) in files {
        let Some(own) = rank(module) else {
            bad.push(format!("src/{module}.rs is not in lib.rs's layer list"));
            continue;
        };
        for (name, line) in crate_paths(&code(src)) {
            let target = if rank(&name).is_some() {
                name.clone()
            } else if let Some(m) = roots.get(&name) {
                m.clone()
            } else {
                bad.push(format!(
                    "src/{module}.rs:{line}: `crate::{name}` is neither a layer nor a re-export"
                ));
                continue;
            };
            match rank(&target) {
                Some(t) if t <= own => {}
                _ => bad.push(format!(
                    "src/{module}.rs:{line}: `crate::{name}` uses `{target}`, a later layer than `{module}`"
                )),
            }
        }
    }
    bad
}

/// `(module name, source)` of every file in `src/` but `lib.rs`, and `lib.rs`.
fn sources() -> (Vec<(String, String)>, String) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("read src/") {
        let path = entry.expect("dir entry").path();
        assert!(
            path.extension().is_some_and(|e| e == "rs"),
            "{} is not a module file: extend tests/layering.rs for module folders",
            path.display()
        );
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&path).expect("read source");
        if name != "lib" {
            files.push((name, text));
        }
    }
    files.sort();
    let lib = std::fs::read_to_string(dir.join("lib.rs")).expect("read lib.rs");
    (files, lib)
}

#[test]
fn ops_modules_use_only_earlier_layers() {
    let (files, lib) = sources();
    assert!(layers(&lib).len() >= 10, "{:?}", layers(&lib));
    let bad = violations(&files, &lib);
    assert!(bad.is_empty(), "layering violations:\n{}", bad.join("\n"));
    // Leaf operators need no executor (their no-op hooks come from
    // `operator`), though the order alone would allow one.
    let tensor = &files.iter().find(|(m, _)| m == "tensor").expect("tensor").1;
    let named = crate_paths(&code(tensor));
    assert!(
        named.iter().all(|(m, _)| m != "executor"),
        "tensor.rs uses executor: {named:?}"
    );
}

/// The check itself: each kind of upward use, added to the real sources,
/// is caught; a use in a comment is not one.
#[test]
fn ops_layering_check_catches_upward_uses() {
    let (files, lib) = sources();
    let with = |module: &str, extra: &str| -> Vec<String> {
        let mut f = files.clone();
        let entry = f.iter_mut().find(|(m, _)| m == module).expect(module);
        entry.1.push_str(extra);
        violations(&f, &lib)
    };
    for (module, extra, names) in [
        ("executor", "\nuse crate::assign::eval;\n", "`assign`"),
        (
            "executor",
            "\nuse crate::{rank::Shape, tensor::Tensor};\n",
            "`tensor`",
        ),
        (
            "operator",
            "\nfn f(_: crate::Tensor<f64, [usize; 1]>) {}\n",
            "`tensor`",
        ),
        (
            "tensor",
            "\nmacro_rules! m { () => { $crate::assign::run_set } }\n",
            "`assign`",
        ),
        ("rank", "\nuse crate::element::Element;\n", "`element`"),
        ("rank", "\nuse crate::nonsense;\n", "neither a layer"),
    ] {
        let bad = with(module, extra);
        assert!(
            bad.len() == 1 && bad[0].contains(names) && bad[0].contains(module),
            "{module} + {extra:?}: {bad:?}"
        );
    }
    // Docs and comments may mention any module.
    assert_eq!(
        with(
            "rank",
            "\n/// See [`crate::assign::eval`].\n// crate::interop\n"
        ),
        Vec::<String>::new()
    );
}
