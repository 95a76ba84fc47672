#!/usr/bin/env python3
"""Two loopback servers for the origin rule's wire tests: the origin (127.0.0.1) and another host
(127.0.0.2) it points at, which records everything it receives.

Usage: origin_pair_server.py <mode> <stats-file>

Modes (what the origin does with a request):
  104       answers a `104` whose Location is on the other host, reads 64 KiB of the body and
            resets the connection (an upload interrupted mid-body, resumable only there).
  201       answers OPTIONS with `Upload-Limit` (it resumes uploads) and a creation
            (`Upload-Complete: ?0`) with `201` and a Location on the other host; any other
            request is read whole and answered 200 `origin`.
  redirect  answers `307` with a Location on the other host.
The other host answers HEAD with `204 Upload-Offset: 0` and anything else, read whole, with 200
`other` (what a thief would say to make the send look done).

Prints `PORT <origin> <other>` and serves until its standard input closes (or SIGTERM); then it
writes {"origin": [request...], "other": [request...]} as JSON to <stats-file>, each request
{"line", "headers", "bodyBytes"}.
"""
import json
import os
import signal
import socket
import struct
import sys
import threading

mode, stats_file = sys.argv[1], sys.argv[2]
lock = threading.RLock()
log = {"origin": [], "other": []}
finished = []


def read_head(conn, buffered):
    while b"\r\n\r\n" not in buffered:
        chunk = conn.recv(65536)
        if not chunk:
            return None, None, buffered
        buffered += chunk
    head, rest = buffered.split(b"\r\n\r\n", 1)
    lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return lines[0], headers, rest


def read_body(conn, headers, rest, limit=None):
    """Reads the body (Content-Length or chunked, up to `limit` bytes); returns (count, leftover)."""
    if "content-length" in headers:
        want = int(headers["content-length"])
        if limit is not None:
            want = min(want, limit)
        while len(rest) < want:
            chunk = conn.recv(65536)
            if not chunk:
                break
            rest += chunk
        return min(len(rest), want), rest[want:]
    if headers.get("transfer-encoding", "").lower() == "chunked":
        count = 0
        while True:
            while b"\r\n" not in rest:
                chunk = conn.recv(65536)
                if not chunk:
                    return count, b""
                rest += chunk
            size_line, rest = rest.split(b"\r\n", 1)
            size = int(size_line.split(b";")[0], 16)
            while len(rest) < size + 2:
                chunk = conn.recv(65536)
                if not chunk:
                    return count, b""
                rest += chunk
            count += size
            rest = rest[size + 2 :]
            if size == 0:
                return count, rest
            if limit is not None and count >= limit:
                return count, b""
    return 0, rest


def answer(conn, status, headers=(), body=b""):
    text = "HTTP/1.1 %s\r\n" % status
    for name, value in headers:
        text += "%s: %s\r\n" % (name, value)
    text += "Content-Length: %d\r\n\r\n" % len(body)
    conn.sendall(text.encode("latin-1") + body)


def record(side, line, headers, count):
    with lock:
        log[side].append({"line": line, "headers": headers, "bodyBytes": count})


def serve_origin(conn, other_port):
    other = "http://127.0.0.2:%d" % other_port
    rest = b""
    while True:
        line, headers, rest = read_head(conn, rest)
        if line is None:
            return
        method = line.split(" ")[0]
        if mode == "104":
            if headers.get("expect", "").lower() == "100-continue":
                conn.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
            conn.sendall(
                ("HTTP/1.1 104 Upload Resumption Supported\r\nUpload-Draft-Interop-Version: 6\r\n"
                 "Location: %s/steal\r\n\r\n" % other).encode("latin-1"))
            count, _ = read_body(conn, headers, rest, limit=64 << 10)
            record("origin", line, headers, count)
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            return
        if mode == "redirect":
            count, rest = read_body(conn, headers, rest)
            record("origin", line, headers, count)
            answer(conn, "307 Temporary Redirect", [("Location", other + "/steal")])
            continue
        # 201
        count, rest = read_body(conn, headers, rest)
        record("origin", line, headers, count)
        if method == "OPTIONS":
            answer(conn, "200 OK", [("Upload-Limit", "min-size=0"), ("Upload-Draft-Interop-Version", "6")])
        elif headers.get("upload-complete") == "?0":
            answer(conn, "201 Created", [("Location", other + "/steal"), ("Upload-Offset", "0")])
        else:
            answer(conn, "200 OK", [], b"origin")


def serve_other(conn):
    rest = b""
    while True:
        line, headers, rest = read_head(conn, rest)
        if line is None:
            return
        count, rest = read_body(conn, headers, rest)
        record("other", line, headers, count)
        if line.startswith("HEAD "):
            conn.sendall(b"HTTP/1.1 204 No Content\r\nUpload-Offset: 0\r\nUpload-Complete: ?0\r\n\r\n")
        else:
            answer(conn, "200 OK", [], b"other")


def listen(host):
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind((host, 0))
    server.listen(64)
    return server


def accept_loop(server, handler):
    while True:
        try:
            conn, _ = server.accept()
        except OSError:
            return

        def run(conn=conn):
            try:
                handler(conn)
            except OSError:
                pass
            finally:
                try:
                    conn.close()
                except OSError:
                    pass

        threading.Thread(target=run, daemon=True).start()


def write_stats():
    # Once, whole: written aside and renamed into place, so a reader never sees part of it.
    with lock:
        if not finished:
            finished.append(True)
            with open(stats_file + ".part", "w") as f:
                json.dump(log, f)
            os.replace(stats_file + ".part", stats_file)


def finish(*_):
    # SIGTERM may arrive while the main thread is writing (its stdin closed first): the handler
    # runs on that same thread and must not end it mid-write; the main thread exits after.
    if finished:
        return
    write_stats()
    raise SystemExit(0)


origin, other = listen("127.0.0.1"), listen("127.0.0.2")
other_port = other.getsockname()[1]
threading.Thread(target=accept_loop, args=(origin, lambda c: serve_origin(c, other_port)), daemon=True).start()
threading.Thread(target=accept_loop, args=(other, serve_other), daemon=True).start()
signal.signal(signal.SIGTERM, finish)
print("PORT %d %d" % (origin.getsockname()[1], other_port), flush=True)
try:
    sys.stdin.read()
finally:
    write_stats()
