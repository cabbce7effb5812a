//! The kernel description: what an elementwise device kernel computes,
//! independent of how it runs. The code generator ([`crate::codegen`])
//! turns it into CUDA C; the interpreter ([`crate::interp`]) runs it on the
//! host, so the description is tested on machines without a GPU.
//!
//! A kernel walks the `n` elements of its shape in C order. Each operand is
//! either strided device data (byte strides, one per dim of the shape, 0
//! where it is broadcast) or a host scalar passed by value. The body is an
//! expression tree whose leaves are the operands and whose nodes are casts
//! and scalar operations ([`DeviceOp`], the CUDA C written beside each Rust
//! body in dynd). Every node carries a missing flag beside its value: an
//! optional operand's NA sets it, operations propagate it (Kleene logic for
//! `logical_and` / `logical_or`), and an optional output stores its NA
//! where the result is missing.

use dynd::callable::arith::{self, DeviceOp};
use dynd::callable::missing::Missing;
use dynd::kernels::assign::ErrorMode;
use dynd::types::{BuiltinType, Type, TypeKind};
use dynd::{Array, Error, Result};

/// Where an operand's values come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// Strided data: the byte stride of each dim of the kernel's shape
    /// (0 where the operand is broadcast).
    Strided(Vec<isize>),
    /// One value for every element, passed to the kernel by value.
    Scalar,
}

/// An operand of a kernel (an input or the output).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Operand {
    /// The element's value type.
    pub elem: BuiltinType,
    /// `?elem`: the NA value marks a missing element.
    pub optional: bool,
    /// Where its values are.
    pub place: Place,
}

impl Operand {
    /// The operand's stored type: `elem` or `?elem`.
    ///
    /// # Errors
    /// None for the builtins a description holds (`Type::option`'s).
    pub fn tp(&self) -> Result<Type> {
        let t = Type::builtin(self.elem);
        if self.optional {
            Type::option(t)
        } else {
            Ok(t)
        }
    }
}

/// A value computed for each element.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expr {
    /// Input `i`.
    Arg(usize),
    /// A conversion to `to` (a safe cast: promotions only; NA stays NA).
    Cast(BuiltinType, Box<Expr>),
    /// A conversion under an error mode (an assignment or cast): the
    /// host's numeric rules ([`dynd::kernels::assign::device_conversion`]);
    /// a value failing the mode's check fails its element; NA stays NA.
    Convert {
        /// The type converted to.
        to: BuiltinType,
        /// The error mode.
        mode: ErrorMode,
        /// The result goes into `?to`: under a checked mode, a present
        /// value whose bits are `?to`'s NA fails (as on the host: it
        /// would read as missing).
        to_option: bool,
        /// A NaN is missing (a plain float source into `?to` of another
        /// kind, as on the host).
        nan_missing: bool,
        /// The value converted.
        value: Box<Expr>,
    },
    /// A scalar operation of dynd's, on arguments of its compute type.
    Op {
        /// The function's name (`"add"`), for messages and the interpreter.
        name: &'static str,
        /// Its CUDA C.
        op: DeviceOp,
        /// What it gives where an argument is missing.
        missing: Missing,
        /// Its arguments.
        args: Vec<Expr>,
    },
    /// `where`: `then` where `cond` is true (non-zero), else `otherwise`;
    /// missing where `cond` is, or where the chosen value is.
    Select {
        /// The condition (bool, or a number taken by truthiness).
        cond: Box<Expr>,
        /// The value where `cond` is true.
        then: Box<Expr>,
        /// The value where it is false.
        otherwise: Box<Expr>,
    },
}

/// An elementwise kernel: `out[i] = body(inputs[i])` for every element `i`
/// of `shape`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Elementwise {
    /// The dims walked, outermost first.
    pub shape: Vec<usize>,
    /// The inputs the body reads.
    pub inputs: Vec<Operand>,
    /// The output (always strided).
    pub out: Operand,
    /// The value of each element.
    pub body: Expr,
}

impl Elementwise {
    /// The elements a run covers.
    pub fn len(&self) -> usize {
        self.shape.iter().product()
    }

    /// `true` when the kernel covers no element.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The type an expression computes.
    pub fn type_of(&self, e: &Expr) -> BuiltinType {
        match e {
            Expr::Arg(i) => self.inputs[*i].elem,
            Expr::Cast(t, _) | Expr::Convert { to: t, .. } => *t,
            Expr::Op { op, .. } => op.out,
            Expr::Select { then, .. } => self.type_of(then),
        }
    }

    /// The byte offsets of element `i` (C order over `shape`) in each
    /// operand, output first (0 for scalars): the index arithmetic every generated
    /// kernel does, here for the interpreter and for error positions.
    pub fn offsets(&self, mut i: usize) -> Vec<isize> {
        let strided: Vec<&[isize]> = std::iter::once(&self.out)
            .chain(&self.inputs)
            .map(|o| match &o.place {
                Place::Strided(s) => s.as_slice(),
                Place::Scalar => &[],
            })
            .collect();
        let mut out = vec![0isize; strided.len()];
        for k in (0..self.shape.len()).rev() {
            let n = self.shape[k];
            let j = i % n;
            i /= n;
            for (o, s) in out.iter_mut().zip(&strided) {
                if let Some(st) = s.get(k) {
                    *o += j as isize * st;
                }
            }
        }
        out
    }

    /// The multi-index of element `i` (C order over `shape`).
    pub fn index_of(&self, mut i: usize) -> Vec<usize> {
        let mut idx = vec![0; self.shape.len()];
        for k in (0..self.shape.len()).rev() {
            idx[k] = i % self.shape[k];
            i /= self.shape[k];
        }
        idx
    }

    /// The kernel of one call of dynd's elementwise function `f` (the
    /// arithmetic family: arithmetic, comparison, logic, math) writing
    /// into `out`: the host's promotion picks the compute type, each
    /// argument is cast to it, and broadcasting sets zero strides. 0-d
    /// host arrays become scalars.
    ///
    /// Dims whose strides line up in every operand are merged, so a
    /// C-contiguous call is one dim.
    ///
    /// # Errors
    /// `Type` for types the device does not compute in, or that are not
    /// fixed dims of numbers and bool (and their option types);
    /// `Broadcast` when an argument does not broadcast to `out`.
    pub fn for_call(
        f: &'static arith::Function,
        out: &Array,
        args: &[&Array],
    ) -> Result<Elementwise> {
        let layout = strided(out, "the output")?;
        let inputs = args
            .iter()
            .enumerate()
            .map(|(k, a)| operand(a, &format!("argument {k}"), &layout.0))
            .collect::<Result<Vec<Operand>>>()?;
        let body = call_body(f, &inputs, layout.2.0)?;
        Elementwise::assemble(f.name(), out, layout, inputs, body)
    }

    /// The kernel of dynd's `where(cond, x, y)` writing into `out`: `x` and
    /// `y` are cast to the output's value type (the host's promotion), the
    /// condition is taken by truthiness; 0-d host arrays become scalars.
    ///
    /// # Errors
    /// As [`Elementwise::for_call`]'s.
    pub fn for_where(out: &Array, args: &[&Array]) -> Result<Elementwise> {
        let [cond, x, y] = args else {
            return Err(Error::type_error(format!(
                "where takes 3 arguments (cond, x, y), got {}",
                args.len()
            )));
        };
        let layout = strided(out, "the output")?;
        let inputs = [(*cond, "the condition"), (*x, "x"), (*y, "y")]
            .into_iter()
            .map(|(a, what)| operand(a, what, &layout.0))
            .collect::<Result<Vec<Operand>>>()?;
        let branch = |i: usize| Box::new(cast(Expr::Arg(i), inputs[i].elem, layout.2.0));
        let body = Expr::Select {
            cond: Box::new(Expr::Arg(0)),
            then: branch(1),
            otherwise: branch(2),
        };
        Elementwise::assemble("where", out, layout, inputs, body)
    }

    /// The kernel copying `src` into `out` (a device array of the same
    /// shape, or one `src` broadcasts to), converting its values to the
    /// output's type when they differ (a promotion).
    ///
    /// # Errors
    /// As [`Elementwise::for_call`]'s.
    pub fn for_copy(out: &Array, src: &Array) -> Result<Elementwise> {
        let layout = strided(out, "the output")?;
        let input = operand(src, "the source", &layout.0)?;
        let body = cast(Expr::Arg(0), input.elem, layout.2.0);
        Elementwise::assemble("copy", out, layout, vec![input], body)
    }

    /// The kernel of `dst.assign(src, mode)`: `src` (a device array that
    /// broadcasts to `dst`, or a 0-d host scalar) converted to `dst`'s
    /// value type under `mode`. A missing value into a plain destination
    /// fails its element, as on the host.
    ///
    /// # Errors
    /// As [`Elementwise::for_call`]'s, naming the destination and source.
    pub fn for_assign(dst: &Array, src: &Array, mode: ErrorMode) -> Result<Elementwise> {
        let layout = strided(dst, "the destination")?;
        let input = operand(src, "the source", &layout.0)?;
        let body = assign_body(&input, layout.2, mode);
        Ok(Elementwise::build(layout, vec![input], body))
    }

    /// The kernel of `name` computing `body` from `inputs` into the output
    /// `out` of layout `layout`, its dims merged.
    ///
    /// # Errors
    /// `Type` when an input is optional and the output is not (it could
    /// not hold a missing result).
    fn assemble(
        name: &str,
        out: &Array,
        layout: Layout,
        inputs: Vec<Operand>,
        body: Expr,
    ) -> Result<Elementwise> {
        if !layout.2.1 && inputs.iter().any(|o| o.optional) {
            return Err(Error::type_error(format!(
                "{name}: an optional argument needs an optional output, got {}",
                out.tp()
            )));
        }
        Ok(Elementwise::build(layout, inputs, body))
    }

    /// The kernel computing `body` from `inputs` into an output of layout
    /// `layout`, its dims merged. (Its codegen fails an element whose
    /// value is missing under a plain output.)
    pub(crate) fn build(layout: Layout, inputs: Vec<Operand>, body: Expr) -> Elementwise {
        let (shape, strides, (elem, optional)) = layout;
        let mut k = Elementwise {
            shape,
            inputs,
            out: Operand {
                elem,
                optional,
                place: Place::Strided(strides),
            },
            body,
        };
        k.merge_dims();
        k
    }

    /// Merges neighbouring dims that every strided operand walks as one
    /// (`stride[k] == stride[k + 1] * shape[k + 1]`), and drops dims of
    /// size 1; an empty shape becomes one dim of 1.
    fn merge_dims(&mut self) {
        let mut ops: Vec<&mut Vec<isize>> = std::iter::once(&mut self.out)
            .chain(self.inputs.iter_mut())
            .filter_map(|o| match &mut o.place {
                Place::Strided(s) => Some(s),
                Place::Scalar => None,
            })
            .collect();
        let mut shape: Vec<usize> = Vec::new();
        let mut strides: Vec<Vec<isize>> = vec![Vec::new(); ops.len()];
        for k in 0..self.shape.len() {
            let n = self.shape[k];
            if n == 1 {
                continue;
            }
            let mergeable = !shape.is_empty()
                && ops.iter().enumerate().all(|(j, s)| {
                    let last = *strides[j].last().unwrap_or(&0);
                    last == s[k] * n as isize
                });
            if mergeable {
                let last = shape.len() - 1;
                shape[last] *= n;
                for (j, s) in ops.iter().enumerate() {
                    let l = strides[j].len() - 1;
                    strides[j][l] = s[k];
                }
            } else {
                shape.push(n);
                for (j, s) in ops.iter().enumerate() {
                    strides[j].push(s[k]);
                }
            }
        }
        if self.shape.contains(&0) {
            shape = vec![0];
            strides = vec![vec![0]; ops.len()];
        } else if shape.is_empty() {
            shape.push(1);
            strides = vec![vec![0]; ops.len()];
        }
        for (s, new) in ops.iter_mut().zip(strides) {
            **s = new;
        }
        self.shape = shape;
    }

    /// `true` when every strided operand steps by its element size (or 0,
    /// broadcast) over one dim: the kernel then indexes typed pointers.
    pub fn is_contiguous(&self) -> bool {
        self.shape.len() == 1
            && std::iter::once(&self.out)
                .chain(&self.inputs)
                .all(|o| match &o.place {
                    Place::Strided(s) => s[0] == 0 || s[0] == o.elem.data_size() as isize,
                    Place::Scalar => true,
                })
    }
}

/// The body of a call of dynd's function `f` on `inputs` into an output
/// of value type `out`: each argument cast to the host's compute type, the
/// operation, the result cast to `out`.
///
/// # Errors
/// `Type` for types the device does not compute in.
pub fn call_body(
    f: &'static arith::Function,
    inputs: &[Operand],
    out: BuiltinType,
) -> Result<Expr> {
    let values: Vec<Type> = inputs.iter().map(|o| Type::builtin(o.elem)).collect();
    let op = f.device_op(&values)?;
    let args = (0..inputs.len())
        .map(|i| cast(Expr::Arg(i), inputs[i].elem, op.compute))
        .collect();
    let body = Expr::Op {
        name: f.name(),
        op,
        missing: f.missing(),
        args,
    };
    Ok(cast(body, op.out, out))
}

/// The body of an assignment of `input` into an output of value type and
/// optionality `(to, to_option)` under `mode` ([`Elementwise::for_assign`]).
pub fn assign_body(input: &Operand, (to, to_option): (BuiltinType, bool), mode: ErrorMode) -> Expr {
    let checked = mode != ErrorMode::NoCheck;
    if input.elem == to && !(to_option && checked) {
        return Expr::Arg(0);
    }
    Expr::Convert {
        to,
        mode,
        to_option,
        nan_missing: to_option && input.elem.is_float() && !input.optional && !to.is_float(),
        value: Box::new(Expr::Arg(0)),
    }
}

/// The types the device computes in: bool, the integers of 8 to 64 bits,
/// float32 and float64 ([`BuiltinType::cuda_c`]).
pub fn device_types() -> impl Iterator<Item = BuiltinType> {
    BuiltinType::ALL
        .into_iter()
        .filter(|b| b.cuda_c().is_some())
}

/// Argument `a` (named `what` in messages) as an operand over `shape`: a
/// device array broadcast to it, or a 0-d host scalar.
pub(crate) fn operand(a: &Array, what: &str, shape: &[usize]) -> Result<Operand> {
    let (elem, optional) = value_type(a, what)?;
    let place = if a.device().is_cpu() {
        if a.ndim() != 0 {
            return Err(Error::invalid_argument(format!(
                "{what} ({}) is on the host; only 0-d host scalars join device arrays",
                a.tp()
            )));
        }
        Place::Scalar
    } else {
        let (ashape, astrides, _) = strided(a, what)?;
        Place::Strided(broadcast(shape, &ashape, &astrides, what)?)
    };
    Ok(Operand {
        elem,
        optional,
        place,
    })
}

/// `e` converted to `to`, when it is of another type.
pub(crate) fn cast(e: Expr, from: BuiltinType, to: BuiltinType) -> Expr {
    if from == to {
        e
    } else {
        Expr::Cast(to, Box::new(e))
    }
}

/// The value type of an array's elements and whether they are optional.
pub(crate) fn value_type(a: &Array, what: &str) -> Result<(BuiltinType, bool)> {
    let mut t = a.tp();
    while let TypeKind::FixedDim { elem, .. } = t.kind() {
        t = elem;
    }
    match element_value(t) {
        Some(v) => Ok(v),
        None => Err(Error::type_error(format!(
            "{what} ({}) cannot be computed on the device: its elements must be bool, integers \
             of 8 to 64 bits, float32 or float64, or their option types, under fixed dims",
            a.tp()
        ))),
    }
}

/// The device type of the element type `t` (a builtin the device computes
/// in, or an option of one) and whether it is optional; `None` for others.
pub(crate) fn element_value(t: &Type) -> Option<(BuiltinType, bool)> {
    let (v, optional) = match t.kind() {
        TypeKind::Option(v) => (v, true),
        _ => (t, false),
    };
    v.as_builtin()
        .filter(|b| b.cuda_c().is_some())
        .map(|b| (b, optional))
}

/// An array's shape, byte strides, and value type with whether it is
/// optional.
pub(crate) type Layout = (Vec<usize>, Vec<isize>, (BuiltinType, bool));

/// The [`Layout`] of a fixed-dim array.
pub(crate) fn strided(a: &Array, what: &str) -> Result<Layout> {
    let elem = value_type(a, what)?;
    let (shape, strides, _) = a.strided_layout()?;
    Ok((shape, strides, elem))
}

/// An argument's strides over the output's shape: aligned on the right,
/// 0 for dims it lacks or has as 1.
fn broadcast(out: &[usize], shape: &[usize], strides: &[isize], what: &str) -> Result<Vec<isize>> {
    if shape.len() > out.len() {
        return Err(Error::broadcast(format!(
            "{what} has {} dims, more than the output's {}",
            shape.len(),
            out.len()
        )));
    }
    let lead = out.len() - shape.len();
    let mut r = vec![0isize; out.len()];
    for (k, (&n, &s)) in shape.iter().zip(strides).enumerate() {
        let m = out[lead + k];
        if n == m {
            r[lead + k] = if n == 1 { 0 } else { s };
        } else if n != 1 {
            return Err(Error::broadcast(format!(
                "{what}: dim {k} of size {n} does not broadcast to {m}"
            )));
        }
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use dynd::exec::testing::HostBackedDevice;
    use dynd::memblock::DeviceId;

    fn dev(json: &str, tp: &str) -> Array {
        Array::from_json(tp, json)
            .unwrap()
            .to_device(DeviceId::Cuda(40))
            .unwrap()
    }

    #[test]
    fn a_contiguous_call_is_one_dim_and_broadcasts_are_zero_strides() {
        let _d = HostBackedDevice::install(40);
        let a = dev("[[1,2,3],[4,5,6]]", "2 * 3 * int32");
        let b = dev("[0.5, 1.5, 2.5]", "3 * float64");
        let out = Array::empty_on(DeviceId::Cuda(40), "2 * 3 * float64").unwrap();
        let k = Elementwise::for_call(arith::function("add").unwrap(), &out, &[&a, &b]).unwrap();
        assert_eq!(k.shape, vec![2, 3]);
        assert_eq!(k.out.place, Place::Strided(vec![24, 8]));
        assert_eq!(k.inputs[0].place, Place::Strided(vec![12, 4]));
        assert_eq!(k.inputs[1].place, Place::Strided(vec![0, 8]));
        assert!(!k.is_contiguous());
        // int32 + float64 computes in float64: the int32 operand is cast.
        let Expr::Op { args, op, .. } = &k.body else {
            panic!("{:?}", k.body)
        };
        assert_eq!(op.compute, BuiltinType::Float64);
        assert_eq!(
            args[0],
            Expr::Cast(BuiltinType::Float64, Box::new(Expr::Arg(0)))
        );
        assert_eq!(args[1], Expr::Arg(1));

        let c = dev("[[1,2,3],[4,5,6]]", "2 * 3 * int32");
        let out = Array::empty_on(DeviceId::Cuda(40), "2 * 3 * int32").unwrap();
        let one = Array::from(1i32);
        let k = Elementwise::for_call(arith::function("add").unwrap(), &out, &[&a, &c]).unwrap();
        assert_eq!(k.shape, vec![6]);
        assert!(k.is_contiguous());
        let k = Elementwise::for_call(arith::function("add").unwrap(), &out, &[&a, &one]).unwrap();
        assert_eq!(k.inputs[1].place, Place::Scalar);
        assert!(k.is_contiguous());
        assert_eq!(k.offsets(4), vec![16, 16, 0]);
        assert_eq!(k.index_of(4), vec![4]);
    }

    #[test]
    fn types_the_device_lacks_are_refused_by_name() {
        let _d = HostBackedDevice::install(40);
        let a = dev("[1, 2]", "2 * float16");
        let out = Array::empty_on(DeviceId::Cuda(40), "2 * float16").unwrap();
        let e =
            Elementwise::for_call(arith::function("add").unwrap(), &out, &[&a, &a]).unwrap_err();
        assert_eq!(e.kind(), dynd::ErrorKind::Type);
        assert!(e.message().contains("float16"), "{e}");
        let host = Array::from(vec![1.0f64, 2.0]);
        let b = dev("[1, 2]", "2 * float64");
        let out = Array::empty_on(DeviceId::Cuda(40), "2 * float64").unwrap();
        let e =
            Elementwise::for_call(arith::function("add").unwrap(), &out, &[&b, &host]).unwrap_err();
        assert!(e.message().contains("on the host"), "{e}");
        // A missing condition needs an optional output to land in.
        let cond = dev("[true, null]", "2 * ?bool");
        let e = Elementwise::for_where(&out, &[&cond, &b, &b]).unwrap_err();
        assert!(e.message().contains("needs an optional output"), "{e}");
    }
}
