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


class PromptExplain(TypedDict):
    """The trace of a prompt render: the key, the settings, every candidate in lookup order
    and where each variable came from."""

    key: Optional[str]
    settings: str
    candidates: List[PromptCandidate]
    variables: List[PromptVariable]


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
