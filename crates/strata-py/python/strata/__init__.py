"""strata: layered interpolation of tool-execution configs, and running the tools they describe.

Render a document through the four layers — ``{input:key}``, ``${state.path}``, ``${NAME}``
and ``{param}``, in that order — with ``render`` (once) or a compiled ``Template`` (many
times), and run a project's tools with ``Project.run_tool``. Choose and render prompt
templates with ``PromptManager``; fill canned responses from standard fields, tool results
and a generator with ``CannedResponse``. Values cross as plain Python data; substituted
values are never scanned again by any layer. Errors are ``StrataError`` (a subclass per
family); warnings are ``StrataWarning``. See docs/python.md.
"""

from ._errors import (
    CycleError,
    LimitError,
    PromptError,
    ResponseError,
    StrataError,
    StrataWarning,
    TemplateSyntaxError,
    ToolError,
    UndefinedError,
)
from ._strata import CannedResponse, Project, PromptManager, Template, __version__, render
from ._types import (
    PromptCandidate,
    PromptExplain,
    PromptTemplate,
    PromptVariable,
    PromptVariant,
    ResponseField,
    ResponseReply,
    StepError,
    StepRecord,
)

__all__ = [
    "CannedResponse",
    "CycleError",
    "LimitError",
    "Project",
    "PromptCandidate",
    "PromptError",
    "PromptExplain",
    "PromptManager",
    "PromptTemplate",
    "PromptVariable",
    "PromptVariant",
    "ResponseError",
    "ResponseField",
    "ResponseReply",
    "StepError",
    "StepRecord",
    "StrataError",
    "StrataWarning",
    "Template",
    "TemplateSyntaxError",
    "ToolError",
    "UndefinedError",
    "__version__",
    "render",
]
