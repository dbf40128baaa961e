"""The agentctx store — the only package that speaks SQL.

Import the modules you need (``records``, ``search``, ``sessions``, ``projects``, ``graph``,
``digests``, ``ledger``, ``stats``) and pass them an open :class:`Store`::

    from agentctx.store import Store, records
    from agentctx.store.models import Draft

    with Store.open() as db:
        record = records.add(db, Draft(type="decision", title="Use gRPC"), project_id=pid)

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
