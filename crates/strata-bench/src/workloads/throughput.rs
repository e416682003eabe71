//! Throughput on a 10 MiB string leaf, against a plain `memchr2` scan of the same bytes.
//!
//! The scan (`memchr2(b'$', b'{', …)` over every occurrence) is the physical floor: any
//! template engine has to look at every byte at least that fast. Three rows per text:
//!
//! * `throughput_<text>_10mb`: compile ([`Template::compile_owned`], the document handed
//!   over as a program that has just read it would) and render, against the scan; both sides
//!   get a freshly made copy of the document on every call (making it and releasing it are
//!   not timed);
//! * `throughput_<text>_10mb_render`: render of the already compiled leaf, against the scan
//!   (placeholder-free text is a constant the result borrows: no pass over the bytes at all);
//! * `throughput_<text>_10mb_borrowed`: compile from a borrowed document ([`Template::compile`],
//!   which must copy the text into the template) and render, against one owned copy of the
//!   string: what compiling from a borrowed document inherently costs.

use std::hint::black_box;

use serde_json::Value;
use strata_core::{Limits, RenderOptions, Scope};
use strata_pipeline::{Chain, Template};

use super::text::{big_limits, plain, with_holes, Data};
use crate::harness::{compare, compare_consuming, Settings};
use crate::report::Report;

/// Size of the string leaf.
pub const LEN: usize = 10 << 20;

/// Size of the string leaf in smoke mode.
pub const SMOKE_LEN: usize = 64 << 10;

/// Distance between placeholders in the templated variant.
pub const EVERY: usize = 100;

/// The floor: every `$` or `{` in the bytes, found with `memchr2`.
pub fn floor(bytes: &[u8]) -> usize {
    memchr::memchr2_iter(b'$', b'{', bytes).count()
}

fn megabytes_per_second(len: usize, ns: f64) -> f64 {
    len as f64 / ns * 1e9 / 1e6
}

/// Measures the placeholder-free and the templated 10 MiB leaf.
pub fn run(settings: &Settings, report: &mut Report) {
    let data = Data::new();
    let scope = data.scope();
    let limits = big_limits();
    let len = settings.pick(LEN, LEN, SMOKE_LEN);
    for (name, text) in [("plain", plain(len)), ("holes", with_holes(len, EVERY))] {
        leaf(settings, report, name, text, &scope, &limits);
    }
}

fn leaf(
    settings: &Settings,
    report: &mut Report,
    name: &str,
    text: String,
    scope: &Scope<'_>,
    limits: &Limits,
) {
    let chain = Chain::full();
    let value = Value::String(text);
    let text = value.as_str().expect("a string");
    let bytes = text.as_bytes();
    let workload = format!("throughput_{name}_10mb");

    let (owned, scan) = compare_consuming(
        settings,
        || value.clone(),
        |doc| {
            let template = Template::compile_owned(doc, &chain, limits).expect("compiles");
            black_box(
                template
                    .render(scope, &RenderOptions::default())
                    .expect("renders"),
            );
            // Returned, so that releasing the document it took over is not timed, as making
            // the document is not.
            template
        },
        |doc| floor(black_box(doc.as_str().expect("a string").as_bytes())),
    );
    report.compare(&workload, &owned, "memchr", &scan);

    let template = Template::compile(&value, &chain, limits).expect("compiles");
    let (render, scan_again) = compare(
        settings,
        || {
            template
                .render(black_box(scope), &RenderOptions::default())
                .expect("renders")
        },
        || floor(black_box(bytes)),
    );
    report.compare(
        &format!("{workload}_render"),
        &render,
        "memchr",
        &scan_again,
    );

    let (borrowed, copy) = compare(
        settings,
        || {
            let template = Template::compile(black_box(&value), &chain, limits).expect("compiles");
            black_box(
                template
                    .render(scope, &RenderOptions::default())
                    .expect("renders"),
            );
        },
        || black_box(text).to_owned(),
    );
    report.compare(&format!("{workload}_borrowed"), &borrowed, "copy", &copy);

    report.note(&format!(
        "{workload}: compile_owned+render {:.0} MB/s, render {:.0} MB/s, compile+render {:.0} \
         MB/s, memchr floor {:.0} MB/s ({} openers), one copy {:.0} MB/s",
        megabytes_per_second(bytes.len(), owned.median_ns),
        megabytes_per_second(bytes.len(), render.median_ns),
        megabytes_per_second(bytes.len(), borrowed.median_ns),
        megabytes_per_second(bytes.len(), scan.median_ns),
        floor(bytes),
        megabytes_per_second(bytes.len(), copy.median_ns),
    ));
}
