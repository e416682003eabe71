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
    one_c_arena();
    match strata_core::work_thread("main").spawn(strata_cli::main) {
        Ok(thread) => thread.join().unwrap_or(std::process::ExitCode::from(101)),
        Err(_) => strata_cli::main(),
    }
}

/// Keeps the C library's allocator to one arena. strata allocates through mimalloc; the C
/// library allocates only a few bytes of its own (the standard library asks it for a
/// thread's attributes when the thread starts), but glibc gives every thread that does so an
/// arena of its own — a 64 MiB reservation mapped, trimmed and mapped again, on each of the
/// threads a `strata run` starts — which measured as a visible part of a short run.
fn one_c_arena() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets an option of the C allocator; no other thread runs yet.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
    }
}
