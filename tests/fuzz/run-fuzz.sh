#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Build the MDP 3.0 fuzzer with clang in its own build directory and fuzz for
# SECONDS (e.g. 120 in CI); exit non-zero on any crash or broken promise.
# usage: tests/fuzz/run-fuzz.sh SECONDS
# Environment: TW_FUZZ_BUILD (default build-fuzz/ in the source tree),
# CME data from the cme_data meson option as usual.
set -euo pipefail
secs=${1:-}
if ! [[ "$secs" =~ ^[0-9]+$ ]] || [ "$secs" -lt 1 ]; then
	echo "usage: tests/fuzz/run-fuzz.sh SECONDS (a positive number, e.g. 120)" >&2
	exit 2
fi
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${TW_FUZZ_BUILD:-$src/build-fuzz}
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
# Only what the fuzz test needs: the harness, its seed corpus.
meson compile -C "$build" fuzz_mdp3_walk fuzz_seed_corpus
TW_FUZZ_SECONDS=$secs meson test -C "$build" --no-rebuild --suite fuzz --print-errorlogs
