"""A loopback HTTP server that serves the pinned datasets as GitHub repository archives.

Each GitHub dataset of ``blame.paths`` is packed from ``../shared/datasets/<name>`` into
``<owner>/<repo>/archive/<commit>.tar.gz`` with the real archive's top folder
``<repo>-<commit>/`` (and the dataset's subfolder, e.g. ``Who&When/``), so that
``BLAME_BENCH_MIRROR=<server.url>`` downloads exactly what GitHub would serve. ``corrupt`` (a
file path inside a dataset) packs that file with changed bytes; ``truncate`` sends the full
``Content-Length`` but only half the bytes, then closes (an interrupted download); ``delay``
holds each response that many seconds before its body (a download in progress).
"""

from __future__ import annotations

import io
import os
import tarfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from blame.paths import REPO_ROOT, SOURCES, DatasetSource

SHARED_DATASETS = REPO_ROOT.parent / "shared" / "datasets"


def needs_shared() -> None:
    """Skip (outside CI) or fail (CI=true) when there is no ``../shared/datasets`` to pack."""
    if not (SHARED_DATASETS / "who_and_when").is_dir() or not (SHARED_DATASETS / "blame").is_dir():
        message = f"no pinned dataset copies in {SHARED_DATASETS} to build the archives from"
        if os.environ.get("CI", "").strip().lower() in ("1", "true", "yes"):
            pytest.fail(message)
        pytest.skip(message)


def archive_bytes(
    source: DatasetSource, corrupt: str | None = None, extra: str | None = None, top: str | None = None,
    omit: tuple[str, ...] = (),
) -> bytes:
    """The tar.gz of ``source`` in GitHub's archive layout, built from the shared copy (plus a
    member named ``extra``, e.g. one that escapes the folder; under the top folder ``top`` instead
    of the real one; without the files ``omit``)."""
    folder = SHARED_DATASETS / source.name
    top = top or f"{source.github.split('/')[1]}-{source.revision}"
    prefix = f"{top}/{source.subfolder}/" if source.subfolder else f"{top}/"
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", compresslevel=1) as tar:
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            relative = path.relative_to(folder).as_posix()
            if relative in omit:
                continue
            data = path.read_bytes() + (b" " if relative == corrupt else b"")
            info = tarfile.TarInfo(prefix + relative)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        if extra:
            info = tarfile.TarInfo(extra)
            info.size = 1
            tar.addfile(info, io.BytesIO(b"x"))
    return buffer.getvalue()


class ArchiveServer:
    """Serves every GitHub dataset's archive on 127.0.0.1; counts the archive requests."""

    def __init__(self) -> None:
        self.archives = {
            f"/{s.github}/archive/{s.revision}.tar.gz": archive_bytes(s) for s in SOURCES.values() if s.github
        }
        self.requests: list[str] = []
        self.truncate = False
        self.delay = 0.0
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                delay = server.delay  # as set when the request came
                server.requests.append(self.path)
                body = server.archives.get(self.path)
                if body is None:
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Type", "application/x-gzip")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                time.sleep(delay)
                try:
                    self.wfile.write(body[: len(body) // 2] if server.truncate else body)
                except (BrokenPipeError, ConnectionResetError):  # the client was killed meanwhile
                    return
                if server.truncate:
                    self.close_connection = True

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def corrupt(self, source: DatasetSource, relative: str) -> None:
        """From now on serve ``source``'s archive with ``relative`` changed by one byte."""
        self.archives[f"/{source.github}/archive/{source.revision}.tar.gz"] = archive_bytes(source, relative)

    def __enter__(self) -> ArchiveServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
