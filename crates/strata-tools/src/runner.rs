//! The one way front-ends run tools.

use std::time::{Duration, Instant};

use serde_json::{Map, Value};
use strata_core::Error;

use crate::RunResult;

/// Per-call options of [`ToolRunner::run`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CallOptions {
    /// Caps the run when it is shorter than the tool's own timeout (a directive's or a plan's
    /// remaining time).
    pub timeout: Option<Duration>,
}

/// Runs tools for directives, graphs, plans, hooks and response generators. The CLI backs it
/// with the executor chain and real subprocesses; tests back it with fakes.
pub trait ToolRunner: Sync {
    /// Whether the tool exists.
    fn has_tool(&self, id: &str) -> bool;

    /// The error for an unknown tool, with a did-you-mean.
    fn unknown_tool(&self, id: &str) -> Error;

    /// Whether an action, step or hook may call tool `id`: the unknown-tool error when there
    /// is no such tool, and an error when it exists but cannot be called as a tool (a graph,
    /// a broken executor chain). Loaders call it for every tool they name, before anything
    /// runs.
    fn callable(&self, id: &str) -> Result<(), Error> {
        if self.has_tool(id) {
            Ok(())
        } else {
            Err(self.unknown_tool(id))
        }
    }

    /// The tool's parameter schema (`parameters` of its file), when it declares one; loaders
    /// check literal arguments against it before anything runs.
    fn parameters(&self, id: &str) -> Option<Value> {
        let _ = id;
        None
    }

    /// The tool's `resources` and `retries` declarations (merged over its executor chain);
    /// nothing declared by default.
    fn scale(&self, id: &str) -> crate::Scale {
        let _ = id;
        crate::Scale::default()
    }

    /// True once the run this runner serves was cancelled: what waits to start (a step's next
    /// attempt after its retry delay) starts at once, to be stopped as cancelled, instead of
    /// waiting. A runner that cannot be cancelled never is.
    fn cancelled(&self) -> bool {
        false
    }

    /// Runs the tool with the caller's parameters (data). `Ok` whenever the tool ran, whether
    /// it succeeded or not; `Err` when it could not run at all (unknown tool, parameters that
    /// fail the schema, a program that cannot start).
    fn run(
        &self,
        id: &str,
        params: &Map<String, Value>,
        options: &CallOptions,
    ) -> Result<RunResult, Error>;
}

/// How often a wait before another attempt of a tool looks whether its run was cancelled.
pub const CANCEL_POLL: Duration = Duration::from_millis(100);

/// Waits `delay` before another attempt of a tool `runner` runs — or less: until `runner` says
/// its run was cancelled (looked at every [`CANCEL_POLL`]), so that the attempt starts at once
/// and is stopped as cancelled. The one wait of every place that retries a tool in its thread.
pub fn wait_to_retry(runner: &dyn ToolRunner, delay: Duration) {
    let until = Instant::now() + delay;
    while !runner.cancelled() {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return;
        }
        std::thread::sleep(left.min(CANCEL_POLL));
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};

    use super::*;
    use crate::FakeTools;

    /// A runner whose run is cancelled once `cancelled` is set.
    struct Cancelled(AtomicBool);

    impl ToolRunner for Cancelled {
        fn has_tool(&self, _: &str) -> bool {
            false
        }

        fn unknown_tool(&self, id: &str) -> Error {
            FakeTools::new().unknown_tool(id)
        }

        fn cancelled(&self) -> bool {
            self.0.load(Ordering::SeqCst)
        }

        fn run(
            &self,
            id: &str,
            _: &Map<String, Value>,
            _: &CallOptions,
        ) -> Result<RunResult, Error> {
            Err(self.unknown_tool(id))
        }
    }

    #[test]
    fn a_wait_to_retry_ends_with_its_delay_or_at_once_when_the_run_is_cancelled() {
        let runner = Cancelled(AtomicBool::new(false));
        let start = Instant::now();
        wait_to_retry(&runner, Duration::from_millis(30));
        assert!(start.elapsed() >= Duration::from_millis(30));
        std::thread::scope(|s| {
            let waiting = s.spawn(|| wait_to_retry(&runner, Duration::from_secs(3600)));
            runner.0.store(true, Ordering::SeqCst);
            // Not an hour (the deadline only stops a broken wait from hanging the test).
            let deadline = Instant::now() + Duration::from_secs(60);
            while !waiting.is_finished() {
                assert!(
                    Instant::now() < deadline,
                    "the wait went on after the cancel"
                );
                std::thread::sleep(Duration::from_millis(5));
            }
        });
    }
}
