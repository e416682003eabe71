//! The `.env` reader: every value is secret, so errors must never quote one.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = strata_doc::parse_dotenv(".env", text);
    }
});
