"""A TCP proxy in front of PostgreSQL that a test can cut and restore: the database as the
processes behind it see it goes away (open connections dropped, new ones refused) and comes
back, while the real server, which every other test uses, is never touched."""

from __future__ import annotations

import contextlib
import socket
import threading

from tests.support.processes import free_port


class Proxy:
    def __init__(self, upstream: tuple[str, int]):
        self.upstream = upstream
        self.port = free_port()
        self._lock = threading.Lock()
        self._pairs: list[tuple[socket.socket, socket.socket]] = []
        self._listener: socket.socket | None = None
        self._accepting: threading.Thread | None = None
        self.open()

    # --- the switch --------------------------------------------------------------------------

    def open(self) -> None:
        """Accept connections (again)."""
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        self._listener = listener
        self._accepting = threading.Thread(target=self._accept, args=(listener,), daemon=True)
        self._accepting.start()

    def cut(self) -> None:
        """Drop every open connection and refuse new ones, as a stopped server does."""
        listener, self._listener = self._listener, None
        if listener is not None:
            listener.close()
        with self._lock:
            pairs, self._pairs = self._pairs, []
        for pair in pairs:
            for sock in pair:
                _close(sock)

    def close(self) -> None:
        self.cut()

    @property
    def url_host(self) -> str:
        return f"127.0.0.1:{self.port}"

    # --- plumbing ----------------------------------------------------------------------------

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return  # cut
            try:
                server = socket.create_connection(self.upstream, timeout=5)
                server.settimeout(None)
            except OSError:
                _close(client)
                continue
            with self._lock:
                if self._listener is not listener:
                    _close(client)
                    _close(server)
                    return
                self._pairs.append((client, server))
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=_pump, args=(a, b), daemon=True).start()


def _pump(source: socket.socket, sink: socket.socket) -> None:
    try:
        while chunk := source.recv(65536):
            sink.sendall(chunk)
    except OSError:
        pass
    finally:
        _close(source)
        _close(sink)


def _close(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    sock.close()
