//! Datashape parser (placeholder being written; see the parser helper).
use super::Type;
use crate::error::{Error, Result};

pub(crate) fn parse(text: &str) -> Result<Type> {
    Err(Error::parse(format!("datashape parser not written yet: {text}")))
}
