#!/usr/bin/env python3
"""Independent parser for FormDataKit's tests: parses a form body with Werkzeug (the WSGI
library Flask uses) and prints what it found as JSON.

usage: parse_form.py BODY_FILE CONTENT_TYPE
output: {"fields": [[name, value_hex], ...], "files": [[name, filename, content_type, sha256, size], ...]}
"""
import hashlib
import io
import json
import os
import sys

from werkzeug.formparser import parse_form_data


def main() -> None:
    path, content_type = sys.argv[1], sys.argv[2]
    size = os.path.getsize(path)
    with open(path, "rb") as body:
        environ = {
            "REQUEST_METHOD": "POST",
            "CONTENT_TYPE": content_type,
            "CONTENT_LENGTH": str(size),
            "wsgi.input": body,
        }
        _, form, files = parse_form_data(environ, max_form_memory_size=None, max_content_length=None)
        fields = [[k, v.encode("utf-8").hex()] for k, v in form.items(multi=True)]
        out_files = []
        for name, storage in files.items(multi=True):
            data = storage.read()
            out_files.append([name, storage.filename, storage.content_type,
                              hashlib.sha256(data).hexdigest(), len(data)])
    json.dump({"fields": fields, "files": out_files}, sys.stdout)


if __name__ == "__main__":
    main()
