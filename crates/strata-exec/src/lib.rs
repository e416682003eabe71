//! The spawn boundary: a [`SpawnSpec`] (program, argv, cwd, stdin, an explicit environment,
//! a timeout and an output cap) becomes a real process, argv only, never a shell string; and
//! the child's environment is built explicitly ([`child_env`]). Nothing here knows tools,
//! files or projects: `strata-project` renders a tool into a spawn spec, the application
//! layer (`strata-app`) decides whether it may run.

mod cancel;
mod child;
mod env;
mod spawn;

pub use cancel::Cancel;
pub use env::{
    allowlisted, child_env, is_executable, param_env_name, process_env, protected, which,
    ResolvedEnv, BASE_ALLOWLIST, PROTECTED, PROTECTED_PREFIXES,
};
pub use spawn::{
    authored, install_interrupt_handler, on_interrupt, own_process, spawn, SpawnSpec,
    DEFAULT_MAX_OUTPUT,
};
