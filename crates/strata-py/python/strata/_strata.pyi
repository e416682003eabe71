"""strata's native module; import ``strata`` instead."""

from collections.abc import Callable, Iterable, Mapping
from os import PathLike
from pathlib import Path
from typing import Any, Optional, Union, final

from ._errors import StrataWarning
from ._types import (
    GraphRun,
    PlanResolution,
    PlanRun,
    PlanStep,
    PromptExplain,
    PromptTemplate,
    PromptVariant,
    ResponseReply,
    StepRecord,
)

__all__ = ["AdmittedPlan", "Cancel", "CannedResponse", "Plan", "Project", "PromptManager", "RunSlots", "ScaleOut", "StepDone", "import_ryeos", "progress_line", "render", "Template", "__version__"]

__version__: str

# What ``Project.call_tool`` returns and an executor of ``run_plan``/``run_graph`` returns:
# ``{"run": {...}}`` when the tool ran, ``{"error": {...}}`` when it could not.
_CallEnvelope = dict[str, Any]
# ``executor(tool, params, timeout, marks)``: runs one tool call elsewhere, with
# ``call_tool(tool, params, timeout=timeout, marks=marks)`` there.
_Executor = Callable[[str, dict[str, Any], Optional[float], str], Mapping[str, Any]]
# ``step_executor(request, done)``: starts one attempt of a whole step elsewhere
# (``strata.ray``) and returns at once; ``request`` holds the arguments of ``plan_step`` and
# its ``attempt``; ``done(answer)`` is called once, from any thread, with ``{"record": ...}``
# or ``{"error": ...}``. Its optional ``ahead`` attribute and ``answers_awaited(awaited)``
# method are read as docs/python.md says.
_StepExecutor = Callable[[dict[str, Any], StepDone], object]
# ``part_executor(request)``: runs one part of a graph's walk elsewhere (``strata.ray``);
# ``request`` is ``walk_part``'s, the answer ``{"answer": ...}`` or ``{"error": ...}``.
_PartExecutor = Callable[[dict[str, Any]], Mapping[str, Any]]

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

def import_ryeos(
    src: Union[str, PathLike[str]],
    dst: Union[str, PathLike[str]],
    spaces: Optional[Iterable[Union[str, PathLike[str]]]] = None,
) -> dict[str, Any]:
    """Imports the RyeOS project ``src`` (holding ``.ai/``) into the new strata project
    ``dst`` (absent or empty), items resolved in the project, then in each of ``spaces``;
    returns the report of ``IMPORT-REPORT.json`` (``summary``, ``files``, ``kept``,
    ``notices``, ``check``, ``exit_code``). Raises ``StrataError`` when it cannot run."""

def progress_line(event: Mapping[str, Any]) -> Optional[str]:
    """What ``strata plan run`` prints on standard error for ``event``, an event of a plan run
    as ``on_event`` is given it (``step_started``, ``step_finished``, ``step_retrying``,
    ``step_waiting``): its progress line, and under a failed attempt the last lines its tool
    printed on standard error; None for any other event."""

@final
class Plan:
    """A plan an LLM planner emitted, read and checked once: steps calling tools with
    arguments that refer to earlier steps' results.

    ``plan`` is a list of steps, or a dict ``{"steps": [...]}``; ``from_text`` and
    ``from_file`` read the plan's JSON or YAML text.
    """

    def __new__(cls, plan: Union[list[Any], tuple[Any, ...], Mapping[str, Any]]) -> Plan: ...
    @staticmethod
    def from_text(text: str, *, file: Optional[str] = None) -> Plan:
        """The plan in ``text`` (JSON or YAML); ``file`` names it in errors."""
    @staticmethod
    def from_file(path: Union[str, PathLike[str]]) -> Plan:
        """The plan in file ``path`` (JSON or YAML)."""
    @property
    def levels(self) -> list[list[str]]:
        """The steps' levels, as lists of ids."""
    @property
    def dependencies(self) -> dict[str, list[str]]:
        """Each step's id mapped to the ids of the steps it depends on."""
    @property
    def placeholders(self) -> list[str]:
        """The user values the plan needs, by name, in plan order."""
    @property
    def steps(self) -> list[PlanStep]:
        """The steps in plan order, with their tools, dependencies and levels."""
    def resolve(
        self,
        results: Optional[Mapping[str, Any]] = None,
        *,
        failed: Optional[Iterable[str]] = (),
        values: Optional[Mapping[str, Any]] = None,
    ) -> PlanResolution:
        """What each step can do now, ready steps with their resolved arguments."""
    def __len__(self) -> int: ...

@final
class StepDone:
    """What a step executor calls, once, with a step's answer."""

    def __call__(self, answer: Mapping[str, Any]) -> bool:
        """Hands the answer back (``{"record"}`` or ``{"error"}``): True the first time."""

@final
class AdmittedPlan:
    """A plan loaded and admitted once by a project (``Project.admit_plan``)."""

@final
class Cancel:
    """A flag that stops the plan runs given it (``Project.run_plan(cancel=...)``)."""

    def __new__(cls) -> Cancel: ...
    def cancel(self) -> None:
        """Sets the flag (from any thread)."""
    @property
    def cancelled(self) -> bool:
        """True once the flag is set."""

@final
class ScaleOut:
    """The checks of a run sent to Ray workers (from ``Project.scale_out``): what the upload
    must hold and what nothing sent may hold — the secret values of the run's tools (the
    values of ``.env``, and those in this process's environment of the secrets the project
    and the tools' executor chains declare). It never shows a value."""

    @property
    def secret_names(self) -> list[str]:
        """The names of the secrets whose values are searched for, sorted."""
    @property
    def tools(self) -> list[str]:
        """The tools the run needs (with the tools of their executor chains, and the tools a
        graph calls), sorted."""
    def check_upload(self, files: Iterable[str]) -> None:
        """Checks the files that would be uploaded (``files``: paths relative to the
        project, ``/``-separated). Raises ``StrataError`` of kind ``invalid`` when a tool the
        run needs is not among them, of kind ``forbidden`` when one holds a secret value
        (read whole, whatever its size), naming the file and the variable, never the
        value."""
    def check_arguments(self, what: str, value: Any) -> None:
        """Checks what the run's tasks would be given, ``value`` (``what`` says which:
        ``"the user values"``, ``"the plan"``…; a ``Plan`` as its document): raises ``StrataError`` of kind
        ``forbidden`` when a string, key or number in it — or in JSON text in it — holds a
        secret value."""

@final
class RunSlots:
    """The run slots of the package (Ray's unpacked copy of a project) at ``package``: each
    run a copy of its own beside it, kept as a spare for the package's next run only while it
    holds exactly what the package holds."""

    def __new__(cls, package: str) -> RunSlots: ...
    def enter(self, run: str) -> str:
        """The slot of run ``run`` (its path): the one its first task here made or claimed.
        Raises ``StrataError`` of kind ``invalid`` for a run id that is not one, ``io`` when
        the slot cannot be made."""
    def leave(self, run: str) -> Optional[tuple[str, bool]]:
        """Ends run ``run``'s slot: ``(slot, kept)`` — kept as a spare (what was opened
        there stays valid) or removed — or None when the run has no slot here."""

@final
class Project:
    """A strata project: the directory ``path`` holding ``tools/``."""

    def __new__(cls, path: Union[str, PathLike[str]]) -> Project: ...
    @property
    def root(self) -> Path:
        """The project's root directory (absolute)."""
    def tool_ids(self) -> list[str]:
        """Every tool id under ``tools/``, sorted."""
    def scale_out(self, tools: Optional[Iterable[str]] = None) -> ScaleOut:
        """The checks of a run of ``tools`` sent to Ray workers (``strata.ray`` makes them
        before it submits anything): ``tools`` are the tools a plan's steps call, or a
        graph's id; ``None`` is a run of any tool of the project (each one's secrets count,
        none must be uploaded). Raises ``StrataError`` when ``.env`` cannot be read or
        parsed."""
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
    def run_plan(
        self,
        plan: Union[Plan, list[Any], tuple[Any, ...], Mapping[str, Any], None] = None,
        *,
        values: Optional[Mapping[str, Any]] = None,
        jobs: Optional[int] = None,
        env: Optional[Mapping[str, str]] = None,
        strict: bool = False,
        timeout: Optional[float] = None,
        run_id: Optional[str] = None,
        resume: Optional[str] = None,
        executor: Optional[_Executor] = None,
        step_executor: Optional[_StepExecutor] = None,
        cancel: Optional[Cancel] = None,
        on_event: Optional[Callable[[dict[str, Any]], object]] = None,
    ) -> PlanRun:
        """Runs a whole plan with the project's tools, recorded under ``.strata/runs/``
        (or resumes run ``resume``), and returns every step's record.

        At most ``jobs`` steps run at once (default: the project's ``jobs`` setting, 4
        unless ``strata.yaml`` or ``STRATA_JOBS`` says otherwise). ``executor`` runs each
        tool call elsewhere; ``step_executor`` each whole step (``strata.ray``); ``cancel``,
        once set, stops the run (recorded as ``cancelled``, resumable); ``on_event`` is
        called with each event as ``strata plan run --json`` streams it."""
    def admit_plan(
        self,
        plan: Union[str, list[Any], Mapping[str, Any]],
        *,
        name: Optional[str] = None,
    ) -> AdmittedPlan:
        """``plan`` loaded and refused as ``plan_step`` refuses it, once: ``plan_step`` given
        it skips both in this project."""
    def plan_step(
        self,
        plan: Union[AdmittedPlan, str, list[Any], Mapping[str, Any]],
        step: str,
        *,
        records: Optional[list[Any]] = None,
        values: Optional[Mapping[str, Any]] = None,
        name: Optional[str] = None,
        strict: bool = False,
        timeout: Optional[float] = None,
        marks: Optional[str] = None,
    ) -> dict[str, Any]:
        """Runs one step of ``plan`` given the records of the steps it depends on, as
        ``strata plan step`` does, and returns ``{"tool", "record"}`` or ``{"tool",
        "waiting_for"}``; ``marks`` is the marker key of the run it belongs to."""
    def walk_part(
        self,
        graph: str,
        request: Mapping[str, Any],
        *,
        strict: bool = False,
    ) -> dict[str, Any]:
        """Runs one part of a walk of graph ``graph`` (``begin``, ``advance``, ``items`` or
        ``element``), as ``strata walk`` does, and returns its answer."""
    def call_tool(
        self,
        tool: str,
        params: Optional[Mapping[str, Any]] = None,
        *,
        env: Optional[Mapping[str, str]] = None,
        strict: bool = False,
        timeout: Optional[float] = None,
        marks: Optional[str] = None,
    ) -> _CallEnvelope:
        """Runs tool ``tool`` through the project's runner and returns ``{"run": ...}`` or
        ``{"error": ...}``: what an ``executor`` returns; ``marks`` is the marker key of the
        run the call belongs to (an executor's fourth argument)."""
    def run_graph(
        self,
        graph: str,
        inputs: Optional[Mapping[str, Any]] = None,
        *,
        run_id: Optional[str] = None,
        resume: Optional[str] = None,
        env: Optional[Mapping[str, str]] = None,
        strict: bool = False,
        executor: Optional[_Executor] = None,
        inputs_text: Optional[Mapping[str, str]] = None,
        part_executor: Optional[_PartExecutor] = None,
    ) -> GraphRun:
        """Runs graph ``graph`` with the project's tools, as ``strata run`` does, and returns
        how the run ended. ``executor`` runs each tool call elsewhere; ``part_executor`` each
        part of the walk (``strata.ray``)."""

@final
class PromptManager:
    """Prompt templates chosen by key with hierarchical fallback (seed 002's TemplateManager).

    ``templates`` is a directory (a project's ``prompts/`` tree) or a dict of the same
    nesting; the settings start every lookup and render.
    """

    def __new__(
        cls,
        templates: Union[Mapping[str, Any], str, PathLike[str]],
        *,
        default_template: Optional[str] = None,
        root_space: Optional[str] = None,
        type: str = "main",
        version: Optional[str] = None,
        default_name: str = "default",
        predefined_variables: Optional[Mapping[str, Any]] = None,
    ) -> PromptManager: ...
    def switch(
        self,
        *,
        root_space: Optional[str] = ...,
        type: str = ...,
        version: Optional[str] = ...,
        default_name: str = ...,
        predefined_variables: Optional[Mapping[str, Any]] = ...,
    ) -> PromptManager:
        """A manager with the given settings changed; this one is unchanged."""
    def render(
        self,
        key: Optional[str] = None,
        *,
        feed: Optional[Mapping[str, Any]] = None,
        knowledge: Optional[Mapping[str, Any]] = None,
        merge: str = "feed_only",
        root_space: Optional[str] = ...,
        type: str = ...,
        version: Optional[str] = ...,
        default_name: str = ...,
        pins: Optional[Mapping[str, str]] = None,
        hash: Optional[str] = None,
        strict: bool = False,
        secrets: Optional[Iterable[str]] = None,
        warnings: Optional[list[StrataWarning]] = None,
    ) -> str:
        """Renders the template ``key`` resolves to and returns its text."""
    def variants(
        self,
        key: Optional[str] = None,
        *,
        feed: Optional[Mapping[str, Any]] = None,
        knowledge: Optional[Mapping[str, Any]] = None,
        merge: str = "feed_only",
        root_space: Optional[str] = ...,
        type: str = ...,
        version: Optional[str] = ...,
        default_name: str = ...,
        pins: Optional[Mapping[str, str]] = None,
        hash: Optional[str] = None,
        strict: bool = False,
        secrets: Optional[Iterable[str]] = None,
        warnings: Optional[list[StrataWarning]] = None,
    ) -> list[PromptVariant]:
        """Renders every variant of the template ``key`` resolves to, each labelled."""
    def explain(
        self,
        key: Optional[str] = None,
        *,
        feed: Optional[Mapping[str, Any]] = None,
        knowledge: Optional[Mapping[str, Any]] = None,
        merge: str = "feed_only",
        root_space: Optional[str] = ...,
        type: str = ...,
        version: Optional[str] = ...,
        default_name: str = ...,
        pins: Optional[Mapping[str, str]] = None,
        hash: Optional[str] = None,
        strict: bool = False,
        secrets: Optional[Iterable[str]] = None,
        warnings: Optional[list[StrataWarning]] = None,
    ) -> PromptExplain:
        """The trace of the lookup and render of ``key``: the candidates and the winner."""
    def resolve(self, key: Optional[str] = None) -> Optional[str]:
        """The id of the template ``key`` resolves to, or ``None``."""
    def templates(self) -> list[PromptTemplate]:
        """Every template and component, in load order."""
    @property
    def root_space(self) -> Optional[str]:
        """The root space lookups start in, or ``None``."""
    @property
    def type(self) -> str:
        """The type namespace."""
    @property
    def version(self) -> Optional[str]:
        """The deployment version, or ``None``."""
    @property
    def default_name(self) -> str:
        """The name every namespace falls back to."""
    @property
    def predefined_variables(self) -> dict[str, Any]:
        """The variables every render sees, below the feed."""

@final
class CannedResponse:
    """A canned response: a Jinja template filled from standard fields, tool results and a
    generator, then rendered."""

    def __new__(cls, template: str, *, file: Optional[str] = None) -> CannedResponse: ...
    @staticmethod
    def from_file(path: Union[str, PathLike[str]]) -> CannedResponse:
        """The canned response in file ``path``."""
    @property
    def fields(self) -> list[str]:
        """The fields the template reads, by full dotted name, in order of first use."""
    @property
    def source(self) -> str:
        """The template as written."""
    @property
    def file(self) -> Optional[str]:
        """The file the template came from, or ``None``."""
    def render(
        self,
        *,
        std: Optional[Mapping[str, Any]] = None,
        tools: Union[list[Any], tuple[Any, ...], None] = None,
        generator: Optional[Callable[[str, str, dict[str, Any]], Any]] = None,
    ) -> str:
        """Fills the fields the render needs and renders the response; returns the text."""
    def respond(
        self,
        *,
        std: Optional[Mapping[str, Any]] = None,
        tools: Union[list[Any], tuple[Any, ...], None] = None,
        generator: Optional[Callable[[str, str, dict[str, Any]], Any]] = None,
    ) -> ResponseReply:
        """As ``render``, with each field's source."""
