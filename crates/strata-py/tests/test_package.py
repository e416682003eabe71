"""The package as installed: docstrings everywhere, typing markers, the stable ABI, Python 3.9."""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path

import strata
import strata._strata

ROOT = Path(__file__).resolve().parents[3]
PACKAGE = Path(strata.__file__).parent


def test_every_public_name_function_and_method_has_a_docstring() -> None:
    missing = []
    for name in strata.__all__:
        obj = getattr(strata, name)
        if name == "__version__":
            continue
        if not (obj.__doc__ or "").strip():
            missing.append(name)
        if inspect.isclass(obj):
            for attr, member in vars(obj).items():
                if attr.startswith("_") and attr not in ("__init__", "__reduce__"):
                    continue
                if callable(member) or isinstance(member, property) or inspect.isdatadescriptor(member):
                    if not (getattr(member, "__doc__", None) or "").strip():
                        missing.append(f"{name}.{attr}")
    assert missing == []


def test_the_native_functions_show_their_signatures() -> None:
    assert inspect.signature(strata.render).parameters["strict"].default is False
    assert str(inspect.signature(strata.Template)) == "(template, layers=None)"
    assert str(inspect.signature(strata.Project.run_tool)) == (
        "(self, /, tool, params=None, *, step_id=None, env=None, strict=False, timeout=None)"
    )
    assert str(inspect.signature(strata.Plan.resolve)) == "(self, /, results=None, *, failed=(), values=None)"
    assert str(inspect.signature(strata.Project.run_plan)) == (
        "(self, /, plan=None, *, values=None, jobs=None, env=None, strict=False, timeout=None, run_id=None,"
        " resume=None, executor=None, step_executor=None, cancel=None, on_event=None)"
    )


def test_the_package_is_typed_and_built_for_the_stable_abi() -> None:
    assert (PACKAGE / "py.typed").is_file()
    assert (PACKAGE / "_strata.pyi").is_file()
    assert Path(strata._strata.__file__ or "").name.endswith(".abi3.so")


def test_the_python_sources_parse_as_python_3_9() -> None:
    sources = sorted(PACKAGE.glob("*.py"))
    assert [p.name for p in sources] == ["__init__.py", "_errors.py", "_types.py"]
    for path in sources:
        ast.parse(path.read_text(), str(path), feature_version=(3, 9))
    # strata.ray (the `ray` extra) too; importing it does not import Ray.
    extra = sorted((PACKAGE / "ray").glob("*.py"))
    assert [p.name for p in extra] == ["__init__.py", "__main__.py", "_driver.py", "_tasks.py", "_upload.py", "_worker.py"]
    for path in extra:
        ast.parse(path.read_text(), str(path), feature_version=(3, 9))


def test_the_version_is_the_workspaces() -> None:
    cargo = (ROOT / "Cargo.toml").read_text()
    match = re.search(r'\[workspace\.package\]\nversion = "([^"]+)"', cargo)
    assert match is not None
    assert strata.__version__ == match.group(1)
