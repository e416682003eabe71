//! The JSON Lines protocol of `strata render --batch`: every line gets one reply.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // Reading stops at bytes that are not UTF-8 (an I/O error for the server).
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let limits = strata_fuzz::loader_limits();
    let mut out = Vec::new();
    strata_pipeline::batch::serve(text.as_bytes(), &mut out, &limits).expect("writing to memory");
    let replies = out.split(|&b| b == b'\n').filter(|l| !l.is_empty()).count();
    let requests = text.lines().filter(|l| !l.trim().is_empty()).count();
    assert_eq!(replies, requests, "one reply per request line");
});
