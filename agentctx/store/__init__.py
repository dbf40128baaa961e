"""The agentctx store — the only package that speaks SQL.

Import the modules you need and pass them an open :class:`Store`::

    from agentctx.store import Store, records
    from agentctx.store.models import Draft

    with Store.open() as db:
        record = records.add(db, Draft(type="decision", title="Use gRPC"), project_id=pid)

The read API every surface (CLI, MCP server, TUI, web view) browses with:

* ``records`` — one record (``get``), paged listings with filters, orders and as-of dates
  (``list_records``) and their counts (``count_records``), the audit trail (``edits_of``);
* ``details`` — one record in full as one typed value (``detail``): chain links with their
  rationales, entities and files, edits;
* ``chains`` — a project's supersession chains in one call (``chains``, ``count_chains``,
  ``chain_of``);
* ``search`` and ``hybrid`` — the one search (keyword, and fused with vectors);
* ``projects`` — projects with what each holds and cost (``list_all``, ``count``);
* ``sessions`` — sessions and receipts, paged and counted; ``receipts_since`` and
  ``Store.data_version`` for a live view;
* ``stats`` — the status model (``overview``), session summaries, tokens per day;
* ``profiles`` — the developer's preferences and a project's profile;
* ``upkeep`` — what consolidation left to decide (merge and pruning candidates).

Writes go through ``records`` (add, update, supersede, forget), ``graph`` and ``sessions``.
Importing this package costs only the standard library (it is on the hook hot path); the
migration machinery (sqlite-utils) loads only when a store needs upgrading.
"""

from agentctx.store.db import SCHEMA_VERSION, Store
from agentctx.store.errors import (
    AlreadySuperseded,
    AmbiguousId,
    InvalidRecord,
    NotFound,
    StoreError,
    StoreLocked,
    StoreTooNew,
)
from agentctx.store.models import Draft, Hit, Project, Record

__all__ = [
    "SCHEMA_VERSION", "AlreadySuperseded", "AmbiguousId", "Draft", "Hit", "InvalidRecord",
    "NotFound", "Project", "Record", "Store", "StoreError", "StoreLocked", "StoreTooNew",
]
