"""Start-up-cheap stand-ins for the parts of :mod:`typing` the hook hot path needs.

Importing :mod:`typing` costs a Claude Code hook 2-3 ms of its start-up budget. The one typing
construct agentctx's runtime modules need at run time is ``NamedTuple``; this module builds the
same class ``typing.NamedTuple`` builds (a ``collections.namedtuple`` carrying the annotations,
defaults, docstring, methods and properties of the class body) without importing typing. Type
checkers see ``typing.NamedTuple`` itself::

    from agentctx.lean import NamedTuple

    class Packed(NamedTuple):
        text: str
        kept: int = 0
"""

from __future__ import annotations

import collections

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NamedTuple as NamedTuple
else:
    # What typing.NamedTuple refuses in a class body, and what it does not copy onto the class.
    _PROHIBITED = frozenset({"__new__", "__init__", "__slots__", "__getnewargs__", "_fields",
                             "_field_defaults", "_make", "_replace", "_asdict", "_source"})
    _SPECIAL = frozenset({"__module__", "__name__", "__annotations__"})

    class _NamedTupleMeta(type):
        def __new__(cls, typename, bases, namespace):
            annotations = dict(namespace.get("__annotations__", {}))
            fields = list(annotations)
            defaults = []
            for name in fields:
                if name in namespace:
                    defaults.append(namespace[name])
                elif defaults:
                    raise TypeError(f"Non-default namedtuple field {name} cannot follow "
                                    f"default field{'s' if len(defaults) > 1 else ''} "
                                    f"{', '.join(fields[:len(defaults)])}")
            made = collections.namedtuple(typename, fields, defaults=defaults,
                                          module=namespace.get("__module__"))
            made.__annotations__ = made.__new__.__annotations__ = annotations
            for key, value in namespace.items():
                if key in _PROHIBITED:
                    raise AttributeError("Cannot overwrite NamedTuple attribute " + key)
                if key not in _SPECIAL and key not in made._fields:
                    setattr(made, key, value)
            return made

    NamedTuple = type.__new__(_NamedTupleMeta, "NamedTuple", (), {})
