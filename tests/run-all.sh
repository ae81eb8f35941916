#!/usr/bin/env bash
# Run the whole test suite the way CI does:
#   1. default build (gcc, -Werror): every suite;
#   2. ASan+UBSan build: every suite but perf, image and ansible (they test
#      the rollout and the image, not the sanitized code), only their
#      targets (not the benches);
#   3. TSan build: the concurrent suites (lib/actor), only their targets;
#   4. clang fuzz build: the libFuzzer harnesses (tests/fuzz) sharing
#      $TW_FUZZ_SECONDS (default 120 s in all), failing on any crash; only
#      their targets.
# Two chains run at once once the default tree is built:
#   - in the foreground, the default tree's image and ansible suites but
#     ansible_flash (the qemu guests and chroots: ~45 min, one test at a
#     time; a TCG guest keeps about one cpu busy, and mostly waits on it);
#   - beside it, on the other cpu, the default tree's other suites, then the
#     ASan, TSan and fuzz trees (builds at nice 10 so that they yield to the
#     guest; tests one at a time, $TW_JOBS_BESIDE, default 1), then
#     ansible_flash (suite flash, ~17 min) once image_boot has built the
#     image it flashes. Its output is printed when both chains are done.
# TW_SERIAL=1 runs everything in one chain, as before (2 tests at a time).
# Build trees go to $TW_BUILD_ROOT (default: build-tests/ in the source tree).
# The last line is "N passed, N failed", counted from meson's test logs.
set -uo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
root=${TW_BUILD_ROOT:-$src/build-tests}
jobs=${TW_JOBS:-2}
beside_jobs=${TW_JOBS_BESIDE:-1}
mkdir -p "$root"
: >"$root/failed-setup"
start=$(date +%s)

# The build outputs the tests of some suites need (their executables and
# depends), relative to the build tree: suite_targets DIR SUITE... (a suite
# written !NAME leaves out the tests in it; only those: every other test)
suite_targets() {
	meson introspect "$1" --tests --targets | /usr/bin/python3 -c '
import json, os, sys
d = json.load(sys.stdin)
files = {t["id"]: t["filename"] for t in d["targets"]}
want = {a for a in sys.argv[2:] if not a.startswith("!")}
skip = {a[1:] for a in sys.argv[2:] if a.startswith("!")}
out = set()
for t in d["tests"]:
    suites = {s.split(":", 1)[-1] for s in t["suite"]}
    if (not want or want & suites) and not skip & suites:
        for dep in t["depends"]:
            out.update(os.path.relpath(f, sys.argv[1]) for f in files.get(dep, []))
for f in sorted(out):
    print(f)' "$@"
}

# build_tree NAME [meson setup args...]: configure once, build; a failure is
# counted (one line in failed-setup) and returns 1. With $only_suites set
# (the sanitizer and fuzz trees), only what those suites' tests need is
# built (suite_targets' arguments).
build_tree() {
	local name=$1
	shift
	local dir=$root/$name
	local targets=(all meson-test-prereq)
	echo "=== $name: meson setup $* ($(($(date +%s) - start)) s)"
	if [ ! -f "$dir/build.ninja" ]; then
		meson setup "$dir" "$src" --werror "$@" >"$root/$name.setup.log" 2>&1 ||
			{ cat "$root/$name.setup.log"; echo "$name setup" >>"$root/failed-setup"; return 1; }
	fi
	if [ -n "${only_suites:-}" ]; then
		# shellcheck disable=SC2086  # a list of suite names
		mapfile -t targets < <(suite_targets "$dir" $only_suites)
		[ "${#targets[@]}" -gt 0 ] || { echo "$name: no tests in suites $only_suites" >>"$root/failed-setup"; return 1; }
	fi
	# all (or the suites' targets), and what only tests use (meson test runs
	# with --no-rebuild: two of them share the default tree)
	if ! ninja -C "$dir" "${targets[@]}" >"$root/$name.build.log" 2>&1; then
		tail -50 "$root/$name.build.log"
		echo "$name build" >>"$root/failed-setup"
		return 1
	fi
}

# test_tree NAME LOGBASE PROCESSES [meson test args...]
test_tree() {
	local name=$1 logbase=$2 procs=$3
	shift 3
	local dir=$root/$name
	local wrap=()
	echo "=== $name: meson test $* ($(($(date +%s) - start)) s)"
	# TSan needs a fixed address-space layout on kernels with many ASLR bits.
	[ "$name" = tsan ] && wrap=(--wrapper "setarch $(uname -m) -R")
	meson test -C "$dir" --no-rebuild --num-processes "$procs" --print-errorlogs \
		--logbase "$logbase" "${wrap[@]}" "$@"
}

# build_and_test NAME "TEST ARGS" PROCESSES [meson setup args...]
build_and_test() {
	local name=$1 test_args=$2 procs=$3
	shift 3
	build_tree "$name" "$@" || return
	# shellcheck disable=SC2086
	test_tree "$name" testlog "$procs" $test_args
}

# the sanitizer and fuzz trees, one after the other
sanitizer_trees() {
	local procs=$1
	only_suites="!perf !image !ansible !soak" build_and_test asan \
		"--no-suite perf --no-suite image --no-suite ansible --no-suite soak" \
		"$procs" -Db_sanitize=address,undefined -Db_lundef=false
	only_suites=actor build_and_test tsan "--suite actor" "$procs" -Db_sanitize=thread -Db_lundef=false
	only_suites=fuzz TW_FUZZ_SECONDS=${TW_FUZZ_SECONDS:-120} CC=clang build_and_test fuzz \
		"--suite fuzz" "$procs" -Dfuzz=true
}

# ansible_flash (suite flash) beside the other guests: it takes the image
# suite's image, so it waits for image_boot's build (the signature is written
# last) or for the foreground chain to end (no image: the test builds one).
flash_when_image() {
	local sig=$root/default/tests/image/tickwire.raw.sig
	echo "=== default: waiting for image_boot's image ($(($(date +%s) - start)) s)"
	while [ ! -s "$sig" ] && [ ! -e "$root/foreground.done" ]; do
		sleep 10
	done
	test_tree default testlog-flash 1 --suite flash
}

rm -f "$root"/*/meson-logs/testlog*.json "$root/foreground.done"
# a signature of an earlier run's image would start the flash test before
# image_boot has built this run's
rm -f "$root/default/tests/image/tickwire.raw.sig"
if [ "${TW_SERIAL:-0}" = 1 ]; then
	build_and_test default "" "$jobs"
	sanitizer_trees "$jobs"
elif build_tree default; then
	(
		# builds yield to the guest; the tests run at the usual priority
		# shellcheck disable=SC2317  # called by build_tree
		ninja() { nice -n 10 ninja "$@"; }  # nice runs the program, not this
		test_tree default testlog-beside "$beside_jobs" --no-suite image --no-suite ansible
		sanitizer_trees "$beside_jobs"
		flash_when_image
	) >"$root/beside.log" 2>&1 &
	beside=$!
	test_tree default testlog "$jobs" --suite image --suite ansible --no-suite flash
	touch "$root/foreground.done"
	wait "$beside"
	echo "=== beside the image and ansible suites ($(($(date +%s) - start)) s):"
	cat "$root/beside.log"
else
	sanitizer_trees "$jobs"
fi
echo "=== all trees done ($(($(date +%s) - start)) s)"

/usr/bin/python3 - "$root" "$(wc -l <"$root/failed-setup")" <<'PY'
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
