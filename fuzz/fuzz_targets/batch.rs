//! The JSON Lines protocol of `strata render --batch` over arbitrary bytes: every line that
//! is not empty gets exactly one reply (UTF-8 or not, blank or not, too long or not), and the
//! server never stops early.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut limits = strata_fuzz::loader_limits();
    // Small enough that long lines are met often.
    limits.document_bytes = 256;
    let mut out = Vec::new();
    strata_pipeline::batch::serve(data, &mut out, &limits).expect("writing to memory");
    let replies = out.split(|&b| b == b'\n').filter(|l| !l.is_empty()).count();
    let mut lines: Vec<&[u8]> = data.split(|&b| b == b'\n').collect();
    if data.ends_with(b"\n") {
        lines.pop();
    }
    let requests = lines
        .iter()
        .filter(|l| !l.is_empty() && **l != b"\r")
        .count();
    assert_eq!(replies, requests, "one reply per line that is not empty");
    for reply in out.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let v: serde_json::Value = serde_json::from_slice(reply).expect("replies are JSON");
        assert!(v["ok"].is_boolean(), "every reply says ok or not");
    }
});
