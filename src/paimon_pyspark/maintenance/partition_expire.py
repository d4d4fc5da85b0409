"""Partition expiry: ``partition.expiration-time`` and ``CALL sys.expire_partitions``.

Mirrors org.apache.paimon.operation.PartitionExpire with its strategies
(PartitionValuesTimeExpireStrategy, PartitionUpdateTimeExpireStrategy) and
PartitionTimeExtractor. A partition expires when the time its values name
(``values-time``: the first partition value, or ``partition.timestamp-pattern`` with
``$<key>`` replaced by each value, parsed by ``partition.timestamp-formatter`` or Java's
lenient ``yyyy-MM-dd[ HH:mm:ss[.S...]]``) or its newest file's creation time (``update-time``)
lies more than ``partition.expiration-time`` before now (``store/clock.py``). The expired
partitions, sorted by their values joined with ``,`` and cut at ``partition.expiration-max-num``,
are dropped by one OVERWRITE snapshot (``commit/truncate.py``, Java's ``dropPartitions``), or
one per ``partition.expiration-batch-size`` partitions.

After a commit a check runs when ``partition.expiration-check-interval`` is 0, when that
interval has passed since this table handle's last check, or, with
``end-input.check-partition-expire``, at every batch commit (identifier Long.MAX_VALUE). Java
keeps the last check in its TableCommit, starting it a random part of the interval before the
commit object was made; here it is kept per table handle (its FileStore), started the same way
at the handle's first commit. So a batch job that opens the table afresh expires nothing
without ``end-input.check-partition-expire`` or a zero interval, exactly as Java's, and a
long-lived handle (a stream) checks once per interval, as Java's stream does.

Crash safety: each drop is one atomic snapshot. A failure before it publishes leaves the
table as it was, and the next check finds the same partitions expired and drops them.
"""

from __future__ import annotations

import datetime as dt
import random
import re
import uuid
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from paimon_pyspark import options as opts
from paimon_pyspark.commit.overwrite import PartitionFilter
from paimon_pyspark.commit.truncate import truncate
from paimon_pyspark.errors import UnsupportedOptionError
from paimon_pyspark.spec.binary_row import deserialize_with_arity
from paimon_pyspark.spec.snapshot import BATCH_COMMIT_IDENTIFIER
from paimon_pyspark.store import clock
from paimon_pyspark.store.paths import partition_value_string

if TYPE_CHECKING:
    from paimon_pyspark.store.file_store import FileStore
    from paimon_pyspark.types.data_types import DataType

PARTITION_EXPIRATION_TIME = "partition.expiration-time"
PARTITION_EXPIRATION_CHECK_INTERVAL = "partition.expiration-check-interval"
PARTITION_EXPIRATION_STRATEGY = "partition.expiration-strategy"
PARTITION_EXPIRATION_MAX_NUM = "partition.expiration-max-num"
PARTITION_EXPIRATION_BATCH_SIZE = "partition.expiration-batch-size"
PARTITION_TIMESTAMP_FORMATTER = "partition.timestamp-formatter"
PARTITION_TIMESTAMP_PATTERN = "partition.timestamp-pattern"
END_INPUT_CHECK_PARTITION_EXPIRE = "end-input.check-partition-expire"

VALUES_TIME = "values-time"
UPDATE_TIME = "update-time"
STRATEGIES = (VALUES_TIME, UPDATE_TIME)


@dataclass(frozen=True)
class PartitionExpireConfig:
    """The partition expiry options of one table (Java's CoreOptions getters)."""

    expiration_ms: int
    check_interval_ms: int
    strategy: str
    formatter: str | None
    pattern: str | None
    max_num: int
    batch_size: int | None
    end_input_check: bool

    @staticmethod
    def of(store: FileStore) -> PartitionExpireConfig | None:
        """None when the table sets no ``partition.expiration-time`` or has no partition keys
        (Java's ``newPartitionExpire`` returns null then)."""
        raw: Mapping[str, str] = store.options.options
        if raw.get(PARTITION_EXPIRATION_TIME) is None or not store.partition_keys:
            return None

        def value(key: str, default: Any) -> Any:
            return opts.option_value(raw, key, store.name) if key in raw else default

        strategy = raw.get(PARTITION_EXPIRATION_STRATEGY, VALUES_TIME)
        if strategy not in STRATEGIES:
            # Java's own values are lower case and compared as given; anything else would need
            # a custom PartitionExpireStrategyFactory, which only a JVM can load
            raise UnsupportedOptionError(
                f"Table '{store.name}': option '{PARTITION_EXPIRATION_STRATEGY}' = '{strategy}' "
                f"is not one of {', '.join(STRATEGIES)} (a custom strategy needs Java's "
                "PartitionExpireStrategyFactory)."
            )
        batch = raw.get(PARTITION_EXPIRATION_BATCH_SIZE)
        return PartitionExpireConfig(
            expiration_ms=int(value(PARTITION_EXPIRATION_TIME, 0)),
            check_interval_ms=int(value(PARTITION_EXPIRATION_CHECK_INTERVAL, 3_600_000)),
            strategy=strategy,
            formatter=raw.get(PARTITION_TIMESTAMP_FORMATTER),
            pattern=raw.get(PARTITION_TIMESTAMP_PATTERN),
            max_num=int(value(PARTITION_EXPIRATION_MAX_NUM, 100)),
            batch_size=None if batch is None else int(value(PARTITION_EXPIRATION_BATCH_SIZE, 0)),
            end_input_check=bool(value(END_INPUT_CHECK_PARTITION_EXPIRE, False)),
        )


_last_check: weakref.WeakKeyDictionary[FileStore, dt.datetime] = weakref.WeakKeyDictionary()
"""Per table handle, when its commits last checked for expired partitions (Java's lastCheck)."""


def expire_partitions_after_commit(
    store: FileStore, identifier: int, commit_user: str | None = None
) -> None:
    """The partition expiry step of a commit's maintenance (nothing when the table sets no
    ``partition.expiration-time``); ``commit_user``: the user of the drop snapshots (Java:
    the commit's own user; a fresh one when not given)."""
    config = PartitionExpireConfig.of(store)
    if config is None:
        return
    now = clock.now_local()
    last = _last_check.get(store)
    if last is None:
        seconds = config.check_interval_ms // 1000
        last = now - dt.timedelta(seconds=random.randrange(seconds) if seconds > 0 else 0)
        _last_check[store] = last
    interval = dt.timedelta(milliseconds=config.check_interval_ms)
    if (
        config.check_interval_ms == 0
        or now > last + interval
        or (config.end_input_check and identifier == BATCH_COMMIT_IDENTIFIER)
    ):
        PartitionExpire(store, config, commit_user or str(uuid.uuid4())).expire(now, identifier)
        _last_check[store] = now


class PartitionExpire:
    """One table's partition expiry (Java's PartitionExpire.doExpire)."""

    def __init__(self, store: FileStore, config: PartitionExpireConfig, commit_user: str) -> None:
        self.store = store
        self.config = config
        self.commit_user = commit_user
        self.types = [t.copy(nullable=True) for t in store.partition_types]
        self.extractor = (
            PartitionTimeExtractor(config.pattern, config.formatter)
            if config.strategy == VALUES_TIME
            else None
        )

    def expire(self, now: dt.datetime, identifier: int) -> list[dict[str, str]]:
        """Drop every partition expired at ``now``; returns them (at most
        ``partition.expiration-max-num``), each as key -> value text, in Java's order."""
        cutoff = now - dt.timedelta(milliseconds=self.config.expiration_ms)
        expired = self.select(cutoff)
        if not expired:
            return []
        rows = sorted(expired, key=lambda p: ",".join(p[1]))[: max(self.config.max_num, 0)]
        size = self.config.batch_size
        batches = (
            [rows[i : i + size] for i in range(0, len(rows), size)]
            if size is not None and 0 < size < len(rows)
            else [rows]
        )
        for batch in batches:
            filter_ = PartitionFilter(
                self.store.partition_types,
                partitions=[p for p, _ in batch],
                description="expired partitions "
                + "; ".join(",".join(values) for _, values in batch),
            )
            truncate(self.store, self.commit_user, filter_, identifier)
        keys = self.store.partition_keys
        return [dict(zip(keys, values, strict=True)) for _, values in rows]

    def select(self, cutoff: dt.datetime) -> list[tuple[bytes, list[str]]]:
        """The live partitions expired before ``cutoff``, with their values as Java's
        ``toString`` gives them (``partition.default-name`` for null)."""
        snapshot = self.store.snapshot_manager.latest()
        if snapshot is None:
            return []
        newest: dict[bytes, int] = {}
        for e in self.store.manifest_io.live_entries(snapshot):
            created = e.file.creation_time if e.file.creation_time is not None else 0
            if created > newest.get(e.partition, -1):
                newest[e.partition] = created
        default = self.store.options.partition_default_name
        cutoff_ms = _local_millis(cutoff)
        out = []
        for partition, created in newest.items():
            values = deserialize_with_arity(partition, self.types)
            texts = [_java_text(v, t, default) for v, t in zip(values, self.types, strict=True)]
            if self.extractor is None:
                # update-time: the newest file's creation time, both sides in local time
                expired = cutoff_ms > created
            else:
                expired = self._values_expired(cutoff, values, texts)
            if expired:
                out.append((partition, texts))
        return out

    def _values_expired(self, cutoff: dt.datetime, values: Sequence[Any], texts: list[str]) -> bool:
        """Java's PartitionValuesTimePredicate: a null value or a time that does not parse
        keeps the partition."""
        assert self.extractor is not None
        if any(v is None for v in values):
            return False
        when = self.extractor.extract(self.store.partition_keys, texts)
        return when is not None and cutoff > when


_EPOCH = dt.datetime(1970, 1, 1)


def _local_millis(value: dt.datetime) -> int:
    """A local date-time as epoch milliseconds of the same wall clock in UTC (how data files
    record ``creationTime``, io/data_file.local_now_millis)."""
    return (value - _EPOCH) // dt.timedelta(milliseconds=1)


def _java_text(value: Any, t: DataType, default: str) -> str:
    """``Object.toString`` of the internal value (a DATE is its epoch day), as
    PartitionExpireStrategy.toPartitionValue gives it."""
    if value is None:
        return default
    if isinstance(value, str):
        return value
    return partition_value_string(value, t, True, default)


class PartitionTimeExtractor:
    """Java's PartitionTimeExtractor: a partition's values as a LocalDateTime."""

    def __init__(self, pattern: str | None, formatter: str | None) -> None:
        self.pattern = pattern
        self.formatter = None if formatter is None else JavaDateFormat(formatter)

    def extract(self, keys: Sequence[str], texts: Sequence[str]) -> dt.datetime | None:
        """The time, or None where Java's parse throws (the partition then never expires)."""
        if self.pattern is None:
            text = texts[0]
        else:
            text = self.pattern
            for key, value in zip(keys, texts, strict=True):
                text = text.replace(f"${key}", value)
        if self.formatter is None:
            return _lenient_default(text)
        return self.formatter.parse(text)


_DEFAULT_RE = re.compile(
    r"(\d{1,10})-(\d{1,2})-(\d{1,2})(?: (\d{1,2}):(\d{1,2}):(\d{1,2})(?:\.(\d{1,9}))?)?"
)


def _lenient_default(text: str) -> dt.datetime | None:
    """Java's default ``yyyy-MM-dd[ HH:mm:ss[.S]]`` with ResolverStyle.LENIENT: fields past
    their range roll over (month 13 is January of the next year)."""
    m = _DEFAULT_RE.fullmatch(text)
    if m is None:
        return None
    year, month, day = int(m.group(1)), int(m.group(2)), int(m.group(3))
    try:
        base = dt.datetime(year + (month - 1) // 12, (month - 1) % 12 + 1, 1)
        when = base + dt.timedelta(days=day - 1)
        if m.group(4) is not None:
            nanos = int((m.group(7) or "0").ljust(9, "0"))
            when += dt.timedelta(
                hours=int(m.group(4)),
                minutes=int(m.group(5)),
                seconds=int(m.group(6)),
                microseconds=nanos // 1000,
            )
    except (ValueError, OverflowError):
        return None
    return when


class JavaDateFormat:
    """A ``DateTimeFormatter.ofPattern`` pattern (ResolverStyle.SMART) for the fields a
    partition time needs: ``y``/``u`` years, ``M`` months, ``d`` days, ``H``, ``m``, ``s``,
    ``S`` fractions, quoted and other literals. Other pattern letters raise
    UnsupportedOptionError naming ``partition.timestamp-formatter``."""

    _WIDTHS = {"M": "month", "d": "day", "H": "hour", "m": "minute", "s": "second"}

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        parts: list[str] = []
        self.fields: list[str] = []
        i = 0
        while i < len(pattern):
            c = pattern[i]
            if c == "'":
                end = pattern.find("'", i + 1)
                if end == i + 1:
                    parts.append("'")
                    i += 2
                    continue
                if end < 0:
                    raise self._unsupported("an unclosed quote")
                parts.append(re.escape(pattern[i + 1 : end].replace("''", "'")))
                i = end + 1
                continue
            if not c.isascii() or not c.isalpha():
                if c in "[]{}#":
                    raise self._unsupported(f"'{c}'")
                parts.append(re.escape(c))
                i += 1
                continue
            n = 1
            while i + n < len(pattern) and pattern[i + n] == c:
                n += 1
            parts.append(self._field(c, n))
            i += n
        self.regex = re.compile("".join(parts))

    def _unsupported(self, what: str) -> UnsupportedOptionError:
        return UnsupportedOptionError(
            f"option '{PARTITION_TIMESTAMP_FORMATTER}' = '{self.pattern}': {what} is not "
            "supported here; partition times are read from the letters y, u, M, d, H, m, s, S "
            "and literals."
        )

    def _field(self, letter: str, n: int) -> str:
        if letter in "yu":
            if n == 2:
                self.fields.append("year2")
                return r"(\d{2})"
            self.fields.append("year")
            return rf"(\d{{{n},19}})" if n >= 3 else r"(\d{1,19})"
        if letter == "L":
            letter = "M"
        if letter in self._WIDTHS:
            if n > 2:
                raise self._unsupported(f"'{letter * n}'")
            self.fields.append(self._WIDTHS[letter])
            return r"(\d{2})" if n == 2 else r"(\d{1,19})"
        if letter == "S":
            self.fields.append("fraction")
            return rf"(\d{{{n}}})"
        raise self._unsupported(f"pattern letter '{letter}'")

    def parse(self, text: str) -> dt.datetime | None:
        """LocalDateTime.parse, else LocalDate.parse at midnight; None where both throw."""
        m = self.regex.fullmatch(text)
        if m is None:
            return None
        got: dict[str, int] = {}
        for name, digits in zip(self.fields, m.groups(), strict=True):
            value = int(digits.ljust(9, "0")) if name == "fraction" else int(digits)
            if name == "year2":
                name, value = "year", 2000 + value
            if name in got and got[name] != value:
                return None
            got[name] = value
        if not {"year", "month", "day"} <= got.keys():
            return None
        year, month, day = got["year"], got["month"], got["day"]
        if not 1 <= month <= 12 or not 1 <= day <= 31 or not 1 <= year <= 9999:
            return None
        # SMART: a day past the month's end is clamped to it (IsoChronology.resolveYMD)
        last = (dt.date(year + month // 12, month % 12 + 1, 1) - dt.timedelta(days=1)).day
        date = dt.datetime(year, month, min(day, last))
        hour = got.get("hour")
        minute, second, nanos = got.get("minute"), got.get("second"), got.get("fraction")
        if hour is None:
            return date
        if (minute is None and (second is not None or nanos is not None)) or (
            minute is not None and second is None and nanos is not None
        ):
            return date
        if hour > 23 or (minute or 0) > 59 or (second or 0) > 59:
            return None
        return date + dt.timedelta(
            hours=hour,
            minutes=minute or 0,
            seconds=second or 0,
            microseconds=(nanos or 0) // 1000,
        )


def expired_partition_texts(expired: Sequence[Mapping[str, str]]) -> list[str]:
    """The procedure's result rows: each partition as Java prints a map without its braces
    (``dt=2024-01-01, hr=10``), or Java's one row when nothing expired."""
    if not expired:
        return ["No expired partitions."]
    return [", ".join(f"{k}={v}" for k, v in p.items()) for p in expired]


__all__ = [
    "STRATEGIES",
    "JavaDateFormat",
    "PartitionExpire",
    "PartitionExpireConfig",
    "PartitionTimeExtractor",
    "expire_partitions_after_commit",
    "expired_partition_texts",
]
