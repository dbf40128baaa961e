"""The one redactor removes secrets of every listed kind and leaves ordinary text alone."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentctx.redact import contains_secret, redact

SECRETS = {
    "aws-access-key": "AKIAIOSFODNN7EXAMPLE",
    "anthropic-key": "sk-ant-api03-" + "a" * 40,
    "openai-key": "sk-proj-" + "b" * 40,
    "github-token": "ghp_" + "c" * 36,
    "slack-token": "xoxb-1234567890-abcdefghij",
    "google-api-key": "AIza" + "d" * 35,
    "stripe-key": "sk_live_" + "e" * 24,
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9P",
    "private-key": "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA\n"
                   "-----END OPENSSH PRIVATE KEY-----",
}


@pytest.mark.parametrize(("kind", "secret"), SECRETS.items())
def test_each_kind_is_redacted(kind: str, secret: str) -> None:
    text = f"before {secret} after"
    out = redact(text)
    assert secret not in out
    assert f"[REDACTED:{kind}]" in out
    assert out.startswith("before ") and out.endswith(" after")


@pytest.mark.parametrize(("text", "kept", "gone"), [
    ("postgres://app:hunter2pw@db:5432/app", "postgres://app:", "hunter2pw"),
    ("export DB_PASSWORD=correct-horse", "DB_PASSWORD=", "correct-horse"),
    ('{"api_key": "abcdef123456"}', '"api_key": "', "abcdef123456"),
    ("Authorization: Bearer abcdefghijklmnopqrstuvwx", "Bearer ", "abcdefghijklmnopqrstuvwx"),
    ("GITHUB_TOKEN: 0123456789abcdef", "GITHUB_TOKEN: ", "0123456789abcdef"),
])
def test_assignments_and_urls_keep_the_name(text: str, kept: str, gone: str) -> None:
    out = redact(text)
    assert kept in out and gone not in out


@pytest.mark.parametrize("text", [
    "max_tokens = 200000", "tokenizer=porter", "author: johnsmith",
    "we decided to use gRPC for the internal API", "password reset flow is in auth/reset.py",
    "see https://example.com/a/b", "key: 42",
])
def test_ordinary_text_is_untouched(text: str) -> None:
    assert redact(text) == text
    assert not contains_secret(text)


@given(st.text(max_size=500))
def test_redact_is_idempotent_and_total(text: str) -> None:
    once = redact(text)
    assert redact(once) == once
