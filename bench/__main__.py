"""python -m bench [--smoke] [--json FILE]: run the benchmarks on PostgreSQL.

Uses a database of its own (the DATABASE_URL database's name + "_bench"), created and migrated
afresh, so nothing else is touched.
"""

import argparse
import json
import os
import sys
import urllib.parse


def bench_database() -> None:
    import psycopg

    url = os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/loopweb")
    parts = urllib.parse.urlparse(url)
    name = f"{parts.path.lstrip('/') or 'loopweb'}_bench"
    admin = parts._replace(path="/postgres").geturl()
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    os.environ["DATABASE_URL"] = parts._replace(path=f"/{name}").geturl()


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, a quick check")
    parser.add_argument("--json", help="also write the rows to this file")
    parser.add_argument(
        "--only",
        choices=["history", "production", "load", "claims"],
        help="run only these rows: the history's reads; the rows through the production server; "
        "progress under load and after one push; the claims through the production server, "
        "with provider budgets and without",
    )
    args = parser.parse_args()

    bench_database()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "loopweb.settings")
    os.environ.setdefault("DEBUG", "1")
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    settings.DEBUG = False  # no query log growing in memory while measuring
    call_command("migrate", verbosity=0)
    from loopweb import memory

    memory.settle()  # as the web processes and task workers do once loaded
    from bench.report import table
    from bench.runner import NOTES
    from bench.suite import claim_rows, history_rows, run_all

    if args.only == "history":
        rows = history_rows(smoke=args.smoke)
    elif args.only == "claims":
        rows = claim_rows(smoke=args.smoke)
    else:
        rows = run_all(smoke=args.smoke, only=args.only)
    print(table(rows))
    for note in NOTES:
        print(f"\n{note}")
    if args.json:
        with open(args.json, "w") as handle:
            json.dump([vars(r) for r in rows], handle, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
