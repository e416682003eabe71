"""The checks of a run sent to Ray workers (``Project.scale_out``), given the files of the
upload as a list: no file and no task argument holds a secret value — a value of ``.env``, or
the value in the environment of a secret the project or a tool's executor chain declares —
and every tool the run needs is uploaded. No Ray needed."""

from __future__ import annotations

from pathlib import Path

import pytest

import strata

#: A secret a runtime declares, set in the environment only (never in `.env`).
DECLARED = "STRATA_TEST_DECLARED_TOKEN"
VALUE = "env-only-0f3c9a"

KEYED_RUNTIME = f"executor: runtimes/subprocess\nsecrets: [{DECLARED}]\n"
KEYED_TOOL = "executor: runtimes/keyed\nconfig: {command: printf, args: [x]}\n"


def files(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


@pytest.fixture
def keyed(project_dir: Path, monkeypatch: pytest.MonkeyPatch) -> strata.Project:
    """The project with `keyed` (a tool on a runtime declaring DECLARED secret), DECLARED set
    in the environment."""
    (project_dir / "tools" / "runtimes" / "keyed.yaml").write_text(KEYED_RUNTIME)
    (project_dir / "tools" / "keyed.yaml").write_text(KEYED_TOOL)
    monkeypatch.setenv(DECLARED, VALUE)
    return strata.Project(project_dir)


def test_a_secret_a_chain_declares_set_in_the_environment_is_refused_in_an_upload_file(keyed: strata.Project) -> None:
    root = Path(keyed.root)
    (root / "notes.txt").write_text(f"token: {VALUE}\n")
    scale = keyed.scale_out(["keyed"])
    assert scale.secret_names == [DECLARED]
    with pytest.raises(strata.StrataError) as refused:
        scale.check_upload(files(root))
    assert (refused.value.kind, refused.value.layer, refused.value.message, refused.value.hint) == (
        "forbidden",
        "request",
        f"`notes.txt` holds the value of secret `{DECLARED}`: it would be uploaded to the Ray workers",
        "exclude it (excludes=[...] or .gitignore), or keep the value only in .env or the environment",
    )
    assert VALUE not in str(refused.value)
    scale.check_upload([f for f in files(root) if f != "notes.txt"])
    # A run of tools that do not declare it does not search for it.
    assert keyed.scale_out(["say"]).secret_names == []
    keyed.scale_out(["say"]).check_upload(files(root))
    # Without a run, every tool's secrets count.
    with pytest.raises(strata.StrataError, match="`notes.txt` holds the value of secret"):
        keyed.scale_out().check_upload(files(root))


def test_a_secret_a_chain_declares_set_in_the_environment_is_refused_in_user_values(keyed: strata.Project) -> None:
    scale = keyed.scale_out(["keyed"])
    for what, value in [
        ("the user values", {"word": f"x{VALUE}x"}),
        ("the plan", [{"id": "a", "tool": "keyed", "arguments": {"t": VALUE}}]),
        ("the graph's inputs", {VALUE: 1}),
        ("the plan", f'[{{"id": "a", "arguments": {{"t": "{VALUE[:3]}\\u{ord(VALUE[3]):04x}{VALUE[4:]}"}}}}]'),
    ]:
        with pytest.raises(strata.StrataError) as refused:
            scale.check_arguments(what, value)
        assert (refused.value.kind, refused.value.message, refused.value.hint) == (
            "forbidden",
            f"the Ray tasks' arguments would hold the value of secret `{DECLARED}` (found in {what})",
            "keep the value in .env and let the tool read its variable",
        )
        assert VALUE not in str(refused.value)
    scale.check_arguments("the user values", {"word": VALUE[:-1], "n": 3, "b": None})


def test_env_is_read_as_strata_reads_it_and_files_are_searched_whole(project: strata.Project) -> None:
    root = Path(project.root)
    # A comment after the value is no part of it: `abcd-1234` is the secret.
    (root / ".env").write_text("export API_KEY=abcd-1234 # the staging key\n")
    (root / "data.bin").write_bytes(b"x" * ((9 << 20) - 4) + b"abcd-1234")
    scale = project.scale_out(["say"])
    assert scale.secret_names == ["API_KEY"]
    upload = [f for f in files(root) if f != ".env"]
    with pytest.raises(strata.StrataError) as refused:
        scale.check_upload(upload)
    assert refused.value.message == "`data.bin` holds the value of secret `API_KEY`: it would be uploaded to the Ray workers"
    (root / "data.bin").write_bytes(b"abcd-123 # the staging key")
    scale.check_upload(upload)


def test_a_tool_the_run_needs_left_out_of_the_upload_is_refused(project: strata.Project) -> None:
    root = Path(project.root)
    scale = project.scale_out(["say"])
    assert scale.tools == ["runtimes/subprocess", "say"]
    message = (
        "the run needs tool `runtimes/subprocess`, left out of the upload to the Ray workers "
        "(by excludes= or .gitignore)"
    )
    with pytest.raises(strata.StrataError) as refused:
        scale.check_upload([f for f in files(root) if f != "tools/runtimes/subprocess.yaml"])
    assert (refused.value.kind, refused.value.message, refused.value.hint) == (
        "invalid",
        message,
        "take it out of excludes= and .gitignore, or set RAY_RUNTIME_ENV_IGNORE_GITIGNORE=1",
    )
    # A tool the run does not need is no matter.
    scale.check_upload([f for f in files(root) if f != "tools/fail.yaml"])
    assert project.scale_out().tools == []


def test_bad_arguments_are_type_errors(project: strata.Project) -> None:
    with pytest.raises(TypeError, match="tools: expected a collection of str, got a str"):
        project.scale_out("say")
    with pytest.raises(TypeError, match="files: expected a collection of str"):
        project.scale_out().check_upload(3)  # type: ignore[arg-type]
    with pytest.raises(strata.StrataError) as refused:
        project.scale_out().check_upload(["../x"])
    assert (refused.value.kind, refused.value.message) == ("invalid", "`../x` is not a path inside the project")
