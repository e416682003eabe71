//! End-to-end tests of `strata render --layer env --text` (docs/layers.md, "Plain text"): text
//! in, text out, as `envsubst` does, a line at a time; an error stops the render, names its
//! line and exits 1, and what was written before it stays written.

mod common;
use common::Test;

#[test]
fn text_is_rendered_through_the_env_layer_alone() {
    Test::new()
        .file(
            "in.txt",
            "user=${USER_NAME} home=${HOME_DIR:-/home/x}\n{param} $$${KEEP} $NAME ${lower}\nno newline ${USER_NAME}",
        )
        .env("USER_NAME", "ada")
        .args(&["render", "--layer", "env", "--text", "in.txt"])
        .stdout("user=ada home=/home/x\n{param} $${KEEP} $NAME ${lower}\nno newline ada")
        .stderr("")
        .status(0)
        .run();
}

#[test]
fn standard_input_is_read_when_no_file_is_given() {
    Test::new()
        .stdin("a ${V}\n")
        .env("V", "1")
        .args(&["render", "--layer", "env", "--text"])
        .stdout("a 1\n")
        .status(0)
        .run();
}

#[test]
fn a_required_variable_stops_the_render_at_its_line_and_keeps_what_was_written() {
    Test::new()
        .file("in.txt", "one ${V}\ntwo ${NEEDED:?set it first}\nthree\n")
        .env("V", "1")
        .args(&["render", "--layer", "env", "--text", "in.txt"])
        .stdout("one 1\n")
        .stderr(concat!(
            "error[env]: required variable `NEEDED` is unset or empty: set it first\n",
            "  --> in.txt:2:5\n",
            "   = help: set `NEEDED` in the environment\n",
        ))
        .status(2)
        .run();
}

#[test]
fn a_missing_variable_is_a_warning_naming_its_line_or_in_strict_mode_an_error() {
    Test::new()
        .file("in.txt", "ok\nx=${MISSING}.\n")
        .args(&["render", "--layer", "env", "--text", "in.txt"])
        .stdout("ok\nx=.\n")
        .stderr(concat!(
            "warning[env]: in.txt:2:3: environment variable `MISSING` is not set\n",
            "   = field: $\n",
        ))
        .status(0)
        .run();
    Test::new()
        .file("in.txt", "ok\nx=${MISSING}.\n")
        .args(&["--strict", "render", "--layer", "env", "--text", "in.txt"])
        .stdout("ok\n")
        .status(2)
        .run();
}

#[test]
fn text_takes_the_env_layer_alone() {
    Test::new()
        .file("in.txt", "x\n")
        .args(&["render", "--text", "in.txt"])
        .stdout("")
        .stderr(concat!(
            "error[request]: --text renders with the env layer alone\n",
            "   = help: pass `--layer env --text`\n",
        ))
        .status(2)
        .run();
}
