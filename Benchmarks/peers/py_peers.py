#!/usr/bin/env python3
"""Python peers for formdata-bench: the same workloads, built in-process, timed per build.

usage: py_peers.py TOOL WORKLOAD FIELDS_JSON ITERATIONS
  TOOL      urlencode | urllib3 | toolbelt
  WORKLOAD  w1 (urlencoded) | w2 (multipart)
prints: "<median seconds> <body bytes>"  (exit 3 when the tool is not installed)
"""
import json
import statistics
import sys
import time


def main() -> None:
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
            body, _ = encode_multipart_formdata(fields, boundary="0xKhTmLbOuNdArY-A1B2C3D4-E5F6-4A7B-8C9D-0E1F2A3B4C5D")
            return body
    elif tool == "toolbelt":
        try:
            from requests_toolbelt import MultipartEncoder
        except ImportError:
            sys.exit(3)

        def build() -> bytes:
            encoder = MultipartEncoder(fields=fields, boundary="0xKhTmLbOuNdArY-A1B2C3D4-E5F6-4A7B-8C9D-0E1F2A3B4C5D")
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
