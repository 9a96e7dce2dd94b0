"""The docs stay references: every decision in docs/decisions/ is listed in its index with the
status it states, and each has the shape a reader expects (title, status, context, decision,
consequences)."""

import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parent.parent / "docs"
DECISIONS = DOCS / "decisions"
INDEX = DECISIONS / "README.md"
LINK = re.compile(r"\]\(([^)#]+\.md)(?:#[^)]*)?\)")
STATUS = re.compile(r"^Status: (accepted|superseded by (\d{4}))$", re.MULTILINE)


def decision_files() -> list[Path]:
    return sorted(path for path in DECISIONS.glob("*.md") if path.name != "README.md")


def listed() -> set[str]:
    return set(LINK.findall(INDEX.read_text(encoding="utf-8")))


def index_line(name: str) -> str:
    for line in INDEX.read_text(encoding="utf-8").splitlines():
        first = LINK.search(line)
        if line.startswith("- ") and first and first.group(1) == name:
            return line
    return ""


def test_every_decision_file_is_listed_in_the_index():
    missing = [path.name for path in decision_files() if path.name not in listed()]
    assert not missing, f"docs/decisions/README.md does not list: {missing}"


def test_every_file_the_index_lists_exists():
    absent = sorted(name for name in listed() if not (DECISIONS / name).is_file())
    assert not absent, f"docs/decisions/README.md lists files that do not exist: {absent}"


def test_no_link_in_the_tree_points_at_the_old_single_decisions_file():
    root = DECISIONS.parent.parent
    stale = []
    for folder in ("docs", "loopweb", "ladders", "signals_app", "evalsets", "tests", "scripts"):
        for path in (root / folder).rglob("*"):
            readable = path.suffix in {".md", ".py", ".html", ".txt"} and path != Path(__file__)
            if readable and "decisions.md" in path.read_text(encoding="utf-8", errors="replace"):
                stale.append(str(path.relative_to(root)))
    assert not stale, f"these still name docs/decisions.md: {stale}"


@pytest.mark.parametrize("path", decision_files(), ids=lambda path: path.name)
def test_a_decision_has_a_title_a_status_and_its_three_parts(path):
    text = path.read_text(encoding="utf-8")
    assert text.startswith("# "), "the first line is the title"
    assert STATUS.search(text), "a line 'Status: accepted' or 'Status: superseded by NNNN'"
    for heading in ("## Context", "## Decision", "## Consequences"):
        assert f"\n{heading}\n" in text, f"missing {heading}"


@pytest.mark.parametrize("path", decision_files(), ids=lambda path: path.name)
def test_the_index_states_each_decisions_status_and_names_what_superseded_it(path):
    status = STATUS.search(path.read_text(encoding="utf-8"))
    assert status
    line = index_line(path.name)
    if status.group(2):
        successor = status.group(2)
        assert list(DECISIONS.glob(f"{successor}-*.md")), f"no decision {successor}"
        assert "superseded" in line and f"[{successor}]" in line, line
    else:
        assert "superseded" not in line, line


def test_the_performance_reference_stays_under_two_hundred_lines():
    lines = (DECISIONS.parent / "performance.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) < 200, "docs/performance.md is a reference: the latest table, not a diary"


def test_every_link_to_a_decision_names_a_file_that_exists():
    docs = DECISIONS.parent
    broken = []
    for page in [*docs.glob("*.md"), *DECISIONS.glob("*.md")]:
        for target in LINK.findall(page.read_text(encoding="utf-8")):
            if target.startswith("http") or "decisions" not in str(page.parent / target):
                continue
            if not (page.parent / target).is_file():
                broken.append(f"{page.relative_to(docs)} -> {target}")
    assert broken == []


def seed_rows() -> list[list[str]]:
    text = (DOCS / "architecture.md").read_text()
    section = text[text.index("## Where each seed heading lives") :]
    return [
        [cell.strip() for cell in line.strip("|").split("|")]
        for line in section.splitlines()
        if re.match(r"\| 00[034] \|", line)
    ]


def test_every_seed_heading_names_its_module_and_a_test_that_exists():
    rows = seed_rows()
    headings = {(seed, heading) for seed, heading, *_ in rows}
    assert len(headings) == len(rows) >= 25, "a heading is listed twice or the table is cut"
    for seed, heading, module, test in rows:
        assert re.fullmatch(r"`[a-z_.]+`", module), (heading, module)
        path = DOCS.parent / test.strip("`")
        assert path.is_file() and path.name.startswith("test_"), (heading, test)
        assert f'"{heading.split(" (")[0]}"' in path.read_text() or seed != "004", (
            f"{test} does not name the seed heading {heading!r}"
        )


def parts(path: Path) -> dict[str, str]:
    """A decision's Context, Decision and Consequences, each as written under its heading."""
    text = path.read_text(encoding="utf-8")
    found = re.split(r"^## (Context|Decision|Consequences)\n", text, flags=re.MULTILINE)
    return {found[i]: found[i + 1].strip() for i in range(1, len(found) - 1, 2)}


def test_each_decision_says_its_own_context_and_consequences():
    """A context is the situation that asked for this decision, and its consequences what follows
    from it: a sentence shared by many decisions, or none, tells a reader nothing."""
    seen: dict[str, list[str]] = {}
    for path in decision_files():
        for part in ("Context", "Consequences"):
            seen.setdefault(f"{part}: {parts(path).get(part, '')}", []).append(path.name[:4])
    shared = {text[:90]: names for text, names in seen.items() if len(names) > 1}
    assert shared == {}


BARE_CONSEQUENCES = r"(No further consequence.*|Where it lives: [^\n]*)"


def test_a_decisions_consequences_say_more_than_where_it_lives():
    bare = [
        path.name
        for path in decision_files()
        if re.fullmatch(BARE_CONSEQUENCES, parts(path)["Consequences"])
    ]
    assert bare == []
