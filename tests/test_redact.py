"""The one redactor removes secrets of every listed kind and leaves ordinary text alone."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentctx.core.redact import _PATTERNS, contains_secret, redact
from tests.support.secret_corpus import KINDS as CORPUS_KINDS
from tests.support.secret_corpus import NOT_SECRETS, Secret, generated
from tests.support.secret_corpus import SECRETS as SECRET_CORPUS

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


# ------------------------------------------------------------------ the shared secret corpus


@pytest.mark.parametrize("case", SECRET_CORPUS, ids=lambda c: f"{c.kind}:{c.text[:30]}")
def test_every_secret_of_the_corpus_is_redacted(case: Secret) -> None:
    out = redact(case.text)
    assert case.secret not in out, out
    assert f"[REDACTED:{case.kind}]" in out, out
    assert redact(out) == out


def test_the_corpus_covers_every_pattern() -> None:
    assert {kind for kind, _ in _PATTERNS} == CORPUS_KINDS


@pytest.mark.parametrize("text", NOT_SECRETS)
def test_look_alikes_and_references_are_untouched(text: str) -> None:
    assert redact(text) == text


@pytest.mark.parametrize(("text", "kept"), [
    ("redis://:S3cretRedisPw@cache:6379", "redis://:[REDACTED:url-password]@cache:6379"),
    ("curl -u admin:Tr0ub4dor3xyz https://h", "curl -u admin:[REDACTED:cli-password] https://h"),
    ("mysql -u root -pS3cur3Pw0rd app", "mysql -u root -p[REDACTED:cli-password] app"),
    ("sshpass -p 'pw0rd123' ssh h", "sshpass -p '[REDACTED:cli-password]' ssh h"),
    ("AccountName=a;AccountKey=Eby8vdM02xNOcqFlqUwJPLl==;EndpointSuffix=x",
     "AccountName=a;AccountKey=[REDACTED:azure-key];EndpointSuffix=x"),
    ("https://x:ghp_R4nd0mT0k3nV4lu3Xy123456789012345678@github.com",
     "https://x:[REDACTED:github-token]@github.com"),
])
def test_the_name_around_a_secret_is_kept(text: str, kept: str) -> None:
    assert redact(text) == kept


BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


@given(st.text(alphabet="0123456789abcdef", min_size=40, max_size=40))
def test_a_commit_id_is_never_redacted(sha: str) -> None:
    text = f"git checkout {sha} && git log -1 {sha}"
    assert redact(text) == text


@given(st.text(alphabet=BASE64, min_size=40, max_size=40).filter(
    lambda key: any(c.isupper() for c in key) and any(c.islower() for c in key)
    and any(c.isdigit() for c in key)))
def test_a_bare_aws_secret_key_is_redacted(key: str) -> None:
    out = redact(f"secret for the staging bucket: {key}\nthanks")
    assert key not in out and "[REDACTED:aws-secret-key]" in out


def test_every_generated_variant_of_the_corpus_is_redacted() -> None:
    variants = generated(seed=7, per_secret=40)
    missed = [(case.kind, case.text) for case in variants if case.secret in redact(case.text)]
    assert missed == []
    assert len(variants) == 40 * len(SECRET_CORPUS)
