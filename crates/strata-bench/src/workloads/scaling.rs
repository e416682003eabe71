//! Render time of compiled text leaves of 1, 10, 100 and 1000 KiB, a placeholder every
//! 100 bytes: it must grow linearly with the size.
//!
//! Each row after the first is compared with the linear extrapolation of the row before it
//! (ten times its time, as the sizes grow tenfold): a ratio at or below 1 means the cost grew
//! no faster than the size. The table also shows the `memchr2` floor per KiB at each size,
//! which shows what the memory hierarchy alone does to a pass over the bytes.

use std::hint::black_box;
use strata_core::RenderOptions;

use serde_json::Value;
use strata_pipeline::{Chain, Template};

use super::text::{big_limits, with_holes, Data};
use super::throughput::floor;
use crate::harness::{compare, Settings};
use crate::report::Report;

/// The sizes measured, in KiB (each ten times the one before).
pub const SIZES_KIB: [usize; 4] = [1, 10, 100, 1000];

/// The sizes in smoke mode, in KiB.
pub const SMOKE_SIZES_KIB: [usize; 2] = [1, 10];

/// Distance between placeholders.
pub const EVERY: usize = 100;

/// Measures every size and prints the comparison lines, then the table.
pub fn run(settings: &Settings, report: &mut Report) {
    let data = Data::new();
    let scope = data.scope();
    let limits = big_limits();
    let chain = Chain::full();
    let mut rows: Vec<(usize, f64, f64)> = Vec::new();
    for &kib in settings.pick(&SIZES_KIB[..], &SIZES_KIB, &SMOKE_SIZES_KIB) {
        let value = Value::String(with_holes(kib << 10, EVERY));
        let bytes = value.as_str().expect("a string").as_bytes();
        let template = Template::compile(&value, &chain, &limits).expect("compiles");
        let (m, scan) = compare(
            settings,
            || {
                template
                    .render(black_box(&scope), &RenderOptions::default())
                    .expect("renders")
            },
            || floor(black_box(bytes)),
        );
        if let Some(&(before, ns, _)) = rows.last() {
            let linear = ns * (kib / before) as f64;
            report.against(&format!("scaling_{kib}kb"), &m, "linear", linear);
        }
        rows.push((kib, m.median_ns, scan.median_ns));
    }
    report.note("scaling table (render of a compiled leaf, a placeholder every 100 bytes):");
    report.note(&format!(
        "{:>8} {:>12} {:>10} {:>17}",
        "size_kb", "ns", "ns_per_kb", "memchr_ns_per_kb"
    ));
    for (kib, ns, scan) in rows {
        let k = kib as f64;
        report.note(&format!(
            "{kib:>8} {ns:>12.0} {:>10.1} {:>17.1}",
            ns / k,
            scan / k
        ));
    }
}
