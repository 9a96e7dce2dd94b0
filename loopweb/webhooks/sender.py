"""One HTTP POST to a webhook's URL, with a hard time limit, to an address checked first.

The host name is resolved here and every address it resolves to must be allowed
(``targets.Allowlist``); the connection then goes to the address that was checked, so the name
cannot point elsewhere between the check and the connection. Redirects are not followed. At most
``EXCERPT_BYTES`` of the answer are read.
"""

import contextlib
import hashlib
import hmac
import http.client
import socket
import ssl
import threading
import time
from urllib.parse import urlsplit

from loopweb.webhooks import policy
from loopweb.webhooks.targets import Allowlist, literal_address

EXCERPT_BYTES = 1024
EXCERPT_CHARS = 300
USER_AGENT = "Loopweb-Webhooks/1"


def signature(secret: str, timestamp: int, body: bytes) -> str:
    """``sha256=<hex HMAC-SHA256 of "<timestamp>.<body>">`` keyed with the secret."""
    mac = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256)
    return f"sha256={mac.hexdigest()}"


class Result:
    def __init__(self, answer: policy.Answer, duration_ms: int, excerpt: str = "", error=""):
        self.answer, self.duration_ms, self.excerpt, self.error = (
            answer,
            duration_ms,
            excerpt,
            error,
        )


class _Pinned:
    """Connect to the checked address while speaking to the URL's host (Host header, TLS name
    and certificate check)."""

    address: str

    def connect(self):
        self.sock = socket.create_connection((self.address, self.port), self.timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if isinstance(self, http.client.HTTPSConnection):
            self.sock = self._context.wrap_socket(self.sock, server_hostname=self.host)


class PinnedHTTP(_Pinned, http.client.HTTPConnection):
    pass


class PinnedHTTPS(_Pinned, http.client.HTTPSConnection):
    pass


def _addresses(host: str, port: int, within: float | None) -> list[str]:
    """The addresses the name resolves to, or ``TimeoutError`` after ``within`` seconds. The
    resolver takes no timeout of its own, so a name is looked up on a thread of its own, which
    ends when the resolver gives up; an address written as such needs no look-up."""
    found: dict[str, object] = {}

    def look_up():
        try:
            found["infos"] = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except Exception as exc:  # noqa: BLE001 - raised again by the thread that waits
            found["error"] = exc

    if within is None or literal_address(host) is not None:
        look_up()  # here: no time limit asked for, or an address that needs no look-up
    else:
        thread = threading.Thread(target=look_up, name=f"resolve {host}", daemon=True)
        thread.start()
        thread.join(within)
        if thread.is_alive():
            raise TimeoutError(f"{host} did not resolve within the timeout")
    if "error" in found:
        raise found["error"]
    return [info[4][0] for info in found["infos"]]


def resolve(host: str, port: int, allowlist: Allowlist, *, within: float | None = None) -> str:
    """The address to connect to; raises ``Refused`` when any address the name has is not
    allowed, OSError when it does not resolve, ``TimeoutError`` when it takes longer than
    ``within`` seconds."""
    addresses = _addresses(host, port, within)
    if not addresses:
        raise OSError(f"{host} has no address")
    if not allowlist.lists_name(host):
        for address in addresses:
            parsed = literal_address(address.split("%", 1)[0])
            if parsed is None or not allowlist.allows_address(parsed):
                raise Refused(f"{host} resolves to {address}, which this deployment does not allow")
    return addresses[0]


class Refused(Exception):  # noqa: N818 - it names what happened
    pass


def post(url: str, body: bytes, headers: dict[str, str], *, timeout: float) -> Result:
    """POST ``body`` to ``url``; never raises. The whole exchange, from resolving the name to
    the last byte read, is cut off after ``timeout`` seconds."""
    started = time.monotonic()

    def took() -> int:
        return int((time.monotonic() - started) * 1000)

    parts = urlsplit(url)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    connection = None
    expired = threading.Event()

    def cut_off():
        expired.set()
        sock = getattr(connection, "sock", None)
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    watchdog = threading.Timer(timeout, cut_off)
    watchdog.daemon = True
    watchdog.start()
    try:
        address = resolve(host, port, Allowlist.from_settings(), within=timeout)
        left = timeout - (time.monotonic() - started)
        if expired.is_set() or left <= 0:
            raise TimeoutError
        kind = PinnedHTTPS if parts.scheme == "https" else PinnedHTTP
        connection = kind(host, port, timeout=left)  # the watchdog cuts off what is past it
        connection.address = address
        connection.request(
            "POST",
            path,
            body=body,
            headers={
                **headers,
                "Content-Type": "application/json",
                "User-Agent": USER_AGENT,
            },
        )
        response = connection.getresponse()
        excerpt = response.read(EXCERPT_BYTES).decode("utf-8", "replace")[:EXCERPT_CHARS]
        return Result(
            policy.Answer(code=response.status, retry_after=_retry_after(response)),
            took(),
            excerpt.replace("\x00", ""),
        )
    except Refused as exc:
        return Result(policy.Answer(error=policy.REFUSED), took(), error=str(exc)[:200])
    except TimeoutError:
        return Result(policy.Answer(error=policy.TIMEOUT), took(), error="timed out")
    except (OSError, http.client.HTTPException, ssl.SSLError, UnicodeError, ValueError) as exc:
        if expired.is_set():
            return Result(policy.Answer(error=policy.TIMEOUT), took(), error="timed out")
        return Result(policy.Answer(error=policy.NETWORK), took(), error=_describe(exc))
    finally:
        watchdog.cancel()
        if connection is not None:
            connection.close()


def _retry_after(response) -> float | None:
    value = response.getheader("Retry-After")
    if value is None or not value.strip().isdigit():
        return None
    return float(value.strip())


def _describe(exc: Exception) -> str:
    text = str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {text}"[:200]
