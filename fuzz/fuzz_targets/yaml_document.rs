//! Documents (YAML and JSON) into values, with the YAML nesting pre-scan as a differential
//! oracle: a document it refuses as nested too deeply must be one the YAML parser refuses
//! too (the pre-scan only spares the parser's slow path, it never narrows what is valid).
#![no_main]

use libfuzzer_sys::fuzz_target;
use strata_doc::{Document, Format};

fuzz_target!(|data: &[u8]| {
    let limits = strata_fuzz::loader_limits();
    let _ = Document::parse("d.json", data.to_vec(), Format::Json, &limits);
    let Err(e) = Document::parse("d.yaml", data.to_vec(), Format::Yaml, &limits) else {
        return;
    };
    if e.message.starts_with("YAML nests collections more than") {
        let text = std::str::from_utf8(data).expect("refused for nesting, so it was UTF-8");
        assert!(
            serde_yaml::from_str::<serde_json::Value>(text).is_err(),
            "the nesting pre-scan refused a document the YAML parser reads"
        );
    }
});
