//! The stack strata's work runs on from Python: as deep as the command line's
//! ([`STACK_BYTES`]) wherever the work may need it, whatever the calling Python thread's
//! stack (the main thread's `ulimit -s`, or `threading.stack_size`). The caps of the limits
//! that bound a recursion (`limits.default_depth`, `limits.param_links`) are proven safe on
//! that stack, not on the caller's: a render at the caps on a small Python stack would
//! otherwise overflow it and kill the interpreter.
//!
//! Every entry point converts its Python arguments on the caller's thread (that needs the
//! GIL), runs the strata work through [`on_strata_stack`] with the GIL released, and converts
//! the result back on the caller's thread. The work runs in place when the caller's stack
//! has the room its limits can need left (the common case: a render with the default limits
//! on an ordinary thread costs a comparison); otherwise on a fresh segment of
//! [`STACK_BYTES`] (`stacker`, the stack-growth library rustc uses: one mapping per call, no
//! thread).

use pyo3::prelude::*;
use strata_core::{Limits, STACK_BYTES};

/// The stack the work with the default limits may need (nested defaults, parameter links,
/// prompt components at their default bounds; measured under 2 MiB in a debug build).
pub const DEFAULT_LIMITS_STACK: usize = 4 << 20;

/// The stack the work may need with any limits up to their caps (proven under 16 MiB: a
/// quarter of [`STACK_BYTES`]).
pub const CAPPED_LIMITS_STACK: usize = STACK_BYTES / 4;

/// The stack the work of a project with `limits` may need: [`DEFAULT_LIMITS_STACK`] while the
/// limits that bound a recursion (`default_depth`, `param_links`) are at most their defaults
/// (it then runs in place on an ordinary thread, with no segment mapped for each call), else
/// [`CAPPED_LIMITS_STACK`].
pub fn stack_for(limits: &Limits) -> usize {
    let defaults = Limits::default();
    if limits.default_depth <= defaults.default_depth && limits.param_links <= defaults.param_links
    {
        DEFAULT_LIMITS_STACK
    } else {
        CAPPED_LIMITS_STACK
    }
}

/// Runs `work` with at least `need` bytes of stack left — on the caller's stack when it has
/// them, else on a fresh segment of [`STACK_BYTES`] — and returns what it returned, the GIL
/// released meanwhile (`work` may take it back with `Python::attach`). A panic in `work`
/// goes on unwinding in the caller (PyO3 turns it into `PanicException`, as before).
pub fn on_strata_stack<T, F>(py: Python<'_>, need: usize, work: F) -> PyResult<T>
where
    T: Send,
    F: FnOnce() -> T + Send,
{
    Ok(py.detach(|| with_stack(need, work)))
}

/// `work` with at least `need` bytes of stack left.
fn with_stack<T, F: FnOnce() -> T>(need: usize, work: F) -> T {
    stacker::maybe_grow(need, STACK_BYTES, work)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn work_with_room_runs_in_place_and_without_it_on_a_fresh_segment() {
        let here = stacker::remaining_stack().expect("known");
        let (value, room) = with_stack(1 << 10, || (6 * 7, stacker::remaining_stack()));
        assert_eq!(value, 42);
        assert!(room.expect("known") <= here);
        let room = with_stack(here * 2, stacker::remaining_stack).expect("known");
        assert!(room > here, "{room} on the new segment, {here} before");
    }

    #[test]
    fn a_project_within_the_default_recursion_limits_needs_the_default_stack() {
        assert_eq!(stack_for(&Limits::default()), DEFAULT_LIMITS_STACK);
        let lower = Limits {
            default_depth: 8,
            param_links: 0,
            ..Limits::default()
        };
        assert_eq!(stack_for(&lower), DEFAULT_LIMITS_STACK);
        let deeper = Limits {
            default_depth: 33,
            ..Limits::default()
        };
        assert_eq!(stack_for(&deeper), CAPPED_LIMITS_STACK);
        let linked = Limits {
            param_links: 4,
            ..Limits::default()
        };
        assert_eq!(stack_for(&linked), CAPPED_LIMITS_STACK);
    }

    #[test]
    fn a_panic_in_the_work_unwinds_in_the_caller() {
        let caught =
            std::panic::catch_unwind(|| with_stack(usize::MAX / 4, || -> i32 { panic!("a bug") }));
        assert!(caught.is_err());
    }
}
