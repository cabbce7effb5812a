//! The `dynd` command line (DESIGN §8): inspect types and parse arrays.
//!
//! Output goes to stdout; on error it prints `error[KIND]: message` on
//! stderr and exits 1.

use dynd::kernels::assign::ErrorMode;
use dynd::memblock::DeviceId;
use dynd::{Array, Error, Index, Type};
use std::io::Write;
use std::process::ExitCode;

const USAGE: &str = "\
usage:
  dynd type DATASHAPE
      line 1: the canonical datashape
      line 2: data_size=N data_alignment=N arrmeta_size=N
  dynd parse [--lines] DATASHAPE JSON
      the array as compact JSON (one line); --lines: the input is JSON Lines,
      each line one element of DATASHAPE's outermost dim (N * T or var * T)
  dynd infer [--lines] JSON
      line 1: the datashape inferred for the JSON text (--lines: JSON Lines,
      N * T with N the number of lines)
  dynd assign [--errmode nocheck|overflow|fractional|inexact|default] DST_DATASHAPE SRC_DATASHAPE JSON
      parses JSON as SRC, assigns it into a new DST array, prints DST as compact JSON
  dynd call FUNC [--axes I,J,...] [--keepdims] [--device cpu|cuda|cuda:N] DATASHAPE JSON [DATASHAPE JSON ...]
      applies the named callable to the arguments; line 1: the result's datashape;
      line 2: its JSON; --axes (negative ones count from the innermost, -1) and
      --keepdims apply to reductions (sum, prod, min, max, mean, all, any, count,
      argmin, argmax, var, std); --device computes on a CUDA device (the arguments
      are copied there, the result back)
  dynd index DATASHAPE JSON INDEX
      INDEX as inside NumPy brackets: comma-separated items, each an integer
      (negative counts from the end), a slice start:stop:step (parts optional),
      or a field name; line 1: the result's datashape; line 2: its JSON
any JSON argument may be '-' (read stdin) or '@PATH' (read the file)
every command takes --threads N (anywhere on the line): compute on N threads
  (1: serially; 0: the default, from DYND_NUM_THREADS, RAYON_NUM_THREADS or the cores)";

fn run(args: &[String]) -> Result<String, Error> {
    let arg = |i: usize, what: &str| {
        args.get(i)
            .map(String::as_str)
            .ok_or_else(|| Error::invalid_argument(format!("missing {what}\n{USAGE}")))
    };
    let command = arg(0, "command")?;
    let expect_count = |n: usize| {
        if args.len() > n {
            Err(Error::invalid_argument(format!(
                "too many arguments for '{command}': {}\n{USAGE}",
                args[n..].join(" ")
            )))
        } else {
            Ok(())
        }
    };
    match command {
        "type" => {
            let tp = Type::parse(arg(1, "DATASHAPE")?)?;
            expect_count(2)?;
            if tp.is_symbolic() {
                Ok(format!("{tp}\nsymbolic: no data layout"))
            } else {
                Ok(format!(
                    "{tp}\ndata_size={} data_alignment={} arrmeta_size={}",
                    tp.data_size(),
                    tp.data_alignment(),
                    tp.arrmeta_size()
                ))
            }
        }
        "parse" => {
            let (lines, rest) = lines_flag(&args[1..])?;
            let [tp, json] = positional(command, rest, ["DATASHAPE", "JSON"])?;
            let tp = Type::parse(tp)?;
            let json = json_arg(json)?;
            let a = if lines {
                Array::from_json_lines(tp, &json)?
            } else {
                Array::from_json(tp, &json)?
            };
            // The input text is not needed once parsed: freed before the
            // output is formatted, so the two never coexist at the peak.
            drop(json);
            Ok(a.to_json())
        }
        "infer" => {
            let (lines, rest) = lines_flag(&args[1..])?;
            let [json] = positional(command, rest, ["JSON"])?;
            let json = json_arg(json)?;
            let tp = if lines {
                dynd::infer_type_lines(&json)?
            } else {
                dynd::infer_type(&json)?
            };
            Ok(tp.to_string())
        }
        "assign" => {
            let mut mode = ErrorMode::Default;
            let rest = take_options(&args[1..], |rest| {
                let Some((value, used)) = option_value(rest, "errmode")? else {
                    return Ok(None);
                };
                mode = value.parse()?;
                Ok(Some(used))
            })?;
            let [dst, src, json] = rest else {
                return Err(Error::invalid_argument(format!(
                    "assign takes DST_DATASHAPE SRC_DATASHAPE JSON, got {} argument{}\n{USAGE}",
                    rest.len(),
                    if rest.len() == 1 { "" } else { "s" }
                )));
            };
            let src = Array::from_json(Type::parse(src)?, &json_arg(json)?)?;
            Ok(src.cast(Type::parse(dst)?, mode)?.to_json())
        }
        "call" => {
            let mut axes: Option<Vec<isize>> = None;
            let mut keepdims = false;
            let mut device = DeviceId::Cpu;
            // Options go before or after FUNC (`dynd call --device cuda add ...`).
            let mut option = |rest: &[String]| -> Result<Option<usize>, Error> {
                if rest[0] == "--keepdims" {
                    keepdims = true;
                    return Ok(Some(1));
                }
                if let Some((value, used)) = option_value(rest, "device")? {
                    device = DeviceId::parse(value).map_err(|e| {
                        Error::invalid_argument(format!("--device: {}", e.message()))
                    })?;
                    return Ok(Some(used));
                }
                let Some((value, used)) = option_value(rest, "axes")? else {
                    return Ok(None);
                };
                let parsed: Result<Vec<isize>, Error> = value
                    .split(',')
                    .map(|s| {
                        s.trim().parse::<isize>().map_err(|_| {
                            Error::invalid_argument(format!(
                                "--axes takes comma-separated integers, got '{value}'"
                            ))
                        })
                    })
                    .collect();
                axes = Some(parsed?);
                Ok(Some(used))
            };
            let before = take_options(&args[1..], &mut option)?;
            let (name, after) = before
                .split_first()
                .ok_or_else(|| Error::invalid_argument(format!("missing FUNC\n{USAGE}")))?;
            let name = name.as_str();
            let rest = take_options(after, &mut option)?;
            if rest.is_empty() || !rest.len().is_multiple_of(2) {
                return Err(Error::invalid_argument(format!(
                    "call takes DATASHAPE JSON pairs after the function name, got {} argument{}\n{USAGE}",
                    rest.len(),
                    if rest.len() == 1 { "" } else { "s" }
                )));
            }
            if !device.is_cpu() {
                dynd_cuda::install()?;
            }
            let arrays: Vec<Array> = rest
                .chunks(2)
                .map(|p| {
                    Array::from_json(Type::parse(&p[0])?, &json_arg(&p[1])?)?.to_device(device)
                })
                .collect::<Result<_, Error>>()?;
            let refs: Vec<&Array> = arrays.iter().collect();
            let out = if axes.is_some() || keepdims {
                use dynd::callable::reduce::{BuiltinReduction, Reduction};
                let Some(kind) = BuiltinReduction::from_name(name) else {
                    let names: Vec<&str> = BuiltinReduction::ALL.iter().map(|k| k.name()).collect();
                    return Err(Error::invalid_argument(format!(
                        "--axes and --keepdims apply to reductions ({}), not '{name}'",
                        names.join(", ")
                    )));
                };
                let [a] = refs.as_slice() else {
                    return Err(Error::invalid_argument(format!(
                        "{name} takes one array, got {}",
                        refs.len()
                    )));
                };
                Reduction::builtin(kind).apply(a, axes.as_deref(), keepdims)?
            } else {
                dynd::callable::lookup(name)?.call(&refs)?
            };
            Ok(format!("{}\n{}", out.tp(), out.to_json()))
        }
        "index" => {
            let tp = Type::parse(arg(1, "DATASHAPE")?)?;
            let json = json_arg(arg(2, "JSON")?)?;
            let index = arg(3, "INDEX")?;
            expect_count(4)?;
            let out = apply_index(&Array::from_json(tp, &json)?, index)?;
            Ok(format!("{}\n{}", out.tp(), out.to_json()))
        }
        "help" | "--help" | "-h" => Ok(USAGE.to_string()),
        other => Err(Error::invalid_argument(format!(
            "unknown command '{other}'\n{USAGE}"
        ))),
    }
}

/// Takes a leading `--lines` off `args`; any other option is a usage
/// error (a lone `-` is stdin, not an option).
fn lines_flag(args: &[String]) -> Result<(bool, &[String]), Error> {
    let mut lines = false;
    let rest = take_options(args, |rest| {
        let known = rest[0] == "--lines";
        lines |= known;
        Ok(known.then_some(1))
    })?;
    Ok((lines, rest))
}

/// Takes the leading options (`--…`) off `args` and returns what follows
/// them. `take` is shown `args` from each option on, and says how many
/// arguments the option used, or `None` for one it does not know: a usage
/// error. A lone `-` (stdin) is not an option.
fn take_options<'a>(
    args: &'a [String],
    mut take: impl FnMut(&'a [String]) -> Result<Option<usize>, Error>,
) -> Result<&'a [String], Error> {
    let mut rest = args;
    while let Some(first) = rest.first().filter(|a| a.starts_with("--")) {
        let Some(used) = take(rest)? else {
            return Err(Error::invalid_argument(format!(
                "unknown option '{first}'\n{USAGE}"
            )));
        };
        rest = &rest[used..];
    }
    Ok(rest)
}

/// The value of the option `--NAME` at the front of `args`, given as
/// `--NAME=VALUE` or `--NAME VALUE`, with how many arguments it used;
/// `None` when `args` starts with another option.
fn option_value<'a>(args: &'a [String], name: &str) -> Result<Option<(&'a str, usize)>, Error> {
    let tail = args
        .first()
        .and_then(|a| a.strip_prefix("--"))
        .and_then(|a| a.strip_prefix(name));
    match tail {
        Some("") => match args.get(1) {
            Some(value) => Ok(Some((value, 2))),
            None => Err(Error::invalid_argument(format!(
                "--{name} needs a value\n{USAGE}"
            ))),
        },
        Some(tail) => Ok(tail.strip_prefix('=').map(|value| (value, 1))),
        None => Ok(None),
    }
}

/// `args`, when there is one for each of `names`; else the usage error
/// naming the first one missing, or the extra ones.
fn positional<'a, const N: usize>(
    command: &str,
    args: &'a [String],
    names: [&str; N],
) -> Result<&'a [String; N], Error> {
    if let Some(missing) = names.get(args.len()) {
        return Err(Error::invalid_argument(format!(
            "missing {missing}\n{USAGE}"
        )));
    }
    if args.len() > names.len() {
        return Err(Error::invalid_argument(format!(
            "too many arguments for '{command}': {}\n{USAGE}",
            args[N..].join(" ")
        )));
    }
    args.try_into()
        .map_err(|_| Error::invalid_argument(format!("{command} takes {N} arguments\n{USAGE}")))
}

/// The text of a JSON argument: `-` reads stdin, `@PATH` the file.
fn json_arg(arg: &str) -> Result<String, Error> {
    if arg == "-" {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin().lock(), &mut text)
            .map_err(|e| Error::invalid_argument(format!("cannot read JSON from stdin: {e}")))?;
        Ok(text)
    } else if let Some(path) = arg.strip_prefix('@') {
        std::fs::read_to_string(path)
            .map_err(|e| Error::invalid_argument(format!("cannot read JSON from '{path}': {e}")))
    } else {
        Ok(arg.to_string())
    }
}

/// One item of an INDEX argument.
enum Item {
    Dim(Index),
    Field(String),
}

/// Parses INDEX: comma-separated integers, slices and field names.
fn parse_index(text: &str) -> Result<Vec<Item>, Error> {
    if text.trim().is_empty() {
        return Ok(Vec::new());
    }
    let bad = |item: &str, why: &str| {
        Error::invalid_argument(format!("INDEX '{text}': item '{item}' {why}"))
    };
    let int = |item: &str, part: &str| -> Result<Option<isize>, Error> {
        let part = part.trim();
        if part.is_empty() {
            return Ok(None);
        }
        part.parse::<isize>()
            .map(Some)
            .map_err(|_| bad(item, &format!("has '{part}' where an integer belongs")))
    };
    text.split(',')
        .map(|raw| {
            let item = raw.trim();
            if item.is_empty() {
                return Err(bad(raw, "is empty"));
            }
            if item.contains(':') {
                let parts: Vec<&str> = item.split(':').collect();
                if parts.len() > 3 {
                    return Err(bad(item, "has more than two ':'"));
                }
                let start = int(item, parts[0])?;
                let stop = int(item, parts[1])?;
                let step = match parts.get(2) {
                    Some(p) => int(item, p)?.unwrap_or(1),
                    None => 1,
                };
                Ok(Item::Dim(Index::slice(start, stop, step)))
            } else if let Ok(i) = item.parse::<isize>() {
                Ok(Item::Dim(Index::At(i)))
            } else if item.starts_with(|c: char| c.is_ascii_digit() || c == '-' || c == '+') {
                Err(bad(item, "is neither an integer nor a field name"))
            } else {
                let name = item
                    .strip_prefix('"')
                    .and_then(|s| s.strip_suffix('"'))
                    .or_else(|| item.strip_prefix('\'').and_then(|s| s.strip_suffix('\'')))
                    .unwrap_or(item);
                Ok(Item::Field(name.to_string()))
            }
        })
        .collect()
}

/// Applies INDEX to `a`, left to right: runs of integers and slices index
/// the dims in order; a field name takes that field of the structs under
/// the remaining dims, and the items after it go on with the dims not yet
/// indexed.
fn apply_index(a: &Array, text: &str) -> Result<Array, Error> {
    let mut out = a.clone();
    let mut pending: Vec<Index> = Vec::new();
    // Dims already dealt with: kept by a slice before a field name.
    let mut done = 0;
    for item in parse_index(text)? {
        match item {
            Item::Dim(ix) => pending.push(ix),
            Item::Field(name) => {
                let kept = pending
                    .iter()
                    .filter(|ix| matches!(ix, Index::Slice { .. }))
                    .count();
                let mut all = vec![Index::ALL; done];
                all.append(&mut pending);
                out = out.index(&all)?.field(&name)?;
                done += kept;
            }
        }
    }
    if !pending.is_empty() {
        let mut all = vec![Index::ALL; done];
        all.append(&mut pending);
        out = out.index(&all)?;
    }
    Ok(out)
}

/// Takes every `--threads N` (or `--threads=N`) off `args` and returns
/// the last count given, if any (DESIGN §13: `--threads N` on every
/// computing command).
fn take_threads(args: Vec<String>) -> Result<(Option<usize>, Vec<String>), Error> {
    let mut threads = None;
    let mut rest = Vec::with_capacity(args.len());
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        let value = match a.strip_prefix("--threads") {
            Some("") => it.next().ok_or_else(|| {
                Error::invalid_argument(format!("--threads needs a count\n{USAGE}"))
            })?,
            Some(v) if v.starts_with('=') => v[1..].to_string(),
            _ => {
                rest.push(a);
                continue;
            }
        };
        let n = value.trim().parse::<usize>().map_err(|_| {
            Error::invalid_argument(format!(
                "--threads takes a count (0 for the default, 1 for serial), got '{value}'"
            ))
        })?;
        threads = Some(n);
    }
    Ok((threads, rest))
}

fn main() -> ExitCode {
    let args: Result<Vec<String>, Error> = std::env::args_os()
        .skip(1)
        .map(|a| {
            a.into_string()
                .map_err(|a| Error::invalid_argument(format!("argument {a:?} is not valid utf-8")))
        })
        .collect();
    let result = args.and_then(take_threads).and_then(|(threads, args)| {
        if let Some(n) = threads {
            dynd::exec::set_num_threads(n)
                .map_err(|e| Error::invalid_argument(format!("--threads: {}", e.message())))?;
        }
        run(&args)
    });
    match result {
        Ok(out) => {
            let mut stdout = std::io::stdout().lock();
            // A closed stdout (a pipe to `head`) is not worth a panic.
            let _ = writeln!(stdout, "{out}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error[{}]: {}", e.kind().name(), e.message());
            ExitCode::FAILURE
        }
    }
}
