"""Errors the store raises. Each carries a one-line message fit to show a user or a model."""

from __future__ import annotations


class StoreError(Exception):
    """Base class: something the store refused or could not do."""


class StoreTooNew(StoreError):
    """The store was written by a newer agentctx than this one."""


class StoreLocked(StoreError):
    """The store stayed locked past the busy timeout."""


class NotFound(StoreError):
    """No record (or other object) has that id."""


class AmbiguousId(StoreError):
    """An id prefix matches more than one record (or project, or session): the message lists
    the candidates."""

    def __init__(self, prefix: str, candidates: list[str], what: str = "records") -> None:
        shown = ", ".join(candidates[:5]) + (" …" if len(candidates) > 5 else "")
        super().__init__(f"id prefix {prefix!r} matches {len(candidates)} {what} ({shown}); "
                         "type more characters")
        self.candidates = candidates


class InvalidRecord(StoreError):
    """A record draft or change that breaks a rule (type, size, scope, …)."""


class AlreadySuperseded(StoreError):
    """Superseding a record that is no longer current."""
