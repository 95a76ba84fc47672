#!/usr/bin/env python3
"""A misbehaving HTTP server for FormDataKit's fault tests. Listens on 127.0.0.1 (a free port,
printed as the first line on stdout, `PORT <n>`) and stops when its stdin closes.

Routes (the <key> makes "first time" per test):
  POST /upload/<key>        read the whole body; answer JSON {content_length, received, sha256}
  POST /close-first/<key>   first time: read 64 KiB of the body, then drop the connection
  POST /stall-first/<key>   first time: read 64 KiB, then stop reading (the client times out;
                            dropped after 20 s, well past the tests' 3 s idle timeout; a
                            URLSession exchange timed out or cancelled here ends only then)
  POST /stall/<key>         read nothing and hold the connection (cancel tests; 20 s likewise)
  GET  /bomb/<size>         a gzip response that inflates to <size> zero bytes
  GET  /trickle/<n>         a <n>-byte body, one byte every 0.2 s (never idle, never quick)
  GET  /cookies/<round>     50 Set-Cookie headers of about 4 KB each, named c<round>_<i> (a flood)
  GET  /log                 JSON list of every request: {path, content_length, received, sha256, complete}
"""
import gzip
import hashlib
import json
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOG = []
SEEN = set()
LOCK = threading.Lock()
BOMBS = {}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def first_time(self, key):
        with LOCK:
            if key in SEEN:
                return False
            SEEN.add(key)
            return True

    def record(self, **entry):
        entry["path"] = self.path
        with LOCK:
            LOG.append(entry)

    def answer(self, status, body, headers=()):
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def read_all(self):
        length = int(self.headers.get("Content-Length", "0"))
        digest = hashlib.sha256()
        received = 0
        while received < length:
            chunk = self.rfile.read(min(1 << 20, length - received))
            if not chunk:
                break
            digest.update(chunk)
            received += len(chunk)
        return length, received, digest.hexdigest()

    def drop(self):
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.connection.close()
        self.close_connection = True

    def do_GET(self):
        parts = self.path.split("/")
        if self.path == "/log":
            with LOCK:
                body = json.dumps(LOG).encode()
            return self.answer(200, body, [("Content-Type", "application/json")])
        if len(parts) == 3 and parts[1] == "bomb":
            size = int(parts[2])
            with LOCK:
                if size not in BOMBS:
                    BOMBS[size] = gzip.compress(b"\0" * size, compresslevel=9)
                body = BOMBS[size]
            return self.answer(200, body, [("Content-Encoding", "gzip"), ("Content-Type", "application/octet-stream")])
        if len(parts) == 3 and parts[1] == "trickle":
            count = int(parts[2])
            self.send_response(200)
            self.send_header("Content-Length", str(count))
            self.end_headers()
            try:
                for _ in range(count):
                    self.wfile.write(b"x")
                    self.wfile.flush()
                    time.sleep(0.2)
            except OSError:
                pass
            return
        if len(parts) == 3 and parts[1] == "cookies":
            value = "v" * 4000
            cookies = [("Set-Cookie", "c%s_%d=%s; Path=/" % (parts[2], index, value)) for index in range(50)]
            return self.answer(200, b"{}", cookies + [("Content-Type", "application/json")])
        self.answer(404, b"")

    def do_POST(self):
        parts = self.path.split("/")
        route = parts[1] if len(parts) > 1 else ""
        key = self.path
        length = int(self.headers.get("Content-Length", "0"))
        if route == "close-first" and self.first_time(key):
            got = len(self.rfile.read(min(length, 65536)))
            self.record(content_length=length, received=got, sha256=None, complete=False)
            return self.drop()
        if route == "stall-first" and self.first_time(key):
            got = len(self.rfile.read(min(length, 65536)))
            self.record(content_length=length, received=got, sha256=None, complete=False)
            time.sleep(20)
            return self.drop()
        if route == "stall":
            self.record(content_length=length, received=0, sha256=None, complete=False)
            time.sleep(20)
            return self.drop()
        length, received, sha = self.read_all()
        self.record(content_length=length, received=received, sha256=sha, complete=received == length)
        body = json.dumps({"content_length": length, "received": received, "sha256": sha}).encode()
        self.answer(200, body, [("Content-Type", "application/json")])


class Server(ThreadingHTTPServer):
    request_queue_size = 512  # the load test opens many connections at once


def main():
    server = Server(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    sys.stdout.write("PORT %d\n" % server.server_address[1])
    sys.stdout.flush()
    sys.stdin.read()  # until the test closes our stdin
    server.shutdown()


if __name__ == "__main__":
    main()
