//! The layering of DESIGN §7: each module of `crates/dynd/src` uses only the
//! modules listed before it. This test reads the sources and fails, naming
//! the file and line, when a lower layer names a higher one through a
//! `crate::` path (in a `use` or anywhere in code; comments are skipped),
//! when a module outside `exec/` names rayon (DESIGN §13: `exec/` is the
//! one place that decides how work runs), and when the modules of the
//! Python package (`crates/dynd-python/src`) name each other in a cycle.

use std::path::{Path, PathBuf};

/// The layers, lowest first.
const LAYERS: &[&str] = &[
    "error", "types", "memblock", "layout", "kernels", "exec", "array", "callable", "compute",
    "interop",
];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|m| *m == module)
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The code of a line: everything before a `//` comment.
fn code_of(line: &str) -> &str {
    line.find("//").map_or(line, |i| &line[..i])
}

/// Every `crate::NAME` a line of code names.
fn crate_paths(code: &str) -> Vec<&str> {
    code.match_indices("crate::")
        .filter(|(i, _)| {
            // `dynd_crate::` or `$crate::` are other things.
            *i == 0
                || !code.as_bytes()[i - 1].is_ascii_alphanumeric()
                    && code.as_bytes()[i - 1] != b'_'
                    && code.as_bytes()[i - 1] != b'$'
        })
        .map(|(i, m)| {
            let rest = &code[i + m.len()..];
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            &rest[..end]
        })
        .collect()
}

/// Calls `f(path under src, line number, code)` for every line of code
/// (comments cut off) of every Rust file under `src`.
fn each_code_line(src: &Path, f: &mut dyn FnMut(&Path, usize, &str)) {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    for file in files {
        let rel = file.strip_prefix(src).unwrap();
        let text = std::fs::read_to_string(&file).unwrap();
        for (n, line) in text.lines().enumerate() {
            f(rel, n + 1, code_of(line));
        }
    }
}

/// `(file, line number, module it is in, module it names)` for each
/// violation under `src`.
fn violations(src: &Path) -> Vec<String> {
    let mut bad = Vec::new();
    each_code_line(src, &mut |rel, n, code| {
        let first = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_str()
            .unwrap();
        let module = first.trim_end_matches(".rs");
        // lib.rs is in no layer: the crate root re-exports everything.
        let Some(own) = layer_of(module) else { return };
        for named in crate_paths(code) {
            if let Some(other) = layer_of(named)
                && other > own
            {
                bad.push(format!(
                    "{}:{n}: {module} (layer {own}) names crate::{named} (layer {other})",
                    rel.display()
                ));
            }
        }
    });
    bad
}

#[test]
fn every_source_module_is_a_known_layer() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    for entry in std::fs::read_dir(&src).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        let module = name.trim_end_matches(".rs");
        assert!(
            module == "lib" || layer_of(module).is_some(),
            "src/{name} is in no layer of DESIGN §7: add it to LAYERS"
        );
    }
}

#[test]
fn no_lower_layer_names_a_higher_one() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let bad = violations(&src);
    assert!(bad.is_empty(), "layering violations:\n{}", bad.join("\n"));
}

#[test]
fn the_checker_finds_a_violation() {
    let dir = std::env::temp_dir().join(format!("dynd-layering-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("kernels")).unwrap();
    std::fs::write(
        dir.join("kernels/bad.rs"),
        "// crate::array in a comment is fine\nuse crate::array::Array;\n",
    )
    .unwrap();
    std::fs::write(dir.join("types.rs"), "use crate::error::Result;\n").unwrap();
    let bad = violations(&dir);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(bad.len(), 1, "{bad:?}");
    assert!(
        bad[0].starts_with("kernels/bad.rs:2: kernels"),
        "{}",
        bad[0]
    );
    assert!(bad[0].contains("crate::array"), "{}", bad[0]);
}

/// `file:line` of each line of code under `src`, outside `exec/`, that
/// names rayon (`rayon::`, `use rayon`, `extern crate rayon`).
fn rayon_outside_exec(src: &Path) -> Vec<String> {
    let mut bad = Vec::new();
    each_code_line(src, &mut |rel, n, code| {
        let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
        let names = code.match_indices("rayon").any(|(i, m)| {
            !word(code[..i].chars().next_back()) && !word(code[i + m.len()..].chars().next())
        });
        if names && !rel.starts_with("exec") {
            bad.push(format!("{}:{n}: {}", rel.display(), code.trim()));
        }
    });
    bad
}

#[test]
fn only_exec_names_rayon() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let bad = rayon_outside_exec(&src);
    assert!(
        bad.is_empty(),
        "DESIGN §13: only exec/ names rayon:\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_rayon_checker_finds_a_use_outside_exec() {
    let dir = std::env::temp_dir().join(format!("dynd-rayon-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("exec")).unwrap();
    std::fs::create_dir_all(dir.join("callable")).unwrap();
    std::fs::write(dir.join("exec/pool.rs"), "use rayon::prelude::*;\n").unwrap();
    std::fs::write(
        dir.join("callable/bad.rs"),
        "// rayon in a comment is fine\nfn f() { let n = rayon::current_num_threads(); }\nfn rayonish() {}\n",
    )
    .unwrap();
    let bad = rayon_outside_exec(&dir);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(bad.len(), 1, "{bad:?}");
    assert!(bad[0].starts_with("callable/bad.rs:2:"), "{}", bad[0]);
}

/// A cycle among the top-level modules of the crate whose sources are in
/// `src` (an edge for each `crate::NAME` a module's code names), as the
/// modules along it, first repeated at the end; `None` when there is none.
fn module_cycle(src: &Path) -> Option<Vec<String>> {
    use std::collections::{BTreeMap, BTreeSet};
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    each_code_line(src, &mut |rel, _, code| {
        let first = rel.components().next().unwrap().as_os_str();
        let module = first.to_str().unwrap().trim_end_matches(".rs").to_string();
        let named = edges.entry(module.clone()).or_default();
        for other in crate_paths(code) {
            if other != module {
                named.insert(other.to_string());
            }
        }
    });
    // Depth-first, with the path on the stack: an edge back into the path
    // closes a cycle.
    fn visit(
        m: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|p| p == m) {
            let mut cycle = path[at..].to_vec();
            cycle.push(m.to_string());
            return Some(cycle);
        }
        if done.contains(m) {
            return None;
        }
        path.push(m.to_string());
        for next in edges.get(m).into_iter().flatten() {
            if let Some(c) = visit(next, edges, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(m.to_string());
        None
    }
    let mut done = BTreeSet::new();
    edges
        .keys()
        .find_map(|m| visit(m, &edges, &mut Vec::new(), &mut done))
}

#[test]
fn the_python_package_s_modules_form_no_cycle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../dynd-python/src");
    if let Some(cycle) = module_cycle(&src) {
        panic!(
            "crates/dynd-python/src has a cycle of modules: {}",
            cycle.join(" -> ")
        );
    }
}

#[test]
fn the_cycle_checker_finds_a_cycle() {
    let dir = std::env::temp_dir().join(format!("dynd-cycle-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("lib.rs"), "mod a;\nmod b;\nmod c;\n").unwrap();
    std::fs::write(dir.join("a.rs"), "use crate::b::B;\n").unwrap();
    std::fs::write(dir.join("b.rs"), "fn f() { crate::c::g() }\n").unwrap();
    std::fs::write(dir.join("c.rs"), "// crate::a in a comment is fine\n").unwrap();
    let none = module_cycle(&dir);
    std::fs::write(dir.join("c.rs"), "pub fn g() { crate::a::h() }\n").unwrap();
    let found = module_cycle(&dir);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(none, None);
    assert_eq!(found.unwrap(), ["a", "b", "c", "a"]);
}
