"""Cache on == off on a real shape: the same request sequence against two servers (prefix
caching on with 48-token prefill chunks, and off), greedy tokens and every echoed and generated
logprob compared bit for bit. Exits 1 on any difference.

    JAVA=... python3 bench/quant-accuracy/cache_on_off.py JAR MODEL_DIR [serve flags...]
    e.g. ... server/target/radixserve.jar /work/bench-1b --quantization int8

Eight completions, four of them sharing a 240-token prefix, each sent twice. A weaker check
than QuantizedRunnerTest's chunked-prefill comparison: on the 1B shape it also passed for int4
in 64-weight blocks with zero points, which that test shows to be unstable on its small model
(docs/benchmarks/journal/2026-11-28d-int8-blocks.md)."""
import json, subprocess, sys, time, urllib.request, socket, os
jar, model = sys.argv[1], sys.argv[2]
extra = sys.argv[3:]
def port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p
base = "You are a careful assistant. " * 20
prompts = [base + "Question one: what is a radix tree?", base + "Question two: what is a block table?",
           base + "Question one: what is a radix tree? And a trie?", "Short prompt with no shared prefix."]
def run(flags):
    p = port()
    java = os.environ.get("JAVA", "java")
    srv = subprocess.Popen([java, "--enable-native-access=ALL-UNNAMED", "--add-modules", "jdk.incubator.vector",
        "-Xmx2g", "-jar", jar, "serve", "--model", model, "--port", str(p), "--host", "127.0.0.1", "--threads", "2",
        "--kv-cache-memory", "256m"] + extra + flags, stdout=subprocess.DEVNULL, stderr=open("/tmp/cache_eq.log", "a"))
    try:
        for _ in range(600):
            try: urllib.request.urlopen(f"http://127.0.0.1:{p}/health").read(); break
            except OSError: time.sleep(0.5)
        out = []
        for pr in prompts + prompts:
            req = urllib.request.Request(f"http://127.0.0.1:{p}/v1/completions", data=json.dumps({
                "model": os.path.basename(model), "prompt": pr, "max_tokens": 12, "temperature": 0,
                "logprobs": 1, "echo": True}).encode(), headers={"Content-Type": "application/json"})
            r = json.load(urllib.request.urlopen(req))["choices"][0]
            out.append((r["text"], r["logprobs"]["token_logprobs"]))
        return out
    finally:
        srv.terminate(); srv.wait()
on = run(["--prefix-caching", "true", "--prefill-chunk-size", "48"])
off = run(["--prefix-caching", "false"])
same = sum(a == b for a, b in zip(on, off))
print(f"{same}/{len(on)} requests bit-identical (text and every echoed and generated logprob)")
for i, (a, b) in enumerate(zip(on, off)):
    if a != b:
        d = [j for j, (x, y) in enumerate(zip(a[1], b[1])) if x != y]
        print(f"request {i}: first differing position {d[:3]}, {a[1][d[0]] if d else ''} vs {b[1][d[0]] if d else ''}")
sys.exit(0 if same == len(on) else 1)
