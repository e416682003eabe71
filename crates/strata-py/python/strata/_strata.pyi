"""strata's native module; import ``strata`` instead."""

from collections.abc import Iterable, Mapping
from os import PathLike
from pathlib import Path
from typing import Any, Optional, Union, final

from ._errors import StrataWarning
from ._types import StepRecord

__all__ = ["Project", "render", "Template", "__version__"]

__version__: str

@final
class Template:
    """A document compiled once for a chain of layers, rendered many times.

    ``template`` is any JSON-like value: a string, or a dict or list whose string leaves are
    templates (map keys never are; when it is a dict, its top-level keys are parameters
    too). ``layers`` names the stages in order, from ``"inputs"``, ``"context"``, ``"env"``
    and ``"params"``; the default is all four in that order.
    """

    def __new__(cls, template: Any, layers: Optional[Iterable[str]] = None) -> Template: ...
    def render(
        self,
        *,
        env: Optional[Mapping[str, str]] = None,
        params: Optional[Mapping[str, Any]] = None,
        context: Optional[Mapping[str, Any]] = None,
        inputs: Optional[Mapping[str, Any]] = None,
        secrets: Optional[Iterable[str]] = None,
        strict: bool = False,
        redacted: bool = False,
        warnings: Optional[list[StrataWarning]] = None,
    ) -> Any:
        """Renders the template and returns the value (see docs/python.md)."""
    @property
    def layers(self) -> list[str]:
        """The layers the template was compiled for, in order."""
    @property
    def is_constant(self) -> bool:
        """True when the template holds no placeholder."""

def render(
    template: Any,
    *,
    env: Optional[Mapping[str, str]] = None,
    params: Optional[Mapping[str, Any]] = None,
    context: Optional[Mapping[str, Any]] = None,
    inputs: Optional[Mapping[str, Any]] = None,
    layers: Optional[Iterable[str]] = None,
    secrets: Optional[Iterable[str]] = None,
    strict: bool = False,
    redacted: bool = False,
    warnings: Optional[list[StrataWarning]] = None,
) -> Any:
    """Renders ``template`` once: ``Template(template, layers=layers).render(...)``."""

@final
class Project:
    """A strata project: the directory ``path`` holding ``tools/``."""

    def __new__(cls, path: Union[str, PathLike[str]]) -> Project: ...
    @property
    def root(self) -> Path:
        """The project's root directory (absolute)."""
    def tool_ids(self) -> list[str]:
        """Every tool id under ``tools/``, sorted."""
    def run_tool(
        self,
        tool: str,
        params: Optional[Mapping[str, Any]] = None,
        *,
        step_id: Optional[str] = None,
        env: Optional[Mapping[str, str]] = None,
        strict: bool = False,
        timeout: Optional[float] = None,
    ) -> StepRecord:
        """Runs tool ``tool`` with ``params`` and returns its step record."""
