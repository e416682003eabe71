//! The YAML tool loader: UTF-8, YAML syntax, alias expansion limits, typed fields, the
//! parameter schema and validation, with error locations.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let limits = strata_fuzz::loader_limits();
    if let Ok((_doc, file)) = strata_project::read_tool_file("tools/fuzz.yaml", data.to_vec(), &limits)
    {
        if let Some(schema) = &file.parameters {
            let _ = strata_project::check_schema(schema);
        }
    }
});
