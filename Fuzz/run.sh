#!/usr/bin/env bash
# Builds the libFuzzer targets and runs each for a bounded time (seconds, default 30), from the
# committed seed corpus, writing new inputs to a scratch corpus (the committed one stays as is).
# Prints executions and crashes per target; exits non-zero on any crash or sanitizer report.
set -euo pipefail
cd "$(dirname "$0")"
SECONDS_PER_TARGET="${1:-30}"
swift build -c release -Xswiftc -sanitize=fuzzer,address -Xswiftc -use-ld=lld 2>&1 | tail -1
BIN="$(swift build -c release -Xswiftc -sanitize=fuzzer,address -Xswiftc -use-ld=lld --show-bin-path)"
status=0
for pair in FuzzParser:parser FuzzInflate:inflate FuzzCapture:capture FuzzReceiver:receiver; do
  target="${pair%%:*}"; corpus="${pair##*:}"
  work="$(mktemp -d)"; log="$work/$target.log"
  # FuzzReceiver's server finishes each connection on its own threads after the input returns
  # (the handler thread, NIO's close): LeakSanitizer's check after each input would report what
  # is still in flight. AddressSanitizer stays on; -rss_limit_mb bounds real growth.
  extra=()
  if [ "$target" = FuzzReceiver ]; then extra=(-detect_leaks=0); fi
  # Output to a file, not a pipe (libFuzzer with a pipe on stdout can hang in some harnesses).
  if "$BIN/$target" -max_total_time="$SECONDS_PER_TARGET" -rss_limit_mb=2048 -artifact_prefix="$work/" "${extra[@]}" \
      "$work" "Corpus/$corpus" > "$log" 2>&1; then
    result="0 crashes"
  else
    result="CRASH (see below)"; status=1
    tail -40 "$log"
  fi
  runs="$(grep -Eo 'Done [0-9]+ runs' "$log" | grep -Eo '[0-9]+' || echo '?')"
  echo "fuzz $target: $runs executions in ${SECONDS_PER_TARGET}s, $result"
  rm -rf "$work"
done
exit $status
