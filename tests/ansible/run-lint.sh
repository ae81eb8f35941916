#!/bin/sh
# yamllint and ansible-lint (profile production) over ansible/ and the test
# inventories; any finding fails (meson suite ansible).
#   run-lint.sh SOURCE_ROOT
set -eu
src=$(cd "$1" && pwd)
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
command -v yamllint >/dev/null && command -v ansible-lint >/dev/null ||
	{ echo "SKIP: yamllint / ansible-lint not installed"; exit 77; }
export ANSIBLE_CONFIG="$src/ansible/ansible.cfg" ANSIBLE_NOCOLOR=1 NO_COLOR=1
cd "$src/ansible"
echo "yamllint $(yamllint --version | cut -d' ' -f2)"
yamllint -s -c .yamllint . ../tests/ansible
echo "yamllint: clean"
# ansible-lint 6.13: --profile production (the .ansible-lint says so too);
# --strict turns warnings into failures.
ansible-lint --version | head -n 1
ansible-lint --nocolor --strict --profile production
echo "ansible-lint (production): clean"
