"""Manifest files, manifest lists and index manifests: records, Avro schemas and codecs.

Mirrors org.apache.paimon.manifest.{ManifestEntry, ManifestFileMeta, IndexManifestEntry} and their
serializers. Schemas carry Java's record names (``org.apache.paimon.avro.generated.record``,
``record__FILE``...) and field order, with the ``_VERSION`` format identifier first. Pure codecs:
bytes in, bytes out; reading and writing files is the caller's business.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, TypeVar, cast

import fastavro

from paimon_pyspark.errors import CorruptTableError
from paimon_pyspark.spec.data_file_meta import DataFileMeta, SimpleStats

_R = TypeVar("_R")

KIND_ADD = 0
KIND_DELETE = 1

MANIFEST_ENTRY_VERSION = 2
MANIFEST_FILE_META_VERSION = 2
INDEX_MANIFEST_ENTRY_VERSION = 1

_NS = "org.apache.paimon.avro.generated"


def _opt(t: Any) -> list[Any]:
    return ["null", t]


def _stats_schema(name: str) -> dict[str, Any]:
    return {
        "type": "record",
        "name": name,
        "fields": [
            {"name": "_MIN_VALUES", "type": "bytes"},
            {"name": "_MAX_VALUES", "type": "bytes"},
            {
                "name": "_NULL_COUNTS",
                "type": _opt({"type": "array", "items": _opt("long")}),
                "default": None,
            },
        ],
    }


def _string_array() -> dict[str, Any]:
    return {"type": "array", "items": "string"}


DATA_FILE_META_SCHEMA: dict[str, Any] = {
    "type": "record",
    "name": "record__FILE",
    "fields": [
        {"name": "_FILE_NAME", "type": "string"},
        {"name": "_FILE_SIZE", "type": "long"},
        {"name": "_ROW_COUNT", "type": "long"},
        {"name": "_MIN_KEY", "type": "bytes"},
        {"name": "_MAX_KEY", "type": "bytes"},
        {"name": "_KEY_STATS", "type": _stats_schema("record__FILE__KEY_STATS")},
        {"name": "_VALUE_STATS", "type": _stats_schema("record__FILE__VALUE_STATS")},
        {"name": "_MIN_SEQUENCE_NUMBER", "type": "long"},
        {"name": "_MAX_SEQUENCE_NUMBER", "type": "long"},
        {"name": "_SCHEMA_ID", "type": "long"},
        {"name": "_LEVEL", "type": "int"},
        {"name": "_EXTRA_FILES", "type": _string_array()},
        {
            "name": "_CREATION_TIME",
            "type": _opt({"type": "long", "logicalType": "timestamp-millis"}),
            "default": None,
        },
        {"name": "_DELETE_ROW_COUNT", "type": _opt("long"), "default": None},
        {"name": "_EMBEDDED_FILE_INDEX", "type": _opt("bytes"), "default": None},
        {"name": "_FILE_SOURCE", "type": _opt("int"), "default": None},
        {"name": "_VALUE_STATS_COLS", "type": _opt(_string_array()), "default": None},
        {"name": "_EXTERNAL_PATH", "type": _opt("string"), "default": None},
        {"name": "_FIRST_ROW_ID", "type": _opt("long"), "default": None},
        {"name": "_WRITE_COLS", "type": _opt(_string_array()), "default": None},
    ],
}

MANIFEST_ENTRY_SCHEMA: dict[str, Any] = {
    "type": "record",
    "name": "record",
    "namespace": _NS,
    "fields": [
        {"name": "_VERSION", "type": "int"},
        {"name": "_KIND", "type": "int"},
        {"name": "_PARTITION", "type": "bytes"},
        {"name": "_BUCKET", "type": "int"},
        {"name": "_TOTAL_BUCKETS", "type": "int"},
        {"name": "_FILE", "type": DATA_FILE_META_SCHEMA},
    ],
}

MANIFEST_FILE_META_SCHEMA: dict[str, Any] = {
    "type": "record",
    "name": "record",
    "namespace": _NS,
    "fields": [
        {"name": "_VERSION", "type": "int"},
        {"name": "_FILE_NAME", "type": "string"},
        {"name": "_FILE_SIZE", "type": "long"},
        {"name": "_NUM_ADDED_FILES", "type": "long"},
        {"name": "_NUM_DELETED_FILES", "type": "long"},
        {"name": "_PARTITION_STATS", "type": _stats_schema("record__PARTITION_STATS")},
        {"name": "_SCHEMA_ID", "type": "long"},
        {"name": "_MIN_BUCKET", "type": _opt("int"), "default": None},
        {"name": "_MAX_BUCKET", "type": _opt("int"), "default": None},
        {"name": "_MIN_LEVEL", "type": _opt("int"), "default": None},
        {"name": "_MAX_LEVEL", "type": _opt("int"), "default": None},
        {"name": "_MIN_ROW_ID", "type": _opt("long"), "default": None},
        {"name": "_MAX_ROW_ID", "type": _opt("long"), "default": None},
    ],
}

_DV_RANGE_SCHEMA: dict[str, Any] = {
    "type": "record",
    "name": "record__DELETIONS_VECTORS_RANGES",
    "fields": [
        {"name": "f0", "type": "string"},
        {"name": "f1", "type": "int"},
        {"name": "f2", "type": "int"},
        {"name": "_CARDINALITY", "type": _opt("long"), "default": None},
    ],
}

_GLOBAL_INDEX_SCHEMA: dict[str, Any] = {
    "type": "record",
    "name": "record__GLOBAL_INDEX",
    "fields": [
        {"name": "_ROW_RANGE_START", "type": "long"},
        {"name": "_ROW_RANGE_END", "type": "long"},
        {"name": "_INDEX_FIELD_ID", "type": "int"},
        {"name": "_EXTRA_FIELD_IDS", "type": _opt({"type": "array", "items": "int"})},
        {"name": "_INDEX_META", "type": _opt("bytes"), "default": None},
        {"name": "_SOURCE_META", "type": _opt("bytes"), "default": None},
    ],
}

INDEX_MANIFEST_ENTRY_SCHEMA: dict[str, Any] = {
    "type": "record",
    "name": "record",
    "namespace": _NS,
    "fields": [
        {"name": "_VERSION", "type": "int"},
        {"name": "_KIND", "type": "int"},
        {"name": "_PARTITION", "type": "bytes"},
        {"name": "_BUCKET", "type": "int"},
        {"name": "_INDEX_TYPE", "type": "string"},
        {"name": "_FILE_NAME", "type": "string"},
        {"name": "_FILE_SIZE", "type": "long"},
        {"name": "_ROW_COUNT", "type": "long"},
        {
            "name": "_DELETIONS_VECTORS_RANGES",
            "type": _opt({"type": "array", "items": _opt(_DV_RANGE_SCHEMA)}),
            "default": None,
        },
        {"name": "_EXTERNAL_PATH", "type": _opt("string"), "default": None},
        {"name": "_GLOBAL_INDEX", "type": _opt(_GLOBAL_INDEX_SCHEMA), "default": None},
    ],
}

_PARSED: dict[int, Any] = {}


def _parsed(schema: dict[str, Any]) -> Any:
    key = id(schema)
    if key not in _PARSED:
        _PARSED[key] = fastavro.parse_schema(schema)
    return _PARSED[key]


@dataclass(frozen=True)
class ManifestEntry:
    kind: int
    partition: bytes
    bucket: int
    total_buckets: int
    file: DataFileMeta

    def identifier(self) -> tuple[Any, ...]:
        return (self.partition, self.bucket, *self.file.identifier())

    def to_avro(self) -> dict[str, Any]:
        return {
            "_VERSION": MANIFEST_ENTRY_VERSION,
            "_KIND": self.kind,
            "_PARTITION": self.partition,
            "_BUCKET": self.bucket,
            "_TOTAL_BUCKETS": self.total_buckets,
            "_FILE": self.file.to_avro(),
        }

    @staticmethod
    def from_avro(rec: dict[str, Any]) -> ManifestEntry:
        _check_version(rec, MANIFEST_ENTRY_VERSION, "manifest entry")
        return ManifestEntry(
            kind=rec["_KIND"],
            partition=bytes(rec["_PARTITION"]),
            bucket=rec["_BUCKET"],
            total_buckets=rec["_TOTAL_BUCKETS"],
            file=DataFileMeta.from_avro(rec["_FILE"]),
        )


@dataclass(frozen=True)
class ManifestFileMeta:
    file_name: str
    file_size: int
    num_added_files: int
    num_deleted_files: int
    partition_stats: SimpleStats
    schema_id: int
    min_bucket: int | None = None
    max_bucket: int | None = None
    min_level: int | None = None
    max_level: int | None = None
    min_row_id: int | None = None
    max_row_id: int | None = None

    def to_avro(self) -> dict[str, Any]:
        return {
            "_VERSION": MANIFEST_FILE_META_VERSION,
            "_FILE_NAME": self.file_name,
            "_FILE_SIZE": self.file_size,
            "_NUM_ADDED_FILES": self.num_added_files,
            "_NUM_DELETED_FILES": self.num_deleted_files,
            "_PARTITION_STATS": self.partition_stats.to_avro(),
            "_SCHEMA_ID": self.schema_id,
            "_MIN_BUCKET": self.min_bucket,
            "_MAX_BUCKET": self.max_bucket,
            "_MIN_LEVEL": self.min_level,
            "_MAX_LEVEL": self.max_level,
            "_MIN_ROW_ID": self.min_row_id,
            "_MAX_ROW_ID": self.max_row_id,
        }

    @staticmethod
    def from_avro(rec: dict[str, Any]) -> ManifestFileMeta:
        _check_version(rec, MANIFEST_FILE_META_VERSION, "manifest list entry")
        return ManifestFileMeta(
            file_name=rec["_FILE_NAME"],
            file_size=rec["_FILE_SIZE"],
            num_added_files=rec["_NUM_ADDED_FILES"],
            num_deleted_files=rec["_NUM_DELETED_FILES"],
            partition_stats=SimpleStats.from_avro(rec["_PARTITION_STATS"]),
            schema_id=rec["_SCHEMA_ID"],
            min_bucket=rec.get("_MIN_BUCKET"),
            max_bucket=rec.get("_MAX_BUCKET"),
            min_level=rec.get("_MIN_LEVEL"),
            max_level=rec.get("_MAX_LEVEL"),
            min_row_id=rec.get("_MIN_ROW_ID"),
            max_row_id=rec.get("_MAX_ROW_ID"),
        )


@dataclass(frozen=True)
class DeletionVectorRange:
    data_file_name: str
    offset: int
    length: int
    cardinality: int | None = None


@dataclass(frozen=True)
class GlobalIndexMeta:
    row_range_start: int
    row_range_end: int
    index_field_id: int
    extra_field_ids: tuple[int, ...] | None = None
    index_meta: bytes | None = None
    source_meta: bytes | None = None


@dataclass(frozen=True)
class IndexFileMeta:
    """An index file (hash index, deletion vectors, global index); Java's IndexFileMeta."""

    index_type: str
    file_name: str
    file_size: int
    row_count: int
    dv_ranges: tuple[DeletionVectorRange, ...] | None = None
    external_path: str | None = None
    global_index: GlobalIndexMeta | None = None


@dataclass(frozen=True)
class IndexManifestEntry:
    kind: int
    partition: bytes
    bucket: int
    index_file: IndexFileMeta

    def to_avro(self) -> dict[str, Any]:
        f = self.index_file
        dv = None
        if f.dv_ranges is not None:
            dv = [
                {
                    "f0": r.data_file_name,
                    "f1": r.offset,
                    "f2": r.length,
                    "_CARDINALITY": r.cardinality,
                }
                for r in f.dv_ranges
            ]
        gi = None
        if f.global_index is not None:
            g = f.global_index
            gi = {
                "_ROW_RANGE_START": g.row_range_start,
                "_ROW_RANGE_END": g.row_range_end,
                "_INDEX_FIELD_ID": g.index_field_id,
                "_EXTRA_FIELD_IDS": None if g.extra_field_ids is None else list(g.extra_field_ids),
                "_INDEX_META": g.index_meta,
                "_SOURCE_META": g.source_meta,
            }
        return {
            "_VERSION": INDEX_MANIFEST_ENTRY_VERSION,
            "_KIND": self.kind,
            "_PARTITION": self.partition,
            "_BUCKET": self.bucket,
            "_INDEX_TYPE": f.index_type,
            "_FILE_NAME": f.file_name,
            "_FILE_SIZE": f.file_size,
            "_ROW_COUNT": f.row_count,
            "_DELETIONS_VECTORS_RANGES": dv,
            "_EXTERNAL_PATH": f.external_path,
            "_GLOBAL_INDEX": gi,
        }

    @staticmethod
    def from_avro(rec: dict[str, Any]) -> IndexManifestEntry:
        _check_version(rec, INDEX_MANIFEST_ENTRY_VERSION, "index manifest entry")
        dv = rec.get("_DELETIONS_VECTORS_RANGES")
        ranges = None
        if dv is not None:
            ranges = tuple(
                DeletionVectorRange(r["f0"], r["f1"], r["f2"], r.get("_CARDINALITY"))
                for r in dv
                if r is not None
            )
        gi = rec.get("_GLOBAL_INDEX")
        global_index = None
        if gi is not None:
            extra = gi.get("_EXTRA_FIELD_IDS")
            global_index = GlobalIndexMeta(
                gi["_ROW_RANGE_START"],
                gi["_ROW_RANGE_END"],
                gi["_INDEX_FIELD_ID"],
                None if extra is None else tuple(extra),
                gi.get("_INDEX_META"),
                gi.get("_SOURCE_META"),
            )
        return IndexManifestEntry(
            kind=rec["_KIND"],
            partition=bytes(rec["_PARTITION"]),
            bucket=rec["_BUCKET"],
            index_file=IndexFileMeta(
                rec["_INDEX_TYPE"],
                rec["_FILE_NAME"],
                rec["_FILE_SIZE"],
                rec["_ROW_COUNT"],
                ranges,
                rec.get("_EXTERNAL_PATH"),
                global_index,
            ),
        )


def _check_version(rec: dict[str, Any], expected: int, what: str) -> None:
    version = rec.get("_VERSION")
    if version != expected:
        raise CorruptTableError(
            f"Unsupported {what} version {version} (expected {expected}); "
            "tables written by very old Paimon versions must be recreated."
        )


def avro_codec(manifest_compression: str) -> str:
    """Java maps ``manifest.compression`` to an Avro codec name; zstd is Avro's 'zstandard'."""
    c = manifest_compression.lower()
    return {"zstd": "zstandard", "none": "null", "uncompressed": "null"}.get(c, c)


def encode(schema: dict[str, Any], records: Iterable[dict[str, Any]], codec: str) -> bytes:
    buf = io.BytesIO()
    level = 1 if codec == "zstandard" else None
    fastavro.writer(buf, _parsed(schema), records, codec=codec, codec_compression_level=level)
    return buf.getvalue()


def decode(data: bytes, where: str) -> list[dict[str, Any]]:
    try:
        return [cast(dict[str, Any], r) for r in fastavro.reader(io.BytesIO(data))]
    except Exception as e:  # fastavro raises many kinds on corrupt input
        raise CorruptTableError(f"Avro file {where} is corrupt: {e}") from e


def encode_manifest_entries(entries: Iterable[ManifestEntry], codec: str) -> bytes:
    return encode(MANIFEST_ENTRY_SCHEMA, (e.to_avro() for e in entries), codec)


def _records(data: bytes, where: str, build: Callable[[dict[str, Any]], _R], kind: str) -> list[_R]:
    """Decode, then build each record; a record without a field its kind needs (a damaged
    header that renamed it, a file of another kind) is a CorruptTableError naming the file."""
    records = decode(data, where)
    try:
        return [build(r) for r in records]
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as e:
        raise CorruptTableError(
            f"Avro file {where} is not a readable {kind}: {type(e).__name__} {e}"
        ) from e


def decode_manifest_entries(data: bytes, where: str) -> list[ManifestEntry]:
    return _records(data, where, ManifestEntry.from_avro, "manifest")


def encode_manifest_list(metas: Iterable[ManifestFileMeta], codec: str) -> bytes:
    return encode(MANIFEST_FILE_META_SCHEMA, (m.to_avro() for m in metas), codec)


def decode_manifest_list(data: bytes, where: str) -> list[ManifestFileMeta]:
    return _records(data, where, ManifestFileMeta.from_avro, "manifest list")


def encode_index_manifest(entries: Iterable[IndexManifestEntry], codec: str) -> bytes:
    return encode(INDEX_MANIFEST_ENTRY_SCHEMA, (e.to_avro() for e in entries), codec)


def decode_index_manifest(data: bytes, where: str) -> list[IndexManifestEntry]:
    return _records(data, where, IndexManifestEntry.from_avro, "index manifest")
