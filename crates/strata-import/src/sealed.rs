//! The Rust-era Python runtimes (`ryeos/core/runtimes/python/script` and `function`) run an
//! inline program that takes the tool's code from the RyeOS daemon's sealed hand-off: the
//! environment variable `RYEOS_VERIFIED_CODE_MAP` maps the sealed file to its logical path
//! and digest, and the program stops ("missing sealed tool identity") without it. strata has
//! no such hand-off, so the program is rewritten to read the code file it is given (its first
//! argument, `{code_path}`) directly: everything else it does — the `sys.path` roots, `exec`
//! of the source as `__main__` or the call of `execute(params, project_path)` — is RyeOS's.

use serde_json::Value;

/// The variable the daemon sets; a program naming it reads the sealed hand-off.
pub(crate) const MARKER: &str = "RYEOS_VERIFIED_CODE_MAP";

/// The text of the lines that only check the hand-off (each such line is dropped, its
/// indented body with it, since the body holds one of these too).
const HANDOFF_LINES: [&str; 4] = [
    "handoff",
    "actual_hash",
    "missing sealed tool identity",
    "sealed tool digest mismatch",
];

/// The program without its hand-off: the hand-off lines dropped and the logical path taken
/// from the file given. `None` when the program has another shape than RyeOS's (a name of
/// the hand-off still used), so that it is refused rather than broken.
pub(crate) fn unseal(program: &str) -> Option<String> {
    let mut out = String::with_capacity(program.len());
    for line in program.split_inclusive('\n') {
        if HANDOFF_LINES.iter().any(|h| line.contains(h)) {
            continue;
        }
        out.push_str(&line.replace("Path(entry[\"logical_path\"])", "Path(sealed_path)"));
    }
    let leftover = [MARKER, "entry[", "entry.", "handoff"]
        .iter()
        .any(|n| out.contains(n));
    (!leftover && out.contains("Path(sealed_path)")).then_some(out)
}

/// Rewrites every program of `config` that reads the hand-off; `Err` when one cannot be.
/// `Ok(true)` when something was rewritten.
pub(crate) fn unseal_config(config: &mut Value) -> Result<bool, ()> {
    match config {
        Value::String(s) if s.contains(MARKER) => {
            *s = unseal(s).ok_or(())?;
            Ok(true)
        }
        Value::Array(items) => items
            .iter_mut()
            .try_fold(false, |any, v| unseal_config(v).map(|done| any || done)),
        Value::Object(m) => m
            .values_mut()
            .try_fold(false, |any, v| unseal_config(v).map(|done| any || done)),
        _ => Ok(false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hand_off_lines_go_and_the_file_given_is_read() {
        let program = "import json, os, sys\nfrom pathlib import Path\nsealed_path = sys.argv[1]\nhandoff = json.loads(os.environ.get(\"RYEOS_VERIFIED_CODE_MAP\", \"null\"))\nentry = handoff.get(\"entries\", dict()).get(sealed_path) if isinstance(handoff, dict) else None\nif not isinstance(handoff, dict) or not entry:\n    raise SystemExit(\"RyeOS Python runtime: missing sealed tool identity\")\ntool_path = Path(entry[\"logical_path\"])\nsource = Path(sealed_path).read_bytes()\nactual_hash = hashlib.sha256(source).hexdigest()\nif actual_hash != entry[\"content_hash\"]:\n    raise SystemExit(\"RyeOS Python runtime: sealed tool digest mismatch\")\nexec(source)\n";
        assert_eq!(
            unseal(program).unwrap(),
            "import json, os, sys\nfrom pathlib import Path\nsealed_path = sys.argv[1]\ntool_path = Path(sealed_path)\nsource = Path(sealed_path).read_bytes()\nexec(source)\n"
        );
    }

    #[test]
    fn another_shape_is_not_rewritten() {
        assert_eq!(
            unseal("m = os.environ[\"RYEOS_VERIFIED_CODE_MAP\"]\nrun(m)\n"),
            None
        );
        let mut config = serde_json::json!({"args": ["-c", {"literal": "x = os.environ['RYEOS_VERIFIED_CODE_MAP']; entry[0]"}]});
        assert_eq!(unseal_config(&mut config), Err(()));
        let mut plain = serde_json::json!({"args": ["-c", "print(1)"]});
        assert_eq!(unseal_config(&mut plain), Ok(false));
    }
}
