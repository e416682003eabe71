//! The `strata` binary: a thin entry point into `strata-cli`.

fn main() -> std::process::ExitCode {
    strata_cli::main()
}
