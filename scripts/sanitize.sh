#!/usr/bin/env bash
# Runs the test suite under AddressSanitizer and/or ThreadSanitizer:
#   scripts/sanitize.sh [address|thread|all] [extra swift test arguments…]
# Each sanitizer builds into its own scratch folder (.build-asan, .build-tsan; ignored by git),
# so the normal .build is not rebuilt. The tests run the `faultline` binary built there, with
# the same sanitizer. A report fails the run (halt_on_error), and the suppressions in
# scripts/tsan.supp, each with its reason, are the only ones used.
set -euo pipefail
cd "$(dirname "$0")/.."

which="${1:-all}"
shift || true

run() {
    local sanitizer="$1" scratch="$2"
    shift 2
    local start=$SECONDS
    echo "== swift test --sanitize=$sanitizer (scratch $scratch)"
    swift build --build-tests --sanitize="$sanitizer" --scratch-path "$scratch"
    local built=$SECONDS
    swift test --skip-build --sanitize="$sanitizer" --scratch-path "$scratch" "$@"
    echo "== $sanitizer: build $((built - start)) s, tests $((SECONDS - built)) s"
}

# Leak detection is off: LeakSanitizer cannot see references Swift keeps in enum payloads with
# spare bits (Data's representation, dictionary and array storage), so it reports hundreds of
# such buffers still in use as leaked (Data from SHA256Hasher.finalize, TestSupport.snapshot).
export ASAN_OPTIONS="${ASAN_OPTIONS:-halt_on_error=1:detect_leaks=0:detect_stack_use_after_return=0}"
export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1:suppressions=$PWD/scripts/tsan.supp}"

case "$which" in
address) run address .build-asan "$@" ;;
thread) run thread .build-tsan "$@" ;;
all)
    run address .build-asan "$@"
    run thread .build-tsan "$@"
    ;;
*)
    echo "usage: $0 [address|thread|all] [swift test arguments…]" >&2
    exit 2
    ;;
esac
