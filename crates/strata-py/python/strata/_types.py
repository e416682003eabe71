"""The shapes of the dicts strata returns, for type checkers."""

from __future__ import annotations

from typing import Any, Dict, Literal, Optional, TypedDict


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
