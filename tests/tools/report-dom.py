#!/usr/bin/env python3
"""report-dom.py - what a report.html shows, one fact a line, for the tests.

    report-dom.py FILE

FILE is the page as Chromium parsed it (--dump-dom) or as written. Prints:
    lang LANG
    banner VERDICT CLASSES
    h2 TEXT                          each section heading, in order
    column ENV VERDICT-CLASS ref|-   each matrix column
    cell KIND NAME ENV CLASS         each matrix cell: its status class
    trace CHECK open|folded
    step CHECK STEP diff|same open|folded
    card ENV LINE                    each text line of an SVG evidence card
    verdict-rect ENV X Y W H FILL    the card's rectangles of class "verdict"
    card-size ENV W H
"""
import sys
from html.parser import HTMLParser

VOID = {"meta", "br", "rect", "img", "input", "link", "hr"}


class Page(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack = []          # (tag, attrs) of the open elements
        self.text = None         # (kind, args, parts) being collected
        self.trace = None

    def within(self, tag, cls=None):
        for t, a in reversed(self.stack):
            if t == tag and (cls is None or cls in (a.get("class") or "").split()):
                return a
        return None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        cls = (a.get("class") or "").split()
        if tag == "html":
            print("lang", a.get("lang"))
        elif tag == "header" and a.get("id") == "banner":
            print("banner", a.get("data-verdict"), " ".join(cls))
        elif tag == "h2":
            self.text = ("h2", [], [])
        elif tag == "th" and a.get("data-env") and self.within("table", "matrix") is not None:
            self.column = [a.get("data-env"), "ref" if "ref" in cls else "-"]
        elif tag == "small" and getattr(self, "column", None) and \
                any(c.startswith("v-") for c in cls):
            print("column", self.column[0], " ".join(cls), self.column[1])
            self.column = None
        elif tag == "td" and "cell" in cls:
            row = self.within("tr")
            print("cell", row.get("data-kind"), row.get("data-check"), a.get("data-env"),
                  " ".join(c for c in cls if c != "cell"))
        elif tag == "details" and "trace" in cls:
            self.trace = a.get("data-check")
            print("trace", self.trace, "open" if "open" in a else "folded")
        elif tag == "details" and "step" in cls:
            kind = "diff" if "diff" in cls else "same" if "same" in cls else "?"
            print("step", self.trace, a.get("data-step"), kind, "open" if "open" in a else "folded")
        elif tag == "svg" and "card" in cls:
            self.card = a.get("aria-label", "").replace("evidence card ", "", 1)
            print("card-size", self.card, a.get("width"), a.get("height"))
        elif tag == "rect" and "verdict" in cls and self.within("svg", "card") is not None:
            print("verdict-rect", self.card, a.get("x"), a.get("y"), a.get("width"),
                  a.get("height"), a.get("fill"))
        elif tag == "text" and self.within("svg", "card") is not None:
            self.text = ("card", [self.card], [])
        if tag not in VOID:
            self.stack.append((tag, a))

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in VOID:
            self.stack.pop()

    def handle_endtag(self, tag):
        if self.text and tag in ("h2", "text"):
            kind, args, parts = self.text
            print(kind, *args, "".join(parts))
            self.text = None
        while self.stack:
            t, _ = self.stack.pop()
            if t == tag:
                break

    def handle_data(self, data):
        if self.text:
            self.text[2].append(data)


if __name__ == "__main__":
    p = Page()
    p.feed(open(sys.argv[1], encoding="utf-8").read())
    p.close()
