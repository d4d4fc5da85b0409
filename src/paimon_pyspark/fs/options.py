"""The filesystem options: Java Paimon's ``s3.*`` keys and ``fs.single-writer``.

They are read from the catalog options and from table options alike (a table option wins).
Keys are Java's (paimon-s3 hands ``s3.<k>`` to Hadoop's ``fs.s3a.<k>``), so one set of options
opens the same warehouse from Java, pypaimon and here. They configure the store only: they are
never written into a table's schema by paimon_pyspark itself.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from paimon_pyspark.errors import OptionError

S3_PREFIX = "s3."
SINGLE_WRITER = "fs.single-writer"
"""Accept a store without atomic create-if-absent, promising one writer per table at a time."""

S3_ENDPOINT = "s3.endpoint"
S3_ACCESS_KEY = ("s3.access-key", "s3.access.key")
S3_SECRET_KEY = ("s3.secret-key", "s3.secret.key")
S3_SESSION_TOKEN = ("s3.session-token", "s3.session.token")
S3_PATH_STYLE = ("s3.path.style.access", "s3.path-style-access")
S3_REGION = ("s3.endpoint.region", "s3.region")
S3_CONNECTION_TIMEOUT = "s3.connection.timeout"
S3_ESTABLISH_TIMEOUT = "s3.connection.establish.timeout"
S3_ATTEMPTS_MAXIMUM = "s3.attempts.maximum"
S3_RETRY_LIMIT = "s3.retry.limit"
S3_RETRY_INTERVAL = "s3.retry.interval"
S3_KNOWN = {
    S3_ENDPOINT,
    *S3_ACCESS_KEY,
    *S3_SECRET_KEY,
    *S3_SESSION_TOKEN,
    *S3_PATH_STYLE,
    *S3_REGION,
    S3_CONNECTION_TIMEOUT,
    S3_ESTABLISH_TIMEOUT,
    S3_ATTEMPTS_MAXIMUM,
    S3_RETRY_LIMIT,
    S3_RETRY_INTERVAL,
}
_HADOOP_DURATION = re.compile(r"\s*(\d+)\s*(ns|us|ms|s|m|h|d)?\s*", re.IGNORECASE)
_UNIT_SECONDS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


@dataclass(frozen=True)
class S3Retries:
    """How hard the S3 client tries, from Hadoop S3A's keys (docs/catalogs.md, "Object
    stores"): the HTTP client retries 5xx answers, failed connections and resets of the
    requests it deems idempotent ``attempts`` times; ObjectStoreFileIO makes a call again, up
    to ``limit`` times ``interval`` apart (doubling), when the client stopped short of that (a
    reset or timeout of a request it does not retry, a body cut mid-way), where a repeat
    cannot change the answer."""

    request_timeout: float = 30.0
    connect_timeout: float = 5.0
    attempts: int = 10
    limit: int = 7
    interval: float = 0.5


def is_fs_key(key: str) -> bool:
    return key.startswith(S3_PREFIX) or key == SINGLE_WRITER


def fs_options(options: Mapping[str, str]) -> dict[str, str]:
    """The filesystem keys of ``options``."""
    return {str(k): str(v) for k, v in options.items() if is_fs_key(str(k))}


class FsOptions:
    """Typed access to the filesystem options."""

    def __init__(self, raw: Mapping[str, str]) -> None:
        self.raw = dict(raw)
        # a bad value fails here, not at first use
        _ = self.single_writer, self.s3_path_style, self.s3_retries

    def get(self, key: str) -> str | None:
        return self.raw.get(key)

    def first(self, keys: tuple[str, ...]) -> str | None:
        for key in keys:
            value = self.raw.get(key)
            if value is not None and value.strip():
                return value.strip()
        return None

    def _bool(self, key: str, value: str | None, default: bool) -> bool:
        if value is None:
            return default
        text = value.strip().lower()
        if text not in ("true", "false"):
            raise OptionError(f"Option '{key}' must be 'true' or 'false', got '{value}'.")
        return text == "true"

    @property
    def single_writer(self) -> bool:
        return self._bool(SINGLE_WRITER, self.raw.get(SINGLE_WRITER), False)

    @property
    def s3_path_style(self) -> bool:
        return self._bool(S3_PATH_STYLE[0], self.first(S3_PATH_STYLE), False)

    def _duration_s(self, key: str, default: float) -> float:
        """Seconds of a Hadoop time duration (``500ms``, ``30s``; a bare number is ms)."""
        raw = self.raw.get(key)
        if raw is None or not raw.strip():
            return default
        match = _HADOOP_DURATION.fullmatch(raw)
        if match is None or int(match[1]) <= 0:
            raise OptionError(
                f"Option '{key}' must be a positive duration such as '500ms' or '30s', got '{raw}'."
            )
        return int(match[1]) * _UNIT_SECONDS[(match[2] or "ms").lower()]

    def _count(self, key: str, default: int) -> int:
        raw = self.raw.get(key)
        if raw is None or not raw.strip():
            return default
        text = raw.strip()
        if not text.isdigit() or int(text) > 1000:
            raise OptionError(f"Option '{key}' must be a whole number from 0 to 1000, got '{raw}'.")
        return int(text)

    @property
    def s3_retries(self) -> S3Retries:
        d = S3Retries()
        return S3Retries(
            request_timeout=self._duration_s(S3_CONNECTION_TIMEOUT, d.request_timeout),
            connect_timeout=self._duration_s(S3_ESTABLISH_TIMEOUT, d.connect_timeout),
            attempts=self._count(S3_ATTEMPTS_MAXIMUM, d.attempts),
            limit=self._count(S3_RETRY_LIMIT, d.limit),
            interval=self._duration_s(S3_RETRY_INTERVAL, d.interval),
        )

    def unknown_s3_keys(self) -> list[str]:
        return sorted(k for k in self.raw if k.startswith(S3_PREFIX) and k not in S3_KNOWN)
