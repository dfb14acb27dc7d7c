#!/usr/bin/env python3
"""Checks contrib/'s Grafana dashboard and Prometheus alert rules against a
live daemon's /metrics: every metric a query or rule names is one the
daemon exports (so no panel stays empty and no alert watches nothing), and
the dashboard is well formed (unique panel ids, a target each, unique refIds
within a panel, panels inside Grafana's 24-column grid).

Usage: contrib_check.py CONTRIB_DIR METRICS_URL"""
import json
import re
import sys
import urllib.request

NAME = re.compile(r"\b(gd_[a-z0-9_]+)\b")


def main():
    contrib, url = sys.argv[1], sys.argv[2]
    text = urllib.request.urlopen(url, timeout=10).read().decode()
    exported = set(re.findall(r"^# TYPE (\S+) ", text, re.M))
    bad = []
    dash = json.load(open(contrib + "/grafana/gonka-diloco-dashboard.json"))
    queries = []
    ids = set()
    for p in dash["panels"]:
        if p["id"] in ids:
            bad.append("panel id %d twice" % p["id"])
        ids.add(p["id"])
        g = p["gridPos"]
        if g["x"] < 0 or g["w"] < 1 or g["x"] + g["w"] > 24:
            bad.append("panel %r is outside the grid: %r" % (p["title"], g))
        if not p.get("targets"):
            bad.append("panel %r has no query" % p["title"])
        refs = [t["refId"] for t in p.get("targets", [])]
        if len(set(refs)) != len(refs):
            bad.append("panel %r repeats a refId" % p["title"])
        queries += [(p["title"], t["expr"]) for t in p.get("targets", [])]
    for v in dash["templating"]["list"]:
        if v["type"] == "query":
            queries.append(("variable " + v["name"], v["definition"]))
    rules = open(contrib + "/prometheus/gonka-diloco-alerts.yml").read()
    queries += [("alert rule", e) for e in re.findall(r"^\s*expr: (.*)$", rules, re.M)]
    named = set()
    for where, q in queries:
        names = NAME.findall(q)
        if not names and "up{" not in q:
            bad.append("%s: %r names no metric" % (where, q))
        for n in names:
            named.add(n)
            if n not in exported:
                bad.append("%s: %s is not exported by %s" % (where, n, url))
    if bad:
        print("contrib against %s:\n  %s" % (url, "\n  ".join(bad)))
        return 1
    unused = sorted(exported - named)
    print("contrib: %d dashboard and rule queries name %d metrics, all exported%s" %
          (len(queries), len(named), "; not shown: " + ", ".join(unused) if unused else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
