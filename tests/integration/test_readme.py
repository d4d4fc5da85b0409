"""The README's Python examples run as written (on a temporary warehouse)."""

from __future__ import annotations

import re
from pathlib import Path

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
