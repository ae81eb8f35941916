#!/usr/bin/env bash
# Run the whole test suite the way CI does:
#   1. default build (gcc, -Werror): every suite;
#   2. ASan+UBSan build: every suite but perf, image and ansible (they test
#      the rollout and the image, not the sanitized code);
#   3. TSan build: the concurrent suites (lib/actor);
#   4. clang fuzz build: the libFuzzer harnesses (tests/fuzz) sharing
#      $TW_FUZZ_SECONDS (default 120 s in all), failing on any crash.
# Build trees go to $TW_BUILD_ROOT (default: build-tests/ in the source tree).
# The last line is "N passed, N failed", counted from meson's test logs.
set -uo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
root=${TW_BUILD_ROOT:-$src/build-tests}
jobs=${TW_JOBS:-2}
mkdir -p "$root"
failed_setup=0

run_build() { # name, meson test args, meson setup args...
	local name=$1 test_args=$2
	shift 2
	local dir=$root/$name
	echo "=== $name: meson setup $*"
	if [ ! -f "$dir/build.ninja" ]; then
		meson setup "$dir" "$src" --werror "$@" >"$root/$name.setup.log" 2>&1 ||
			{ cat "$root/$name.setup.log"; failed_setup=$((failed_setup + 1)); return; }
	fi
	if ! ninja -C "$dir" >"$root/$name.build.log" 2>&1; then
		tail -50 "$root/$name.build.log"
		failed_setup=$((failed_setup + 1))
		return
	fi
	rm -f "$dir"/meson-logs/testlog*.json
	local wrap=()
	# TSan needs a fixed address-space layout on kernels with many ASLR bits.
	[ "$name" = tsan ] && wrap=(--wrapper "setarch $(uname -m) -R")
	# shellcheck disable=SC2086
	meson test -C "$dir" --num-processes "$jobs" --print-errorlogs "${wrap[@]}" $test_args
}

run_build default ""
run_build asan "--no-suite perf --no-suite image --no-suite ansible --no-suite soak" -Db_sanitize=address,undefined -Db_lundef=false
run_build tsan "--suite actor" -Db_sanitize=thread -Db_lundef=false
TW_FUZZ_SECONDS=${TW_FUZZ_SECONDS:-120} CC=clang run_build fuzz "--suite fuzz" -Dfuzz=true

/usr/bin/python3 - "$root" "$failed_setup" <<'PY'
import json, pathlib, sys
root = pathlib.Path(sys.argv[1])
passed = failed = skipped = 0
for log in sorted(root.glob("*/meson-logs/testlog*.json")):
    for line in log.read_text().splitlines():
        r = json.loads(line).get('result')
        if r in ('OK', 'EXPECTEDFAIL'):
            passed += 1
        elif r == 'SKIP':
            skipped += 1
        else:
            failed += 1
failed += int(sys.argv[2])  # a build that did not configure or compile
print(f"{passed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else ""))
sys.exit(1 if failed else 0)
PY
