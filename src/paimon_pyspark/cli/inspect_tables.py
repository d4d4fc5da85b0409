"""``tables``, ``show db.t`` and ``snapshots db.t``: read from the catalog and the system
tables (table/system_tables.py: ``$schemas``, ``$options``, ``$snapshots``, ``$partitions``),
in this process, without Spark."""

from __future__ import annotations

import json
from typing import Any

from paimon_pyspark.catalog import Catalog
from paimon_pyspark.cli.output import Report, View

SNAPSHOT_COLUMNS = (
    "snapshot_id",
    "schema_id",
    "commit_kind",
    "commit_time",
    "total_record_count",
    "delta_record_count",
    "commit_user",
)


def _rows(catalog: Catalog, table: str, system: str) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = (
        catalog.get_system_table(f"{table}${system}").to_arrow().to_pylist()
    )
    return rows


def tables(catalog: Catalog) -> Report:
    names = [
        f"{database}.{name}"
        for database in catalog.list_databases()
        for name in catalog.list_tables(database)
    ]
    rows = [name.split(".", 1) for name in names]
    return Report(
        {"warehouse": catalog.uri, "tables": names},
        [View(f"tables in {catalog.uri}", ("database", "table"), rows)],
    )


def show(catalog: Catalog, table: str) -> Report:
    catalog.get_table(table)  # a missing table raises here, named
    schema = _rows(catalog, table, "schemas")[-1]
    fields = json.loads(schema["fields"])
    options = {r["key"]: r["value"] for r in _rows(catalog, table, "options")}
    snapshots = _rows(catalog, table, "snapshots")
    latest = snapshots[-1] if snapshots else None
    partitions = [
        {
            "partition": p["partition"],
            "file_count": p["file_count"],
            "record_count": p["record_count"],
            "file_size_in_bytes": p["file_size_in_bytes"],
            "last_update_time": p["last_update_time"],
        }
        for p in _rows(catalog, table, "partitions")
    ]
    totals = {
        key: sum(p[key] for p in partitions)
        for key in ("file_count", "record_count", "file_size_in_bytes")
    }
    partition_keys: list[str] = json.loads(schema["partition_keys"])
    primary_keys: list[str] = json.loads(schema["primary_keys"])
    document = {
        "table": table,
        "schema": {
            "schema_id": schema["schema_id"],
            "fields": fields,
            "partition_keys": partition_keys,
            "primary_keys": primary_keys,
            "comment": schema["comment"],
        },
        "options": options,
        "latest_snapshot": latest,
        "partitions": partitions,
        "totals": totals,
    }
    views = [
        View(
            f"{table}: schema {schema['schema_id']}",
            ("id", "name", "type", "key"),
            [
                (
                    f["id"],
                    f["name"],
                    f["type"],
                    _key_kind(f["name"], partition_keys, primary_keys),
                )
                for f in fields
            ],
        ),
        View(f"{table}: options", ("key", "value"), sorted(options.items())),
        View(
            f"{table}: latest snapshot",
            SNAPSHOT_COLUMNS,
            [[latest[c] for c in SNAPSHOT_COLUMNS]] if latest else [],
        ),
        View(
            f"{table}: files per partition",
            ("partition", "files", "rows", "bytes"),
            [
                *((p["partition"] or "(unpartitioned)", *_counts(p)) for p in partitions),
                *([("total", *_counts(totals))] if len(partitions) > 1 else []),
            ],
        ),
    ]
    return Report(document, views)


def _counts(row: dict[str, Any]) -> tuple[int, int, int]:
    return row["file_count"], row["record_count"], row["file_size_in_bytes"]


def _key_kind(name: str, partition_keys: list[str], primary_keys: list[str]) -> str:
    kinds = [
        k for k, keys in (("partition", partition_keys), ("primary", primary_keys)) if name in keys
    ]
    return ", ".join(kinds)


def snapshots(catalog: Catalog, table: str) -> Report:
    catalog.get_table(table)
    rows = _rows(catalog, table, "snapshots")
    return Report(
        {"table": table, "snapshots": rows},
        [
            View(
                f"{table}: snapshots",
                SNAPSHOT_COLUMNS,
                [[r[c] for c in SNAPSHOT_COLUMNS] for r in rows],
            )
        ],
    )
