"""``data-file.external-paths``: where new data files go (round-robin, weight-robin,
specific-fs), that reads follow a manifest's external path only under a configured root (issue
14's hardening: a tampered manifest is refused, nothing is read), that commits and expiry
delete only inside those roots, and the options Java refuses. Java reading and writing such
tables: tests/interop/test_options_b_java.py."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from paimon_pyspark import CatalogFactory, Schema
from paimon_pyspark.errors import (
    ExternalPathError,
    InvalidCommitMessageError,
    OptionError,
    UnsupportedOptionError,
)
from paimon_pyspark.procedures import compact, expire_snapshots
from paimon_pyspark.spec import manifest as mf
from paimon_pyspark.spec.murmur import murmur3_32
from paimon_pyspark.store.external_paths import entropy_dirs

SCHEMA = pa.schema([pa.field("k", pa.int64(), nullable=False), pa.field("v", pa.string())])


def _catalog(tmp_path: Path) -> Any:
    catalog = CatalogFactory.create({"warehouse": str(tmp_path / "wh")})
    catalog.create_database("db", ignore_if_exists=True)
    return catalog


def _table(tmp_path: Path, options: dict[str, str], pk: bool = False, name: str = "t") -> Any:
    catalog = _catalog(tmp_path)
    catalog.create_table(
        f"db.{name}",
        Schema.from_pyarrow_schema(SCHEMA, primary_keys=["k"] if pk else [], options=options),
    )
    return catalog.get_table(f"db.{name}")


def _write(table: Any, start: int, n: int) -> None:
    builder = table.new_batch_write_builder()
    with builder.new_write() as w:
        ks = list(range(start, start + n))
        w.write_arrow(pa.table({"k": ks, "v": [f"v{k}" for k in ks]}, SCHEMA))
        messages = w.prepare_commit()
    builder.new_commit().commit(messages)


def _rows(table: Any) -> list[tuple[int, str]]:
    rb = table.new_read_builder()
    data = rb.new_read().to_arrow(rb.new_scan().plan().splits())
    return sorted(zip(data.column("k").to_pylist(), data.column("v").to_pylist(), strict=True))


def _files(root: Path) -> set[str]:
    return {str(p) for p in root.rglob("*") if p.is_file()} if root.exists() else set()


def _ext(tmp_path: Path, *names: str) -> tuple[list[Path], str]:
    roots = [tmp_path / n for n in names]
    return roots, ",".join(f"file://{r}" for r in roots)


def test_round_robin_writes_every_file_under_the_roots(tmp_path: Path) -> None:
    roots, paths = _ext(tmp_path, "ext1", "ext2")
    options = {
        "bucket": "2",
        "bucket-key": "k",
        "data-file.external-paths": paths,
        "data-file.external-paths.strategy": "round-robin",
    }
    table = _table(tmp_path, {**options, "target-file-size": "1 b"})  # a file per row
    for i in range(2):
        _write(table, 100 * i, 10)
    assert _rows(table) == [(k, f"v{k}") for i in range(2) for k in range(100 * i, 100 * i + 10)]
    splits = table.new_read_builder().new_scan().plan().splits()
    metas = [f for s in splits for f in s.files]
    assert metas and all(f.external_path and f.external_path.startswith("file:/") for f in metas)
    # each bucket writer turns round its roots: both roots get files of both buckets
    for root in roots:
        assert {p.split("/bucket-")[1][0] for p in _files(root)} == {"0", "1"}
    table_files = {p for p in _files(Path(table.path)) if "/bucket-" in p}
    assert table_files == set()  # no data file in the table directory
    for s in splits:  # the split's paths are where the files lie
        assert all(os.path.isfile(p) for p in s.file_paths)


def test_primary_key_table_with_compaction(tmp_path: Path) -> None:
    roots, paths = _ext(tmp_path, "a")
    options = {
        "bucket": "1",
        "data-file.external-paths": paths,
        "data-file.external-paths.strategy": "round-robin",
    }
    table = _table(tmp_path, options, pk=True)
    _write(table, 0, 30)
    _write(table, 10, 30)
    catalog = _catalog(tmp_path)
    compact(catalog, "db.t", compact_strategy="full")
    assert _rows(table) == [(k, f"v{k}") for k in range(40)]
    files = [f for s in table.new_read_builder().new_scan().plan().splits() for f in s.files]
    assert all(f.external_path and str(roots[0]) in f.external_path for f in files)


def test_specific_fs_and_none(tmp_path: Path) -> None:
    roots, paths = _ext(tmp_path, "local")
    options = {
        "bucket": "1",
        "bucket-key": "k",
        "data-file.external-paths": f"s3://somewhere/x,{paths}",
        "data-file.external-paths.strategy": "specific-fs",
        "data-file.external-paths.specific-fs": "file",
    }
    table = _table(tmp_path, options)
    _write(table, 0, 5)
    assert len(_files(roots[0])) == 1 and _rows(table) == [(k, f"v{k}") for k in range(5)]
    none = _table(
        tmp_path,
        {"bucket": "1", "bucket-key": "k", "data-file.external-paths": paths},
        name="n",
    )
    _write(none, 0, 5)  # strategy none (the default): files stay in the table directory
    assert len(_files(roots[0])) == 1
    assert all(
        f.external_path is None
        for s in none.new_read_builder().new_scan().plan().splits()
        for f in s.files
    )


@pytest.mark.parametrize(
    ("options", "error", "match"),
    [
        ({"data-file.external-paths.strategy": "round-robin"}, OptionError, "no scheme"),
        ({"data-file.external-paths.strategy": "specific-fs"}, OptionError, "specific-fs"),
        ({"data-file.external-paths.strategy": "bogus"}, OptionError, "must be one of"),
    ],
    ids=["no-scheme", "specific-fs-unset", "bad-strategy"],
)
def test_refused_options(
    tmp_path: Path, options: dict[str, str], error: type[Exception], match: str
) -> None:
    """As Java, the table loads (so ALTER TABLE can correct it); a write raises."""
    table = _table(tmp_path, {"data-file.external-paths": "/no/scheme", **options})
    with pytest.raises(error, match=match):
        _write(table, 0, 1)
    assert table.snapshot_manager.latest() is None


def test_root_on_another_filesystem_is_refused(tmp_path: Path) -> None:
    table = _table(
        tmp_path,
        {
            "data-file.external-paths": "s3://bucket/x",
            "data-file.external-paths.strategy": "round-robin",
        },
    )
    with pytest.raises(UnsupportedOptionError, match="another filesystem"):
        _write(table, 0, 1)


def _tamper(table: Any, new_path: str) -> None:
    """Point every entry of the latest snapshot's delta manifest at ``new_path``'s directory."""
    mio = table.manifest_io
    snapshot = table.snapshot_manager.latest()
    for meta in mio.read_manifest_list(snapshot.delta_manifest_list):
        entries = mio.read_manifest(meta.file_name)
        forged = [
            dataclasses.replace(
                e, file=dataclasses.replace(e.file, external_path=f"file:{new_path}")
            )
            for e in entries
        ]
        Path(mio.path(meta.file_name)).write_bytes(mf.encode_manifest_entries(forged, mio.codec))


def test_tampered_manifest_outside_the_roots_is_refused(tmp_path: Path) -> None:
    _, paths = _ext(tmp_path, "ext")
    options = {
        "bucket": "1",
        "bucket-key": "k",
        "data-file.external-paths": paths,
        "data-file.external-paths.strategy": "round-robin",
    }
    table = _table(tmp_path, options)
    _write(table, 0, 5)
    victim = tmp_path / "secret" / "data.parquet"
    victim.parent.mkdir()
    pq.write_table(pa.table({"k": pa.array([666], pa.int64()), "v": ["stolen"]}), victim)
    _tamper(table, str(victim))
    fresh = _catalog(tmp_path).get_table("db.t")
    with pytest.raises(ExternalPathError, match="not under"):
        _rows(fresh)
    # a root given as a prefix of a sibling directory ("ext" vs "ext-evil") does not admit it
    evil = tmp_path / "ext-evil" / "bucket-0" / "x.parquet"
    evil.parent.mkdir(parents=True)
    pq.write_table(pa.table({"k": pa.array([1], pa.int64()), "v": ["x"]}), evil)
    _tamper(fresh, str(evil))
    with pytest.raises(ExternalPathError):
        _rows(_catalog(tmp_path).get_table("db.t"))
    # expiry deletes neither
    _write(fresh, 10, 1)
    _write(fresh, 11, 1)
    expire_snapshots(_catalog(tmp_path), "db.t", retain_max=1, retain_min=1)
    assert victim.exists() and evil.exists()


def test_commit_message_outside_the_roots_is_refused(tmp_path: Path) -> None:
    _, paths = _ext(tmp_path, "ext")
    options = {
        "bucket": "1",
        "bucket-key": "k",
        "data-file.external-paths": paths,
        "data-file.external-paths.strategy": "round-robin",
    }
    table = _table(tmp_path, options)
    builder = table.new_batch_write_builder()
    with builder.new_write() as w:
        w.write_arrow(pa.table({"k": [1], "v": ["a"]}, SCHEMA))
        messages = w.prepare_commit()
    m = messages[0]
    forged_file = dataclasses.replace(
        m.new_files[0], external_path=f"file:{tmp_path}/elsewhere/x.parquet"
    )
    forged = dataclasses.replace(
        m, data_increment=dataclasses.replace(m.data_increment, new_files=(forged_file,))
    )
    with pytest.raises(InvalidCommitMessageError, match="not under"):
        builder.new_commit().commit([forged])
    builder.new_commit().commit(messages)
    assert _rows(table) == [(1, "a")]


def test_expiry_deletes_the_external_files_of_expired_snapshots_only(tmp_path: Path) -> None:
    roots, paths = _ext(tmp_path, "e1", "e2")
    options = {
        "bucket": "1",
        "data-file.external-paths": paths,
        "data-file.external-paths.strategy": "round-robin",
        "write-only": "true",
    }
    table = _table(tmp_path, options, pk=True)
    for i in range(3):
        _write(table, 0, 20 + i)  # the same keys again: compaction makes the old files dead
    before = _files(roots[0]) | _files(roots[1])
    planted = roots[0] / "bucket-0" / "planted.parquet"
    planted.parent.mkdir(parents=True, exist_ok=True)
    planted.write_bytes(b"not the table's")
    catalog = _catalog(tmp_path)
    compact(catalog, "db.t", compact_strategy="full")
    live = {
        f.external_path.removeprefix("file:")
        for s in table.new_read_builder().new_scan().plan().splits()
        for f in s.files
    }
    assert not live & before  # the compaction rewrote every file
    assert expire_snapshots(catalog, "db.t", retain_max=1, retain_min=1) > 0
    after = _files(roots[0]) | _files(roots[1])
    assert after == live | {str(planted)}
    assert _rows(catalog.get_table("db.t")) == [(k, f"v{k}") for k in range(22)]


def test_weight_robin(tmp_path: Path) -> None:
    """``weight-robin`` picks a root at random by ``data-file.external-paths.weights`` (Java's
    WeightedExternalPathProvider); weights that do not fit are refused as Java refuses them."""
    roots, paths = _ext(tmp_path, "light", "heavy")
    base = {
        "bucket": "1",
        "bucket-key": "k",
        "data-file.external-paths": paths,
        "data-file.external-paths.strategy": "weight-robin",
        "target-file-size": "1 b",
    }
    table = _table(tmp_path, {**base, "data-file.external-paths.weights": f"1,{2**31 - 1}"})
    _write(table, 0, 20)
    assert len(_files(roots[1])) == 20 and not _files(roots[0])  # 1 in 2**31 per file
    assert _rows(table) == [(k, f"v{k}") for k in range(20)]
    for i, (weights, match) in enumerate((("1", "as many"), ("1,0", "positive"), ("x", "posit"))):
        bad = _table(tmp_path, {**base, "data-file.external-paths.weights": weights}, name=f"w{i}")
        with pytest.raises(OptionError, match=match):
            _write(bad, 0, 1)


def test_entropy_inject(tmp_path: Path) -> None:
    """``entropy-inject``: roots in turn, each file under directories named by the low 20 bits
    of its name's murmur3 hash (Guava's murmur3_32; Java's own paths in
    tests/interop/test_options_b_java.py)."""
    assert murmur3_32(b"hello") == 0x248BFA47  # MurmurHash3 x86_32 reference values, seed 0
    assert murmur3_32(b"The quick brown fox jumps over the lazy dog") == 0x2E4FF723
    roots, paths = _ext(tmp_path, "r1", "r2")
    options = {
        "bucket": "1",
        "bucket-key": "k",
        "data-file.external-paths": paths,
        "data-file.external-paths.strategy": "entropy-inject",
    }
    table = _table(tmp_path, options)
    _write(table, 0, 5)
    _write(table, 5, 5)
    assert _rows(table) == [(k, f"v{k}") for k in range(10)]
    for s in table.new_read_builder().new_scan().plan().splits():
        for f in s.files:
            where = f"{roots[1]}/bucket-0/{entropy_dirs(f.file_name)}/{f.file_name}"
            assert f.external_path == f"file:{where}"


def test_object_store_roots(s3_catalog: Any, s3_server: Any, s3_bucket: str) -> None:
    """On an object-store table the roots are keys of the same store (another bucket too);
    the manifest records ``s3://bucket/key``."""
    other = s3_server.new_bucket()
    options = {
        "bucket": "1",
        "bucket-key": "k",
        "data-file.external-paths": f"s3://{other}/ext",
        "data-file.external-paths.strategy": "round-robin",
    }
    s3_catalog.create_table("db.t", Schema.from_pyarrow_schema(SCHEMA, options=options))
    table = s3_catalog.get_table("db.t")
    _write(table, 0, 5)
    _write(table, 5, 5)
    assert _rows(table) == [(k, f"v{k}") for k in range(10)]
    files = [f for s in table.new_read_builder().new_scan().plan().splits() for f in s.files]
    assert all(f.external_path.startswith(f"s3://{other}/ext/bucket-0/data-") for f in files)
    keys = s3_server.list_keys(other, "ext/")
    assert len(keys) == 2 and not [k for k in s3_server.list_keys(s3_bucket) if "/bucket-" in k]
