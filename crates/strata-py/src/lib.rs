//! Python bindings of strata: the native module `strata._strata`, re-exported by the Python
//! package `strata` (`python/strata/`).
//!
//! One module per front-end (`template`, `project`, `plans`, `prompts`, `responses`), all
//! converting values through `convert` and errors through `errors`. Values cross as plain
//! Python objects; errors as `strata.StrataError`. A Rust panic never unwinds into Python:
//! PyO3 catches it at every function and method boundary and raises
//! `pyo3_runtime.PanicException` instead (tested below).
//!
//! Binding another front-end is one module here holding its `#[pyclass]`, converting every
//! argument with the `convert::*_arg` helpers (`json_arg`, `map_arg`, `list_arg`,
//! `str_map_arg`, `names_arg`, `str_arg`, `flag_arg`, `count_arg`, `sink_arg` for a warnings
//! list, and `convert::Given` for a setting that `None` clears) and every result with
//! `convert::to_py`, raising with `errors::OrRaise` and reporting warnings with
//! `errors::report_warnings`; one `#[pymodule_export]` line below; its stub in
//! `python/strata/_strata.pyi`, the `TypedDict`s of the dicts it returns in
//! `python/strata/_types.py`, and its names in `python/strata/__init__.py`; and, when its
//! error kinds form a family, a class in `python/strata/_errors.py`. A Python callable that
//! the engine calls back (`responses::Callable`, a `strata_responses::Generate`) keeps what it
//! raised and becomes the `__cause__` of the strata error.

mod cancel;
mod convert;
mod errors;
mod events;
mod import;
mod plans;
mod progress;
mod project;
mod prompts;
mod remote;
mod responses;
mod run_slots;
mod scale_out;
mod stack;
mod template;

use pyo3::prelude::*;

/// The extension's own allocations (values, compiled templates and plans) go through
/// mimalloc, as in the `strata` binary; Python objects keep Python's allocator.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// strata's native module; import ``strata`` instead.
#[pymodule(name = "_strata")]
mod strata_module {
    /// The version of strata.
    #[pymodule_export]
    #[allow(non_upper_case_globals)]
    const __version__: &str = env!("CARGO_PKG_VERSION");
    #[pymodule_export]
    use crate::cancel::PyCancel;
    #[pymodule_export]
    use crate::import::import_ryeos;
    #[pymodule_export]
    use crate::plans::PyPlan;
    #[pymodule_export]
    use crate::progress::progress_line;
    #[pymodule_export]
    use crate::project::{PyAdmittedPlan, PyProject};
    #[pymodule_export]
    use crate::prompts::PyPromptManager;
    #[pymodule_export]
    use crate::remote::StepDone;
    #[pymodule_export]
    use crate::responses::PyCannedResponse;
    #[pymodule_export]
    use crate::run_slots::PyRunSlots;
    #[pymodule_export]
    use crate::scale_out::PyScaleOut;
    #[pymodule_export]
    use crate::template::{render, PyTemplate};
}

#[cfg(test)]
mod tests {
    use pyo3::prelude::*;
    use pyo3::types::PyDict;

    #[pyfunction]
    fn explode() -> i64 {
        panic!("a bug")
    }

    #[test]
    fn a_panic_becomes_a_python_exception_and_the_interpreter_lives_on() {
        Python::attach(|py| {
            let globals = PyDict::new(py);
            let f = wrap_pyfunction!(explode, py).unwrap();
            globals.set_item("explode", f).unwrap();
            py.run(
                c"try:\n    explode()\nexcept BaseException as e:\n    caught = (type(e).__name__, str(e))\nafter = 1 + 1\n",
                Some(&globals),
                None,
            )
            .unwrap();
            let caught: (String, String) = globals
                .get_item("caught")
                .unwrap()
                .unwrap()
                .extract()
                .unwrap();
            assert_eq!(caught, ("PanicException".to_string(), "a bug".to_string()));
            let after: i64 = globals
                .get_item("after")
                .unwrap()
                .unwrap()
                .extract()
                .unwrap();
            assert_eq!(after, 2);
        });
    }
}
