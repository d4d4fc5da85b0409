"""The filesystem options: Java Paimon's ``s3.*`` keys and ``fs.single-writer``.

They are read from the catalog options and from table options alike (a table option wins).
Keys are Java's (paimon-s3 hands ``s3.<k>`` to Hadoop's ``fs.s3a.<k>``), so one set of options
opens the same warehouse from Java, pypaimon and here. They configure the store only: they are
never written into a table's schema by paimon_pyspark itself.
"""

from __future__ import annotations

from collections.abc import Mapping

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
S3_KNOWN = {
    S3_ENDPOINT,
    *S3_ACCESS_KEY,
    *S3_SECRET_KEY,
    *S3_SESSION_TOKEN,
    *S3_PATH_STYLE,
    *S3_REGION,
}


def is_fs_key(key: str) -> bool:
    return key.startswith(S3_PREFIX) or key == SINGLE_WRITER


def fs_options(options: Mapping[str, str]) -> dict[str, str]:
    """The filesystem keys of ``options``."""
    return {str(k): str(v) for k, v in options.items() if is_fs_key(str(k))}


class FsOptions:
    """Typed access to the filesystem options."""

    def __init__(self, raw: Mapping[str, str]) -> None:
        self.raw = dict(raw)
        _ = self.single_writer, self.s3_path_style  # a bad value fails here, not at first use

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

    def unknown_s3_keys(self) -> list[str]:
        return sorted(k for k in self.raw if k.startswith(S3_PREFIX) and k not in S3_KNOWN)
