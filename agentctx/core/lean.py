"""Start-up-cheap stand-ins for the parts of :mod:`typing` the hook hot path needs.

Importing :mod:`typing` costs a Claude Code hook 2-3 ms of its start-up budget, and each
``typing.NamedTuple`` (like ``collections.namedtuple``) compiles its ``__new__`` from source with
``eval``: about 0.1 ms per class, a dozen classes on every hook call. The one typing construct
agentctx's runtime modules need at run time is ``NamedTuple``; this module builds the same kind of
class — a tuple subclass with the fields, defaults, annotations, docstring, methods and properties
of the class body, and namedtuple's ``_fields``, ``_field_defaults``, ``_make``, ``_replace``,
``_asdict``, ``__repr__``, ``__getnewargs__`` and ``__match_args__`` — without importing typing
and without compiling anything. Type checkers see ``typing.NamedTuple`` itself::

    from agentctx.core.lean import NamedTuple

    class Packed(NamedTuple):
        text: str
        kept: int = 0

The one visible difference: ``__new__`` takes ``(*args, **kwargs)`` and binds them itself (with
the same errors for missing, unexpected or repeated arguments), so ``inspect.signature`` of the
class shows that generic signature.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NamedTuple as NamedTuple
else:
    import sys
    from operator import itemgetter

    try:
        from _collections import _tuplegetter
    except ImportError:  # pragma: no cover - other Python implementations
        def _tuplegetter(index, doc):
            return property(itemgetter(index), doc=doc)

    # What typing.NamedTuple refuses in a class body, and what it does not copy onto the class.
    _PROHIBITED = frozenset({"__new__", "__init__", "__slots__", "__getnewargs__", "_fields",
                             "_field_defaults", "_make", "_replace", "_asdict", "_source"})
    _SPECIAL = frozenset({"__module__", "__name__", "__annotations__"})
    _tuple_new = tuple.__new__

    def _make_new(typename, fields, defaults):
        count = len(fields)
        required = count - len(defaults)
        default_of = dict(zip(fields[required:], defaults, strict=True))
        position = {name: index for index, name in enumerate(fields)}

        def bind(args, kwargs):
            if len(args) > count:
                raise TypeError(f"{typename}.__new__() takes {count + 1} positional arguments "
                                f"but {len(args) + 1} were given")
            values = list(args)
            for name in kwargs:
                index = position.get(name)
                if index is None:
                    raise TypeError(f"{typename}.__new__() got an unexpected keyword argument "
                                    f"{name!r}")
                if index < len(args):
                    raise TypeError(f"{typename}.__new__() got multiple values for argument "
                                    f"{name!r}")
            missing = []
            for name in fields[len(args):]:
                if name in kwargs:
                    values.append(kwargs[name])
                elif name in default_of:
                    values.append(default_of[name])
                else:
                    missing.append(name)
            if missing:
                raise TypeError(f"{typename}.__new__() missing {len(missing)} required "
                                f"argument{'s' if len(missing) > 1 else ''}: "
                                f"{', '.join(map(repr, missing))}")
            return tuple(values)

        def __new__(_cls, *args, **kwargs):
            if not kwargs:
                if len(args) == count:
                    return _tuple_new(_cls, args)
            elif len(args) + len(kwargs) == count:
                # The usual keyword call: the trailing fields by name, nothing missing.
                try:
                    return _tuple_new(_cls, args + tuple([kwargs[name]
                                                          for name in fields[len(args):]]))
                except KeyError:
                    pass
            return _tuple_new(_cls, bind(args, kwargs))

        __new__.__qualname__ = f"{typename}.__new__"
        __new__.__doc__ = f"Create new instance of {typename}({', '.join(fields)})"
        return __new__

    def _namedtuple(typename, fields, defaults, module):
        fields = tuple(sys.intern(name) for name in fields)
        defaults = tuple(defaults)
        count = len(fields)

        @classmethod
        def _make(cls, iterable):
            result = _tuple_new(cls, iterable)
            if len(result) != count:
                raise TypeError(f"Expected {count} arguments, got {len(result)}")
            return result

        def _replace(self, /, **changes):
            result = self._make(map(changes.pop, fields, self))
            if changes:
                raise ValueError(f"Got unexpected field names: {list(changes)!r}")
            return result

        def __repr__(self):
            return (f"{self.__class__.__name__}("
                    + ", ".join(f"{name}={value!r}" for name, value in zip(fields, self,
                                                                           strict=True)) + ")")

        def _asdict(self):
            return dict(zip(self._fields, self, strict=True))

        def __getnewargs__(self):
            return tuple(self)

        for method in (_make.__func__, _replace, __repr__, _asdict, __getnewargs__):
            method.__qualname__ = f"{typename}.{method.__name__}"
        namespace = {
            "__doc__": f"{typename}({', '.join(fields)})", "__slots__": (), "_fields": fields,
            "_field_defaults": dict(zip(fields[count - len(defaults):], defaults,
                                        strict=True)),
            "__new__": _make_new(typename, fields, defaults), "_make": _make,
            "_replace": _replace, "__repr__": __repr__, "_asdict": _asdict,
            "__getnewargs__": __getnewargs__, "__match_args__": fields,
        }
        for index, name in enumerate(fields):
            namespace[name] = _tuplegetter(index, f"Alias for field number {index}")
        result = type(typename, (tuple,), namespace)
        result.__module__ = module
        return result

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
            made = _namedtuple(typename, fields, defaults, namespace.get("__module__"))
            made.__annotations__ = annotations
            for key, value in namespace.items():
                if key in _PROHIBITED:
                    raise AttributeError("Cannot overwrite NamedTuple attribute " + key)
                if key not in _SPECIAL and key not in made._fields:
                    setattr(made, key, value)
            return made

    NamedTuple = type.__new__(_NamedTupleMeta, "NamedTuple", (), {})
