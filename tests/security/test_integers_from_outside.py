"""An integer typed by a client is read by one bounded parser (``loopweb.runs.numbers``): every
integer-valued query and path parameter of the API answers 4xx for a value that is not one, and
no query parameter or form field of the API or the console answers 5xx, whatever it is sent.

The parameters are not listed here: the API's come from its OpenAPI schema, the console's from
the links and forms of its own pages (every page the URL conf routes), so a new endpoint or form
is probed the moment it exists. (``int()`` refuses more than 4,300 digits with a ValueError, and
``'²'.isdigit()`` is true while ``int('²')`` fails: both were 500s.)
"""

import re
from html.parser import HTMLParser
from urllib.parse import parse_qsl, quote, urlencode, urlsplit

import pytest
from django.test import Client
from drf_spectacular.generators import SchemaGenerator
from rest_framework.test import APIClient

from tests.security.test_authorization_matrix import MATRIX, ids_of
from tests.security.urls import all_patterns, fill

pytestmark = pytest.mark.django_db

#: Text that is not a plain non-negative integer, though Python reads some of it as one, and
#: one that is but fits no column (a bigint holds 19 digits at most).
NOT_INTEGERS = ["²", "¹", "9" * 4301, "-0", "1e3", "0x10", " 7 ", "9" * 20]
DIGITS = re.compile(r"[0-9]+")


def _schema() -> dict:
    return SchemaGenerator().get_schema(request=None, public=True)


def _api_client(world, role: str) -> APIClient:
    client = APIClient(raise_request_exception=False)
    client.credentials(HTTP_AUTHORIZATION=f"Token {world.tokens[role]}")
    return client


def _path_of(world, template: str) -> str | None:
    """The schema's path with the world's objects in it (None when no object fits)."""
    known = {}
    for prefix, values in world.path_values().items():
        if template.startswith(prefix):
            known = {name: found[0] for name, found in values.items()}
    if "{id}" in template and template.startswith("/api/ladders/"):
        known.setdefault("id", world.ladder.pk)
    known.setdefault("record_id", 1)
    try:
        return re.sub(r"\{(\w+)\}", lambda m: str(known[m[1]]), template)
    except KeyError:
        return None


def _operations():
    for template, operations in _schema()["paths"].items():
        for method, operation in operations.items():
            yield template, method.upper(), operation


def _integer(parameter: dict) -> bool:
    return parameter.get("schema", {}).get("type") == "integer"


def _role_for(template: str) -> str:
    return "driver" if template.startswith("/api/driver/") else "owner"


def test_every_integer_query_parameter_of_the_api_refuses_what_is_not_an_integer(world):
    probed, wrong = 0, []
    for template, method, operation in _operations():
        path = _path_of(world, template)
        if path is None:
            continue
        client = _api_client(world, _role_for(template))
        for parameter in operation.get("parameters", []):
            if parameter["in"] != "query":
                continue
            for value in NOT_INTEGERS:
                response = client.generic(method, f"{path}?{urlencode({parameter['name']: value})}")
                probed += 1
                code = response.status_code
                if code >= 500 or (_integer(parameter) and not 400 <= code < 500):
                    wrong.append(f"{method} {path} ?{parameter['name']}={value[:12]!r}: {code}")
    assert probed > 100, probed
    assert not wrong, "\n".join(wrong)


def test_every_integer_path_parameter_of_the_api_refuses_what_is_not_an_integer(world):
    probed, wrong = 0, []
    for template, method, operation in _operations():
        for parameter in operation.get("parameters", []):
            if parameter["in"] != "path" or not _integer(parameter):
                continue
            name = parameter["name"]
            for value in NOT_INTEGERS:
                path = _path_of(world, template.replace("{" + name + "}", quote(value, safe="")))
                if path is None:
                    continue
                response = _api_client(world, _role_for(template)).generic(method, path)
                probed += 1
                if not 400 <= response.status_code < 500:
                    wrong.append(
                        f"{method} {template} {name}={value[:12]!r}: {response.status_code}"
                    )
    assert probed > 50, probed
    assert not wrong, "\n".join(wrong)


class _Page(HTMLParser):
    """The links and forms of a console page."""

    def __init__(self):
        super().__init__()
        self.links: list[str] = []
        self.forms: list[dict] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "a" and attrs.get("href"):
            self.links.append(attrs["href"])
        elif tag == "form":
            self.forms.append(
                {
                    "method": (attrs.get("method") or "get").upper(),
                    "action": attrs.get("action"),
                    "fields": [],
                }
            )
        elif tag in ("input", "select", "textarea", "button") and self.forms and attrs.get("name"):
            kind = attrs.get("type", "")
            if tag == "input" and kind in ("checkbox", "radio") and "checked" not in attrs:
                kind = "unchecked-" + kind
            self.forms[-1]["fields"].append((attrs["name"], attrs.get("value") or "", kind))

    def handle_endtag(self, tag):
        pass


def _console_pages(world):
    for pattern in all_patterns():
        row = MATRIX.get(pattern.route)
        if row is None or pattern.route.startswith(("api/", "admin/")) or "GET" not in row:
            continue
        if row["GET"][1] != "+":  # pages the owner may open
            continue
        try:
            yield fill(pattern.route, ids_of(world, row.get("on")))
        except KeyError:
            continue


def _integer_like(value: str) -> bool:
    head = value.split("/", 1)[0]
    return bool(DIGITS.fullmatch(head))


def _spoiled(value: str, bad: str) -> str:
    head, slash, rest = value.partition("/")
    return bad + slash + rest


def test_no_integer_of_a_console_link_or_form_answers_500(world):
    client = Client(raise_request_exception=False)
    client.force_login(world.users["owner"])
    probed, wrong = 0, []
    for page in _console_pages(world):
        response = client.get(page)
        if response.status_code != 200 or "html" not in response.get("Content-Type", ""):
            continue
        parsed = _Page()
        parsed.feed(response.content.decode())
        for link in parsed.links:
            parts = urlsplit(link)
            if parts.netloc or not parts.query or not parts.path.startswith("/"):
                continue
            query = parse_qsl(parts.query, keep_blank_values=True)
            for i, (name, value) in enumerate(query):
                if not _integer_like(value):
                    continue
                for bad in NOT_INTEGERS:
                    spoiled = [*query[:i], (name, _spoiled(value, bad)), *query[i + 1 :]]
                    answer = client.get(f"{parts.path}?{urlencode(spoiled)}")
                    probed += 1
                    if answer.status_code >= 500:
                        wrong.append(f"GET {parts.path}?{name}={bad[:12]!r}: {answer.status_code}")
        for form in parsed.forms:
            action = form["action"] or page
            fields = [(n, v) for n, v, kind in form["fields"] if not kind.startswith("unchecked")]
            numbers = [
                i
                for i, (name, value, kind) in enumerate(form["fields"])
                if kind == "number" or _integer_like(value)
            ]
            for i in numbers:
                name = form["fields"][i][0]
                for bad in NOT_INTEGERS:
                    sent = [(n, v) for n, v in fields if n != name] + [(name, bad)]
                    if form["method"] == "GET":
                        answer = client.get(f"{action}?{urlencode(sent)}")
                    else:
                        answer = client.post(
                            action,
                            urlencode(sent),
                            content_type="application/x-www-form-urlencoded",
                        )
                    probed += 1
                    if answer.status_code >= 500:
                        wrong.append(
                            f"{form['method']} {action} {name}={bad[:12]!r}: {answer.status_code}"
                        )
    assert probed > 100, probed
    assert not wrong, "\n".join(sorted(set(wrong)))


NAMED = [
    "/ladders/{ladder}/?slot=²/x",
    "/ladders/{ladder}/?slot=" + "9" * 5000 + "/x",
    "/ladders/{ladder}/history/?record=" + "9" * 5000,
    "/ladders/{ladder}/history/?n=" + "9" * 5000,
    "/ladders/{ladder}/compare/?b=" + "9" * 5000,
    "/ladders/{ladder}/compare/?a=²",
    "/runs/{run}/?ladder=" + "9" * 5000 + "&slot=²/x",
    "/ladders/{ladder}/queue/?run=" + "9" * 5000 + "&after=²",
    "/api/ladders/{ladder}/compare?a=" + "9" * 4301 + "&b=current",
    "/api/ladders/{ladder}/compare?a=current&b=" + "9" * 4301 + "&format=csv",
]


@pytest.mark.parametrize("address", NAMED)
def test_the_addresses_found_answering_500_answer_no_more(world, address):
    client = Client(raise_request_exception=False)
    client.force_login(world.users["owner"])
    response = client.get(address.format(ladder=world.ladder.pk, run=world.run.pk))
    assert response.status_code < 500, response.content[:300]
