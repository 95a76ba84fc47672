#!/usr/bin/env python3
"""Keep-alive HTTP/1.1 server that closes connections left idle, for the CLOSE-WAIT tests.

Listens on 127.0.0.1 (a free port), prints "PORT <port>" on stdout, and serves until stdin
closes. Every request (any path, GET) is answered 200 with a Content-Length body
"<connection number> <request number on that connection>" (both from 1), and the connection is
kept open for the next request; once it has been idle for `idle` seconds (the query's `idle=`,
0.3 by default), the server closes it with a normal close() (a FIN: the client's socket goes to
CLOSE-WAIT until the client closes it too).
"""
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

LOCK = threading.Lock()
CONNECTIONS = [0]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def setup(self):
        super().setup()
        with LOCK:
            CONNECTIONS[0] += 1
            self.number = CONNECTIONS[0]
        self.requests = 0

    def do_GET(self):
        self.requests += 1
        query = parse_qs(urlparse(self.path).query)
        idle = float(query.get("idle", ["0.3"])[0])
        body = f"{self.number} {self.requests}".encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()
        # The wait for the next request times out after `idle` seconds: the handler then ends
        # and the server shuts the connection down and closes it.
        self.connection.settimeout(idle)


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024


def main():
    server = Server(("127.0.0.1", 0), Handler)
    print(f"PORT {server.server_address[1]}", flush=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    sys.stdin.read()
    server.shutdown()


if __name__ == "__main__":
    main()
