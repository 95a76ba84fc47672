#!/usr/bin/env python3
"""Receiver for FormDataKit's streamed-part tests: werkzeug's own server and multipart parser.

Usage: stream_server.py -> binds 127.0.0.1 on a free port, prints "PORT <n>", serves until
stdin closes. Reads the whole body (Content-Length, or chunked: werkzeug's server dechunks it).
  /upload       JSON {"te", "cl", "ce", "body_bytes", "fields": [[name, value]],
                      "files": [[name, filename, content_type, size, sha256]]}
  /411          411 Length Required when the body has no Content-Length, else as /upload
  /redirect307  307 to /upload (the body read first)
A gzip body (Content-Encoding: gzip) is inflated before parsing.
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
    length = environ.get("CONTENT_LENGTH")
    stream = environ["wsgi.input"]
    raw = stream.read(int(length)) if length else stream.read()
    path = environ.get("PATH_INFO", "")
    if path == "/411" and not length:
        return Response("length required", status=411)(environ, start_response)
    if path == "/redirect307":
        return Response("", status=307, headers={"Location": "/upload"})(environ, start_response)
    te = environ.get("HTTP_TRANSFER_ENCODING")
    encoding = environ.get("HTTP_CONTENT_ENCODING", "")
    body_bytes = len(raw)
    if "gzip" in encoding.lower():
        raw = gzip.decompress(raw)
    parsed = dict(environ)
    parsed.pop("HTTP_CONTENT_ENCODING", None)
    parsed.pop("HTTP_TRANSFER_ENCODING", None)
    parsed.pop("wsgi.input_terminated", None)
    parsed["wsgi.input"] = io.BytesIO(raw)
    parsed["CONTENT_LENGTH"] = str(len(raw))
    request = Request(parsed)
    request.max_form_memory_size = None
    files = []
    for name, storage in request.files.items(multi=True):
        data = storage.read()
        files.append([name, storage.filename, storage.mimetype or None, len(data), hashlib.sha256(data).hexdigest()])
    result = {"te": te, "cl": length, "ce": encoding or None, "body_bytes": body_bytes,
              "fields": [[k, v] for k, v in request.form.items(multi=True)], "files": files}
    return Response(json.dumps(result), mimetype="application/json")(environ, start_response)


def main():
    server = make_server("127.0.0.1", 0, app, threaded=True)
    print(f"PORT {server.port}", flush=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    sys.stdin.read()
    server.shutdown()


if __name__ == "__main__":
    main()
