"""Helpers for the console tests."""

import html as entities
import re
from html.parser import HTMLParser

from django.test import Client


class Browser(Client):
    """A signed-in client that enforces CSRF, as a browser session would."""

    def __init__(self, user):
        super().__init__(enforce_csrf_checks=True)
        self.user = user
        self.force_login(user)

    def token(self) -> str:
        if "csrftoken" not in self.cookies:
            self.get("/")
        return self.cookies["csrftoken"].value

    def submit(self, url: str, data: dict | None = None, **extra):
        """POST a form the way the page does: with its CSRF token."""
        return self.post(url, {**(data or {}), "csrfmiddlewaretoken": self.token()}, **extra)


def text_of(response) -> str:
    """The page's text without tags, whitespace collapsed: what a reader sees."""
    html = response.content.decode()
    html = re.sub(r"<(script|style)\b.*?</\1>", " ", html, flags=re.S)
    return re.sub(r"\s+", " ", entities.unescape(re.sub(r"<[^>]+>", " ", html))).strip()


class _FormReader(HTMLParser):
    """Collects what a browser would submit from one form (no button)."""

    def __init__(self, form_id: str):
        super().__init__()
        self.form_id, self.inside, self.data = form_id, False, []
        self.select = None
        self.options: list[tuple[str, bool, bool]] = []
        self.textarea = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "form":
            self.inside = a.get("id") == self.form_id
        if not self.inside or "disabled" in a:
            return
        if tag == "input" and a.get("name"):
            kind = a.get("type", "text")
            if kind in ("checkbox", "radio"):
                if "checked" in a:
                    self.data.append((a["name"], a.get("value", "on")))
            elif kind not in ("submit", "button"):
                self.data.append((a["name"], a.get("value", "")))
        elif tag == "select" and a.get("name"):
            self.select, self.options = a["name"], []
        elif tag == "option" and self.select:
            self.options.append((a.get("value", ""), "selected" in a, "disabled" in a))
        elif tag == "textarea" and a.get("name"):
            self.textarea = [a["name"], ""]

    def handle_data(self, data):
        if self.textarea:
            self.textarea[1] += data

    def handle_endtag(self, tag):
        if tag == "form":
            self.inside = False
        elif tag == "select" and self.select:
            chosen = [o for o in self.options if o[1]] or [o for o in self.options if not o[2]]
            if chosen:
                self.data.append((self.select, chosen[0][0]))
            self.select = None
        elif tag == "textarea" and self.textarea:
            self.data.append(tuple(self.textarea))
            self.textarea = None


def form_data(response, form_id: str) -> dict:
    """The values the page's form would post, as a dict of lists (like a QueryDict)."""
    reader = _FormReader(form_id)
    reader.feed(response.content.decode())
    data: dict[str, list[str]] = {}
    for name, value in reader.data:
        data.setdefault(name, []).append(value)
    data.pop("csrfmiddlewaretoken", None)
    return data


def segment_width(html: str, segment: str) -> str:
    """The width a run bar's segment (its class) is drawn at, as a percentage."""
    tag = html[html.index(f'class="{segment}"') :].split(">")[0]
    return re.search(r"width(?:=\"|: )([\d.]+%)", tag).group(1)
