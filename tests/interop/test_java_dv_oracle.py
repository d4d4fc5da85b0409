"""The Java oracle's deletion-vector tables (``dv_tables``) as Java 1.4.2 writes and reads them.

Java reads each table as the rows computed from what was written; its index shows vectors for
the primary-key tables after upserts and for the append tables after DELETE, every vector inside
its data file, and no level-0 file left behind a primary-key commit (Java compacts with lookup at
every batch commit); the raw index bytes carry the version byte and each format's magic number;
our decoder reads Java's index files to Java's positions and our encoder rebuilds their bytes.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from dv_tables import BUILDERS, JAVA_FIELDS, build_all
from java_oracle import JavaOracle, sorted_rows

from paimon_pyspark.spec.deletion_vector import decode_index_file, encode_index_file
from paimon_pyspark.spec.manifest import DeletionVectorRange

pytestmark = pytest.mark.java

DB = "db"
BITMAP32_MAGIC = 1581511376
BITMAP64_MAGIC = 1681511377
PK_NAMES = [n for n in BUILDERS if n.startswith("pk_")]
BITMAP64_NAMES = [n for n in BUILDERS if n.endswith("_64")]


class Built:
    def __init__(self, warehouse: Path, expected: dict[str, list[list[Any]]]) -> None:
        self.warehouse = warehouse
        self.expected = expected


@pytest.fixture(scope="module")
def built(java_oracle: JavaOracle, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Built]:
    warehouse = tmp_path_factory.mktemp("dv_tables")
    yield Built(warehouse, build_all(java_oracle, warehouse, DB))


def index_bytes(entry: dict[str, Any]) -> bytes:
    return Path(entry["path"]).read_bytes()


@pytest.mark.parametrize("name", list(BUILDERS))
def test_java_reads_the_expected_rows(java_oracle: JavaOracle, built: Built, name: str) -> None:
    rows = sorted_rows(java_oracle.read_table(built.warehouse, DB, name).rows)
    assert rows == built.expected[name]


@pytest.mark.parametrize("name", list(BUILDERS))
def test_index_marks_rows_inside_their_files(
    java_oracle: JavaOracle, built: Built, name: str
) -> None:
    index = java_oracle.dv_index(built.warehouse, DB, name)
    files = {f["file_name"]: f for f in index["files"]}
    assert index["entries"], f"{name}: no deletion vectors"
    marked = 0
    for entry in index["entries"]:
        assert os.path.getsize(entry["path"]) == entry["file_size"]
        assert entry["row_count"] == len(entry["ranges"])
        for r in entry["ranges"]:
            positions = entry["vectors"][r["data_file"]]
            data_file = files[r["data_file"]]
            assert r["cardinality"] == len(positions) > 0
            assert positions == sorted(set(positions))
            assert positions[0] >= 0 and positions[-1] < data_file["row_count"]
            assert data_file["bucket"] == entry["bucket"]
            assert data_file["partition"] == entry["partition"]
            marked += len(positions)
    # every live row is one unmarked row of one file: deletes and superseded rows are all marked
    total = sum(f["row_count"] for f in index["files"])
    assert total - marked == len(built.expected[name])


@pytest.mark.parametrize("name", PK_NAMES)
def test_primary_key_commits_leave_no_level_0_file(
    java_oracle: JavaOracle, built: Built, name: str
) -> None:
    index = java_oracle.dv_index(built.warehouse, DB, name)
    assert [f for f in index["files"] if f["level"] == 0] == []
    assert {s["commitKind"] for s in java_oracle.snapshots(built.warehouse, DB, name)} >= {
        "APPEND",
        "COMPACT",
    }


@pytest.mark.parametrize("name", list(BUILDERS))
def test_index_bytes_carry_version_and_magic(
    java_oracle: JavaOracle, built: Built, name: str
) -> None:
    index = java_oracle.dv_index(built.warehouse, DB, name)
    for entry in index["entries"]:
        data = index_bytes(entry)
        assert data[0] == 1
        for r in entry["ranges"]:
            at = r["offset"] + 4  # after the vector's big-endian length
            if name in BITMAP64_NAMES:
                assert struct.unpack_from("<i", data, at)[0] == BITMAP64_MAGIC
            else:
                assert struct.unpack_from(">i", data, at)[0] == BITMAP32_MAGIC


@pytest.mark.parametrize("name", list(BUILDERS))
def test_our_codec_matches_java_index_files(
    java_oracle: JavaOracle, built: Built, name: str
) -> None:
    index = java_oracle.dv_index(built.warehouse, DB, name)
    for entry in index["entries"]:
        data = index_bytes(entry)
        ranges = [
            DeletionVectorRange(r["data_file"], r["offset"], r["length"], r["cardinality"])
            for r in entry["ranges"]
        ]
        ours = decode_index_file(data, ranges, entry["path"])
        assert {f: dv.positions().tolist() for f, dv in ours.items()} == entry["vectors"]
        assert all(dv.bitmap64 == (name in BITMAP64_NAMES) for dv in ours.values())
        encoded, encoded_ranges = encode_index_file(
            (r.data_file_name, ours[r.data_file_name]) for r in ranges
        )
        assert encoded == data
        assert list(encoded_ranges) == ranges


@pytest.mark.parametrize("name", ["pk_fixed", "pk_cross", "append_unaware"])
def test_read_optimized_reads_top_level_files(
    java_oracle: JavaOracle, built: Built, name: str
) -> None:
    ro = sorted_rows(java_oracle.read_table_ro(built.warehouse, DB, name).rows)
    expected = built.expected[name]
    if name.startswith("append"):
        assert ro == expected
        return
    index = java_oracle.dv_index(built.warehouse, DB, name)
    top = {f["file_name"]: f["row_count"] for f in index["files"] if f["level"] == 5}
    marked = sum(
        r["cardinality"] for e in index["entries"] for r in e["ranges"] if r["data_file"] in top
    )
    assert len(ro) == sum(top.values()) - marked < len(expected)
    assert {repr(r) for r in ro} <= {repr(r) for r in expected}


def test_delete_where_merges_into_the_file_vector(java_oracle: JavaOracle, tmp_path: Path) -> None:
    name = "merge"
    java_oracle.create_table(
        tmp_path, DB, name, JAVA_FIELDS, options={"deletion-vectors.enabled": "true"}
    )
    rows = [[k % 5, f"v{k}", k, "p0"] for k in range(10)]
    first = java_oracle.write_rows(tmp_path, DB, name, rows)
    assert java_oracle.delete_where(tmp_path, DB, name, "k", [1, 7]) == first + 1
    assert java_oracle.delete_where(tmp_path, DB, name, "k", [3]) == first + 2
    # only already-deleted or absent values: Java commits nothing
    assert java_oracle.delete_where(tmp_path, DB, name, "k", [1, 99]) == first + 2
    index = java_oracle.dv_index(tmp_path, DB, name)
    [entry] = index["entries"]
    [data_file] = index["files"]
    assert entry["vectors"] == {data_file["file_name"]: [1, 3, 6, 8]}
    rows_left = java_oracle.read_table(tmp_path, DB, name).rows
    assert sorted_rows(rows_left) == sorted_rows(r for r in rows if r[0] not in (1, 3))
