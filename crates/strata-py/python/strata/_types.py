"""The shapes of the dicts strata returns, for type checkers."""

from __future__ import annotations

from typing import Any, Dict, List, Literal, Optional, TypedDict


class StepError(TypedDict):
    """Why a step failed: a kind to match on and a message (never holding data)."""

    kind: str
    message: str


class StepRecord(TypedDict):
    """One tool call, as every strata front-end records it: ``result`` is the tool's
    standard output parsed as JSON (else the text, or ``None`` when empty); ``run`` the
    process outcome (``success``, ``exit_code``, ``signal``, ``stderr``, ``duration_ms``,
    ``truncated``, ``timed_out``)."""

    id: str
    status: Literal["completed", "failed", "skipped"]
    result: Any
    error: Optional[StepError]
    run: Optional[Dict[str, Any]]


class PromptVariant(TypedDict):
    """One rendered variant of a prompt template: the version of each of its versioned
    components (empty when it uses none) and the text."""

    versions: Dict[str, str]
    text: str


class PromptCandidate(TypedDict):
    """One template a lookup tried: its id, where it is defined (``None`` when it does not
    exist) and whether it won."""

    id: str
    file: Optional[str]
    won: bool


class PromptVariable(TypedDict):
    """One variable a render could read: its name, its source (``"feed"``,
    ``"knowledge"``, ``"feed+knowledge"``, ``"component"`` or ``"predefined"``) and its value
    as compact JSON (``***`` when secret), or where a component is defined."""

    name: str
    source: str
    value: str


class PromptUnknownKey(TypedDict):
    """A key no template anywhere in the tree is named: the key, and the closest name there
    is (``None`` when nothing is close)."""

    name: str
    did_you_mean: Optional[str]


class _PromptTrace(TypedDict):
    key: Optional[str]
    settings: str
    candidates: List[PromptCandidate]
    variables: List[PromptVariable]


class PromptExplain(_PromptTrace, total=False):
    """The trace of a prompt render: the key, the settings, every candidate in lookup order
    and where each variable came from; ``unknown_key`` when no template anywhere in the tree
    is named like the key (it fell back, and is probably misspelt)."""

    unknown_key: PromptUnknownKey


class PromptTemplate(TypedDict):
    """A template or component of a ``PromptManager``."""

    id: str
    namespace: str
    name: str
    version: Optional[str]
    component: bool
    file: str
    line: int
    column: int
    hash: str
    reads: List[str]


# `from` is a keyword: the optional key is declared in the functional form.
_ResponseFieldFrom = TypedDict("_ResponseFieldFrom", {"from": str}, total=False)


class ResponseField(_ResponseFieldFrom):
    """A field of a canned response and where it came from: ``source`` ``"std"``,
    ``"tool"`` (``from``: ``"tools[i]"``) or ``"generative"`` (``from``: the generator's
    name)."""

    field: str
    source: Literal["std", "tool", "generative"]
    value: Any


class ResponseReply(TypedDict):
    """A rendered canned response and its fields, in template order."""

    reply: str
    fields: List[ResponseField]


class PlanStep(TypedDict):
    """A step of a ``Plan``: its id (``step<position>`` when written without one), its
    tool, the steps it depends on, its level and its intent."""

    id: str
    tool: str
    depends_on: List[str]
    level: int
    intent: Optional[str]


class _PlanStepStateOptional(TypedDict, total=False):
    arguments: Any
    waiting_for: List[str]
    error: StepError


class PlanStepState(_PlanStepStateOptional):
    """What a step can do now (``Plan.resolve``): its ``state``; ``arguments`` (resolved)
    when ``ready``; ``waiting_for`` when ``waiting`` (user values) or ``blocked`` (steps);
    ``error`` when it failed to resolve (kind ``path_not_found``) or is skipped (kind
    ``run_state``)."""

    id: str
    depends_on: List[str]
    state: Literal["completed", "failed", "skipped", "waiting", "blocked", "ready"]


class PlanResolution(TypedDict):
    """The partial resolution of a plan (``Plan.resolve``): the levels, every step in plan
    order and the user values that waiting steps lack."""

    levels: List[List[str]]
    steps: List[PlanStepState]
    missing_values: List[str]


class _WaitingFor(TypedDict, total=False):
    waiting_for: List[str]


class PlanStepRecord(_WaitingFor):
    """A step of a plan run (``Project.run_plan``): its step record, or for a step waiting
    for user values status ``"waiting"`` with ``waiting_for``."""

    id: str
    status: Literal["completed", "failed", "skipped", "waiting"]
    result: Any
    error: Optional[StepError]
    run: Optional[Dict[str, Any]]


class GraphRun(TypedDict):
    """A graph run (``Project.run_graph``): its id, how it ended, the steps taken, the
    graph's result (``None`` unless completed) and the error that ended it (``None``, or a
    dict in the shape of strata's errors)."""

    run_id: str
    status: Literal["completed", "failed", "limited"]
    steps: int
    result: Any
    failure: Optional[Dict[str, Any]]


class PlanRun(TypedDict):
    """A plan run (``Project.run_plan``), recorded under ``.strata/runs/``: its id, the plan's
    name, how it ended, the levels, every step's record in plan order, the user values not
    given and the input that could not become a step."""

    run_id: str
    plan: str
    rejected: List[Dict[str, Any]]
    status: Literal["completed", "failed", "waiting"]
    levels: List[List[str]]
    steps: List[PlanStepRecord]
    missing_values: List[str]
