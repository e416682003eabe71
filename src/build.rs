//! Links the `strata` binary as a position-dependent executable (`-no-pie`) on Linux: the
//! loader then has no relocations to apply to it at start-up (a position-independent build
//! has some twenty thousand), which measures faster for a command started once per tool run
//! (docs/benchmarks.md, "Start-up"). Only the binaries of this package are linked so; every
//! library is still compiled position-independent, so the Python extension (`strata-py`, a
//! shared object) is unaffected.

//!
//! `STRATA_LINK_PIE=1` at build time links it position-independent as before (to measure
//! the difference: `strata-bench --only cli_run` against such a build).

fn main() {
    println!("cargo:rerun-if-changed=src/build.rs");
    println!("cargo:rerun-if-env-changed=STRATA_LINK_PIE");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    let pie = std::env::var_os("STRATA_LINK_PIE").is_some_and(|v| v == "1");
    if os == "linux" && env == "gnu" && !pie {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
}
