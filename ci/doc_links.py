#!/usr/bin/env python3
"""Checks that every relative link of the workspace's markdown resolves.

Reads README.md, CHANGELOG.md, docs/**/*.md, records/**/*.md and every crate's README*, and the
crate docs' links to this repository (`https://github.com/cuda-gl/cuda-gl/blob/main/PATH`) in
cuda-gl/src/**/*.rs. A link resolves when its file exists and, where it names an anchor
(`page.md#heading`), the page has a heading with that GitHub anchor. Links inside fenced code
blocks and to other sites are not checked. Prints one line per broken link and exits 1 if any.

Usage: python3 ci/doc_links.py   (from anywhere in the repository)
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
REPO_BLOB = "https://github.com/cuda-gl/cuda-gl/blob/main/"
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^()\s]+(?:\([^()\s]*\))?)(?:\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"^\s*(```|~~~)")


def markdown_files():
    files = [ROOT / "README.md", ROOT / "CHANGELOG.md"]
    for folder in ("docs", "records"):
        files += sorted((ROOT / folder).rglob("*.md"))
    files += sorted(ROOT.glob("*/README*"))
    return sorted({f for f in files if f.is_file()})


def prose_lines(text):
    """The lines outside fenced code blocks, with their numbers."""
    fenced = False
    for number, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            yield number, line


def anchor(heading):
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"`|\*\*|\[([^\]]*)\]\([^)]*\)", lambda m: m.group(1) or "", heading)
    text = re.sub(r"[^\w\- ]", "", text.strip().lower())
    return text.replace(" ", "-")


def anchors(path):
    seen, found = {}, set()
    for _, line in prose_lines(path.read_text(encoding="utf-8")):
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            base = anchor(m.group(1))
            n = seen.get(base, 0)
            seen[base] = n + 1
            found.add(base if n == 0 else f"{base}-{n}")
    return found


def check(source, number, target, base, problems):
    path_part, _, fragment = target.partition("#")
    dest = (base / path_part).resolve() if path_part else source
    where = f"{source.relative_to(ROOT)}:{number}"
    if not dest.exists():
        problems.append(f"{where}: {target}: no such file")
    elif fragment and dest.suffix == ".md" and fragment.lower() not in anchors(dest):
        problems.append(f"{where}: {target}: no heading with anchor #{fragment}")


def main():
    problems = []
    for md in markdown_files():
        for number, line in prose_lines(md.read_text(encoding="utf-8")):
            for m in LINK.finditer(line):
                target = m.group(1)
                if re.match(r"^[a-z]+:", target):
                    if target.startswith(REPO_BLOB):
                        check(md, number, target[len(REPO_BLOB):], ROOT, problems)
                    continue
                check(md, number, target, md.parent, problems)
    for rs in sorted((ROOT / "cuda-gl" / "src").rglob("*.rs")):
        for number, line in enumerate(rs.read_text(encoding="utf-8").splitlines(), 1):
            for m in re.finditer(re.escape(REPO_BLOB) + r"([^)\s>]+)", line):
                check(rs, number, m.group(1), ROOT, problems)
    for problem in problems:
        print(problem)
    checked = "every relative link resolves" if not problems else f"{len(problems)} broken links"
    print(f"doc links: {checked}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
