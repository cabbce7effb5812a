//! The C ABI of dynd (being written).
