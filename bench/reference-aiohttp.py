"""Reference client for the idle-cost comparison in bench/self-check.ts: one stream at a time
against an OpenAI-compatible server, read the way vLLM's `bench serve` reads a chat stream (aiohttp,
`async for` over the response's lines, `json.loads` per event, `time.perf_counter()` per chunk), with
one session kept alive across requests. Prints one JSON line: chunks, process CPU time and wall time in
two windows: the first COLD_S seconds, and STEADY_S seconds once WARM_S seconds have passed.

    /usr/bin/python3 bench/reference-aiohttp.py URL COLD_S WARM_S STEADY_S MAX_TOKENS
Needs Debian's python3-aiohttp (apt-get install python3-aiohttp).
"""

import asyncio
import json
import resource
import sys
import time

import aiohttp


async def one(session: aiohttp.ClientSession, url: str, max_tokens: int) -> int:
    payload = {
        "model": "mock-model",
        "messages": [{"role": "user", "content": "bench prompt with a few words"}],
        "max_tokens": max_tokens,
        "stream": True,
        "stream_options": {"include_usage": True},
        "ignore_eos": True,
        "temperature": 0,
    }
    chunks = 0
    itl = []
    st = time.perf_counter()
    last = st
    text = ""
    async with session.post(url, json=payload, headers={"Content-Type": "application/json"}) as response:
        if response.status != 200:
            raise RuntimeError(f"HTTP {response.status}")
        async for chunk_bytes in response.content:
            chunk_bytes = chunk_bytes.strip()
            if not chunk_bytes:
                continue
            chunk = chunk_bytes.decode("utf-8").removeprefix("data: ")
            if chunk == "[DONE]":
                continue
            timestamp = time.perf_counter()
            data = json.loads(chunk)
            if choices := data.get("choices"):
                content = choices[0]["delta"].get("content")
                if content:
                    chunks += 1
                    text += content
                    itl.append(timestamp - last)
            last = timestamp
    return chunks


def cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


async def main() -> None:
    url = sys.argv[1].rstrip("/") + "/v1/chat/completions"
    cold_s, warm_s, steady_s = float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
    max_tokens = int(sys.argv[5])
    windows = []
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=300)) as session:

        async def window(seconds: float) -> None:
            c0, t0, chunks = cpu_s(), time.perf_counter(), 0
            while time.perf_counter() - t0 < seconds:
                chunks += await one(session, url, max_tokens)
            windows.append({"chunks": chunks, "cpu_s": cpu_s() - c0, "wall_s": time.perf_counter() - t0})

        start = time.perf_counter()
        await window(cold_s)
        while time.perf_counter() - start < warm_s:
            await one(session, url, max_tokens)
        await window(steady_s)
    print(json.dumps({"client": f"python aiohttp {aiohttp.__version__}", "windows": windows}))


asyncio.run(main())
