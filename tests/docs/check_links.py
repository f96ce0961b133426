#!/usr/bin/env python3
"""The documentation's links hold: every relative link of README.md and docs/*.md names a file
that exists, and every #anchor a heading of that file (GitHub's slugs). Run by CTest
(docs:links); prints each broken link and exits 1 if any."""
import os
import re
import sys

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", ".."))
LINK = re.compile(r"(?<!!)\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^)\s]+)\)")


def slugs(path):
    """The anchors GitHub makes of a markdown file's headings (duplicates get -1, -2...)."""
    seen, out, fenced = {}, set(), False
    for line in open(path, encoding="utf-8"):
        if line.startswith("```"):
            fenced = not fenced
        if fenced or not line.startswith("#"):
            continue
        text = line.lstrip("#").strip().lower()
        slug = re.sub(r"[^\w\- ]", "", text).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return out


def links(path):
    fenced = False
    for number, line in enumerate(open(path, encoding="utf-8"), 1):
        if line.startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            continue
        for target in LINK.findall(re.sub(r"`[^`]*`", "", line)):
            yield number, target


def main():
    pages = [os.path.join(ROOT, "README.md")]
    docs = os.path.join(ROOT, "docs")
    pages += sorted(os.path.join(docs, f) for f in os.listdir(docs) if f.endswith(".md"))
    broken = 0
    for page in pages:
        for number, target in links(page):
            if re.match(r"^[a-z]+:", target):  # http:, https:, mailto:: not ours to check
                continue
            path, _, anchor = target.partition("#")
            file = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
            where = f"{os.path.relpath(page, ROOT)}:{number}: {target}"
            if not os.path.exists(file):
                print(f"{where}: no such file")
                broken += 1
            elif anchor and file.endswith(".md") and anchor not in slugs(file):
                print(f"{where}: no heading #{anchor} in {os.path.relpath(file, ROOT)}")
                broken += 1
    print(f"docs: {len(pages)} pages, {broken} broken link(s)")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
