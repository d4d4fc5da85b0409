"""Field ids of a new table's columns, numbered as Java's Schema.Builder and ReassignFieldId do
(paimon-api Schema.java, ReassignFieldId.java: a column takes the next id before its type is
visited; a nested field takes the next id after its own type)."""

from __future__ import annotations

from paimon_pyspark.types.arrow import assign_field_ids
from paimon_pyspark.types.data_types import (
    ArrayType,
    AtomicType,
    DataField,
    DataType,
    MapType,
    RowType,
)


def ids(t: DataType) -> list[tuple[str, int]]:
    out: list[tuple[str, int]] = []

    def visit(t: DataType) -> None:
        if isinstance(t, RowType):
            for f in t.fields:
                out.append((f.name, f.id))
                visit(f.type)
        elif isinstance(t, ArrayType):
            visit(t.element)
        elif isinstance(t, MapType):
            visit(t.key)
            visit(t.value)

    visit(t)
    return out


def row(*fields: tuple[str, DataType]) -> RowType:
    return RowType(tuple(DataField(-1, n, t) for n, t in fields))


def test_a_nested_field_is_numbered_after_its_own_fields() -> None:
    info = row(("name", AtomicType("STRING")), ("addr", row(("city", AtomicType("STRING")))))
    fields, highest = assign_field_ids([("k", AtomicType("INT")), ("info", info)])
    assert [(f.name, f.id) for f in fields] == [("k", 0), ("info", 1)]
    assert ids(fields[1].type) == [("name", 2), ("addr", 4), ("city", 3)]
    assert highest == 4


def test_rows_inside_arrays_and_maps_are_numbered_in_order() -> None:
    inner = row(("x", AtomicType("INT")), ("y", AtomicType("INT")))
    fields, highest = assign_field_ids(
        [("a", ArrayType(inner)), ("m", MapType(AtomicType("STRING"), inner))]
    )
    assert fields[0].id == 0 and ids(fields[0].type) == [("x", 1), ("y", 2)]
    assert fields[1].id == 3 and ids(fields[1].type) == [("x", 4), ("y", 5)]
    assert highest == 5
