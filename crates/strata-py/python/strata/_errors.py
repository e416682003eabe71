"""strata's exception and warning classes.

The native module builds them from the JSON form of strata's errors and warnings, the form
every machine interface of strata uses (``kind``, ``layer``, ``message``, ``path``, ``span``,
``hint``, ``file``, ``line``, ``column``). None of the fields ever holds a substituted value,
so a secret never shows in an exception.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple, Type


def _span(span: Optional[List[int]]) -> Optional[Tuple[int, int]]:
    return None if span is None else (span[0], span[1])


class StrataError(Exception):
    """An error of strata: what went wrong, where, and a hint.

    ``str(error)`` is the error as people read it
    (``file:line:col: layer error at path start..end: message (hint: ...)``); the attributes
    hold its parts:

    * ``kind``: a stable name to match on (``"syntax"``, ``"undefined"``, ``"unknown_tool"``,
      ...);
    * ``layer``: ``"env"``, ``"params"``, ``"context"``, ``"inputs"``, ``"request"`` for
      the document or request around them, ``"plan"``, ``"prompt"`` or ``"response"`` for
      plans, prompt templates and canned responses;
    * ``message``: what went wrong, in one sentence;
    * ``path``: the field holding the offending string (``"args[2]"``; ``"$"`` is the root);
    * ``span``: the ``(start, end)`` byte range inside that string, or ``None``;
    * ``hint``: a suggestion for the fix, or ``None``;
    * ``file``, ``line``, ``column``: where in a file, when the text came from one;
    * ``data``: typed facts for programs, or ``None``: ``{"limit": {"setting", "limit"}}``
      for a limit reached (the ``strata.yaml`` setting that raises it and its value),
      ``{"candidates": [...]}`` for a lookup that found nothing (what it tried, in order);
    * ``errors``: every error of a document that does not load (a plan's), each a dict in
      this shape, in document order, the first being this one; empty for a single error.

    Subclasses name the families: ``TemplateSyntaxError``, ``UndefinedError``,
    ``LimitError``, ``CycleError``, ``ToolError``, ``PromptError``, ``PlanError``,
    ``CheckError`` and ``ResponseError``; every other kind is a ``StrataError`` itself.
    """

    kind: str
    layer: str
    message: str
    path: str
    span: Optional[Tuple[int, int]]
    hint: Optional[str]
    file: Optional[str]
    line: Optional[int]
    column: Optional[int]
    data: Optional[Dict[str, Any]]
    errors: List[Dict[str, Any]]

    def __init__(
        self,
        text: str,
        *,
        kind: str,
        layer: str,
        message: str,
        path: str = "$",
        span: Optional[List[int]] = None,
        hint: Optional[str] = None,
        file: Optional[str] = None,
        line: Optional[int] = None,
        column: Optional[int] = None,
        data: Optional[Dict[str, Any]] = None,
        errors: Optional[List[Dict[str, Any]]] = None,
    ) -> None:
        """An error whose text is ``text``, with the fields of strata's JSON form."""
        super().__init__(text)
        self.kind = kind
        self.layer = layer
        self.message = message
        self.path = path
        self.span = _span(span)
        self.hint = hint
        self.file = file
        self.line = line
        self.column = column
        self.data = data
        self.errors = list(errors or [])

    def to_dict(self) -> Dict[str, Any]:
        """The error's fields as strata's JSON form has them (optional ones when set)."""
        out: Dict[str, Any] = {
            "kind": self.kind,
            "layer": self.layer,
            "message": self.message,
            "path": self.path,
            "span": None if self.span is None else list(self.span),
        }
        for name in ("hint", "file", "line", "column", "data"):
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        if self.errors:
            out["errors"] = self.errors
        return out

    def __reduce__(self) -> Tuple[Any, ...]:
        """Pickles by text and fields (the keyword-only constructor needs both)."""
        return (_restore_error, (type(self), str(self), self.to_dict()))


class TemplateSyntaxError(StrataError):
    """A malformed placeholder, expression or document (kind ``"syntax"``)."""


class UndefinedError(StrataError):
    """A value a template needs is missing: a strict render, or ``${NAME:?msg}``
    (kind ``"undefined"``)."""


class LimitError(StrataError):
    """A limit was reached: bytes, placeholders, nesting, parameter links (kind ``"limit"``)."""


class CycleError(StrataError):
    """Something refers to itself, directly or through others (kind ``"cycle"``)."""


class ToolError(StrataError):
    """A tool could not run: an unknown tool, a program that cannot start, a tool that failed
    or timed out (kinds ``"unknown_tool"``, ``"spawn"``, ``"tool_failed"``, ``"timeout"``)."""


class PromptError(StrataError):
    """A prompt template cannot be chosen: no template for the key (the message lists every
    candidate tried), or the template's content differs from the pinned hash (kinds
    ``"template_not_found"``, ``"hash_mismatch"``)."""


class PlanError(StrataError):
    """A plan cannot be read or a request about it is wrong: a reference to a step the plan
    does not have (with a did-you-mean), a record field other than ``result``, ``status``,
    ``error``, ``run`` and ``id``, a path a result does not have, two steps with one id
    (kinds ``"unknown_step"``, ``"unknown_field"``, ``"path_not_found"``,
    ``"duplicate_id"``), and every other error of layer ``"plan"`` whose kind has no family
    of its own (a malformed step: ``"invalid"``, ``"unknown_name"``). A cycle stays a
    ``CycleError`` and a malformed reference a ``TemplateSyntaxError``."""


class CheckError(StrataError):
    """What was to run fails the project check, so nothing ran (kind ``"check"``): the same
    refusal, with the same message, as ``strata run`` gives. ``diagnostics`` lists the
    check's errors, each a dict in the shape of strata's errors (``kind``, ``message``,
    ``path``, ``span``, ``hint``, ``file``, ``line``, ``column``) plus its ``severity`` and
    ``code`` (``"R001"``), as ``strata check --format json`` prints them."""

    diagnostics: List[Dict[str, Any]]

    def __init__(
        self,
        text: str,
        *,
        diagnostics: Optional[List[Dict[str, Any]]] = None,
        **fields: Any,
    ) -> None:
        """A refusal whose text is ``text``, with the check's ``diagnostics``."""
        super().__init__(text, **fields)
        self.diagnostics = list(diagnostics or [])

    def to_dict(self) -> Dict[str, Any]:
        """The refusal's fields, its diagnostics included."""
        out = super().to_dict()
        out["diagnostics"] = self.diagnostics
        return out


class ResponseError(StrataError):
    """A canned response cannot be filled: fields that no source provides (all named at
    once), or a generator that failed for a field (kinds ``"missing_fields"``,
    ``"generator"``); nothing is rendered half-filled."""


# The classes are strata's: tracebacks and pickles name them `strata.X`.
for _cls in (
    StrataError,
    TemplateSyntaxError,
    UndefinedError,
    LimitError,
    CycleError,
    ToolError,
    PromptError,
    PlanError,
    CheckError,
    ResponseError,
):
    _cls.__module__ = "strata"

_FAMILIES: Dict[str, Type[StrataError]] = {
    "syntax": TemplateSyntaxError,
    "undefined": UndefinedError,
    "limit": LimitError,
    "cycle": CycleError,
    "unknown_tool": ToolError,
    "spawn": ToolError,
    "tool_failed": ToolError,
    "timeout": ToolError,
    "cancelled": ToolError,
    "template_not_found": PromptError,
    "hash_mismatch": PromptError,
    "unknown_step": PlanError,
    "path_not_found": PlanError,
    "duplicate_id": PlanError,
    "check": CheckError,
    "missing_fields": ResponseError,
    "generator": ResponseError,
}


def _restore_error(
    cls: Type[StrataError], text: str, fields: Dict[str, Any]
) -> StrataError:
    return cls(text, **fields)


# The family of an error of layer `plan` whose kind has none (`unknown_field` among them: a
# plan's unknown record field is a `PlanError`, a response's unknown standard field is not).
_LAYER_FAMILIES: Dict[str, Type[StrataError]] = {"plan": PlanError}


def _error(text: str, fields: Dict[str, Any]) -> StrataError:
    """The exception of the family of ``fields["kind"]``, else of ``fields["layer"]``
    (called by the native module)."""
    cls = _FAMILIES.get(fields["kind"]) or _LAYER_FAMILIES.get(fields["layer"], StrataError)
    return cls(text, **fields)


class StrataWarning(UserWarning):
    """Something suspicious that did not stop a render: a missing variable, path or input.

    ``str(warning)`` is the warning as people read it; the attributes are ``layer``,
    ``message``, ``path`` and ``span`` as in ``StrataError``. It names what is missing, never
    a value.
    """

    layer: str
    message: str
    path: str
    span: Optional[Tuple[int, int]]

    def __init__(
        self,
        text: str,
        *,
        layer: str,
        message: str,
        path: str = "$",
        span: Optional[List[int]] = None,
    ) -> None:
        """A warning whose text is ``text``, with the fields of strata's JSON form."""
        super().__init__(text)
        self.layer = layer
        self.message = message
        self.path = path
        self.span = _span(span)

    def to_dict(self) -> Dict[str, Any]:
        """The warning's fields as strata's JSON form has them."""
        return {
            "layer": self.layer,
            "message": self.message,
            "path": self.path,
            "span": None if self.span is None else list(self.span),
        }

    def __reduce__(self) -> Tuple[Any, ...]:
        """Pickles by text and fields."""
        return (_restore_warning, (str(self), self.to_dict()))


StrataWarning.__module__ = "strata"


def _restore_warning(text: str, fields: Dict[str, Any]) -> StrataWarning:
    return StrataWarning(text, **fields)


def _warning(text: str, fields: Dict[str, Any]) -> StrataWarning:
    """The warning of ``fields`` (called by the native module)."""
    return StrataWarning(text, **fields)
