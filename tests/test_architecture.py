"""The package order in docs/architecture.md is the order the code keeps.

Every module's imports of ``paimon_pyspark`` are walked with ``ast``: those at the top, those
under ``TYPE_CHECKING`` and those inside functions alike. A module may import its own layer and
the layers listed before it in the doc's dependency order, never one listed after it, and no two
packages may import each other through any chain (an import cycle between packages).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "paimon_pyspark"
DOC = ROOT / "docs" / "architecture.md"
ROW = re.compile(r"^\|\s*(\d+)\s*\|(.*?)\|")
NAME = re.compile(r"`([\w.]+/?)`")


def layers() -> dict[str, int]:
    """Unit (a sub-package or a top-level module, as ``store`` or ``options``) -> its layer,
    from the numbered rows of the doc's "Dependency order" table."""
    text = DOC.read_text()
    section = text.split("## Dependency order", 1)[1].split("\n## ", 1)[0]
    out: dict[str, int] = {}
    for line in section.splitlines():
        m = ROW.match(line)
        if not m:
            continue
        for name in NAME.findall(m.group(2)):
            unit = name.rstrip("/").removesuffix(".py")
            out[unit] = int(m.group(1))
    return out


def unit_of(module: str) -> str:
    """``paimon_pyspark.store.paths`` -> ``store``; ``paimon_pyspark`` -> ``__init__``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def modules() -> Iterator[tuple[str, Path]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        yield ".".join(parts), path


def is_module(name: str) -> bool:
    rel = Path(*name.split("."))
    base = PACKAGE.parent / rel
    return base.with_suffix(".py").exists() or (base / "__init__.py").exists()


def imported(module: str, path: Path) -> Iterator[tuple[str, int]]:
    """Every ``paimon_pyspark`` module ``module`` imports, with its line, wherever the import
    statement stands (``from paimon_pyspark import options`` names the module options)."""
    tree = ast.parse(path.read_text(), str(path))
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "paimon_pyspark":
                    yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                source = ".".join([*base, *([node.module] if node.module else [])])
            else:
                source = node.module or ""
            if source.split(".")[0] != "paimon_pyspark":
                continue
            for alias in node.names:
                child = f"{source}.{alias.name}"
                yield (child if is_module(child) else source), node.lineno


def graph() -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {}
    for module, path in modules():
        src = unit_of(module)
        for target, _ in imported(module, path):
            dst = unit_of(target)
            if dst != src:
                edges.setdefault(src, set()).add(dst)
    return edges


def test_doc_lists_every_package_and_module() -> None:
    listed = layers()
    present = {unit_of(m) for m, _ in modules()}
    assert present - set(listed) == set(), "packages missing from docs/architecture.md"
    assert set(listed) - present == set(), "docs/architecture.md lists packages that do not exist"


def test_no_import_reaches_a_later_layer() -> None:
    order = layers()
    bad = []
    for module, path in modules():
        src = unit_of(module)
        for target, line in imported(module, path):
            dst = unit_of(target)
            if order.get(dst, 0) > order.get(src, 0):
                bad.append(
                    f"{path.relative_to(ROOT)}:{line} ({src}, layer {order.get(src)}) imports "
                    f"{target} ({dst}, layer {order.get(dst)})"
                )
    assert bad == []


def test_no_import_cycle_between_packages() -> None:
    edges = graph()
    cycles = []
    for start in edges:
        stack = [(start, [start])]
        seen = set()
        while stack:
            node, trail = stack.pop()
            for nxt in edges.get(node, ()):
                if nxt == start:
                    cycles.append(" -> ".join([*trail, nxt]))
                elif nxt not in seen:
                    seen.add(nxt)
                    stack.append((nxt, [*trail, nxt]))
    assert cycles == []


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("from paimon_pyspark import options as opts\n", "paimon_pyspark.options"),
        ("from paimon_pyspark.store.paths import PathFactory\n", "paimon_pyspark.store.paths"),
        (
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
            "    from paimon_pyspark.table.file_store_table import FileStoreTable\n",
            "paimon_pyspark.table.file_store_table",
        ),
        ("def f():\n    import paimon_pyspark.spark.job\n", "paimon_pyspark.spark.job"),
        ("from ..table import file_store_table\n", "paimon_pyspark.table.file_store_table"),
    ],
)
def test_the_walk_sees_every_kind_of_import(source: str, expected: str, tmp_path: Path) -> None:
    path = tmp_path / "mod.py"
    path.write_text(source)
    assert expected in [t for t, _ in imported("paimon_pyspark.write.mod", path)]
