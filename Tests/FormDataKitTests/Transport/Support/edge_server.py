#!/usr/bin/env python3
"""Edge-case HTTP server for FormDataKit's sending tests (redirects, stalls, early answers).

Listens on two loopback addresses, 127.0.0.1 and 127.0.0.2 (each a free port), prints
"PORT <port on .1> <port on .2>" on stdout, and serves until stdin closes.

Routes (any method):
  /upload                   read the whole body; answer JSON
                            {method, host, content_length, received, sha256, authorization,
                             cookie, expect, transfer_encoding, content_type}
  /redirect/<code>?to=URL   read the whole body, answer <code> with Location: URL
  /loop                     answer 302 with Location: /loop (a redirect loop)
  /stall                    read nothing and hold the connection until the client goes (60 s max)
  /reject                   read nothing; answer 413 with Connection: close at once and close
  /reason                   answer "200 Everything Is Fine" (a reason phrase of the server's own)
  /control-characters       answer 200 with ESC, BEL and CSI sequences in the reason phrase, a
                            header value and the body (what a hostile server could send a terminal)
  /big/<n>                  answer <n> bytes of body
  /double-gzip              answer gzip(gzip(b"payload " * 100)) with Content-Encoding: gzip
                            (a .gz file served compressed: inflated once, it is still gzip)
  /log                      JSON list of every request: {path, host, received, authorization}
"""
import gzip
import hashlib
import json
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

LOG = []
LOCK = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, status, body, headers=(), message=None):
        self.send_response(status, message)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def read_body(self):
        length = int(self.headers.get("Content-Length") or 0)
        digest = hashlib.sha256()
        received = 0
        while received < length:
            chunk = self.rfile.read(min(1 << 20, length - received))
            if not chunk:
                break
            digest.update(chunk)
            received += len(chunk)
        return length, received, digest.hexdigest()

    def record(self, received):
        with LOCK:
            LOG.append({"path": self.path, "host": self.headers.get("Host"), "received": received,
                        "authorization": self.headers.get("Authorization")})

    def handle_any(self):
        url = urlparse(self.path)
        query = parse_qs(url.query)
        parts = [p for p in url.path.split("/") if p]
        route = parts[0] if parts else ""
        if route == "log":
            with LOCK:
                body = json.dumps(LOG).encode()
            self.answer(200, body, [("Content-Type", "application/json")])
        elif route == "upload":
            length, received, sha = self.read_body()
            self.record(received)
            result = {
                "method": self.command, "host": self.headers.get("Host"), "content_length": length,
                "received": received, "sha256": sha, "authorization": self.headers.get("Authorization"),
                "cookie": self.headers.get("Cookie"), "expect": self.headers.get("Expect"),
                "transfer_encoding": self.headers.get("Transfer-Encoding"),
                "content_type": self.headers.get("Content-Type"),
            }
            self.answer(200, json.dumps(result).encode(), [("Content-Type", "application/json")])
        elif route == "redirect":
            _, received, _ = self.read_body()
            self.record(received)
            self.answer(int(parts[1]), b"moved", [("Location", query["to"][0])])
        elif route == "loop":
            _, received, _ = self.read_body()
            self.record(received)
            self.answer(302, b"again", [("Location", "/loop")])
        elif route == "stall":
            self.record(0)
            self.connection.settimeout(60)
            try:
                # Read nothing; wait for the client to go away (recv on a peeked socket would
                # consume body bytes, so just sleep until the socket errors or 60 s pass).
                deadline = time.time() + 60
                while time.time() < deadline:
                    time.sleep(0.2)
                    try:
                        self.connection.send(b"")
                    except OSError:
                        break
            finally:
                self.close_connection = True
        elif route == "reject":
            self.record(0)
            self.answer(413, b"too large", [("Connection", "close")], message="Payload Too Large")
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        elif route == "reason":
            _, received, _ = self.read_body()
            self.record(received)
            self.answer(200, b"fine", message="Everything Is Fine")
        elif route == "control-characters":
            self.read_body()
            self.answer(200, b"body \x1b[31mred\x07\x1b]0;pwned\x07\n",
                        [("X-Note", "\x1b[2Jcleared\x07"), ("Content-Type", "text/plain")],
                        message="Fine \x1b]0;title\x07\x1b[31m")
        elif route == "double-gzip":
            self.read_body()
            body = gzip.compress(gzip.compress(b"payload " * 100))
            self.answer(200, body, [("Content-Encoding", "gzip"), ("Content-Type", "application/gzip")])
        elif route == "big":
            self.read_body()
            self.answer(200, b"x" * int(parts[1]))
        else:
            self.answer(404, b"no such route")

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = handle_any

    def do_HEAD(self):
        self.answer(200, b"")


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256

    def handle_error(self, request, client_address):
        pass  # a client that went away mid-body (cancel tests) is expected here


def main():
    servers = [Server(("127.0.0.1", 0), Handler), Server(("127.0.0.2", 0), Handler)]
    print("PORT " + " ".join(str(s.server_address[1]) for s in servers), flush=True)
    for server in servers:
        threading.Thread(target=server.serve_forever, daemon=True).start()
    sys.stdin.read()
    for server in servers:
        server.shutdown()


if __name__ == "__main__":
    main()
