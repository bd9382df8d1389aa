"""What the gateways' own code reads from a radixserve replica, read with their libraries.

    metrics URL
        Scrapes URL (a /metrics endpoint) and parses it with prometheus_client's text parser,
        the parser vLLM production-stack's router uses (EngineStats.from_vllm_scrape). Prints
        {"families": {name: {"type": t, "samples": [[sample_name, labels, value], ...]}}}.

    events ENDPOINT REPLAY_ENDPOINT TOPIC_PREFIX array|map
        Subscribes to a KV event publisher over ZeroMQ (pyzmq) and decodes every batch with
        msgspec into vLLM's own structs (declared below as vLLM declares them), asking the
        replay socket for what it joined too late for or missed, as vLLM's example subscriber
        does. Prints "ready" once subscribed. Reads one line from stdin: the last sequence
        number the publisher sent; once everything up to it is applied, prints the index the
        events built: {"blocks": [...], "types": {...}, "batches": n}. Block hashes are printed
        as signed 64-bit integers (radixserve's Java longs). Any payload the typed decoder
        rejects, a gap the replay cannot fill, or a removal of an unknown block fails the run.

Test-only (GatewayContractTest); never part of the server.
"""

import json
import select
import sys
import urllib.request
from typing import Any

import msgspec
import zmq
from prometheus_client.parser import text_string_to_metric_families


# --- vllm/distributed/kv_events.py --------------------------------------------------------
# The batch envelope is always array_like. Events are tagged structs: array_like=True in
# vLLM's classic layout (examples/online_serving/kv_events_subscriber.py and every router),
# array_like=False (a map with the tag under "type") in vLLM v0.28.0's declaration. Fields as
# vLLM declares them; ExternalBlockHash is bytes | int.

ExternalBlockHash = bytes | int


def vllm_structs(array_like):
    class EventBatch(msgspec.Struct, array_like=True, omit_defaults=True, gc=False):
        ts: float
        events: list[Any]
        data_parallel_rank: int | None = None

    class KVCacheEvent(msgspec.Struct, array_like=array_like, omit_defaults=True, gc=False,
                       tag=True):
        """Base class for all KV cache-related events"""

    class BlockStored(KVCacheEvent):
        block_hashes: list[ExternalBlockHash]
        parent_block_hash: ExternalBlockHash | None
        token_ids: list[int]
        block_size: int
        lora_id: int | None
        medium: str | None
        lora_name: str | None
        extra_keys: list[tuple[Any, ...] | None] | None = None
        group_idx: int | None = None
        kv_cache_spec_kind: str | None = None
        kv_cache_spec_sliding_window: int | None = None
        locality: str | None = None

    class BlockRemoved(KVCacheEvent):
        block_hashes: list[ExternalBlockHash]
        medium: str | None
        group_idx: int | None = None
        locality: str | None = None

    class AllBlocksCleared(KVCacheEvent):
        pass

    class KVEventBatch(EventBatch):
        events: list[BlockStored | BlockRemoved | AllBlocksCleared]

    return KVEventBatch, BlockStored, BlockRemoved, AllBlocksCleared


def signed(h):
    if not isinstance(h, int):
        raise SystemExit(f"block hash {h!r} is not an integer")
    return h - (1 << 64) if h >= (1 << 63) else h


def metrics(url):
    text = urllib.request.urlopen(url, timeout=30).read().decode("utf-8")
    out = {}
    for family in text_string_to_metric_families(text):
        out[family.name] = {"type": family.type,
                            "samples": [[s.name, s.labels, s.value] for s in family.samples]}
    print(json.dumps({"families": out}))


def events(endpoint, replay_endpoint, topic, encoding):
    batch_type, stored, removed, cleared = vllm_structs(encoding == "array")
    decoder = msgspec.msgpack.Decoder(type=batch_type)
    ctx = zmq.Context()
    sub = ctx.socket(zmq.SUB)
    sub.connect(endpoint)
    sub.setsockopt_string(zmq.SUBSCRIBE, topic)
    replay = ctx.socket(zmq.DEALER)
    replay.connect(replay_endpoint)
    print("ready", flush=True)

    blocks = {}  # medium -> set of hashes
    types = {}
    state = {"last": -1, "batches": 0}

    def apply(seq, payload):
        if seq <= state["last"]:
            return  # already applied (a replay overlapping the live stream)
        if seq != state["last"] + 1:
            raise SystemExit(f"gap: batch {seq} after {state['last']}")
        batch = decoder.decode(payload)  # raises on anything vLLM's types reject
        for e in batch.events:
            name = type(e).__name__
            types[name] = types.get(name, 0) + 1
            if isinstance(e, stored):
                held = blocks.setdefault(e.medium, set())
                held.update(signed(h) for h in e.block_hashes)
            elif isinstance(e, removed):
                held = blocks.setdefault(e.medium, set())
                for h in e.block_hashes:
                    if signed(h) not in held:
                        raise SystemExit(f"BlockRemoved of a block never stored: {h}")
                    held.discard(signed(h))
            elif isinstance(e, cleared):
                blocks.clear()
        state["last"] = seq
        state["batches"] += 1

    def fill_from(start):
        replay.send_multipart([b"", start.to_bytes(8, "big")])
        while True:
            if not replay.poll(10_000):
                raise SystemExit(f"no replay answer for {start}")
            _, seq_bytes, payload = replay.recv_multipart()
            seq = int.from_bytes(seq_bytes, "big", signed=True)
            if seq < 0:
                return
            apply(seq, payload)

    target = None
    poller = zmq.Poller()
    poller.register(sub, zmq.POLLIN)
    while target is None or state["last"] < target:
        for sock, _ in poller.poll(100):
            _, seq_bytes, payload = sock.recv_multipart()
            seq = int.from_bytes(seq_bytes, "big")
            if seq > state["last"] + 1:
                fill_from(state["last"] + 1)
            apply(seq, payload)
        if target is None and select.select([sys.stdin], [], [], 0)[0]:
            target = int(sys.stdin.readline())
            if state["last"] < target:
                fill_from(state["last"] + 1)  # the tail the live stream may not carry yet
    print(json.dumps({"blocks": sorted(blocks.get("GPU", set())), "types": types,
                      "batches": state["batches"],
                      "media": sorted(m for m, held in blocks.items() if held)}), flush=True)
    sub.close(linger=0)
    replay.close(linger=0)
    ctx.term()


if __name__ == "__main__":
    if sys.argv[1] == "metrics":
        metrics(sys.argv[2])
    elif sys.argv[1] == "events":
        events(*sys.argv[2:6])
    else:
        raise SystemExit(f"unknown command {sys.argv[1]}")
