#!/usr/bin/env python3
"""Interop receiver for FormDataKit's tests: a werkzeug WSGI server that parses each form
request with werkzeug's own multipart / URL-encoded parsers and answers with JSON.

Usage: form_server.py  -> binds 127.0.0.1 on a free port, prints "PORT <n>" on stdout, serves
until stdin closes or the process is terminated.

Response JSON: {"method", "content_length", "content_encoding", "body_bytes",
                "fields": [[name, value], ...],
                "files": [[name, filename, content_type, size, sha256], ...]}
A body with Content-Encoding: gzip is inflated here (werkzeug does not) before parsing.
"""
import gzip
import hashlib
import io
import json
import sys
import threading

from werkzeug.serving import make_server
from werkzeug.wrappers import Request, Response


def app(environ, start_response):
    declared_length = environ.get("CONTENT_LENGTH")
    raw = environ["wsgi.input"].read(int(declared_length or 0))
    body_bytes = len(raw)
    encoding = environ.get("HTTP_CONTENT_ENCODING", "")
    if "gzip" in encoding.lower():
        raw = gzip.decompress(raw)
        environ.pop("HTTP_CONTENT_ENCODING", None)
    environ["wsgi.input"] = io.BytesIO(raw)
    environ["CONTENT_LENGTH"] = str(len(raw))
    request = Request(environ)
    request.max_form_memory_size = None
    fields = [[k, v] for k, v in request.form.items(multi=True)]
    files = []
    for name, storage in request.files.items(multi=True):
        data = storage.read()
        files.append([name, storage.filename, storage.mimetype or None, len(data),
                      hashlib.sha256(data).hexdigest()])
    result = {
        "method": request.method,
        "content_length": declared_length,
        "content_encoding": encoding or None,
        "body_bytes": body_bytes,
        "fields": fields,
        "files": files,
    }
    return Response(json.dumps(result), mimetype="application/json")(environ, start_response)


def main():
    server = make_server("127.0.0.1", 0, app, threaded=True)
    print(f"PORT {server.port}", flush=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    # Stop when the test closes our stdin (or kills us).
    sys.stdin.read()
    server.shutdown()


if __name__ == "__main__":
    main()
