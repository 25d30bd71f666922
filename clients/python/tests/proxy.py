"""A proxy that holds back a reply, to interrupt a client at that moment."""

from __future__ import annotations

import http.server
import json
import threading
import urllib.error
import urllib.request
from typing import Any

from hitlserver import PATIENCE


class HoldingProxy:
    """Forwards every request to the server, but holds back the reply to
    the first one: the server has done the request (a create has stored its
    question) and the client is still waiting for the answer, so a test can
    interrupt it at that moment. ``held`` is the withheld reply's body."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream
        self.forwarded = threading.Event()
        self.held: Any = None
        self._first = threading.Lock()
        self._release = threading.Event()
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self._forward()

            def do_POST(self) -> None:
                self._forward()

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _forward(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0)) or None
                req = urllib.request.Request(proxy.upstream + self.path, data=body, method=self.command)
                for name in ("Content-Type", "Authorization"):
                    if self.headers.get(name):
                        req.add_header(name, self.headers[name])
                try:
                    with urllib.request.urlopen(req, timeout=PATIENCE) as resp:
                        status, data = resp.status, resp.read()
                except urllib.error.HTTPError as e:
                    with e:
                        status, data = e.code, e.read()
                if proxy._first.acquire(blocking=False):
                    proxy.held = json.loads(data)
                    proxy.forwarded.set()
                    proxy._release.wait(PATIENCE)
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:
                    pass  # the client hung up, as the test meant it to

        self._httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()

    def wait_forwarded(self) -> Any:
        """Blocks until the first request has reached the server; returns its reply."""
        assert self.forwarded.wait(PATIENCE), "no request reached the proxy"
        return self.held

    def close(self) -> None:
        """Releases the held reply and stops the proxy."""
        self._release.set()
        self._httpd.shutdown()
        self._httpd.server_close()
