//! Throughput on a 10 MiB string leaf, against a plain `memchr2` scan of the same bytes.
//!
//! The scan (`memchr2(b'$', b'{', …)` over every occurrence) is the physical floor: any
//! template engine has to look at every byte at least that fast. Strata is measured as a
//! user pays for it: compile and render of the leaf together (a placeholder-free string is
//! compiled into a constant, and rendering hands back an owned copy); then render of the
//! already compiled leaf alone; then compile and render against `copies`, two copies of the
//! string alive at once, which is what compile-and-render inherently allocates (the
//! template's own text and the owned result).

use std::hint::black_box;

use serde_json::Value;
use strata_core::{Limits, Scope};
use strata_pipeline::{Chain, Template};

use super::text::{big_limits, plain, with_holes, Data};
use crate::harness::{compare, Settings};
use crate::report::Report;

/// Size of the string leaf.
pub const LEN: usize = 10 << 20;

/// Distance between placeholders in the templated variant.
pub const EVERY: usize = 100;

/// The floor: every `$` or `{` in the bytes, found with `memchr2`.
pub fn floor(bytes: &[u8]) -> usize {
    memchr::memchr2_iter(b'$', b'{', bytes).count()
}

/// Two owned copies of `text`, alive together.
fn copies(text: &str) -> (String, String) {
    let a = text.to_owned();
    let b = a.clone();
    (a, b)
}

fn megabytes_per_second(ns: f64) -> f64 {
    LEN as f64 / ns * 1e9 / 1e6
}

/// Measures the placeholder-free and the templated 10 MiB leaf.
pub fn run(settings: &Settings, report: &mut Report) {
    let data = Data::new();
    let scope = data.scope();
    let limits = big_limits();
    for (name, text) in [("plain", plain(LEN)), ("holes", with_holes(LEN, EVERY))] {
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
    let compile_render = || {
        let template = Template::compile(black_box(&value), &chain, limits).expect("compiles");
        template.render(scope, false).expect("renders")
    };
    let workload = format!("throughput_{name}_10mb");

    let (strata, peer) = compare(settings, compile_render, || floor(black_box(bytes)));
    report.compare(&workload, &strata, "memchr", &peer);

    let template = Template::compile(&value, &chain, limits).expect("compiles");
    let (render, peer_again) = compare(
        settings,
        || template.render(black_box(scope), false).expect("renders"),
        || floor(black_box(bytes)),
    );
    report.compare(
        &format!("{workload}_render"),
        &render,
        "memchr",
        &peer_again,
    );

    let (strata_again, two) = compare(settings, compile_render, || copies(black_box(text)));
    report.compare(&workload, &strata_again, "copies", &two);

    report.note(&format!(
        "{workload}: compile+render {:.0} MB/s, render {:.0} MB/s, memchr floor {:.0} MB/s \
         ({} openers), two copies {:.0} MB/s",
        megabytes_per_second(strata.median_ns),
        megabytes_per_second(render.median_ns),
        megabytes_per_second(peer.median_ns),
        floor(bytes),
        megabytes_per_second(two.median_ns),
    ));
}
