"""What every service's `convert.py` shares: proto enums as the domain's names, a batch
item's error."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Generic, TypeVar, cast

from google.protobuf.internal.enum_type_wrapper import EnumTypeWrapper
from knowhub_contracts import EnumNames
from knowhub_contracts.v1 import common_pb2

from knowhub_server.common.base.errors import InvalidArgument, ServiceError

# A generated enum: a subclass of int in the stubs, its values typed as such.
E = TypeVar("E", bound=int)


class ProtoEnum(Generic[E]):
    """A proto enum's values as the domain's lowercase names, by the rule the SDK names
    them by (`EnumNames`, buf's ENUM_VALUE_PREFIX): `DREAM_RUN_STATUS_QUEUED` is "queued".

    The UNSPECIFIED value reads as `unspecified`: the domain's default for the field
    ("" when the field has none), and a domain name maps back to its own value only.
    """

    def __init__(self, enum_type: type[E], *, unspecified: str = "") -> None:
        enum = cast(EnumTypeWrapper, enum_type)  # what it is at runtime
        named = EnumNames(enum.DESCRIPTOR, unspecified)
        self._names = {v.number: named.name(v.number) for v in enum.DESCRIPTOR.values}
        self._values = {name: cast(E, number) for number, name in self._names.items() if number}
        self.full_name = enum.DESCRIPTOR.full_name

    @property
    def names(self) -> tuple[str, ...]:
        """The domain's names of the specified values, in the enum's order."""
        return tuple(self._values)

    def name(self, value: int, field: str) -> str:
        """The domain's name of `value`; INVALID_ARGUMENT naming `field` when the enum has
        no such value."""
        if value not in self._names:
            raise InvalidArgument(field, f"{value} is not a {self.full_name} value")
        return self._names[value]

    def names_of(self, values: Iterable[int], field: str) -> list[str]:
        return [self.name(v, f"{field}[{i}]") for i, v in enumerate(values)]

    def value(self, name: str) -> E:
        """The enum value of a domain name; 0 for "" (a name the enum lacks is a bug)."""
        return self._values[name] if name else cast(E, 0)

    def values_of(self, names: Iterable[str]) -> list[E]:
        return [self.value(n) for n in names]


def item_error(error: ServiceError) -> common_pb2.ItemError:
    """The error in a batch's place of an item that failed on its own."""
    return common_pb2.ItemError(code=error.code.name, message=error.message)
