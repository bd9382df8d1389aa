"""What llama.cpp itself computes on the GGUF fixtures, from its llama-server (built by
bench/llamacpp/build.sh from the source node-llama-cpp 3.22.1 ships; LLAMA_SERVER overrides the
path). For each FILE.gguf named on the command line (default: every NAME-TYPE.gguf fixture) it
starts `llama-server -m FILE --jinja` on one thread and writes FILE.llama-server.json:

  texts   /tokenize of each of make_fixtures' texts, with add_special (BOS as the file says) and
          parse_special (the ids radixserve's /tokenize returns)
  runs    /completion of each prompt: 10 greedy tokens (top_k 1), with the top-5 probabilities
  chats   /apply-template of each conversation (the file's template through llama.cpp's Jinja),
          then /tokenize without add_special: the chat prompt's ids

Run from this directory: python llama_server_reference.py [FILE.gguf ...]
(LLAMA_CTX=N: llama-server's -c, 64 unless given)

  python llama_server_reference.py --dated-chats "24 Nov 2026" llama3-f32.gguf

writes FILE.dated-chats.llama-server.json instead: only the chats, rendered with
chat_template_kwargs {"date_string": DATE} (Llama 3.1+ templates print that date in place of
today's) and tokenized with add_special (llama-server's /apply-template leaves the BOS text out and
adds BOS when tokenizing): what radixserve's template gives on a clock set to that day.
"""
import glob
import json
import os
import subprocess
import sys
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
SERVER = os.environ.get("LLAMA_SERVER", "/work/llamacpp/src/build/bin/llama-server")
sys.path.insert(0, os.path.join(HERE, "..", "transformers-checkpoints"))
import make_fixtures as hf  # noqa: E402  the texts, prompts and conversations

PORT = 18431
# llama-server's context (-c); LLAMA_CTX overrides it. It decides which of a Phi-3 file's longrope
# factor lists llama.cpp applies (the long one when it exceeds the file's original context)
CONTEXT = os.environ.get("LLAMA_CTX", "64")


def wait_healthy(proc):
    for _ in range(1200):
        if proc.poll() is not None:
            raise RuntimeError(f"llama-server exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{PORT}/health", timeout=1) as r:
                if r.status == 200:
                    return
        except Exception:
            time.sleep(0.1)
    raise RuntimeError("llama-server did not become healthy")


def call(path, body):
    req = urllib.request.Request(f"http://127.0.0.1:{PORT}{path}", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=120) as r:
        return json.loads(r.read())


def start(path):
    global PORT
    PORT += 1  # a fresh port per server: the last one's may linger
    return subprocess.Popen([SERVER, "-m", path, "--port", str(PORT), "-t", "1", "-c", CONTEXT,
                             "--jinja", "-np", "1", "--no-warmup",
                             # the CPU advertises AMX, whose repacked Q8_0/Q4_0 kernels die with
                             # SIGILL in this VM: the plain kernels
                             "--no-repack"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def dated_chats(path, date):
    proc = start(path)
    try:
        wait_healthy(proc)
        chats = []
        for messages in hf.CONVERSATIONS:
            rendered = call("/apply-template", {"messages": messages,
                                                "chat_template_kwargs": {"date_string": date}})
            ids = call("/tokenize", {"content": rendered["prompt"], "add_special": True,
                                     "parse_special": True})["tokens"]
            chats.append({"messages": messages, "prompt": rendered["prompt"], "ids": ids})
        with open(path[:-len(".gguf")] + ".dated-chats.llama-server.json", "w") as f:
            json.dump({"llama_server": SERVER, "date_string": date, "chats": chats}, f, indent=1)
    finally:
        proc.terminate()
        proc.wait()


def reference(path):
    proc = start(path)
    try:
        wait_healthy(proc)
        texts = [{"text": t, "ids": call("/tokenize", {"content": t, "add_special": True,
                                                       "parse_special": True})["tokens"]}
                 for t in hf.TEXTS]
        runs = []
        for prompt in hf.PROMPTS:
            r = call("/completion", {"prompt": prompt, "n_predict": 10, "top_k": 1,
                                     "temperature": 0, "n_probs": 5, "cache_prompt": False,
                                     "return_tokens": True, "ignore_eos": True,
                                     "samplers": ["top_k"]})
            runs.append({"prompt": prompt, "tokens": r["tokens"],
                         "probs": [[{"id": p["id"], "logprob": p["logprob"]}
                                    for p in step["top_logprobs"]]
                                   for step in r.get("completion_probabilities", [])]})
        chats = []
        has_template = "gpt2" not in os.path.basename(path)  # GPT-2 files carry none
        for messages in (hf.CONVERSATIONS if has_template else []):
            try:
                rendered = call("/apply-template", {"messages": messages})["prompt"]
            except Exception as e:  # a template that refuses the conversation
                chats.append({"messages": messages, "error": str(e)})
                continue
            ids = call("/tokenize", {"content": rendered, "add_special": False,
                                     "parse_special": True})["tokens"]
            chats.append({"messages": messages, "prompt": rendered, "ids": ids})
        with open(path[:-len(".gguf")] + ".llama-server.json", "w") as f:
            json.dump({"llama_server": SERVER, "texts": texts, "runs": runs, "chats": chats}, f,
                      indent=1)
    finally:
        proc.terminate()
        proc.wait()


if __name__ == "__main__":
    if sys.argv[1:2] == ["--dated-chats"]:
        for f in sys.argv[3:]:
            dated_chats(f, sys.argv[2])
            print("wrote", f)
        sys.exit(0)
    files = sys.argv[1:] or sorted(f for t in ("f32", "f16", "q8_0", "q4_0", "q4_k_m", "q6_k",
                                             "iq4_nl", "iq4_xs")
                                   for f in glob.glob(os.path.join(HERE, f"*-{t}.gguf")))
    for f in files:
        reference(f)
        print("wrote", f)
