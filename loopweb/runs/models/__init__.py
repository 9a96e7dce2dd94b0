from loopweb.runs.outcomes import MODEL_FAILURES, NEVER_COUNTED, RETRYABLE_OUTCOMES

from .accounts import Account, ApiToken, Role
from .budgets import ProviderBudget
from .catalog import (
    Case,
    CaseKind,
    CaseVersion,
    Combination,
    CombinationKind,
    CoverageGroup,
    GGConfiguration,
    GroupMember,
    ModelEntry,
)
from .changes import Change, ChangeHorizon
from .overrides import ChecklistOverride
from .work import (
    IN_FLIGHT,
    NOT_STARTED,
    UNDER_WAY,
    CancelCause,
    Job,
    JobStatus,
    Outcome,
    Rating,
    Review,
    ReviewVerdict,
    Run,
)

__all__ = [
    "NEVER_COUNTED",
    "NOT_STARTED",
    "UNDER_WAY",
    "ReviewVerdict",
    "IN_FLIGHT",
    "MODEL_FAILURES",
    "RETRYABLE_OUTCOMES",
    "Account",
    "ApiToken",
    "Case",
    "CancelCause",
    "CaseKind",
    "Change",
    "ChecklistOverride",
    "ChangeHorizon",
    "CaseVersion",
    "Combination",
    "CombinationKind",
    "CoverageGroup",
    "GGConfiguration",
    "GroupMember",
    "Job",
    "JobStatus",
    "ModelEntry",
    "Outcome",
    "ProviderBudget",
    "Rating",
    "Review",
    "Role",
    "Run",
]
