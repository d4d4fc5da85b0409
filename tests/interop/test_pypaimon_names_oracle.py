"""Our pypaimon names against pypaimon itself (2.1, in its own venv): every exception name of
pypaimon.catalog.catalog_exception and every CoreOptions constant we define, with its key and
default."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
from collections.abc import Mapping
from typing import Any

import pytest
from pypaimon_oracle import pypaimon_python

from paimon_pyspark import ConfigOption, CoreOptions, errors

pytestmark = pytest.mark.pypaimon

LISTER = """
import enum, inspect, json
import pypaimon.catalog.catalog_exception as ce
from pypaimon.common.memory_size import MemorySize
from pypaimon.common.options.config_option import ConfigOption
from pypaimon.common.options.core_options import CoreOptions
from datetime import timedelta

def plain(v):
    if isinstance(v, enum.Enum):
        return v.value
    if isinstance(v, MemorySize):
        return v.get_bytes()
    if isinstance(v, timedelta):
        return {"ms": v / timedelta(milliseconds=1)}
    return v

exceptions = {
    n: issubclass(c, ce.CatalogException)
    for n, c in vars(ce).items()
    if inspect.isclass(c) and issubclass(c, Exception) and c.__module__ == ce.__name__
}
options = {
    n: [o.key(), plain(o.default_value())]
    for n, o in vars(CoreOptions).items()
    if isinstance(o, ConfigOption)
}
print(json.dumps({"exceptions": exceptions, "options": options}))
"""

# Java 1.4.2's defaults, where pypaimon's differ from them (CoreOptions.java).
JAVA_NOT_PYPAIMON = {
    "METADATA_STATS_MODE",
    "BLOB_TARGET_FILE_SIZE",
    "SCAN_MANIFEST_PARALLELISM",
    "GLOBAL_INDEX_THREAD_NUM",
    "POSTPONE_DEFAULT_BUCKET_NUM",
}


@pytest.fixture(scope="module")
def pypaimon_names() -> dict[str, Any]:
    out = subprocess.run(
        [str(pypaimon_python()), "-c", LISTER],
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    names: dict[str, Any] = json.loads(out)
    return names


def _plain(v: object) -> object:
    if isinstance(v, Mapping):
        return dict(v)
    return {"ms": v / dt.timedelta(milliseconds=1)} if isinstance(v, dt.timedelta) else v


def test_every_pypaimon_exception_name_is_ours(pypaimon_names: dict[str, Any]) -> None:
    exceptions: dict[str, bool] = pypaimon_names["exceptions"]
    assert "TableNotExistException" in exceptions
    missing = [n for n in exceptions if not hasattr(errors, n)]
    assert missing == []
    for name, is_catalog in exceptions.items():
        ours = getattr(errors, name)
        if name != "IllegalArgumentError":  # ours: InvalidArgumentError, raised by any call
            assert issubclass(ours, errors.CatalogError) == is_catalog, name


def test_our_core_options_constants_match_pypaimons(pypaimon_names: dict[str, Any]) -> None:
    theirs: dict[str, list[Any]] = pypaimon_names["options"]
    ours = {n: v for n, v in vars(CoreOptions).items() if isinstance(v, ConfigOption)}
    assert set(ours) <= set(theirs)
    assert {n: o.key() for n, o in ours.items()} == {n: theirs[n][0] for n in ours}
    differ = {
        n
        for n, o in ours.items()
        if n not in JAVA_NOT_PYPAIMON and _plain(o.default_value()) != theirs[n][1]
    }
    assert differ == set()
