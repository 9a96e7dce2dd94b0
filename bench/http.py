"""The benchmarks' HTTP client (standard library only: the poller process imports no Django)."""

import gzip
import http.client
import json
import urllib.parse
import urllib.request


def request(url, token, method="GET", body=None):
    """One request, as an HTTP client such as a browser or ``requests`` makes it (gzip welcome)."""
    req = urllib.request.Request(
        url,
        data=None if body is None else json.dumps(body).encode(),
        headers={
            "Authorization": f"Token {token}",
            "Content-Type": "application/json",
            "Accept-Encoding": "gzip",
        },
        method=method,
    )
    with urllib.request.urlopen(req, timeout=60) as response:  # noqa: S310
        content = response.read()
        if response.headers.get("Content-Encoding") == "gzip":
            content = gzip.decompress(content)
        return response.status, content


class Session:
    """A poller's connections, one per server, kept alive between its polls as a browser's or an
    HTTP client session's are (gunicorn keeps an idle one 5 s; a poller asks every 2 s). One the
    server closed meanwhile is opened again, within the poll's time."""

    def __init__(self, token: str):
        self.token = token
        self.connections: dict[str, http.client.HTTPConnection] = {}

    def get(self, url: str, headers: dict | None = None):
        parts = urllib.parse.urlsplit(url)
        path = f"{parts.path}?{parts.query}" if parts.query else parts.path
        headers = {
            "Authorization": f"Token {self.token}",
            "Accept-Encoding": "gzip",
            **(headers or {}),
        }
        for attempt in (1, 2):
            connection = self.connections.get(parts.netloc)
            if connection is None:
                connection = http.client.HTTPConnection(parts.netloc, timeout=60)
                self.connections[parts.netloc] = connection
            try:
                connection.request("GET", path, headers=headers)
                response = connection.getresponse()
                content = response.read()
            except (http.client.RemoteDisconnected, ConnectionError):
                connection.close()
                del self.connections[parts.netloc]
                if attempt == 2:
                    raise
                continue
            if response.status not in (200, 304):
                raise RuntimeError(f"{url} answered {response.status}")
            if response.getheader("Content-Encoding") == "gzip":
                content = gzip.decompress(content)
            return response.status, content, response.headers
        raise AssertionError("unreachable")
