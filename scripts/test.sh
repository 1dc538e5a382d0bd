#!/usr/bin/env bash
# `make test`: the whole suite, then how many tests were skipped and why. swift-testing counts
# a skipped test as run in its closing line, so a run without ../shared/corpus would look
# complete; this says how much of it was not. When nothing was skipped, swift test's own
# summary stays the last line (CI reads the closing lines).
set -uo pipefail
cd "$(dirname "$0")/.."

log=$(mktemp)
trap 'rm -f "$log"' EXIT
# Line-buffered output: a test's print() (standard output, block-buffered in a pipe) would
# otherwise come out at exit, after swift-testing's closing line (standard error).
line_buffered=(); command -v stdbuf >/dev/null && line_buffered=(stdbuf -oL -eL)
"${line_buffered[@]}" swift test "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}

# swift-testing prints one line per skipped test: `➜ Test name() skipped: "<the reason>"`
# (a skipped suite also prints a `Suite … skipped` line, not counted: its tests are).
skipped=$(grep -E '(^|[^[:alnum:]])Test .* skipped: ' "$log" | grep -vE '(^|[^[:alnum:]])Suite [^ ]+ skipped: ' || true)
corpus=$(printf '%s' "$skipped" | grep -c 'skipped: "skipped: \.\./shared/corpus' || true)
other=$(printf '%s' "$skipped" | grep -vc 'skipped: "skipped: \.\./shared/corpus' || true)
if [ "$corpus" -gt 0 ]; then
  echo "make test: $corpus corpus tests skipped: ../shared/corpus (real Core Data stores and models) is not beside the package; README.md, \"The corpus\", says what they check"
fi
if [ "$other" -gt 0 ]; then
  echo "make test: $other other tests skipped (the ➜ lines above say why)"
fi
exit "$status"
