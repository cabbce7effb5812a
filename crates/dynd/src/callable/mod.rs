//! Callables: deferred ckernels (DESIGN §1.5). A callable has a signature
//! (a callable datashape such as `(T, T) -> T`), resolves its output type
//! from concrete argument types, and instantiates a ckernel for concrete
//! arrmeta and a request — NumPy's "resolve descriptors, then get a loop".
//!
//! Most callables are *scalar*: their kernels work on one element, and
//! [`Callable::call`] lifts them over every fixed and var dim of the
//! arguments with broadcasting ([`elementwise`], through the same lifter
//! assignment uses). Callables that see whole arrays (reductions) say so
//! with [`CallableImpl::is_scalar`].
//!
//! Callables come from Rust functions ([`Callable::from_fn1`],
//! [`Callable::from_fn2`] and their fallible forms), from a third party's
//! raw deferred ckernel ([`deferred`]), and from overload sets
//! ([`dispatch`]). [`lookup`] finds the built-in ones by name.

pub mod arith;
pub mod deferred;
pub mod device;
pub mod dispatch;
pub mod elementwise;
mod fixed;
pub mod missing;
pub mod nulls;
mod option_rows;
pub mod reduce;
mod registry;
mod rows;
mod scalar;
pub mod select;
pub mod sort;
mod split;
pub mod strings;

pub use registry::{lookup, names, register};

use crate::array::Array;
use crate::error::{Error, ErrorKind, Result};
use crate::kernels::{CKernelBuilder, KernelArgs, KernelRequest};
use crate::types::Type;
use std::pin::{Pin, pin};
use std::sync::Arc;

/// What a callable implements.
pub trait CallableImpl: Send + Sync + 'static {
    /// Its name (`"add"`), for messages and the registry.
    fn name(&self) -> &str;

    /// Its signature: a callable type, possibly a pattern (`(T, T) -> T`).
    fn signature(&self) -> &Type;

    /// `true` (the default) when the kernels work on single elements and
    /// calls lift them over the arguments' dims.
    fn is_scalar(&self) -> bool {
        true
    }

    /// The output type for these argument types (for a scalar callable:
    /// element types, dims stripped). A `Type` error names the mismatch.
    fn resolve(&self, args: &[Type]) -> Result<Type>;

    /// For a scalar callable, how many of each argument's innermost dims
    /// are its *core*: part of the element the callable sees, not lifted
    /// over (NumPy's gufunc core dims, decided per call from the whole
    /// argument types). `None` (the default): no argument has any — every
    /// leading dim is lifted, and the element is what lies under them.
    ///
    /// `fill_null(x, v)` says so for `v` when `x`'s element is an option
    /// of a dim: in `fill_null(2 * ?3 * int32, 3 * int32)` the fill's `3`
    /// is the option's value's, not a dim to broadcast against `x`'s `2`.
    /// The outer dims left (a count is clamped to the argument's leading
    /// dims) broadcast as usual ([`elementwise`]).
    fn core_dims(&self, _args: &[&Type]) -> Option<Vec<usize>> {
        None
    }

    /// Builds the kernel computing `dst` from `srcs` at `offset`, for the
    /// request; returns the offset just past it.
    ///
    /// # Safety
    /// 1. `offset` is a free slot of `ckb` (as [`CKernelBuilder::emplace`]).
    /// 2. Each arrmeta pointer is valid arrmeta of its type, and the types
    ///    are ones [`CallableImpl::resolve`] accepted (with `dst_tp` its
    ///    result).
    unsafe fn instantiate(
        &self,
        ckb: Pin<&mut CKernelBuilder>,
        offset: usize,
        args: KernelArgs<'_>,
    ) -> Result<usize>;

    /// What its result is where an argument is missing, when it is called
    /// on option types it does not take itself ([`missing`]): missing (the
    /// default), or a Kleene rule.
    fn missing(&self) -> missing::Missing {
        missing::Missing::Propagate
    }

    /// `true` (the default) when, on option arguments of builtin numbers,
    /// its kernel may run over missing elements too — their NA bits taken
    /// as plain values and the results overwritten with NA — so that the
    /// inner loop stays one vectorised loop ([`missing`]). That suits a
    /// pure function of numbers (the built-in arithmetic). Callables whose
    /// kernels someone else wrote (Rust closures, third parties' deferred
    /// ckernels) say `false`: their kernels then only ever see present
    /// elements.
    fn runs_over_missing(&self) -> bool {
        true
    }

    /// The reduction this is, when it is one of dynd's
    /// ([`reduce::Reduction`]): a device runtime runs those itself
    /// ([`reduce::Reduction::of`]). The default, `None`, for everything
    /// else.
    fn as_reduction(&self) -> Option<&reduce::Reduction> {
        None
    }

    /// The row operation this is, when it is one of dynd's
    /// ([`sort::RowOp::of`]); `None` for everything else.
    fn as_row_op(&self) -> Option<sort::RowOp> {
        None
    }

    /// Builds, when it has one, a kernel over option arguments of builtin
    /// numbers that writes the result's NA where an argument is NA in the
    /// same loop as the values (one pass over memory: the built-in
    /// arithmetic that cannot fail has one); `Ok(None)` when it has none,
    /// and [`missing`]'s wrapper runs its plain kernel instead (the
    /// default). `args` holds the value types (options stripped) and the
    /// result's value type; `optional[i]` says that argument `i` is an
    /// option. Called only where [`CallableImpl::runs_over_missing`] holds,
    /// missing is missing ([`missing::Missing::Propagate`]), and the value
    /// types are ones [`CallableImpl::resolve`] accepts.
    ///
    /// # Safety
    /// As [`CallableImpl::instantiate`], for the value types; the data and
    /// arrmeta are the option types', laid out as the value types' (an
    /// option of a builtin number is its value with an NA bit pattern,
    /// DESIGN §4).
    unsafe fn instantiate_propagating(
        &self,
        ckb: Pin<&mut CKernelBuilder>,
        offset: usize,
        args: KernelArgs<'_>,
        optional: &[bool],
    ) -> Result<Option<usize>> {
        let _ = (ckb, offset, args, optional);
        Ok(None)
    }

    /// `true` when a kernel it builds for builtin element types (which have
    /// no arrmeta) depends on nothing but those types and the request: a
    /// call may then keep the kernel and run it again in later calls on the
    /// same types, on the same thread, instead of resolving and building
    /// anew (what makes a 10-element call cheap). The built-in arithmetic
    /// says so; the default is `false`, so that the kernels of callables
    /// written elsewhere (closures, third parties' deferred ckernels) are
    /// built for each call, as they were.
    fn reuses_kernels(&self) -> bool {
        false
    }

    /// `true` when every kernel of this callable writes every element of a
    /// result without variable-sized data (all of a sort's row, every
    /// running sum), so that a new result may start with any bytes
    /// ([`Array::empty_for_overwrite`]: those of a freed array) instead of
    /// zeros. The default, `false`, zeroes it: reductions, for one, add
    /// into their result.
    fn writes_whole_result(&self) -> bool {
        false
    }

    /// `true` when a kernel of this callable that writes rows of a var dim
    /// of plain elements allocates them once per strided run (every row of
    /// the run cut from one allocation of the destination's block), not
    /// once per row. The tasks of a split call (DESIGN §13, outer tasks)
    /// may then write into slices of one output, each taking the block's
    /// lock once, instead of into arrays of their own whose descriptors
    /// are copied and whose arenas are joined afterwards. The default,
    /// `false`, keeps the arrays of their own.
    fn allocates_per_run(&self) -> bool {
        false
    }

    /// How many leading dims of arguments of types `args` this callable
    /// lifts over row by row, each result row along them computed from the
    /// same rows of the arguments alone (row callables, selection): a large
    /// call may then be split along the outermost of them on the executor's
    /// threads (DESIGN §13, outer tasks). The default, 0, makes no such
    /// promise; scalar callables split through their own paths.
    fn outer_rows(&self, args: &[Type]) -> usize {
        let _ = args;
        0
    }

    /// Checks the operands `instantiate` is to be given: one arrmeta pointer
    /// per source type, source types [`CallableImpl::resolve`] accepts, and
    /// `dst_tp` the type it gives for them; the errors name the callable and
    /// what did not fit. [`Callable::instantiate`] calls it before
    /// [`CallableImpl::instantiate`] (for a scalar callable, on the element
    /// types the lifter reaches), so implementations need not check again.
    fn check_args(&self, args: &KernelArgs<'_>) -> Result<()> {
        check_operands(self.name(), args, |s| self.resolve(s))
    }

    /// [`CallableImpl::check_args`], then [`CallableImpl::instantiate`]:
    /// what the lifter calls for each element kernel. An implementation
    /// whose check and build share work (resolving the types, as the
    /// built-in arithmetic does) may override it to do that work once; it
    /// must refuse exactly what `check_args` refuses, with the same errors.
    ///
    /// # Safety
    /// As [`CallableImpl::instantiate`], except that the types need not be
    /// ones [`CallableImpl::resolve`] accepts (they are checked here).
    unsafe fn check_and_instantiate(
        &self,
        ckb: Pin<&mut CKernelBuilder>,
        offset: usize,
        args: KernelArgs<'_>,
    ) -> Result<usize> {
        self.check_args(&args)?;
        // SAFETY: the caller's promises; the types are ones resolve
        // accepted (just checked).
        unsafe { self.instantiate(ckb, offset, args) }
    }
}

/// A callable: a cheap, shareable handle.
#[derive(Clone)]
pub struct Callable(Arc<dyn CallableImpl>);

impl Callable {
    /// Wraps an implementation.
    pub fn new(imp: impl CallableImpl) -> Callable {
        Callable(Arc::new(imp))
    }

    /// `true` when both are the same callable (clones of one handle), as
    /// a device runtime checks that a call is dynd's own function of that
    /// name and not a third party's.
    pub fn same(&self, other: &Callable) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    /// Its name.
    pub fn name(&self) -> &str {
        self.0.name()
    }

    /// Its signature.
    pub fn signature(&self) -> &Type {
        self.0.signature()
    }

    /// `true` when calls lift it elementwise.
    pub fn is_scalar(&self) -> bool {
        self.0.is_scalar()
    }

    /// The implementation.
    pub fn implementation(&self) -> &dyn CallableImpl {
        &*self.0
    }

    /// The shared callable's address: equal for handles of one callable,
    /// and not reused while a handle lives.
    pub(crate) fn addr(&self) -> *const () {
        Arc::as_ptr(&self.0).cast()
    }

    /// The output type of a call with arguments of these (whole) types:
    /// for a scalar callable, the broadcast dims over the element result.
    pub fn resolve(&self, args: &[Type]) -> Result<Type> {
        if self.is_scalar() {
            elementwise::resolve(self, args)
        } else {
            self.0.resolve(args)
        }
    }

    /// Builds the kernel for whole argument types (lifting a scalar
    /// callable over their dims).
    ///
    /// # Safety
    /// As [`CallableImpl::instantiate`], with `dst_tp` the result of
    /// [`Callable::resolve`] (or a type it broadcasts into).
    pub unsafe fn instantiate(
        &self,
        ckb: Pin<&mut CKernelBuilder>,
        offset: usize,
        args: KernelArgs<'_>,
    ) -> Result<usize> {
        args.check_counts(self.name())?;
        if self.is_scalar() {
            // SAFETY: the caller's promises.
            unsafe { elementwise::instantiate(self, ckb, offset, args) }
        } else {
            // SAFETY: the caller's promises.
            unsafe { self.0.check_and_instantiate(ckb, offset, args) }
        }
    }

    /// Calls the callable on arrays: resolves the output type, allocates the
    /// output, builds the kernel and runs it, on the executor's threads when
    /// the work is large. `call` and [`Callable::call_into`] take one path
    /// (DESIGN §13): the types are resolved once and the kernel built once.
    pub fn call(&self, args: &[&Array]) -> Result<Array> {
        self.run(None, args)
    }

    /// Calls the callable, writing into `out` (whose type the result
    /// broadcasts into).
    pub fn call_into(&self, out: &Array, args: &[&Array]) -> Result<()> {
        out.check_writable()?;
        self.run(Some(out), args).map(drop)
    }

    /// The one path of a call (DESIGN §13), into `out` or a new array:
    ///
    /// 1. a scalar callable takes the first of its fast paths that fits
    ///    (flat, ragged, split outer loop; [`elementwise::call_selected`]),
    ///    each of which resolves, builds and splits its own loop once;
    /// 2. otherwise the output type is resolved once (for a new output) and
    ///    a new output whose rows the callable can compute apart is split
    ///    into outer tasks ([`split::call_split`]);
    /// 3. otherwise one kernel is built for the whole call and run.
    ///
    /// In (3) a type this path resolved itself is not checked again; an
    /// output the caller gave is checked by `instantiate`.
    fn run(&self, out: Option<&Array>, args: &[&Array]) -> Result<Array> {
        match self.run_as_given(out, args) {
            // Rows that may be missing (`?var`), which nothing takes as
            // they are: through their parts ([`option_rows`]).
            Err(e) if e.kind() == ErrorKind::Type && out.is_none() => {
                match option_rows::call(self, args)? {
                    Some(r) => Ok(r),
                    None => Err(e),
                }
            }
            r => r,
        }
    }

    /// [`Callable::run`] on the arguments as they are.
    fn run_as_given(&self, out: Option<&Array>, args: &[&Array]) -> Result<Array> {
        if let Some(device) = device::placement(out, args)? {
            return device::run(self, device, out, args);
        }
        // An argument that aliases the output (the same memory in another
        // layout) is read from a copy: the result is as if every argument
        // were read before any write (NumPy's rule), on any thread count.
        let (copies, refs): (Vec<Array>, Vec<&Array>);
        let args: &[&Array] = match out {
            Some(o) if args.iter().any(|a| o.aliases(a)) => {
                copies = args
                    .iter()
                    .map(|a| {
                        if o.aliases(a) {
                            a.copy()
                        } else {
                            Ok((*a).clone())
                        }
                    })
                    .collect::<Result<_>>()?;
                refs = copies.iter().collect();
                &refs
            }
            _ => args,
        };
        if self.is_scalar()
            && let Some(r) = elementwise::call_selected(self, out, args)
        {
            return r;
        }
        let tps: Vec<Type> = args.iter().map(|a| a.tp().clone()).collect();
        let (out, resolved) = match out {
            Some(out) => (out.clone(), false),
            None => {
                let out_tp = self.resolve(&tps)?;
                if let Some(out) = split::call_split(self, args, &out_tp, &tps) {
                    return Ok(out);
                }
                let out = if self.0.writes_whole_result() {
                    Array::empty_for_overwrite(out_tp)?
                } else {
                    Array::empty(out_tp)?
                };
                (out, true)
            }
        };
        let metas: Vec<*const u8> = args.iter().map(|a| a.arrmeta_ptr()).collect();
        let datas: Vec<*const u8> = args.iter().map(|a| a.data_ptr() as *const u8).collect();
        let mut ckb = pin!(CKernelBuilder::new());
        // SAFETY: a new builder; every arrmeta belongs to its array, which
        // outlives the call; the output type is the one resolve gave for
        // these arguments (`resolved`), or is checked against them by
        // instantiate.
        unsafe {
            let kargs = KernelArgs::new(
                out.tp(),
                out.arrmeta_ptr(),
                &tps,
                &metas,
                KernelRequest::Single,
            );
            if resolved && !self.is_scalar() {
                kargs.check_counts(self.name())?;
                self.0.instantiate(ckb.as_mut(), 0, kargs)?;
            } else {
                self.instantiate(ckb.as_mut(), 0, kargs)?;
            }
            ckb.call_single(out.data_ptr(), &datas)?;
        }
        Ok(out)
    }
}

impl std::fmt::Debug for Callable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Callable({}: {})", self.name(), self.signature())
    }
}

/// Installs the built-in callables (each family adds its own).
fn builtins(map: &mut std::collections::BTreeMap<String, Callable>) {
    arith::register(map);
    nulls::register(map);
    reduce::register(map);
    select::register(map);
    sort::register(map);
    strings::register(map);
}

/// The error for a call of `name(params)` (`params` as `"x, mask"`) with
/// `n` arguments: an `InvalidArgument`, one sentence.
pub(crate) fn arity(name: &str, params: &str, n: usize) -> Error {
    let want = params.split(", ").count();
    Error::invalid_argument(format!(
        "{name}({params}) takes {want} argument{}, not {n}",
        if want == 1 { "" } else { "s" }
    ))
}

/// A built-in callable's signature from its text; a typo gives `Any`,
/// which each family's `builtin_signatures_parse` test catches.
pub(crate) fn signature(text: &str) -> Type {
    Type::parse(text).unwrap_or_else(|_| Type::any())
}

/// The error for arguments a callable does not accept.
pub(crate) fn no_match(name: &str, sig: &Type, args: &[Type]) -> Error {
    Error::type_error(format!(
        "{name} does not accept arguments ({}); its signature is {sig}",
        type_list(args)
    ))
}

/// [`CallableImpl::check_args`] with another resolver: one arrmeta pointer
/// per source type, and `args.dst_tp` what `resolve` gives for the sources.
pub(crate) fn check_operands(
    name: &str,
    args: &KernelArgs<'_>,
    resolve: impl FnOnce(&[Type]) -> Result<Type>,
) -> Result<()> {
    args.check_counts(name)?;
    check_result(name, args, &resolve(args.src_tps)?)
}

/// The second half of [`check_operands`], for a result already resolved:
/// `want` (what the sources give) must be `args.dst_tp`.
pub(crate) fn check_result(name: &str, args: &KernelArgs<'_>, want: &Type) -> Result<()> {
    if *want != *args.dst_tp {
        return Err(Error::type_error(format!(
            "{name} computes {want} for ({}), not {}",
            type_list(args.src_tps),
            args.dst_tp
        )));
    }
    Ok(())
}

/// Types as a comma-separated list (`int32, 3 * float64`), for messages.
pub(crate) fn type_list(tps: &[Type]) -> String {
    tps.iter()
        .map(|t| t.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}
