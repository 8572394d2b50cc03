#!/usr/bin/env python3
"""The edge attacks of the issue, bounded and on loopback only, against a running gateway (src/bench/edge/README.md).

Each attack runs for a fixed count or time and stops by itself; every socket is closed at the end. Usage:
  attacks.py PORT PID ATTACK [args]   ATTACK: flood N TOKEN|- | botflood SECONDS | hammer SECONDS | ids SECONDS |
                                      idle N | heavyload TOKEN | heavyreads SECONDS TOKEN
PID is the gateway's process id (for RSS and liveness).
"""
import asyncio
import os
import random
import string
import sys
import time

HOST = "127.0.0.1"
BROWSER = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36"


def rss_mb(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) // 1024
    except OSError:
        return 0
    return 0


def alive(pid):
    return os.path.exists(f"/proc/{pid}")


async def request(port, raw, timeout=5.0, source=None):
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection(
            HOST, port, local_addr=(source, 0) if source else None), timeout)
        writer.write(raw)
        await writer.drain()
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout)
        writer.close()
        return head.split(b" ", 2)[1].decode()
    except Exception as e:  # noqa: BLE001 - any failure is an answer here
        return type(e).__name__


async def ready_probe(port, source=None):
    """source: another loopback address (127.0.0.2), a prober that is not the attacking client."""
    started = time.monotonic()
    status = await request(port, b"GET /health/ready HTTP/1.1\r\nHost: g\r\n\r\n", 3.0, source)
    return status, time.monotonic() - started


async def flood(port, pid, n, token, seconds=8.0):
    """n connections each announce 1 MiB and send all of it but one byte."""
    body = 1_048_576
    auth = f"Authorization: Bearer {token}\r\n" if token != "-" else ""
    head = (f"POST /v1/counters/likes/flood/increments HTTP/1.1\r\nHost: g\r\n{auth}"
            f"Content-Type: application/json\r\nContent-Length: {body}\r\n\r\n").encode()
    writers = []
    cut = 0

    async def one():
        nonlocal cut
        try:
            reader, writer = await asyncio.open_connection(HOST, port)
            writers.append(writer)
            writer.write(head)
            chunk = b"x" * 65536
            left = body - 1
            while left > 0:
                writer.write(chunk[:min(left, len(chunk))])
                left -= min(left, len(chunk))
                await writer.drain()
        except Exception:  # noqa: BLE001
            cut += 1

    rss0 = rss_mb(pid)
    tasks = [asyncio.create_task(one()) for _ in range(n)]
    rss_max, probes, ready, slowest = rss0, 0, 0, 0.0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        rss_max = max(rss_max, rss_mb(pid))
        status, took = await ready_probe(port)
        probes += 1
        ready += status == "200"
        slowest = max(slowest, took)
        await asyncio.sleep(0.25)
    for t in tasks:
        t.cancel()
    for w in writers:
        w.close()
    print(f"flood n={n} token={'yes' if token != '-' else 'no'}: alive={alive(pid)} RSS {rss0} -> max {rss_max} MB, "
          f"ready {ready}/{probes} (slowest {slowest*1000:.0f} ms), connections cut {cut}")


async def beacons(port, seconds, make, concurrency=64):
    """Sends beacons made by make(i) on `concurrency` keep-alive connections for `seconds`; returns (sent, statuses)."""
    end = time.monotonic() + seconds
    sent = 0
    statuses = {}

    async def worker(w):
        nonlocal sent
        reader, writer = await asyncio.open_connection(HOST, port)
        i = 0
        try:
            while time.monotonic() < end:
                writer.write(make(w * 1_000_000 + i))
                await writer.drain()
                head = await reader.readuntil(b"\r\n\r\n")
                status = head.split(b" ", 2)[1].decode()
                statuses[status] = statuses.get(status, 0) + 1
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":")[1])
                if length:
                    await reader.readexactly(length)
                sent += 1
                i += 1
        except Exception:  # noqa: BLE001
            statuses["error"] = statuses.get("error", 0) + 1
        finally:
            writer.close()

    await asyncio.gather(*(worker(w) for w in range(concurrency)))
    return sent, statuses


def rnd(n):
    return "".join(random.choices(string.ascii_lowercase, k=n))


def beacon(path, ua=BROWSER, forwarded=None):
    xff = f"X-Forwarded-For: {forwarded}\r\n" if forwarded else ""
    return f"GET {path} HTTP/1.1\r\nHost: g\r\nUser-Agent: {ua}\r\n{xff}\r\n".encode()


def fds(pid):
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return 0


async def idle(port, pid, n):
    """n connections from one client that send nothing; then how many the gateway holds, and whether it serves."""
    fds0 = fds(pid)
    conns = []
    refused = 0
    for _ in range(n):
        try:
            conns.append(await asyncio.wait_for(asyncio.open_connection(HOST, port), 2))
        except Exception:  # noqa: BLE001
            refused += 1
    await asyncio.sleep(3)
    held = fds(pid) - fds0
    status, took = await ready_probe(port, "127.0.0.2")
    await asyncio.sleep(20)
    held_later = fds(pid) - fds0
    for _, w in conns:
        w.close()
    print(f"idle n={n}: gateway holds {held} more descriptors after 3 s, {held_later} after 23 s; "
          f"readiness meanwhile {status} in {took*1000:.0f} ms; connects refused {refused}")


async def heavyload(port, token):
    """281,000 ids in the windowed namespace 'hits', 10,000 per batch."""
    auth = f"Authorization: Bearer {token}\r\n" if token != "-" else ""
    for batch in range(29):
        items = ",".join(f'{{"type":"hits","id":"page-{batch}-{i}","delta":{1 + i % 7}}}' for i in range(min(10_000, 281_000 - batch * 10_000)))
        body = f"[{items}]".encode()
        status = await request(port, (f"POST /v1/increments HTTP/1.1\r\nHost: g\r\n{auth}Content-Type: application/json\r\n"
                                      f"Content-Length: {len(body)}\r\n\r\n").encode() + body, 60)
        if status != "200":
            print("heavyload batch", batch, status)


async def heavyreads(port, pid, seconds, token):
    """16 loops of ?top=10 over the namespace, readiness and single reads probed throughout."""
    auth = f"Authorization: Bearer {token}\r\n" if token != "-" else ""
    end = time.monotonic() + seconds
    statuses = {}

    async def loop():
        while time.monotonic() < end:
            st = await request(port, f"GET /v1/counters/hits?top=10 HTTP/1.1\r\nHost: g\r\n{auth}\r\n".encode(), 15)
            statuses[st] = statuses.get(st, 0) + 1

    loops = [asyncio.create_task(loop()) for _ in range(16)]
    probes = ready = singles = singles_ok = 0
    slowest = 0.0
    while time.monotonic() < end:
        st, took = await ready_probe(port)
        probes += 1
        ready += st == "200"
        slowest = max(slowest, took)
        single = await request(port, f"GET /v1/counters/likes/x HTTP/1.1\r\nHost: g\r\n{auth}\r\n".encode(), 5)
        singles += 1
        singles_ok += single == "200"
        await asyncio.sleep(0.5)
    await asyncio.gather(*loops)
    print(f"heavyreads {seconds}s: top-N answers {statuses}; readiness {ready}/{probes} (slowest {slowest*1000:.0f} ms); "
          f"single reads {singles_ok}/{singles} answered 200")


async def main():
    port, pid, attack = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    if attack == "flood":
        await flood(port, pid, int(sys.argv[4]), sys.argv[5])
    elif attack == "botflood":
        seconds = float(sys.argv[4])
        bots = asyncio.create_task(beacons(port, seconds, lambda i: beacon(
            "/v1/beacon/pageviews/bot-target", "Googlebot/2.1 " + rnd(2000), f"198.18.{i % 250}.{i // 250 % 250}"), 300))
        people = asyncio.create_task(beacons(port, seconds, lambda i: beacon(
            "/v1/beacon/pageviews/browser-page", BROWSER, f"203.0.{i % 250}.{i // 250 % 250}"), 8))
        (bsent, bst), (psent, pst) = await bots, await people
        print(f"botflood {seconds}s: crawler beacons sent {bsent} {bst}; browser beacons sent {psent} "
              f"({psent / seconds:.0f}/s) {pst}; RSS {rss_mb(pid)} MB")
    elif attack == "hammer":
        seconds = float(sys.argv[4])
        sent, st = await beacons(port, seconds, lambda i: beacon("/v1/beacon/pageviews/hammered"))
        print(f"hammer {seconds}s: one client sent {sent} beacons to one page ({sent / seconds:.0f}/s) {st}")
    elif attack == "ids":
        seconds = float(sys.argv[4])
        sent, st = await beacons(port, seconds, lambda i: beacon("/v1/beacon/pageviews/inv-" + rnd(200)))
        print(f"ids {seconds}s: one client sent {sent} beacons with random 200-character ids {st}")
    elif attack == "idle":
        await idle(port, pid, int(sys.argv[4]))
    elif attack == "heavyload":
        await heavyload(port, sys.argv[4])
    elif attack == "heavyreads":
        await heavyreads(port, pid, float(sys.argv[4]), sys.argv[5])
    else:
        raise SystemExit(__doc__)


asyncio.run(main())
