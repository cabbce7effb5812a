//! Choosing threads (DESIGN §13): the process default of dynd's executor.

use crate::entry;
use dynd::Error;
use std::ffi::c_int;

/// Sets the number of threads dynd's callables use in this process; 0 goes
/// back to the default (`DYND_NUM_THREADS`, else `RAYON_NUM_THREADS`, else
/// the cores). Returns 0, or -1 with `DYND_ERR_INVALID_ARGUMENT` for a
/// negative count or one above 4096 (the default is then unchanged).
#[unsafe(no_mangle)]
pub extern "C" fn dynd_set_num_threads(n: c_int) -> c_int {
    entry("dynd_set_num_threads", -1, || {
        let n = usize::try_from(n).map_err(|_| {
            Error::invalid_argument(format!(
                "dynd_set_num_threads: n is {n}; it must be 0 (the default) or a positive count"
            ))
        })?;
        dynd::exec::set_num_threads(n).map_err(|e| {
            Error::invalid_argument(format!("dynd_set_num_threads: {}", e.message()))
        })?;
        Ok(0)
    })
}

/// The number of threads a call made now, on this thread, would use
/// (at least 1). Never fails.
#[unsafe(no_mangle)]
pub extern "C" fn dynd_get_num_threads() -> c_int {
    entry("dynd_get_num_threads", 1, || {
        Ok(c_int::try_from(dynd::exec::num_threads()).unwrap_or(c_int::MAX))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::{DYND_ERR_INVALID_ARGUMENT, dynd_error_code};

    #[test]
    fn counts_are_checked_and_read_back() {
        assert_eq!(dynd_set_num_threads(3), 0);
        assert_eq!(dynd_get_num_threads(), 3);
        assert_eq!(dynd_set_num_threads(-2), -1);
        assert_eq!(dynd_error_code(), DYND_ERR_INVALID_ARGUMENT);
        assert_eq!(dynd_set_num_threads(5000), -1);
        assert_eq!(dynd_get_num_threads(), 3, "a refused count changes nothing");
        assert_eq!(dynd_set_num_threads(0), 0);
        assert!(dynd_get_num_threads() >= 1);
    }
}
