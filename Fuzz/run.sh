#!/usr/bin/env bash
# Builds the fuzz targets with libFuzzer and AddressSanitizer and runs them, one after another.
#
#   Fuzz/run.sh [TARGET…]            FUZZ_MINUTES minutes each (default 5)
#   FUZZ_KEEP_GOING=1 Fuzz/run.sh    the same, but a crash does not stop the target (libFuzzer's
#                                    fork mode): every crash is saved, to triage afterwards
#   Fuzz/run.sh --smoke [TARGET…]    every seed and regression input, then FUZZ_SMOKE_RUNS
#                                    (default 300) mutated inputs each, from a fixed seed
#
# Targets: predicate, xml-model, compiled-model, shell. Seeds are made by Fuzz/seeds.sh; the
# corpus each run grows is kept in Fuzz/.work/corpus/<target>/ for the next run; a crash,
# hang (-timeout) or memory blow-up (-rss_limit_mb) is written to Fuzz/.work/artifacts/<target>/
# and stops that target with a non-zero status. Replay one with
#   Fuzz/.build/debug/fuzz-<target> FILE
# Inputs in Fuzz/regressions/<target>/ (crashes found before, now fixed) run every time.
set -euo pipefail
cd "$(dirname "$0")/.."

smoke=0
if [ "${1:-}" = "--smoke" ]; then smoke=1; shift; fi
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(predicate xml-model compiled-model shell)
minutes=${FUZZ_MINUTES:-5}
smoke_runs=${FUZZ_SMOKE_RUNS:-300}

# Leak detection is off: Swift keeps some references in tagged or packed words (Data's inline
# and slice representations, enum payloads) that LeakSanitizer cannot see, so it reports
# objects that are still held (statics such as the fixtures) as leaked.
export ASAN_OPTIONS="detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
# libFuzzer and ASan report crashes; Swift's own backtracer would only get in their way.
export SWIFT_BACKTRACE=enable=no
common=(-detect_leaks=0 -rss_limit_mb=2048 -timeout=10 -print_final_stats=1)
options() {
  case "$1" in
    predicate) echo "-max_len=512 -dict=Fuzz/dictionaries/predicate.dict" ;;
    xml-model) echo "-max_len=32768 -dict=Fuzz/dictionaries/xml-model.dict" ;;
    compiled-model) echo "-max_len=32768" ;;
    shell) echo "-max_len=1024 -dict=Fuzz/dictionaries/shell.dict" ;;
    *) echo "unknown fuzz target: $1 (predicate, xml-model, compiled-model, shell)" >&2; exit 2 ;;
  esac
}
for t in "${targets[@]}"; do options "$t" >/dev/null; done

echo "== building the fuzz targets (libFuzzer + AddressSanitizer)"
swift build --package-path Fuzz -c debug -Xswiftc -sanitize=fuzzer,address -Xswiftc -use-ld=lld
Fuzz/seeds.sh

status=0
for t in "${targets[@]}"; do
  corpus=Fuzz/.work/corpus/$t
  artifacts=Fuzz/.work/artifacts/$t/
  mkdir -p "$corpus" "$artifacts" "Fuzz/regressions/$t"
  # shellcheck disable=SC2046
  run=(Fuzz/.build/debug/fuzz-"$t" "${common[@]}" $(options "$t") -artifact_prefix="$artifacts")
  if [ $smoke = 1 ]; then
    echo "== fuzz-$t: smoke ($smoke_runs runs after the seeds)"
    # A throwaway corpus folder: the smoke adds nothing to Fuzz/.work/corpus.
    scratch=$(mktemp -d)
    started=$(date +%s)
    # -runs counts the seeds too.
    inputs=$(find "Fuzz/.work/seeds/$t" "Fuzz/regressions/$t" -type f | wc -l)
    "${run[@]}" -seed=1 -runs=$(( inputs + smoke_runs )) "$scratch" "Fuzz/.work/seeds/$t" "Fuzz/regressions/$t" \
      > "Fuzz/.work/$t-smoke.log" 2>&1 || { status=1; tail -40 "Fuzz/.work/$t-smoke.log"; }
    rm -rf "$scratch"
    grep -E '^stat::number_of_executed_units|^Done|^#[0-9]+.*DONE' "Fuzz/.work/$t-smoke.log" | tr '\n' ' '
    echo "($(( $(date +%s) - started )) s)"
  else
    echo "== fuzz-$t: $minutes minutes"
    keep_going=()
    [ "${FUZZ_KEEP_GOING:-0}" != 1 ] || keep_going=(-fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1)
    set +e
    "${run[@]}" "${keep_going[@]}" -max_total_time=$(( minutes * 60 )) "$corpus" "Fuzz/.work/seeds/$t" "Fuzz/regressions/$t" \
      2>&1 | tee "Fuzz/.work/$t.log" | grep -E '^#[0-9]+.*(pulse|DONE)|^#[0-9]+: cov|ERROR|^stat::|SUMMARY|artifact|^INFO: fuzzed for'
    fuzzer=${PIPESTATUS[0]}
    set -e
    [ "$fuzzer" = 0 ] || status=1
  fi
done
exit $status
