"""The extraction prompt: the output schema (pydantic), the stable system prefix and the messages.

The system prompt has two blocks. The first — instructions, one example per output field, three
worked examples and the JSON schema — never changes, so it carries the prompt-cache breakpoint:
Claude Haiku 4.5 caches only prefixes of at least 4,096 tokens and this one is sized to pass that
with margin: 23,900 characters, which ``estimate_tokens`` counts as 6,832 tokens and which is still
about 6,000 real tokens at the ~4 characters per token of English prose (a test keeps both counts
20% above the minimum). The cache lifetime asked for is one hour: extraction runs after turns,
minutes apart, so a 5-minute entry would mostly be written and never read. The second block —
the project's active records, known preferences and this session's bugfix stubs — varies, and so
does the transcript in the user message; both come after the breakpoint.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import lru_cache
from typing import Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field

from agentctx.core.redact import redact

Confidence = Literal["explicit", "inferred"]
LIST_MAX = 20  # entries kept per list (the prompt asks for at most 20)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="ignore", str_strip_whitespace=True)


class Decision(_Strict):
    """A choice about the project that later work must respect."""

    what: str = Field(description="The decision, self-contained, at most 120 characters.")
    rationale: str = Field(description="Why, in the developer's terms, 1-3 sentences.")
    supersedes: str | None = Field(
        description="Id of a listed active decision or convention this replaces, else null.")
    confidence: Confidence


class Preference(_Strict):
    """How the developer likes work to be done."""

    category: Literal["style", "tooling", "process", "naming"]
    rule: str = Field(description="The preference as an instruction, at most 120 characters.")
    confidence: Confidence
    scope: Literal["project", "global"]


class Convention(_Strict):
    """A rule the codebase follows."""

    scope: Literal["file", "module", "project"]
    convention: str = Field(description="The rule, concrete and checkable, at most 120 characters.")
    applies_to: list[str] = Field(
        description="Paths for file or module scope, relative to the repository root; [] for "
                    "project scope.")
    supersedes: str | None = Field(
        description="Id of a listed active convention or decision this replaces, else null.")
    confidence: Confidence


class ActiveWork(_Strict):
    """The handover: where the work stands."""

    current_task: str
    blockers: list[str]
    next_steps: list[str]
    open_questions: list[str]


class Gotcha(_Strict):
    """A non-obvious trap of this project or its environment."""

    pattern: str = Field(description="The situation or symptom, at most 120 characters.")
    why_it_matters: str = Field(description="What is going on and what to do, 1-3 sentences.")


class BugfixNote(_Strict):
    """Cause and fix of an error captured as a bugfix stub during the session."""

    stub_id: str
    cause: str
    fix: str


class Extraction(_Strict):
    """Everything one extraction call returns."""

    decisions: list[Decision]
    preferences: list[Preference]
    conventions: list[Convention]
    active_work: ActiveWork | None
    gotchas: list[Gotcha]
    bugfixes: list[BugfixNote]
    flush_ok: bool


def empty_extraction() -> Extraction:
    """An extraction with nothing in it."""
    return Extraction(decisions=[], preferences=[], conventions=[], active_work=None, gotchas=[],
                      bugfixes=[], flush_ok=True)


@lru_cache(maxsize=1)
def output_schema() -> dict[str, Any]:
    """The JSON schema sent as ``output_config.format`` (the SDK's strict transform)."""
    from anthropic import transform_schema  # late: anthropic costs 1 s; a dry run never needs it

    return transform_schema(Extraction)


def _schema_for_prompt() -> str:
    """A compact, readable copy of the schema for the instructions (no SDK needed)."""
    return json.dumps(_plain_schema(Extraction.model_json_schema()))


def _plain_schema(node: Any) -> Any:
    if isinstance(node, dict):
        return {key: _plain_schema(value) for key, value in node.items() if key != "title"}
    if isinstance(node, list):
        return [_plain_schema(value) for value in node]
    return node


# ----------------------------------------------------------------------------- the stable prefix

_INSTRUCTIONS = """\
# Role

You are the extraction step of agentctx, a context layer for Claude Code. agentctx keeps a \
structured, inspectable model of what is being built in a software project - decisions, \
conventions, preferences, gotchas and the handover state of the current work - so that the next \
Claude Code session starts with the context that matters instead of rediscovering it.

You receive a rendered transcript (or one part of a long one) of a working session between a \
software developer and Claude Code, an AI coding assistant that reads and edits files and runs \
commands. You return one JSON object that records the durable knowledge the session produced. \
Your output is written to the developer's context store without review and every later session \
sees it, so precision matters more than recall: a wrong or trivial entry costs more than a \
missing one. It is normal for a session to produce nothing but a handover, or nothing at all.

# How to read the transcript

- `[14:02] DEVELOPER: ...` - something the developer typed. This is the primary evidence.
- `[14:02] CLAUDE: ...` - what the assistant wrote. Use it to understand the context, never as \
evidence of a decision on its own.
- `  → Tool(argument) ⇒ result` - a tool call the assistant made, with its key argument and a \
truncated result; `⇒ error: ...` marks a failure. A tool call without a result either succeeded \
quietly (reads, edits, listings) or its result was not worth showing.
- `→ AskUserQuestion: ...` followed by `⇒ ...` shows a question put to the developer and their \
answers: those answers are the developer speaking.
- `→ ExitPlanMode: plan: ...` is a plan the assistant proposed. The developer approved it only if \
the following lines show the work going ahead without objection.
- A tool result saying the user rejected or interrupted the tool use, or `DEVELOPER: [Request \
interrupted by user]`, means the developer stopped that action: it is evidence against it.
- `[14:05] COMMAND: /name args` - a slash command the developer ran.
- `EARLIER SUMMARY: ...` - Claude Code's own summary of a compacted earlier part of the \
conversation, written by the assistant. Treat what it reports the developer said or chose as \
evidence, with a little less weight than the developer's own words.
- `=== 2026-03-14 ===` - a date line; the times after it are on that date (UTC).
- `[... N entries, about T tokens, omitted ...]` - part of a long session was left out to save \
cost. Do not guess what was in it.
- `[REDACTED:kind]` - a secret removed before you saw the text. Never try to reconstruct it.

A transcript may start with a block headed `ALREADY PROCESSED (context only)`: the end of the \
part of this session that was extracted earlier, shown so you understand what the new part \
refers to ("yes, do that", "go with the second option"). Extract nothing from it; extract only \
from the text after the line `NEW IN THIS SESSION`.

After these instructions the system prompt lists, each with an id: the project's active \
decisions and conventions, the developer's known preferences, and the bugfix stubs captured \
during this session. Use them as described under `supersedes`, `preferences` and `bugfixes`.

# What to return

Return one JSON object with exactly these fields: `decisions`, `preferences`, `conventions`, \
`active_work`, `gotchas`, `bugfixes`, `flush_ok`. The schema is at the end of these \
instructions. Any list may be empty, and an empty list is the right answer whenever nothing \
fits.

## decisions

A decision is a choice about the project that later work must respect: an architecture, a \
technology, a library, a data format, an interface, a trade-off, or something deliberately not \
done. It is made by the developer, or proposed by the assistant and explicitly accepted by the \
developer ("ok, go with Postgres", choosing an option offered in a question).

- `what`: the decision as a self-contained statement in the present tense that names the \
concrete things involved, so it makes sense to someone who never saw this session. At most 120 \
characters. Good: "Use gRPC instead of REST for the internal service API". Bad: "Switch to the \
other approach", "Go with what we discussed".
- `rationale`: why, in the developer's terms, in one to three sentences; mention the rejected \
alternative when there was one. If no reason was given, say what the decision replaces or what \
it is for - never invent a reason.
- `supersedes`: the id of an active decision or convention (from the list after these \
instructions) that this decision replaces or contradicts, else null. Use only an id from that \
list, and only when the old entry is no longer true - never for a decision that merely refines \
or adds to it.
- `confidence`: "explicit" when the developer stated or accepted it in words; "inferred" when it \
follows from the developer's choices without being stated (for example, they rejected every \
ORM-based suggestion and had the assistant write plain SQL three times).

Example - the developer wrote "We decided to use gRPC instead of REST for the internal API, the \
payloads are large and we want streaming":
{"what": "Use gRPC instead of REST for the internal service API", "rationale": "Payloads are \
large and the services need streaming; REST was the previous approach.", "supersedes": null, \
"confidence": "explicit"}

## preferences

A preference is how the developer likes work to be done: code style, tooling, process, naming. It \
is about the developer's taste or way of working, not about what the project is.

- `category`: "style" (formatting, language features, comment density, error-handling style), \
"tooling" (test runner, package manager, formatter, deploy tooling), "process" (tests first, \
small commits, plan before coding, ask before large refactors, how autonomous the assistant \
should be), or "naming" (identifiers, files, branches, commit messages).
- `rule`: the preference as an instruction to a future assistant, at most 120 characters: \
"Prefer pytest fixtures over unittest setUp methods".
- `scope`: "global" when it is about the developer's way of working in any project (they said \
"always", "I prefer", "in general", or it is plainly personal taste: language style, commit \
style, how they like to be asked); "project" when it only makes sense in this codebase ("in this \
repo keep the handlers thin", a project-specific command). When in doubt, use "project".
- `confidence`: "explicit" when the developer said it ("I always want...", "don't use X", \
"please stop doing Y"); "inferred" when it shows only in a consistent pattern of their choices or \
corrections (they rewrote three `function` declarations as arrow functions).

Known preferences are listed after these instructions. When this session shows one of them \
again, extract it again with exactly the listed wording: recurrence across sessions is how \
agentctx gains confidence in an inferred preference. Do not extract a known preference that this \
session does not show.

Example - the developer wrote "please don't add docstrings to private helpers, I find them \
noisy":
{"category": "style", "rule": "Do not add docstrings to private helper functions", \
"confidence": "explicit", "scope": "global"}

## conventions

A convention is a rule this codebase follows that a newcomer (or a new session) must know to \
write code that fits: where things go, how modules talk to each other, how errors, logging, \
tests, migrations or configuration are done here.

- `convention`: the rule, concrete and checkable, at most 120 characters: "All database access \
goes through the repository classes in app/db/repos".
- `scope`: "file" when it applies to specific files, "module" when it applies to a folder or \
package, "project" when it applies everywhere.
- `applies_to`: for "file" and "module" scope, the paths it applies to, relative to the \
repository root, as they appear in the transcript (["src/api/handlers"], ["migrations/env.py"]); \
an empty list for "project" scope.
- `supersedes`: as for decisions - the id of a listed active convention or decision this one \
replaces, else null.
- `confidence`: "explicit" when the developer stated the rule or asked for it to be followed; \
"inferred" when the developer enforced it by correcting the assistant, or it is evident from how \
the developer directed the work. Something the assistant merely happened to do is not a \
convention.

Example - the developer said "tests for the API go next to the handler, as test_<handler>.py, not \
in tests/":
{"scope": "module", "convention": "API tests live next to their handler as test_<handler>.py, \
not under tests/", "applies_to": ["src/api"], "supersedes": null, "confidence": "explicit"}

## active_work

The handover: where the work stands at the end of this transcript, written so that the next \
session can pick it up in one read. It replaces the previous handover of this working tree.

- `current_task`: what is being worked on, in one sentence naming the feature, issue or files \
("Adding retry with backoff to fetch_user() in src/api/users.py"). When the last task was \
finished and nothing else was started, say what was completed and that it is done.
- `blockers`: what stops progress right now (a failing test and why, a missing credential, a \
question waiting for someone).
- `next_steps`: the concrete next actions, in order, at most five.
- `open_questions`: questions raised in the session that are still unanswered.

Use null for active_work only when the transcript contains no work at all. Keep each list item \
to one line.

Example:
{"current_task": "Adding retry with backoff to fetch_user() in src/api/users.py", "blockers": \
["test_fetch_user_timeout fails: the mock server ignores the timeout"], "next_steps": ["Make the \
mock server honour timeouts", "Add a test for the third retry", "Update docs/api.md"], \
"open_questions": ["Should retries also apply to POST requests?"]}

## gotchas

A gotcha is a non-obvious fact about this project or its environment that cost time in this \
session and will bite again: a trap in a library, a misleading error message, a required order \
of steps, a flaky test and its cause, an environment quirk.

- `pattern`: the situation or symptom to recognise, at most 120 characters: "mix test fails \
with :econnrefused when the Postgres container is not running".
- `why_it_matters`: what is really going on and what to do about it, in one to three sentences.

Example - after twenty minutes of debugging, a hanging test turned out to be a missing await on \
a fixture:
{"pattern": "Integration tests hang when the async db fixture is used without await", \
"why_it_matters": "The fixture returns a coroutine; without await the pool is never opened and \
the first query blocks forever. Always await db() in async tests."}

## bugfixes

While the session runs, agentctx records a bugfix stub (a title only) when a command fails with \
an error. This session's stubs are listed after these instructions with their ids. For each stub \
whose error the session explains and fixes, return its id with the cause and the fix. Leave out \
stubs the session did not resolve, and never use an id that is not listed.

- `stub_id`: the id exactly as listed.
- `cause`: what caused the error, in one or two sentences.
- `fix`: what fixed it, in one or two sentences, naming the files or commands involved.

Example:
{"stub_id": "01HZX3K9", "cause": "The migration added a NOT NULL column without a default, so \
existing rows violated the constraint.", "fix": "Added a server default in \
migrations/0042_add_status.py and re-ran the migration."}

## flush_ok

true when the transcript holds nothing worth keeping: greetings, a question answered from \
general knowledge, an abandoned attempt, a trivial edit with no lasting consequence. Then every \
list is empty and active_work is null. Otherwise false. A session that only advanced the work, \
without any decision, still has a handover: flush_ok is false and active_work is filled.

# What not to extract

- Extract ONLY from things the developer said or chose, not from Claude's suggestions. A \
proposal counts only once the developer accepts it.
- Do NOT extract commands Claude ran autonomously, files it read, file contents Claude wrote \
unprompted, or routine acknowledgments ("thanks", "ok", "looks good"). The assistant choosing \
`grep` is not a tooling preference of the developer; an "ok" accepts only the specific proposal \
it answers.
- One entry per distinct fact. Do not merge separate decisions into one, and do not split one \
decision into several entries.
- If nothing fits a category, return an empty list - do not invent entries.
- Do not record the task itself as a decision ("Implement the login page" is work, not a \
decision); it belongs in active_work.
- Do not record what any reader of the code sees at once (the project's language, that a file \
exists) or generic advice that is not specific to this developer or project ("write tests", \
"handle errors").
- Do not record temporary states as conventions (a test skipped for now, a debug print): they \
belong in active_work, if anywhere.
- Do not repeat what agentctx already knows: results of agentctx's own tools and existing \
records quoted in the conversation are not new information. An active decision or convention \
that the session merely follows needs no new entry.
- Do not record secrets, credentials, personal data, or anything marked [REDACTED:...].
- When the developer changes their mind within the session, record only the final position.
- Do record decisions that are implicit but clear from the developer's choices, with confidence \
"inferred": ask yourself what the developer would be annoyed to explain again next week.

# Style

- Write entries in the language the developer writes in. Keep code identifiers, paths and \
commands exactly as they appear.
- Short texts (`what`, `rule`, `convention`, `pattern`) stand alone: no "this", "the above", \
"as discussed", "the user".
- Name concrete technologies, files, functions and commands.
- Never more than 20 entries in one list; keep the most important.
"""

_EXAMPLE_ONE_TRANSCRIPT = """\
=== 2026-03-14 ===
[09:12] DEVELOPER: The nightly export job keeps timing out. Can you look at jobs/export.py? Also \
from now on please run the tests with `just test`, not pytest directly - it sets up the env vars.
[09:12] CLAUDE: I'll look at the export job.
  → Read(jobs/export.py)
  → Bash(just test tests/jobs/test_export.py) ⇒ error: FAILED \
tests/jobs/test_export.py::test_export_large - TimeoutError: export exceeded 300s
[09:15] CLAUDE: The job loads every row into memory before writing. I could stream the rows with \
a server-side cursor, or split the export into daily files. Which do you prefer?
[09:16] DEVELOPER: Stream with a server-side cursor. Daily files would break the downstream \
importer, it expects one file.
[09:16] CLAUDE: Streaming it is.
  → Edit(jobs/export.py)
  → Bash(just test tests/jobs/test_export.py) ⇒ error: psycopg.errors.InvalidCursorName: cursor \
"export_cursor" does not exist
[09:20] CLAUDE: Named cursors only live inside a transaction, and the job runs in autocommit \
mode. I'll open the cursor inside an explicit transaction.
  → Edit(jobs/export.py)
  → Bash(just test tests/jobs/test_export.py) ⇒ 3 passed in 41.2s
[09:24] DEVELOPER: Great. Keep the job modules free of ORM imports by the way, jobs/ talks to \
psycopg directly. Next I want progress logging in the export, but that can wait until tomorrow."""

_EXAMPLE_ONE_OUTPUT: dict[str, Any] = {
    "decisions": [{
        "what": "Stream the nightly export in jobs/export.py through a psycopg server-side cursor",
        "rationale": "Loading every row into memory made the job time out. Splitting the export "
                     "into daily files was rejected because the downstream importer expects a "
                     "single file.",
        "supersedes": None, "confidence": "explicit"}],
    "preferences": [{
        "category": "tooling",
        "rule": "Run the tests with `just test`, never pytest directly (it sets the env vars)",
        "confidence": "explicit", "scope": "project"}],
    "conventions": [{
        "scope": "module",
        "convention": "Job modules use psycopg directly and never import the ORM",
        "applies_to": ["jobs"], "supersedes": None, "confidence": "explicit"}],
    "active_work": {
        "current_task": "Nightly export job in jobs/export.py: the streaming fix is done and its "
                        "tests pass",
        "blockers": [], "next_steps": ["Add progress logging to the export job"],
        "open_questions": []},
    "gotchas": [{
        "pattern": "psycopg named (server-side) cursors fail with InvalidCursorName in "
                   "autocommit mode",
        "why_it_matters": "Named cursors exist only inside a transaction. The jobs run in "
                          "autocommit, so open the cursor inside an explicit transaction block."}],
    "bugfixes": [{
        "stub_id": "01HZY7Q2",
        "cause": "The server-side cursor was opened while the connection was in autocommit mode, "
                 "where named cursors do not exist.",
        "fix": "Opened the cursor inside an explicit transaction in jobs/export.py."}],
    "flush_ok": False,
}

_EXAMPLE_ONE_NOTES = """\
Why: the developer chose between two options the assistant offered, so the streaming approach is \
an explicit decision and the rejected alternative goes into its rationale. "Look at the export \
job" is the task, not a decision. `just test` is specific to this repository, so that preference \
has project scope. The ORM rule was stated for one folder, so it is a module-scope convention \
with applies_to ["jobs"]. The cursor trap cost a failed run and will bite again: a gotcha. Only \
the listed stub is enriched - the first failure (the timeout) had no stub. The progress logging \
was postponed, so it is a next step."""

_EXAMPLE_TWO_TRANSCRIPT = """\
[16:40] DEVELOPER: what's the difference between git rebase and git merge again?
[16:40] CLAUDE: Both integrate changes from one branch into another. Merge creates a merge \
commit that joins the histories; rebase replays your commits on top of the other branch...
[16:41] DEVELOPER: ok thanks"""

_EXAMPLE_THREE_LISTS = """\
Active decisions and conventions:
01J5K2M8 - decision - Store uploaded images on local disk under /var/app/uploads
Known preferences: (none)
Bugfix stubs of this session: (none)"""

_EXAMPLE_THREE_TRANSCRIPT = """\
ALREADY PROCESSED (context only)
[10:02] CLAUDE: The upload handler now resizes images before saving them to /var/app/uploads.
NEW IN THIS SESSION
[10:30] DEVELOPER: We move to two app servers next week, so local disk won't work for uploads \
any more. Put them in the S3 bucket instead, with boto3.
[10:31] CLAUDE: I'll switch the storage to S3. Should I keep a local cache of recent uploads?
[10:31] DEVELOPER: no cache
  → Edit(app/uploads/storage.py)
[10:40] CLAUDE: Done. I pass the upload metadata around as a dict for now.
[10:41] DEVELOPER: use a dataclass for the upload metadata, not a dict
  → Edit(app/uploads/storage.py)
[10:52] DEVELOPER: and a dataclass for the S3 response wrapper too, not a dict. Then wire the \
storage into the thumbnail worker."""

_EXAMPLE_THREE_OUTPUT: dict[str, Any] = {
    "decisions": [{
        "what": "Store uploaded images in the S3 bucket through boto3, with no local cache",
        "rationale": "The app moves to two servers, so local disk storage no longer works.",
        "supersedes": "01J5K2M8", "confidence": "explicit"}],
    "preferences": [{
        "category": "style", "rule": "Use dataclasses rather than plain dicts for structured data",
        "confidence": "inferred", "scope": "global"}],
    "conventions": [],
    "active_work": {
        "current_task": "Moving upload storage from local disk to S3 in app/uploads/storage.py",
        "blockers": [],
        "next_steps": ["Wire the S3 storage into the thumbnail worker"],
        "open_questions": []},
    "gotchas": [],
    "bugfixes": [],
    "flush_ok": False,
}

_EXAMPLE_THREE_NOTES = """\
Why: the new storage decision makes the listed local-disk decision untrue, so it supersedes \
01J5K2M8. "No cache" is part of the same decision, not a second one. The dataclass preference was \
never stated as a general rule but the developer corrected the assistant twice the same way, so \
it is inferred; it is language style that would hold in any project, so its scope is global. The \
resizing in the context block was extracted earlier and yields nothing now."""


@lru_cache(maxsize=1)
def system_prefix() -> str:
    """The stable first system block (cached by the API; never varies between calls)."""
    blank = json.dumps(empty_extraction().model_dump())
    return "\n".join([
        _INSTRUCTIONS,
        "# Worked example 1: a session with durable knowledge",
        "",
        "Bugfix stubs of this session:",
        "01HZY7Q2 - just test tests/jobs/test_export.py: psycopg.errors.InvalidCursorName",
        "",
        "Transcript:",
        _EXAMPLE_ONE_TRANSCRIPT,
        "",
        "Output:",
        json.dumps(_EXAMPLE_ONE_OUTPUT, ensure_ascii=False),
        "",
        _EXAMPLE_ONE_NOTES,
        "",
        "# Worked example 2: nothing to keep",
        "",
        "Transcript:",
        _EXAMPLE_TWO_TRANSCRIPT,
        "",
        "Output:",
        blank,
        "",
        "Why: a general-knowledge question and a thank-you change nothing in the project.",
        "",
        "# Worked example 3: a later part of a session, replacing an active decision",
        "",
        _EXAMPLE_THREE_LISTS,
        "",
        "Transcript:",
        _EXAMPLE_THREE_TRANSCRIPT,
        "",
        "Output:",
        json.dumps(_EXAMPLE_THREE_OUTPUT, ensure_ascii=False),
        "",
        _EXAMPLE_THREE_NOTES,
        "",
        "# Output schema",
        "",
        "Return only a JSON object that validates against this schema:",
        _schema_for_prompt(),
    ])


# ----------------------------------------------------------------------------- the variable part


class Listed(NamedTuple):
    """One item of the lists after the prefix: a record (or stub) id, its kind and its text."""

    id: str
    kind: str
    text: str


def project_block(*, project_name: str, worktree: str | None, active: Sequence[Listed],
                  preferences: Sequence[Listed], stubs: Sequence[Listed]) -> str:
    """The second system block: what the store already holds for this project and session."""

    def lines(items: Sequence[Listed]) -> str:
        return "\n".join(f"{rid} - {kind} - {text}" for rid, kind, text in items) or "(none)"

    where = f"{project_name} (working tree {worktree})" if worktree else project_name
    return "\n".join([
        f"# This project: {where}",
        "",
        "Active decisions and conventions:",
        lines(active),
        "",
        "Known preferences:",
        lines(preferences),
        "",
        "Bugfix stubs of this session:",
        lines(stubs),
    ])


def system_blocks(variable: str, *, cache_ttl: str = "1h") -> list[dict[str, Any]]:
    """The ``system`` parameter: the stable prefix with the cache breakpoint, then ``variable``."""
    return [
        {"type": "text", "text": system_prefix(),
         "cache_control": {"type": "ephemeral", "ttl": cache_ttl}},
        {"type": "text", "text": variable},
    ]


def transcript_message(text: str, *, context: str = "", part: int = 1, parts: int = 1) -> str:
    """The user message of an extraction call over one slice of a transcript."""
    if parts > 1:
        head = (f"This is part {part} of {parts} of one long session, oldest first. Extract from "
                "this part only; a later step merges the parts. Describe active_work as it "
                "stands at the end of this part.")
    else:
        head = "Extract from this session transcript."
    sections = [head, ""]
    if context:
        sections += ["ALREADY PROCESSED (context only)", context]
    sections += ["NEW IN THIS SESSION", text]
    return "\n".join(sections)


def synthesis_message(partials: Sequence[Extraction]) -> str:
    """The user message of the call that merges the partial results of a long session."""
    # What the model answered goes back to it redacted, like everything else agentctx sends.
    results = "\n".join(f"Part {index}: {redact(item.model_dump_json())}"
                        for index, item in enumerate(partials, start=1))
    return "\n".join([
        f"Below are the extraction results of the {len(partials)} consecutive parts of one long "
        "session, oldest first. Merge them into one result with the same schema:",
        "- keep each distinct fact once: merge duplicates across parts, keeping the clearest "
        "wording and the stronger confidence (explicit wins over inferred);",
        "- when a later part reverses an earlier decision, keep only the later one;",
        "- take active_work from the latest part that has one, and drop blockers and questions "
        "that a later part resolved;",
        "- keep the bugfix notes, one per stub id (the latest when a stub appears twice);",
        "- flush_ok is true only when every part was empty.",
        "Add nothing that is not in the parts.",
        "",
        results,
    ])
