#!/usr/bin/env python3
"""A minimal h2c (HTTP/2 prior knowledge) server that turns the first request away, for the
refused-stream tests. Standard library only; it never decodes a header block.

Usage: refusing_h2c_server.py MODE LOG, MODE `refuse` or `goaway`. Listens on 127.0.0.1 (a free
port), prints "PORT <port>", serves until stdin closes. On the first connection, the first
request's HEADERS are answered with RST_STREAM(REFUSED_STREAM) (`refuse`) or GOAWAY(last stream
0, NO_ERROR) (`goaway`): by RFC 9113 the request was not processed. Every other request is read
whole and answered 200 with the body "<body bytes> <sha256 of the body>". Each line of LOG is
`refused`, `goaway` or `answered <bytes> <sha256>`.
"""
import hashlib
import socket
import struct
import sys
import threading

MODE, LOG = sys.argv[1], sys.argv[2]
LOCK = threading.Lock()
FIRST = [True]


def record(line):
    with LOCK, open(LOG, "a") as log:
        log.write(line + "\n")


def frame(kind, flags, stream, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload


def read_exactly(conn, count):
    data = b""
    while len(data) < count:
        chunk = conn.recv(count - len(data))
        if not chunk:
            raise EOFError
        data += chunk
    return data


def serve(conn):
    with LOCK:
        first, FIRST[0] = FIRST[0], False
    streams = {}
    try:
        read_exactly(conn, 24)  # the preface
        settings = struct.pack(">HI", 3, 100) + struct.pack(">HI", 4, 1 << 24)
        conn.sendall(frame(4, 0, 0, settings) + frame(8, 0, 0, struct.pack(">I", 1 << 30)))
        while True:
            header = read_exactly(conn, 9)
            length = int.from_bytes(header[:3], "big")
            kind, flags = header[3], header[4]
            stream = int.from_bytes(header[5:9], "big") & 0x7FFFFFFF
            payload = read_exactly(conn, length)
            if kind == 4 and not flags & 1:
                conn.sendall(frame(4, 1, 0))
            elif kind == 6 and not flags & 1:
                conn.sendall(frame(6, 1, 0, payload))
            elif kind == 7:
                return
            elif kind == 3:
                streams.pop(stream, None)
            elif kind == 1:
                if first:
                    first = False
                    if MODE == "refuse":
                        conn.sendall(frame(3, 0, stream, struct.pack(">I", 7)))
                        record("refused")
                    else:
                        conn.sendall(frame(7, 0, 0, struct.pack(">II", 0, 0)))
                        record("goaway")
                    continue
                streams[stream] = [0, hashlib.sha256()]
                if flags & 1:
                    answer(conn, stream, streams.pop(stream))
            elif kind == 0 and stream in streams:
                body = payload
                if flags & 8:
                    body = payload[1 : len(payload) - payload[0]]
                streams[stream][0] += len(body)
                streams[stream][1].update(body)
                if flags & 1:
                    answer(conn, stream, streams.pop(stream))
    except (EOFError, OSError):
        pass
    finally:
        conn.close()


def answer(conn, stream, state):
    count, digest = state[0], state[1].hexdigest()
    record(f"answered {count} {digest}")
    body = f"{count} {digest}\n".encode()
    length = str(len(body)).encode()
    # :status 200 (static index 8); content-length (static name 28) without indexing.
    block = b"\x88" + b"\x0f\x0d" + bytes([len(length)]) + length
    conn.sendall(frame(1, 4, stream, block) + frame(0, 1, stream, body))


def main():
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    print(f"PORT {listener.getsockname()[1]}", flush=True)

    def accept():
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    sys.stdin.read()
    listener.close()


main()
