#!/usr/bin/env python3
"""A loopback relay that cuts connections where a test says.

Usage: cutting_relay.py <upstream-port> <stats-file> [<cut>,<cut>,...] [answered]

Forwards every connection to 127.0.0.1:<upstream-port>. The cuts are counts of client-to-server
bytes over the relay's whole life (every connection, request heads included), in increasing
order: when the bytes forwarded reach the next cut, the relay forwards exactly up to it, closes
the upstream connection for writing (the server gets every byte forwarded, then end of stream)
and resets the client's (SO_LINGER 0): bytes the client had sent past the cut are lost, as on a
dropped network. Nothing the server sends after a cut reaches that client: its answer to the end
of stream (a 200 for the bytes it got, say) is dropped, as it would be on a dropped network, so a
client never takes a cut upload for a complete one. What the server sent before the cut was
forwarded in full before the reset. With `answered`, cuts wait until the server's first answer
(the first request's 104) has been forwarded to the client and its kernel has acknowledged it: a
cut then falls at the first chunk past its count after that, and until then no chunk after the
first is forwarded (so a cut always falls inside the body, however late the answer). A new connection
is forwarded, and nothing more goes to the server on a kept-alive one, only once the server has
closed the cut one (it has read everything): an offset request (a `HEAD` on a kept-alive
connection) never overtakes the cut connection's last bytes, which Apple's handler would count
after answering it (then a `409` to the append, and the upload forgotten). So
`clientBytes`, the bytes forwarded, are the bytes the server received: anything the client sent
again that the server already had would show there. Socket buffers are kept small (256 KiB).
RELAY_DEBUG=1 logs request and response heads to standard error.
Prints `PORT <n>` and serves until its standard input closes (or SIGTERM); then it writes
{"clientBytes", "connections", "cutsDone", "unsettled"} as JSON to <stats-file>.
"""
import fcntl
import json
import os
import signal
import socket
import struct
import sys
import termios
import threading
import time

DEBUG = os.environ.get("RELAY_DEBUG") == "1"
lock = threading.Lock()
settled = threading.Condition(lock)
state = {"clientBytes": 0, "connections": 0, "cutsDone": 0, "unsettled": 0}
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


def settle(upstream):
    """Waits (at most 10 s) for the server to close a cut connection, then lets others through."""
    started = time.monotonic()
    upstream.settimeout(10)
    try:
        while upstream.recv(65536):
            pass
    except OSError:
        pass
    upstream.close()
    waited = time.monotonic() - started
    if waited > 1:
        sys.stderr.write("cutting_relay: the server took %.1f s to close a cut connection\n" % waited)
    with settled:
        state["unsettled"] -= 1
        settled.notify_all()


class Connection:
    """One relayed connection: `cut` is set, under `lock`, before a cut's last bytes go upstream.
    The server-to-client side forwards each chunk under the same lock and only while `cut` is
    unset, so a chunk is either wholly forwarded before the cut or never."""

    def __init__(self):
        self.lock = threading.Lock()
        self.cut = False


def client_to_server(client, upstream, cuts, answered, connection):
    cut_now = False
    try:
        while True:
            data = client.recv(65536)
            if not data:
                upstream.shutdown(socket.SHUT_WR)
                return
            with lock:
                # Nothing goes to the server, on any connection (a kept-alive one too), while it
                # has not yet read and closed a cut one: an offset request must see every byte
                # forwarded before the cut counted.
                settled.wait_for(lambda: state["unsettled"] == 0, timeout=10)
                cut_now = False
                if cuts and state["clientBytes"] + len(data) >= cuts[0] and answered.is_set():
                    data = data[: max(0, cuts[0] - state["clientBytes"])]
                    cuts.pop(0)
                    state["cutsDone"] += 1
                    state["unsettled"] += 1
                    cut_now = True
                state["clientBytes"] += len(data)
            if cut_now:
                # From here on the server's answers (to the end of stream sent below) stay here.
                with connection.lock:
                    connection.cut = True
            if data:
                if DEBUG and b"HTTP/1.1\r\n" in data[:200]:
                    sys.stderr.write("%d: %r\n" % (state["clientBytes"], data[:400]))
                upstream.sendall(data)
                # With `answered`, nothing more goes until the server's first answer has reached
                # the client: the body cannot all pass before the 104 does, so a cut always falls.
                answered.wait(10)
            if cut_now:
                # The server gets every byte forwarded, then end of stream; everything else waits
                # until the server has read it all and closed (settled; counted at the cut), so
                # that bytes the relay forwarded are never lost in the server's buffers.
                upstream.shutdown(socket.SHUT_WR)
                reset(client)
                threading.Thread(target=settle, args=(upstream,), daemon=True).start()
                return
    except OSError:
        reset(upstream)
        reset(client)
        if cut_now:
            # Cut, but failed before its settle began: nothing is left to wait for.
            with settled:
                state["unsettled"] -= 1
                settled.notify_all()


def delivered(client):
    """Waits (at most 2 s) until the client's kernel has acknowledged everything sent to it
    (SIOCOUTQ 0): handed to the kernel is not yet received, and a cut's reset may overtake
    segments still queued on another CPU, which the client's kernel then drops."""
    outq = bytearray(4)
    deadline = time.monotonic() + 2
    while time.monotonic() < deadline:
        fcntl.ioctl(client.fileno(), termios.TIOCOUTQ, outq)
        if struct.unpack("i", outq)[0] == 0:
            return
        time.sleep(0.0005)


def server_to_client(client, upstream, answered, connection):
    try:
        while True:
            data = upstream.recv(65536)
            with connection.lock:
                if connection.cut:
                    return
                if not data:
                    client.shutdown(socket.SHUT_WR)
                    return
                if DEBUG:
                    sys.stderr.write("<- %r\n" % data[:300])
                client.sendall(data)
            if not answered.is_set():
                delivered(client)
                answered.set()
    except OSError:
        pass


def main():
    upstream_port = int(sys.argv[1])
    stats_file = sys.argv[2]
    cuts = [int(c) for c in sys.argv[3].split(",") if c] if len(sys.argv) > 3 else []
    wait_for_answer = len(sys.argv) > 4 and sys.argv[4] == "answered"
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, BUFFER)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)

    # Set once the server's first answer (the first request's 104) was forwarded: cuts wait for it.
    answered = threading.Event()
    if not wait_for_answer:
        answered.set()

    def accept_loop():
        while True:
            try:
                client, _ = listener.accept()
                with settled:
                    settled.wait_for(lambda: state["unsettled"] == 0, timeout=10)
                upstream = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                upstream.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, BUFFER)
                upstream.connect(("127.0.0.1", upstream_port))
            except OSError:
                return
            with lock:
                state["connections"] += 1
            connection = Connection()
            threading.Thread(
                target=client_to_server, args=(client, upstream, cuts, answered, connection), daemon=True
            ).start()
            threading.Thread(target=server_to_client, args=(client, upstream, answered, connection), daemon=True).start()

    def finish(*_):
        try:
            with open(stats_file, "w") as out:
                json.dump(state, out)
        except OSError:
            pass
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
