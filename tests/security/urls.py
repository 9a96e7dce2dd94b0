"""Every URL pattern the site serves, read from the resolver, with a concrete path for each."""

import re
from dataclasses import dataclass

from django.urls import URLPattern, URLResolver, get_resolver

UNSAFE = ("POST", "PUT", "PATCH", "DELETE")
METHODS = ("GET", *UNSAFE)


@dataclass(frozen=True)
class Pattern:
    route: str  # the full route, as ``ResolverMatch.route`` spells it
    name: str | None
    callback: object

    @property
    def label(self) -> str:
        return f"{self.route!r} ({self.name})"

    def served_methods(self) -> set[str] | None:
        """The methods a DRF view serves; None for a Django view (not introspectable)."""
        cls = getattr(self.callback, "cls", None)
        if cls is None:
            return None
        names = {m.upper() for m in cls.http_method_names} - {"OPTIONS", "HEAD", "TRACE"}
        actions = getattr(self.callback, "actions", None)
        if actions:
            return {m.upper() for m in actions} & names
        return {m for m in names if hasattr(cls, m.lower())}


def all_patterns() -> list[Pattern]:
    def walk(patterns, prefix):
        for entry in patterns:
            if isinstance(entry, URLResolver):
                yield from walk(entry.url_patterns, prefix + str(entry.pattern))
            elif isinstance(entry, URLPattern):
                yield Pattern(prefix + str(entry.pattern), entry.name, entry.callback)

    return list(walk(get_resolver().url_patterns, ""))


_CONVERTER = re.compile(r"<(?:(?P<kind>\w+):)?(?P<name>\w+)>")
_GROUP = re.compile(r"\(\?P<(?P<name>\w+)>(?P<body>(?:[^()]|\([^()]*\))*)\)")


def fill(route: str, values: dict[str, str]) -> str:
    """A concrete path for a route (``path()`` converters or ``re_path()`` groups)."""

    def value(name: str, body: str = "") -> str:
        if name in values:
            return str(values[name])
        if re.fullmatch(r"[\w-]+(\|[\w-]+)*", body):
            return body.split("|")[0]  # an alternation of literals: the first one
        raise KeyError(f"no value for the parameter {name!r} of {route!r}")

    path = _GROUP.sub(lambda m: value(m["name"], m["body"]), route)
    path = _CONVERTER.sub(lambda m: value(m["name"]), path)
    path = path.replace("^", "").replace("$", "").replace("\\", "")
    return "/" + path
