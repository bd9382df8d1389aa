#!/usr/bin/env python3
"""Checks the Grafana dashboard against a /metrics scrape.

usage: dashboard-metrics.py DASHBOARD_JSON METRICS_TXT
Every metric a panel's query names must be in the scrape; prints the queries (one a line,
$__rate_interval as 1m) for the caller to run through Prometheus. Exit 1, printing the missing
names, when one is not exported or there are no queries. Used by check-prometheus.sh and
check-image.sh.
"""
import json
import re
import sys

exprs = []


def walk(o):
    if isinstance(o, dict):
        for k, v in o.items():
            exprs.append(v) if k == "expr" else walk(v)
    elif isinstance(o, list):
        for v in o:
            walk(v)


walk(json.load(open(sys.argv[1])))
exported = {m.group(1) for m in re.finditer(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)[{ ]",
                                            open(sys.argv[2]).read(), re.M)}
named = {n for e in exprs for n in re.findall(r"\b((?:radixserve|jvm|process|system)_[a-z0-9_]+)", e)}
missing = sorted(named - exported)
if missing or not exprs:
    print("\n".join(missing) or "no queries found")
    sys.exit(1)
for e in exprs:
    print(e.replace("$__rate_interval", "1m"))
