"""The README's Python examples run as written (on a temporary warehouse)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.s3_server import S3Server

from paimon_pyspark.store.bucket_mode import BucketMode

ROOT = Path(__file__).resolve().parents[2]
BLOCK = re.compile(r"```python\n(.*?)```", re.S)


def _blocks() -> list[str]:
    return BLOCK.findall((ROOT / "README.md").read_text())


def test_readme_api_examples_run_in_order(tmp_path: Path) -> None:
    blocks = _blocks()
    use, overwrite, primary_keys, dynamic = blocks[:4]
    assert "new_batch_write_builder" in use and "overwrite(" in overwrite
    assert "compact(catalog" in primary_keys and "db.users" in dynamic
    code = "\n".join([use, overwrite, primary_keys, dynamic])
    code = code.replace("/tmp/warehouse", str(tmp_path / "wh"))
    scope: dict[str, object] = {}
    exec(compile(code, "README.md", "exec"), scope)

    catalog = scope["catalog"]
    prices = catalog.get_table("db.prices")  # type: ignore[attr-defined]
    rb = prices.new_read_builder()
    rows = rb.new_read().to_arrow(rb.new_scan().plan().splits()).to_pylist()
    assert rows == [{"order_id": 2, "price": 2.5, "kind": "+U"}]
    orders = catalog.get_table("db.orders")  # type: ignore[attr-defined]
    rb = orders.new_read_builder()
    assert rb.new_read().to_arrow(rb.new_scan().plan().splits()).num_rows == 0  # static overwrite
    users = catalog.get_table("db.users")  # type: ignore[attr-defined]
    assert users.bucket_mode == BucketMode.KEY_DYNAMIC


def test_readme_object_store_example_runs_against_s3(s3_server: S3Server) -> None:
    """The object-store section's catalog example, pointed at moto's server."""
    block = next(b for b in _blocks() if '"s3.endpoint"' in b and "CatalogFactory" in b)
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
