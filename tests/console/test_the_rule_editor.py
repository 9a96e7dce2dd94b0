"""The acceptance rule editor puts each error under the field it is about."""

import html as entities
import re

import pytest
from django.urls import reverse

from signals_app.models import AcceptanceRule

pytestmark = pytest.mark.django_db

RULE = {
    "name": "quality",
    "description": "a quality bar",
    "requires": "tests",
    "excludes-events": "revert",
    "window-days": "14",
    "score-name": "quality",
    "score-target": "0.8",
    "score-better": "higher",
    "score-scale": "",
    "action": "save",
}


def field_of(html: str, input_id: str) -> str:
    """The markup of the ``.field`` block that holds the input ``input_id``."""
    blocks = re.findall(r'<div class="field">.*?</div>', html, re.S)
    [block] = [b for b in blocks if f'id="{input_id}"' in b]
    return block


def errors_in(block: str) -> list[str]:
    return [
        entities.unescape(re.sub(r"<[^>]+>|Error: ", "", item)).strip()
        for item in re.findall(r"<li>(.*?)</li>", block, re.S)
    ]


def described_by(html: str, input_id: str) -> list[str]:
    tag = re.search(rf'<(?:input|select)[^>]*\bid="{input_id}"[^>]*>', html).group(0)
    found = re.search(r'aria-describedby="([^"]+)"', tag)
    return found.group(1).split() if found else []


def test_a_target_that_is_not_a_number_is_marked_under_target_not_score_name(owner_client):
    response = owner_client.submit(
        reverse("console:acceptance-rule"), {**RULE, "score-target": "fast"}
    )
    assert response.status_code == 400
    html = response.content.decode()
    target = field_of(html, "score-target")
    assert errors_in(target) == ["Must be a finite number."], target
    assert errors_in(field_of(html, "score-name")) == []
    assert "score-target-error" in described_by(html, "score-target")
    assert "score-target-error" not in described_by(html, "score-name")
    assert not AcceptanceRule.objects.exists()


def test_each_score_field_shows_its_own_error(owner_client):
    response = owner_client.submit(
        reverse("console:acceptance-rule"),
        {**RULE, "score-name": "x" * 201, "score-target": "2", "score-scale": "fraction"},
    )
    assert response.status_code == 400
    html = response.content.decode()
    name_errors = errors_in(field_of(html, "score-name"))
    target_errors = errors_in(field_of(html, "score-target"))
    assert name_errors and all("200" in e or "character" in e for e in name_errors), name_errors
    assert target_errors == ['E195: A target with scale "fraction" must lie in [0, 1].']
    assert "score-name-error" in described_by(html, "score-name")
    assert "score-target-error" in described_by(html, "score-target")


def test_a_valid_score_target_saves_with_no_error_marked(owner_client, owner):
    response = owner_client.submit(reverse("console:acceptance-rule"), RULE, follow=True)
    assert response.status_code == 200
    assert 'class="field-errors"' not in response.content.decode()
    assert AcceptanceRule.objects.get(user=owner).score["target"] == 0.8
