"""Ask a person a question through a hitl server and wait for a typed answer.

>>> from hitl import Client
>>> hitl = Client()   # HITL_URL, HITL_TOKEN and HITL_AGENT from the environment
>>> if hitl.yes_no("Deploy build 1432 to production?", timeout=600):
...     deploy()

:class:`Client` blocks; :class:`AsyncClient` is the same for asyncio. Both
raise :class:`Expired` when nobody answers in time, :class:`Cancelled` when
the question is withdrawn, :class:`Unreachable` when the server cannot be
reached, and for a refused request the :class:`HitlError` subclass of the
server's error code. Validation is the server's: the clients pass its errors
on as they are.
"""

from ._action import DECISIONS, ActionDecision, Decision
from ._async import AsyncClient
from ._client import Client
from ._errors import (
    Cancelled,
    Conflict,
    Expired,
    Forbidden,
    HitlError,
    InvalidAnswer,
    InvalidRequest,
    NotFound,
    RateLimited,
    Unauthorized,
    Unavailable,
    Unreachable,
)
from ._questions import CANCEL_REASON, AskOptions, ChoiceSpec
from ._schema import schema_for
from ._transport import DEFAULT_URL, VERSION
from ._types import Interaction, Option, Page, Result
from ._receipt import ReceiptError, args_sha256, canonical_json, fetch_receipt_keys, verify_receipt
from ._webhook import WebhookVerificationError, verify_webhook

__version__ = VERSION

__all__ = [
    "ReceiptError",
    "args_sha256",
    "canonical_json",
    "fetch_receipt_keys",
    "verify_receipt",
    "WebhookVerificationError",
    "verify_webhook",
    "ActionDecision",
    "AsyncClient",
    "AskOptions",
    "CANCEL_REASON",
    "ChoiceSpec",
    "Cancelled",
    "Client",
    "Conflict",
    "DECISIONS",
    "DEFAULT_URL",
    "Decision",
    "Expired",
    "Forbidden",
    "HitlError",
    "Interaction",
    "InvalidAnswer",
    "InvalidRequest",
    "NotFound",
    "Option",
    "Page",
    "RateLimited",
    "Result",
    "Unauthorized",
    "Unavailable",
    "Unreachable",
    "schema_for",
]
