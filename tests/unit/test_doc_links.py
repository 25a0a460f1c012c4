"""Links between the docs resolve: every relative Markdown link in README.md, docs/ and
bench/README.md names a file that exists and, with a #fragment, a heading of that file; and
every docs/noise.md decision or evidence id the code cites (D11, E12) is in docs/noise.md. The
bench diary's removal broke citations by section name once; this keeps them pointed right."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", ROOT / "bench" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation but '-' and '_' dropped, spaces to '-'."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    found, fence = set(), False
    for line in path.read_text().splitlines():
        if line.startswith("```"):
            fence = not fence
        elif not fence and line.startswith("#"):
            found.add(slug(line.lstrip("#")))
    return found


def links(path: Path) -> list[str]:
    return [m for m in LINK.findall(path.read_text()) if not re.match(r"[a-z]+:", m)]


@pytest.mark.parametrize("doc", DOCS, ids=[str(d.relative_to(ROOT)) for d in DOCS])
def test_every_relative_link_of_a_doc_names_a_file_and_heading_that_exist(doc):
    broken = []
    for link in links(doc):
        target, _, fragment = link.partition("#")
        path = (doc.parent / target).resolve() if target else doc
        if not path.exists():
            broken.append(f"{link}: no file {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")
        elif fragment and path.suffix == ".md" and fragment not in anchors(path):
            broken.append(f"{link}: no heading #{fragment} in {path.relative_to(ROOT)}")
    assert not broken, f"{doc.relative_to(ROOT)}: " + "; ".join(broken)


def test_the_slug_is_githubs_for_a_script_heading():
    assert slug("changepoints.py — change points on A/A data") == "changepointspy--change-points-on-aa-data"


def test_every_noise_decision_or_evidence_the_code_cites_is_in_noise_md():
    text = (ROOT / "docs" / "noise.md").read_text()
    known = set(re.findall(r"\*\*(D\d+)\.", text)) | set(re.findall(r"^\| (E\d+) \|", text, re.M))
    cited = set()
    for path in [*(ROOT / "src").rglob("*.py"), *(ROOT / "bench").glob("*.py")]:
        for match in re.finditer(r"docs/noise\.md,([^)\"]*)", path.read_text()):
            cited |= set(re.findall(r"\b([DE]\d+)\b", match.group(1)))
    assert cited, "the code cites docs/noise.md by decision and evidence id"
    assert cited <= known, f"cited but not in docs/noise.md: {sorted(cited - known)}"
