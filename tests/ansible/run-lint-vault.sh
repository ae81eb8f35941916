#!/bin/sh
# ansible_lint_vault: run-lint.sh (the ansible_lint test) on a copy of
# ansible/ and tests/ansible with a vault.yml added under the example
# inventory: plain text -> lint fails naming it; the same file encrypted with
# ansible-vault -> lint passes (both linters read it: a trailing space in a
# vault.yml is yamllint's finding, so it is not skipped).
#   run-lint-vault.sh SOURCE_ROOT BUILD_ROOT
set -eu
src=$(cd "$1" && pwd)
build=$(cd "$2" && pwd)
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
# shellcheck source=tests/ansible/tap.sh
. "$src/tests/ansible/tap.sh"
tap_begin lint-vault yamllint ansible-lint ansible-vault
mkdir -p "$work/tree/tests"
cp -a "$src/ansible" "$work/tree/"
cp -a "$src/tests/ansible" "$work/tree/tests/"
vault=$work/tree/ansible/inventory/example/group_vars/tickwire/vault.yml
lint() { sh "$src/tests/ansible/run-lint.sh" "$work/tree" >"$work/lint.log" 2>&1; }

printf -- '---\ntickwire_ilink_credentials:\n  access_key_id: "AKID0000000000000001"\n  secret_key: "c2VjcmV0LWtleQ"\n' >"$vault"
if lint; then
	not_ok "plain-text vault.yml: lint passed"
elif grep -q "inventory/example/group_vars/tickwire/vault.yml:1: error: not ansible-vault encrypted" "$work/lint.log"; then
	ok "plain-text vault.yml: $(grep -m1 'not ansible-vault encrypted' "$work/lint.log")"
else
	not_ok "plain-text vault.yml: lint failed for another reason"
	tail -n 20 "$work/lint.log"
fi

printf 'test-only\n' >"$work/pw"
ansible-vault encrypt --vault-password-file "$work/pw" "$vault" >/dev/null 2>&1
if lint; then
	ok "encrypted vault.yml: lint passes ($(grep -c . "$vault") lines of ciphertext)"
else
	not_ok "encrypted vault.yml: lint failed"
	tail -n 20 "$work/lint.log"
fi

sed -i '2s/$/ /' "$vault"
if ! lint && grep -A1 'group_vars/tickwire/vault.yml$' "$work/lint.log" | grep -q "trailing spaces"; then
	ok "vault.yml is read by yamllint: $(grep -m1 -A1 'vault.yml' "$work/lint.log" | tr -s ' \n' ' ')"
else
	not_ok "a trailing space in vault.yml went unseen"
	tail -n 20 "$work/lint.log"
fi

echo "$failures failed"
[ "$failures" -eq 0 ]
