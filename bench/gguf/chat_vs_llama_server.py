#!/usr/bin/env python3
"""Chat prompt token counts of radixserve against llama-server on the same Llama 3 GGUF file, on
the same day: each conversation goes to radixserve's /v1/chat/completions (max_tokens 1; its
usage.prompt_tokens) and to llama-server's /apply-template then /tokenize (add_special: llama-server
leaves the BOS text out of the rendered prompt and adds BOS when tokenizing). Both get the same
chat_template_kwargs {"date_string": DATE} (Llama 3.1+ templates print today's date otherwise;
default: today, as both servers would print it). A check script, not a CI dependency; the
committed test is GgufCheckpointTest.llama3ChatEqualsLlamaServersOnTheSameDay.

usage: chat_vs_llama_server.py FILE.gguf [RADIXSERVE_JAR] [--date "24 Nov 2026"] [--context N]
       (LLAMA_SERVER: default /work/llamacpp/src/build/bin/llama-server)
--context N serves a temporary copy whose {arch}.context_length is N (gguf-py, from LLAMACPP_SRC,
default /work/llamacpp/src): for the tiny test fixture (64 positions, Llama 3.2's template), e.g.
  bench/gguf/chat_vs_llama_server.py model-runtime/src/test/resources/gguf/llama3-f32.gguf \
    --context 1024
exit status 1 when a count differs.
"""
import datetime
import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
LLAMA_SERVER = os.environ.get("LLAMA_SERVER", "/work/llamacpp/src/build/bin/llama-server")

CONVERSATIONS = [
    [{"role": "user", "content": "Hello!"}],
    [{"role": "system", "content": "You are a terse assistant."},
     {"role": "user", "content": "What is 2 + 2?"}],
    [{"role": "user", "content": "Name a colour."}, {"role": "assistant", "content": "Blue."},
     {"role": "user", "content": "Another one, in French: ünïcödé é à 東京 🙂"}],
    [{"role": "system", "content": "  Leading spaces and\n\nblank lines.  "},
     {"role": "user", "content": "tabs\there\nand 12345 digits"}],
]


def post(port, path, body):
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=300) as r:
            return json.loads(r.read())
    except urllib.error.HTTPError as e:
        raise RuntimeError(f"{path} on port {port}: {e.code} {e.read().decode()}") from e


def healthy(proc, port):
    for _ in range(2400):
        if proc.poll() is not None:
            raise RuntimeError(f"server on port {port} exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1) as r:
                if r.status == 200:
                    return
        except Exception:
            time.sleep(0.25)
    raise RuntimeError(f"server on port {port} did not become healthy")


def with_context(path, context):
    """A copy of the file in a temporary folder with its context_length set to `context`."""
    import tempfile
    sys.path.insert(0, os.path.join(os.environ.get("LLAMACPP_SRC", "/work/llamacpp/src"),
                                    "gguf-py"))
    import gguf
    reader = gguf.GGUFReader(path)
    arch = reader.get_field(gguf.Keys.General.ARCHITECTURE).contents()
    out = os.path.join(tempfile.mkdtemp(), os.path.basename(path))
    writer = gguf.GGUFWriter(out, arch)
    for field in reader.fields.values():
        if field.name.startswith("GGUF.") or field.name == gguf.Keys.General.ARCHITECTURE:
            continue
        if field.name == gguf.Keys.LLM.CONTEXT_LENGTH.format(arch=arch):
            writer.add_context_length(context)
            continue
        sub = field.types[-1] if field.types[0] == gguf.GGUFValueType.ARRAY else None
        writer.add_key_value(field.name, field.contents(), field.types[0], sub_type=sub)
    for t in reader.tensors:
        writer.add_tensor(t.name, t.data, raw_shape=t.data.shape, raw_dtype=t.tensor_type)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return out


def main():
    args = sys.argv[1:]
    date = datetime.date.today().strftime("%d %b %Y")
    if "--date" in args:
        i = args.index("--date")
        date = args[i + 1]
        del args[i:i + 2]
    context = None
    if "--context" in args:
        i = args.index("--context")
        context = int(args[i + 1])
        del args[i:i + 2]
    path = os.path.abspath(args[0])
    if context:
        path = with_context(path, context)
    jar = args[1] if len(args) > 1 else os.path.join(REPO, "server", "target", "radixserve.jar")
    kwargs = {"date_string": date}
    name = os.path.basename(path)
    lc = subprocess.Popen([LLAMA_SERVER, "-m", path, "--port", "18731", "-t", "2", "--jinja",
                           "-np", "1", "--no-warmup", "--no-repack"],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    rs = subprocess.Popen(["java", "--enable-native-access=ALL-UNNAMED",
                           "--add-modules", "jdk.incubator.vector", "-jar", jar, "serve",
                           "--model", path, "--port", "18732", "--threads", "2",
                           "--kv-cache-memory", "128m"],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    differ = 0
    try:
        healthy(lc, 18731)
        healthy(rs, 18732)
        print(f"{name}, date_string {date!r}")
        print("| conversation | radixserve prompt tokens | llama-server | equal |")
        print("|---|---:|---:|---|")
        for i, messages in enumerate(CONVERSATIONS):
            prompt = post(18731, "/apply-template", {"messages": messages,
                                                     "chat_template_kwargs": kwargs})["prompt"]
            ids = post(18731, "/tokenize", {"content": prompt, "add_special": True,
                                            "parse_special": True})["tokens"]
            usage = post(18732, "/v1/chat/completions", {
                "model": name, "messages": messages, "max_tokens": 1, "temperature": 0,
                "chat_template_kwargs": kwargs})["usage"]
            same = usage["prompt_tokens"] == len(ids)
            differ += not same
            print(f"| {i} ({len(messages)} messages) | {usage['prompt_tokens']} | {len(ids)} |"
                  f" {'yes' if same else '**no**'} |")
    finally:
        for p in (lc, rs):
            p.terminate()
            p.wait()
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
