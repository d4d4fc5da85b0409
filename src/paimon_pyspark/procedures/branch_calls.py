"""The branch procedures: Java's CreateBranchProcedure, DeleteBranchProcedure,
RenameBranchProcedure and FastForwardProcedure (Spark's and Flink's take the same arguments in
the same order). maintenance/branches.py does the work; ``table`` may name a branch
(``'db.t$branch_b'``), which is then the branch acted from, as in Java.

    CALL sys.create_branch(`table` => 'db.t', branch => 'b', tag => 'v1')
    create_branch(catalog, "db.t", "b", "v1")
    CALL sys.delete_branch(`table` => 'db.t', branch => 'b1,b2')
    CALL sys.rename_branch(`table` => 'db.t', from_branch => 'b', to_branch => 'c')
    CALL sys.fast_forward(`table` => 'db.t', branch => 'b')
"""

from __future__ import annotations

from paimon_pyspark.catalog import Catalog
from paimon_pyspark.errors import InvalidArgumentError, describe
from paimon_pyspark.maintenance import branches as br


def _text(procedure: str, name: str, value: object, required: bool = True) -> str | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise InvalidArgumentError(f"{procedure}: argument '{name}' is required.")
        return None
    if not isinstance(value, str):
        raise InvalidArgumentError(
            f"{procedure}: argument '{name}' takes a string, got {describe(value)}."
        )
    return value


def _flag(procedure: str, name: str, value: object) -> bool:
    """Java parses ``ignoreIfExists`` with Boolean.parseBoolean: only ``true`` (any case)."""
    if value is None or isinstance(value, bool):
        return bool(value)
    if isinstance(value, str):
        return value.strip().lower() == "true"
    raise InvalidArgumentError(
        f"{procedure}: argument '{name}' takes true or false, got {describe(value)}."
    )


def create_branch(
    catalog: Catalog,
    table: str,
    branch: str,
    tag: str | None = None,
    ignore_if_exists: bool | str | None = None,
) -> None:
    """Create ``branch`` of ``table``, empty or from ``tag`` (Java's ``CALL
    sys.create_branch``; ``ignoreIfExists`` in SQL)."""
    name = "create_branch"
    branch_name = _text(name, "branch", branch)
    assert branch_name is not None
    tag_name = _text(name, "tag", tag, required=False)
    ignore = _flag(name, "ignore_if_exists", ignore_if_exists)
    store = catalog.get_table(table).store
    br.create_branch(store, branch_name, tag_name, ignore)


def delete_branch(catalog: Catalog, table: str, branch: str) -> list[str]:
    """Delete the comma-separated branches of ``table``; returns their names (Java's
    ``CALL sys.delete_branch``, Table.deleteBranches)."""
    names = _text("delete_branch", "branch", branch)
    assert names is not None
    return br.drop_branches(catalog.get_table(table).store, names)


def rename_branch(catalog: Catalog, table: str, from_branch: str, to_branch: str) -> None:
    """Rename branch ``from_branch`` of ``table`` to ``to_branch``."""
    name = "rename_branch"
    source = _text(name, "from_branch", from_branch)
    target = _text(name, "to_branch", to_branch)
    assert source is not None and target is not None
    br.rename_branch(catalog.get_table(table).store, source, target)


def fast_forward(catalog: Catalog, table: str, branch: str) -> None:
    """Make ``table`` (its main branch, or the ``$branch_x`` it names) what ``branch`` is."""
    branch_name = _text("fast_forward", "branch", branch)
    assert branch_name is not None
    br.fast_forward(catalog.get_table(table).store, branch_name)


__all__ = ["create_branch", "delete_branch", "fast_forward", "rename_branch"]
