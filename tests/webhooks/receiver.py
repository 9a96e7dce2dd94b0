"""A real HTTP receiver on 127.0.0.1, started by a test: it records every request and answers
with the next scripted behaviour (a status code, or "hang": read the request and never answer)."""

import hashlib
import hmac
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HANG = "hang"


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> dict:
        return json.loads(self.body)

    @property
    def event(self) -> str:
        return self.headers["x-loopweb-event"]

    @property
    def delivery(self) -> str:
        return self.headers["x-loopweb-delivery"]

    def signed_with(self, secret: str) -> bool:
        timestamp = self.headers["x-loopweb-timestamp"]
        expected = hmac.new(
            secret.encode(), f"{timestamp}.".encode() + self.body, hashlib.sha256
        ).hexdigest()
        return hmac.compare_digest(self.headers["x-loopweb-signature"], f"sha256={expected}")


@dataclass
class Receiver:
    """``script`` holds the answers to come, in order; once it is empty, ``default`` answers."""

    server: ThreadingHTTPServer
    script: list = field(default_factory=list)
    default: object = 200
    answer_body: str = '{"ok": true}'
    requests: list[Received] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)
    heard: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}/hooks"

    def next_answer(self):
        with self.lock:
            return self.script.pop(0) if self.script else self.default

    def of(self, event_type: str) -> list[Received]:
        return [r for r in self.requests if r.event == event_type]


def start() -> Receiver:
    receiver: Receiver

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 - http.server's name
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length)
            receiver.requests.append(
                Received(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
            )
            receiver.heard.set()
            answer = receiver.next_answer()
            if answer == HANG:
                receiver.release.wait(30)  # until the test ends; the sender gave up long ago
                return
            payload = receiver.answer_body.encode()
            self.send_response(answer)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    receiver = Receiver(server)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return receiver


def stop(receiver: Receiver) -> None:
    receiver.release.set()
    receiver.server.shutdown()
    receiver.server.server_close()
