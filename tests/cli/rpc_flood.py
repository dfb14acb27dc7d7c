#!/usr/bin/env python3
"""Hostile clients against a gonka-localnet RPC on loopback (run by
localnet_rpc.sh): many idle connections from one address, then from many,
a request declaring a body over the limit, a chunked one growing past it,
and a client that trickles its request a byte at a time. Linux routes all
of 127.0.0.0/8 to loopback, so 127.0.0.N are distinct client addresses.

Usage: rpc_flood.py HOST:PORT IDLE_TIMEOUT_S PER_ADDRESS MAX_CONNECTIONS
Prints one ok:/FAIL: line per check; exits 1 if any failed."""
import resource
import select
import socket
import sys
import time

host, port = sys.argv[1].rsplit(":", 1)
port = int(port)
idle_s, per_addr, total = float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
failed = False


def ok(msg):
    print("ok: " + msg, flush=True)


def bad(msg):
    global failed
    failed = True
    print("FAIL: " + msg, flush=True)


def open_idle(src, n):
    socks = []
    for _ in range(n):
        s = socket.socket()
        s.settimeout(2)
        s.bind((src, 0))
        s.connect((host, port))
        socks.append(s)
    return socks


def closed_by_server(socks, wait_s):
    """The sockets the server has closed (EOF or reset) within wait_s."""
    closed, pending = set(), list(socks)
    deadline = time.monotonic() + wait_s
    while pending and time.monotonic() < deadline:
        r, _, _ = select.select(pending, [], [], max(0.0, deadline - time.monotonic()))
        for s in r:
            try:
                data = s.recv(1)
            except OSError:
                data = b""
            if data == b"":
                closed.add(s)
                pending.remove(s)
    return closed


def status(src="127.0.0.1"):
    """(seconds, first line of the answer or the error) of GET /status."""
    t0 = time.monotonic()
    s = socket.socket()
    s.settimeout(10)
    try:
        s.bind((src, 0))
        s.connect((host, port))
        s.sendall(b"GET /status HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
        line = data.split(b"\r\n", 1)[0].decode() if data else "closed without an answer"
    except OSError as e:
        line = "error: %s" % e
    finally:
        s.close()
    return time.monotonic() - t0, line


# 1. 900 idle connections from one address: all but PER_ADDRESS are closed
# at once, and another client is served at once.
flood = open_idle("127.0.0.2", 900)
refused = closed_by_server(flood, 1.0)
held = [s for s in flood if s not in refused]
if len(held) <= per_addr and len(refused) >= 900 - per_addr:
    ok("900 idle connections from one address: %d refused at once, %d held" % (len(refused), len(held)))
else:
    bad("900 idle connections from one address: %d refused, %d held (limit %d)" %
        (len(refused), len(held), per_addr))
t, line = status()
if t < 2 and line.startswith("HTTP/1.1 200"):
    ok("/status beside them: %s in %.3f s" % (line, t))
else:
    bad("/status beside them: %s in %.3f s" % (line, t))
for s in flood:
    s.close()

# 2. Many addresses together past the total: the surplus is refused at once
# (closed), a new client is answered or refused at once, never kept waiting.
crowd = []
n_addr = total // per_addr + 2
for a in range(3, 3 + n_addr):
    crowd += open_idle("127.0.0.%d" % a, per_addr)
refused = closed_by_server(crowd, 1.0)
held = [s for s in crowd if s not in refused]
if len(held) <= total + 4 and len(refused) >= len(crowd) - total - 4:
    ok("%d idle connections from %d addresses: %d held (limit %d), %d refused at once" %
       (len(crowd), n_addr, len(held), total, len(refused)))
else:
    bad("%d idle connections from %d addresses: %d held (limit %d), %d refused" %
        (len(crowd), n_addr, len(held), total, len(refused)))
t, line = status()
if t < 2:
    ok("/status at the total limit, at once: %s in %.3f s" % (line, t))
else:
    bad("/status at the total limit waited: %s in %.3f s" % (line, t))

# 3. The idle connections are closed after the idle timeout, and the node
# serves again.
t0 = time.monotonic()
closed = closed_by_server(held, idle_s + 3)
t = time.monotonic() - t0
if len(closed) == len(held):
    ok("all %d idle connections closed by the server within %.1f s more (timeout %.0f s)" %
       (len(held), t, idle_s))
else:
    bad("%d of %d idle connections still open %.1f s later (timeout %.0f s)" %
        (len(held) - len(closed), len(held), t, idle_s))
for s in crowd:
    s.close()
# A client sees its connection end when the server shuts it down; the server
# counts it closed a moment later, when its thread reaps it. Until then a new
# client may still be refused at once, so the node gets a second to serve.
t0 = time.monotonic()
tries = 0
while True:
    tries += 1
    _, line = status()
    t = time.monotonic() - t0
    if line.startswith("HTTP/1.1 200") or t >= 1.0:
        break
    time.sleep(0.05)
if line.startswith("HTTP/1.1 200"):
    ok("/status after the timeout: %s in %.3f s (%d tries)" % (line, t, tries))
else:
    bad("/status after the timeout: %s after %.3f s (%d tries)" % (line, t, tries))

# 4. A request declaring a body over 1,000,000 bytes is answered 413 from
# its headers alone.
t0 = time.monotonic()
s = socket.socket()
s.settimeout(5)
s.connect((host, port))
s.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
          b"Content-Length: 5000000\r\n\r\n")
try:
    data = s.recv(65536)
except OSError as e:
    data = ("error: %s" % e).encode()
s.close()
t = time.monotonic() - t0
line = data.split(b"\r\n", 1)[0].decode()
if line.startswith("HTTP/1.1 413") and b"request body too large" in data and t < 2:
    ok("Content-Length 5000000 with no body sent: %s in %.3f s" % (line, t))
else:
    bad("Content-Length 5000000: %r in %.3f s" % (data[:200], t))
# 5. A chunked body (no length declared) is cut off once past the limit,
# not read to its end: sending 32 MB fails long before the end.
s = socket.socket()
s.settimeout(5)
s.connect((host, port))
sent = 0
chunk = b"%x\r\n%s\r\n" % (65536, b" " * 65536)
t0 = time.monotonic()
try:
    s.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
    while sent < 32 << 20:
        s.sendall(chunk)
        sent += 65536
    cut = False
except OSError:
    cut = True
s.close()
t = time.monotonic() - t0
if cut and t < 5:
    ok("a chunked body past the limit: connection closed after %.1f MB sent, %.3f s" %
       (sent / 1e6, t))
else:
    bad("a chunked body of %.1f MB was read to its end (%.3f s)" % (sent / 1e6, t))
# 6. A client that trickles a request a byte every idle/4 seconds is never
# idle for the timeout, yet is dropped once its request has not arrived
# whole within it; a keep-alive client that asks, waits most of the
# timeout and asks again is served both times.
s = socket.socket()
s.connect((host, port))
request = b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n" + b" " * 100000
t0 = time.monotonic()
dropped = False
for i in range(len(request)):
    if time.monotonic() - t0 > idle_s * 4:
        break
    try:
        s.send(request[i:i + 1])
    except OSError:
        dropped = True
        break
    r, _, _ = select.select([s], [], [], idle_s / 4)
    if r:
        try:
            dropped = s.recv(1) == b""
        except OSError:
            dropped = True
        if dropped:
            break
t = time.monotonic() - t0
s.close()
if dropped and idle_s * 0.8 < t < idle_s + 1.5:
    ok("a request trickled a byte every %.1f s: dropped after %.1f s (timeout %.0f s)" %
       (idle_s / 4, t, idle_s))
else:
    bad("a request trickled a byte every %.1f s: %s after %.1f s (timeout %.0f s)" %
        (idle_s / 4, "dropped" if dropped else "still open", t, idle_s))
s = socket.socket()
s.settimeout(5)
s.connect((host, port))
answers = []
for i in range(2):
    if i:
        time.sleep(idle_s * 0.7)
    s.sendall(b"GET /status HTTP/1.1\r\nHost: x\r\n\r\n")
    data = b""
    while b"\r\n\r\n" not in data:
        got = s.recv(65536)
        if not got:
            break
        data += got
    head, _, body = data.partition(b"\r\n\r\n")
    length = [int(h.split(b":")[1]) for h in head.split(b"\r\n")
              if h.lower().startswith(b"content-length:")]
    while length and len(body) < length[0]:
        got = s.recv(65536)
        if not got:
            break
        body += got
    answers.append(head.split(b"\r\n", 1)[0].decode())
s.close()
if answers == ["HTTP/1.1 200 OK"] * 2:
    ok("a keep-alive client asking twice, %.1f s apart, is answered both times" % (idle_s * 0.7))
else:
    bad("a keep-alive client asking twice: %s" % answers)
sys.exit(1 if failed else 0)
