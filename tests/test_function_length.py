"""Views stay thin: no function in a module a route leads into (the console's views and pages,
every app's API views) is longer than 60 lines, nor any in the console's presenters or a
management command. A longer one is split into a thin view and small named functions (forms,
services, selectors, presenters)."""

import ast
import importlib
from pathlib import Path

from django.urls import URLPattern, URLResolver, get_resolver

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("loopweb", "ladders", "signals_app", "evalsets")
LONGEST = 60
#: Modules no route leads into that shape what the console shows or seed what it shows.
ALSO = (
    "loopweb/console/views/*.py",
    "loopweb/console/presenters.py",
    "*/management/commands/*.py",
    "loopweb/*/management/commands/*.py",
)


def _callbacks(patterns):
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            yield from _callbacks(pattern.url_patterns)
        elif isinstance(pattern, URLPattern):
            yield pattern.callback


def routed_modules() -> set[str]:
    """The project's modules that hold a view some route calls (its class's, for a class)."""
    found = set()
    for callback in _callbacks(get_resolver().url_patterns):
        view = getattr(callback, "view_class", None) or getattr(callback, "cls", None) or callback
        for module in {callback.__module__, view.__module__}:
            if module.split(".")[0] in PACKAGES:
                found.add(module)
    return found


def view_files() -> list[Path]:
    files = {Path(importlib.import_module(m).__file__).resolve() for m in routed_modules()}
    for pattern in ALSO:
        files.update(path.resolve() for path in ROOT.glob(pattern) if path.name != "__init__.py")
    return sorted(files)


def too_long(path: Path) -> list[str]:
    """Every function or method in ``path`` longer than ``LONGEST`` lines, from its ``def`` to
    its last line."""
    tree = ast.parse(path.read_text(), filename=str(path))
    return [
        f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({lines} lines)"
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and (lines := node.end_lineno - node.lineno + 1) > LONGEST
    ]


def test_the_walk_finds_every_kind_of_views_module():
    names = {str(path.relative_to(ROOT)) for path in view_files()}
    assert {
        "loopweb/console/views/queue.py",
        "loopweb/console/presenters.py",
        "ladders/api/views.py",
        "loopweb/runs/api/views.py",
        "loopweb/runs/api/budgets.py",
        "loopweb/reviewing/api.py",
        "loopweb/reviewing/console.py",
        "loopweb/history/console.py",
        "loopweb/webhooks/views.py",
        "evalsets/pages/views.py",
        "signals_app/api/views.py",
        "ladders/management/commands/seed_demo.py",
    } <= names


def test_no_view_function_is_longer_than_60_lines():
    long = [found for path in view_files() for found in too_long(path)]
    assert long == [], "split these into a thin view and small named functions:\n" + "\n".join(long)
