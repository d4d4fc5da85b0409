"""moto's S3 server with conditional writes made atomic, as real S3 makes them, and without
its per-request rescan of its own package or its per-request log line.

moto 5.2.5 checks ``If-None-Match``/``If-Match`` and then stores the object, with no lock between
the two, in a threaded server: two racing creates of one key can both succeed, and one racing
commit is then overwritten by another (the likely cause of one red S3 race run under load: 403
snapshots for 404 commits). The tests prove exactly-once against S3's guarantee, not
against that gap, so every conditional PutObject runs under one lock here. Run as a script:
``python tests/moto_atomic_server.py -H 127.0.0.1 -p PORT``.
"""

from __future__ import annotations

import threading
from typing import Any

from moto import backends
from moto.s3.responses import S3Response
from moto.server import main
from werkzeug.serving import WSGIRequestHandler

_CONDITIONAL = threading.Lock()
_put_object = S3Response.put_object


def _atomic_put_object(self: Any) -> Any:
    if self.headers.get("If-None-Match") or self.headers.get("If-Match"):
        with _CONDITIONAL:
            return _put_object(self)
    return _put_object(self)


S3Response.put_object = _atomic_put_object  # type: ignore[method-assign]

# The server asks for the list of moto's service packages on every request (~175 directory
# stats each, about a third of its CPU per request); the list cannot change while it runs.
_MODULES = tuple(backends.list_of_moto_modules())
backends.list_of_moto_modules = lambda: _MODULES

# The tests discard the server's output; formatting and writing a line per request, under the
# logging lock every request thread shares, cost the racing tests about 7% of their time.
WSGIRequestHandler.log_request = lambda self, *args, **kwargs: None  # type: ignore[method-assign]

if __name__ == "__main__":
    main()
