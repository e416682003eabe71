"""The walk of a project's upload (``strata.ray._upload.upload_files``) is kept while the
directories it went through are unchanged, and walked again as soon as one changed. Needs Ray
installed, not a cluster."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from strata.ray import _upload

PATTERNS = list(_upload.DEFAULT_EXCLUDES)


@pytest.fixture
def walks(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Path]]:
    """Counts Ray's walks: one entry (the root) per walk, none kept from another test."""
    monkeypatch.setattr(_upload, "_WALKS", {})
    seen: list[Path] = []
    real = _upload._walk

    def counted(root: Path, patterns: Any) -> Any:
        seen.append(root)
        return real(root, patterns)

    monkeypatch.setattr(_upload, "_walk", counted)
    yield seen


def aged(root: Path) -> None:
    """Dates every entry under ``root`` a minute back (well past ``RACY_NS``)."""
    past = os.stat(root).st_mtime_ns - 60 * 10**9
    for dirpath, dirnames, filenames in os.walk(root):
        for name in [*dirnames, *filenames]:
            os.utime(os.path.join(dirpath, name), ns=(past, past))
    os.utime(root, ns=(past, past))


def names(root: Path, files: list[Path]) -> list[str]:
    return [p.relative_to(root).as_posix() for p in files]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "tools" / "f").mkdir(parents=True)
    (root / "tools" / "f" / "a.yaml").write_text("a\n")
    (root / "notes.txt").write_text("n\n")
    (root / ".strata").mkdir()
    (root / ".strata" / "x").write_text("x\n")
    aged(root)
    return root


def test_an_unchanged_tree_is_walked_once(tree: Path, walks: list[Path]) -> None:
    first = _upload.upload_files(tree, PATTERNS)
    assert names(tree, first) == ["notes.txt", "tools/f/a.yaml"]
    assert _upload.upload_files(tree, PATTERNS) == first
    assert len(walks) == 1
    # What strata itself keeps (.strata, excluded) changes freely.
    (tree / ".strata" / "y").write_text("y\n")
    assert _upload.upload_files(tree, PATTERNS) == first
    assert len(walks) == 1
    # Other patterns are another walk.
    assert names(tree, _upload.upload_files(tree, [*PATTERNS, "notes.txt"])) == ["tools/f/a.yaml"]
    assert len(walks) == 2


def test_a_file_added_removed_or_renamed_deep_down_is_seen(tree: Path, walks: list[Path]) -> None:
    _upload.upload_files(tree, PATTERNS)
    (tree / "tools" / "f" / "b.yaml").write_text("b\n")
    assert names(tree, _upload.upload_files(tree, PATTERNS)) == ["notes.txt", "tools/f/a.yaml", "tools/f/b.yaml"]
    aged(tree)
    _upload.upload_files(tree, PATTERNS)
    os.rename(tree / "tools" / "f" / "b.yaml", tree / "tools" / "f" / "c.yaml")
    assert names(tree, _upload.upload_files(tree, PATTERNS)) == ["notes.txt", "tools/f/a.yaml", "tools/f/c.yaml"]
    aged(tree)
    _upload.upload_files(tree, PATTERNS)
    (tree / "tools" / "f" / "c.yaml").unlink()
    assert names(tree, _upload.upload_files(tree, PATTERNS)) == ["notes.txt", "tools/f/a.yaml"]
    assert len(walks) == 6


def test_an_ignore_file_edited_in_place_is_seen(tree: Path, walks: list[Path]) -> None:
    (tree / ".gitignore").write_text("nothing\n")
    aged(tree)
    assert names(tree, _upload.upload_files(tree, PATTERNS)) == [".gitignore", "notes.txt", "tools/f/a.yaml"]
    # Edited, not replaced: its directory does not change, it does.
    with open(tree / ".gitignore", "w") as f:
        f.write("notes.txt\n")
    assert names(tree, _upload.upload_files(tree, PATTERNS)) == [".gitignore", "tools/f/a.yaml"]
    # Excluded itself, it still counts.
    aged(tree)
    assert names(tree, _upload.upload_files(tree, [*PATTERNS, ".gitignore"])) == ["tools/f/a.yaml"]
    with open(tree / ".gitignore", "w") as f:
        f.write("tools\n")
    assert names(tree, _upload.upload_files(tree, [*PATTERNS, ".gitignore"])) == ["notes.txt"]
    assert len(walks) == 4


def test_a_tree_changed_within_a_tick_of_the_walk_is_walked_again(tree: Path, walks: list[Path]) -> None:
    (tree / "tools" / "f" / "b.yaml").write_text("b\n")  # its directory: changed just now
    _upload.upload_files(tree, PATTERNS)
    _upload.upload_files(tree, PATTERNS)
    assert len(walks) == 2
    aged(tree)
    _upload.upload_files(tree, PATTERNS)
    _upload.upload_files(tree, PATTERNS)
    assert len(walks) == 3
