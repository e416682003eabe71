"""strata: layered interpolation of tool-execution configs, and running the tools they describe.

Render a document through the four layers — ``{input:key}``, ``${state.path}``, ``${NAME}``
and ``{param}``, in that order — with ``render`` (once) or a compiled ``Template`` (many
times), and run a project's tools with ``Project.run_tool``. Read a plan an LLM emitted
with ``Plan``, resolve its steps' arguments between tool calls with ``Plan.resolve`` or run
it whole with ``Project.run_plan``. Choose and render prompt
templates with ``PromptManager``; fill canned responses from standard fields, tool results
and a generator with ``CannedResponse``. Values cross as plain Python data; substituted
values are never scanned again by any layer. Errors are ``StrataError`` (a subclass per
family); warnings are ``StrataWarning``. See docs/python.md.
"""

from ._errors import (
    CheckError,
    CycleError,
    LimitError,
    PlanError,
    PromptError,
    ResponseError,
    StrataError,
    StrataWarning,
    TemplateSyntaxError,
    ToolError,
    UndefinedError,
)
from ._strata import (
    AdmittedPlan,
    Cancel,
    CannedResponse,
    Plan,
    Project,
    PromptManager,
    RunSlots,
    ScaleOut,
    Template,
    __version__,
    import_ryeos,
    progress_line,
    render,
)
from ._types import (
    GraphRun,
    PlanResolution,
    PlanRun,
    PlanStep,
    PlanStepRecord,
    PlanStepState,
    PromptCandidate,
    PromptExplain,
    PromptUnknownKey,
    PromptTemplate,
    PromptVariable,
    PromptVariant,
    ResponseField,
    ResponseReply,
    StepError,
    StepRecord,
)

__all__ = [
    "AdmittedPlan",
    "Cancel",
    "CannedResponse",
    "CheckError",
    "CycleError",
    "GraphRun",
    "LimitError",
    "Plan",
    "PlanError",
    "PlanResolution",
    "PlanRun",
    "PlanStep",
    "PlanStepRecord",
    "PlanStepState",
    "Project",
    "PromptCandidate",
    "PromptError",
    "PromptExplain",
    "PromptUnknownKey",
    "PromptManager",
    "PromptTemplate",
    "PromptVariable",
    "PromptVariant",
    "ResponseError",
    "ResponseField",
    "ResponseReply",
    "RunSlots",
    "ScaleOut",
    "StepError",
    "StepRecord",
    "StrataError",
    "StrataWarning",
    "Template",
    "TemplateSyntaxError",
    "ToolError",
    "UndefinedError",
    "__version__",
    "import_ryeos",
    "progress_line",
    "render",
]
