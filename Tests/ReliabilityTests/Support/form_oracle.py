#!/usr/bin/env python3
"""Long-lived independent form parsers for FormDataKit's property tests.

Reads one JSON request per line on stdin: {"path": BODY_FILE, "content_type": CT, "gzip": bool}
and answers one JSON line per request on stdout:
  {"werkzeug": RESULT | {"error": text}, "email": RESULT | {"error": text}}
RESULT = {"fields": [[name, value_hex], ...], "files": [[name, filename, content_type, size, sha256], ...]}

Two parsers that share no code: Werkzeug's multipart parser (Flask's) and CPython's stdlib
`email` package (a MIME parser). Gzip bodies (Content-Encoding: gzip) are inflated here first,
as neither parser does it. One process serves a whole test run, so Python starts once.
"""
import email
import email.policy
import email.utils
import gzip
import hashlib
import io
import json
import sys

from werkzeug.formparser import parse_form_data


def sha(data):
    return hashlib.sha256(data).hexdigest()


def with_werkzeug(body, content_type):
    environ = {
        "REQUEST_METHOD": "POST",
        "CONTENT_TYPE": content_type,
        "CONTENT_LENGTH": str(len(body)),
        "wsgi.input": io.BytesIO(body),
    }
    _, form, files = parse_form_data(environ, max_form_memory_size=None, max_content_length=None,
                                     max_form_parts=None, silent=False)
    fields = [[k, v.encode("utf-8", "surrogateescape").hex()] for k, v in form.items(multi=True)]
    out = []
    for name, storage in files.items(multi=True):
        data = storage.read()
        out.append([name, storage.filename, storage.content_type, len(data), sha(data)])
    return {"fields": fields, "files": out}


def with_email(body, content_type):
    message = email.message_from_bytes(
        b"Content-Type: " + content_type.encode("ascii") + b"\r\nMIME-Version: 1.0\r\n\r\n" + body,
        policy=email.policy.HTTP)
    if not message.is_multipart():
        raise ValueError("not parsed as multipart")
    defects = [type(d).__name__ for d in message.defects]
    if defects:
        raise ValueError("defects: %s" % defects)
    fields, files = [], []
    for part in message.get_payload():
        if part.defects:
            raise ValueError("part defects: %s" % [type(d).__name__ for d in part.defects])
        name = part.get_param("name", header="content-disposition")
        filename = part.get_param("filename", header="content-disposition")
        if name is None:
            raise ValueError("part without a name")
        name = str(name)
        payload = part.get_payload(decode=True)
        if payload is None:
            payload = b""
        if filename is None:
            fields.append([name, payload.hex()])
        else:
            filename = str(filename)
            # The raw header: the HTTP policy would re-quote parameters (charset="utf-8").
            raw = [value for key, value in part.raw_items() if key.lower() == "content-type"]
            ctype = raw[0].strip() if raw else None
            files.append([name, filename, ctype, len(payload), sha(payload)])
    return {"fields": fields, "files": files}


def main():
    for line in sys.stdin:
        request = json.loads(line)
        with open(request["path"], "rb") as handle:
            body = handle.read()
        if request.get("gzip"):
            body = gzip.decompress(body)
        answer = {}
        for key, parser in (("werkzeug", with_werkzeug), ("email", with_email)):
            try:
                answer[key] = parser(body, request["content_type"])
            except Exception as error:  # reported to the Swift side as a mismatch
                answer[key] = {"error": "%s: %s" % (type(error).__name__, error)}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
