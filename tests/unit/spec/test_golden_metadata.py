"""Our metadata codecs against files Java Paimon wrote (the golden warehouse tarball)."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path
from typing import Any

import fastavro
import pytest

from paimon_pyspark.spec import manifest as mf
from paimon_pyspark.spec.snapshot import Snapshot
from paimon_pyspark.spec.table_schema import TableSchema

GOLDEN = Path(__file__).resolve().parents[4] / "shared" / "spec" / "golden"
TARBALL = GOLDEN / "pk_global_index_golden.tar.gz"


@pytest.fixture(scope="module")
def golden_warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("golden")
    with tarfile.open(TARBALL) as tar:
        tar.extractall(out, filter="data")
    return out


def _files(root: Path, pattern: str) -> list[Path]:
    found = sorted(root.rglob(pattern))
    assert found, f"no {pattern} in the golden warehouse"
    return found


def test_schema_files_reserialize_to_javas_exact_text(golden_warehouse: Path) -> None:
    for path in _files(golden_warehouse, "schema-*"):
        text = path.read_text()
        assert TableSchema.from_json(text).to_json() == text, path


def test_snapshot_files_reserialize_to_javas_exact_text(golden_warehouse: Path) -> None:
    for path in _files(golden_warehouse, "snapshot-*"):
        text = path.read_text()
        assert Snapshot.from_json(text).to_json() == text, path


def _writer_schema(data: bytes) -> Any:
    return fastavro.reader(io.BytesIO(data)).writer_schema


def _shape(schema: Any) -> Any:
    """Field names and types of an Avro schema, without record names or defaults."""
    if isinstance(schema, dict):
        if schema.get("type") == "record":
            return [(f["name"], _shape(f["type"])) for f in schema["fields"]]
        if schema.get("type") == "array":
            return ["array", _shape(schema["items"])]
        return {k: v for k, v in schema.items() if k in ("type", "logicalType")}
    if isinstance(schema, list):
        return [_shape(s) for s in schema]
    return schema


@pytest.mark.parametrize(
    ("prefix", "ours", "decode"),
    [
        ("manifest-list-", mf.MANIFEST_FILE_META_SCHEMA, mf.decode_manifest_list),
        ("index-manifest-", mf.INDEX_MANIFEST_ENTRY_SCHEMA, mf.decode_index_manifest),
        ("manifest-", mf.MANIFEST_ENTRY_SCHEMA, mf.decode_manifest_entries),
    ],
)
def test_avro_metadata_matches_javas_schema_and_round_trips(
    golden_warehouse: Path, prefix: str, ours: dict[str, Any], decode: Any
) -> None:
    paths = [
        p
        for p in _files(golden_warehouse, f"{prefix}*")
        if prefix != "manifest-" or not p.name.startswith(("manifest-list-",))
    ]
    for path in paths:
        data = path.read_bytes()
        java = _writer_schema(data)
        assert java["name"].endswith("record")
        assert fastavro.reader(io.BytesIO(data)).codec == "zstandard"
        java_shape = _shape(java)
        our_shape = _shape(fastavro.parse_schema(ours))
        # Java master may add trailing nested fields (e.g. _WRITE_COLS_SEQUENCES) we omit.
        assert [n for n, _ in java_shape][: len(our_shape)] == [n for n, _ in our_shape], path
        records = decode(data, str(path))
        encoded = mf.encode(ours, [r.to_avro() for r in records], "zstandard")
        assert decode(encoded, "re-encoded") == records, path
