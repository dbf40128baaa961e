"""The one secret redactor: applied before anything is stored, logged or sent to a model.

Covers cloud and API keys and tokens, JWTs, private key blocks, passwords in URLs and ``.env``-style
assignments of secret-looking names. Each match becomes ``[REDACTED:<kind>]`` so a reader can tell
something was removed and what it was. Standard library only (hook hot path); patterns compile on
first use.
"""

from __future__ import annotations

import re
from functools import lru_cache

_PATTERNS: tuple[tuple[str, str], ...] = (
    ("private-key",
     r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY"
     r"(?: BLOCK)?-----|\Z)"),
    ("jwt", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    ("anthropic-key", r"\bsk-ant-[A-Za-z0-9_-]{16,}"),
    ("openai-key", r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"),
    ("aws-access-key", r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA)[0-9A-Z]{16}\b"),
    ("github-token", r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})"),
    ("gitlab-token", r"\bglpat-[A-Za-z0-9_-]{20,}"),
    ("slack-token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
    ("google-api-key", r"\bAIza[0-9A-Za-z_-]{35}"),
    ("stripe-key", r"\b(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,}"),
    ("npm-token", r"\bnpm_[A-Za-z0-9]{36}"),
    ("huggingface-token", r"\bhf_[A-Za-z0-9]{30,}"),
    ("bearer-token", r"(?i)(?<=\bbearer )[A-Za-z0-9._~+/=-]{16,}"),
    # scheme://user:password@host -> keep user and host, drop the password.
    ("url-password", r"(?<=://)(?P<keep>[^\s:/@]+:)[^\s@/]+(?=@)"),
    # NAME=value / NAME: value / "name": "value" where NAME looks like a secret holder.
    ("secret-assignment",
     r"(?i)(?P<keep>\b[A-Z0-9_.-]*(?:secret|token|passwd|password|passphrase|api[_-]?key|"
     r"access[_-]?key|private[_-]?key|credentials?)[\"']?\s*[:=]\s*[\"']?)"
     r"(?!\[REDACTED)(?![0-9]+\b)(?P<value>[^\s\"',;]{6,})"),
)


@lru_cache(maxsize=1)
def _compiled() -> tuple[tuple[str, re.Pattern[str]], ...]:
    return tuple((kind, re.compile(pattern, re.DOTALL)) for kind, pattern in _PATTERNS)


def redact(text: str) -> str:
    """Return ``text`` with every recognised secret replaced by ``[REDACTED:<kind>]``."""
    if not text:
        return text
    for kind, pattern in _compiled():
        marker = f"[REDACTED:{kind}]"

        def _replace(match: re.Match[str], marker: str = marker) -> str:
            groups = match.groupdict()
            return (groups.get("keep") or "") + marker

        text = pattern.sub(_replace, text)
    return text


def contains_secret(text: str) -> bool:
    """Whether :func:`redact` would change ``text``."""
    return redact(text) != text
