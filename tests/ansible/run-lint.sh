#!/bin/sh
# yamllint and ansible-lint (profile production) over ansible/ and the test
# inventories, vault.yml files included, every vault.yml encrypted; any
# finding fails (meson suite ansible).
#   run-lint.sh SOURCE_ROOT
set -eu
src=$(cd "$1" && pwd)
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
command -v yamllint >/dev/null && command -v ansible-lint >/dev/null ||
	{ echo "SKIP: yamllint / ansible-lint not installed"; exit 77; }
export ANSIBLE_CONFIG="$src/ansible/ansible.cfg" ANSIBLE_NOCOLOR=1 NO_COLOR=1
cd "$src/ansible"
# vault.yml is linted like any file (neither linter skips it), and it must be
# ansible-vault ciphertext: a plain-text one puts secrets in git (issue 19)
plain=$(find . ../tests/ansible \( -name vault.yml -o -name vault.yaml \) -type f | sort | while read -r f; do
	# shellcheck disable=SC2016 # a literal $
	head -c 15 "$f" | grep -q '^\$ANSIBLE_VAULT;' || echo "$f"
done)
if [ -n "$plain" ]; then
	for f in $plain; do
		echo "$f:1: error: not ansible-vault encrypted (no \$ANSIBLE_VAULT; header): secrets in plain text; hint: ansible-vault encrypt $f"
	done
	exit 1
fi
echo "vault.yml: every one encrypted"
echo "yamllint $(yamllint --version | cut -d' ' -f2)"
yamllint -s -c .yamllint . ../tests/ansible
echo "yamllint: clean"
# ansible-lint 6.13: --profile production (the .ansible-lint says so too);
# --strict turns warnings into failures.
ansible-lint --version | head -n 1
ansible-lint --nocolor --strict --profile production
echo "ansible-lint (production): clean"
