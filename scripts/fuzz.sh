#!/usr/bin/env bash
# fuzz.sh — build the libFuzzer harnesses of tests/fuzz with clang (ASan +
# UBSan + libFuzzer) and run each for a bounded time on its committed seed
# corpus. Any crash, sanitizer report, leak, broken property, per-input
# timeout or memory blow-up fails the run; the input that did it is kept.
#
#   bash scripts/fuzz.sh [SECONDS] [HARNESS...]
#
#   SECONDS   time per harness (libFuzzer -max_total_time), default 20
#   HARNESS   any of: wire dispatch config transport notify (default: all)
#
# Environment: SV_FUZZ_BUILD  build directory (default build-fuzz)
#              SV_FUZZ_JOBS   parallel build jobs (default 2)
#
# The committed corpus (tests/fuzz/corpus/NAME) is only read; inputs the
# fuzzer finds go to BUILD/corpus/NAME, crash inputs to BUILD/artifacts/NAME/,
# the full output to BUILD/logs/NAME.log. Reproduce a finding with
#   LSAN_OPTIONS=suppressions=tests/fuzz/lsan.supp \
#     BUILD/fuzz_NAME BUILD/artifacts/NAME/crash-...
# Longer runs and triage: tests/fuzz/README.md. Exits 0 only when every
# harness ran for its time without a finding; the last line is the summary.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT" || exit 1

ALL=(wire dispatch config transport notify)
SECS=${1:-20}
[ $# -gt 0 ] && shift
HARNESSES=("$@")
[ ${#HARNESSES[@]} -eq 0 ] && HARNESSES=("${ALL[@]}")
BUILD=${SV_FUZZ_BUILD:-build-fuzz}
JOBS=${SV_FUZZ_JOBS:-2}

if ! [[ $SECS =~ ^[0-9]+$ ]] || [ "$SECS" -lt 1 ]; then
	echo "fuzz.sh: SECONDS must be a positive integer, not \"$SECS\"" >&2
	exit 2
fi
for h in "${HARNESSES[@]}"; do
	if [[ " ${ALL[*]} " != *" $h "* ]]; then
		echo "fuzz.sh: no harness \"$h\" (have: ${ALL[*]})" >&2
		exit 2
	fi
done
if ! command -v clang >/dev/null 2>&1; then
	echo "fuzz.sh: clang not found (Debian package clang; see" \
		"scripts/install-deps.sh)" >&2
	exit 1
fi

echo "==> fuzz.sh: build $BUILD/ (clang, -fsanitize=fuzzer,address,undefined)"
if ! cmake -S tests/fuzz -B "$BUILD" -DCMAKE_C_COMPILER=clang >/dev/null ||
	! cmake --build "$BUILD" -j"$JOBS" >"$BUILD/build.log" 2>&1; then
	tail -n 40 "$BUILD/build.log" 2>/dev/null
	echo "fuzz.sh: build failed"
	exit 1
fi

# fz_stat NAME LOG: the value of libFuzzer's final "stat::NAME:" line.
fz_stat() {
	sed -n "s/^stat::$1: *//p" "$2" | tail -n 1
}

results=()
failed=0
for h in "${HARNESSES[@]}"; do
	work=$BUILD/corpus/$h
	art=$BUILD/artifacts/$h/
	log=$BUILD/logs/$h.log
	mkdir -p "$work" "$art" "$BUILD/logs"
	opts=(-max_total_time="$SECS" -timeout=10 -rss_limit_mb=2048
		-print_final_stats=1 -artifact_prefix="$art")
	[ -f "tests/fuzz/$h.dict" ] && opts+=(-dict="tests/fuzz/$h.dict")
	# The dispatcher logs every failed spawn on stderr: keep libFuzzer's
	# and the sanitizers' reports, drop the daemon's lines.
	[ "$h" = dispatch ] && opts+=(-close_fd_mask=2)
	echo "==> fuzz.sh: $h for ${SECS} s"
	start=$SECONDS
	ASAN_OPTIONS=detect_leaks=1 \
		LSAN_OPTIONS=suppressions="$ROOT/tests/fuzz/lsan.supp" \
		UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		"$BUILD/fuzz_$h" "${opts[@]}" "$work" "tests/fuzz/corpus/$h" \
		</dev/null >"$log" 2>&1
	rc=$?
	runs=$(fz_stat number_of_executed_units "$log")
	rate=$(fz_stat average_exec_per_sec "$log")
	cov=$(grep -Eo 'cov: [0-9]+' "$log" | tail -n 1)
	line="$h: ${runs:-?} runs, ${rate:-?} exec/s, ${cov:-cov: ?}, $((SECONDS - start)) s"
	if [ "$rc" -eq 0 ]; then
		results+=("$line: ok")
		echo "    $line"
	else
		results+=("$line: FAILED (exit $rc)")
		failed=$((failed + 1))
		echo "    $h FAILED (exit $rc); end of $log:"
		tail -n 60 "$log" | sed 's/^/    | /'
		find "$art" -type f | sed 's/^/    kept: /'
	fi
done

echo
echo "==> fuzz.sh: summary"
printf '    %s\n' "${results[@]}"
if [ "$failed" -eq 0 ]; then
	echo "fuzz.sh: all ${#results[@]} harnesses ran ${SECS} s without a finding"
	exit 0
fi
echo "fuzz.sh: $failed of ${#results[@]} harnesses failed"
exit 1
