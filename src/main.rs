//! The `strata` binary: a thin entry point into `strata-cli`.

/// Rendering allocates many small strings; mimalloc makes each allocation several times
/// cheaper than the system allocator (see docs/benchmarks.md).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    strata_cli::main()
}
