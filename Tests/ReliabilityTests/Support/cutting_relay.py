#!/usr/bin/env python3
"""A loopback relay that cuts connections where a test says.

Usage: cutting_relay.py <upstream-port> <stats-file> [<cut>,<cut>,...]

Forwards every connection to 127.0.0.1:<upstream-port>. The cuts are counts of client-to-server
bytes over the relay's whole life (every connection, request heads included), in increasing
order: when the bytes forwarded reach the next cut, the relay forwards exactly up to it, closes
the upstream connection (the server gets every byte forwarded, then end of stream) and resets
the client's (SO_LINGER 0): bytes the client had sent past the cut are lost, as on a dropped
network. So `clientBytes`, the bytes forwarded, are the bytes the server received: anything
the client sent again that the server already had would show there. Socket buffers are kept
small (256 KiB). RELAY_DEBUG=1 logs request and response heads to standard error.
Prints `PORT <n>` and serves until its standard input closes (or SIGTERM); then it writes
{"clientBytes", "connections", "cutsDone"} as JSON to <stats-file>.
"""
import json
import signal
import socket
import struct
import sys
import threading

import os

DEBUG = os.environ.get("RELAY_DEBUG") == "1"
lock = threading.Lock()
state = {"clientBytes": 0, "connections": 0, "cutsDone": 0}
BUFFER = 256 << 10


def reset(sock):
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    except OSError:
        pass
    try:
        sock.close()
    except OSError:
        pass


def client_to_server(client, upstream, cuts):
    try:
        while True:
            data = client.recv(65536)
            if not data:
                upstream.shutdown(socket.SHUT_WR)
                return
            with lock:
                cut_now = False
                if cuts and state["clientBytes"] + len(data) >= cuts[0]:
                    data = data[: cuts[0] - state["clientBytes"]]
                    cuts.pop(0)
                    state["cutsDone"] += 1
                    cut_now = True
                state["clientBytes"] += len(data)
            if data:
                if DEBUG and b"HTTP/1.1\r\n" in data[:200]:
                    sys.stderr.write("%d: %r\n" % (state["clientBytes"], data[:400]))
                upstream.sendall(data)
            if cut_now:
                upstream.close()
                reset(client)
                return
    except OSError:
        reset(upstream)
        reset(client)


def server_to_client(client, upstream):
    try:
        while True:
            data = upstream.recv(65536)
            if not data:
                client.shutdown(socket.SHUT_WR)
                return
            if DEBUG:
                sys.stderr.write("<- %r\n" % data[:300])
            client.sendall(data)
    except OSError:
        pass


def main():
    upstream_port = int(sys.argv[1])
    stats_file = sys.argv[2]
    cuts = [int(c) for c in sys.argv[3].split(",") if c] if len(sys.argv) > 3 else []
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, BUFFER)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)

    def accept_loop():
        while True:
            try:
                client, _ = listener.accept()
                upstream = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                upstream.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, BUFFER)
                upstream.connect(("127.0.0.1", upstream_port))
            except OSError:
                return
            with lock:
                state["connections"] += 1
            threading.Thread(target=client_to_server, args=(client, upstream, cuts), daemon=True).start()
            threading.Thread(target=server_to_client, args=(client, upstream), daemon=True).start()

    def finish(*_):
        with lock:
            with open(stats_file, "w") as out:
                json.dump(state, out)
        sys.stdout.flush()
        os._exit(0)

    signal.signal(signal.SIGTERM, finish)
    threading.Thread(target=accept_loop, daemon=True).start()
    print("PORT %d" % listener.getsockname()[1], flush=True)
    while sys.stdin.buffer.read(1):
        pass
    finish()


if __name__ == "__main__":
    main()
