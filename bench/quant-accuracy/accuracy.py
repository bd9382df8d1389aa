#!/usr/bin/env python3
"""Accuracy of radixserve's quantization modes against its fp32 mode, measured through the
server's own API on a model directory (made by train_tiny_gpt2.py, or any checkpoint with a
held-out text and a tokenizer.json beside it).

The held-out text is tokenized once (Hugging Face `tokenizers`, the directory's tokenizer.json)
and cut into WINDOWS consecutive windows of CTX tokens, CTX being the length the model was
trained on (train.json's "seq"; positions past it were never trained). This is how llama.cpp's
`llama-perplexity -c CTX --kl-divergence` cuts a text, and the positions scored are its: the
second half of each window (tokens CTX/2+1 .. CTX-1), so its Q4_0/Q8_0 figures
(llamacpp_kld.sh) and these describe the same positions of the same text.

Per mode, one server at a time (`java -jar JAR serve --model DIR --quantization ...`):
- teacher-forced (each window as a token-id prompt to /v1/completions with echo, max_tokens 0,
  logprobs 5), over the scored positions: perplexity; mean ln(PPL(mode)/PPL(fp32)); mean
  |delta logprob| of the text's own next token against fp32's; RMS delta p of that token (in
  probability, as llama-perplexity prints it); top-1 agreement (the most likely next token is
  fp32's: llama-perplexity's "Same top p") and top-5 overlap (|top-5 ∩ fp32's top-5| / 5);
- free-running greedy: the first CTX/2 tokens of each window, GEN tokens at temperature 0; the
  share of tokens generated before the first that differs from fp32's, averaged.

usage: [SKIP=N] [WINDOWS=N] [CTX=N] JAVA=.../bin/java accuracy.py JAR MODEL_DIR OUT.json MODE...
  MODE: none | int8 | int4 | a mode then extra flags after colons, e.g.
        int4:--quantization-lm-head:true   int8:--quantization-block-size:128
        (a -Dname=value part goes to the JVM: int4:-Dradixserve.ortProfile=/tmp/p)
  (the first MODE is the reference; give none first)
  MODE@DIR: that mode served from another directory holding the same model in another form
        (a GPTQ checkpoint of it: none@/tmp/gptq-g128), scored on MODEL_DIR's windows
  SKIP: windows to pass over first (a second, disjoint set)
"""
import json
import math
import os
import socket
import subprocess
import sys
import time
import urllib.request

WINDOWS = int(os.environ.get("WINDOWS", "300"))
SKIP = int(os.environ.get("SKIP", "0"))
GEN = 32


def post(url, body):
    req = urllib.request.Request(url + "/v1/completions", json.dumps(body).encode(),
                                 {"content-type": "application/json"})
    with urllib.request.urlopen(req, timeout=600) as r:
        return json.load(r)


def trained_length(model_dir):
    if "CTX" in os.environ:
        return int(os.environ["CTX"])
    try:
        return int(json.load(open(os.path.join(model_dir, "train.json")))["seq"])
    except (OSError, KeyError):
        raise SystemExit("no train.json with the trained length beside the model: set CTX")


def windows(model_dir, ctx):
    from tokenizers import Tokenizer
    text = open(os.path.join(model_dir, "heldout.txt"), encoding="utf-8").read()
    ids = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json")).encode(
        text, add_special_tokens=False).ids
    out = [ids[i * ctx:(i + 1) * ctx] for i in range(SKIP, SKIP + WINDOWS)]
    if len(out[-1]) < ctx:
        raise SystemExit(f"the held-out text has fewer than {SKIP + WINDOWS} windows of {ctx}")
    return out


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def measure(jar, model_dir, spec, texts):
    flags, _, other_dir = spec.partition("@")
    model_dir = other_dir or model_dir
    mode, *extra = flags.split(":")
    # -Dname=value parts are JVM system properties (a diagnostic switch), the rest serve flags
    props = [e for e in extra if e.startswith("-D")]
    extra = [e for e in extra if not e.startswith("-D")]
    port = free_port()
    java = os.environ.get("JAVA", "java")
    cmd = [java, "--enable-native-access=ALL-UNNAMED", "--add-modules", "jdk.incubator.vector",
           "-Xmx2g"] + props + ["-jar", jar, "serve", "--model", model_dir, "--host", "127.0.0.1",
           "--port", str(port), "--quantization", mode] + extra
    log = open(f"/tmp/accuracy-{spec.replace(':', '_').replace('/', '_')}.log", "w")
    server = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            try:
                urllib.request.urlopen(url + "/health", timeout=2).read()
                break
            except OSError:
                if server.poll() is not None:
                    raise RuntimeError(f"server for {spec} exited; see {log.name}")
                time.sleep(0.5)
        model = json.load(urllib.request.urlopen(url + "/v1/models"))["data"][0]["id"]
        forced, greedy = [], []
        for w in texts:
            lp = post(url, {"model": model, "prompt": w, "max_tokens": 0, "echo": True,
                            "logprobs": 5})["choices"][0]["logprobs"]
            forced.append({"tokens": lp["tokens"], "lp": lp["token_logprobs"],
                           "top": lp["top_logprobs"]})
            g = post(url, {"model": model, "prompt": w[:len(w) // 2], "max_tokens": GEN,
                           "temperature": 0, "ignore_eos": True, "logprobs": 1})
            greedy.append(g["choices"][0]["logprobs"]["tokens"])
        return {"forced": forced, "greedy": greedy}
    finally:
        server.terminate()
        server.wait()


def compare(ref, got):
    nll = n = 0
    dlp = dnll = dp2 = top1 = top5 = 0.0
    for r, g in zip(ref["forced"], got["forced"]):
        if r["tokens"] != g["tokens"]:
            raise RuntimeError("the modes echoed a window differently")
        # llama-perplexity's positions: logits at j (first = ctx/2 .. ctx-2) predict token j+1
        for i in range(len(r["tokens"]) // 2 + 1, len(r["tokens"])):
            nll -= g["lp"][i]
            dnll += r["lp"][i] - g["lp"][i]
            dlp += abs(g["lp"][i] - r["lp"][i])
            dp2 += (math.exp(g["lp"][i]) - math.exp(r["lp"][i])) ** 2
            rt, gt = r["top"][i], g["top"][i]
            top1 += max(rt, key=rt.get) == max(gt, key=gt.get)
            top5 += len(set(rt) & set(gt)) / 5
            n += 1
    agree = []
    for r, g in zip(ref["greedy"], got["greedy"]):
        k = next((i for i, (a, b) in enumerate(zip(r, g)) if a != b), min(len(r), len(g)))
        agree.append(k / len(r))
    return {"positions": n, "perplexity": round(math.exp(nll / n), 4),
            "mean_ln_ppl_ratio": round(dnll / n, 6), "rms_dp": round(math.sqrt(dp2 / n), 5),
            "mean_abs_dlogprob": round(dlp / n, 5), "top1_agreement": round(top1 / n, 4),
            "top5_overlap": round(top5 / n, 4),
            "greedy_agreement": round(sum(agree) / len(agree), 4)}


def main():
    jar, model_dir, out = sys.argv[1:4]
    specs = sys.argv[4:]
    ctx = trained_length(model_dir)
    texts = windows(model_dir, ctx)
    runs = {s: measure(jar, model_dir, s, texts) for s in specs}
    ref = runs[specs[0]]
    table = {s: compare(ref, runs[s]) for s in specs}
    json.dump({"model": model_dir, "ctx": ctx, "skip": SKIP, "windows": len(texts),
               "results": table}, open(out, "w"), indent=1)
    print("| mode | perplexity | mean ln(PPL/PPL fp32) | mean abs Δ logprob | RMS Δp |"
          " top-1 agreement | top-5 overlap | greedy agreement |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for s, m in table.items():
        print(f"| {s} | {m['perplexity']:.4f} | {m['mean_ln_ppl_ratio']:.5f} |"
              f" {m['mean_abs_dlogprob']:.4f} | {100 * m['rms_dp']:.3f}% |"
              f" {100 * m['top1_agreement']:.1f}% | {100 * m['top5_overlap']:.1f}% |"
              f" {100 * m['greedy_agreement']:.1f}% |")


if __name__ == "__main__":
    main()
