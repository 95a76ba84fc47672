#!/usr/bin/env python3
"""Checks cutting_relay.py's promise that nothing a server sends after a cut reaches the client.

Usage: cutting_relay_check.py [<rounds>]

Starts the relay in front of an upstream that answers a request as soon as it has the request's
last forwarded byte (before the end of stream the cut sends), then, one connection per round,
sends more than the cut lets through and reads what comes back. On a dropped network that answer
is lost, so the client must see the connection end (a reset or an end of stream) and no byte of
it. Prints one JSON line {"rounds", "answersSeen", "cutsDone"} and exits 1 when any answer got
through (or the relay misbehaved), 0 otherwise.
"""
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading

CUT = 100_000
ANSWER = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"


def upstream_loop(listener):
    """Answers each connection once it has CUT bytes, then reads to the end of stream."""
    while True:
        try:
            conn, _ = listener.accept()
        except OSError:
            return
        got = 0
        answered = False
        try:
            while True:
                data = conn.recv(65536)
                if not data:
                    break
                got += len(data)
                if got >= CUT and not answered:
                    conn.sendall(ANSWER)
                    answered = True
        except OSError:
            pass
        conn.close()


def one_round(port):
    """Sends 2 × CUT bytes through the relay; returns the bytes that came back."""
    client = socket.create_connection(("127.0.0.1", port))
    client.settimeout(10)

    def send():
        try:
            client.sendall(b"x" * (2 * CUT))
        except OSError:
            pass

    sender = threading.Thread(target=send, daemon=True)
    sender.start()
    received = b""
    try:
        while True:
            data = client.recv(65536)
            if not data:
                break
            received += data
    except OSError:
        pass
    sender.join(10)
    client.close()
    return received


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 40
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    threading.Thread(target=upstream_loop, args=(listener,), daemon=True).start()
    relay_path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cutting_relay.py")
    with tempfile.TemporaryDirectory() as directory:
        stats_path = os.path.join(directory, "relay.json")
        cuts = ",".join(str(CUT * (index + 1)) for index in range(rounds))
        relay = subprocess.Popen(
            [sys.executable, relay_path, str(listener.getsockname()[1]), stats_path, cuts, "-"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        line = relay.stdout.readline().decode()
        if not line.startswith("PORT "):
            print(json.dumps({"error": "the relay did not start: %r" % line}))
            relay.kill()
            return 1
        port = int(line.split()[1])
        seen = sum(1 for _ in range(rounds) if one_round(port))
        relay.stdin.close()
        relay.wait(10)
        with open(stats_path) as stats_file:
            stats = json.load(stats_file)
    print(json.dumps({"rounds": rounds, "answersSeen": seen, "cutsDone": stats["cutsDone"]}))
    return 0 if seen == 0 and stats["cutsDone"] == rounds else 1


if __name__ == "__main__":
    sys.exit(main())
