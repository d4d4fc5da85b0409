"""docs/pypaimon-api.md stays true: its table of pypaimon 2.1's public API against ours.

Each ``### `pypaimon.<module>.<Class>` `` heading of the page starts a table whose rows name a
member in pypaimon's spelling (with pypaimon's parameters) and say whether paimon_pyspark has it:

- ``yes``: our class (``OURS`` below) has it, of the same kind, and accepts every parameter a
  pypaimon caller passes, by position or by keyword (checked with ``inspect``);
- ``different``: we have the name, and the note says how it differs;
- ``no``: we do not have it; the test fails when someone adds it, so that the page is updated
  with the code;
- ``no (in progress)``: work landing at the same time as the page; not checked either way until
  it is turned into ``yes`` or ``different``.

With the pypaimon venv (``make test`` builds it) the page is also compared with pypaimon itself:
every public member of the classes in scope is listed, with pypaimon's parameters.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import importlib
import inspect
import json
import pkgutil
import re
import subprocess
import textwrap
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import paimon_pyspark

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "pypaimon-api.md"
PYPAIMON_PYTHON = ROOT / ".venv-pypaimon" / "bin" / "python"

_PP = "paimon_pyspark"
_TYPES = f"{_PP}.types.data_types"
_PYPAIMON_TYPES = f"{_PP}.types.pypaimon_types"
_STREAM = f"{_PP}.table.stream_builders"
_STREAM_READ = f"{_PP}.read.stream_scan"
_CALLBACK = f"{_PP}.commit.commit_callback"
_WRITE_BUILDER = f"{_PP}.table.write_builder.BatchWriteBuilder"
_CHANGE = f"{_PP}.store.schema_change"

# pypaimon's class (or module) -> ours, or None where we have no counterpart.
OURS: dict[str, str | None] = {
    "pypaimon": _PP,
    "pypaimon.catalog.catalog_factory.CatalogFactory": f"{_PP}.catalog.CatalogFactory",
    "pypaimon.catalog.catalog.Catalog": f"{_PP}.catalog.FileSystemCatalog",
    "pypaimon.catalog.filesystem_catalog.FileSystemCatalog": f"{_PP}.catalog.FileSystemCatalog",
    "pypaimon.catalog.database.Database": None,
    "pypaimon.common.identifier.Identifier": None,
    "pypaimon.table.table.Table": f"{_PP}.FileStoreTable",
    "pypaimon.table.file_store_table.FileStoreTable": f"{_PP}.FileStoreTable",
    "pypaimon.schema.schema.Schema": f"{_PP}.Schema",
    "pypaimon.schema.table_schema.TableSchema": f"{_PP}.spec.table_schema.TableSchema",
    "pypaimon.schema.schema_change.SchemaChange": f"{_CHANGE}.SchemaChange",
    "pypaimon.schema.schema_change.SetOption": f"{_CHANGE}.SetOption",
    "pypaimon.schema.schema_change.RemoveOption": f"{_CHANGE}.RemoveOption",
    "pypaimon.schema.schema_change.UpdateComment": f"{_CHANGE}.UpdateComment",
    "pypaimon.schema.schema_change.AddColumn": f"{_CHANGE}.AddColumn",
    "pypaimon.schema.schema_change.RenameColumn": f"{_CHANGE}.RenameColumn",
    "pypaimon.schema.schema_change.DropColumn": f"{_CHANGE}.DropColumn",
    "pypaimon.schema.schema_change.UpdateColumnType": f"{_CHANGE}.UpdateColumnType",
    "pypaimon.schema.schema_change.UpdateColumnNullability": f"{_CHANGE}.UpdateColumnNullability",
    "pypaimon.schema.schema_change.UpdateColumnComment": f"{_CHANGE}.UpdateColumnComment",
    "pypaimon.schema.schema_change.UpdateColumnDefaultValue": None,
    "pypaimon.schema.schema_change.UpdateColumnPosition": f"{_CHANGE}.UpdateColumnPosition",
    "pypaimon.schema.schema_change.MoveType": f"{_CHANGE}.MoveType",
    "pypaimon.schema.schema_change.Move": f"{_CHANGE}.Move",
    "pypaimon.schema.data_types.DataType": f"{_PYPAIMON_TYPES}.DataType",
    "pypaimon.schema.data_types.AtomicType": f"{_PYPAIMON_TYPES}.AtomicType",
    "pypaimon.schema.data_types.ArrayType": f"{_PYPAIMON_TYPES}.ArrayType",
    "pypaimon.schema.data_types.VectorType": f"{_PYPAIMON_TYPES}.VectorType",
    "pypaimon.schema.data_types.MultisetType": f"{_PYPAIMON_TYPES}.MultisetType",
    "pypaimon.schema.data_types.MapType": f"{_PYPAIMON_TYPES}.MapType",
    "pypaimon.schema.data_types.RowType": f"{_PYPAIMON_TYPES}.RowType",
    "pypaimon.schema.data_types.DataField": f"{_PYPAIMON_TYPES}.DataField",
    "pypaimon.schema.data_types.Keyword": None,
    "pypaimon.schema.data_types.DataTypeParser": f"{_PYPAIMON_TYPES}.DataTypeParser",
    "pypaimon.schema.data_types.PyarrowFieldParser": f"{_PYPAIMON_TYPES}.PyarrowFieldParser",
    "pypaimon.write.write_builder.WriteBuilder": _WRITE_BUILDER,
    "pypaimon.write.write_builder.BatchWriteBuilder": _WRITE_BUILDER,
    "pypaimon.write.write_builder.StreamWriteBuilder": f"{_STREAM}.StreamWriteBuilder",
    "pypaimon.write.table_write.TableWrite": f"{_PP}.write.table_write.TableWrite",
    "pypaimon.write.table_write.BatchTableWrite": f"{_PP}.write.table_write.TableWrite",
    "pypaimon.write.table_write.StreamTableWrite": f"{_STREAM}.StreamTableWrite",
    "pypaimon.write.table_commit.TableCommit": f"{_PP}.table.table_commit.TableCommit",
    "pypaimon.write.table_commit.BatchTableCommit": f"{_PP}.table.table_commit.TableCommit",
    "pypaimon.write.table_commit.StreamTableCommit": f"{_STREAM}.StreamTableCommit",
    "pypaimon.write.commit_message.CommitMessage": f"{_PP}.CommitMessage",
    "pypaimon.write.commit_callback.CommitCallback": f"{_CALLBACK}.CommitCallback",
    "pypaimon.write.commit_callback.CommitCallbackContext": f"{_CALLBACK}.CommitCallbackContext",
    "pypaimon.write.table_update.TableUpdate": None,
    "pypaimon.write.table_update.BatchTableUpdate": None,
    "pypaimon.write.table_update.StreamTableUpdate": None,
    "pypaimon.write.table_update.ShardTableUpdator": None,
    "pypaimon.write.table_update_by_row_id.TableUpdateByRowId": None,
    "pypaimon.write.commit_message_serializer": None,
    "pypaimon.read.read_builder.ReadBuilder": f"{_PP}.read.read_builder.ReadBuilder",
    "pypaimon.read.stream_read_builder.StreamReadBuilder": f"{_STREAM_READ}.StreamReadBuilder",
    "pypaimon.read.table_scan.TableScan": f"{_PP}.read.scan.TableScan",
    "pypaimon.read.streaming_table_scan.AsyncStreamingTableScan": (
        f"{_STREAM_READ}.StreamTableScan"
    ),
    "pypaimon.read.plan.Plan": f"{_PP}.read.scan.Plan",
    "pypaimon.read.split.Split": f"{_PP}.read.scan.DataSplit",
    "pypaimon.read.split.DataSplit": f"{_PP}.read.scan.DataSplit",
    "pypaimon.read.sliced_split.SlicedSplit": None,
    "pypaimon.read.table_read.TableRead": f"{_PP}.read.table_read.TableRead",
    "pypaimon.read.explain.ExplainResult": f"{_PP}.read.explain.ExplainResult",
    "pypaimon.read.scan_stats.ScanStats": None,
    "pypaimon.common.predicate.Predicate": f"{_PP}.Predicate",
    "pypaimon.common.predicate_builder.PredicateBuilder": f"{_PP}.PredicateBuilder",
    "pypaimon.snapshot.snapshot_manager.SnapshotManager": (
        f"{_PP}.table.snapshot_manager.TableSnapshotManager"
    ),
    "pypaimon.snapshot.snapshot.Snapshot": f"{_PP}.spec.snapshot.Snapshot",
    "pypaimon.tag.tag.Tag": None,
    "pypaimon.tag.tag_manager.TagManager": f"{_PP}.table.tag_manager.TableTagManager",
    "pypaimon.branch.branch_manager.BranchManager": f"{_PP}.table.branch_manager.BranchManager",
    "pypaimon.consumer.consumer_manager.ConsumerManager": f"{_PP}.store.managers.ConsumerManager",
    "pypaimon.consumer.consumer.Consumer": f"{_PP}.store.managers.Consumer",
    "pypaimon.changelog.changelog_manager.ChangelogManager": (
        f"{_PP}.store.changelog_manager.ChangelogManager"
    ),
    "pypaimon.table.rollback_helper.RollbackHelper": None,
    "pypaimon.table.instant.Instant": None,
    "pypaimon.table.instant.SnapshotInstant": None,
    "pypaimon.table.instant.TagInstant": None,
    "pypaimon.table.bucket_mode.BucketMode": f"{_PP}.store.bucket_mode.BucketMode",
    "pypaimon.table.row.row_kind.RowKind": None,
    "pypaimon.common.options.core_options.CoreOptions": f"{_PP}.CoreOptions",
    "pypaimon.common.options.config_option.ConfigOption": f"{_PP}.ConfigOption",
    "pypaimon.common.options.options.Options": None,
    "pypaimon.catalog.rest.rest_catalog.RESTCatalog": f"{_PP}.catalog.rest.catalog.RestCatalog",
    "pypaimon.catalog.jdbc_catalog.JdbcCatalog": f"{_PP}.catalog.jdbc.catalog.JdbcCatalog",
    "pypaimon.table.format.format_table.FormatTable": None,
    "pypaimon.table.iceberg.iceberg_table.IcebergTable": None,
    "pypaimon.table.object.object_table.ObjectTable": None,
    "pypaimon.filesystem.pvfs.PaimonVirtualFileSystem": None,
    "pypaimon.table.source.full_text_search_builder.FullTextSearchBuilder": None,
    "pypaimon.table.source.vector_search_builder.VectorSearchBuilder": None,
    "pypaimon.table.source.hybrid_search_builder.HybridSearchBuilder": None,
    "pypaimon.table.source.batch_vector_search_builder.BatchVectorSearchBuilder": None,
    # a module: its exceptions are ours under the same names
    "pypaimon.catalog.catalog_exception": f"{_PP}.catalog.catalog_exception",
}
# pypaimon's type constructors are classes of types/pypaimon_types.py whose ``__new__`` returns
# one of our types (``ArrayType(True, element)`` is our types.data_types.ArrayType): the class
# row and class-level calls are checked on the constructor a pypaimon program imports, what an
# instance has (``element``, ``get_field_index``) on the type it builds. AtomicType builds
# several of ours (CHAR, DECIMAL, TIMESTAMP ...); ``type`` is on their shared base.
BUILT: dict[str, str] = {
    f"pypaimon.schema.data_types.{name}": f"{_TYPES}.{name}"
    for name in ("AtomicType", "ArrayType", "VectorType", "MultisetType", "MapType", "RowType")
}
STATUSES = ("yes", "different", "no", "no (in progress)")

_HEADING = re.compile(r"^### `(pypaimon[\w.]*)`")
_ROW = re.compile(r"^\| `([^`]+)` \| ([^|]+?) \|(.*)\|$")
_SIGNATURE = re.compile(r"^(?:@(staticmethod|classmethod) )?(\w+)\((.*)\)$")
_OPTION = re.compile(r'^([A-Z][A-Z0-9_]*) = "([^"]+)"$')
_OURS_LINE = re.compile(r"^Ours: (?:`([\w.]+)`|none)$")


@dataclass(frozen=True)
class Row:
    """One row of the page: what pypaimon has (kind, name, parameters) and what we say."""

    group: str  # pypaimon's dotted class or module path
    text: str  # the name cell, as written
    kind: str  # class, exception, method, staticmethod, classmethod, property, attribute, option
    name: str
    params: str | None  # pypaimon's parameters, without self/cls
    status: str
    notes: str
    line: int

    def where(self) -> str:
        return f"docs/pypaimon-api.md:{self.line} `{self.text}` ({self.group})"


def _parse_name(text: str) -> tuple[str, str, str | None]:
    for kind in ("class", "exception"):
        if text.startswith(kind + " "):
            rest = text[len(kind) + 1 :]
            m = _SIGNATURE.match(rest)
            return (kind, m.group(2), m.group(3)) if m else (kind, rest, None)
    if text.startswith("@property "):
        return "property", text.split(" ", 1)[1], None
    m = _OPTION.match(text)
    if m:
        return "option", m.group(1), m.group(2)
    m = _SIGNATURE.match(text)
    if m:
        return m.group(1) or "method", m.group(2), m.group(3)
    if re.fullmatch(r"\w+", text):
        return "attribute", text, None
    raise AssertionError(f"cannot read the name cell `{text}`")


def parse_page(text: str) -> list[Row]:
    rows: list[Row] = []
    group: str | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        heading = _HEADING.match(line)
        if heading:
            group = heading.group(1)
            continue
        if line.startswith("#"):
            group = None
            continue
        m = _ROW.match(line)
        if not m or group is None:
            continue
        kind, name, params = _parse_name(m.group(1))
        row = Row(group, m.group(1), kind, name, params, m.group(2), m.group(3).strip(), number)
        rows.append(row)
    return rows


@functools.cache
def page_rows() -> tuple[Row, ...]:
    return tuple(parse_page(PAGE.read_text()))


def page_ours_lines(text: str) -> dict[str, str | None]:
    """Each heading's ``Ours:`` line: the class of ours the page names for pypaimon's."""
    said: dict[str, str | None] = {}
    group: str | None = None
    for line in text.splitlines():
        heading = _HEADING.match(line)
        if heading:
            group = heading.group(1)
            continue
        m = _OURS_LINE.match(line)
        if m and group is not None:
            said[group] = m.group(1)
            group = None
    return said


def resolve(path: str) -> Any:
    """A dotted path to a module, or to an attribute of one (``pkg.mod.Class``)."""
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for part in parts[cut:]:
            obj = getattr(obj, part)
        return obj
    raise AssertionError(f"{path} does not resolve")


# -- what a name is on our side ----------------------------------------------------------------


def member_owner(row: Row) -> tuple[Any, str] | None:
    """The class (or module) of ours a row is checked on, and its dotted path; None: none."""
    target = OURS[row.group]
    if target is None:
        return None
    if row.kind in ("method", "property", "attribute") and row.group in BUILT:
        target = BUILT[row.group]
    return resolve(target), target


def _static(owner: Any, name: str) -> Any:
    """The raw attribute (a function, staticmethod, property ...) without running descriptors."""
    if isinstance(owner, ModuleType):
        return getattr(owner, name, _MISSING)
    for klass in owner.__mro__:
        if name in vars(klass):
            return vars(klass)[name]
    return _MISSING


_MISSING = object()


def _init_attributes(cls: type) -> set[str]:
    """Names a class's ``__init__`` (anywhere in its MRO) assigns to ``self``."""
    names: set[str] = set()
    for klass in cls.__mro__:
        init = vars(klass).get("__init__")
        if not inspect.isfunction(init) or not klass.__module__.startswith(_PP):
            continue
        try:
            source = textwrap.dedent(inspect.getsource(init))
        except OSError:  # made by dataclasses: its fields are found as fields
            continue
        for node in ast.walk(ast.parse(source)):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.ctx, ast.Store)
                and isinstance(node.value, ast.Name)
                and node.value.id == "self"
            ):
                names.add(node.attr)
    return names


def present(owner: Any, name: str) -> bool:
    if isinstance(owner, ModuleType):
        return hasattr(owner, name)
    if _static(owner, name) is not _MISSING:
        return True
    if dataclasses.is_dataclass(owner) and name in {f.name for f in dataclasses.fields(owner)}:
        return True
    slots = {s for k in owner.__mro__ for s in getattr(k, "__slots__", ())}
    return name in slots or name in _init_attributes(owner)


def _is_callable_member(raw: Any) -> bool:
    return isinstance(raw, staticmethod | classmethod) or inspect.isfunction(raw)


def _signature(raw: Any) -> inspect.Signature:
    """The signature a caller sees (no self/cls)."""
    if isinstance(raw, staticmethod):
        return inspect.signature(raw.__func__)
    if isinstance(raw, classmethod):
        return _drop_first(inspect.signature(raw.__func__))
    return _drop_first(inspect.signature(raw))


def _drop_first(sig: inspect.Signature) -> inspect.Signature:
    params = list(sig.parameters.values())
    return sig.replace(parameters=params[1:])


def _pypaimon_params(params: str) -> list[inspect.Parameter]:
    """pypaimon's parameter list, as the page writes it (``a, b=None, *, c=...``)."""
    args = ast.parse(f"def f({params}): pass").body[0].args  # type: ignore[attr-defined]
    out: list[inspect.Parameter] = []
    positional = args.posonlyargs + args.args
    first_default = len(positional) - len(args.defaults)
    for i, a in enumerate(positional):
        kind = (
            inspect.Parameter.POSITIONAL_ONLY
            if i < len(args.posonlyargs)
            else inspect.Parameter.POSITIONAL_OR_KEYWORD
        )
        default = None if i >= first_default else inspect.Parameter.empty
        out.append(inspect.Parameter(a.arg, kind, default=default))
    if args.vararg:
        out.append(inspect.Parameter(args.vararg.arg, inspect.Parameter.VAR_POSITIONAL))
    for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        default = inspect.Parameter.empty if d is None else None
        out.append(inspect.Parameter(a.arg, inspect.Parameter.KEYWORD_ONLY, default=default))
    if args.kwarg:
        out.append(inspect.Parameter(args.kwarg.arg, inspect.Parameter.VAR_KEYWORD))
    return out


def incompatibilities(theirs: list[inspect.Parameter], ours: inspect.Signature) -> list[str]:
    """Why a call written for pypaimon's parameters would fail against ours (empty: it works).

    A parameter passed by position must sit at the same place under the same name (callers also
    pass it by keyword); one pypaimon callers may leave out must have a default here; ours may
    add parameters only with defaults. pypaimon's ``_private`` parameters are not API.
    """
    P = inspect.Parameter
    mine = list(ours.parameters.values())
    by_name = {p.name: p for p in mine}
    var_pos = any(p.kind is P.VAR_POSITIONAL for p in mine)
    var_kw = any(p.kind is P.VAR_KEYWORD for p in mine)
    positional = [p for p in mine if p.kind in (P.POSITIONAL_ONLY, P.POSITIONAL_OR_KEYWORD)]
    problems: list[str] = []
    used: set[str] = set()
    index = 0
    for p in theirs:
        if p.name.startswith("_"):
            continue
        if p.kind is P.VAR_POSITIONAL:
            if not var_pos:
                problems.append(f"no *{p.name}")
            continue
        if p.kind is P.VAR_KEYWORD:
            if not var_kw:
                problems.append(f"no **{p.name}")
            continue
        if p.kind in (P.POSITIONAL_ONLY, P.POSITIONAL_OR_KEYWORD):
            at = positional[index] if index < len(positional) else None
            index += 1
            if at is None:
                if not var_pos:
                    problems.append(f"{p.name!r} (position {index}) is not accepted")
                continue
            if at.name != p.name and not (var_kw and var_pos):
                problems.append(f"position {index} is {at.name!r}, pypaimon's is {p.name!r}")
            target = at
        else:
            found = by_name.get(p.name)
            if found is None or found.kind not in (P.POSITIONAL_OR_KEYWORD, P.KEYWORD_ONLY):
                if not var_kw:
                    problems.append(f"keyword {p.name!r} is not accepted")
                continue
            target = found
        used.add(target.name)
        if p.default is not P.empty and target.default is P.empty:
            problems.append(f"{p.name!r} may be left out in pypaimon, here it is required")
    for p in mine:
        if p.name in used or p.kind in (P.VAR_POSITIONAL, P.VAR_KEYWORD):
            continue
        if p.default is P.empty:
            problems.append(f"our {p.name!r} is required and pypaimon has no such parameter")
    return problems


def yes_problems(row: Row, owner: Any, target: str) -> list[str]:
    """Why a ``yes`` row is not true (empty: it is); ``target`` is ``owner``'s dotted path."""
    if row.kind in ("class", "exception"):
        if isinstance(owner, ModuleType):  # a class of a module group: the same name here
            if not hasattr(owner, row.name):
                return [f"{target} has no {row.name}"]
            owner, target = getattr(owner, row.name), f"{target}.{row.name}"
        if target.rpartition(".")[2] != row.name:
            return [f"ours is {target}, not named {row.name}"]
        if not inspect.isclass(owner):
            return [f"{owner!r} is not a class"]
        if row.kind == "exception" and not issubclass(owner, BaseException):
            return [f"{owner.__qualname__} is not an exception"]
        if row.params is None:
            return []
        return incompatibilities(_pypaimon_params(row.params), inspect.signature(owner))
    if not present(owner, row.name):
        return [f"{row.name} is missing"]
    raw = _static(owner, row.name)
    if row.kind == "option":
        key = getattr(owner, row.name).key()
        return [] if key == row.params else [f"key is {key!r}, pypaimon's {row.params!r}"]
    if row.kind in ("property", "attribute"):
        if isinstance(owner, ModuleType):
            return []
        if _is_callable_member(raw):
            return [f"{row.name} is a method here, an attribute in pypaimon"]
        return []
    if row.kind in ("staticmethod", "classmethod") and not isinstance(
        raw, staticmethod | classmethod
    ):
        return [f"{row.name} cannot be called on the class here"]
    if isinstance(owner, ModuleType):
        if not callable(raw):
            return [f"{row.name} is not a function here"]
        sig = inspect.signature(raw)
    else:
        if not _is_callable_member(raw):
            return [f"{row.name} is {type(raw).__name__} here, a method in pypaimon"]
        sig = _signature(raw)
    assert row.params is not None
    return incompatibilities(_pypaimon_params(row.params), sig)


@functools.cache
def our_class_names() -> frozenset[str]:
    """Every public class name defined anywhere in paimon_pyspark (every module imported)."""
    names: set[str] = set()
    for info in pkgutil.walk_packages(paimon_pyspark.__path__, f"{_PP}."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            if inspect.isclass(obj) and obj.__module__.startswith(_PP) and name[0] != "_":
                names.add(name)
    return frozenset(names)


def in_progress_report() -> list[str]:
    """What each ``no (in progress)`` row would be now, for turning it into yes/different/no:
    ``python -c "import sys; sys.path[:0] = ['tests/integration', '.'];
    import test_pypaimon_api_table as t; print(*t.in_progress_report(), sep='\\n')"``."""
    lines = []
    for r in page_rows():
        if r.status != "no (in progress)":
            continue
        found = member_owner(r)
        if found is None or (
            r.kind not in ("class", "exception") and not present(found[0], r.name)
        ):
            now = "no"
        else:
            owner, target = found
            problems = yes_problems(r, owner, target)
            now = "yes" if not problems else "different: " + "; ".join(problems)
        lines.append(f"{r.where()}: {now}")
    return lines


# -- the tests ---------------------------------------------------------------------------------


def test_page_parses_and_maps_every_group() -> None:
    rows = page_rows()
    assert len(rows) > 700, "the page lost its table"
    groups = {r.group for r in rows}
    assert groups == set(OURS), (
        f"headings without a mapping: {sorted(groups - set(OURS))}; "
        f"mappings without a heading: {sorted(set(OURS) - groups)}"
    )
    bad = [r.where() + f": {r.status!r}" for r in rows if r.status not in STATUSES]
    assert not bad, "statuses are yes / different / no / no (in progress):\n" + "\n".join(bad)
    unexplained = [r.where() for r in rows if r.status == "different" and not r.notes]
    assert not unexplained, "a `different` row says why:\n" + "\n".join(unexplained)
    seen: dict[tuple[str, str, str], int] = {}
    for r in rows:
        key = (r.group, r.kind, r.name)
        assert key not in seen, f"{r.where()} repeats line {seen[key]}"
        seen[key] = r.line


def test_summary_counts_the_rows() -> None:
    counts = {s: sum(r.status == s for r in page_rows()) for s in STATUSES}
    expected = ", ".join(f"{n} {s}" for s, n in counts.items() if n) + " rows."
    said = re.search(r"^Summary: (.*)$", PAGE.read_text(), re.MULTILINE)
    assert said is not None, "the page lost its Summary line"
    assert said.group(1) == expected, f"the Summary line should read: Summary: {expected}"


def test_page_names_the_mapped_class_of_ours() -> None:
    said = page_ours_lines(PAGE.read_text())
    wrong = [
        f"{g}: page {said.get(g, '(no Ours line)')}, test {t}"
        for g, t in OURS.items()
        if said.get(g, "?") != t
    ]
    assert not wrong, "the page's `Ours:` lines differ from OURS:\n" + "\n".join(wrong)
    for target in filter(None, OURS.values()):
        resolve(target)


def test_groups_without_a_counterpart_say_no() -> None:
    wrong = [
        r.where() + f": {r.status}"
        for r in page_rows()
        if OURS[r.group] is None and not r.status.startswith("no")
    ]
    assert not wrong, "no class of ours stands for these groups:\n" + "\n".join(wrong)
    wrong = [
        r.where()
        for r in page_rows()
        if OURS[r.group] is not None and r.kind in ("class", "exception") and r.status == "no"
    ]
    assert not wrong, "a mapped class is not `no`:\n" + "\n".join(wrong)


def test_absent_classes_are_absent() -> None:
    """A `no` class row: no class of that name exists anywhere in paimon_pyspark."""
    names = our_class_names()
    found = [
        r.where()
        for r in page_rows()
        if r.kind in ("class", "exception") and r.status == "no" and r.name in names
    ]
    assert not found, "these now exist here: update the page\n" + "\n".join(found)


def test_yes_rows_hold() -> None:
    problems = []
    for r in page_rows():
        mapped = member_owner(r)
        if r.status != "yes" or mapped is None:
            continue
        owner, target = mapped
        for p in yes_problems(r, owner, target):
            problems.append(f"{r.where()} -> {target}: {p}")
    assert not problems, "`yes` rows that are not true:\n" + "\n".join(problems)


def test_different_rows_name_something_we_have() -> None:
    missing = []
    for r in page_rows():
        mapped = member_owner(r)
        if r.status != "different" or mapped is None or r.kind in ("class", "exception"):
            continue
        owner, target = mapped
        if not present(owner, r.name):
            missing.append(f"{r.where()} -> {target}")
    assert not missing, "`different` rows whose name we lack (say `no`):\n" + "\n".join(missing)


def test_no_rows_are_absent() -> None:
    """Adding one of these fails here until the page says yes (or different).

    ``no (in progress)`` rows are not checked either way: they name work landing at the same
    time, and the lead turns them into ``yes`` or ``different`` when it lands.
    """
    found = []
    for r in page_rows():
        mapped = member_owner(r)
        if r.status != "no" or mapped is None or r.kind in ("class", "exception"):
            continue
        owner, target = mapped
        if present(owner, r.name):
            found.append(f"{r.where()} -> {target}.{r.name}")
    assert not found, "these now exist here: update the page\n" + "\n".join(found)


def test_checker_tells_compatible_from_incompatible() -> None:
    """The signature rule itself, on known cases."""

    def sig(fn: Any) -> inspect.Signature:
        return inspect.signature(fn)

    def ours(self: object, name: str, ignore_if_exists: bool = False, extra: int = 0) -> None: ...

    assert (
        incompatibilities(_pypaimon_params("name, ignore_if_exists"), _drop_first(sig(ours))) == []
    )
    renamed = incompatibilities(_pypaimon_params("nom, ignore_if_exists"), _drop_first(sig(ours)))
    assert renamed == ["position 1 is 'name', pypaimon's is 'nom'"]

    def required(self: object, name: str, flag: bool) -> None: ...

    assert incompatibilities(_pypaimon_params("name, flag=False"), _drop_first(sig(required))) == [
        "'flag' may be left out in pypaimon, here it is required"
    ]
    assert incompatibilities(_pypaimon_params("name"), _drop_first(sig(required))) == [
        "our 'flag' is required and pypaimon has no such parameter"
    ]
    assert incompatibilities(_pypaimon_params("*, seed=0"), _drop_first(sig(required))) != []
    assert _parse_name('BUCKET = "bucket"') == ("option", "BUCKET", "bucket")
    assert _parse_name("@staticmethod create(catalog_options)") == (
        "staticmethod",
        "create",
        "catalog_options",
    )
    assert _parse_name("class Schema(fields=None)") == ("class", "Schema", "fields=None")


# -- the page against pypaimon itself ------------------------------------------------------------

# Runs in the pypaimon venv: the public classes users reach from ``pypaimon`` (returned by its
# entry points or passed to them), with their public methods, properties, dataclass fields and
# (for FileStoreTable and Database) the attributes their constructor sets; a subclass lists what
# its listed base does not already have with the same parameters.
_PYPAIMON_DUMP = r"""
import ast, dataclasses, enum, importlib, inspect, json, sys, textwrap

FULL = __FULL__
CLASS_ONLY = __CLASS_ONLY__
MODULE_FUNCTIONS = {"pypaimon.write.commit_message_serializer": [
    "serialize_commit_message", "deserialize_commit_message"]}
CONSTRUCTED = {"Schema", "DataField", "AtomicType", "ArrayType", "VectorType", "MultisetType",
               "MapType", "RowType", "Identifier", "Move", "Options", "ConfigOption"}
INSTANCE_ATTRS = {"FileStoreTable", "Database"}


def default(value):
    if value is None or isinstance(value, (bool, int, float)):
        return repr(value)
    if isinstance(value, str) and len(value) <= 20:
        return repr(value).replace("'", '"')
    return "..."


def params(fn, drop_first):
    out, star = [], False
    ps = list(inspect.signature(fn).parameters.values())[1 if drop_first else 0:]
    for p in ps:
        if p.kind is p.VAR_POSITIONAL:
            out.append("*" + p.name)
            star = True
            continue
        if p.kind is p.VAR_KEYWORD:
            out.append("**" + p.name)
            continue
        if p.kind is p.KEYWORD_ONLY and not star:
            out.append("*")
            star = True
        text = p.name
        if p.default is not p.empty:
            text += "=" + default(p.default)
        out.append(text)
    return ", ".join(out)


def classes_of(mod, names):
    m = importlib.import_module(mod)
    if names is None:
        names = [n for n, o in vars(m).items() if inspect.isclass(o) and o.__module__ == mod]
    return [(n, getattr(m, n)) for n in names]


def qual(c):
    return c.__module__ + "." + c.__qualname__


def member(cls, name, raw):
    if isinstance(raw, staticmethod):
        return {"kind": "staticmethod", "name": name, "params": params(raw.__func__, False)}
    if isinstance(raw, classmethod):
        return {"kind": "classmethod", "name": name, "params": params(raw.__func__, True)}
    if isinstance(raw, property) or type(raw).__name__ == "cached_property":
        return {"kind": "property", "name": name}
    if inspect.isfunction(raw):
        return {"kind": "method", "name": name, "params": params(raw, True)}
    if type(raw).__name__ == "ConfigOption":
        return {"kind": "option", "name": name, "params": raw.key()}
    if isinstance(cls, enum.EnumMeta) and isinstance(raw, cls):
        return {"kind": "attribute", "name": name}
    return None


def init_attrs(cls):
    src = textwrap.dedent(inspect.getsource(cls.__init__))
    found = []
    for node in ast.walk(ast.parse(src)):
        if (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store)
                and isinstance(node.value, ast.Name) and node.value.id == "self"
                and not node.attr.startswith("_") and node.attr not in found):
            found.append(node.attr)
    return found


def members(cls, in_scope):
    mine = lambda b: b.__module__.startswith("pypaimon")
    chain = [cls] + [b for b in cls.__mro__[1:] if mine(b) and qual(b) not in in_scope]
    bases = [b for b in cls.__mro__[1:] if mine(b) and qual(b) in in_scope]
    out, seen = [], set()
    for c in chain:
        for name, raw in vars(c).items():
            if name.startswith("_") or name in seen:
                continue
            m = member(cls, name, raw)
            if m is None:
                continue
            seen.add(name)
            inherited = [b for b in bases if name in vars(b)]
            if inherited and member(cls, name, vars(inherited[0])[name]) == m:
                continue
            out.append(m)
    if dataclasses.is_dataclass(cls):
        base_fields = {f.name for b in bases if dataclasses.is_dataclass(b)
                       for f in dataclasses.fields(b)}
        for f in dataclasses.fields(cls):
            if not f.name.startswith("_") and f.name not in seen | base_fields:
                seen.add(f.name)
                out.append({"kind": "attribute", "name": f.name})
    if cls.__name__ in INSTANCE_ATTRS:
        for a in init_attrs(cls):
            if a not in seen:
                seen.add(a)
                out.append({"kind": "attribute", "name": a})
    return out


in_scope = {qual(c) for mod, names in FULL.items() for _, c in classes_of(mod, names)}
groups = [{"path": "pypaimon", "members": [
    {"kind": "attribute", "name": n} for n in importlib.import_module("pypaimon").__all__]}]
for mod, names in FULL.items():
    if names is None:  # a module of exceptions, listed as one group
        groups.append({"path": mod, "members": [
            {"kind": "exception", "name": n} for n, _ in classes_of(mod, None)]})
        continue
    for name, cls in classes_of(mod, names):
        head = {"kind": "class", "name": name}
        if name in CONSTRUCTED:
            head["params"] = params(cls.__init__, True)
        groups.append({"path": mod + "." + name, "members": [head] + members(cls, in_scope)})
for mod, names in CLASS_ONLY.items():
    for name in names:
        groups.append({"path": mod + "." + name, "members": [{"kind": "class", "name": name}]})
for mod, funcs in MODULE_FUNCTIONS.items():
    m = importlib.import_module(mod)
    groups.append({"path": mod, "members": [
        {"kind": "method", "name": f, "params": params(getattr(m, f), False)} for f in funcs]})
json.dump(groups, sys.stdout)
"""

# The classes listed with their members (None: every class of the module), and the ones listed
# as a class only (other catalogs and table kinds, search builders, explain/scan statistics).
_FULL: dict[str, list[str] | None] = {}
_CLASS_ONLY: dict[str, list[str]] = {
    "pypaimon.read.explain": ["ExplainResult"],
    "pypaimon.read.scan_stats": ["ScanStats"],
    "pypaimon.catalog.rest.rest_catalog": ["RESTCatalog"],
    "pypaimon.catalog.jdbc_catalog": ["JdbcCatalog"],
    "pypaimon.table.format.format_table": ["FormatTable"],
    "pypaimon.table.iceberg.iceberg_table": ["IcebergTable"],
    "pypaimon.table.object.object_table": ["ObjectTable"],
    "pypaimon.filesystem.pvfs": ["PaimonVirtualFileSystem"],
    "pypaimon.table.source.full_text_search_builder": ["FullTextSearchBuilder"],
    "pypaimon.table.source.vector_search_builder": ["VectorSearchBuilder"],
    "pypaimon.table.source.hybrid_search_builder": ["HybridSearchBuilder"],
    "pypaimon.table.source.batch_vector_search_builder": ["BatchVectorSearchBuilder"],
}
_FULL["pypaimon.catalog.catalog_exception"] = None
for _path in OURS:
    _module, _, _cls = _path.rpartition(".")
    if _path in ("pypaimon", "pypaimon.write.commit_message_serializer") or _path in _FULL:
        continue
    if _cls not in _CLASS_ONLY.get(_module, []):
        _FULL.setdefault(_module, []).append(_cls)  # type: ignore[union-attr]


def render(member: dict[str, str]) -> str:
    """The page's name cell for a member of the dump."""
    kind, name, params = member["kind"], member["name"], member.get("params")
    if kind in ("class", "exception"):
        return f"{kind} {name}" + (f"({params})" if params is not None else "")
    if kind == "property":
        return f"@property {name}"
    if kind == "attribute":
        return name
    if kind == "option":
        return f'{name} = "{params}"'
    prefix = "" if kind == "method" else f"@{kind} "
    return f"{prefix}{name}({params})"


@functools.cache
def pypaimon_dump() -> list[dict[str, Any]]:
    if not PYPAIMON_PYTHON.exists():
        pytest.fail(f"{PYPAIMON_PYTHON} is missing: `make test` builds .venv-pypaimon")
    script = _PYPAIMON_DUMP.replace("__FULL__", repr(_FULL)).replace(
        "__CLASS_ONLY__", repr(_CLASS_ONLY)
    )
    out = subprocess.run(
        [str(PYPAIMON_PYTHON), "-c", script], capture_output=True, text=True, check=True
    )
    groups: list[dict[str, Any]] = json.loads(out.stdout)
    return groups


@pytest.mark.pypaimon
def test_page_lists_every_public_member_of_pypaimon_as_pypaimon_spells_it() -> None:
    expected = {(g["path"], render(m)) for g in pypaimon_dump() for m in g["members"]}
    listed = {(r.group, r.text) for r in page_rows()}
    missing = sorted(expected - listed)
    extra = sorted(listed - expected)
    assert not missing and not extra, (
        "pypaimon has, the page lacks:\n"
        + "\n".join(f"  {g}: `{t}`" for g, t in missing)
        + "\nthe page has, pypaimon lacks:\n"
        + "\n".join(f"  {g}: `{t}`" for g, t in extra)
    )
