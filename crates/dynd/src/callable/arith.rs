//! (being written)

use super::Callable;
use std::collections::BTreeMap;

/// Registers this family's built-in callables.
pub(crate) fn register(map: &mut BTreeMap<String, Callable>) {
    let _ = map;
}
