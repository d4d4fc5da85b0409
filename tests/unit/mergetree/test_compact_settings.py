"""CompactSettings from a table's options: Java's defaults, the errors a bad value raises, and
the options compaction refuses (options.CoreOptions parses them, CompactSettings holds them)."""

from __future__ import annotations

import pyarrow as pa
import pytest

from paimon_pyspark import FileSystemCatalog, Schema
from paimon_pyspark.errors import OptionError, UnsupportedOptionError
from paimon_pyspark.mergetree.compact_settings import CompactSettings
from paimon_pyspark.store.file_store import FileStore

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])


def store(
    catalog: FileSystemCatalog, name: str = "t", pk: bool = True, **options: str
) -> FileStore:
    keys = ["id"] if pk else None
    opts = {"bucket": "1" if pk else "-1", **options}
    catalog.create_table(
        f"db.{name}", Schema.from_pyarrow_schema(SCHEMA, primary_keys=keys, options=opts)
    )
    return catalog.get_table(f"db.{name}").store


def test_defaults_are_javas(catalog: FileSystemCatalog) -> None:
    s = CompactSettings.of(store(catalog))
    mb = 1024 * 1024
    assert s == CompactSettings(
        num_sorted_run_compaction_trigger=5,
        num_levels=6,
        max_size_amplification_percent=200,
        size_ratio=1,
        force_up_level_0=False,
        force_rewrite_all_files=False,
        target_file_size=128 * mb,
        compaction_file_size=int(128 * mb * 0.7),
        min_file_num=5,
        open_file_cost=4 * mb,
        need_lookup=False,
    )
    append = CompactSettings.of(store(catalog, "append", pk=False))
    assert append.target_file_size == 256 * mb and not append.need_lookup


def test_options_are_read(catalog: FileSystemCatalog) -> None:
    s = CompactSettings.of(
        store(
            catalog,
            **{
                "num-sorted-run.compaction-trigger": "3",
                "compaction.max-size-amplification-percent": "50",
                "compaction.size-ratio": "7",
                "compaction.force-up-level-0": "TRUE",
                "compaction.force-rewrite-all-files": "true",
                "compaction.min.file-num": "2",
                "compaction.small-file-ratio": "0.5",
                "source.split.open-file-cost": "1 mb",
                "target-file-size": "10 mb",
                "force-lookup": "true",
                "compaction.offpeak.start.hour": "-1",
                "compaction.offpeak-ratio": "0",
            },
        )
    )
    assert (s.num_sorted_run_compaction_trigger, s.num_levels) == (3, 4)
    assert (s.max_size_amplification_percent, s.size_ratio, s.min_file_num) == (50, 7, 2)
    assert s.force_up_level_0 and s.force_rewrite_all_files and s.need_lookup
    assert s.compaction_file_size == 5 * 1024 * 1024
    assert s.open_file_cost == 1024 * 1024


def test_first_row_needs_lookup_only_with_a_primary_key(catalog: FileSystemCatalog) -> None:
    assert CompactSettings.of(store(catalog, **{"merge-engine": "first-row"})).need_lookup


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"num-levels": "1"}, OptionError, "Table 'db.t': option 'num-levels' = '1' gives 1 LSM"),
        ({"num-levels": "x"}, OptionError, "Table 'db.t': option 'num-levels' = 'x' is not an"),
        (
            {"compaction.size-ratio": "1.5"},
            OptionError,
            "Table 'db.t': option 'compaction.size-ratio' = '1.5' is not an integer.",
        ),
        (
            {"compaction.small-file-ratio": "big"},
            OptionError,
            "option 'compaction.small-file-ratio' = 'big' is not a finite number.",
        ),
        (
            {"compaction.offpeak.start.hour": "2"},
            UnsupportedOptionError,
            "Table 'db.t': option 'compaction.offpeak.start.hour' is not supported by "
            "compaction in paimon_pyspark yet.",
        ),
        (
            {"compaction.optimization-interval": "1 h"},
            UnsupportedOptionError,
            "option 'compaction.optimization-interval' is not supported",
        ),
    ],
)
def test_bad_options_raise(
    catalog: FileSystemCatalog, options: dict[str, str], error: type[Exception], message: str
) -> None:
    with pytest.raises(error) as info:  # option ranges at create, the rest at compaction
        CompactSettings.of(store(catalog, **options))
    assert message in str(info.value)
