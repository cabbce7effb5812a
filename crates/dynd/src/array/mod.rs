//! Arrays (placeholder).
/// An array.
pub struct Array;
/// An index.
pub enum Index { }
