#!/usr/bin/env python3
"""Receiver for FormDataKit's streamed-part tests: werkzeug's own server and multipart parser.

Usage: stream_server.py -> binds 127.0.0.1 on a free port, prints "PORT <n>", serves until
stdin closes. Reads the whole body (Content-Length, or chunked: werkzeug's server dechunks it).
  /upload       JSON {"te", "cl", "ce", "body_bytes", "fields": [[name, value]],
                      "files": [[name, filename, content_type, size, sha256]],
                      "pm_files": [[name, filename, size, sha256]] (python-multipart's reading
                      of the same bytes; "pm_error" when it is not installed)}
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


def python_multipart_files(raw, content_type):
    """The file parts python-multipart reads in `raw`, or an error text."""
    try:
        import python_multipart
    except ImportError as error:
        return None, f"python-multipart is not installed ({error})"
    files = []

    def on_file(file):
        file.file_object.seek(0)
        data = file.file_object.read()
        files.append([file.field_name.decode(), (file.file_name or b"").decode(), len(data), hashlib.sha256(data).hexdigest()])

    headers = {"Content-Type": content_type.encode(), "Content-Length": str(len(raw)).encode()}
    python_multipart.parse_form(headers, io.BytesIO(raw), lambda field: None, on_file)
    return files, None


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
    pm_files, pm_error = python_multipart_files(raw, environ.get("CONTENT_TYPE", ""))
    result["pm_files" if pm_error is None else "pm_error"] = pm_files if pm_error is None else pm_error
    return Response(json.dumps(result), mimetype="application/json")(environ, start_response)


def main():
    server = make_server("127.0.0.1", 0, app, threaded=True)
    print(f"PORT {server.port}", flush=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    sys.stdin.read()
    server.shutdown()


if __name__ == "__main__":
    main()
