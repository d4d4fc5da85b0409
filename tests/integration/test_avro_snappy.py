"""Avro data files with snappy compression (fastavro's snappy codec needs cramjam, which the
package declares)."""

from __future__ import annotations

import pyarrow as pa
import pytest
from table_helpers import read_all, sort_rows, write_commit

from paimon_pyspark import FileSystemCatalog, Schema


@pytest.mark.parametrize("pk", [False, True], ids=["append", "pk"])
def test_avro_snappy_table_writes_and_reads(catalog: FileSystemCatalog, pk: bool) -> None:
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])
    options = {"file.format": "avro", "file.compression": "snappy"}
    if pk:
        options["bucket"] = "1"
    catalog.create_table(
        "db.t",
        Schema.from_pyarrow_schema(schema, primary_keys=["id"] if pk else None, options=options),
    )
    table = catalog.get_table("db.t")
    rows = pa.table({"id": [1, 2, 3], "v": ["a", None, "c" * 1000]}, schema=schema)
    write_commit(table, rows)
    files = [f for s in table.new_read_builder().new_scan().plan().splits() for f in s.files]
    assert files and all(f.file_name.endswith(".avro") for f in files)
    with open(f"{table.path}/bucket-0/{files[0].file_name}", "rb") as f:
        head = f.read(4096)
    assert head[:4] == b"Obj\x01" and b"snappy" in head
    assert sort_rows(read_all(catalog.get_table("db.t"))) == sort_rows(rows)
