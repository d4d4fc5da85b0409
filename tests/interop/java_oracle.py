"""Java Paimon as a test oracle, driven from Python through a py4j gateway.

Why a bare py4j gateway over ``paimon-bundle`` and not a SparkSession with the Paimon Spark
connector: the Maven repository reachable here serves ``org.apache.paimon:paimon-bundle`` (up to
1.4.2) but no ``paimon-spark-*`` connector jar. The bundle is the plain Java API of the same
Paimon release (catalog, schema, readers, writers, bucket function), which is exactly the
reference behaviour we want to compare against, without Spark's own type conversions in between.
pyspark's ``jars/`` directory supplies the Hadoop and logging classes the bundle leaves out.
``paimon-s3`` (Java's S3 file IO plugin: Hadoop S3A and the AWS SDK in its own class loader), when
``make`` has put it beside the bundle, lets the oracle open ``s3://`` warehouses too; their
endpoint and credentials are catalog options, given once per warehouse with
``JavaOracle.set_catalog_options``.

One JVM is started per pytest session (see ``tests/interop/conftest.py``); every call goes to the
static methods of ``tests/interop/java/PaimonOracle.java`` and passes only strings and numbers, and
byte arrays for serialized commit messages (sent as ``bytearray``, py4j's ``byte[]``).

Canonical row encoding (what ``JavaOracle.read_table`` returns and ``canonical_rows`` builds from
Arrow, so the two compare with ``==`` after ``sorted_rows``):

=========================  ==============================================================
null                       ``None``
BOOLEAN / integer types    ``bool`` / ``int``
FLOAT / DOUBLE             ``float``; every NaN is the one object ``math.nan`` so lists compare
DECIMAL                    ``str``, plain notation with exactly the type's scale (``"1.50"``)
CHAR / VARCHAR             ``str``
BINARY / VARBINARY         ``bytes``
DATE                       ``int`` epoch days
TIME                       ``int`` milliseconds of day
TIMESTAMP / TIMESTAMP_LTZ  ``int`` epoch **nanoseconds** (Python ints never overflow, so any
                           year works; a LTZ value is the UTC instant, a TIMESTAMP value its
                           wall clock read as UTC)
ARRAY                      ``list``
MAP / MULTISET             ``list`` of ``[key, value]`` pairs, sorted by key (order-free)
ROW                        ``list`` of field values
=========================  ==============================================================

On the JSON wire the Java side sends floats as ``Double.toString`` strings and binaries as
base64; ``to_wire`` turns canonical (or ordinary Python: ``Decimal``, ``date``, ``datetime``,
``time``, ``dict``) values into that wire form for ``write_rows`` and ``buckets``.
"""

from __future__ import annotations

import base64
import contextlib
import datetime as dt
import decimal
import glob
import json
import math
import os
import subprocess
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any, NamedTuple

import pyarrow as pa

TypeJson = str | dict[str, Any]
"""A Paimon type exactly as written in schema files: ``"INT NOT NULL"`` or a JSON object."""

_JAVA_CLASS = "paimonoracle.PaimonOracle"
_EPOCH_DATE = dt.date(1970, 1, 1)
_EPOCH_NAIVE = dt.datetime(1970, 1, 1)
_EPOCH_UTC = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_NANOS_PER_UNIT = {"s": 1_000_000_000, "ms": 1_000_000, "us": 1_000, "ns": 1}
_JAVA_OPTS = [
    "-Xmx1g",
    "-XX:+IgnoreUnrecognizedVMOptions",
    # a test JVM: C1 only and the serial collector (tests/conftest.py says why)
    "-XX:TieredStopAtLevel=1",
    "-XX:+UseSerialGC",
    "-Dlog4j2.level=ERROR",
    # Paimon's memory segments and codegen reach into JDK internals, as Spark's launcher allows.
    "--add-opens=java.base/java.lang=ALL-UNNAMED",
    "--add-opens=java.base/java.lang.invoke=ALL-UNNAMED",
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens=java.base/java.util=ALL-UNNAMED",
]


class JavaRead(NamedTuple):
    """Rows read by Java Paimon, in canonical encoding, with the table's field names/types."""

    fields: list[str]
    rows: list[list[Any]]
    types: list[TypeJson]


class JavaBuckets(NamedTuple):
    """``BinaryRow.hashCode()`` per key row and Java's bucket per key row for each count."""

    hashes: list[int]
    buckets: dict[int, list[int]]


def pyspark_jars_dir() -> Path:
    """pyspark ships Hadoop + slf4j/log4j jars that the Paimon bundle expects on the classpath."""
    import pyspark

    return Path(pyspark.__file__).parent / "jars"


def s3_plugin_jar(paimon_jar: Path) -> Path:
    """Where ``make`` puts ``paimon-s3`` of the bundle's version: beside the bundle."""
    version = paimon_jar.name.removeprefix("paimon-bundle-")
    return paimon_jar.with_name(f"paimon-s3-{version}")


def jdbc_driver_jars(paimon_jar: Path) -> list[Path]:
    """The SQLite and PostgreSQL JDBC drivers ``make`` puts beside the bundle, for Java's
    JdbcCatalog (tests/interop/test_jdbc_catalog_java.py)."""
    return sorted(
        [*paimon_jar.parent.glob("sqlite-jdbc-*.jar"), *paimon_jar.parent.glob("postgresql-*.jar")]
    )


class JavaOracle:
    """One JVM running Java Paimon's catalog, reader, writer and bucket function."""

    def __init__(
        self,
        paimon_jar: Path,
        classes_dir: Path,
        *,
        log_path: Path | None = None,
    ) -> None:
        from py4j.java_gateway import GatewayParameters, JavaGateway, find_jar_path, launch_gateway

        jars = pyspark_jars_dir()
        py4j_jar = find_jar_path() or next(iter(glob.glob(str(jars / "py4j-*.jar"))), "")
        s3_jar = s3_plugin_jar(paimon_jar)
        self.s3_jar: Path | None = s3_jar if s3_jar.is_file() else None
        plugins = [str(self.s3_jar)] if self.s3_jar else []
        plugins += [str(j) for j in jdbc_driver_jars(paimon_jar)]
        classpath = os.pathsep.join([str(paimon_jar), *plugins, str(classes_dir), str(jars / "*")])
        self._log: IO[str] | None = open(log_path, "w") if log_path else None  # noqa: SIM115
        started = time.monotonic()
        port, self._proc = launch_gateway(
            jarpath=py4j_jar,
            classpath=classpath,
            javaopts=_JAVA_OPTS,
            die_on_exit=True,
            redirect_stderr=self._log,
            redirect_stdout=self._log,
            return_proc=True,
        )
        self._gateway = JavaGateway(gateway_parameters=GatewayParameters(port=port))
        try:
            # Load the class now so a missing or stale build fails here, not in the first test.
            self._gateway.jvm.java.lang.Class.forName(_JAVA_CLASS)
        except Exception as error:
            message = str(error)  # needs the live gateway, so before close()
            self.close()
            raise RuntimeError(f"{_JAVA_CLASS} not loadable from {classpath}: {message}") from None
        self._java = self._gateway.jvm.paimonoracle.PaimonOracle
        self.start_seconds = time.monotonic() - started

    def close(self) -> None:
        """Stop the JVM (it would also die with this process, via ``die_on_exit``)."""
        with contextlib.suppress(Exception):
            self._gateway.shutdown()
        proc: subprocess.Popen[bytes] = self._proc
        with contextlib.suppress(Exception):
            if proc.stdin is not None:
                proc.stdin.close()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if self._log is not None:
            self._log.close()

    def set_catalog_options(self, warehouse: str, options: Mapping[str, str]) -> None:
        """Every later call on ``warehouse`` opens Java's catalog with these options too (for
        ``s3://``: paimon-s3's ``s3.endpoint``, ``s3.access-key``, ... keys)."""
        if warehouse.startswith(("s3://", "s3a://")) and self.s3_jar is None:
            raise RuntimeError(f"{warehouse}: paimon-s3 jar not on the classpath; run `make test`")
        self._java.setCatalogOptions(warehouse, json.dumps({k: str(v) for k, v in options.items()}))

    # -- reads ---------------------------------------------------------------------------------

    def read_table(
        self, warehouse: str | os.PathLike[str], db: str, table: str, snapshot_id: int | None = None
    ) -> JavaRead:
        """All rows as Java reads them (latest snapshot, or ``snapshot_id`` via time travel)."""
        sid = -1 if snapshot_id is None else snapshot_id
        out = json.loads(self._java.readTable(_wh(warehouse), db, table, sid))
        types: list[TypeJson] = out["types"]
        rows = [[_from_wire(v, t) for v, t in zip(r, types, strict=True)] for r in out["rows"]]
        return JavaRead(out["fields"], rows, types)

    def plan_files(
        self,
        warehouse: str | os.PathLike[str],
        db: str,
        table: str,
        field: str,
        op: str,
        literal: Any = None,
    ) -> list[str]:
        """Data files Java's scan keeps for one filter (equal, greaterOrEqual, lessThan, isNull)."""
        names: list[str] = json.loads(
            self._java.planFiles(_wh(warehouse), db, table, field, op, json.dumps(to_wire(literal)))
        )
        return sorted(names)

    def latest_snapshot_id(
        self, warehouse: str | os.PathLike[str], db: str, table: str
    ) -> int | None:
        """Java's view of the latest snapshot id (``None`` before the first commit)."""
        sid = int(self._java.latestSnapshotId(_wh(warehouse), db, table))
        return None if sid < 0 else sid

    def snapshots(
        self, warehouse: str | os.PathLike[str], db: str, table: str
    ) -> list[dict[str, Any]]:
        """``[{"id", "schemaId", "commitKind", "totalRecordCount"}, ...]`` oldest first."""
        result: list[dict[str, Any]] = json.loads(self._java.snapshots(_wh(warehouse), db, table))
        return result

    def table_fields(self, warehouse: str | os.PathLike[str], db: str, table: str) -> list[Any]:
        """The current schema's fields as Paimon schema-file JSON (with field ids)."""
        result: list[Any] = json.loads(self._java.tableFields(_wh(warehouse), db, table))
        return result

    # -- writes --------------------------------------------------------------------------------

    def create_table(
        self,
        warehouse: str | os.PathLike[str],
        db: str,
        table: str,
        fields: Sequence[tuple[str, TypeJson]] | Mapping[str, TypeJson],
        *,
        partition_keys: Sequence[str] = (),
        primary_keys: Sequence[str] = (),
        options: Mapping[str, str] | None = None,
    ) -> None:
        """Create the database (if needed) and table with Java's catalog; types are Paimon JSON."""
        items = fields.items() if isinstance(fields, Mapping) else fields
        spec = {
            "fields": [{"name": name, "type": type_} for name, type_ in items],
            "partitionKeys": list(partition_keys),
            "primaryKeys": list(primary_keys),
            "options": {k: str(v) for k, v in (options or {}).items()},
        }
        self._java.createTable(_wh(warehouse), db, table, json.dumps(spec))

    def write_rows(
        self,
        warehouse: str | os.PathLike[str],
        db: str,
        table: str,
        rows: Iterable[Sequence[Any]] | pa.Table,
    ) -> int:
        """One Java batch write + commit; returns the latest snapshot id afterwards.

        A primary-key table may also get a COMPACT snapshot after the APPEND one; set
        ``"write-only": "true"`` in its options to prevent that.
        """
        if isinstance(rows, pa.Table):
            rows = canonical_rows(rows)
        payload = json.dumps([to_wire(list(r)) for r in rows])
        return int(self._java.writeRows(_wh(warehouse), db, table, payload))

    def write_cross_partition(
        self,
        warehouse: str | os.PathLike[str],
        db: str,
        table: str,
        rows: Iterable[Sequence[Any]] | pa.Table,
        *,
        overwrite: Mapping[str, str] | None = None,
    ) -> int:
        """One Java batch write + commit into a cross-partition upsert table, routed by Java's
        GlobalIndexAssigner over IndexBootstrap's keys (as its Flink and Spark sinks do);
        ``overwrite``: an insert overwrite with this static partition ({} for none). Returns
        the latest snapshot id afterwards."""
        if isinstance(rows, pa.Table):
            rows = canonical_rows(rows)
        payload = json.dumps([to_wire(list(r)) for r in rows])
        spec = None if overwrite is None else json.dumps({k: str(v) for k, v in overwrite.items()})
        return int(self._java.writeCrossPartition(_wh(warehouse), db, table, payload, spec))

    def write_rows_kinds(
        self,
        warehouse: str | os.PathLike[str],
        db: str,
        table: str,
        rows: Iterable[Sequence[Any]] | pa.Table,
        kinds: Iterable[str],
    ) -> int:
        """``write_rows`` with a RowKind per row (``"+I"``, ``"-U"``, ``"+U"``, ``"-D"``), so a
        primary-key table takes upserts and deletes in one batch commit; a cross-partition table
        is routed as ``write_cross_partition`` routes it. With ``deletion-vectors.enabled`` Java's
        writer compacts with lookup at the commit. Returns the latest snapshot id afterwards."""
        if isinstance(rows, pa.Table):
            rows = canonical_rows(rows)
        payload = json.dumps([to_wire(list(r)) for r in rows])
        return int(
            self._java.writeRowsKinds(_wh(warehouse), db, table, payload, json.dumps(list(kinds)))
        )

    def delete_where(
        self,
        warehouse: str | os.PathLike[str],
        db: str,
        table: str,
        field: str,
        values: Iterable[Any],
    ) -> int:
        """What Spark's ``DELETE FROM t WHERE field IN (values)`` does to an append table with
        deletion vectors in Java 1.4.2: the positions (in each data file) of matching visible rows
        are merged into the files' vectors and the new index files committed; nothing is
        committed when no row matches. Returns the latest snapshot id afterwards."""
        payload = json.dumps([to_wire(v) for v in values])
        return int(self._java.deleteWhere(_wh(warehouse), db, table, field, payload))

    def dv_index(self, warehouse: str | os.PathLike[str], db: str, table: str) -> dict[str, Any]:
        """The latest snapshot's deletion vectors as Java sees them: ``{"snapshot_id",
        "entries": [{"partition", "partition_hex", "bucket", "file_name", "path", "file_size",
        "row_count", "external_path", "ranges": [{"data_file", "offset", "length",
        "cardinality"}], "vectors": {data_file: [positions]}}], "files": [{"partition",
        "bucket", "file_name", "level", "row_count"}]}`` (``files``: every data file of the
        snapshot; ``partition`` in canonical encoding, ``path`` without ``file:``)."""
        out: dict[str, Any] = json.loads(self._java.dvIndex(_wh(warehouse), db, table))
        for entry in out["entries"]:
            entry["path"] = str(entry["path"]).removeprefix("file:")
        return out

    def read_table_ro(self, warehouse: str | os.PathLike[str], db: str, table: str) -> JavaRead:
        """The rows of the read-optimized system table ``table$ro`` as Java reads them."""
        return read_system_table(self, warehouse, db, f"{table}$ro")

    def compact(
        self, warehouse: str | os.PathLike[str], db: str, table: str, *, full: bool = True
    ) -> int:
        """Java compacts every bucket (``full``, or its universal pick) in one batch commit;
        returns the latest snapshot id afterwards."""
        return int(self._java.compactTable(_wh(warehouse), db, table, full))

    def compact_postpone(self, warehouse: str | os.PathLike[str], db: str, table: str) -> int:
        """Java's postpone-bucket compaction (SparkPostponeCompactProcedure's steps with core
        classes): every postpone file into real buckets, one commit; the latest snapshot id."""
        return int(self._java.compactPostpone(_wh(warehouse), db, table))

    # -- serialized commit messages ------------------------------------------------------------

    def expire_snapshots(
        self,
        warehouse: str | os.PathLike[str],
        db: str,
        table: str,
        *,
        retain_max: int,
        retain_min: int = 1,
        max_deletes: int = 2**31 - 1,
        time_retained_ms: int = 3_600_000,
    ) -> int:
        """Java's ExpireSnapshotsImpl with these counts and ``snapshot.time-retained`` (1 h,
        Java's default); the number of snapshots it expired."""
        return int(
            self._java.expireSnapshots(
                _wh(warehouse), db, table, retain_max, retain_min, max_deletes, time_retained_ms
            )
        )

    def create_tag(
        self, warehouse: str | os.PathLike[str], db: str, table: str, tag: str, snapshot_id: int
    ) -> None:
        """Java's ``createTag(tag, snapshot_id)``: the file ``tag/tag-<tag>``."""
        self._java.createTag(_wh(warehouse), db, table, tag, snapshot_id)

    def read_tag(
        self, warehouse: str | os.PathLike[str], db: str, table: str, tag: str
    ) -> list[list[Any]]:
        """The rows of a tag (``scan.tag-name``) as Java reads them, in canonical encoding."""
        types = self.read_table(warehouse, db, table).types
        raw = json.loads(self._java.readTag(_wh(warehouse), db, table, tag))
        return [[_from_wire(v, t) for v, t in zip(r, types, strict=True)] for r in raw]

    def commit_message_version(self) -> int:
        """Java's ``CommitMessageSerializer.getVersion()`` (11 for Paimon 1.4)."""
        return int(self._java.commitMessageVersion())

    def write_rows_and_serialize(
        self,
        warehouse: str | os.PathLike[str],
        db: str,
        table: str,
        rows: Iterable[Sequence[Any]] | pa.Table,
    ) -> bytes:
        """Java writes the rows without committing; its messages as ``serializeList`` bytes."""
        if isinstance(rows, pa.Table):
            rows = canonical_rows(rows)
        payload = json.dumps([to_wire(list(r)) for r in rows])
        return bytes(self._java.writeRowsAndSerialize(_wh(warehouse), db, table, payload))

    def commit_serialized_messages(
        self,
        warehouse: str | os.PathLike[str],
        db: str,
        table: str,
        version: int,
        list_bytes: bytes,
    ) -> int:
        """Java deserializes ``serializeList`` bytes of ``version`` and commits them in one batch
        commit; returns the latest snapshot id afterwards."""
        return int(
            self._java.commitSerializedMessages(
                _wh(warehouse), db, table, version, bytearray(list_bytes)
            )
        )

    # -- bucketing -----------------------------------------------------------------------------

    def buckets(
        self, key_types: Sequence[TypeJson], rows: Iterable[Sequence[Any]], nums: Iterable[int]
    ) -> JavaBuckets:
        """Java's BinaryRow hash and fixed-bucket assignment for each key row."""
        out = json.loads(
            self._java.buckets(
                json.dumps(list(key_types)),
                json.dumps([to_wire(list(r)) for r in rows]),
                json.dumps(list(nums)),
            )
        )
        return JavaBuckets(out["hashes"], {int(n): b for n, b in out["buckets"].items()})


# -- canonical encoding -------------------------------------------------------------------------


def canonical_rows(table: pa.Table | pa.RecordBatch) -> list[list[Any]]:
    """Rows of an Arrow table in the canonical encoding (column order kept, rows unsorted)."""
    if isinstance(table, pa.RecordBatch):
        table = pa.Table.from_batches([table])
    columns = [_canonical_array(col.combine_chunks()) for col in table.columns]
    return [list(row) for row in zip(*columns, strict=True)] if columns else []


def sorted_rows(rows: Iterable[Sequence[Any]]) -> list[list[Any]]:
    """Rows in a deterministic order, so Java's and our (unordered) reads compare with ``==``."""
    return sorted((list(r) for r in rows), key=_sort_key)


def to_wire(value: Any) -> Any:
    """A canonical (or plain Python) value as the JSON the Java helper accepts."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        return repr(value)
    if isinstance(value, decimal.Decimal):
        return format(value, "f")
    if isinstance(value, bytes | bytearray | memoryview):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, dt.datetime):
        return _datetime_nanos(value)
    if isinstance(value, dt.date):
        return (value - _EPOCH_DATE).days
    if isinstance(value, dt.time):
        ms = (value.hour * 3600 + value.minute * 60 + value.second) * 1000
        return ms + value.microsecond // 1000
    if isinstance(value, Mapping):
        return [[to_wire(k), to_wire(v)] for k, v in value.items()]
    if isinstance(value, list | tuple):
        return [to_wire(v) for v in value]
    raise TypeError(f"no wire encoding for {type(value).__name__}: {value!r}")


def _wh(warehouse: str | os.PathLike[str]) -> str:
    """Absolute local paths, since the JVM would resolve relative ones against its own cwd."""
    path = os.fspath(warehouse)
    return path if "://" in path else os.path.abspath(path)


def _datetime_nanos(value: dt.datetime) -> int:
    delta = value - (_EPOCH_NAIVE if value.tzinfo is None else _EPOCH_UTC)
    micros = (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
    return micros * 1_000 + int(getattr(value, "nanosecond", 0))  # pandas.Timestamp keeps ns


def _sort_key(row: list[Any]) -> str:
    return json.dumps(row, default=lambda v: "b64:" + base64.b64encode(v).decode("ascii"))


def _float(value: float) -> float:
    return math.nan if math.isnan(value) else value


def _sorted_pairs(pairs: Iterable[Sequence[Any]]) -> list[list[Any]]:
    return sorted(([k, v] for k, v in pairs), key=lambda p: _sort_key([p[0]]))


# -- Java wire JSON -> canonical ---------------------------------------------------------------


def _type_root(type_: TypeJson) -> str:
    name = type_ if isinstance(type_, str) else str(type_["type"])
    for stop in ("(", " ", "<"):
        name = name.split(stop, 1)[0]
    return name.upper()


def _from_wire(value: Any, type_: TypeJson) -> Any:
    if value is None:
        return None
    root = _type_root(type_)
    if root in ("FLOAT", "DOUBLE"):
        return _float(float(value))
    if root in ("BINARY", "VARBINARY", "BYTES"):
        return base64.b64decode(value)
    if isinstance(type_, dict):
        if root == "ARRAY":
            return [_from_wire(v, type_["element"]) for v in value]
        if root == "MAP":
            return _sorted_pairs(
                (_from_wire(k, type_["key"]), _from_wire(v, type_["value"])) for k, v in value
            )
        if root == "MULTISET":
            return _sorted_pairs((_from_wire(k, type_["element"]), v) for k, v in value)
        if root == "ROW":
            fields = type_["fields"]
            return [_from_wire(v, f["type"]) for v, f in zip(value, fields, strict=True)]
    return value


# -- Arrow -> canonical ------------------------------------------------------------------------


def _canonical_array(arr: pa.Array) -> list[Any]:
    t = arr.type
    if pa.types.is_dictionary(t):
        return _canonical_array(arr.dictionary_decode())
    if pa.types.is_timestamp(t):
        factor = _NANOS_PER_UNIT[t.unit]
        return [None if v is None else v * factor for v in arr.cast(pa.int64()).to_pylist()]
    if pa.types.is_date32(t):
        return arr.cast(pa.int32()).to_pylist()
    if pa.types.is_date64(t):
        return [None if v is None else v // 86_400_000 for v in arr.cast(pa.int64()).to_pylist()]
    if pa.types.is_time(t):
        ints = arr.cast(pa.int32() if pa.types.is_time32(t) else pa.int64()).to_pylist()
        nanos = _NANOS_PER_UNIT[t.unit]
        return [None if v is None else v * nanos // 1_000_000 for v in ints]
    if pa.types.is_decimal(t):
        return [None if v is None else format(v, "f") for v in arr.to_pylist()]
    if pa.types.is_floating(t):
        return [None if v is None else _float(v) for v in arr.to_pylist()]
    if pa.types.is_map(t):
        pairs = list(zip(_canonical_array(arr.keys), _canonical_array(arr.items), strict=True))
        offsets, valid = arr.offsets.to_pylist(), arr.is_valid().to_pylist()
        return [
            _sorted_pairs(pairs[offsets[i] : offsets[i + 1]]) if valid[i] else None
            for i in range(len(arr))
        ]
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        values = _canonical_array(arr.values)
        offsets, valid = arr.offsets.to_pylist(), arr.is_valid().to_pylist()
        return [values[offsets[i] : offsets[i + 1]] if valid[i] else None for i in range(len(arr))]
    if pa.types.is_fixed_size_list(t):
        values, size = _canonical_array(arr.values), t.list_size
        valid = arr.is_valid().to_pylist()
        start = arr.offset
        return [
            values[(start + i) * size : (start + i + 1) * size] if valid[i] else None
            for i in range(len(arr))
        ]
    if pa.types.is_struct(t):
        children = [_canonical_array(c) for c in arr.flatten()]
        valid = arr.is_valid().to_pylist()
        return [[c[i] for c in children] if valid[i] else None for i in range(len(arr))]
    if pa.types.is_null(t):
        return [None] * len(arr)
    if (
        pa.types.is_boolean(t)
        or pa.types.is_integer(t)
        or pa.types.is_string(t)
        or pa.types.is_large_string(t)
        or pa.types.is_binary(t)
        or pa.types.is_large_binary(t)
        or pa.types.is_fixed_size_binary(t)
        or getattr(pa.types, "is_string_view", lambda _t: False)(t)
        or getattr(pa.types, "is_binary_view", lambda _t: False)(t)
    ):
        return arr.to_pylist()
    raise TypeError(f"no canonical encoding for Arrow type {t}")


# -- H3 float keys: raw IEEE bits of FLOAT/DOUBLE values, and reads split by bucket -------------


def float_bits(value: float, type_root: str = "DOUBLE") -> dict[str, str]:
    """A FLOAT/DOUBLE wire value given by its raw IEEE bits (keeps NaN payloads and -0.0)."""
    import struct

    if type_root == "FLOAT":
        return {"bits": format(struct.unpack("<I", struct.pack("<f", value))[0], "x")}
    return {"bits": format(struct.unpack("<Q", struct.pack("<d", value))[0], "x")}


def write_rows_float_bits(
    oracle: JavaOracle,
    warehouse: str | os.PathLike[str],
    db: str,
    table: str,
    rows: Iterable[Sequence[Any]],
) -> int:
    """One Java batch write + commit of a fixed-bucket table, where FLOAT/DOUBLE values may be
    ``{"bits": hex}`` (see :func:`float_bits`); other values as for ``write_rows``. Returns the
    latest snapshot id afterwards."""
    payload = json.dumps([[v if isinstance(v, dict) else to_wire(v) for v in r] for r in rows])
    return int(oracle._java.writeRowsFloatBits(_wh(warehouse), db, table, payload))


def buckets_float_bits(
    oracle: JavaOracle,
    key_types: Sequence[TypeJson],
    rows: Iterable[Sequence[Any]],
    nums: Iterable[int],
) -> JavaBuckets:
    """``JavaOracle.buckets`` with FLOAT/DOUBLE values allowed as ``{"bits": hex}``."""
    out = json.loads(
        oracle._java.bucketsFloatBits(
            json.dumps(list(key_types)),
            json.dumps([[v if isinstance(v, dict) else to_wire(v) for v in r] for r in rows]),
            json.dumps(list(nums)),
        )
    )
    return JavaBuckets(out["hashes"], {int(n): b for n, b in out["buckets"].items()})


class JavaSplitRead(NamedTuple):
    """One split of Java's read: its bucket, files (name, level, rows), rows in canonical
    encoding, and per row the raw bits (hex, or None) of each FLOAT/DOUBLE field."""

    partition: list[Any]
    bucket: int
    files: list[tuple[str, int, int]]
    rows: list[list[Any]]
    bits: list[list[str | None]]


def read_table_by_bucket(
    oracle: JavaOracle, warehouse: str | os.PathLike[str], db: str, table: str
) -> list[JavaSplitRead]:
    """The latest snapshot as Java reads it, one entry per split (one bucket each)."""
    out = json.loads(oracle._java.readTableByBucket(_wh(warehouse), db, table))
    types = out["types"]
    return [
        JavaSplitRead(
            s["partition"],
            int(s["bucket"]),
            [(str(n), int(level), int(c)) for n, level, c in s["files"]],
            [[_from_wire(v, t) for v, t in zip(r, types, strict=True)] for r in s["rows"]],
            s["bits"],
        )
        for s in out["splits"]
    ]


# -- H5 orphan files: Java's LocalOrphanFilesClean, and writing and reading a branch -------------


class JavaOrphanFiles(NamedTuple):
    """What Java's orphan-file cleanup deleted (or would delete): its result row and paths
    (scheme-less, so they compare with ours on local disk)."""

    count: int
    bytes: int
    paths: list[str]


def remove_orphan_files(
    oracle: JavaOracle,
    warehouse: str | os.PathLike[str],
    db: str,
    table: str,
    older_than_ms: int,
    *,
    dry_run: bool,
) -> JavaOrphanFiles:
    """Java's ``LocalOrphanFilesClean(table, older_than_ms, dry_run).clean()``."""
    out = json.loads(
        oracle._java.removeOrphanFiles(_wh(warehouse), db, table, older_than_ms, dry_run)
    )
    paths = [p.removeprefix("file:") for p in out["paths"]]
    return JavaOrphanFiles(int(out["count"]), int(out["bytes"]), sorted(paths))


def remove_database_orphan_files(
    oracle: JavaOracle,
    warehouse: str | os.PathLike[str],
    db: str,
    older_than_ms: int,
    *,
    dry_run: bool,
) -> tuple[int, int]:
    """Java's ``executeDatabaseOrphanFiles`` over every table of ``db``: (count, bytes)."""
    out = json.loads(
        oracle._java.removeDatabaseOrphanFiles(_wh(warehouse), db, older_than_ms, dry_run)
    )
    return int(out["count"]), int(out["bytes"])


def write_rows_to_new_branch(
    oracle: JavaOracle,
    warehouse: str | os.PathLike[str],
    db: str,
    table: str,
    branch: str,
    tag: str,
    rows: Iterable[Sequence[Any]],
) -> int:
    """Java creates ``branch`` from ``tag`` and commits ``rows`` to it; the branch's latest id."""
    payload = json.dumps([to_wire(list(r)) for r in rows])
    return int(oracle._java.writeRowsToNewBranch(_wh(warehouse), db, table, branch, tag, payload))


def read_branch(
    oracle: JavaOracle, warehouse: str | os.PathLike[str], db: str, table: str, branch: str
) -> list[list[Any]]:
    """The rows of ``branch``'s latest snapshot as Java reads them, in canonical encoding."""
    types = oracle.read_table(warehouse, db, table).types
    raw = json.loads(oracle._java.readBranch(_wh(warehouse), db, table, branch))
    return [[_from_wire(v, t) for v, t in zip(r, types, strict=True)] for r in raw]


# -- end H5 orphan files ------------------------------------------------------------------------


# -- ALTER TABLE options --------------------------------------------------------------------------


class JavaAlter(NamedTuple):
    """What Java's ``Catalog.alterTable`` did: the table's schema id after it, or its refusal
    (``"ExceptionClass: message"`` of the root cause) and ``schema_id`` None."""

    schema_id: int | None
    error: str | None


def alter_table_options(
    oracle: JavaOracle,
    warehouse: str | os.PathLike[str],
    db: str,
    table: str,
    changes: Sequence[tuple[str, str | None]],
) -> JavaAlter:
    """One Java ALTER TABLE of ``(key, value)`` changes: ``SchemaChange.setOption``, or
    ``removeOption`` where the value is None."""
    payload = json.dumps(
        [
            {"action": "removeOption", "key": k}
            if v is None
            else {"action": "setOption", "key": k, "value": v}
            for k, v in changes
        ]
    )
    out = json.loads(oracle._java.alterTableOptions(_wh(warehouse), db, table, payload))
    if "error" in out:
        return JavaAlter(None, str(out["error"]))
    return JavaAlter(int(out["schemaId"]), None)


def table_schema(
    oracle: JavaOracle, warehouse: str | os.PathLike[str], db: str, table: str
) -> dict[str, Any]:
    """The table's current schema as Java loads it: ``{"id", "options", "primaryKeys",
    "partitionKeys"}``."""
    result: dict[str, Any] = json.loads(oracle._java.tableSchema(_wh(warehouse), db, table))
    return result


class JavaTags(NamedTuple):
    """Java's TagManager: the tag names as SHOW TAGS sorts them, and each tag's snapshot id."""

    names: list[str]
    ids: dict[str, int]


def create_tag_retained(
    oracle: JavaOracle,
    warehouse: str | os.PathLike[str],
    db: str,
    table: str,
    tag: str,
    snapshot_id: int,
    time_retained: str,
) -> None:
    """Java's ``createTag(tag, snapshot_id, TimeUtils.parseDuration(time_retained))``."""
    oracle._java.createTagRetained(_wh(warehouse), db, table, tag, snapshot_id, time_retained)


def list_tags(
    oracle: JavaOracle, warehouse: str | os.PathLike[str], db: str, table: str
) -> JavaTags:
    """The tags Java's TagManager finds in the table."""
    raw = json.loads(oracle._java.listTags(_wh(warehouse), db, table))
    return JavaTags(list(raw["names"]), {k: int(v) for k, v in raw["ids"].items()})


def delete_tags(
    oracle: JavaOracle, warehouse: str | os.PathLike[str], db: str, table: str, tags: str
) -> None:
    """Java's ``deleteTags(tags)`` (comma-separated names)."""
    oracle._java.deleteTags(_wh(warehouse), db, table, tags)


def rollback_to(
    oracle: JavaOracle, warehouse: str | os.PathLike[str], db: str, table: str, version: str
) -> None:
    """Java's rollback: ``version`` of digits is a snapshot id, anything else a tag name."""
    oracle._java.rollbackTo(_wh(warehouse), db, table, version)


def read_system_table(
    oracle: JavaOracle, warehouse: str | os.PathLike[str], db: str, table: str
) -> JavaRead:
    """Rows of the system table ``table`` (``'t$files'``) as Java's catalog and reader give
    them, in Java's order, in the canonical encoding of ``read_table``."""
    out = json.loads(oracle._java.readSystemTable(_wh(warehouse), db, table))
    types: list[TypeJson] = out["types"]
    rows = [[_from_wire(v, t) for v, t in zip(r, types, strict=True)] for r in out["rows"]]
    return JavaRead(out["fields"], rows, types)
