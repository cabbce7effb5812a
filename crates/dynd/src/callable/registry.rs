//! Callables by name: the built-in ones, and any a program registers.

use super::Callable;
use crate::error::{Error, Result};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{LazyLock, RwLock};

static REGISTRY: LazyLock<RwLock<BTreeMap<String, Callable>>> = LazyLock::new(|| {
    let mut map = BTreeMap::new();
    super::builtins(&mut map);
    RwLock::new(map)
});

/// Counts the changes to the registry: a callable remembered at an older
/// generation may have been replaced since.
static GENERATION: AtomicU64 = AtomicU64::new(0);

/// How many names each thread remembers.
const RECENT: usize = 8;

/// Callables looked up at one generation of the registry, by name.
struct Recent {
    generation: u64,
    found: Vec<(Box<str>, Callable)>,
}

thread_local! {
    /// The callables this thread looked up lately: a program calls a few
    /// functions (`a + b` in a loop), and a name found here costs no lock
    /// and no search of the registry.
    static RECENT_LOOKUPS: RefCell<Recent> = const {
        RefCell::new(Recent { generation: 0, found: Vec::new() })
    };
}

/// The callable registered as `name` (`"add"`, `"sum"`, ...).
pub fn lookup(name: &str) -> Result<Callable> {
    // Acquire, before reading the registry: a lookup that sees a
    // registration's generation also sees its callable (the Release in
    // `register`), and a callable found under an older generation is
    // remembered under that one, so it is looked up again once the
    // generation moves on.
    let generation = GENERATION.load(Ordering::Acquire);
    // `try_with`: a lookup from another thread-local's destructor, after
    // this one is gone, goes to the registry.
    let hit = RECENT_LOOKUPS
        .try_with(|r| {
            let r = r.borrow();
            (r.generation == generation)
                .then(|| r.found.iter().find(|(n, _)| **n == *name))
                .flatten()
                .map(|(_, f)| f.clone())
        })
        .ok()
        .flatten();
    if let Some(f) = hit {
        return Ok(f);
    }
    let f = lookup_locked(name)?;
    let _ = RECENT_LOOKUPS.try_with(|r| {
        let mut r = r.borrow_mut();
        if r.generation != generation {
            r.generation = generation;
            r.found.clear();
        }
        if r.found.len() == RECENT {
            r.found.remove(0);
        }
        r.found.push((name.into(), f.clone()));
    });
    Ok(f)
}

/// [`lookup`] in the registry itself.
fn lookup_locked(name: &str) -> Result<Callable> {
    let map = REGISTRY.read().unwrap_or_else(|e| e.into_inner());
    map.get(name).cloned().ok_or_else(|| {
        let known: Vec<&str> = map.keys().map(String::as_str).collect();
        Error::invalid_argument(format!(
            "no callable named '{name}' (known: {})",
            known.join(", ")
        ))
    })
}

/// Registers `f` under `name`, replacing any callable of that name.
pub fn register(name: &str, f: Callable) {
    let mut map = REGISTRY.write().unwrap_or_else(|e| e.into_inner());
    map.insert(name.to_string(), f);
    // Release, with the new callable in the map (and the lock still held,
    // so generations follow the order of the changes): see `lookup`.
    GENERATION.fetch_add(1, Ordering::Release);
}

/// The registered names, sorted.
pub fn names() -> Vec<String> {
    REGISTRY
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .keys()
        .cloned()
        .collect()
}

/// A family's built-in callables: for each `fn name() = make;` an accessor
/// that makes the callable once (on first use) and hands out clones, and a
/// `register` that adds them all to the registry under their own names,
/// and a test that their signatures parse.
///
/// ```ignore
/// builtin_callables! {
///     /// The built-in `is_null`.
///     pub fn is_null() = Callable::new(IsNull { sig: signature("(T) -> bool") });
/// }
/// ```
macro_rules! builtin_callables {
    ($( $(#[$attr:meta])* $vis:vis fn $name:ident() = $make:expr; )+) => {
        $(
            $(#[$attr])*
            $vis fn $name() -> $crate::callable::Callable {
                static F: std::sync::LazyLock<$crate::callable::Callable> =
                    std::sync::LazyLock::new(|| $make);
                F.clone()
            }
        )+

        /// Registers this family's built-in callables under their names.
        pub(crate) fn register(
            map: &mut std::collections::BTreeMap<String, $crate::callable::Callable>,
        ) {
            $(
                let f = $name();
                map.insert(f.name().to_string(), f);
            )+
        }

        /// Each of this family's signatures is a real signature (a typo
        /// would have parsed as `Any`).
        #[cfg(test)]
        #[test]
        fn builtin_signatures_parse() {
            $(
                let f = $name();
                assert!(
                    !matches!(f.signature().kind(), $crate::types::TypeKind::Any),
                    "{}: {}",
                    f.name(),
                    f.signature()
                );
            )+
        }
    };
}
pub(crate) use builtin_callables;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::array::Array;

    #[test]
    fn a_registration_replaces_what_this_and_other_threads_looked_up() {
        let name = "registry_test_replaced";
        register(name, Callable::from_fn1(name, |x: f64| x + 1.0));
        let x = Array::from(vec![1.0f64]);
        // Looked up twice: the second comes from this thread's recent ones.
        for _ in 0..2 {
            assert_eq!(
                lookup(name).unwrap().call(&[&x]).unwrap().to_json(),
                "[2.0]"
            );
        }
        let other = std::thread::spawn(move || lookup(name).unwrap().name().to_string());
        assert_eq!(other.join().unwrap(), name);
        register(name, Callable::from_fn1(name, |x: f64| x * 10.0));
        assert_eq!(
            lookup(name).unwrap().call(&[&x]).unwrap().to_json(),
            "[10.0]"
        );
        let x2 = Array::from(vec![2.0f64]);
        let other =
            std::thread::spawn(move || lookup(name).unwrap().call(&[&x2]).unwrap().to_json());
        assert_eq!(other.join().unwrap(), "[20.0]");
        // Unknown names are still errors, and are not remembered.
        assert!(lookup("registry_test_unknown").is_err());
        assert!(lookup("registry_test_unknown").is_err());
    }
}
