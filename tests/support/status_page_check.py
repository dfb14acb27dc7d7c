#!/usr/bin/env python3
"""Renders a daemon's status page (GET /) in headless Chromium and checks
that what it shows is what /v1/status says: the round and phase, the
membership, the loss chart (one point per trained round the status lists),
the verdicts and the rewards. The page is fetched by the browser from the
daemon itself, with its own script; nothing is fed to it.

Usage: status_page_check.py URL [--worker] [--validator]
Exits 0 when every check holds, 1 with the reasons otherwise."""
import html.parser
import json
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.request


class Ids(html.parser.HTMLParser):
    """Text and attributes of every element with an id."""

    def __init__(self):
        super().__init__()
        self.text, self.attrs, self.stack = {}, {}, []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.stack.append(a.get("id"))
        if a.get("id"):
            self.attrs[a["id"]] = a
            self.text.setdefault(a["id"], "")
        if tag in ("meta", "link", "br", "input", "img"):
            self.stack.pop()

    def handle_endtag(self, tag):
        if self.stack:
            self.stack.pop()

    def handle_data(self, data):
        for i in self.stack:
            if i:
                self.text[i] = self.text.get(i, "") + data


def render(url):
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        sys.exit("status_page_check: no chromium (scripts/setup installs it)")
    with tempfile.TemporaryDirectory() as profile:
        out = subprocess.run(
            [browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-extensions", "--user-data-dir=" + profile,
             "--virtual-time-budget=5000", "--dump-dom", url],
            capture_output=True, text=True, timeout=60)
    if out.returncode != 0 or "<html" not in out.stdout:
        sys.exit("status_page_check: chromium failed (%d): %s" % (out.returncode, out.stderr[-400:]))
    return out.stdout


def main():
    url = sys.argv[1].rstrip("/")
    worker, validator = "--worker" in sys.argv, "--validator" in sys.argv
    with urllib.request.urlopen(url + "/", timeout=10) as r:
        page = r.read().decode()
        csp = r.headers.get("Content-Security-Policy", "")
        ctype = r.headers.get("Content-Type", "")
    bad = []
    if not ctype.startswith("text/html") or "default-src 'none'" not in csp:
        bad.append("headers: %s / %s" % (ctype, csp))
    for outside in ("http://", "https://", "src=\"/", "href=\""):
        if outside in page:
            bad.append("the page refers to something outside it: %s" % outside)
    before = json.load(urllib.request.urlopen(url + "/v1/status", timeout=10))
    dom = render(url + "/")
    after = json.load(urllib.request.urlopen(url + "/v1/status", timeout=10))
    ids = Ids()
    ids.feed(dom)
    t = {k: v.strip() for k, v in ids.text.items()}

    def want(cond, what):
        if not cond:
            bad.append(what)

    want(t.get("address") == before["address"], "address: %r" % t.get("address"))
    want(t.get("updated") not in ("", "never"), "the page never polled /v1/status")
    want(before["round"] is not None and
         before["round"] <= int(t.get("round", "-1") or -1) <= after["round"],
         "round: %r, status %s..%s" % (t.get("round"), before["round"], after["round"]))
    want(t.get("phase") in (before["phase"], after["phase"]) or before["round"] != after["round"],
         "phase: %r" % t.get("phase"))
    want(t.get("membership") == after["membership"] == "member", "membership: %r" % t.get("membership"))
    want(t.get("rewards", "").replace(",", "").startswith(str(before["rewards_claimed_ngonka"]))
         or before["rewards_claimed_ngonka"] != after["rewards_claimed_ngonka"],
         "rewards: %r, status %d" % (t.get("rewards"), before["rewards_claimed_ngonka"]))
    want(after["rewards_claimed_ngonka"] > 0, "the node claimed nothing")
    for v in ("pass", "fail", "unavailable"):
        shown = t.get("checks-" + v, "")
        want(shown.isdigit() and before["checks"][v] <= int(shown) <= after["checks"][v],
             "checks %s: %r" % (v, shown))
    points = int(ids.attrs.get("chart", {}).get("data-points", "-1"))
    line = ids.attrs.get("chart-line", {}).get("points", "")
    if worker:
        want(len(before["losses"]) >= 2, "the status lists %d losses" % len(before["losses"]))
        want(len(before["losses"]) <= points <= len(after["losses"]) and len(line.split()) == points,
             "chart: %d points (%d in the line), status %d" %
             (points, len(line.split()), len(before["losses"])))
        want(t.get("chart-range", "").startswith("rounds "), "chart range: %r" % t.get("chart-range"))
    if validator:
        want(int(t.get("checks-pass", "0") or 0) > 0, "a validator that shows no passed check")
        want(points == 0, "a validator with a loss chart")
    if bad:
        print("status page at %s:\n  %s" % (url, "\n  ".join(bad)))
        return 1
    print("status page at %s: round %s, %s, %s, checks %s/%s/%s, rewards %s, %d loss points" %
          (url, t.get("round"), t.get("phase"), t.get("membership"), t.get("checks-pass"),
           t.get("checks-fail"), t.get("checks-unavailable"), t.get("rewards"), points))
    return 0


if __name__ == "__main__":
    sys.exit(main())
