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
