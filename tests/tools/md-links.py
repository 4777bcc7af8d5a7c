#!/usr/bin/env python3
"""md-links.py - the relative links of Markdown files, for the tests.

    md-links.py broken FILE...    one line per link that names no file, or a
                                  #anchor that no heading of its Markdown
                                  file makes: FILE:LINE: TARGET: why
    md-links.py targets FILE...   the files these link to, one a line, as
                                  paths from the current directory
    md-links.py anchors FILE      the anchors the headings of FILE make

A link is [text](target) or ![text](target) (the text may wrap), or a
reference definition [label]: target. Links in fenced code blocks and in
code spans are not links. A target with a scheme (https:, mailto:) is not
relative and is left alone; a path that starts with / names no file of the
tree and is broken. Anchors are GitHub's: the heading's text, lower case,
without what is neither a letter, a digit, '_', '-' nor a space, each space a
'-'; a repeated one gets -1, -2, ... Exit status: 0, or 1 when `broken`
printed a line, 2 on a usage error.
"""
import os
import re
import sys
import urllib.parse

FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1", re.S)
INLINE = re.compile(r"!?\[([^\]]*)\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
DEFINITION = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$", re.M)
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def prose_lines(text):
    """The lines of text, with those of fenced code blocks made blank."""
    lines, fenced = [], False
    for line in text.split("\n"):
        if FENCE.match(line):
            fenced = not fenced
            lines.append("")
        else:
            lines.append("" if fenced else line)
    return lines


def anchors(path):
    """The anchors of the headings of a Markdown file, in order."""
    with open(path, encoding="utf-8") as f:
        lines = prose_lines(f.read())
    seen, out = {}, []
    for line in lines:
        m = HEADING.match(line)
        if not m:
            continue
        text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", m.group(2))
        slug = re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.append(slug if n == 0 else "%s-%d" % (slug, n))
    return out


def links(path):
    """(line, target) of each link of a Markdown file, in order."""
    with open(path, encoding="utf-8") as f:
        lines = prose_lines(f.read())
    out, start = [], 0
    # Paragraphs, split at blank lines: a code span or a link's text may
    # wrap within one, never across two.
    while start < len(lines):
        end = start
        while end < len(lines) and lines[end].strip():
            end += 1
        block = "\n".join(lines[start:end])
        block = CODE_SPAN.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), block)
        for rx in (INLINE, DEFINITION):
            for m in rx.finditer(block):
                line = start + 1 + block.count("\n", 0, m.start())
                out.append((line, m.group(m.lastindex)))
        start = end + 1
    out.sort()
    return out


def resolve(path, target):
    """(file or None for the same file, anchor or None), or None: not relative."""
    if not target or SCHEME.match(target):
        return None if target else (path, None)
    name, _, anchor = target.partition("#")
    name = urllib.parse.unquote(name)
    if name:
        name = os.path.normpath(os.path.join(os.path.dirname(path), name))
    return (name or path, urllib.parse.unquote(anchor) if anchor else None)


def why_broken(path, target):
    """Why a link of path is broken, or None."""
    if target.startswith("/"):
        return "an absolute path names no file of the tree"
    r = resolve(path, target)
    if r is None:
        return None
    name, anchor = r
    if not os.path.exists(name):
        return "no such file"
    if anchor is not None and name.endswith(".md"):
        if os.path.isdir(name) or anchor not in anchors(name):
            return "no heading of %s makes #%s" % (name, anchor)
    return None


def main(argv):
    if len(argv) < 3 or argv[1] not in ("broken", "targets", "anchors"):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    cmd, files = argv[1], argv[2:]
    if cmd == "anchors":
        for a in anchors(files[0]):
            print(a)
        return 0
    bad, names = 0, set()
    for path in files:
        for line, target in links(path):
            if cmd == "targets":
                r = None if target.startswith("/") else resolve(path, target)
                if r:
                    names.add(r[0])
                continue
            why = why_broken(path, target)
            if why:
                print("%s:%d: %s: %s" % (path, line, target, why))
                bad = 1
    for name in sorted(names):
        print(name)
    return bad


if __name__ == "__main__":
    sys.exit(main(sys.argv))
