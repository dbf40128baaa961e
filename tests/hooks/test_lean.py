"""``agentctx.core.lean.NamedTuple`` behaves like ``typing.NamedTuple`` (the hooks' start-up
saver)."""

from __future__ import annotations

import copy
import pickle
import subprocess
import sys
import typing
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentctx.core.lean import NamedTuple
from agentctx.store.models import Record


class Lean(NamedTuple):
    """A lean pair."""

    name: str
    size: int = 3
    tags: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        """Name and size."""
        return f"{self.name}:{self.size}"

    def grown(self, by: int) -> Lean:
        """A copy with a bigger size."""
        return self._replace(size=self.size + by)


class Typed(typing.NamedTuple):
    """A lean pair."""

    name: str
    size: int = 3
    tags: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        """Name and size."""
        return f"{self.name}:{self.size}"

    def grown(self, by: int) -> Typed:
        """A copy with a bigger size."""
        return self._replace(size=self.size + by)


CALLS = st.one_of(
    st.tuples(st.just(("a",)), st.just({})),
    st.tuples(st.just(("a", 5)), st.just({})),
    st.tuples(st.just(("a", 5, ("x",))), st.just({})),
    st.tuples(st.just(()), st.just({"name": "b"})),
    st.tuples(st.just(("a",)), st.just({"tags": ("t",)})),
    st.tuples(st.just(("a",)), st.just({"size": 1, "tags": ()})),
    st.tuples(st.just(("a", 1)), st.just({"tags": ("q",)})),
    # errors: missing, too many, unknown, repeated
    st.tuples(st.just(()), st.just({})),
    st.tuples(st.just(("a", 1, (), 4)), st.just({})),
    st.tuples(st.just(("a",)), st.just({"colour": 1})),
    st.tuples(st.just(("a",)), st.just({"name": "b"})),
    st.tuples(st.just(("a", 1)), st.just({"size": 2, "tags": ()})),
)


def _outcome(cls: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    try:
        return tuple(cls(*args, **kwargs))
    except TypeError:
        return TypeError


@given(call=CALLS)
def test_construction_matches_typing(call: tuple[tuple[Any, ...], dict[str, Any]]) -> None:
    args, kwargs = call
    assert _outcome(Lean, args, kwargs) == _outcome(Typed, args, kwargs)


def test_class_attributes_and_methods_match_typing() -> None:
    lean: Lean = Lean("a", 5)
    typed = Typed("a", 5)
    for attribute in ("_fields", "_field_defaults", "__match_args__", "__doc__", "__module__"):
        assert getattr(Lean, attribute) == getattr(Typed, attribute), attribute
    assert Lean.__qualname__ == "Lean" and Lean.__mro__ == (Lean, tuple, object)
    assert list(Lean.__annotations__) == list(Typed.__annotations__)
    assert repr(lean) == repr(typed).replace("Typed", "Lean")
    assert lean._asdict() == typed._asdict()
    assert tuple(lean._replace(tags=("x",))) == tuple(typed._replace(tags=("x",)))
    assert tuple(Lean._make(["b", 1, ()])) == tuple(Typed._make(["b", 1, ()]))
    assert lean.label == typed.label == "a:5" and tuple(lean.grown(2)) == tuple(typed.grown(2))
    assert Lean.size.__doc__ == Typed.size.__doc__ == "Alias for field number 1"
    with pytest.raises(ValueError, match="unexpected field names"):
        lean._replace(colour=1)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="Expected 3 arguments, got 1"):
        Lean._make(["a"])
    with pytest.raises(AttributeError):
        lean.name = "b"  # type: ignore[misc]
    match lean:
        case Lean(name, size):
            assert (name, size) == ("a", 5)
    assert lean == ("a", 5, ()) and hash(lean) == hash(("a", 5, ()))


def test_copies_and_pickles() -> None:
    record = Record(*range(23))
    assert pickle.loads(pickle.dumps(record)) == record
    assert copy.deepcopy(Lean("a")) == Lean("a") and copy.copy(Lean("a")) is not None
    assert pickle.loads(pickle.dumps(Lean("a", 2))) == Lean("a", 2)


def test_class_body_rules_match_typing() -> None:
    with pytest.raises(TypeError, match="Non-default namedtuple field"):
        class Bad(NamedTuple):
            first: int = 1
            second: str  # type: ignore[misc]
    with pytest.raises(AttributeError, match="Cannot overwrite NamedTuple attribute _asdict"):
        class Worse(NamedTuple):
            first: int

            def _asdict(self) -> dict[str, Any]:  # type: ignore[misc]
                return {}


def test_lean_does_not_import_typing() -> None:
    code = "import sys, agentctx.core.lean, agentctx.store.models; print('typing' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, timeout=60)
    assert done.stdout.strip() == "False"
