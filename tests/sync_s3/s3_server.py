"""A real S3-compatible HTTP server for the tests: moto's S3, on 127.0.0.1.

Run as ``python s3_server.py``: it binds a free port, prints it on one line and
serves until killed. moto checks ``If-None-Match: *`` and then stores the object in
two steps, so two racing puts could both pass the check; AWS S3 (and MinIO) decide
a conditional put atomically. Requests are therefore served one at a time here (a
lock around the application), which is what makes the race test a test of the
client and not of moto.

For that test, ``POST /_kgai_test/barrier?n=N`` makes the next N listings wait for
each other (outside that lock), so N clients go on to put at the same moment.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterable
from typing import Any

from moto.moto_server.werkzeug_app import (
    DomainDispatcherApplication,
    MotoRequestHandler,
    create_backend_app,
)
from werkzeug.serving import make_server

_LOCK = threading.Lock()
_ARMED = threading.Lock()
_BARRIER: list[Any] = [None, 0]  # the barrier, listings still to hold


def _arm(query: str) -> None:
    n = int(dict(p.split("=", 1) for p in query.split("&") if "=" in p)["n"])
    with _ARMED:
        _BARRIER[:] = [threading.Barrier(n, timeout=60), n]


def _hold_listing() -> None:
    with _ARMED:
        barrier, left = _BARRIER
        if barrier is None or left <= 0:
            return
        _BARRIER[1] = left - 1
    barrier.wait()


def _serialised(app: Callable[..., Iterable[bytes]]) -> Callable[..., list[bytes]]:
    def wrapped(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        query = environ.get("QUERY_STRING", "")
        if environ.get("PATH_INFO") == "/_kgai_test/barrier":
            _arm(query)
            start_response("200 OK", [("Content-Length", "0")])
            return []
        if environ.get("REQUEST_METHOD") == "GET" and "list-type=2" in query:
            _hold_listing()
        with _LOCK:
            return list(app(environ, start_response))

    return wrapped


def main() -> None:
    """Serve S3 on 127.0.0.1 (a free port, printed first)."""
    app = DomainDispatcherApplication(create_backend_app)
    server = make_server(
        "127.0.0.1",
        0,
        _serialised(app),
        threaded=True,
        request_handler=MotoRequestHandler,
    )
    print(server.server_port, flush=True)
    sys.stdout.close()
    server.serve_forever()


if __name__ == "__main__":
    main()
