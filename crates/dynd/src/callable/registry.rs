//! Callables by name: the built-in ones, and any a program registers.

use super::Callable;
use crate::error::{Error, Result};
use std::collections::BTreeMap;
use std::sync::{LazyLock, RwLock};

static REGISTRY: LazyLock<RwLock<BTreeMap<String, Callable>>> = LazyLock::new(|| {
    let mut map = BTreeMap::new();
    super::builtins(&mut map);
    RwLock::new(map)
});

/// The callable registered as `name` (`"add"`, `"sum"`, ...).
pub fn lookup(name: &str) -> Result<Callable> {
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
    REGISTRY
        .write()
        .unwrap_or_else(|e| e.into_inner())
        .insert(name.to_string(), f);
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
