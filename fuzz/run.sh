#!/usr/bin/env bash
# Runs every fuzz target (or those in $TARGETS) for SECONDS seconds each (default 60) on a
# scratch copy of its committed seed corpus (corpus/<target>/), then prints one line per
# target with its executions. A crash stops the script with a non-zero status and leaves the
# reproducer in fuzz/artifacts/<target>/ (turn it into a regression test, see
# docs/security.md). Needs cargo-fuzz (`cargo install cargo-fuzz`); stable Rust runs it with
# RUSTC_BOOTSTRAP=1, which this script sets.
#
#   fuzz/run.sh 60                      # every target, 60 s each
#   TARGETS="pipeline expression" fuzz/run.sh 300
set -euo pipefail
secs=${1:-60}
cd "$(dirname "$0")"
export RUSTC_BOOTSTRAP=1
command -v cargo-fuzz >/dev/null || {
    echo "fuzz/run.sh: cargo-fuzz is not installed (cargo install cargo-fuzz)" >&2
    exit 2
}
targets=${TARGETS:-$(cargo fuzz list)}
cargo fuzz build
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
total=0
summary=""
for t in $targets; do
    mkdir -p "$work/$t"
    echo "== $t: ${secs}s"
    status=0
    # The scratch directory comes first: new inputs go there, the committed seeds stay as
    # they are.
    cargo fuzz run "$t" "$work/$t" "corpus/$t" -- \
        -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        >"$work/$t.log" 2>&1 || status=$?
    grep -E '^#[0-9]+[[:space:]]+(INITED|DONE)' "$work/$t.log" || true
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$t.log" | tail -1)
    runs=${runs:-0}
    total=$((total + runs))
    summary+=$(printf '%-18s %12s executions' "$t" "$runs")$'\n'
    if [ "$status" -ne 0 ]; then
        tail -n 60 "$work/$t.log" >&2
        echo "fuzz/run.sh: $t failed (status $status); reproducer in fuzz/artifacts/$t/" >&2
        exit 1
    fi
done
printf '%s' "$summary"
printf '%-18s %12s executions\n' total "$total"
