# shellcheck shell=sh
# tests/ansible/tap.sh: sourced by the tests that print "ok -" / "not ok -"
# lines (run-verify.sh, run-lint-vault.sh); they set $build first.
#   tap_begin NAME TOOL...  SKIP (exit 77) when a tool is missing; $work, a
#                           scratch directory under BUILD/tests/ansible
#                           removed on exit; $failures counts not_ok
tap_begin() {
	tap_name=$1
	shift
	for t in "$@"; do
		command -v "$t" >/dev/null || { echo "SKIP: $t not installed (.ci/packages)"; exit 77; }
	done
	# shellcheck disable=SC2154 # $build: set by the sourcing script
	mkdir -p "$build/tests/ansible"
	work=$(mktemp -d "$build/tests/ansible/$tap_name.XXXXXX")
	trap 'rm -rf "$work"' EXIT
	failures=0
}
ok() { echo "ok - $*"; }
not_ok() {
	echo "not ok - $*"
	failures=$((failures + 1))
}
