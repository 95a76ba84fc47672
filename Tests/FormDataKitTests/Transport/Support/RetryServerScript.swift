import Foundation
import FormDataKitTestSupport

/// The retry tests' upload server (a Python script run with `python3 -c`, kept here so the
/// test target needs no resource or exclusion for it): processes each `Idempotency-Key` once,
/// drops or stalls answers, asks to retry later. Its routes are in its docstring.
enum RetryServerScript {
    /// Starts the server on a free loopback port; it stops when ``PortAnnouncingProcess/stop()``
    /// closes its standard input.
    static func start() async throws -> PortAnnouncingProcess {
        try await PortAnnouncingProcess(arguments: ["python3", "-c", source]) { text in
            TransportTestSupport.Failure(description: "retry_server did not start: \(text)")
        }
    }

    static let source = #"""
        #!/usr/bin/env python3
        """An upload server that processes each Idempotency-Key once, for FormDataKit's retry tests.
        Listens on 127.0.0.1 (a free port, printed as `PORT <n>`) and stops when its stdin closes.

        Processing an upload means reading its whole body and recording it: an upload with an
        `Idempotency-Key` already processed is answered from the record (not processed again), as
        draft-ietf-httpapi-idempotency-key-header asks; one without a key is processed every time.

        Routes (<name> keeps each test's counts apart):
          POST /drop/<n>/<name>        process, then the first <n> arrivals drop the connection unanswered
          POST /stall/<n>/<name>       process, then the first <n> arrivals hold the connection unanswered
                                       for 30 s (the client's idle timeout, a few seconds, fires first)
          POST /headstall/<n>/<name>   process, then the first <n> arrivals get the head of a 200 (Content-Length: 4)
                                       and none of its body for 30 s (a black hole after the head)
          POST /busy/<status>/<how>/<name>  first arrival: read the body (not processed), answer <status>
                                       with `Retry-After: 1` (<how> = seconds) or an HTTP-date 2 s after the
                                       response's own `Date` (<how> = date); later arrivals: process
          GET  /log/<name>             JSON {arrivals: [{key, at}], processed: n, answered_at: [t]}: each
                                       arrival's key and time.monotonic() when its head was read, how many
                                       times the body was processed, when each 429/503 was about to be
                                       sent (taken before writing it: the client cannot have it earlier)
        """
        import email.utils
        import json
        import socket
        import sys
        import threading
        import time
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        LOCK = threading.Lock()
        NAMES = {}
        DONE_KEYS = set()


        def entry(name):
            return NAMES.setdefault(name, {"arrivals": [], "processed": 0, "answered_at": []})


        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def answer(self, status, body, headers=()):
                self.send_response(status)
                for name, value in headers:
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                self.wfile.flush()

            def read_body(self):
                length = int(self.headers.get("Content-Length", "0"))
                received = 0
                while received < length:
                    chunk = self.rfile.read(min(1 << 20, length - received))
                    if not chunk:
                        break
                    received += len(chunk)
                return received == length

            def process(self, name, key):
                """Records the upload unless its key was processed already."""
                with LOCK:
                    if key is not None and key in DONE_KEYS:
                        return
                    if key is not None:
                        DONE_KEYS.add(key)
                    entry(name)["processed"] += 1

            def drop(self):
                try:
                    self.connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                self.connection.close()
                self.close_connection = True

            def do_GET(self):
                parts = self.path.split("/")
                if len(parts) == 3 and parts[1] == "log":
                    with LOCK:
                        body = json.dumps(entry(parts[2])).encode()
                    return self.answer(200, body, [("Content-Type", "application/json")])
                self.answer(404, b"")

            def do_POST(self):
                arrived = time.monotonic()
                parts = self.path.split("/")
                key = self.headers.get("Idempotency-Key")
                name = parts[-1]
                with LOCK:
                    record = entry(name)
                    record["arrivals"].append({"key": key, "at": arrived})
                    count = len(record["arrivals"])
                if len(parts) == 4 and parts[1] in ("drop", "stall"):
                    if not self.read_body():
                        return self.drop()
                    self.process(name, key)
                    if count <= int(parts[2]):
                        if parts[1] == "stall":
                            time.sleep(30)
                        return self.drop()
                    return self.answer(200, b"done", [("Content-Type", "text/plain")])
                if len(parts) == 4 and parts[1] == "headstall":
                    if not self.read_body():
                        return self.drop()
                    self.process(name, key)
                    if count <= int(parts[2]):
                        self.send_response_only(200)
                        self.send_header("Content-Type", "text/plain")
                        self.send_header("Content-Length", "4")
                        self.end_headers()
                        self.wfile.flush()
                        time.sleep(30)
                        return self.drop()
                    return self.answer(200, b"done", [("Content-Type", "text/plain")])
                if len(parts) == 5 and parts[1] == "busy":
                    if not self.read_body():
                        return self.drop()
                    if count == 1:
                        now = int(time.time())
                        if parts[3] == "date":
                            retry_after = email.utils.formatdate(now + 2, usegmt=True)
                        else:
                            retry_after = "1"
                        body = b"busy"
                        # Before the answer is written: taken after, a thread descheduled in
                        # between (a busy machine) made the client's wait look short.
                        with LOCK:
                            record["answered_at"].append(time.monotonic())
                        self.send_response_only(int(parts[2]))
                        self.send_header("Date", email.utils.formatdate(now, usegmt=True))
                        self.send_header("Retry-After", retry_after)
                        self.send_header("Content-Length", str(len(body)))
                        self.end_headers()
                        self.wfile.write(body)
                        self.wfile.flush()
                        return
                    self.process(name, key)
                    return self.answer(200, b"done", [("Content-Type", "text/plain")])
                self.answer(404, b"")


        def main():
            server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
            server.daemon_threads = True
            threading.Thread(target=server.serve_forever, daemon=True).start()
            sys.stdout.write("PORT %d\n" % server.server_address[1])
            sys.stdout.flush()
            sys.stdin.read()
            server.shutdown()


        if __name__ == "__main__":
            main()
        """#
}
