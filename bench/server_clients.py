#!/usr/bin/env python3
"""Aggregate decode of `peak serve` with 1, 2 and 4 concurrent clients, and
what a long prompt arriving does to the streams already decoding.

usage: server_clients.py PEAK MODEL ROUNDS [--threads N] [--tokens N] [--modes cb,nocb]

Per round and mode (alternating, so a noisy machine treats them alike):
  - `peak serve --parallel 4` with continuous batching (cb) or without (nocb);
  - for 1, 2 and 4 clients: each sends one non-streamed chat completion of
    --tokens tokens at temperature 0 (distinct prompts) at the same moment;
    aggregate = completion tokens of all / wall time until the last answer;
  - cb only: 3 streamed clients decode; after a second a 4th sends a prompt
    of about 2,000 tokens; the longest gap between two tokens of the three
    streams while it is prefilled, against their median gap.
  - `peak chat -n 128`'s decode rate on the same file and threads.
Prints medians of the rounds."""
import argparse, json, statistics, subprocess, threading, time, urllib.request, re

ap = argparse.ArgumentParser()
ap.add_argument("peak")
ap.add_argument("model")
ap.add_argument("rounds", type=int)
ap.add_argument("--threads", type=int, default=2)
ap.add_argument("--tokens", type=int, default=64)
ap.add_argument("--modes", default="cb,nocb")
ap.add_argument("--port", type=int, default=18700)
ap.add_argument("--prefill-chunk", type=int, default=128)
args = ap.parse_args()

PROMPTS = ["Write a story about a cat.", "Tell me about the sea.", "What is a good breakfast?",
           "Describe a mountain in winter."]


def post(port, body, stream=False, on_token=None):
    req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/chat/completions", json.dumps(body).encode(),
                                 {"Content-Type": "application/json"})
    with urllib.request.urlopen(req) as r:
        if not stream:
            return json.load(r)
        for line in r:
            if line.startswith(b"data: ") and not line.startswith(b"data: [DONE]") and on_token:
                on_token(time.perf_counter())
    return None


def start(mode, port):
    cmd = [args.peak, "serve", "-m", args.model, "-t", str(args.threads), "--port", str(port), "--parallel", "4",
           "--prefill-chunk", str(args.prefill_chunk)]
    if mode == "nocb":
        cmd.append("--no-cont-batching")
    srv = subprocess.Popen(cmd, stderr=subprocess.DEVNULL)
    for _ in range(300):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/health")
            return srv
        except Exception:
            time.sleep(0.1)
    raise SystemExit("server did not start")


def aggregate(port, clients):
    out = [None] * clients
    def one(i):
        out[i] = post(port, {"messages": [{"role": "user", "content": PROMPTS[i]}], "max_tokens": args.tokens,
                             "temperature": 0})
    threads = [threading.Thread(target=one, args=(i,)) for i in range(clients)]
    t = time.perf_counter()
    for th in threads: th.start()
    for th in threads: th.join()
    wall = time.perf_counter() - t
    return sum(d["usage"]["completion_tokens"] for d in out) / wall


def long_prompt_delay(port):
    stamps = [[] for _ in range(3)]
    arrival = {}
    def stream(i):
        post(port, {"messages": [{"role": "user", "content": PROMPTS[i]}], "max_tokens": 400, "temperature": 0,
                    "stream": True}, True, lambda t: stamps[i].append(t))
    def long_one():
        time.sleep(1.0)
        text = " ".join(f"word{i % 97} and" for i in range(500))  # about 2,000 tokens
        arrival["start"] = time.perf_counter()
        d = post(port, {"messages": [{"role": "user", "content": text}], "max_tokens": 1, "temperature": 0})
        arrival["end"] = time.perf_counter()
        arrival["tokens"] = d["usage"]["prompt_tokens"]
    threads = [threading.Thread(target=stream, args=(i,)) for i in range(3)] + [threading.Thread(target=long_one)]
    for th in threads: th.start()
    for th in threads: th.join()
    gaps_before, gaps_during = [], []
    for s in stamps:
        for a, b in zip(s, s[1:]):
            if b < arrival["start"]:
                gaps_before.append(b - a)
            elif a < arrival["end"] and b > arrival["start"]:
                gaps_during.append(b - a)
    prefill = arrival["end"] - arrival["start"]
    chunks = -(-arrival["tokens"] // args.prefill_chunk)
    return (statistics.median(gaps_before), max(gaps_during) if gaps_during else 0.0, prefill, prefill / chunks,
            arrival["tokens"])


def chat_rate():
    out = subprocess.run([args.peak, "chat", "-m", args.model, "-t", str(args.threads), "-n", "128"],
                         input="Write a story about a cat.\n", capture_output=True, text=True)
    m = re.search(r"answer (\d+) tokens, ([0-9.]+) tokens/s", out.stdout + out.stderr)
    return float(m.group(2)) if m else 0.0


modes = args.modes.split(",")
res = {m: {c: [] for c in (1, 2, 4)} for m in modes}
delays, chats = [], []
port = args.port
for rnd in range(args.rounds):
    for mode in modes:
        port += 1
        srv = start(mode, port)
        try:
            aggregate(port, 1)  # warm up
            for c in (1, 2, 4):
                res[mode][c].append(aggregate(port, c))
            line = f"round {rnd} {mode}: " + ", ".join(f"{c} clients {res[mode][c][-1]:.1f} t/s" for c in (1, 2, 4))
            if mode == "cb":
                delays.append(long_prompt_delay(port))
                line += (f"; long prompt of {delays[-1][4]} tokens: median gap {delays[-1][0] * 1000:.0f} ms, longest "
                         f"during its prefill {delays[-1][1] * 1000:.0f} ms, its prefill {delays[-1][2]:.2f} s, "
                         f"{delays[-1][3] * 1000:.0f} ms a chunk")
        finally:
            srv.terminate()
            srv.wait()
        print(line, flush=True)
    chats.append(chat_rate())
    print(f"round {rnd}: peak chat {chats[-1]:.1f} t/s", flush=True)

med = statistics.median
print(f"peak chat decode: {med(chats):.1f} t/s")
for mode in modes:
    one = med(res[mode][1])
    print(f"{mode}: " + ", ".join(f"{c} clients {med(res[mode][c]):.1f} t/s ({med(res[mode][c]) / one:.2f}x)"
                                  for c in (1, 2, 4)) + f"; one stream / peak chat {one / med(chats):.2f}")
if delays:
    print(f"long prompt while 3 stream: median gap {med([d[0] for d in delays]) * 1000:.0f} ms, longest gap during "
          f"its prefill {med([d[1] for d in delays]) * 1000:.0f} ms, prefill {med([d[2] for d in delays]):.2f} s, "
          f"{med([d[3] for d in delays]) * 1000:.0f} ms a chunk")
