"""Value classes without the dataclasses module, for the command line's start-up time.

`import dataclasses` (which imports inspect, ast, dis and tokenize) and generating the methods
of the engine's two dozen classes cost a CLI run about 50 ms, a third of it
(bench/analysis/whole_process.py). The classes declare `__slots__` and an `__init__`; this
base gives them what a dataclass would: repr, equality and hash from the slots, and `replace`.
Treat instances as immutable unless a class says otherwise.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: importing typing costs a CLI run ~5 ms
if TYPE_CHECKING:
    from typing import Any, TypeVar

    R = TypeVar("R", bound="Record")


class Record:
    """Base of a slotted value class: repr, == and hash over its `__slots__`, in order."""

    __slots__: tuple[str, ...] = ()

    def _values(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"{type(self).__name__}({fields})"

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        assert isinstance(other, Record)
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def as_dict(self) -> dict[str, Any]:
        """The fields by name (shallow)."""
        return {name: getattr(self, name) for name in self.__slots__}


def replace(record: R, **changes: object) -> R:
    """A copy of a record with some fields changed (as dataclasses.replace)."""
    values: dict[str, Any] = record.as_dict()
    unknown = set(changes) - set(values)
    if unknown:
        raise TypeError(f"{type(record).__name__} has no field {', '.join(sorted(unknown))}")
    values.update(changes)
    return type(record)(**values)


def field_names(cls: type[Record]) -> tuple[str, ...]:
    """The fields of a record class, in order (as dataclasses.fields, names only)."""
    return cls.__slots__
