"""python -m bench.serve PORT: one web process of the product on a threaded WSGI server, with
production settings (DEBUG off), on the database ``DATABASE_URL`` names. The load benchmark
starts several, as several web processes behind a load balancer."""

import os
import sys


def main() -> None:
    port = int(sys.argv[1])
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "loopweb.settings")
    os.environ["DEBUG"] = "0"
    os.environ.setdefault("SECRET_KEY", "bench-only-not-a-secret")
    os.environ["LOOPWEB_HTTPS"] = "0"
    os.environ["ALLOWED_HOSTS"] = "127.0.0.1,localhost"
    import django

    django.setup()
    from django.core.servers.basehttp import ThreadedWSGIServer, WSGIRequestHandler
    from django.core.wsgi import get_wsgi_application

    class Quiet(WSGIRequestHandler):
        def log_message(self, *args):
            pass

    httpd = ThreadedWSGIServer(("127.0.0.1", port), Quiet)
    httpd.set_app(get_wsgi_application())
    print("ready", flush=True)
    httpd.serve_forever()


if __name__ == "__main__":
    main()
