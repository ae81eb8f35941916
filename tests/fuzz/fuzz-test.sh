#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The meson test of suite `fuzz`: run the libFuzzer harness for
# TW_FUZZ_SECONDS (default 60) from the seed corpus; exit non-zero on a crash,
# a timeout (10 s per input) or running out of memory (2 GB).
# usage: fuzz-test.sh FUZZER SEED_DIR WORK_DIR
set -uo pipefail
if [ $# -ne 3 ]; then
	echo "usage: fuzz-test.sh FUZZER SEED_DIR WORK_DIR" >&2
	exit 2
fi
fuzzer=$1 seeds=$2 work=$3
secs=${TW_FUZZ_SECONDS:-60}
if ! [[ "$secs" =~ ^[0-9]+$ ]] || [ "$secs" -lt 1 ]; then
	echo "fuzz-test.sh: TW_FUZZ_SECONDS='$secs' is not a positive number of seconds" >&2
	exit 2
fi
if [ ! -d "$seeds" ]; then
	echo "fuzz-test.sh: $seeds: no seed corpus; hint: build the target fuzz_seed_corpus" >&2
	exit 2
fi
mkdir -p "$work/corpus" "$work/artifacts"
# New inputs go to the first directory; the seeds are only read.
"$fuzzer" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
	-artifact_prefix="$work/artifacts/" "$work/corpus" "$seeds"
rc=$?
if [ $rc -ne 0 ]; then
	echo "fuzz-test.sh: the fuzzer failed (exit $rc); reproducers in $work/artifacts:"
	ls -l "$work/artifacts"
	echo "hint: re-run one with: $fuzzer $work/artifacts/<file>"
fi
exit $rc
