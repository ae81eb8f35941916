#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Build the libFuzzer harnesses with clang in their own build directory and
# run each for SECONDS, one after the other, keeping each harness's corpus
# between runs; print a summary line per harness; exit non-zero on any
# crash, broken promise, timeout or out-of-memory (reproducers are listed).
# usage: tests/fuzz/run-fuzz.sh SECONDS [HARNESS...]
#   HARNESS: fuzz_mdp3_walk fuzz_il3_decode fuzz_il3_session fuzz_config_ini
#   fuzz_config_cfg (default: all of them)
# Environment:
#   TW_FUZZ_CORPUS  where corpora, crash artifacts and logs are kept, one
#                   directory per harness (default: ~/.cache/tickwire-fuzz,
#                   outside the build tree, so a rebuild keeps them)
#   TW_FUZZ_BUILD   the clang build directory (default: build-fuzz/ in the
#                   source tree)
#   TW_FUZZ_RUNS    also stop each harness after this many executions
#   TW_FUZZ_JOBS    harnesses run at once (default 1)
#   TW_FUZZ_TIMEOUT seconds one input may take (default 10)
#   TW_FUZZ_FLAGS   further libFuzzer flags for every harness
# CME data comes from the cme_data meson option as usual.
set -euo pipefail
secs=${1:-}
if ! [[ "$secs" =~ ^[0-9]+$ ]] || [ "$secs" -lt 1 ]; then
	echo "usage: tests/fuzz/run-fuzz.sh SECONDS [HARNESS...] (SECONDS per harness, e.g. 600)" >&2
	exit 2
fi
shift
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${TW_FUZZ_BUILD:-$src/build-fuzz}
corpus=${TW_FUZZ_CORPUS:-${XDG_CACHE_HOME:-$HOME/.cache}/tickwire-fuzz}
all=(fuzz_mdp3_walk fuzz_il3_decode fuzz_il3_session fuzz_config_ini fuzz_config_cfg)
harnesses=("$@")
[ ${#harnesses[@]} -eq 0 ] && harnesses=("${all[@]}")
for h in "${harnesses[@]}"; do
	if [[ " ${all[*]} " != *" $h "* ]]; then
		echo "run-fuzz.sh: unknown harness '$h'; one of: ${all[*]}" >&2
		exit 2
	fi
done
if ! command -v clang >/dev/null; then
	echo "run-fuzz.sh: clang not found; hint: apt-get install clang libclang-rt-14-dev" >&2
	exit 1
fi
if [ ! -f "$build/build.ninja" ]; then
	CC=clang meson setup "$build" "$src" -Dfuzz=true -Dtests=true \
		-Dbuildtype=debugoptimized
else
	meson configure "$build" -Dfuzz=true
fi
# Only what the fuzz tests need: the harnesses, their seed corpora.
meson compile -C "$build" "${harnesses[@]}" fuzz_seed_corpora
mkdir -p "$corpus"
touch "$corpus/.run-started"
rc=0
# Each harness gets SECONDS; no meson timeout.
TW_FUZZ_HARNESS_SECONDS=$secs TW_FUZZ_WORK=$corpus \
	meson test -C "$build" --no-rebuild --suite fuzz --timeout-multiplier 0 \
	--num-processes "${TW_FUZZ_JOBS:-1}" --print-errorlogs "${harnesses[@]}" || rc=$?
echo
echo "run-fuzz.sh: $(date -u '+%Y-%m-%d %H:%M:%S UTC'), ${secs} s per harness, corpus in $corpus"
for h in "${harnesses[@]}"; do
	summary=$corpus/$h/last-run.txt
	if [ -f "$summary" ] && [ "$summary" -nt "$corpus/.run-started" ]; then
		cat "$summary"
	else
		echo "$h: did not run"
	fi
	found=$(find "$corpus/$h/artifacts" -type f -newer "$corpus/.run-started" \
		-printf '    %p\n' 2>/dev/null)
	if [ -n "$found" ]; then
		echo "  new crash artifacts of $h (reproduce: $build/tests/fuzz/$h FILE):"
		echo "$found"
	fi
done
exit $rc
