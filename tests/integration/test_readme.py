"""The README's Python examples run as written (on a temporary warehouse).

Every ```python block is read from README.md and run: the ones that use Spark are left to the
Spark docs' tests, and a new block fails ``test_every_python_block_is_run`` until a test here
runs it. The code spans of "Coming from pypaimon" (``CoreOptions.BUCKET.key()``,
``TableScan.with_shard(i, n)``, ...) are read from the README too and evaluated on a table, each
with a check of its result; only the objects they are called on are the test's.
"""

from __future__ import annotations

import ast
import keyword
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from table_helpers import read_all, sort_rows, write_commit
from tests.catalogs.hive_metastore import HiveMetastore
from tests.catalogs.rest_server import RestServer
from tests.s3_server import S3Server

import paimon_pyspark.errors
from paimon_pyspark import CatalogFactory, CoreOptions, FileStoreTable, FileSystemCatalog, Schema
from paimon_pyspark.catalog import catalog_exception
from paimon_pyspark.store.bucket_mode import POSTPONE_BUCKET, BucketMode

ROOT = Path(__file__).resolve().parents[2]
BLOCK = re.compile(r"```python\n(.*?)```", re.S)
SPAN = re.compile(r"`([^`]+)`")


def _readme() -> str:
    return (ROOT / "README.md").read_text()


def _blocks() -> list[str]:
    return BLOCK.findall(_readme())


def _block(marker: str) -> str:
    """The one README block containing ``marker``."""
    found = [b for b in _blocks() if marker in b]
    assert len(found) == 1, f"{len(found)} README blocks contain {marker!r}"
    return found[0]


def _section(title: str) -> str:
    text = _readme()
    start = text.index(f"## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end >= 0 else len(text)]


# What the tests here run; the other blocks are Spark's.
POSTPONE_MARKER = "rescale("
SEED_SPELLING_MARKER = "new_write_builder().with_overwrite()"
S3_MARKER = '"s3.endpoint"'
STREAM_MARKER = "new_stream_write_builder("
RAY_DUCKDB_MARKER = "to_duckdb("
CATALOGS_MARKER = '"metastore": "jdbc"'


def _use_blocks() -> list[str]:
    use, overwrite, primary_keys, dynamic = _blocks()[:4]
    assert "new_batch_write_builder" in use and "overwrite(" in overwrite
    assert "compact(catalog" in primary_keys and "db.users" in dynamic
    return [use, overwrite, primary_keys, dynamic]


def test_every_python_block_is_run() -> None:
    run = [*_use_blocks(), _block(POSTPONE_MARKER), _block(SEED_SPELLING_MARKER)]
    run += [_block(STREAM_MARKER), _block(RAY_DUCKDB_MARKER), _block(CATALOGS_MARKER)]
    run.append(next(b for b in _blocks() if S3_MARKER in b and "CatalogFactory" in b))
    not_run = [b for b in _blocks() if b not in run and "spark" not in b.lower()]
    assert not not_run, "README blocks no test runs:\n" + "\n---\n".join(not_run)


def _run_use_blocks(tmp_path: Path) -> dict[str, Any]:
    code = "\n".join(_use_blocks()).replace("/tmp/warehouse", str(tmp_path / "wh"))
    scope: dict[str, Any] = {}
    exec(compile(code, "README.md", "exec"), scope)
    return scope


def test_readme_api_examples_run_in_order(tmp_path: Path) -> None:
    scope = _run_use_blocks(tmp_path)

    catalog = scope["catalog"]
    prices = catalog.get_table("db.prices")
    rb = prices.new_read_builder()
    rows = rb.new_read().to_arrow(rb.new_scan().plan().splits()).to_pylist()
    assert rows == [{"order_id": 2, "price": 2.5, "kind": "+U"}]
    orders = catalog.get_table("db.orders")
    rb = orders.new_read_builder()
    assert rb.new_read().to_arrow(rb.new_scan().plan().splits()).num_rows == 0  # static overwrite
    users = catalog.get_table("db.users")
    assert users.bucket_mode == BucketMode.KEY_DYNAMIC


def test_readme_seed004_spelling_block_overwrites_the_partition_it_names(tmp_path: Path) -> None:
    """ "Coming from pypaimon"'s block, after the Use blocks (it writes their ``data``)."""
    scope = _run_use_blocks(tmp_path)
    table, data = scope["table"], scope["data"]
    before = table.snapshot_manager().get_latest_snapshot().id
    exec(compile(_block(SEED_SPELLING_MARKER), "README.md", "exec"), scope)
    assert sort_rows(read_all(table)) == sort_rows(data)
    latest = table.snapshot_manager().get_latest_snapshot()
    assert (latest.id, latest.commit_kind) == (before + 1, "OVERWRITE")


def test_readme_stream_block_commits_each_checkpoint_once_and_reads_what_comes(
    tmp_path: Path,
) -> None:
    """The Streaming section's Python block, after the Use blocks (their ``catalog``, ``data``);
    then a later commit comes out of the stream scan once."""
    scope = _run_use_blocks(tmp_path)
    table, data = scope["table"], scope["data"]
    exec(compile(_block(STREAM_MARKER), "README.md", "exec"), scope)
    assert scope["stream_commit"].filter_committed([1, 2, 3]) == [3]
    assert sort_rows(scope["first"]) == sort_rows(pa.concat_tables([data, data]))
    assert scope["later"].num_rows == 0
    write_commit(table, data)
    reader, scan = scope["reader"], scope["scan"]
    assert sort_rows(reader.to_arrow(scan.plan().splits())) == sort_rows(data)
    assert reader.to_arrow(scan.plan().splits()).num_rows == 0
    assert scope["saved"] is not None


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::DeprecationWarning:ray.*")
@pytest.mark.filterwarnings("ignore::FutureWarning:ray.*")
def test_readme_ray_and_duckdb_block_reads_and_writes_the_table(
    tmp_path: Path, ray_cluster: float
) -> None:
    """The Ray and DuckDB block on the Use blocks' table, holding ``data`` once: DuckDB counts
    its rows per partition, and the Ray dataset written back doubles them in one snapshot."""
    scope = _run_use_blocks(tmp_path)
    table, data = scope["table"], scope["data"]
    write_commit(table, data)
    before = table.snapshot_manager().get_latest_snapshot().id
    exec(compile(_block(RAY_DUCKDB_MARKER), "README.md", "exec"), scope)
    got = scope["con"].execute("SELECT dt, count(*) FROM orders GROUP BY dt").fetchall()
    assert got == [("2026-11-01", 3)]
    assert scope["ds"].count() == 3
    assert table.snapshot_manager().get_latest_snapshot().id == before + 1
    assert sort_rows(read_all(table)) == sort_rows(pa.concat_tables([data, data]))


def _postpone_statements() -> list[tuple[ast.stmt, str]]:
    block = _block(POSTPONE_MARKER)
    return [(s, ast.get_source_segment(block, s) or "") for s in ast.parse(block).body]


def _call(stmt: ast.stmt) -> ast.Call:
    node = stmt.value if isinstance(stmt, ast.Expr | ast.Assign) else None
    assert isinstance(node, ast.Call), ast.dump(stmt)
    return node


def _keyword(call: ast.Call, name: str) -> Any:
    return next(ast.literal_eval(k.value) for k in call.keywords if k.arg == name)


def _call_name(stmt: ast.stmt) -> str:
    func = _call(stmt).func
    return func.id if isinstance(func, ast.Name) else ast.unparse(func)


def _postpone_rows(dt: str, ids: range) -> pa.Table:
    return pa.table(
        {"order_id": list(ids), "dt": [dt] * len(ids), "amount": [float(i) for i in ids]},
        schema=POSTPONE_SCHEMA,
    )


POSTPONE_SCHEMA = pa.schema(
    [
        pa.field("order_id", pa.int64(), nullable=False),
        pa.field("dt", pa.string(), nullable=False),
        ("amount", pa.float64()),
    ]
)


def _buckets(table: FileStoreTable, dt: str, all_files: bool = False) -> set[int]:
    scan = table.new_read_builder().new_scan()
    if all_files:
        scan = scan.with_scan_all_files()
    return {s.bucket for s in scan.plan().splits() if s.partition_values == (dt,)}


def test_readme_postpone_block_runs_statement_by_statement(catalog: FileSystemCatalog) -> None:
    """The postpone section's block on a postpone table; between its statements the test writes
    postponed rows and checks what each statement did."""
    statements = _postpone_statements()
    names = [
        _call_name(s) if not isinstance(s, ast.ImportFrom) else "import" for s, _ in statements
    ]
    assert names[:4] == ["import", "compact", "compact", "rescale"], names
    assert isinstance(statements[4][0], ast.Assign) and "with_scan_all_files" in statements[4][1]
    compacted = _keyword(_call(statements[2][0]), "partitions").split("=")[1]
    rescaled = _keyword(_call(statements[3][0]), "partition").split("=")[1]
    bucket_num = _keyword(_call(statements[3][0]), "bucket_num")
    postponed = "2023-10-09"  # a partition the block does not compact
    assert len({compacted, rescaled, postponed}) == 3

    options = {"bucket": "-2", "postpone.default-bucket-num": "2"}
    options["postpone.batch-write-fixed-bucket"] = "false"
    catalog.create_table(
        "db.orders",
        Schema.from_pyarrow_schema(
            POSTPONE_SCHEMA, partition_keys=["dt"], primary_keys=["dt", "order_id"], options=options
        ),
    )
    orders = catalog.get_table("db.orders")
    write_commit(orders, _postpone_rows(rescaled, range(0, 20)))
    write_commit(orders, _postpone_rows(compacted, range(20, 22)))
    assert read_all(orders).num_rows == 0  # postponed: invisible
    scope: dict[str, Any] = {"catalog": catalog, "orders": orders}

    def run(i: int) -> None:
        exec(compile(statements[i][1], "README.md", "exec"), scope)

    run(0)
    run(1)  # compact every postpone file into real buckets
    assert read_all(orders).num_rows == 22
    assert _buckets(orders, rescaled) == {0, 1}
    write_commit(orders, _postpone_rows(compacted, range(22, 24)))
    write_commit(orders, _postpone_rows(postponed, range(24, 25)))
    run(2)  # only the compacted partition
    assert sorted(read_all(orders)["order_id"].to_pylist()) == list(range(24))
    run(3)  # rescale one partition
    assert _buckets(orders, rescaled) == set(range(bucket_num))
    assert sorted(read_all(orders)["order_id"].to_pylist()) == list(range(24))
    latest = orders.snapshot_manager().get_latest_snapshot()
    assert latest is not None and latest.commit_kind == "OVERWRITE"
    run(4)  # every file, the postpone bucket's included
    assert {(s.partition_values, s.bucket) for s in scope["splits"]} >= {
        ((postponed,), POSTPONE_BUCKET)
    }
    assert _buckets(orders, postponed) == set()
    assert _buckets(orders, postponed, all_files=True) == {POSTPONE_BUCKET}


# -- "Coming from pypaimon": its code spans, evaluated -------------------------------------------

FRAGMENT_SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string()), ("dt", pa.string())])
DTS = ("2026-11-01", "2026-11-02")


def _fragment_table(catalog: FileSystemCatalog) -> FileStoreTable:
    catalog.create_table(
        "db.t",
        Schema.from_pyarrow_schema(
            FRAGMENT_SCHEMA, partition_keys=["dt"], options={"bucket": "2", "bucket-key": "id"}
        ),
    )
    table = catalog.get_table("db.t")
    for dt, ids in zip(DTS, (range(0, 10), range(10, 16)), strict=True):
        write_commit(
            table,
            pa.table(
                {"id": list(ids), "v": [str(i) for i in ids], "dt": [dt] * len(ids)},
                schema=FRAGMENT_SCHEMA,
            ),
        )
    return table


def _spans(section: str) -> list[str]:
    prose = BLOCK.sub("", section)
    return [" ".join(s.split()) for s in SPAN.findall(prose) if s.strip()]


class _Fragments:
    """Evaluates a README code span on the test's table: ``Class.method(...)`` on an instance
    of that class, a bare ``method(...)`` on the first receiver that has the method."""

    def __init__(self, catalog: FileSystemCatalog, table: FileStoreTable) -> None:
        self.catalog, self.table = catalog, table
        rb = table.new_read_builder()
        pb = rb.new_predicate_builder()
        self.splits = rb.new_scan().plan().splits()
        self.read = rb.new_read()
        self.all_rows = sort_rows(read_all(table))
        self.names: dict[str, Any] = {
            "table": table,
            "ReadBuilder": rb,
            "TableScan": rb.new_scan(),
            "predicate": pb.equal("dt", DTS[1]),
            "splits": self.splits,
            "n": 1,
            "i": 0,
        }
        self.receivers: list[Any] = [table.snapshot_manager(), self.read]

    def eval(self, fragment: str, **names: Any) -> Any:
        scope = {"_receivers": self.receivers, **self.names, **names}
        root = fragment.split("(")[0].split(".")[0]
        if root in scope:
            return eval(fragment, scope)
        method = fragment.split("(")[0]
        receiver = next((r for r in scope["_receivers"] if hasattr(r, method)), None)
        assert receiver is not None, f"nothing here has {method}: `{fragment}`"
        return eval(f"_r.{fragment}", {**scope, "_r": receiver})


def test_coming_from_pypaimon_spans_run_and_give_what_the_readme_says(
    catalog: FileSystemCatalog,
) -> None:
    section = _section("Coming from pypaimon")
    table = _fragment_table(catalog)
    f = _Fragments(catalog, table)
    checked: list[str] = []

    # `<option key>` is `<value>`: the option's default.
    defaults = re.findall(r"`([a-z][\w.-]*)` is\s+`([^`]+)`", section)
    assert defaults, "the section names an option default"
    options = [getattr(CoreOptions, n) for n in dir(CoreOptions) if n.isupper()]
    for key, value in defaults:
        option = next(o for o in options if o.key() == key)
        assert option.default_value() == value, key
        checked += [key, value]

    def check_call(fragment: str) -> None:
        method = re.findall(r"(\w+)\(", fragment)[-1]
        check = CALL_CHECKS.get(method)
        assert check is not None, f"no check for the README's `{fragment}`: add one"
        check(f, fragment)

    spans = _spans(section)
    imports_first = [s for s in spans if s.startswith(("from ", "import "))]
    for span in imports_first + [s for s in spans if s not in imports_first]:
        if span in checked:
            continue
        if span.startswith(("from ", "import ")):
            exec(span, f.names)
            assert span.split()[-1] in f.names
        elif keyword.iskeyword(span):
            continue
        elif re.fullmatch(r"paimon_pyspark(\.\w+)+", span):
            __import__(span)
        elif re.fullmatch(r"[A-Z]\w*(Exception|Error)", span):
            check_error_name(f, span)
        elif "(" in span:
            check_call(span)
        else:
            raise AssertionError(f"the README's `{span}` is neither code nor a name checked here")
        checked.append(span)
    assert {"CoreOptions.BUCKET.key()", "TableScan.with_shard(i, n)"} <= set(checked)


def check_error_name(f: _Fragments, name: str) -> None:
    """pypaimon's exception names: in both modules the README names, and raised where pypaimon
    raises them; our error names: in paimon_pyspark.errors."""
    if name.endswith("Error"):
        assert issubclass(getattr(paimon_pyspark.errors, name), Exception)
        return
    cls = getattr(catalog_exception, name)
    assert getattr(paimon_pyspark.errors, name) is cls
    raising: dict[str, Callable[[], object]] = {
        "TableNotExistException": lambda: f.catalog.get_table("db.missing"),
        "DatabaseAlreadyExistException": lambda: f.catalog.create_database("db"),
    }
    assert name in raising, f"add how {name} is raised"
    with pytest.raises(cls):
        raising[name]()


def _key(f: _Fragments, fragment: str) -> None:
    constant = fragment.split(".")[1]
    assert f.eval(fragment) == constant.lower().replace("_", "-")


def _latest(f: _Fragments, fragment: str) -> None:
    snapshot = f.eval(fragment)
    assert snapshot.id == f.table.snapshot_manager.latest_id() == 2


def _by_id(f: _Fragments, fragment: str) -> None:
    for n in (1, 2):
        assert f.eval(fragment, n=n, _receivers=f.receivers).id == n
    assert f.eval(fragment, n=3, _receivers=f.receivers) is None


def _partition_filter(f: _Fragments, fragment: str) -> None:
    rb = f.eval(fragment)
    rows = rb.new_read().to_arrow(rb.new_scan().plan().splits())
    assert set(rows["dt"].to_pylist()) == {DTS[1]} and rows.num_rows == 6


def _shard(f: _Fragments, fragment: str) -> None:
    n = 3
    shards = []
    for i in range(n):
        scan = f.eval(fragment, i=i, n=n, TableScan=f.table.new_read_builder().new_scan())
        shards.append(sort_rows(f.read.to_arrow(scan.plan().splits())))
    ids = [int(str(r["id"])) for s in shards for r in s]
    assert sorted(ids) == list(range(16))  # disjoint, complete
    assert sum(1 for s in shards if s) > 1


def _to_arrow(f: _Fragments, fragment: str) -> None:
    for n in (1, 4):
        assert sort_rows(f.eval(fragment, n=n, _receivers=f.receivers)) == f.all_rows


def _to_arrow_batch_reader(f: _Fragments, fragment: str) -> None:
    """The same rows for any thread count, in the same order."""
    read = [f.eval(fragment, n=n, _receivers=f.receivers).read_all() for n in (1, 4)]
    assert read[0].equals(read[1])
    assert sort_rows(read[1]) == f.all_rows


def _to_iterator(f: _Fragments, fragment: str) -> None:
    rows = list(f.eval(fragment, _receivers=f.receivers))
    names = FRAGMENT_SCHEMA.names
    assert sorted(rows) == sorted(tuple(r[k] for k in names) for r in f.all_rows)
    assert rows[0].get_field(0) == rows[0][0]


def _overwrite(f: _Fragments, fragment: str) -> None:
    """Without ``with_overwrite()`` the README's error and nothing committed; with it, the
    partitions the messages touch are replaced."""
    error = getattr(paimon_pyspark.errors, _error_after(fragment))
    new = pa.table({"id": [99], "v": ["x"], "dt": [DTS[0]]}, schema=FRAGMENT_SCHEMA)
    for with_overwrite in (False, True):
        builder = f.table.new_write_builder()
        if with_overwrite:
            assert f.eval("with_overwrite()", _receivers=[builder]) is builder
        with builder.new_write() as write:
            write.write_arrow(new)
            messages = write.prepare_commit()
        commit = builder.new_commit()
        if not with_overwrite:
            with pytest.raises(error):
                f.eval(fragment, TableCommit=commit, messages=messages)
            assert f.table.snapshot_manager.latest_id() == 2
        else:
            f.eval(fragment, TableCommit=commit, messages=messages)
    expected = [r for r in f.all_rows if r["dt"] != DTS[0]] + sort_rows(new)
    assert sort_rows(read_all(f.table)) == sort_rows(pa.Table.from_pylist(expected))


def _error_after(fragment: str) -> str:
    """The error the README names in the sentence of ``fragment``."""
    text = _section("Coming from pypaimon")
    sentence = text[text.index(f"`{fragment}`") :].split(".\n")[0]
    found: list[str] = re.findall(r"`(\w+Error)`", sentence)
    assert len(found) == 1, sentence
    return found[0]


def _with_overwrite(f: _Fragments, fragment: str) -> None:
    builder = f.table.new_write_builder()
    assert f.eval(fragment, _receivers=[builder]) is builder


CALL_CHECKS: dict[str, Callable[[_Fragments, str], None]] = {
    "key": _key,
    "get_latest_snapshot": _latest,
    "get_snapshot_by_id": _by_id,
    "with_partition_filter": _partition_filter,
    "with_shard": _shard,
    "to_arrow": _to_arrow,
    "to_arrow_batch_reader": _to_arrow_batch_reader,
    "to_iterator": _to_iterator,
    "overwrite": _overwrite,
    "with_overwrite": _with_overwrite,
}


def test_readme_object_store_example_runs_against_s3(s3_server: S3Server) -> None:
    """The object-store section's catalog example, pointed at moto's server."""
    block = next(b for b in _blocks() if S3_MARKER in b and "CatalogFactory" in b)
    bucket = s3_server.new_bucket()
    code = (
        block.replace("s3://my-bucket/", f"s3://{bucket}/")
        .replace("http://127.0.0.1:9000", s3_server.endpoint)
        .replace("my-access-key", s3_server.options()["s3.access-key"])
        .replace("my-secret-key", s3_server.options()["s3.secret-key"])
    )
    scope: dict[str, object] = {}
    exec(compile(code, "README.md", "exec"), scope)
    assert scope["catalog"].list_databases() == ["db"]  # type: ignore[attr-defined]
    assert s3_server.list_keys(bucket) == ["warehouse/db.db/.paimon-directory"]


def test_readme_catalogs_block_opens_each_catalog(
    rest_server: RestServer, hive_metastore: HiveMetastore, tmp_path: Path
) -> None:
    """The catalogs section's block, pointed at a SQLite file here, our REST server and a real
    metastore (tests/catalogs): each catalog opens and sees the database the REST one makes."""
    code = (
        _block(CATALOGS_MARKER)
        .replace("/srv/paimon/catalog.db", str(tmp_path / "catalog.db"))
        .replace("/srv/paimon/wh", str(rest_server.warehouse))
        .replace("http://127.0.0.1:8181", rest_server.url)
        .replace('"token": "..."', f'"token": "{rest_server.token}"')
        .replace("thrift://127.0.0.1:9083", hive_metastore.uri)
    )
    scope: dict[str, Any] = {"CatalogFactory": CatalogFactory}
    exec(compile(code, "README.md", "exec"), scope)
    rest, jdbc, hive = scope["rest"], scope["jdbc"], scope["hive"]
    rest.create_database("readme_catalogs", ignore_if_exists=True)
    assert "readme_catalogs" in rest.list_databases()
    assert jdbc.list_databases() == []  # its own registry: nothing registered there yet
    assert "default" in hive.list_databases()
