#!/usr/bin/env python3
"""Two server builds side by side, per KV-cache dtype: 1,500-token prefill and 64-token decode.

    python3 bench/kv-dtype/ab.py JAR_A JAR_B MODEL_DIR [ROUNDS] [DTYPES]

Each round starts one server at a time (A then B, B then A in the next round), int4 weights
from a shared --weights-cache, 2 threads, prefix caching off, and per KV dtype:
  - prefill: a fresh ~1,500-token prompt with max_tokens 1, wall time of the request;
  - decode: another fresh prompt of the same length, streamed with max_tokens 65 and ignore_eos;
    the time from the first to the last token over 64 tokens.
Prints one line per (round, dtype, jar) and the B/A ratios of the medians. Run it on a quiet
machine: `uptime` is printed at the start and the end.
"""
import json, os, random, statistics, subprocess, sys, tempfile, time, urllib.request

jar_a, jar_b, model = sys.argv[1], sys.argv[2], sys.argv[3]
rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 2
dtypes = (sys.argv[5] if len(sys.argv) > 5 else "float32,int8,bfloat16,float16").split(",")
java = os.path.join(os.environ.get("JAVA_HOME", "/usr/lib/jvm/temurin-25-jdk-amd64"), "bin/java")
cache = tempfile.mkdtemp(prefix="kv-ab-weights-")
port = 18700 + random.randrange(200)
words = "the river bends past the old mill where seven herons wait for the evening light".split()


def prompt(nonce):
    rng = random.Random(nonce)
    return f"Note {nonce}: " + " ".join(rng.choice(words) for _ in range(1300))


def post(body, stream=False):
    req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/completions",
                                 data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    return urllib.request.urlopen(req, timeout=600)


def run(jar, dtype, nonce):
    log = open(f"/tmp/kv-ab-{os.path.basename(os.path.dirname(jar))}-{dtype}.log", "w")
    p = subprocess.Popen([java, "--enable-native-access=ALL-UNNAMED", "--add-modules",
                          "jdk.incubator.vector", "-Xmx2g", "-jar", jar, "serve", "--model", model,
                          "--host", "127.0.0.1", "--port", str(port), "--threads", "2",
                          "--kv-cache-memory", "512m", "--quantization", "int4",
                          "--kv-cache-dtype", dtype, "--prefix-caching", "false",
                          "--weights-cache", cache], stdout=log, stderr=subprocess.STDOUT)
    try:
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2)
                break
            except Exception:
                if p.poll() is not None:
                    raise SystemExit(f"server exited, see {log.name}")
                time.sleep(0.5)
        name = os.path.basename(model.rstrip("/"))
        post({"model": name, "prompt": "warm up", "max_tokens": 8}).read()
        t0 = time.time()
        post({"model": name, "prompt": prompt(nonce), "max_tokens": 1}).read()
        prefill = time.time() - t0
        r = post({"model": name, "prompt": prompt(nonce + 1), "max_tokens": 65,
                  "ignore_eos": True, "temperature": 0, "stream": True})
        stamps = []
        for line in r:
            if line.startswith(b"data: {"):
                stamps.append(time.time())
        decode = 64 / (stamps[-1] - stamps[0]) if len(stamps) > 1 else float("nan")
        return prefill, decode
    finally:
        p.terminate()
        p.wait()


print("#", time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), os.uname().nodename,
      os.cpu_count(), "cores;", open("/proc/loadavg").read().strip())
results = {}
for rnd in range(rounds):
    order = [("A", jar_a), ("B", jar_b)] if rnd % 2 == 0 else [("B", jar_b), ("A", jar_a)]
    for dtype in dtypes:
        for tag, jar in order:
            pre, dec = run(jar, dtype, 1000 * rnd + hash(dtype) % 100)
            results.setdefault((dtype, tag), []).append((pre, dec))
            print(f"round {rnd} {dtype:9s} {tag}: prefill 1.5k {pre:6.2f} s, decode {dec:6.2f} tok/s",
                  flush=True)
print("# end;", open("/proc/loadavg").read().strip())
for dtype in dtypes:
    a, b = results[(dtype, "A")], results[(dtype, "B")]
    pa, pb = statistics.median(x[0] for x in a), statistics.median(x[0] for x in b)
    da, db = statistics.median(x[1] for x in a), statistics.median(x[1] for x in b)
    print(f"{dtype:9s} prefill A {pa:.2f} s B {pb:.2f} s (B faster {pa / pb:.2f}x); "
          f"decode A {da:.2f} B {db:.2f} tok/s (B/A {db / da:.2f}x)")
