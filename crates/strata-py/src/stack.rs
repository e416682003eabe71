//! The thread strata's work runs on from Python: one with an explicit stack of
//! [`STACK_BYTES`], as the command line's, whatever the calling Python thread's stack (the
//! main thread's `ulimit -s`, or `threading.stack_size`). The caps of the limits that bound a
//! recursion (`limits.default_depth`, `limits.param_links`) are proven safe on that stack, not
//! on the caller's: a render at the caps on a small Python stack would otherwise overflow it
//! and kill the interpreter.
//!
//! Every entry point that renders, resolves or runs converts its Python arguments to Rust
//! values on the caller's thread (that needs the GIL), runs the strata work through
//! [`on_strata_stack`] (the GIL released, so other Python threads run meanwhile), and converts
//! the result back, reporting warnings, on the caller's thread. The hop costs one thread
//! start per call (the stack is address space reserved, touched only as far as the work goes).
//! Every call hops, whatever the limits: no fast path on the caller's stack yet.

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use strata_core::STACK_BYTES;

/// Runs `work` on a new thread with a stack of [`STACK_BYTES`] and returns what it returned,
/// the GIL released meanwhile (`work` may take it back with `Python::attach`). Raises
/// `RuntimeError` when no such thread can be started; a panic in `work` goes on unwinding
/// in the caller (PyO3 turns it into `PanicException`, as before).
pub fn on_strata_stack<T, F>(py: Python<'_>, work: F) -> PyResult<T>
where
    T: Send,
    F: FnOnce() -> T + Send,
{
    py.detach(|| run_on_stack(work)).map_err(|e| {
        PyRuntimeError::new_err(format!(
            "strata could not start its work thread (a {} MiB stack): {e}",
            STACK_BYTES >> 20
        ))
    })
}

/// `work` on a scoped thread with the work stack, or why the thread could not start.
fn run_on_stack<T: Send, F: FnOnce() -> T + Send>(work: F) -> std::io::Result<T> {
    std::thread::scope(|scope| {
        let handle = strata_core::work_thread("strata-py").spawn_scoped(scope, work)?;
        match handle.join() {
            Ok(value) => Ok(value),
            Err(panic) => std::panic::resume_unwind(panic),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn work_runs_on_a_thread_of_its_own_and_returns_its_value() {
        let caller = std::thread::current().id();
        let (value, worker) =
            run_on_stack(|| (6 * 7, std::thread::current().id())).expect("a thread");
        assert_eq!(value, 42);
        assert_ne!(worker, caller);
    }

    #[test]
    fn a_panic_in_the_work_unwinds_in_the_caller() {
        let caught = std::panic::catch_unwind(|| run_on_stack(|| -> i32 { panic!("a bug") }));
        assert!(caught.is_err());
    }
}
