"""The one secret redactor: applied before anything is stored, logged or sent to a model.

Covers cloud and API keys and tokens, JWTs, private key blocks, passwords in URLs and on command
lines (``curl -u``, ``mysql -p``), connection strings and ``.env``-style assignments of
secret-looking names, and a bare 40-character AWS secret access key. Each match becomes
``[REDACTED:<kind>]`` so a reader can tell something was removed and what it was; a value that
only refers to a secret (``process.env.API_KEY``, ``$TOKEN``) is left alone. Standard library only
(hook hot path); a pattern compiles on first use, and only when a literal it needs occurs in the
text (or, for the bare AWS key, when the text is long enough to hold one).

Redact before cutting: a secret cut in half no longer matches its pattern.
"""

from __future__ import annotations

import re

# A token may follow an underscore (tests/AKIA…_test.py), so tokens start after any character that
# is not a letter or digit rather than at a word boundary.
_PATTERNS: tuple[tuple[str, str], ...] = (
    ("private-key",
     r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY"
     r"(?: BLOCK)?-----|\Z)"),
    ("jwt", r"(?<![A-Za-z0-9])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    ("anthropic-key", r"(?<![A-Za-z0-9])sk-ant-[A-Za-z0-9_-]{16,}"),
    ("openai-key", r"(?<![A-Za-z0-9])sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"),
    ("aws-access-key",
     r"(?<![A-Za-z0-9])(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA)[0-9A-Z]{16}(?![A-Za-z0-9])"),
    ("github-token",
     r"(?<![A-Za-z0-9])(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})"),
    ("gitlab-token", r"(?<![A-Za-z0-9])glpat-[A-Za-z0-9_-]{20,}"),
    ("slack-token", r"(?<![A-Za-z0-9])xox[abposr]-[A-Za-z0-9-]{10,}"),
    ("google-api-key", r"(?<![A-Za-z0-9])AIza[0-9A-Za-z_-]{35}"),
    ("stripe-key", r"(?<![A-Za-z0-9])(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,}"),
    ("npm-token", r"(?<![A-Za-z0-9])npm_[A-Za-z0-9]{36}"),
    ("huggingface-token", r"(?<![A-Za-z0-9])hf_[A-Za-z0-9]{30,}"),
    ("bearer-token", r"(?i)(?<=\bbearer )[A-Za-z0-9._~+/=-]{16,}"),
    # A SendGrid key, also when cut short (a file name keeps its first 40 characters).
    ("sendgrid-key", r"(?<![A-Za-z0-9])SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]*"
                     r"|(?<![A-Za-z0-9])SG\.[A-Za-z0-9_-]{20,}"),
    # Azure storage and service bus connection strings: keep the name, drop the key.
    ("azure-key", r"(?i)(?P<keep>\b(?:AccountKey|SharedAccessKey)\s*=\s*)(?!\[REDACTED)"
                  r"[A-Za-z0-9+/=]{16,}"),
    # scheme://user:password@host (the user may be empty) -> keep user and host.
    ("url-password", r"(?<=://)(?P<keep>[^\s:/@]*:)(?!\[REDACTED)[^\s@/]+(?=@)"),
    # Passwords on a command line: curl -u user:pw, mysql -ppw, sshpass -p pw.
    ("cli-password",
     r"(?P<keep>\bcurl\b[^\n|;&]*?\s(?:-[A-Za-z]*u|--user)(?:\s+|=)[\"']?[^\s:\"']*:)"
     r"(?!\[REDACTED)[^\s\"']+"
     r"|(?P<keep2>\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlshow|mysqlcheck|mariadb|"
     r"mariadb-dump)\b[^\n|;&]*?\s-p)(?!\[REDACTED)[^\s\"']+"
     r"|(?P<keep3>\bsshpass\s+(?:-[A-Za-z]\s+)*?-p\s*[\"']?)(?!\[REDACTED)[^\s\"']+"),
    # NAME=value / NAME: value / "name": "value" where NAME looks like a secret holder; a value
    # that only refers to one (process.env.X, os.environ[...], $X, ${{ secrets.X }}) is kept.
    ("secret-assignment",
     r"(?i)(?P<keep>\b[A-Z0-9_.-]*(?:secret|token|passwd|password|passphrase|api[_-]?key|"
     r"access[_-]?key|private[_-]?key(?:[_-]?id)?|credentials?)[\"']?\s*[:=]\s*[\"']?)"
     r"(?!\[REDACTED)(?![0-9]+\b)"
     r"(?!(?:process|import\.meta|os|system|deno|env|secrets|vars|settings|config|self|this|"
     r"props)(?:\.|\[)|getenv\(|\$\{?\{?\s*[A-Z_])"
     r"(?P<value>[^\s\"',;]{6,})"),
    # A bare AWS secret access key: exactly 40 base64 characters with upper and lower case and
    # a digit (a 40-hex git commit id has no upper case and stays).
    ("aws-secret-key",
     r"(?<![A-Za-z0-9/+=])(?=[A-Za-z0-9/+]{0,39}[A-Z])(?=[A-Za-z0-9/+]{0,39}[a-z])"
     r"(?=[A-Za-z0-9/+]{0,39}[0-9])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])"),
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
    "sendgrid-key": ("sg.",),
    "azure-key": ("accountkey", "sharedaccesskey"),
    "url-password": ("://",),
    "cli-password": ("curl", "mysql", "mariadb", "sshpass"),
    "secret-assignment": ("secret", "token", "passwd", "password", "passphrase", "api_key",
                          "api-key", "apikey", "access_key", "access-key", "accesskey",
                          "private_key", "private-key", "privatekey", "credential"),
    "aws-secret-key": ("",),  # no literal: see _MIN_WORD
}
# For the patterns with no literal to look for: the shortest whitespace-free word they can match
# (a prompt without so long a word, most of them, skips the pattern and never compiles it).
_MIN_WORD = {"aws-secret-key": 40}
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


def kept(match: re.Match[str]) -> str:
    """The part of a match that stays before its marker (a ``keep…`` group: the name, the user)."""
    for name, value in match.groupdict().items():
        if value is not None and name.startswith("keep"):
            return value
    return ""


def redact(text: str) -> str:
    """Return ``text`` with every recognised secret replaced by ``[REDACTED:<kind>]``."""
    if not text:
        return text
    lowered = _folded(text)
    for kind, source in _PATTERNS:
        if not any(hint in lowered for hint in _HINTS[kind]):
            continue
        if kind in _MIN_WORD and not any(len(word) >= _MIN_WORD[kind] for word in text.split()):
            continue
        marker = f"[REDACTED:{kind}]"

        def _replace(match: re.Match[str], marker: str = marker) -> str:
            return kept(match) + marker

        replaced = _pattern(kind, source).sub(_replace, text)
        if replaced != text:
            text = replaced
            lowered = _folded(text)
    return text


# A bare AWS secret key as one component of a path (``cfg/<key>``): a slash may precede it.
_PATH_AWS = ("(?:(?<=/)|(?<![A-Za-z0-9/+=]))(?=[A-Za-z0-9/+]{0,39}[A-Z])"
             "(?=[A-Za-z0-9/+]{0,39}[a-z])(?=[A-Za-z0-9/+]{0,39}[0-9])[A-Za-z0-9/+]{40}"
             "(?![A-Za-z0-9+=])")


def redact_path(path: str) -> str:
    """:func:`redact` for a file name, whole (before any normalisation or cut): a bare AWS
    secret key right after a ``/`` counts too."""
    text = redact(path)
    if len(path) >= 40:
        text = _pattern("aws-secret-key-path", _PATH_AWS).sub("[REDACTED:aws-secret-key]", text)
    return text


# A learned value shorter than this is too common a word to chase through a whole event.
LEARN_MIN_CHARS = 6


def secrets_in(text: str) -> list[tuple[str, str]]:
    """``(kind, value)`` of every secret :func:`redact` would remove from ``text``."""
    found: list[tuple[str, str]] = []
    if not text:
        return found
    lowered = _folded(text)
    for kind, source in _PATTERNS:
        if not any(hint in lowered for hint in _HINTS[kind]):
            continue
        if kind in _MIN_WORD and not any(len(word) >= _MIN_WORD[kind] for word in text.split()):
            continue
        for match in _pattern(kind, source).finditer(text):
            value = match.group(0)[len(kept(match)):]
            if value:
                found.append((kind, value))
    return found


class Redactor:
    """The redactor of one event: it learns every secret value found in any of the event's texts
    (a password in a command, a key in a file name) and removes that value everywhere in the
    event — also where a tool's output repeats it bare ("auth failed for <password>"), which no
    pattern could recognise on its own.
    """

    def __init__(self, *texts: str) -> None:
        self.known: dict[str, str] = {}
        for text in texts:
            self.learn(text)

    def learn(self, text: str) -> None:
        """Remember the secret values in ``text`` (those of at least :data:`LEARN_MIN_CHARS`)."""
        for kind, value in secrets_in(text):
            for candidate in (value, value.strip("\"'")):
                if len(candidate) >= LEARN_MIN_CHARS and "[REDACTED:" not in candidate:
                    self.known.setdefault(candidate, kind)

    def __call__(self, text: str) -> str:
        """``text`` redacted, and every learned value in it replaced by its marker."""
        text = redact(text)
        for value in sorted(self.known, key=len, reverse=True):
            if value in text:
                text = text.replace(value, f"[REDACTED:{self.known[value]}]")
        return text

    def path(self, path: str) -> str:
        """A file name redacted whole (:func:`redact_path`), learned values included."""
        return self(redact_path(path))


def marker_chars(text: str) -> int:
    """How many characters of ``text`` are ``[REDACTED:<kind>]`` markers.

    A length limit counts the text without them: a text within its limit as sent stays within
    it once redacted (a marker is often longer than the secret it replaces), and checking a
    stored text again gives the same answer.
    """
    if "[REDACTED:" not in text:
        return 0
    return sum(len(marker) for marker in re.findall(r"\[REDACTED:[a-z0-9-]+\]", text))


def contains_secret(text: str) -> bool:
    """Whether :func:`redact` would change ``text``."""
    return redact(text) != text
