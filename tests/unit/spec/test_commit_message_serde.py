"""CommitMessage bytes against Java's golden ManifestCommittable files, every version 2..13.

The golden files come from Java's ManifestCommittableSerializerCompatibilityTest; the expected
objects below rebuild that test's fixture for each version (fields a version does not carry are
None). Each file must decode to exactly that and re-encode to exactly the same bytes.
"""

from __future__ import annotations

import dataclasses
import pickle
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from paimon_pyspark import CommitMessageSerializer
from paimon_pyspark.errors import CommitMessageSerdeError, PaimonError
from paimon_pyspark.spec import commit_message_serde as serde
from paimon_pyspark.spec.binary_row import serialize_with_arity
from paimon_pyspark.spec.commit_message import (
    CommitMessage,
    CompactIncrement,
    DataIncrement,
    ManifestCommittable,
)
from paimon_pyspark.spec.commit_message_serde import ManifestCommittableSerializer
from paimon_pyspark.spec.data_file_meta import EMPTY_STATS, DataFileMeta, SimpleStats
from paimon_pyspark.spec.manifest import DeletionVectorRange, GlobalIndexMeta, IndexFileMeta
from paimon_pyspark.types.data_types import STRING

GOLDEN = Path(__file__).resolve().parents[4] / "shared" / "spec" / "golden"

# file suffix -> (ManifestCommittable version, CommitMessage version), from golden/README.md
GOLDEN_VERSIONS = {
    "v2-0.7": (2, 2),
    "v2": (2, 2),
    "v3": (3, 3),
    "v4": (3, 4),
    "v5": (3, 5),
    "v6": (3, 6),
    "v7": (3, 7),
    "v4-v7": (4, 7),
    "v8": (4, 8),
    "v9": (4, 9),
    "v10": (4, 10),
    "v11": (4, 11),
    "v11-v5": (5, 11),
    "v13-v5": (5, 13),
}

MIB = 1024 * 1024
CREATED_2022_03_02T20_20_12 = 1646252412000  # LocalDateTime as if UTC, epoch millis
CREATED_2026_08_07T00_00 = 1786060800000


def _str_row(value: str) -> bytes:
    return serialize_with_arity([value], [STRING()])


def _fixture_file(version: int, legacy: bool) -> DataFileMeta:
    """Java's ``my_file``, with the fields ``version`` knows (DataFileMeta.create(...))."""
    return DataFileMeta(
        file_name="my_file",
        file_size=MIB,
        row_count=1024,
        min_key=_str_row("min_key"),
        max_key=_str_row("max_key"),
        key_stats=SimpleStats(_str_row("min_key"), _str_row("max_key"), (0,)),
        value_stats=SimpleStats(_str_row("min_value"), _str_row("max_value"), (0,)),
        min_sequence_number=15,
        max_sequence_number=200,
        schema_id=5,
        level=3,
        extra_files=("extra1", "extra2"),
        creation_time=CREATED_2022_03_02T20_20_12,
        delete_row_count=None if legacy else 11,
        embedded_index=None if legacy else b"\x01\x02\x04",
        file_source=1 if version >= 3 else None,
        value_stats_cols=("field1", "field2", "field3") if version >= 4 else None,
        external_path="hdfs://localhost:9000/path/to/file" if version >= 6 else None,
        first_row_id=1 if version >= 8 else None,
        write_cols=("asdf", "qwer", "zxcv") if version >= 9 else None,
        write_cols_sequences=None,
    )


def _dv_index(version: int) -> IndexFileMeta:
    cardinality = (3, 5) if version >= 5 else (None, None)
    return IndexFileMeta(
        "my_index_type",
        "my_index_file",
        1024 * 100,
        1002,
        (
            DeletionVectorRange("dv_key1", 1, 2, cardinality[0]),
            DeletionVectorRange("dv_key2", 3, 4, cardinality[1]),
        ),
        "external_path" if version >= 9 else None,
    )


def expected_committable(name: str) -> ManifestCommittable:
    mc_version, version = GOLDEN_VERSIONS[name]
    if name == "v13-v5":
        message = _v13_message()
    else:
        legacy = name == "v2-0.7"
        files = (_fixture_file(version, legacy),)
        if legacy:
            data = DataIncrement(files, (), files)
            compact_index: tuple[IndexFileMeta, ...] = (
                IndexFileMeta("my_index_type", "my_index_file", 1024 * 100, 1002),
            )
        elif version >= 10:
            gi = GlobalIndexMeta(1, 2, 3, (5, 6, 7), b"\x23\x45") if version >= 11 else None
            hash_index = IndexFileMeta(
                "my_index_type", "my_index_file", 1024 * 100, 1002, None, None, gi
            )
            data = DataIncrement(files, files, files, (hash_index,), (hash_index,))
            compact_index = (_dv_index(version),)
        else:
            data = DataIncrement(files, files, files)
            compact_index = (_dv_index(version),)
        compact = CompactIncrement(files, files, files, compact_index)
        total = 16 if version >= 7 else None
        message = CommitMessage(_str_row("my_partition"), 11, total, data, compact)
    return ManifestCommittable(
        identifier=5,
        watermark=202020,
        file_committables=(message,),
        properties={"k1": "v1", "k2": "v2"} if mc_version >= 4 else {},
        legacy_log_offsets=((5, 555),) if mc_version <= 4 else (),
    )


def _v13_message() -> CommitMessage:
    """testCompatibilityToV5CommitV13: column max sequence numbers, EMPTY stats, one index."""
    f = DataFileMeta(
        file_name="column-sequence-file",
        file_size=1024,
        row_count=10,
        min_key=_str_row("min_key"),
        max_key=_str_row("max_key"),
        key_stats=EMPTY_STATS,
        value_stats=EMPTY_STATS,
        min_sequence_number=1,
        max_sequence_number=5,
        schema_id=1,
        level=0,
        extra_files=(),
        creation_time=CREATED_2026_08_07T00_00,
        delete_row_count=0,
        embedded_index=None,
        file_source=1,
        value_stats_cols=None,
        external_path=None,
        first_row_id=1,
        write_cols=("a", "b"),
        write_cols_sequences=(3, 5),
    )
    index = IndexFileMeta("index-type", "index-file", 100, 10)
    files = (f,)
    return CommitMessage(
        _str_row("my_partition"),
        11,
        16,
        DataIncrement(files, files, files, (index,), (index,)),
        CompactIncrement(files, files, files, (index,)),
    )


def _golden(name: str) -> bytes:
    return (GOLDEN / f"manifest-committable-{name}").read_bytes()


def test_every_golden_file_is_covered() -> None:
    on_disk = {p.name.removeprefix("manifest-committable-") for p in GOLDEN.glob("manifest-*")}
    assert on_disk == set(GOLDEN_VERSIONS)


@pytest.mark.parametrize("name", list(GOLDEN_VERSIONS))
def test_golden_decodes_to_the_java_fixture(name: str) -> None:
    mc_version, _ = GOLDEN_VERSIONS[name]
    decoded = ManifestCommittableSerializer().deserialize(mc_version, _golden(name))
    assert decoded == expected_committable(name)


@pytest.mark.parametrize("name", [n for n in GOLDEN_VERSIONS if n != "v2-0.7"])
def test_golden_reencodes_to_identical_bytes(name: str) -> None:
    mc_version, version = GOLDEN_VERSIONS[name]
    data = _golden(name)
    decoded = ManifestCommittableSerializer().deserialize(mc_version, data)
    assert ManifestCommittableSerializer(version).serialize(decoded, mc_version) == data
    # the embedded message list alone, through the public message serializer
    messages = CommitMessageSerializer().serialize_list(decoded.file_committables, version)
    assert data.endswith(messages)
    assert CommitMessageSerializer().deserialize_list(version, messages) == list(
        decoded.file_committables
    )


def test_paimon_07_layout_falls_back_and_reencodes_identically() -> None:
    data = _golden("v2-0.7")
    decoded = ManifestCommittableSerializer().deserialize(2, data)
    # nothing is lost by the 0.8 layout of version 2, which is what we write
    modern = ManifestCommittableSerializer(2).serialize(decoded, 2)
    assert modern != data
    assert ManifestCommittableSerializer().deserialize(2, modern) == decoded
    # the 0.7 layout itself, written by the private legacy writer, is Java's to the byte
    out = serde._Output()
    serde._write_list(out, decoded.file_committables, serde._LEGACY_V2)
    header = modern[
        : len(modern) - len(CommitMessageSerializer(2).serialize_list(decoded.file_committables))
    ]
    assert header + bytes(out.buf) == data
    # like Java's, the bare message serializer has no 0.7 fallback; ManifestCommittable has
    with pytest.raises(CommitMessageSerdeError):
        CommitMessageSerializer().deserialize_list(2, bytes(out.buf))


def test_golden_fields_spelled_out() -> None:
    """The fixture values named in golden/README.md, read from the v11 and v13 files."""
    v11 = ManifestCommittableSerializer().deserialize(5, _golden("v11-v5"))
    assert (v11.identifier, v11.watermark, v11.properties) == (5, 202020, {"k1": "v1", "k2": "v2"})
    m = v11.file_committables[0]
    assert (m.partition, m.bucket, m.total_buckets) == (_str_row("my_partition"), 11, 16)
    f = m.data_increment.new_files[0]
    assert (f.file_name, f.file_size, f.row_count) == ("my_file", MIB, 1024)
    assert (f.min_key, f.max_key) == (_str_row("min_key"), _str_row("max_key"))
    assert (f.min_sequence_number, f.max_sequence_number, f.level) == (15, 200, 3)
    assert (f.embedded_index, f.file_source) == (b"\x01\x02\x04", 1)
    hash_index = m.data_increment.new_index_files[0]
    assert hash_index.global_index == GlobalIndexMeta(1, 2, 3, (5, 6, 7), b"\x23\x45", None)
    dv = m.compact_increment.new_index_files[0]
    assert (dv.index_type, dv.file_name, dv.file_size, dv.row_count) == (
        "my_index_type",
        "my_index_file",
        102400,
        1002,
    )
    assert [(r.data_file_name, r.offset, r.length) for r in dv.dv_ranges or ()] == [
        ("dv_key1", 1, 2),
        ("dv_key2", 3, 4),
    ]
    v13 = ManifestCommittableSerializer().deserialize(5, _golden("v13-v5")).file_committables[0]
    g = v13.data_increment.new_files[0]
    assert (g.file_name, g.write_cols, g.write_cols_sequences) == (
        "column-sequence-file",
        ("a", "b"),
        (3, 5),
    )


# --- writing versions 11, 12, 13 ---------------------------------------------------------------


def _writer_message(**file_changes: object) -> CommitMessage:
    f = dataclasses.replace(_fixture_file(12, legacy=False), **file_changes)  # type: ignore[arg-type]
    return CommitMessage(_str_row("p"), 3, 4, DataIncrement((f,)))


@pytest.mark.parametrize("version", [11, 12, 13])
def test_writer_messages_round_trip_at_every_java_release_version(version: int) -> None:
    messages = [_writer_message(), _writer_message(file_name="other", value_stats_cols=None)]
    s = CommitMessageSerializer(version)
    assert s.get_version() == version
    assert s.deserialize(version, s.serialize(messages[0])) == messages[0]
    assert s.deserialize_list(version, s.serialize_list(messages)) == messages
    assert CommitMessageSerializer().deserialize_list(version, s.serialize_list(messages)) == (
        messages
    )


def test_default_version_is_java_2_0() -> None:
    assert CommitMessageSerializer.VERSION == 12
    assert CommitMessageSerializer().get_version() == 12
    m = _writer_message()
    assert CommitMessageSerializer().serialize(m) == CommitMessageSerializer().serialize(m, 12)


def test_version_12_keeps_global_index_source_meta_and_11_refuses_it() -> None:
    gi = GlobalIndexMeta(1, 2, 3, None, b"meta", b"source")
    index = IndexFileMeta("btree", "index-1", 10, 2, None, None, gi)
    m = CommitMessage(_str_row("p"), 0, 1, DataIncrement(new_index_files=(index,)))
    for version in (12, 13):
        assert (
            CommitMessageSerializer().deserialize(
                version, CommitMessageSerializer().serialize(m, version)
            )
            == m
        )
    with pytest.raises(CommitMessageSerdeError, match="source meta"):
        CommitMessageSerializer().serialize(m, 11)
    no_source = dataclasses.replace(index, global_index=dataclasses.replace(gi, source_meta=None))
    m11 = dataclasses.replace(m, data_increment=DataIncrement(new_index_files=(no_source,)))
    assert (
        CommitMessageSerializer().deserialize(11, CommitMessageSerializer().serialize(m11, 11))
        == m11
    )


def test_fields_an_old_version_cannot_hold_are_refused_not_dropped() -> None:
    with pytest.raises(CommitMessageSerdeError, match="write_cols_sequences"):
        CommitMessageSerializer().serialize(_writer_message(write_cols_sequences=(1, 2)), 12)
    with pytest.raises(CommitMessageSerdeError, match="total_buckets"):
        CommitMessageSerializer().serialize(_writer_message(write_cols=None, first_row_id=None), 6)
    index = IndexFileMeta("HASH", "index-1", 10, 2)
    both = CommitMessage(
        _str_row("p"),
        0,
        1,
        DataIncrement(new_index_files=(index,)),
        CompactIncrement(compact_after=(_fixture_file(9, legacy=False),), new_index_files=(index,)),
    )
    with pytest.raises(CommitMessageSerdeError, match="index files"):
        CommitMessageSerializer().serialize(both, 9)
    assert (
        CommitMessageSerializer().deserialize(10, CommitMessageSerializer().serialize(both, 10))
        == both
    )


def test_values_out_of_javas_range_are_typed_errors() -> None:
    too_big = dataclasses.replace(_writer_message(), bucket=2**31)
    with pytest.raises(CommitMessageSerdeError, match="does not fit"):
        CommitMessageSerializer().serialize(too_big)
    with pytest.raises(CommitMessageSerdeError, match="DataFileMeta"):
        CommitMessageSerializer().serialize(_writer_message(file_size=2**63))
    with pytest.raises(CommitMessageSerdeError, match="CommitMessage objects"):
        CommitMessageSerializer().serialize_list(["not a message"])  # type: ignore[list-item]


def test_unknown_versions_are_typed_errors() -> None:
    data = CommitMessageSerializer().serialize(_writer_message())
    for version in (0, -1, 14, 99):
        with pytest.raises(CommitMessageSerdeError, match="version"):
            CommitMessageSerializer().deserialize(version, data)
        with pytest.raises(CommitMessageSerdeError, match="version"):
            CommitMessageSerializer().serialize(_writer_message(), version)
    with pytest.raises(CommitMessageSerdeError):
        CommitMessageSerializer(1)
    with pytest.raises(CommitMessageSerdeError, match="ManifestCommittable version 6"):
        ManifestCommittableSerializer().deserialize(6, _golden("v13-v5"))
    assert issubclass(CommitMessageSerdeError, PaimonError)


@pytest.mark.parametrize("version", [2, 9, 11, 12, 13])
def test_every_truncation_and_trailing_bytes_are_typed_errors(version: int) -> None:
    m = _writer_message(
        value_stats_cols=None, first_row_id=None, write_cols=None, external_path=None
    )
    m = dataclasses.replace(m, total_buckets=None if version < 7 else 4)
    if version < 3:
        m = dataclasses.replace(
            m,
            data_increment=DataIncrement(
                (dataclasses.replace(m.data_increment.new_files[0], file_source=None),)
            ),
        )
    data = CommitMessageSerializer().serialize(m, version)
    assert CommitMessageSerializer().deserialize(version, data) == m
    for cut in range(len(data)):
        with pytest.raises(CommitMessageSerdeError):
            CommitMessageSerializer().deserialize(version, data[:cut])
    with pytest.raises(CommitMessageSerdeError, match="trailing"):
        CommitMessageSerializer().deserialize(version, data + b"\x00")
    listed = CommitMessageSerializer().serialize_list([m, m], version)
    with pytest.raises(CommitMessageSerdeError):
        CommitMessageSerializer().deserialize_list(version, listed[:-1])
    with pytest.raises(CommitMessageSerdeError, match="trailing"):
        CommitMessageSerializer().deserialize_list(version, listed + b"\x01")


@pytest.mark.parametrize("name", list(GOLDEN_VERSIONS))
def test_golden_truncations_and_trailing_bytes_are_typed_errors(name: str) -> None:
    mc_version, _ = GOLDEN_VERSIONS[name]
    data = _golden(name)
    for cut in range(0, len(data), 3):
        with pytest.raises(CommitMessageSerdeError):
            ManifestCommittableSerializer().deserialize(mc_version, data[:cut])
    with pytest.raises(CommitMessageSerdeError):
        ManifestCommittableSerializer().deserialize(mc_version, data + b"\x00")


def test_properties_use_javas_modified_utf8() -> None:
    mc = ManifestCommittable(1, None, (), {"nul\x00": "😀", "é": ""})
    data = ManifestCommittableSerializer().serialize(mc)
    assert b"\x00\x05nul\xc0\x80" in data  # NUL as C0 80
    assert b"\x00\x06\xed\xa0\xbd\xed\xb8\x80" in data  # a surrogate pair, 3 bytes each half
    assert b"\x00\x02\xc3\xa9\x00\x00" in data
    assert ManifestCommittableSerializer().deserialize(5, data) == mc


# --- pickling ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["v11-v5", "v13-v5", "v2-0.7"])
def test_commit_messages_pickle_with_nothing_lost(name: str) -> None:
    mc = expected_committable(name)
    for protocol in range(2, pickle.HIGHEST_PROTOCOL + 1):
        again = pickle.loads(pickle.dumps(mc, protocol=protocol))
        assert again == mc
        assert again.file_committables[0] == mc.file_committables[0]
        for version in (11, 12, 13):
            try:
                data = CommitMessageSerializer().serialize(mc.file_committables[0], version)
            except CommitMessageSerdeError:
                continue  # a field this version cannot hold
            assert CommitMessageSerializer().serialize(again.file_committables[0], version) == data


# --- property: any message a version can hold survives it ----------------------------------------

_names = st.text(min_size=0, max_size=20)
_longs = st.integers(-(2**63), 2**63 - 1)
_opt_names = st.none() | st.lists(_names, max_size=3).map(tuple)


@st.composite
def _files(draw: st.DrawFn) -> DataFileMeta:
    def stats() -> SimpleStats:
        nc = draw(st.none() | st.lists(st.none() | _longs, max_size=3).map(tuple))
        return SimpleStats(_str_row(draw(_names)), _str_row(draw(_names)), nc)

    return DataFileMeta(
        file_name=draw(_names),
        file_size=draw(_longs),
        row_count=draw(_longs),
        min_key=draw(st.binary(max_size=30)),
        max_key=draw(st.binary(max_size=30)),
        key_stats=stats(),
        value_stats=stats(),
        min_sequence_number=draw(_longs),
        max_sequence_number=draw(_longs),
        schema_id=draw(_longs),
        level=draw(st.integers(-(2**31), 2**31 - 1)),
        extra_files=tuple(draw(st.lists(_names, max_size=3))),
        creation_time=draw(st.none() | _longs),
        delete_row_count=draw(st.none() | _longs),
        embedded_index=draw(st.none() | st.binary(max_size=20)),
        file_source=draw(st.none() | st.sampled_from([0, 1])),
        value_stats_cols=draw(_opt_names),
        external_path=draw(st.none() | _names),
        first_row_id=draw(st.none() | _longs),
        write_cols=draw(_opt_names),
        write_cols_sequences=draw(st.none() | st.lists(_longs, max_size=3).map(tuple)),
    )


@settings(max_examples=60, deadline=None)
@given(
    files=st.lists(_files(), max_size=3).map(tuple),
    bucket=st.integers(-2, 2**31 - 1),
    total=st.none() | st.integers(-1, 1024),
)
def test_any_message_round_trips_at_version_13(
    files: tuple[DataFileMeta, ...], bucket: int, total: int | None
) -> None:
    m = CommitMessage(
        _str_row("part"), bucket, total, DataIncrement(files, files[:1]), CompactIncrement(files)
    )
    data = CommitMessageSerializer().serialize(m, 13)
    assert CommitMessageSerializer().deserialize(13, data) == m
    assert pickle.loads(pickle.dumps(m)) == m
