"""Issue 24, row 1: `jobs=` has the range and the message of `--jobs`, `STRATA_JOBS` and
`strata.yaml` (1 to 256; 0 refused)."""

from pathlib import Path

import pytest

import strata


@pytest.mark.parametrize("jobs", [0, 257, 30000, 1000000, -1])
def test_jobs_out_of_range_is_refused_with_the_settings_message(
    tmp_path: Path, jobs: int
) -> None:
    (tmp_path / "tools").mkdir()
    project = strata.Project(tmp_path)
    with pytest.raises(ValueError) as info:
        project.run_plan([{"tool": "say", "arguments": {}}], jobs=jobs)
    assert str(info.value) == f"`jobs` must be an integer from 1 to 256, not {jobs}"


def test_jobs_over_the_cap_in_strata_yaml_is_refused_with_the_same_message(
    tmp_path: Path,
) -> None:
    (tmp_path / "tools").mkdir()
    (tmp_path / "strata.yaml").write_text("jobs: 1000000\n")
    with pytest.raises(strata.StrataError) as info:
        strata.Project(tmp_path)
    assert "`jobs` must be an integer from 1 to 256, not 1000000" in str(info.value)
