//! Lazy operators (being written).
