//! The `strata` binary: a thin entry point into `strata-cli`.

/// Rendering allocates many small strings; mimalloc makes each allocation several times
/// cheaper than the system allocator (see docs/benchmarks.md).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Runs the command line on a thread with the stack every strata thread gets
/// (`strata_core::STACK_BYTES`), whatever the main thread's (`ulimit -s`): the caps of the
/// limits that bound a recursion are proven safe on it. A panic exits with 101, as it would
/// on the main thread.
fn main() -> std::process::ExitCode {
    match strata_core::work_thread("main").spawn(strata_cli::main) {
        Ok(thread) => thread.join().unwrap_or(std::process::ExitCode::from(101)),
        Err(_) => strata_cli::main(),
    }
}
