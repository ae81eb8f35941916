#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Run one libFuzzer harness from its seed corpora, keeping what it finds in
# WORK_DIR/corpus; exit non-zero on a crash, a timeout (TW_FUZZ_TIMEOUT, 10 s
# per input) or running out of memory (2 GB), with the reproducer in
# WORK_DIR/artifacts.
# The test of suite `fuzz` for each harness, and what run-fuzz.sh runs.
# usage: fuzz-test.sh FUZZER WORK_DIR SEED_DIR...
# Environment:
#   TW_FUZZ_SECONDS  time budget (default 60), divided by
#   TW_FUZZ_SHARE    the number of harnesses sharing it (default 1; suite
#                    `fuzz` sets the number of harnesses)
#   TW_FUZZ_HARNESS_SECONDS  this harness's own budget instead (run-fuzz.sh)
#   TW_FUZZ_RUNS     also stop after this many executions (libFuzzer -runs)
#   TW_FUZZ_WORK     when set, WORK_DIR is TW_FUZZ_WORK/<harness> instead
#   TW_FUZZ_HARNESS_FLAGS  the harness's own libFuzzer flags (tests/fuzz/meson.build)
#   TW_FUZZ_FLAGS    further libFuzzer flags of the caller (run-fuzz.sh passes them on)
#   TW_FUZZ_TIMEOUT  seconds one input may take (default 10; a machine shared
#                    with busy-polling programs may stall a process longer)
# Leaks inside Debian's libraries listed in lsan.supp are not reported.
# The last lines, also written to WORK_DIR/last-run.txt, sum the run up.
set -uo pipefail
if [ $# -lt 3 ]; then
	echo "usage: fuzz-test.sh FUZZER WORK_DIR SEED_DIR..." >&2
	exit 2
fi
fuzzer=$1 work=$2
shift 2
name=$(basename "$fuzzer")
[ -n "${TW_FUZZ_WORK:-}" ] && work=$TW_FUZZ_WORK/$name
total=${TW_FUZZ_SECONDS:-60} share=${TW_FUZZ_SHARE:-1} runs=${TW_FUZZ_RUNS:-}
timeout=${TW_FUZZ_TIMEOUT:-10}
for v in "$total" "$share" "$timeout" ${runs:+"$runs"} \
		${TW_FUZZ_HARNESS_SECONDS:+"$TW_FUZZ_HARNESS_SECONDS"}; do
	if ! [[ "$v" =~ ^[0-9]+$ ]] || [ "$v" -lt 1 ]; then
		echo "fuzz-test.sh: TW_FUZZ_SECONDS, TW_FUZZ_SHARE, TW_FUZZ_TIMEOUT, TW_FUZZ_RUNS" \
			"and TW_FUZZ_HARNESS_SECONDS are positive numbers ('$v')" >&2
		exit 2
	fi
done
secs=${TW_FUZZ_HARNESS_SECONDS:-$((total / share))}
[ "$secs" -lt 1 ] && secs=1
seeds=()
for dir in "$@"; do
	if [ ! -d "$dir" ]; then
		echo "fuzz-test.sh: $dir: no seed corpus; hint: build the target fuzz_seed_corpora" >&2
		exit 2
	fi
	seeds+=("$dir")
done
mkdir -p "$work/corpus" "$work/artifacts"
supp=$(cd "$(dirname "$0")" && pwd)/lsan.supp
export LSAN_OPTIONS=suppressions=$supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}
log=$work/last-log.txt
started=$(date -u '+%Y-%m-%d %H:%M:%S UTC')
# New inputs go to the first directory; the seeds are only read.
# shellcheck disable=SC2086
"$fuzzer" -max_total_time="$secs" ${runs:+-runs="$runs"} -timeout="$timeout" -rss_limit_mb=2048 \
	${TW_FUZZ_HARNESS_FLAGS:-} ${TW_FUZZ_FLAGS:-} -print_final_stats=1 -artifact_prefix="$work/artifacts/" \
	"$work/corpus" "${seeds[@]}" 2>&1 | tee "$log" |
	grep -v -E '^#[0-9]+[[:space:]]+(NEW|REDUCE|pulse)'
rc=${PIPESTATUS[0]}
# "#N DONE cov: C ft: F corp: U/S ..." and the final stats
done_line=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -1)
execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
{
	echo "$name: $([ "$rc" -eq 0 ] && echo 'no crash' || echo "FAILED (exit $rc)")"
	echo "  started $started, budget ${secs} s${runs:+, at most $runs runs}"
	echo "  ${execs:-?} executions, ${rate:-?} exec/s"
	echo "  last: ${done_line:-?}"
	echo "  corpus: $(find "$work/corpus" -type f | wc -l) files in $work/corpus"
} | tee "$work/last-run.txt"
if [ "$rc" -ne 0 ]; then
	echo "fuzz-test.sh: $name failed (exit $rc); reproducers in $work/artifacts:"
	ls -l "$work/artifacts"
	echo "hint: re-run one with: $fuzzer $work/artifacts/<file>"
	# libFuzzer reports a crash with 77, which meson would count as a skip
	exit 1
fi
exit 0
