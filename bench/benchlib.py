"""What the benchmarks share across their three interpreters: the data sets and the CPU clock.

The benchmark scripts run in three venvs (ours with pyspark 4, ``.venv-pypaimon`` with pyarrow<20,
``.venv-spark35`` with pyspark 3.5 for the Java connector), so this module imports only the
standard library at the top; numpy and pyarrow are imported inside the Arrow generators.

Two data sets, each defined once, as Spark SQL expressions over a bigint column ``id`` (what
``spark.range`` gives) and, for the primary-key set, also as Arrow tables built with numpy: the
two definitions give the same values (integer arithmetic, and doubles from one IEEE division).

- append rows (``APPEND_EXPRS``): ``id`` 0..N-1, ``v`` = ``rand(42)``, ``s`` = the first 16 hex
  digits of ``md5(id)``, ``dt`` cycling through four days, so each day gets N/4 rows;
- primary-key rows (``pk_exprs`` / ``pk_arrow``): ``k`` bigint (the key), ``p`` one of
  ``p0``..``p3`` (``k % 4``, the partition), ``ver`` int (1 for the first commit, 2 for the
  upsert), ``v`` double and ``s`` string, both functions of ``k`` and ``ver``. The table's primary
  key is (``p``, ``k``). The first commit writes keys 0..N-1; the upsert rewrites the 10% of keys
  ``i * 10 + i % 4`` for ``i`` in 0..N/10-1, spread over all four partitions and every bucket.
"""

from __future__ import annotations

import os
from typing import Any

# --- append rows --------------------------------------------------------------------------------

APPEND_PARTITIONS = ["2026-11-01", "2026-11-02", "2026-11-03", "2026-11-04"]
_DAYS = ", ".join(f"'{p}'" for p in APPEND_PARTITIONS)
APPEND_EXPRS = [
    "id",
    "rand(42) AS v",
    "substr(md5(cast(id AS string)), 1, 16) AS s",
    f"element_at(array({_DAYS}), cast(id % {len(APPEND_PARTITIONS)} AS int) + 1) AS dt",
]
APPEND_DDL_COLUMNS = "id BIGINT, v DOUBLE, s STRING, dt STRING"

# --- primary-key rows ---------------------------------------------------------------------------

PK_PARTITIONS = ["p0", "p1", "p2", "p3"]
PK_PARTITION_KEYS = ["p"]
PK_PRIMARY_KEYS = ["p", "k"]
PK_BUCKETS = 4
PK_DDL_COLUMNS = "k BIGINT NOT NULL, p STRING NOT NULL, ver INT, v DOUBLE, s STRING"
# v and s depend on the key and the version, so the upsert changes every column but the keys.
_V_MUL, _V_VER, _V_MOD = 7919, 104729, 1000003
_S_MUL, _S_MOD = 2654435761, 1000000007
UPSERT_ID_EXPR = "id * 10 + id % 4 AS id"  # over spark.range(N // 10): the upserted keys


def write_commit(table: Any, rows: Any) -> None:
    """One batch write of ``rows`` (an Arrow table) into a paimon_pyspark table, committed."""
    builder = table.new_batch_write_builder()
    with builder.new_write() as write:
        write.write_arrow(rows)
        messages = write.prepare_commit()
    builder.new_commit().commit(messages)


def pk_upsert_rows(rows: int) -> int:
    """How many rows the upsert commit writes (10% of the keys)."""
    return rows // 10


def pk_exprs(version: int) -> list[str]:
    """The primary-key rows as Spark SQL expressions over a bigint column ``id``."""
    n = len(PK_PARTITIONS)
    return [
        "id AS k",
        f"concat('p', cast(id % {n} AS string)) AS p",
        f"cast({version} AS int) AS ver",
        f"cast((id * {_V_MUL} + {version * _V_VER}) % {_V_MOD} AS double) / {_V_MOD}D AS v",
        f"concat('s', cast((id * {_S_MUL} + {version}) % {_S_MOD} AS string)) AS s",
    ]


def pk_ids(rows: int, version: int) -> Any:
    """numpy int64 keys of the first commit (version 1) or of the upsert (version 2)."""
    import numpy as np

    if version == 1:
        return np.arange(rows, dtype=np.int64)
    i = np.arange(pk_upsert_rows(rows), dtype=np.int64)
    return i * 10 + i % 4


def pk_arrow(rows: int, version: int) -> Any:
    """The rows of commit ``version`` (1 or 2) as a pyarrow Table, equal to ``pk_exprs``."""
    return pk_rows(pk_ids(rows, version), version)


def pk_rows(ids: Any, version: int) -> Any:
    """``pk_exprs(version)`` over the int64 numpy keys ``ids``, as a pyarrow Table."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    n = len(PK_PARTITIONS)
    p = pa.array(PK_PARTITIONS).take(pa.array(ids % n))
    v = ((ids * _V_MUL + version * _V_VER) % _V_MOD).astype(np.float64) / float(_V_MOD)
    s_num = pa.array((ids * _S_MUL + version) % _S_MOD).cast(pa.string())
    s = pc.binary_join_element_wise("s", s_num, "")
    schema = pa.schema(
        [
            pa.field("k", pa.int64(), nullable=False),
            pa.field("p", pa.string(), nullable=False),
            ("ver", pa.int32()),
            ("v", pa.float64()),
            ("s", pa.string()),
        ]
    )
    ver = pa.array(np.full(len(ids), version, dtype=np.int32))
    return pa.Table.from_arrays([pa.array(ids), p, ver, pa.array(v), s], schema=schema)


# The merge-read checksum: every column takes part, so no reader can skip one, and the
# version-weighted key sum shows that the upsert won for exactly the upserted keys.
PK_TOTALS = ("rows", "sum_k", "sum_ver", "sum_k_ver", "sum_v", "len_s", "len_p")
PK_TOTALS_SQL = [
    "count(1)",
    "sum(k)",
    "sum(ver)",
    "sum(k * ver)",
    "sum(v)",
    "sum(length(s))",
    "sum(length(p))",
]


def pk_totals(table: Any) -> dict[str, float]:
    """PK_TOTALS of an Arrow table (what a merge-read returned)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    def total(values: Any) -> float:
        got = pc.sum(values).as_py()
        return got or 0

    k = table.column("k").cast(pa.int64())
    ver = table.column("ver").cast(pa.int64())
    return {
        "rows": table.num_rows,
        "sum_k": total(k),
        "sum_ver": total(ver),
        "sum_k_ver": total(pc.multiply(k, ver)),
        "sum_v": total(table.column("v")),
        "len_s": total(pc.utf8_length(table.column("s"))),
        "len_p": total(pc.utf8_length(table.column("p"))),
    }


def pk_expected(rows: int) -> dict[str, float]:
    """PK_TOTALS after both commits, computed from the generator without any table."""
    import numpy as np
    import pyarrow as pa

    base = pk_arrow(rows, 1)
    upsert = pk_arrow(rows, 2)
    keep = np.ones(rows, dtype=bool)
    keep[pk_ids(rows, 2)] = False
    merged = pa.concat_tables([base.filter(pa.array(keep)), upsert])
    return pk_totals(merged)


# --- dynamic-bucket upsert (bench/dynamic_bucket_upsert.py) --------------------------------------
# The table holds keys 0..N-1 (version 1); the upsert writes N rows with keys N/2..3N/2-1
# (version 2): the first N/2 exist, the other N/2 are new, spread over every partition.


def dyn_upsert_id_expr(rows: int) -> str:
    """Over ``spark.range(rows)``: the upserted keys, as ``dyn_ids(rows, 2)``."""
    return f"id + {rows // 2} AS id"


def dyn_ids(rows: int, version: int) -> Any:
    """numpy int64 keys of the table's first commit (version 1) or of the upsert (version 2)."""
    import numpy as np

    ids = np.arange(rows, dtype=np.int64)
    return ids if version == 1 else ids + rows // 2


def dyn_arrow(rows: int, version: int) -> Any:
    """The rows of commit ``version`` as a pyarrow Table, equal to ``pk_exprs(version)`` over
    ``spark.range(rows)`` (version 2: after ``dyn_upsert_id_expr(rows)``)."""
    return pk_rows(dyn_ids(rows, version), version)


def dyn_expected(rows: int) -> dict[str, float]:
    """PK_TOTALS after the first commit and the upsert, from the generator alone."""
    import numpy as np
    import pyarrow as pa

    keep = np.ones(rows, dtype=bool)
    upserted = dyn_ids(rows, 2)
    keep[upserted[upserted < rows]] = False
    merged = pa.concat_tables([dyn_arrow(rows, 1).filter(pa.array(keep)), dyn_arrow(rows, 2)])
    return pk_totals(merged)


def totals_mismatch(expected: dict[str, float], got: dict[str, float]) -> str | None:
    """Why ``got`` differs from ``expected`` (doubles to 1e-9 relative), or None."""
    for key in PK_TOTALS:
        want, have = expected[key], got.get(key)
        if have is None:
            return f"{key} missing"
        if isinstance(want, float) or isinstance(have, float):
            if abs(float(have) - float(want)) > 1e-9 * max(1.0, abs(float(want))):
                return f"{key} = {have}, expected {want}"
        elif int(have) != int(want):
            return f"{key} = {have}, expected {want}"
    return None


# --- machine ------------------------------------------------------------------------------------


CPU_ALSO: list[int] = []
"""More process trees ``tree_cpu_seconds`` counts: a Spark Connect client's server (its JVM
and Python workers), which is not the client's child."""


def tree_cpu_seconds() -> float:
    """CPU seconds (user + system) used so far by this process and all its descendants, and by
    the trees of ``CPU_ALSO``.

    The tree is the driver, the JVM and Spark's Python workers; children that have exited are
    counted through their parents' cutime/cstime. NaN where /proc is not available.
    """
    try:
        stats: dict[int, tuple[int, float]] = {}
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat") as f:
                    text = f.read()
            except OSError:
                continue
            fields = text[text.rindex(")") + 2 :].split()
            ppid = int(fields[1])
            ticks = sum(int(x) for x in fields[11:15])  # utime stime cutime cstime
            stats[int(entry)] = (ppid, float(ticks))
    except OSError:
        return float("nan")
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in stats.items():
        children.setdefault(ppid, []).append(pid)
    total, todo = 0.0, [os.getpid(), *CPU_ALSO]
    while todo:
        pid = todo.pop()
        if pid in stats:
            total += stats[pid][1]
        todo.extend(children.get(pid, []))
    return total / os.sysconf("SC_CLK_TCK")


def load_average() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "?"
