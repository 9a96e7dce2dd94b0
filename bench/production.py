"""The production server for the benchmarks: gunicorn as ``make serve`` runs it (gthread
processes, pooled connections, DEBUG off), on the benchmark database, in processes of its own."""

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def database_url() -> str:
    """The database this process uses (the benchmark's, or a test's), for the server's
    processes."""
    from django.db import connection

    db = connection.settings_dict
    user = db.get("USER") or "postgres"
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    host = f"{db.get('HOST') or '127.0.0.1'}:{db.get('PORT') or 5432}"
    return f"postgres://{user}{password}@{host}/{db['NAME']}"


class ProductionServer:
    def __init__(self, *, web: int = 2, threads: int = 8, nice: int = 0):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        self.label = f"gunicorn {web}×{threads}, pooled"
        env = {
            **os.environ,
            "DATABASE_URL": database_url(),
            "DJANGO_SETTINGS_MODULE": "bench.settings",
            "DEBUG": "0",
            "SECRET_KEY": os.environ.get("SECRET_KEY") or "bench-only-secret-key-" + "x" * 40,
            "LOOPWEB_HTTPS": "0",
            "DB_POOL": "1",
            "DB_POOL_MAX_SIZE": str(threads + 1),
            "ALLOWED_HOSTS": "127.0.0.1,localhost",
        }
        env.pop("PROMETHEUS_MULTIPROC_DIR", None)
        self.process = subprocess.Popen(  # noqa: S603 - our own server
            [
                sys.executable,
                "-m",
                "gunicorn",
                "--config",
                "python:loopweb.gunicorn_conf",
                "--bind",
                f"127.0.0.1:{port}",
                "--workers",
                str(web),
                "--threads",
                str(threads),
                "loopweb.wsgi",
            ],  # fmt: skip
            cwd=ROOT,
            env=env,
            preexec_fn=(lambda: os.nice(nice)) if nice else None,  # noqa: PLW1509 - no threads yet
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"{self.url}/healthz", timeout=2):  # noqa: S310
                    return
            except OSError:
                if self.process.poll() is not None:
                    raise RuntimeError("gunicorn exited") from None
                time.sleep(0.2)
        self.close()
        raise RuntimeError("gunicorn did not answer /healthz within 60 s")

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
