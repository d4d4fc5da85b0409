"""Where a table's files live: partition and bucket directories, and file names.

Mirrors org.apache.paimon.utils.{FileStorePathFactory, PartitionPathUtils} and
org.apache.paimon.io.DataFilePathFactory.
"""

from __future__ import annotations

import datetime as dt
import decimal
import os
import uuid
from typing import Any

from paimon_pyspark.store.bucket_mode import POSTPONE_BUCKET
from paimon_pyspark.types.data_types import AtomicType, DataType, TimestampType

_ESCAPED = set("\"#%'*/:=?\\{}[]^")


def escape_path_name(text: str) -> str:
    out = []
    for ch in text:
        if ord(ch) < 0x20 or ord(ch) == 0x7F or ch in _ESCAPED:
            out.append(f"%{ord(ch):02X}")
        else:
            out.append(ch)
    return "".join(out)


def partition_value_string(value: Any, t: DataType, legacy: bool, default_name: str) -> str:
    """The text of one partition value in a directory name (Java's partition computer).

    With ``partition.legacy-name`` (the default) Java writes the internal value's toString:
    a DATE is its epoch day. Without it, values are cast to STRING as SQL would.
    """
    if value is None:
        return default_name
    if isinstance(value, str):
        return default_name if value.strip() == "" else value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dt.datetime):
        if legacy:
            return _java_local_date_time(value)
        precision = t.precision if isinstance(t, TimestampType) else 6
        text = value.strftime("%Y-%m-%d %H:%M:%S")
        if precision > 0 and value.microsecond:
            text += "." + f"{value.microsecond:06d}"[:precision].rstrip("0")
        return text
    if isinstance(value, dt.date):
        if legacy and isinstance(t, AtomicType) and t.name == "DATE":
            return str((value - dt.date(1970, 1, 1)).days)
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return format(value, "f")
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return str(value)


def _java_local_date_time(value: dt.datetime) -> str:
    """LocalDateTime.toString: seconds and fractions only when non-zero."""
    text = value.strftime("%Y-%m-%dT%H:%M")
    if value.second or value.microsecond:
        text += f":{value.second:02d}"
        if value.microsecond:
            frac = f"{value.microsecond:06d}"
            text += "." + (frac[:3] if frac.endswith("000") else frac)
    return text


def partition_path(names: list[str], values: list[str]) -> str:
    """``k1=v1/k2=v2`` (escaped); empty for an unpartitioned table."""
    return "/".join(
        f"{escape_path_name(k)}={escape_path_name(v)}" for k, v in zip(names, values, strict=False)
    )


def bucket_dir(bucket: int) -> str:
    return "bucket-postpone" if bucket == POSTPONE_BUCKET else f"bucket-{bucket}"


class PathFactory:
    """Names files of one writer or committer: one uuid per factory, counters per kind."""

    def __init__(self, table_path: str) -> None:
        self.table_path = table_path
        self.uuid = str(uuid.uuid4())
        self._counters: dict[str, int] = {}

    def _next(self, kind: str) -> int:
        n = self._counters.get(kind, 0)
        self._counters[kind] = n + 1
        return n

    @property
    def manifest_dir(self) -> str:
        return os.path.join(self.table_path, "manifest")

    @property
    def snapshot_dir(self) -> str:
        return os.path.join(self.table_path, "snapshot")

    @property
    def index_dir(self) -> str:
        return os.path.join(self.table_path, "index")

    def new_manifest_file(self) -> str:
        return f"manifest-{self.uuid}-{self._next('manifest')}"

    def new_manifest_list(self) -> str:
        return f"manifest-list-{self.uuid}-{self._next('manifest-list')}"

    def new_index_manifest(self) -> str:
        return f"index-manifest-{self.uuid}-{self._next('index-manifest')}"

    def new_index_file(self) -> str:
        return f"index-{self.uuid}-{self._next('index')}"

    def new_data_file(self, prefix: str, extension: str) -> str:
        return f"{prefix}{self.uuid}-{self._next('data')}.{extension}"

    def bucket_path(self, partition_rel: str, bucket: int) -> str:
        if partition_rel:
            return os.path.join(self.table_path, partition_rel, bucket_dir(bucket))
        return os.path.join(self.table_path, bucket_dir(bucket))
