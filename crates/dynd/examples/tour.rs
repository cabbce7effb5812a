//! A guided, printed walk through what dynd-rs can do today.
//!
//! Run it with `cargo run --release --example tour`.

use dynd::{Array, Index, Type};

fn section(title: &str) {
    println!("\n== {title} ==");
}

fn show<T: std::fmt::Display>(what: &str, r: Result<T, dynd::Error>) {
    match r {
        Ok(v) => println!("{what:<44} {v}"),
        Err(e) => println!("{what:<44} error[{}]: {e}", e.kind()),
    }
}

fn main() -> Result<(), dynd::Error> {
    section("Types are values, spoken as datashape");
    let tp: Type = "3 * var * {x: int32, name: string}".parse()?;
    println!("type        {tp}");
    println!(
        "layout      data_size={} data_alignment={} arrmeta_size={}",
        tp.data_size(),
        tp.data_alignment(),
        tp.arrmeta_size()
    );
    for text in [
        "option[int]",
        "complex",
        "7**2 * real",
        "{x: int32, 'Quoted Name!': ?string,}",
    ] {
        show(&format!("canonical form of {text:?}"), Type::parse(text));
    }
    println!(
        "symbolic types describe families: {}",
        Type::parse("(N * T, N * T) -> N * T")?
    );
    show("a malformed datashape", Type::parse("3 * int32 * float64"));
    show("an unknown type", Type::parse("float65"));

    section("Arrays from JSON, printed back");
    let people = Array::from_json(
        "var * {name: string, age: ?int32, tags: var * string}",
        r#"[{"name": "Ada", "age": 36, "tags": ["math", "engines"]},
            {"name": "Grace", "age": null, "tags": []},
            {"name": "Édouard", "age": 7, "tags": ["☃"]}]"#,
    )?;
    println!("{people}");
    println!("compact JSON: {}", people.to_json());

    section("Views share data; nothing is copied");
    let m = Array::from_json("3 * 4 * int32", "[[0,1,2,3],[4,5,6,7],[8,9,10,11]]")?;
    let rev = m.index(&[Index::slice(None, None, -1), Index::slice(Some(1), None, 2)])?;
    println!("m                      = {}", m.to_json());
    println!("m[::-1, 1::2]          = {rev}");
    println!("transpose              = {}", m.permute(&[1, 0])?.to_json());
    println!(
        "ages (a struct field)  = {}",
        people.field("age")?.to_json()
    );
    rev.index(&[0.into(), 0.into()])?.set_scalar(-9i32)?;
    println!("after writing -9 through the view, m = {}", m.to_json());
    println!(
        "a copy owns its data: shares_data_with(m) = {}",
        m.copy()?.shares_data_with(&m)
    );

    section("Ragged data, built from Rust");
    let ragged = Array::from(vec![vec![1i64, 2, 3], vec![4], vec![]]);
    println!("{ragged}");
    println!(
        "row 0 reversed: {}",
        ragged
            .index(&[0.into(), Index::slice(None, None, -1)])?
            .to_json()
    );

    section("Casting between types, under four error modes");
    use dynd::kernels::assign::ErrorMode;
    let x = Array::from_json("4 * float64", "[1.0, 2.5, -3.75, 1e10]")?;
    for mode in [
        ErrorMode::NoCheck,
        ErrorMode::Overflow,
        ErrorMode::Fractional,
    ] {
        show(
            &format!("{} as 4 * int32 ({mode})", x.to_json()),
            x.cast("4 * int32", mode),
        );
    }
    show(
        "33554433 as float32 (default)",
        Array::from(33554433i64).cast("float32", ErrorMode::Default),
    );
    show(
        "33554433 as float32 (inexact)",
        Array::from(33554433i64).cast("float32", ErrorMode::Inexact),
    );
    show(
        "-1 as uint16 (nocheck)",
        Array::from(-1i32).cast("uint16", ErrorMode::NoCheck),
    );
    let ragged = Array::from_json("2 * var * int32", "[[1, 2, 3], [4]]")?;
    show(
        "[[1,2,3],[4]] into 2 * 3 * float64",
        ragged.cast("2 * 3 * float64", ErrorMode::Default),
    );
    show(
        "[9, 2] into 3 * int32",
        Array::from(vec![9i32, 2]).cast("3 * int32", ErrorMode::Default),
    );
    let rec = Array::from_json("{y: int64, x: float64}", r#"{"y": 2, "x": 0.5}"#)?;
    show(
        "{y, x} into {x: float32, y: int8} (by name)",
        rec.cast("{x: float32, y: int8}", ErrorMode::Default),
    );
    show(
        "[1.0, NaN] into 2 * ?int32",
        Array::from(vec![1.0f64, f64::NAN]).cast("2 * ?int32", ErrorMode::Default),
    );

    section("Callables: lifted over fixed and var dims, with broadcasting");
    let ragged = Array::from_json("2 * var * int32", "[[1, 2, 3], [4]]")?;
    let fixed = Array::from_json("2 * 3 * int32", "[[5, 6, 7], [8, 9, 10]]")?;
    show("[[1,2,3],[4]] + [[5,6,7],[8,9,10]]", &ragged + &fixed);
    show(
        "[[1,2,3],[4]] + [[5],[6,7]]",
        &ragged + &Array::from_json("2 * var * int32", "[[5], [6, 7]]")?,
    );
    show(
        "[[1,2,3],[4]] * 2.5 (promoted)",
        &ragged * &Array::from(2.5f64),
    );
    show(
        "[[1,2,3],[4]] + [1, 2] (broadcast error)",
        &ragged + &Array::from(vec![1i32, 2]),
    );
    let add_one = dynd::callable::Callable::from_fn1("add_one", |x: i32| x + 1);
    show(
        "a Rust closure over [[1,2,3],[4]]",
        add_one.call(&[&ragged]),
    );
    let words = Array::from(vec!["abc", "ababc", "ababab", "abd"]);
    show(
        "find(words, \"abc\")",
        dynd::compute::find(&words, &Array::from("abc")),
    );
    show(
        "split(\"xaxxbxxxc\", \"x\")",
        dynd::compute::split(&Array::from("xaxxbxxxc"), &Array::from("x")),
    );

    section("Reductions over axes, keepdims, and var dims");
    use dynd::compute as reduce;
    let m = Array::from_json("2 * 3 * float64", "[[1.5, 2, 7], [-2.25, 7, 2.125]]")?;
    show("sum over axis 1", reduce::sum(&m, Some(&[1]), false));
    show(
        "sum over axis 1, keepdims",
        reduce::sum(&m, Some(&[1]), true),
    );
    show("max over all axes", reduce::max(&m, None, false));
    let r = Array::from_json("3 * var * int32", "[[1, 2], [3, 4, 5], [6, 7, 8, 9]]")?;
    show(
        "sum over the var axis of [[1,2],[3,4,5],[6,7,8,9]]",
        reduce::sum(&r, Some(&[1]), false),
    );
    show(
        "min of an empty extent",
        reduce::min(&Array::from_json("0 * int32", "[]")?, None, false),
    );
    let o = Array::from_json("3 * var * ?float64", "[[1, null, 3], [], [null]]")?;
    show(
        "sum over axis -1 of [[1,null,3],[],[null]] (missing values skipped)",
        reduce::sum(&o, Some(&[-1]), false),
    );
    show(
        "max over axis -1 (missing where nothing is left)",
        reduce::max(&o, Some(&[-1]), false),
    );
    show(
        "argmax over axis -1",
        reduce::argmax(&o, Some(&[-1]), false),
    );
    show("count over all axes", reduce::count(&o, None, false));
    show(
        "sum over axis 0 of [[1,2],[3,4,5],[6,7,8,9]] (unequal rows combine)",
        reduce::sum(&r, Some(&[0]), false),
    );

    section("Missing values: computed on, not around");
    use dynd::compute::{drop_null, fill_null, is_null};
    let ages = Array::from_json("5 * ?int32", "[31, null, 45, null, 28]")?;
    let heights = Array::from_json("2 * var * ?float64", "[[1.8, null], [null, 1.6, 1.7]]")?;
    println!("{:<44} {}", "ages: 5 * ?int32", ages.to_json());
    show(
        "ages + 1 (missing stays missing)",
        &ages + &Array::from(1i32),
    );
    show("heights * 100.0", &heights * &Array::from(100.0f64));
    show(
        "ages < 40 (?bool)",
        dynd::compute::less(&ages, &Array::from(40i32)),
    );
    show("is_null(ages)", is_null(&ages));
    show(
        "fill_null(ages, 0) (the ? is dropped)",
        fill_null(&ages, &Array::from(0i32)),
    );
    show(
        "fill_null(heights, row means)",
        fill_null(
            &heights,
            &Array::from_json("2 * 1 * float64", "[[1.8], [1.65]]")?,
        ),
    );
    show("drop_null(ages)", drop_null(&ages));
    show("drop_null(heights) (row by row)", drop_null(&heights));
    let people = Array::from_json(
        "3 * {name: string, age: ?int32}",
        r#"[{"name": "ann", "age": 31}, {"name": "bob"}, {"name": "cy", "age": null}]"#,
    )?;
    show(
        "people without \"age\" read it as null",
        Ok::<_, dynd::Error>(people.to_json()),
    );
    show("is_null(people.age)", is_null(&people.field("age")?));
    show(
        "fill_null(people.age, -1)",
        fill_null(&people.field("age")?, &Array::from(-1i32)),
    );

    section("Selecting and sorting records");
    use dynd::compute::{argsort, concatenate, cumsum, filter, sort, sort_by, take, where_};
    let runners = Array::from_json(
        "5 * {name: string, age: ?int32, laps: var * float64}",
        r#"[{"name": "ann", "age": 31, "laps": [62.5, 60.1, 59.8]},
            {"name": "bob", "laps": [70.2]},
            {"name": "cy", "age": 45, "laps": []},
            {"name": "dee", "age": 28, "laps": [58.9, 61.0]},
            {"name": "eve", "age": 52, "laps": [66.0, 64.5, 65.1, 63.9]}]"#,
    )?;
    let age = runners.field("age")?;
    let laps = runners.field("laps")?;
    let over_30 = dynd::compute::greater(&age, &Array::from(30i32))?;
    show("age > 30 (?bool)", Ok::<_, dynd::Error>(over_30.to_json()));
    show(
        "filter(names, age > 30) (missing drops)",
        filter(&runners.field("name")?, &over_30),
    );
    show("argsort(age) (missing last)", argsort(&age));
    show(
        "take(names, argsort(age)): youngest first",
        take(&runners.field("name")?, &argsort(&age)?),
    );
    show("sort(laps) (row by row)", sort(&laps));
    show(
        "sort_by(laps, descending)",
        sort_by(&laps, dynd::compute::SortOptions { descending: true }),
    );
    show(
        "filter(laps, laps < 62.0) (per-row mask)",
        filter(&laps, &dynd::compute::less(&laps, &Array::from(62.0f64))?),
    );
    show(
        "take(laps, [[-1], ...]) (from the end)",
        take(
            &laps,
            &Array::from_json("5 * var * int64", "[[-1], [-1], [], [-1], [-1, 0]]")?,
        ),
    );
    show(
        "take(laps, [[5], ...]) (out of range)",
        take(
            &laps,
            &Array::from_json("5 * var * int64", "[[5], [], [], [], []]")?,
        ),
    );
    show("cumsum(laps) (running totals)", cumsum(&laps));
    show(
        "where(laps < 60.0, laps, 60.0)",
        where_(
            &dynd::compute::less(&laps, &Array::from(60.0f64))?,
            &laps,
            &Array::from(60.0f64),
        ),
    );
    let all = Index::slice(None, None, 1);
    show(
        "laps[:, 1:3] (a view, per row)",
        laps.index(&[all, Index::slice(Some(1), Some(3), 1)]),
    );
    show(
        "laps[:, -1] (an empty row is an error)",
        laps.index(&[all, Index::At(-1)]),
    );
    show(
        "laps[:, :1] (empty rows stay empty)",
        laps.index(&[all, Index::slice(None, Some(1), 1)]),
    );
    for (i, row) in laps.iter().enumerate().take(2) {
        println!(
            "{:<44} {} values: {}",
            format!("laps row {i} (iteration)"),
            row.len()?,
            row
        );
    }
    show(
        "concatenate(laps, [[1.0]])",
        concatenate(&[&laps, &Array::from_json("1 * var * float64", "[[1.0]]")?]),
    );

    section("Bad input is a typed error, never a panic");
    show("uint8 <- 256", Array::from_json("uint8", "256"));
    show("int32 <- 1.5", Array::from_json("int32", "1.5"));
    show("uint8 <- -0", Array::from_json("uint8", "-0"));
    show(
        "2 * var * {x: uint8} <- ... 300 ...",
        Array::from_json("2 * var * {x: uint8}", r#"[[{"x": 1}], [{"x": 300}]]"#),
    );
    show(
        "{x: int32, name: string} <- {\"x\": 1}",
        Array::from_json("{x: int32, name: string}", r#"{"x": 1}"#),
    );
    show(
        "string <- lone surrogate",
        Array::from_json("string", r#""\ud800""#),
    );
    show("m[3]", m.index(&[3.into()]));
    show("m[0, 0, 0]", m.index(&[0.into(), 0.into(), 0.into()]));

    section("The CUDA device (dynd-cuda)");
    device_section()
}

/// Arrays on a CUDA device and calls there, when this machine has one;
/// otherwise the reason it has none.
fn device_section() -> Result<(), dynd::Error> {
    use dynd::compute;
    use dynd::memblock::DeviceId;
    match dynd_cuda::install() {
        Err(e) => {
            println!("  skipped: {}", e.message());
            Ok(())
        }
        Ok(n) => {
            let gpu = DeviceId::Cuda(0);
            println!("  {n} device(s); computing on {gpu}");
            let x = Array::from_json("2 * 3 * ?float64", "[[1, null, 3], [4, 5, 6]]")?
                .to_device(gpu)?;
            println!("  x.device()                    = {}", x.device());
            let y = compute::multiply(&x, &Array::from(2.0f64))?;
            println!(
                "  x * 2.0 (on {})          = {}",
                y.device(),
                y.to_host()?.to_json()
            );
            let v = x.index(&[Index::slice(None, None, -1)])?;
            println!("  x[::-1] (a view on {})  = {}", v.device(), v.to_json());
            show(
                "x + host 2 * 3 array",
                compute::add(
                    &x,
                    &Array::from_json("2 * 3 * float64", "[[0,0,0],[0,0,0]]")?,
                ),
            );
            Ok(())
        }
    }
}
