"""The one secret redactor: applied before anything is stored, logged or sent to a model.

Covers cloud and API keys and tokens, JWTs, private key blocks, passwords in URLs and ``.env``-style
assignments of secret-looking names. Each match becomes ``[REDACTED:<kind>]`` so a reader can tell
something was removed and what it was. Standard library only (hook hot path); a pattern compiles on
first use, and only when a literal it needs occurs in the text.
"""

from __future__ import annotations

import re

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


# Lower-case text at least one of which must occur for a pattern to match at all: a pattern
# whose hints are all absent is skipped, and compiled only when first needed (compiling every
# pattern costs a hook about 1.5 ms; most text holds no secret-like substring).
_HINTS: dict[str, tuple[str, ...]] = {
    "private-key": ("-----begin",),
    "jwt": ("eyj",),
    "anthropic-key": ("sk-ant-",),
    "openai-key": ("sk-",),
    "aws-access-key": ("akia", "asia", "agpa", "aida", "aroa", "anpa"),
    "github-token": ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    "gitlab-token": ("glpat-",),
    "slack-token": ("xox",),
    "google-api-key": ("aiza",),
    "stripe-key": ("_live_", "_test_"),
    "npm-token": ("npm_",),
    "huggingface-token": ("hf_",),
    "bearer-token": ("bearer ",),
    "url-password": ("://",),
    "secret-assignment": ("secret", "token", "passwd", "password", "passphrase", "api_key",
                          "api-key", "apikey", "access_key", "access-key", "accesskey",
                          "private_key", "private-key", "privatekey", "credential"),
}
_COMPILED: dict[str, re.Pattern[str]] = {}
# The non-ASCII characters case-insensitive patterns match as ASCII letters (İ ı ſ K).
_FOLD = str.maketrans({"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"})


def _folded(text: str) -> str:
    return text.lower().translate(_FOLD) if not text.isascii() else text.lower()


def _pattern(kind: str, source: str) -> re.Pattern[str]:
    compiled = _COMPILED.get(kind)
    if compiled is None:
        compiled = _COMPILED[kind] = re.compile(source, re.DOTALL)
    return compiled


def redact(text: str) -> str:
    """Return ``text`` with every recognised secret replaced by ``[REDACTED:<kind>]``."""
    if not text:
        return text
    lowered = _folded(text)
    for kind, source in _PATTERNS:
        if not any(hint in lowered for hint in _HINTS[kind]):
            continue
        marker = f"[REDACTED:{kind}]"

        def _replace(match: re.Match[str], marker: str = marker) -> str:
            groups = match.groupdict()
            return (groups.get("keep") or "") + marker

        replaced = _pattern(kind, source).sub(_replace, text)
        if replaced != text:
            text = replaced
            lowered = _folded(text)
    return text


def contains_secret(text: str) -> bool:
    """Whether :func:`redact` would change ``text``."""
    return redact(text) != text
