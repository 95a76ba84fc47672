#!/usr/bin/env python3
"""Python peers for formdata-bench: the same workloads, built in-process, timed per build.

usage: py_peers.py TOOL WORKLOAD FIELDS_JSON ITERATIONS
  TOOL      urlencode | urllib3 | toolbelt
  WORKLOAD  w1 (urlencoded) | w2 (multipart)
prints: "<median seconds> <body bytes>"  (exit 3 when the tool is not installed)

usage: py_peers.py TOOL w3 OUT FILE...
  TOOL      urllib3 | toolbelt
  ten fields and the files as one multipart body written to OUT (timed as a whole process by
  formdata-bench: urllib3 builds the body in memory, requests-toolbelt streams it in 1 MiB reads)
"""
import json
import statistics
import sys
import time


BOUNDARY = "0xKhTmLbOuNdArY-A1B2C3D4-E5F6-4A7B-8C9D-0E1F2A3B4C5D"


def w3(tool: str, out_path: str, paths: list) -> None:
    fields = [(f"field{i}", f"value {i} — ünïcödé") for i in range(10)]
    if tool == "urllib3":
        try:
            from urllib3 import encode_multipart_formdata
        except ImportError:
            sys.exit(3)
        for index, path in enumerate(paths):
            with open(path, "rb") as handle:
                fields.append((f"file{index}", (path.rsplit("/", 1)[-1], handle.read(), "application/octet-stream")))
        body, _ = encode_multipart_formdata(fields, boundary=BOUNDARY)
        with open(out_path, "wb") as out:
            out.write(body)
    elif tool == "toolbelt":
        try:
            from requests_toolbelt import MultipartEncoder
        except ImportError:
            sys.exit(3)
        handles = [open(path, "rb") for path in paths]
        for index, (path, handle) in enumerate(zip(paths, handles)):
            fields.append((f"file{index}", (path.rsplit("/", 1)[-1], handle, "application/octet-stream")))
        encoder = MultipartEncoder(fields=fields, boundary=BOUNDARY)
        with open(out_path, "wb") as out:
            while True:
                chunk = encoder.read(1 << 20)
                if not chunk:
                    break
                out.write(chunk)
        for handle in handles:
            handle.close()
    else:
        sys.exit(2)


def main() -> None:
    if len(sys.argv) >= 4 and sys.argv[2] == "w3":
        w3(sys.argv[1], sys.argv[3], sys.argv[4:])
        return
    tool, workload, fields_path, iterations = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    with open(fields_path, encoding="utf-8") as handle:
        fields = [(k, v) for k, v in json.load(handle)]
    if tool == "urlencode":
        from urllib.parse import urlencode, quote

        def build() -> bytes:
            return urlencode(fields, quote_via=quote).encode("ascii")
    elif tool == "urllib3":
        try:
            from urllib3 import encode_multipart_formdata
        except ImportError:
            sys.exit(3)

        def build() -> bytes:
            body, _ = encode_multipart_formdata(fields, boundary=BOUNDARY)
            return body
    elif tool == "toolbelt":
        try:
            from requests_toolbelt import MultipartEncoder
        except ImportError:
            sys.exit(3)

        def build() -> bytes:
            encoder = MultipartEncoder(fields=fields, boundary=BOUNDARY)
            out = bytearray()
            while True:
                chunk = encoder.read(1 << 20)
                if not chunk:
                    break
                out += chunk
            return bytes(out)
    else:
        sys.exit(2)
    times = []
    size = 0
    for _ in range(iterations):
        start = time.perf_counter()
        size = len(build())
        times.append(time.perf_counter() - start)
    print(f"{statistics.median(times):.9f} {size}")


if __name__ == "__main__":
    main()
