#!/usr/bin/env python3
# The one CGI script behind every route of ApacheServer (/open, /basic, /digest, /inflate,
# /cookie): it reports what Apache handed it as JSON, so a test can check what a client really
# sent after Apache's authentication and input filters had their say.
#
# Independent of FormDataKit: the body is parsed by werkzeug (multipart/form-data and
# application/x-www-form-urlencoded), the reference parser of the interop tests.
#
# The JSON object:
#   method, path (REQUEST_URI without its query), path_info (PATH_INFO), query (QUERY_STRING),
#   content_type, content_length (CONTENT_LENGTH as received, null when absent; behind
#   mod_deflate's input filter it is the length of the compressed body), content_encoding (the request's Content-Encoding header),
#   auth_type (AUTH_TYPE), remote_user (REMOTE_USER), headers ({name: value} of every HTTP_*
#   variable, names as "Content-Encoding"), body_bytes and body_sha256 (of the bytes this script
#   read), fields ([[name, value]]), files ([{name, filename, content_type, size, sha256}]),
#   cookie (HTTP_COOKIE), ssl_client_verify, ssl_client_s_dn (mod_ssl, with a client certificate).
#
# A query parameter `set=NAME=VALUE` (repeatable) answers `Set-Cookie: NAME=VALUE; Path=/`.
#
# The first line names no interpreter that matters: ApacheServer copies this file into its
# document tree with the interpreter it found (one that can import werkzeug) on that line.

import hashlib
import io
import json
import os
import sys
import traceback
import urllib.parse


def read_body():
    """The request body, read to EOF (mod_cgi closes the script's input after the body).

    Not CONTENT_LENGTH bytes: behind mod_deflate's input filter (/inflate), Apache still hands
    the script the length of the *compressed* body the client sent, while the input carries the
    inflated bytes; a chunked request has no length at all."""
    return sys.stdin.buffer.read()


def header_name(variable):
    """HTTP_CONTENT_ENCODING -> Content-Encoding."""
    return "-".join(part.capitalize() for part in variable[len("HTTP_"):].split("_"))


def parsed_form(body):
    """(fields, files) as werkzeug parses the body; empty lists for other content types."""
    from werkzeug.formparser import parse_form_data

    environ = {
        "REQUEST_METHOD": os.environ.get("REQUEST_METHOD", "POST"),
        "CONTENT_TYPE": os.environ.get("CONTENT_TYPE", ""),
        # The length of what was read (not the header's: an inflated body has none).
        "CONTENT_LENGTH": str(len(body)),
        "wsgi.input": io.BytesIO(body),
    }
    _, form, files = parse_form_data(environ, silent=False, max_form_parts=100_000)
    fields = [[name, value] for name, value in form.items(multi=True)]
    reported_files = []
    for name, storage in files.items(multi=True):
        digest, size = hashlib.sha256(), 0
        while True:
            chunk = storage.stream.read(1 << 20)
            if not chunk:
                break
            digest.update(chunk)
            size += len(chunk)
        reported_files.append({
            "name": name,
            "filename": storage.filename,
            "content_type": storage.content_type,
            "size": size,
            "sha256": digest.hexdigest(),
        })
    return fields, reported_files


def main():
    env = os.environ
    body = read_body()
    query = env.get("QUERY_STRING", "")
    cookies_to_set = [value for name, value in urllib.parse.parse_qsl(query, keep_blank_values=True)
                      if name == "set" and "=" in value]
    fields, files = parsed_form(body)
    report = {
        "method": env.get("REQUEST_METHOD"),
        "path": env.get("REQUEST_URI", "").split("?", 1)[0],
        "path_info": env.get("PATH_INFO"),
        "query": query,
        "content_type": env.get("CONTENT_TYPE"),
        "content_length": int(env["CONTENT_LENGTH"]) if env.get("CONTENT_LENGTH") else None,
        "content_encoding": env.get("HTTP_CONTENT_ENCODING"),
        "auth_type": env.get("AUTH_TYPE"),
        "remote_user": env.get("REMOTE_USER"),
        "headers": {header_name(name): value for name, value in sorted(env.items()) if name.startswith("HTTP_")},
        "body_bytes": len(body),
        "body_sha256": hashlib.sha256(body).hexdigest(),
        "fields": fields,
        "files": files,
        "cookie": env.get("HTTP_COOKIE"),
        "ssl_client_verify": env.get("SSL_CLIENT_VERIFY"),
        "ssl_client_s_dn": env.get("SSL_CLIENT_S_DN"),
    }
    out = sys.stdout.buffer
    out.write(b"Content-Type: application/json\r\n")
    for cookie in cookies_to_set:
        out.write(("Set-Cookie: %s; Path=/\r\n" % cookie).encode("latin-1"))
    out.write(b"\r\n")
    out.write(json.dumps(report).encode())
    out.flush()


try:
    main()
except Exception:
    # A broken request (or script) answers 500 with the traceback, not Apache's bare
    # "premature end of script headers".
    sys.stdout.buffer.write(b"Status: 500 Internal Server Error\r\nContent-Type: application/json\r\n\r\n")
    sys.stdout.buffer.write(json.dumps({"error": traceback.format_exc()}).encode())
    sys.stdout.buffer.flush()
