"""The laws: hard ceilings that no configuration can raise (a config value may only lower them).

A leaf: it imports nothing, so the configuration, the budget enforcer and the store all read
the same numbers without importing one another.
"""

from __future__ import annotations

# What one SessionStart may inject, in estimated tokens.
SESSION_START_MAX_TOKENS = 1500
# What one prompt may inject: tokens and records (pointers count as records).
PROMPT_MAX_TOKENS = 2000
PROMPT_MAX_RECORDS = 3
# Claude Code cuts a hook's output at 10,000 characters; every injected string stays under this.
INJECTION_MAX_CHARS = 8000
# Claude Code's own cap on a hook output value, counted as JavaScript counts a string's length
# (UTF-16 code units: a character outside the Basic Multilingual Plane, an emoji, counts two);
# a longer value is saved to a file and the model gets a 2 KB preview (observed with 2.1.328:
# 9,994 units inline, 10,034 persisted).
CLAUDE_CODE_OUTPUT_MAX = 10_000
# No record title or body is longer than these.
TITLE_MAX_CHARS = 300
BODY_MAX_CHARS = 8000
