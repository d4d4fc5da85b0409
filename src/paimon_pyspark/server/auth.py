"""Bearer tokens from a file: who may talk to the server.

The file holds one token per line; surrounding whitespace is stripped, and blank lines and lines
starting with ``#`` are ignored, so a team can keep a comment next to each token. A request is
let in when its ``Authorization`` header is ``Bearer <token>`` (Java's BearTokenAuthProvider and
pypaimon send exactly that) for one of the tokens. The file is read again when it changes (its
modification time, size or inode), so a token is added or revoked without restarting the server.
"""

from __future__ import annotations

import hmac
import os
import threading

from paimon_pyspark.errors import InvalidArgumentError

BEARER = "Bearer "


def read_tokens(path: str) -> tuple[bytes, ...]:
    """The tokens of ``path``; InvalidArgumentError if it cannot be read or holds none (a
    server nobody can reach is a mistake, not a setup)."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise InvalidArgumentError(f"Token file '{path}' cannot be read: {e}") from e
    tokens = tuple(
        t.encode("utf-8") for t in (line.strip() for line in lines) if t and not t.startswith("#")
    )
    if not tokens:
        raise InvalidArgumentError(
            f"Token file '{path}' holds no token: write one token per line ('#' starts a "
            "comment line)."
        )
    return tokens


class TokenFile:
    """The tokens of a file, re-read when the file changes."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._seen = self._signature()
        self._tokens = read_tokens(path)

    def _signature(self) -> tuple[int, int, int] | None:
        try:
            st = os.stat(self.path)
        except OSError:
            return None
        return (st.st_mtime_ns, st.st_size, st.st_ino)

    def _current(self) -> tuple[bytes, ...]:
        seen = self._signature()
        if seen is None:
            return self._tokens  # keep the last good tokens while the file is being replaced
        if seen != self._seen:
            with self._lock:
                try:
                    self._tokens = read_tokens(self.path)
                    self._seen = seen
                except InvalidArgumentError:
                    pass  # a half-written file: keep the last good tokens
        return self._tokens

    def check(self, authorization: str | None) -> str | None:
        """None when ``authorization`` (the header's value) carries a known token, else why
        not, in words that never repeat the token."""
        if not authorization:
            return "no Authorization header"
        if not authorization.startswith(BEARER):
            return "the Authorization header is not 'Bearer <token>'"
        given = authorization[len(BEARER) :].strip().encode("utf-8")
        # compare against every token, so the time taken does not tell which one nearly matched
        found = False
        for token in self._current():
            found |= hmac.compare_digest(given, token)
        return None if found else "unknown bearer token"
