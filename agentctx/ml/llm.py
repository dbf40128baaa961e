"""The one Anthropic client factory, and a helper for one structured call.

Everything in agentctx that talks to a model goes through here::

    from agentctx.ml.llm import Deadline, LLMError, make_client, record, structured_call

    client = make_client()                      # ANTHROPIC_API_KEY / ANTHROPIC_BASE_URL
    try:
        result = structured_call(client, output_type=Verdict, model=cfg.get_str("llm_model"),
                                 system="You compare two records ...", user=text,
                                 max_tokens=300, deadline=Deadline(30))
    except LLMError as exc:
        record(db, exc.attempts, purpose="merge", session_id=None, project_id=pid)
        ...                                     # exc is one readable line
    else:
        record(db, result.attempts, purpose="merge", session_id=None, project_id=pid)
        verdict = result.value                   # a validated Verdict

:func:`structured_call` asks for JSON matching the pydantic model's schema (structured outputs,
``output_config.format``), validates the reply with pydantic, prices every attempt from the price
table and retries **at most once** (transient API errors, timeouts, an invalid reply); the SDK's
own retries are off so a failing API can never loop. It never touches the store: the caller
writes the attempts to the ledger with :func:`record` (from the thread that owns the store
connection). Tests pass ``make_client(http_client=httpx2.Client(transport=MockTransport(...)))``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from datetime import date
from typing import TYPE_CHECKING, Any, Generic, NamedTuple, TypeVar

from pydantic import BaseModel, ValidationError

from agentctx.ml.pricing import CallUsage
from agentctx.ml.pricing import load as load_prices
from agentctx.store import ledger

if TYPE_CHECKING:
    import anthropic  # late: anthropic costs 1 s; only a model call needs it
    import httpx2

    from agentctx.store.db import Store

API_KEY_ENV = "ANTHROPIC_API_KEY"
DEFAULT_TIMEOUT_S = 90.0
MIN_ATTEMPT_S = 2.0  # below this much time left, a call is not started
RETRY_PAUSE_S = 2.0  # wait before the one retry (an overloaded API needs a moment)

T = TypeVar("T", bound=BaseModel)


class Deadline:
    """A point in (monotonic) time that work must finish by."""

    def __init__(self, seconds: float) -> None:
        self._end = time.monotonic() + seconds

    def remaining(self) -> float:
        """Seconds left (negative once passed)."""
        return self._end - time.monotonic()

    def expired(self) -> bool:
        """Whether the deadline has passed."""
        return self.remaining() <= 0


class Attempt(NamedTuple):
    """One request to the model: what it cost and whether it gave a usable answer."""

    model: str
    usage: CallUsage
    usd: float
    ok: bool
    error: str | None


class CallResult(NamedTuple, Generic[T]):
    """A validated answer and every attempt it took."""

    value: T
    attempts: list[Attempt]

    @property
    def usd(self) -> float:
        """Cost of all attempts."""
        return sum(a.usd for a in self.attempts)


class LLMError(Exception):
    """A call that gave no usable answer; ``attempts`` still cost money and go to the ledger."""

    def __init__(self, message: str, attempts: Sequence[Attempt] = ()) -> None:
        super().__init__(message)
        self.attempts = list(attempts)


def api_key_from_env() -> str | None:
    """``ANTHROPIC_API_KEY`` from the environment; ``None`` when unset or blank."""
    value = os.environ.get(API_KEY_ENV, "").strip()
    return value or None


def make_client(http_client: httpx2.Client | None = None, *, api_key: str | None = None,
                timeout: float = DEFAULT_TIMEOUT_S) -> anthropic.Anthropic:
    """The Anthropic client agentctx uses (SDK retries off; ``ANTHROPIC_BASE_URL`` honoured).

    ``http_client`` replaces the transport (tests pass an ``httpx2.MockTransport``); ``api_key``
    defaults to ``ANTHROPIC_API_KEY``. Importing the SDK is slow (~0.8 s), so this module is
    never imported on the hook path.
    """
    import anthropic  # late: anthropic costs 1 s; only a model call needs it

    return anthropic.Anthropic(api_key=api_key or api_key_from_env() or "missing",
                               http_client=http_client, max_retries=0, timeout=timeout)


def structured_call(client: anthropic.Anthropic, *, output_type: type[T], model: str,
                    system: str | Sequence[dict[str, Any]], user: str, max_tokens: int = 4096,
                    deadline: Deadline | None = None, retries: int = 1,
                    timeout: float = DEFAULT_TIMEOUT_S, temperature: float | None = None,
                    schema: dict[str, Any] | None = None) -> CallResult[T]:
    """Ask ``model`` for JSON matching ``output_type`` and return it validated.

    ``system`` is a string or Anthropic text blocks (put ``cache_control`` on the stable ones).
    Each attempt is bounded by ``timeout`` and by what is left of ``deadline``. Transient API
    errors (connection, timeout, 408/409/429/5xx/529) and invalid replies are retried at most
    ``retries`` times; other API errors (bad key, bad request) fail at once. Raises
    :class:`LLMError` with every attempt made. ``temperature`` travels in ``extra_body`` (the
    SDK no longer lists it); a model that rejects it answers 400, which is not retried.
    """
    import anthropic  # late: anthropic costs 1 s; only a model call needs it

    output_schema = schema if schema is not None else anthropic.transform_schema(output_type)
    prices = load_prices()
    ttl = _cache_ttl(system)
    attempts: list[Attempt] = []
    last_error = "no attempt made"
    extra_body = {"temperature": temperature} if temperature is not None else None
    for attempt in range(retries + 1):
        allowed = timeout if deadline is None else min(timeout, deadline.remaining())
        if allowed < MIN_ATTEMPT_S:
            raise LLMError("time limit reached" + ("" if not attempt else f": {last_error}"),
                           attempts)
        if attempt:
            pause = min(RETRY_PAUSE_S, allowed / 4)
            time.sleep(pause)
            allowed -= pause
        params: dict[str, Any] = {
            "model": model, "max_tokens": max_tokens, "system": system,
            "messages": [{"role": "user", "content": user}],
            "output_config": {"format": {"type": "json_schema", "schema": output_schema}},
            "extra_body": extra_body, "timeout": allowed}
        try:
            message = client.messages.create(**params)
        except anthropic.APITimeoutError:
            last_error = f"the API did not answer within {allowed:.0f} s"
            continue
        except anthropic.APIConnectionError as exc:
            last_error = f"cannot reach the API: {exc}"
            continue
        except anthropic.APIStatusError as exc:
            last_error = _status_message(exc)
            if _transient(exc.status_code):
                continue
            raise LLMError(last_error, attempts) from None
        usage = usage_of(message.usage, ttl)
        usd = prices.cost(str(message.model or model), usage, date.today())
        try:
            value = parse_reply(message, output_type)
        except (ValueError, ValidationError) as exc:
            last_error = f"unusable reply: {_first_line(str(exc))}"
            attempts.append(Attempt(str(message.model or model), usage, usd, False, last_error))
            continue
        attempts.append(Attempt(str(message.model or model), usage, usd, True, None))
        return CallResult(value, attempts)
    raise LLMError(last_error, attempts)


def parse_reply(message: Any, output_type: type[T]) -> T:
    """The reply's JSON text validated as ``output_type`` (``ValueError`` when unusable)."""
    stop = getattr(message, "stop_reason", None)
    if stop == "max_tokens":
        raise ValueError("the reply was cut off at max_tokens")
    if stop == "refusal":
        raise ValueError("the model refused")
    text = "".join(getattr(block, "text", "") for block in message.content
                   if getattr(block, "type", None) == "text").strip()
    if not text:
        raise ValueError("the reply holds no text")
    try:
        return output_type.model_validate_json(text)
    except ValidationError:
        start, end = text.find("{"), text.rfind("}")
        if start == -1 or end <= start:
            raise
        return output_type.model_validate_json(text[start:end + 1])


def usage_of(usage: Any, ttl: str = "1h") -> CallUsage:
    """Billed tokens from an SDK ``Usage`` (cache writes split by lifetime when reported)."""
    writes = int(getattr(usage, "cache_creation_input_tokens", 0) or 0)
    split = getattr(usage, "cache_creation", None)
    five = int(getattr(split, "ephemeral_5m_input_tokens", 0) or 0) if split else 0
    hour = int(getattr(split, "ephemeral_1h_input_tokens", 0) or 0) if split else 0
    if five + hour != writes:
        five, hour = (0, writes) if ttl == "1h" else (writes, 0)
    return CallUsage(int(getattr(usage, "input_tokens", 0) or 0),
                     int(getattr(usage, "output_tokens", 0) or 0), five, hour,
                     int(getattr(usage, "cache_read_input_tokens", 0) or 0))


def record(db: Store, attempts: Sequence[Attempt], *, purpose: str, session_id: str | None,
           project_id: str | None) -> float:
    """Write attempts to the cost ledger (per-session totals follow); returns their USD."""
    for item in attempts:
        ledger.record_call(db, model=item.model, purpose=purpose,
                           usage=ledger.Usage(item.usage.input_tokens, item.usage.output_tokens,
                                              item.usage.cache_write_tokens,
                                              item.usage.cache_read_tokens),
                           usd=item.usd, session_id=session_id, project_id=project_id,
                           ok=item.ok, error=item.error)
    return sum(a.usd for a in attempts)


def _cache_ttl(system: str | Sequence[dict[str, Any]]) -> str:
    if isinstance(system, str):
        return "5m"
    for block in system:
        control = block.get("cache_control")
        if isinstance(control, dict) and control.get("ttl") == "1h":
            return "1h"
    return "5m"


def _transient(status: int) -> bool:
    return status in (408, 409, 429) or status >= 500


def _status_message(exc: Any) -> str:
    status = int(getattr(exc, "status_code", 0) or 0)
    detail = ""
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict):
            detail = str(error.get("message") or error.get("type") or "")
    if not detail:
        detail = _first_line(str(exc))
    if status == 401:
        return f"the API key was refused (401): {detail}"
    return f"API error {status}: {detail}"


def _first_line(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line[:300]

