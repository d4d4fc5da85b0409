"""Row ids and sequence numbers given at commit to the new files of a ``row-tracking.enabled``
table (mirrors org.apache.paimon.operation.commit.RowTrackingCommitUtils, called by
FileStoreCommitImpl.tryCommitOnce on every attempt).

Each attempt assigns from its own base snapshot, so a retry after a lost race numbers the rows
again from the winner's ``nextRowId``:

- every delta entry whose file's lowest sequence number is 0 (a writer's first file) gets the
  new snapshot id as its lowest and highest sequence number, which a read gives as each row's
  ``_SEQUENCE_NUMBER`` (read/row_tracking.py);
- every ADD of an APPEND file without a first row id that does not hold ``_ROW_ID`` itself
  (compactions and copy-on-write rewrites carry their rows' ids in the column) gets the next
  ``row_count`` ids, in delta order; the snapshot's ``nextRowId`` is the id after the last.

Java does the same for DELETE entries; theirs already carry what the earlier commit gave them.
Blob and vector-store files (which this package never writes) share the ids of the data file
before them in Java; they are refused here rather than numbered wrongly.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from paimon_pyspark.errors import CorruptTableError, UnsupportedOptionError
from paimon_pyspark.spec.data_file_meta import FILE_SOURCE_APPEND
from paimon_pyspark.spec.manifest import ManifestEntry

ROW_ID_FIELD = "_ROW_ID"


def assign_row_tracking(
    table: str, snapshot_id: int, first_row_id: int, delta: Sequence[ManifestEntry]
) -> tuple[int, list[ManifestEntry]]:
    """``delta`` as snapshot ``snapshot_id`` commits it (rows numbered from ``first_row_id``),
    and the snapshot's ``nextRowId``."""
    out: list[ManifestEntry] = []
    start = first_row_id
    for e in delta:
        f = e.file
        if f.min_sequence_number == 0:
            f = dataclasses.replace(
                f, min_sequence_number=snapshot_id, max_sequence_number=snapshot_id
            )
        if f.file_source is None:
            raise CorruptTableError(
                f"Table '{table}': data file {f.file_name!r} of a row-tracking table has no "
                "file source; its row ids cannot be assigned."
            )
        holds_ids = f.write_cols is not None and ROW_ID_FIELD in f.write_cols
        if f.file_source == FILE_SOURCE_APPEND and f.first_row_id is None and not holds_ids:
            if f.file_name.endswith(".blob") or ".vector." in f.file_name:
                raise UnsupportedOptionError(
                    f"Table '{table}': blob and vector-store file {f.file_name!r} on a "
                    "row-tracking table are not supported by paimon_pyspark; commit it with "
                    "Java Paimon."
                )
            f = dataclasses.replace(f, first_row_id=start)
            start += f.row_count
        out.append(e if f is e.file else dataclasses.replace(e, file=f))
    return start, out
