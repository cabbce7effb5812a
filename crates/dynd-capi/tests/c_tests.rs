//! Builds the C tests in `tests/c/` against `include/dynd.h` and the
//! crate's `libdynd_capi.so`, runs them, and runs them again under valgrind
//! when it is installed.
//!
//! `cargo test -p dynd-capi` builds the library's cdylib together with its
//! rlib before this test runs (one compilation of the lib target makes
//! every crate type), and puts it next to the test binary's `deps/`
//! directory; this test finds it there. A C compiler (`cc`, or `$CC`) is
//! required.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The directory holding `libdynd_capi.so`: the profile directory
/// (`target/debug`) or its `deps/`, next to this test's executable.
fn library_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test executable's path");
    let deps = exe.parent().expect("target/<profile>/deps");
    let profile = deps.parent().expect("target/<profile>");
    for dir in [deps, profile] {
        if dir.join("libdynd_capi.so").is_file() {
            return dir.to_path_buf();
        }
    }
    panic!(
        "libdynd_capi.so is in neither {} nor {}: build it with `cargo build -p dynd-capi`",
        profile.display(),
        deps.display()
    );
}

fn c_compiler() -> String {
    std::env::var("CC").unwrap_or_else(|_| "cc".to_string())
}

/// Compiles `tests/c/<source>.c` into the executable `out_name` (one per
/// test, as tests run in parallel), linked against the library (found at
/// run time through an rpath).
fn build_c_test(source: &str, out_name: &str) -> PathBuf {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let lib_dir = library_dir();
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join(out_name);
    let status = Command::new(c_compiler())
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-g", "-pthread"])
        .arg("-I")
        .arg(crate_dir.join("include"))
        .arg(crate_dir.join("tests/c").join(format!("{source}.c")))
        .arg("-o")
        .arg(&out)
        .arg("-L")
        .arg(&lib_dir)
        .arg(format!("-Wl,-rpath,{}", lib_dir.display()))
        .args(["-ldynd_capi", "-lm"])
        .status()
        .expect("a C compiler (cc, or $CC) is needed to build the C tests");
    assert!(status.success(), "compiling tests/c/{source}.c failed");
    out
}

/// `LD_LIBRARY_PATH` with the library's directory first: cargo's own value
/// (inherited by the test) lists `target/<profile>` before the rpath is
/// consulted, where a stale `libdynd_capi.so` from an older build may lie.
fn library_path() -> std::ffi::OsString {
    let mut paths = vec![library_dir()];
    if let Some(old) = std::env::var_os("LD_LIBRARY_PATH") {
        paths.extend(std::env::split_paths(&old));
    }
    std::env::join_paths(paths).expect("library paths without ':'")
}

fn run(cmd: &mut Command, what: &str) {
    let output = cmd
        .env("LD_LIBRARY_PATH", library_path())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {what}: {e}"));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    print!("{stdout}");
    eprint!("{stderr}");
    assert!(
        output.status.success(),
        "{what} failed ({})\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        output.status
    );
}

fn have_valgrind() -> bool {
    Command::new("valgrind")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Runs `exe` under valgrind: any memory error or definite leak fails.
fn run_under_valgrind(exe: &Path, what: &str) {
    run(
        Command::new("valgrind")
            .args([
                "--quiet",
                "--error-exitcode=1",
                "--leak-check=full",
                "--errors-for-leak-kinds=definite",
                "--show-leak-kinds=definite",
            ])
            .arg(exe),
        &format!("{what} under valgrind"),
    );
}

/// Builds `tests/c/<source>.c` and runs it: it must exit 0.
fn c_program_passes(source: &str, what: &str) {
    let exe = build_c_test(source, source);
    run(&mut Command::new(&exe), what);
}

/// Builds `tests/c/<source>.c` and runs it under valgrind, when installed.
fn c_program_passes_under_valgrind(source: &str, what: &str) {
    if !have_valgrind() {
        eprintln!("valgrind is not installed: skipping {what} under valgrind");
        return;
    }
    let exe = build_c_test(source, &format!("{source}_valgrind"));
    run_under_valgrind(&exe, what);
}

/// Builds `tests/c/<source>.c`, runs it and checks all it prints.
fn c_program_prints(source: &str, want: &str) {
    let exe = build_c_test(source, source);
    let output = Command::new(&exe)
        .env("LD_LIBRARY_PATH", library_path())
        .output()
        .expect("running the example");
    assert!(output.status.success(), "the example failed: {output:?}");
    assert_eq!(String::from_utf8_lossy(&output.stdout), want, "{source}.c");
}

/// docs/capi.md shows `tests/c/<source>.c` verbatim in a ```c block, and
/// what it prints in a ``` block.
fn docs_show_example(source: &str, output: &str) {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let path = format!("tests/c/{source}.c");
    let example = std::fs::read_to_string(crate_dir.join(&path)).unwrap();
    let docs = std::fs::read_to_string(crate_dir.join("../../docs/capi.md")).unwrap();
    assert!(
        docs.contains(&format!("```c\n{example}```")),
        "docs/capi.md must show {path} verbatim in a ```c block"
    );
    assert!(
        docs.contains(&format!("```\n{output}```")),
        "docs/capi.md must show what {path} prints"
    );
}

#[test]
fn c_tests_pass() {
    c_program_passes("test_capi", "the C tests");
}

#[test]
fn c_tests_pass_under_valgrind() {
    c_program_passes_under_valgrind("test_capi", "the C tests");
}

#[test]
fn c_callable_tests_pass() {
    c_program_passes("test_callables", "the C callable tests");
}

#[test]
fn c_callable_tests_pass_under_valgrind() {
    c_program_passes_under_valgrind("test_callables", "the C callable tests");
}

#[test]
fn c_missing_value_tests_pass() {
    c_program_passes("test_missing", "the C missing-value tests");
}

#[test]
fn c_missing_value_tests_pass_under_valgrind() {
    c_program_passes_under_valgrind("test_missing", "the C missing-value tests");
}

#[test]
fn c_select_tests_pass() {
    c_program_passes("test_select", "the C selection tests");
}

#[test]
fn c_select_tests_pass_under_valgrind() {
    c_program_passes_under_valgrind("test_select", "the C selection tests");
}

#[test]
fn c_sort_tests_pass() {
    c_program_passes("test_sort", "the C sorting tests");
}

#[test]
fn c_sort_tests_pass_under_valgrind() {
    c_program_passes_under_valgrind("test_sort", "the C sorting tests");
}

#[test]
fn c_interop_tests_pass() {
    c_program_passes("test_interop", "the C interop tests");
}

#[test]
fn c_interop_tests_pass_under_valgrind() {
    c_program_passes_under_valgrind("test_interop", "the C interop tests");
}

/// A program that includes dlpack.h before dynd.h compiles: dynd.h skips
/// its own DLPack structs under dlpack.h's include guard
/// (`tests/c/test_interop.c` with `-DTEST_DLPACK_FIRST` puts a stand-in
/// for dlpack.h first).
#[test]
fn dlpack_h_before_dynd_h_compiles() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let status = Command::new(c_compiler())
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-fsyntax-only"])
        .arg("-DTEST_DLPACK_FIRST")
        .arg("-I")
        .arg(crate_dir.join("include"))
        .arg(crate_dir.join("tests/c/test_interop.c"))
        .status()
        .expect("a C compiler (cc, or $CC) is needed to build the C tests");
    assert!(
        status.success(),
        "tests/c/test_interop.c with dlpack.h's structs first does not compile"
    );
}

#[test]
fn c_arrow_tests_pass() {
    c_program_passes("test_arrow", "the C Arrow tests");
}

#[test]
fn c_arrow_tests_pass_under_valgrind() {
    c_program_passes_under_valgrind("test_arrow", "the C Arrow tests");
}

#[test]
fn c_thread_tests_pass() {
    c_program_passes("test_threads", "the C thread-choice tests");
}

#[test]
fn c_thread_tests_pass_under_valgrind() {
    c_program_passes_under_valgrind("test_threads", "the C thread-choice tests");
}

/// `tests/c/design_only.c` is written from DESIGN §5 alone (not from this
/// crate's tests or docs): the acceptance check that the header is the
/// contract the design states.
#[test]
fn design_only_program_passes() {
    c_program_passes("design_only", "tests/c/design_only.c");
}

#[test]
fn design_only_program_passes_under_valgrind() {
    c_program_passes_under_valgrind("design_only", "tests/c/design_only.c");
}

/// What `tests/c/example.c` prints.
const EXAMPLE_OUTPUT: &str = "\
data_size=32 arrmeta_size=40
[[1,2,3],[4]] : 2 * var * int32
refused: error 3: int64 value 300 is out of range for int8
nocheck: 44
1 2 3
4.5: error 4: float64 value 4.5 has a fractional part, so it cannot be assigned to int32
";

#[test]
fn the_documented_example_runs() {
    c_program_prints("example", EXAMPLE_OUTPUT);
}

/// What `tests/c/example_kernel.c` prints.
const EXAMPLE_KERNEL_OUTPUT: &str = "\
[[3,6,9],[],[12,15]] : 3 * var * int32
error 3: multiply: the product overflows int32
";

#[test]
fn the_documented_kernel_example_runs() {
    c_program_prints("example_kernel", EXAMPLE_KERNEL_OUTPUT);
}

#[test]
fn the_documented_kernel_example_passes_valgrind() {
    c_program_passes_under_valgrind("example_kernel", "tests/c/example_kernel.c");
}

#[test]
fn docs_show_the_tested_kernel_example() {
    docs_show_example("example_kernel", EXAMPLE_KERNEL_OUTPUT);
}

#[test]
fn docs_show_the_tested_example() {
    // docs/capi.md's complete example is tests/c/example.c, verbatim.
    docs_show_example("example", EXAMPLE_OUTPUT);
}

#[test]
fn header_compiles_as_cxx() {
    // The header's `extern "C"` block: a C++ translation unit includes it.
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".to_string());
    if Command::new(&cxx).arg("--version").output().is_err() {
        eprintln!("no C++ compiler: skipping the C++ header check");
        return;
    }
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let status = Command::new(&cxx)
        .args(["-std=c++11", "-Wall", "-Wextra", "-Werror", "-fsyntax-only"])
        .arg("-I")
        .arg(crate_dir.join("include"))
        .arg(crate_dir.join("tests/c/header_cxx.cpp"))
        .status()
        .expect("running the C++ compiler");
    assert!(status.success(), "include/dynd.h does not compile as C++");
}
