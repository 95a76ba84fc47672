#!/usr/bin/env bash
# Measures a 1 GiB file upload with `formdata post` (URLSession, uploadTask(fromFile:)) against
# `curl -F`, both to the same loopback receiver (`formdata serve`, route /discard) in the same run.
# Reports wall time, throughput and peak RSS (GNU time). Not a test: run it by hand.
#   Benchmarks/upload-1gib.sh [size-in-MiB (default 1024)] [runs (default 2)]
set -euo pipefail
cd "$(dirname "$0")/.."
MIB="${1:-1024}"
RUNS="${2:-2}"
swift build -c release --product formdata 2>&1 | grep -E "error|warning:|Compiling|Build" | tail -3
BIN=.build/release/formdata
WORK="$(mktemp -d)"
INPUT="$WORK/input.bin"
head -c "$((MIB * 1048576))" /dev/urandom > "$INPUT"

"$BIN" serve --port 0 > "$WORK/serve.log" 2>&1 &
SERVER=$!
trap 'kill "$SERVER" 2>/dev/null || true; rm -rf "$WORK"' EXIT
for _ in $(seq 50); do grep -q "Listening on" "$WORK/serve.log" 2>/dev/null && break; sleep 0.1; done
URL="$(grep -o 'http://127.0.0.1:[0-9]*' "$WORK/serve.log" | head -1)/discard"

measure() { # name, command...
  local name="$1"; shift
  /usr/bin/time -f "%e %M" -o "$WORK/time" "$@" > "$WORK/out" 2>/dev/null
  read -r secs kb < "$WORK/time"
  local bytes; bytes="$(grep -o '"bodyBytes":[0-9]*' "$WORK/out" | cut -d: -f2)"
  awk -v n="$name" -v s="$secs" -v k="$kb" -v b="$bytes" \
    'BEGIN { printf "%-22s %8.2f s %8.1f MiB/s  peak RSS %6.1f MiB  body %s bytes\n", n, s, b / 1048576 / s, k / 1024, b }'
}

echo "upload of $MIB MiB to $URL, $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg)"
for run in $(seq "$RUNS"); do
  measure "formdata post" "$BIN" post "$URL" -F name=bigfile -F "file=@$INPUT" --timeout 60
  measure "curl -F" curl -sS -F name=bigfile -F "file=@$INPUT" "$URL"
  measure "curl -F (no Expect)" curl -sS -H 'Expect:' -F name=bigfile -F "file=@$INPUT" "$URL"
done
