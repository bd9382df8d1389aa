#!/usr/bin/env python3
"""Fair-share and connection benchmarks (docs/benchmarks/journal/2026-11-21-to-28.md, "Fair shares between clients").

Starts the server jar (embedded model unless --model) with fair shares on and off, one after the
other, and measures:
  victim   a victim's TTFT unloaded, while client A sends one 256-prompt request, and while A
           sends 32 such requests (streams, ignore_eos, --flood-tokens each)
  solo     throughput under single-client load: 4 requests x 64 prompts, and 64 concurrent
           one-prompt requests (completion tokens / wall time)
  idle     --idle-connections idle connections (from two helper processes), then a good request
           (on the fair-shares-on server; the connection policy does not depend on them)
Both servers run for the whole benchmark; the solo rounds alternate between them.
Only the standard library; run from the repository root after
`./mvnw -B -ntp -q -pl server -am -DskipTests package`.
"""
import argparse
import http.client
import json
import os
import resource
import socket
import statistics
import subprocess
import sys
import threading
import time

JAR = "server/target/radixserve.jar"
MODEL = "radixserve-embedded-gpt2"


def start_server(port, fair, extra, log, jar=JAR):
    """fair None: a build without fair shares (the baseline jar): no fair-share flags."""
    java = os.path.join(os.environ.get("JAVA_HOME", ""), "bin", "java") \
        if os.environ.get("JAVA_HOME") else "java"
    fair_flags = [] if fair is None else ["--client-id-header", "X-Client", "--fair-share",
                                          "true" if fair else "false"]
    cmd = [java, "--add-modules", "jdk.incubator.vector", "-Xmx2g", "-jar", jar, "serve",
           "--host", "127.0.0.1", "--port", str(port), "--max-queued-requests", "20000"] \
        + fair_flags + extra
    p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    for _ in range(600):
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            c.request("GET", "/health")
            if c.getresponse().status == 200:
                return p
        except OSError:
            pass
        time.sleep(0.2)
    p.kill()
    raise RuntimeError("server did not start")


def completion_body(prompts, max_tokens, stream):
    return json.dumps({"model": MODEL, "prompt": prompts, "max_tokens": max_tokens,
                       "ignore_eos": True, "stream": stream})


def ttft(port, client, max_tokens=8):
    """Seconds from sending a streamed request to its first token event."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    t0 = time.perf_counter()
    c.request("POST", "/v1/completions", completion_body("Once upon a time", max_tokens, True),
              {"Content-Type": "application/json", "X-Client": client})
    r = c.getresponse()
    assert r.status == 200, r.status
    first = None
    while True:
        line = r.readline()
        if not line:
            break
        if line.startswith(b"data: {") and first is None:
            first = time.perf_counter() - t0
    c.close()
    return first


class Flood:
    """`requests` streamed requests of `prompts` prompts each from one client, drained."""

    def __init__(self, port, client, requests, prompts, max_tokens):
        self.socks = []
        body = completion_body([f"Story {i}:" for i in range(prompts)], max_tokens, True).encode()
        for _ in range(requests):
            s = socket.create_connection(("127.0.0.1", port))
            s.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json"
                      b"\r\nX-Client: " + client.encode() + b"\r\nContent-Length: "
                      + str(len(body)).encode() + b"\r\n\r\n" + body)
            self.socks.append(s)
        for s in self.socks:
            s.recv(1)  # the stream opened: the engine has every prompt of it
        for s in self.socks:
            threading.Thread(target=self._drain, args=(s,), daemon=True).start()

    @staticmethod
    def _drain(s):
        try:
            while s.recv(65536):
                pass
        except OSError:
            pass

    def stop(self):
        for s in self.socks:
            s.close()  # aborts what is left


def metric(port, name):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    c.request("GET", "/metrics")
    text = c.getresponse().read().decode()
    total = 0.0
    for line in text.splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            total += float(line.rsplit(" ", 1)[1])
    return total


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]


def victim(port, samples, flood_tokens):
    out = {}
    for _ in range(5):
        ttft(port, "warm-up")  # unmeasured: the first requests compile the kernels
    for load, requests in (("unloaded", 0), ("1x256", 1), ("32x256", 32)):
        flood = Flood(port, "a", requests, 256, flood_tokens) if requests else None
        itl_sum0 = metric(port, "radixserve_inter_token_latency_seconds_sum")
        itl_n0 = metric(port, "radixserve_inter_token_latency_seconds_count")
        pre0 = metric(port, "radixserve_fair_share_preemptions_total")
        t = [ttft(port, "b") for _ in range(samples)]
        itl_n = metric(port, "radixserve_inter_token_latency_seconds_count") - itl_n0
        step = (metric(port, "radixserve_inter_token_latency_seconds_sum") - itl_sum0) / itl_n \
            if itl_n else 0
        pre = metric(port, "radixserve_fair_share_preemptions_total") - pre0
        if flood:
            flood.stop()
            time.sleep(2)  # let the aborts land
        out[load] = {"p50": statistics.median(t), "p99": pct(t, 0.99), "max": max(t),
                     "mean_itl": step, "fair_preemptions": pre}
        print(f"  victim {load}: p50 {out[load]['p50']*1000:.0f} ms, p99 {out[load]['p99']*1000:.0f}"
              f" ms, mean ITL {step*1000:.0f} ms, fair-share preemptions {pre:.0f}", flush=True)
    return out


def solo(port, max_tokens):
    out = {}
    for name, requests, prompts in (("4x64 prompts", 4, 64), ("64x1 prompt", 64, 1)):
        done = []

        def one():
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=900)
            c.request("POST", "/v1/completions",
                      completion_body([f"Story {i}:" for i in range(prompts)], max_tokens, False),
                      {"Content-Type": "application/json", "X-Client": "solo"})
            r = c.getresponse()
            body = json.loads(r.read())
            done.append(body["usage"]["completion_tokens"])

        pre0 = metric(port, "radixserve_fair_share_preemptions_total")
        t0 = time.perf_counter()
        threads = [threading.Thread(target=one) for _ in range(requests)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        wall = time.perf_counter() - t0
        pre = metric(port, "radixserve_fair_share_preemptions_total") - pre0
        out[name] = {"tokens": sum(done), "wall": wall, "tok_s": sum(done) / wall,
                     "fair_preemptions": pre}
        print(f"  solo {name}: {sum(done)} tokens in {wall:.1f} s = {sum(done)/wall:.0f} tok/s,"
              f" fair-share preemptions {pre:.0f}", flush=True)
    return out


HOLDER = r"""
import resource, socket, sys, time
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
port, n = int(sys.argv[1]), int(sys.argv[2])
socks, failed = [], 0
for i in range(n):
    try:
        socks.append(socket.create_connection(("127.0.0.1", port), timeout=10))
    except OSError:
        failed += 1
print(len(socks), failed, flush=True)
sys.stdin.read()
"""


def idle(port, count):
    per = count // 2
    holders = [subprocess.Popen([sys.executable, "-c", HOLDER, str(port), str(per)],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
               for _ in range(2)]
    t0 = time.perf_counter()
    opened = failed = 0
    for h in holders:
        o, f = map(int, h.stdout.readline().split())
        opened += o
        failed += f
    flood_s = time.perf_counter() - t0
    try:
        open_now = metric(port, "radixserve_connections_open")
    except OSError:
        open_now = float("nan")
    t0 = time.perf_counter()
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        c.request("POST", "/v1/completions", completion_body("Once", 4, False),
                  {"Content-Type": "application/json"})
        status = c.getresponse().status
    except OSError as e:
        status = f"no response ({e.__class__.__name__}: {e})"
    good = time.perf_counter() - t0
    try:
        evicted = metric(port, "radixserve_connections_evicted_idle_total")
    except OSError:
        evicted = float("nan")
    for h in holders:
        h.stdin.close()
        h.wait()
    print(f"  idle: {opened} connections opened ({failed} failed) in {flood_s:.1f} s; server held"
          f" {open_now:.0f}; good request {status} in {good*1000:.0f} ms; {evicted:.0f} idle"
          f" connections evicted", flush=True)
    return {"opened": opened, "failed": failed, "status": status, "seconds": good,
            "server_open": open_now, "evicted": evicted}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=8230, help="fair shares on; off on port + 1")
    ap.add_argument("--samples", type=int, default=10)
    ap.add_argument("--flood-tokens", type=int, default=100)
    ap.add_argument("--solo-tokens", type=int, default=32)
    ap.add_argument("--solo-rounds", type=int, default=3, help="on/off pairs, alternating")
    ap.add_argument("--idle-connections", type=int, default=20000)
    ap.add_argument("--only", default="victim,solo,idle")
    ap.add_argument("--log", default="/tmp/bench-fair-server")
    ap.add_argument("--baseline-jar", help="only the idle scenario, against this older build")
    args, extra = ap.parse_known_args()
    if args.baseline_jar:
        with open(f"{args.log}-baseline.log", "w") as log:
            p = start_server(args.port, None, extra, log, args.baseline_jar)
            try:
                idle(args.port, args.idle_connections)
            finally:
                p.terminate()
                p.wait()
        return
    only = args.only.split(",")
    ports = {"on": args.port, "off": args.port + 1}
    results = {"on": {}, "off": {}}
    logs = {k: open(f"{args.log}-{k}.log", "w") for k in ports}
    # both servers up for the whole run: the idle one costs next to nothing, and the solo
    # throughput pairs alternate between them so that a shared machine's drift hits both
    servers = {k: start_server(ports[k], k == "on", extra, logs[k]) for k in ports}
    try:
        if "victim" in only:
            for k in ports:
                print(f"fair-share {k}", flush=True)
                results[k]["victim"] = victim(ports[k], args.samples, args.flood_tokens)
        if "solo" in only:
            for k in ports:
                results[k]["solo"] = []
            for r in range(args.solo_rounds):
                for k in (("on", "off") if r % 2 == 0 else ("off", "on")):
                    print(f"fair-share {k}, round {r}", flush=True)
                    results[k]["solo"].append(solo(ports[k], args.solo_tokens))
            for name in results["on"]["solo"][0]:
                ratios = [on[name]["tok_s"] / off[name]["tok_s"]
                          for on, off in zip(results["on"]["solo"], results["off"]["solo"])]
                print(f"  solo {name}: on/off throughput per round "
                      + ", ".join(f"{x:.2f}" for x in ratios)
                      + f"; median {statistics.median(ratios):.2f}", flush=True)
        if "idle" in only:
            results["on"]["idle"] = idle(ports["on"], args.idle_connections)
    finally:
        for p in servers.values():
            p.terminate()
            p.wait()
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
