//! A host interpreter of kernel descriptions: runs an [`Elementwise`] on
//! host arrays, reading and writing every element at the byte offsets the
//! generated kernel uses ([`Elementwise::offsets`]), and computing each node
//! with dynd's host callables (casts with dynd's conversions). Property
//! tests check it against dynd's own calls, so the description the code
//! generator consumes — promotions, casts, broadcasting, dim merging,
//! missing values — is tested on every machine, GPU or not.

use crate::kernel::{Elementwise, Expr, Place};
use dynd::kernels::assign::ErrorMode;
use dynd::{Array, Error, Result, callable};

/// Runs `k` with `out` and `inputs` as its operands: the arrays (on the
/// host) the description was made from.
///
/// # Errors
/// The errors the host's callables give for the elements (a division by
/// zero names the dividend); `InvalidArgument` when an operand is not on
/// the host, or `out` and `inputs` do not match the description.
pub fn run(k: &Elementwise, out: &Array, inputs: &[&Array]) -> Result<()> {
    if inputs.len() != k.inputs.len() {
        return Err(Error::invalid_argument(format!(
            "the kernel takes {} inputs, got {}",
            k.inputs.len(),
            inputs.len()
        )));
    }
    for a in std::iter::once(out).chain(inputs.iter().copied()) {
        a.check_host("the kernel interpreter")?;
    }
    out.check_writable()?;
    let n = k.len();
    let columns: Vec<Array> = k
        .inputs
        .iter()
        .enumerate()
        .map(|(i, o)| column(k, i, o.tp()?, inputs[i], n))
        .collect::<Result<_>>()?;
    let result = eval(&k.body, &columns, !k.out.optional)?;
    // Scatter into the output at its offsets (the output's stored type).
    let out_tp = k.out.tp()?;
    let result = result.cast(dynd::Type::fixed_dim(n, out_tp.clone()), ErrorMode::NoCheck)?;
    let size = out_tp.data_size();
    for i in 0..n {
        let off = k.offsets(i)[0];
        // SAFETY: `result` is a fresh contiguous host array of n elements
        // of the output's stored type; `out` is a writable host array whose
        // element i lies at `off` (the description was made from it).
        unsafe {
            std::ptr::copy_nonoverlapping(
                result.data_ptr().add(i * size),
                out.data_ptr().offset(off),
                size,
            )
        };
    }
    Ok(())
}

/// Input `i`'s n values, gathered at the kernel's offsets into a new
/// contiguous array of its stored type.
fn column(k: &Elementwise, i: usize, tp: dynd::Type, a: &Array, n: usize) -> Result<Array> {
    let col = Array::empty(dynd::Type::fixed_dim(n, tp.clone()))?;
    let size = tp.data_size();
    for j in 0..n {
        let src = match k.inputs[i].place {
            // The output is operand 0 of the offsets.
            // SAFETY: `a` is the host array input i describes, so the
            // offset of element j lies inside its data (the output is
            // operand 0 of the offsets).
            Place::Strided(_) => unsafe { a.data_ptr().offset(k.offsets(j)[1 + i]) },
            Place::Scalar => a.data_ptr(),
        };
        // SAFETY: `src` points at one element of the input's stored type
        // (checked to equal `tp` when the description was made); `col` is a
        // fresh array of n such elements.
        unsafe { std::ptr::copy_nonoverlapping(src, col.data_ptr().add(j * size), size) };
    }
    Ok(col)
}

/// The column of values `e` computes; a conversion to a plain output
/// (`plain_out`) keeps no missing value (the host's cast fails on one).
fn eval(e: &Expr, columns: &[Array], plain_out: bool) -> Result<Array> {
    match e {
        Expr::Arg(i) => Ok(columns[*i].clone()),
        Expr::Convert {
            to,
            mode,
            to_option,
            value: inner,
            ..
        } => {
            let v = eval(inner, columns, plain_out)?;
            let n = v.shape()[0].unwrap_or(0);
            let optional = matches!(v.tp().dtype().kind(), dynd::types::TypeKind::Option(_));
            let elem = dynd::Type::builtin(*to);
            let elem = if *to_option || optional && !plain_out {
                dynd::Type::option(elem)?
            } else {
                elem
            };
            v.cast(dynd::Type::fixed_dim(n, elem), *mode)
        }
        Expr::Cast(to, inner) => {
            let v = eval(inner, columns, plain_out)?;
            let n = v.shape()[0].unwrap_or(0);
            let optional = matches!(v.tp().dtype().kind(), dynd::types::TypeKind::Option(_));
            let elem = dynd::Type::builtin(*to);
            let elem = if optional {
                dynd::Type::option(elem)?
            } else {
                elem
            };
            v.cast(dynd::Type::fixed_dim(n, elem), ErrorMode::NoCheck)
        }
        Expr::Select {
            cond,
            then,
            otherwise,
        } => {
            let vals = [cond, then, otherwise]
                .map(|e| eval(e, columns, plain_out))
                .into_iter()
                .collect::<Result<Vec<Array>>>()?;
            callable::lookup("where")?.call(&[&vals[0], &vals[1], &vals[2]])
        }
        Expr::Op { name, args, .. } => {
            let vals: Vec<Array> = args
                .iter()
                .map(|a| eval(a, columns, plain_out))
                .collect::<Result<_>>()?;
            let refs: Vec<&Array> = vals.iter().collect();
            callable::lookup(name)?.call(&refs)
        }
    }
}
