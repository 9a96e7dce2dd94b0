"""The benchmarks' HTTP client (standard library only: the poller process imports no Django)."""

import gzip
import json
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
