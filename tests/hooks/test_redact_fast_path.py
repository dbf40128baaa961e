"""The redactor's fast path (hooks call it on every prompt) changes nothing it redacts.

``redact`` skips, and does not compile, a pattern when none of its literal hints occurs in the
text. These tests compare it with applying every pattern unconditionally, over text made of
secret-looking fragments, hints, look-alike Unicode and noise.
"""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from agentctx.core.redact import _HINTS, _PATTERNS, kept, redact


def _reference(text: str) -> str:
    if not text:
        return text
    for kind, source in _PATTERNS:
        marker = f"[REDACTED:{kind}]"

        def replace(m: re.Match[str], marker: str = marker) -> str:
            return kept(m) + marker

        text = re.compile(source, re.DOTALL).sub(replace, text)
    return text


FRAGMENTS = st.sampled_from([
    "sk-ant-api03-" + "A" * 30, "sk-proj-" + "b" * 30, "AKIAABCDEFGHIJKLMNOP", "ghp_" + "c" * 36,
    "github_pat_" + "d" * 30, "glpat-" + "e" * 24, "xoxb-1234567890-abc", "AIza" + "f" * 35,
    "sk_live_" + "g" * 24, "npm_" + "h" * 36, "hf_" + "i" * 34, "Bearer " + "j" * 20,
    "BEARER " + "k" * 20, "https://user:pa55word@example.com/x",
    "eyJhbGciOiJI.eyJzdWIiOiIx.sig12345",
    "-----BEGIN RSA PRIVATE KEY-----\nabc\n-----END RSA PRIVATE KEY-----", "API_KEY=abcdef123",
    "password: hunter2222", "credentıal=abcdef12", "paſſword=hunter22", "private-Key = 'zzzzzzzz'",
    '"client_secret": "s3cr3tvalue"', "TOKEN=12345678", "access_token=abcdef99",
    "GITHUB_TOKEN: zzzzzzzz", "db_passwd=qwerty12", "my_passphrase = 'longenough'",
    "ApiKey: abcdefgh", "aws_access_key=AAAAAAAAAA", "CREDENTIALS=abcdefgh",
    "redis://:pw123456@h", "AccountKey=Eby8vdM02xNOcqFlqUwJ==",
    "SG.abcdefghijklmnop.qrstuvwxyz012345",
    "curl -u me:pw12345 x", "mysql -pS3cret db", "sshpass -p pw123 ssh",
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "e83c5163316f89bfbde7d9ab23ca2e25604af290",
    "api_key: process.env.API_KEY", "private_key_id: 3f4e1a9b8c", "$TOKEN",
    "token", "secret", "://", "sk-", "eyJ",
    "[REDACTED:x]", "\u0130", "\u212a", " ", "\n", "=", ":", '"', "'",
])
TEXT = st.lists(st.one_of(FRAGMENTS, st.text(max_size=12)), max_size=12).map("".join)


@settings(max_examples=400, deadline=None)
@given(text=TEXT)
def test_fast_path_equals_applying_every_pattern(text: str) -> None:
    assert redact(text) == _reference(text)


def test_every_pattern_has_hints() -> None:
    assert {kind for kind, _ in _PATTERNS} == set(_HINTS)
    for hints in _HINTS.values():
        assert hints and all(h == h.lower() for h in hints)
