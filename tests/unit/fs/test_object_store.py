"""ObjectStoreFileIO against a real S3 server (moto's, on loopback)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from tests.s3_server import S3Server

from paimon_pyspark import FileSystemCatalog, Schema
from paimon_pyspark.errors import CorruptTableError, OptionError, UnsupportedOptionError
from paimon_pyspark.fs.file_io import FileIO, abort_output


@pytest.fixture
def s3io(s3_server: S3Server, s3_bucket: str) -> tuple[FileIO, str]:
    io, root = FileIO.for_uri(f"s3://{s3_bucket}/root", s3_server.options())
    assert root == f"{s3_bucket}/root"
    return io, root


def test_files_directories_and_listing(s3io: tuple[FileIO, str]) -> None:
    io, root = s3io
    assert io.is_object_store and not io.is_local
    assert not io.exists(root) and io.list_names(root) == []
    io.write_bytes(f"{root}/a/x", b"1")
    io.write_bytes(f"{root}/a/y", b"22")
    io.write_bytes(f"{root}/a/sub/z", b"333")
    assert io.is_file(f"{root}/a/x") and not io.is_file(f"{root}/a")
    assert io.exists(f"{root}/a") and io.is_dir(f"{root}/a") and not io.is_dir(f"{root}/a/x")
    assert sorted(io.list_names(f"{root}/a")) == ["sub", "x", "y"]
    assert io.list_dirs(f"{root}/a") == ["sub"]
    assert io.read_bytes(f"{root}/a/y") == b"22" and io.file_size(f"{root}/a/sub/z") == 3
    assert io.mtime(f"{root}/a/x") > 0
    io.delete_quietly(f"{root}/a/x")
    io.delete_quietly(f"{root}/a/never-there")
    assert not io.is_file(f"{root}/a/x")
    io.delete_dir(f"{root}/a")
    assert not io.exists(f"{root}/a")
    with pytest.raises(CorruptTableError, match="is missing"):
        io.read_bytes(f"{root}/a/y")


def test_an_empty_directory_that_must_exist(s3io: tuple[FileIO, str]) -> None:
    io, root = s3io
    io.mkdirs(f"{root}/implicit")
    assert not io.exists(f"{root}/implicit")  # a prefix exists once something is under it
    io.create_directory(f"{root}/db.db")
    assert io.is_dir(f"{root}/db.db") and io.list_names(f"{root}/db.db") == []
    assert io.list_dirs(root) == ["db.db"]


def test_atomic_publish_is_create_if_absent(s3io: tuple[FileIO, str]) -> None:
    io, root = s3io
    assert io.try_write_atomic(f"{root}/snapshot/snapshot-1", b"mine")
    assert not io.try_write_atomic(f"{root}/snapshot/snapshot-1", b"theirs")
    assert io.read_bytes(f"{root}/snapshot/snapshot-1") == b"mine"
    # a retried request whose first answer was lost: the object holds exactly our bytes
    assert io.try_write_atomic(f"{root}/snapshot/snapshot-1", b"mine")
    io.overwrite_hint(f"{root}/snapshot/LATEST", "1")
    io.overwrite_hint(f"{root}/snapshot/LATEST", "2")
    assert io.read_text(f"{root}/snapshot/LATEST") == "2"
    # the bucket was probed once, and the probe left nothing behind
    assert sorted(io.list_names(f"{root}/snapshot")) == ["LATEST", "snapshot-1"]


def test_streamed_parquet_round_trip(s3io: tuple[FileIO, str]) -> None:
    io, root = s3io
    table = pa.table({"a": list(range(300_000)), "b": [str(i) for i in range(300_000)]})
    out = io.open_output(f"{root}/t.parquet")
    pq.write_table(table, out, row_group_size=50_000)
    size = out.tell()
    out.close()
    assert io.file_size(f"{root}/t.parquet") == size
    with io.open_input(f"{root}/t.parquet") as f:
        assert pq.read_table(f, columns=["a"]).column("a").to_pylist() == list(range(300_000))
    with io.open_input(f"{root}/t.parquet") as f:
        assert pq.read_table(f).equals(table)


def test_aborted_output_leaves_no_object_and_no_upload(
    s3io: tuple[FileIO, str], s3_server: S3Server, s3_bucket: str
) -> None:
    io, root = s3io
    out = io.open_output(f"{root}/big")
    out.write(b"x" * (25 * 1024 * 1024))  # past the buffer: a multipart upload is open
    abort_output(out)
    assert s3_server.list_keys(s3_bucket) == []
    assert s3_server.open_uploads(s3_bucket) == []


def test_store_errors_are_os_errors(s3_server: S3Server) -> None:
    io, root = FileIO.for_uri("s3://no-such-bucket/wh", s3_server.options())
    with pytest.raises(OSError, match="no-such-bucket"):
        io.write_bytes(f"{root}/x", b"1")


def test_options_are_checked(s3_server: S3Server) -> None:
    with pytest.raises(UnsupportedOptionError, match="s3.connection.maximum"):
        FileIO.for_uri("s3://b/wh", {**s3_server.options(), "s3.connection.maximum": "9"})
    with pytest.raises(OptionError, match="s3.path.style.access"):
        FileIO.for_uri("s3://b/wh", {**s3_server.options(), "s3.path.style.access": "1"})


def test_table_options_configure_the_store(s3_catalog: FileSystemCatalog) -> None:
    """``s3.*`` as dynamic table options reopen the table's store with them."""
    s3_catalog.create_table("db.t", Schema.from_pyarrow_schema(pa.schema([("id", pa.int64())])))
    table = s3_catalog.get_table("db.t")
    assert table.copy({"bucket": "-1"}).file_io is table.file_io
    elsewhere = table.copy({"s3.endpoint": "http://127.0.0.1:9"})  # nothing listens there
    assert elsewhere.file_io is not table.file_io
    with pytest.raises(OSError, match="127.0.0.1:9"):
        elsewhere.file_io.read_bytes(elsewhere.snapshot_manager.snapshot_path(1))


def test_credentials_and_endpoint_from_the_aws_environment(
    s3_server: S3Server, s3_bucket: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    options = s3_server.options()
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", options["s3.access-key"])
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", options["s3.secret-key"])
    monkeypatch.setenv("AWS_REGION", options["s3.endpoint.region"])
    monkeypatch.setenv("AWS_ENDPOINT_URL", s3_server.endpoint)
    io, root = FileIO.for_uri(f"s3://{s3_bucket}/wh", {"s3.path.style.access": "true"})
    io.write_bytes(f"{root}/x", b"1")
    assert s3_server.list_keys(s3_bucket) == ["wh/x"]


def test_credentials_from_an_aws_profile(
    s3_server: S3Server, s3_bucket: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    options = s3_server.options()
    credentials = tmp_path / "credentials"
    credentials.write_text(
        "[paimon-test]\n"
        f"aws_access_key_id = {options['s3.access-key']}\n"
        f"aws_secret_access_key = {options['s3.secret-key']}\n"
    )
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(credentials))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    monkeypatch.setenv("AWS_PROFILE", "paimon-test")
    without_keys = {k: v for k, v in options.items() if k not in ("s3.access-key", "s3.secret-key")}
    io, root = FileIO.for_uri(f"s3://{s3_bucket}/wh", without_keys)
    io.write_bytes(f"{root}/x", b"1")
    monkeypatch.undo()  # the test's own boto3 client reads the environment too
    assert s3_server.list_keys(s3_bucket) == ["wh/x"]


def test_a_missing_aws_profile_is_a_typed_error(
    s3_server: S3Server, s3_bucket: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_PROFILE", "nowhere")
    options = {"s3.endpoint": s3_server.endpoint, "s3.path.style.access": "true"}
    io, root = FileIO.for_uri(f"s3://{s3_bucket}/wh", options)
    with pytest.raises(OptionError, match="AWS profile 'nowhere'"):
        io.write_bytes(f"{root}/x", b"1")
