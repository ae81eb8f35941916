#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# image_inputs: image/build refuses bad inputs clearly and before mmdebstrap
# runs; the image inventory says what dpdk-config/qemu says; the image
# scripts are shellcheck-clean.   tests/image/image-inputs.sh BUILD SOURCE
set -euo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
tmp=$(mktemp -d "$build/tests/image/inputs.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
failures=0
ok() { echo "ok - $*"; }
not_ok() { echo "not ok - $*"; failures=$((failures + 1)); }

# A stand-in mmdebstrap first on PATH: it must never run in these cases.
mkdir -p "$tmp/bin"
printf '#!/bin/sh\ntouch "%s/mmdebstrap-ran"\nexit 1\n' "$tmp" >"$tmp/bin/mmdebstrap"
chmod +x "$tmp/bin/mmdebstrap"

expect_refusal() { # name pattern-on-stderr image/build args...
	local name=$1 pattern=$2 rc=0
	shift 2
	PATH=$tmp/bin:$PATH "$src/image/build" --build-dir "$build" --out "$tmp/out/x.raw" "$@" \
		>"$tmp/stdout" 2>"$tmp/stderr" || rc=$?
	if [ "$rc" -ne 1 ]; then
		not_ok "$name: exit status $rc, expected 1"; cat "$tmp/stderr"
	elif ! grep -qE -- "$pattern" "$tmp/stderr"; then
		not_ok "$name: stderr lacks /$pattern/"; cat "$tmp/stderr"
	elif [ -e "$tmp/mmdebstrap-ran" ] || [ -e "$tmp/out/x.raw" ]; then
		not_ok "$name: mmdebstrap ran or an image was written"
	else
		ok "$name: $(grep -m1 -E -- "$pattern" "$tmp/stderr")"
	fi
}

# 1. a core map that tickwire-check refuses: capture_a on an lcore eal.lcores lacks
mkdir -p "$tmp/bad-lcore"
cp "$src/dpdk-config/qemu/ports.ini" "$tmp/bad-lcore/"
sed 's/^  capture_a = 1;/  capture_a = 9;/' "$src/dpdk-config/qemu/tickwire.cfg" >"$tmp/bad-lcore/tickwire.cfg"
line=$(grep -n '^  capture_a = 9;' "$tmp/bad-lcore/tickwire.cfg" | cut -d: -f1)
expect_refusal "profile refused by tickwire-check" "^$tmp/bad-lcore/tickwire.cfg:$line: error: lcores.capture_a" \
	--profile "$tmp/bad-lcore"
grep -q 'nothing was built' "$tmp/stderr" || not_ok "profile refused: no 'nothing was built'"

# 2. a hot lcore on the housekeeping cpu with isolation required
mkdir -p "$tmp/bad-iso"
sed 's/^lcores = 0-3,4@3$/lcores = 0-3,4@0/' "$src/dpdk-config/qemu/ports.ini" >"$tmp/bad-iso/ports.ini"
cp "$src/dpdk-config/qemu/tickwire.cfg" "$tmp/bad-iso/"
expect_refusal "hot lcore not isolated" "tickwire.cfg:[0-9]+: error: lcores.order_out = 4 \(cpu 0\)" --profile "$tmp/bad-iso"

# 3. a profile directory without tickwire.cfg
mkdir -p "$tmp/half"
cp "$src/dpdk-config/qemu/ports.ini" "$tmp/half/"
expect_refusal "incomplete profile" "--profile $tmp/half: no tickwire.cfg there" --profile "$tmp/half"

# 4. a private key passed as --ssh-key
printf -- '-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA\n-----END OPENSSH PRIVATE KEY-----\n' >"$tmp/id"
expect_refusal "private key refused" "--ssh-key $tmp/id: not an OpenSSH public key file" --ssh-key "$tmp/id"

# 5. unknown option, a topology hwloc cannot read, a build tree that is not one
expect_refusal "unknown option" "unknown option '--profil'" --profil x
expect_refusal "bad topology" "could not judge --profile .* against --topology" --topology "pack:banana"
rc=0
PATH=$tmp/bin:$PATH "$src/image/build" --build-dir "$tmp" >/dev/null 2>"$tmp/stderr" || rc=$?
if [ "$rc" -eq 1 ] && grep -q "not a meson build tree" "$tmp/stderr"; then ok "not a build tree"; else not_ok "not a build tree (rc $rc)"; fi

# 6. the good profile passes the input checks
if "$src/image/build" --build-dir "$build" --check-only >"$tmp/stdout" 2>"$tmp/stderr"; then
	ok "dpdk-config/qemu accepted: $(tail -1 "$tmp/stdout")"
else
	not_ok "dpdk-config/qemu refused by image/build --check-only"; cat "$tmp/stderr"
fi

# 7. image/inventory's host says exactly what dpdk-config/qemu says
if python3 - "$src" <<'PY'
import json, subprocess, sys, yaml
src = sys.argv[1]
want = json.loads(subprocess.check_output(
    ["python3", src + "/image/lib/profile-vars.py", src + "/dpdk-config/qemu"]))
with open(src + "/image/inventory/host_vars/tickwire-qemu.yml") as f:
    have = yaml.safe_load(f)
bad = [k for k in want if have.get(k) != want[k]]
if bad:
    print("image/inventory/host_vars/tickwire-qemu.yml differs from dpdk-config/qemu in: "
          + ", ".join(bad) + "; hint: regenerate with python3 image/lib/profile-vars.py dpdk-config/qemu")
    sys.exit(1)
PY
then ok "inventory matches dpdk-config/qemu"; else not_ok "inventory and dpdk-config/qemu differ"; fi

# 8. qemu-run refuses a missing image
rc=0
"$src/image/qemu-run" "$tmp/none.raw" >/dev/null 2>"$tmp/stderr" || rc=$?
if [ "$rc" -eq 1 ] && grep -q "not readable" "$tmp/stderr"; then ok "qemu-run: missing image"; else not_ok "qemu-run: missing image (rc $rc)"; fi

# 10. secrets in the build's inputs: refused before mmdebstrap
cp -a "$src/image/inventory" "$tmp/inv-vault"
mkdir -p "$tmp/inv-vault/group_vars/tickwire"
cp "$src/tests/ansible/image-secrets/vault.yml" "$tmp/inv-vault/group_vars/tickwire/vault.yml"
expect_refusal "vaulted variables in --inventory" \
	"inv-vault/group_vars/tickwire/vault.yml: Ansible Vault ciphertext \(a vaulted variable\)" --inventory "$tmp/inv-vault"
grep -q "secrets in the image build's inputs" "$tmp/stderr" || not_ok "vault: no 'secrets in the image build's inputs'"
cp -a "$src/image/inventory" "$tmp/inv-cred"
printf 'access_key_id=AKID\nsecret_key=c2VjcmV0\n' >"$tmp/inv-cred/ilink3.credentials"
expect_refusal "credentials file in --inventory" "inv-cred/ilink3.credentials: a credentials file" --inventory "$tmp/inv-cred"
cp -a "$src/dpdk-config/qemu" "$tmp/prof-cred"
printf 'secret_key = c2VjcmV0\n' >"$tmp/prof-cred/notes.txt"
expect_refusal "credentials in --profile" "prof-cred/notes.txt: a secret_key= line" --profile "$tmp/prof-cred"

# 11. the rootfs scan image/build runs before assembling: a credentials file,
# a private key; a clean tree passes
scan_rootfs() { # name expected-status pattern (- for no output) dir
	local rc=0
	"$src/image/lib/secrets-scan" rootfs "$4" >"$tmp/scan" 2>&1 || rc=$?
	if [ "$rc" -eq "$2" ] && { [ "$3" = - ] && [ ! -s "$tmp/scan" ] || grep -qE -- "$3" "$tmp/scan"; }; then
		ok "rootfs scan, $1: $(head -n 1 "$tmp/scan")"
	else
		not_ok "rootfs scan, $1 (exit $rc)"; cat "$tmp/scan"
	fi
}
mkdir -p "$tmp/root/etc/tickwire" "$tmp/root/root/.ssh" "$tmp/root/usr/share/doc"
echo "lcores = 0" >"$tmp/root/etc/tickwire/ports.ini"
printf -- '-----BEGIN RSA PRIVATE KEY-----\n' >"$tmp/root/usr/share/doc/example.key" # not where configuration lives
# a program whose bytes hold a secret_key= string (tickwire-replay's
# simulated exchange has a fixed loopback key): binaries are not read
mkdir -p "$tmp/root/usr/local/bin"
printf '\177ELF\0\0\nsecret_key=dGVzdA\0\n' >"$tmp/root/usr/local/bin/prog"
scan_rootfs "clean" 0 - "$tmp/root"
printf 'access_key_id=AKID\nsecret_key=c2VjcmV0\n' >"$tmp/root/etc/tickwire/ilink3.credentials"
scan_rootfs "credentials file" 1 "^/etc/tickwire/ilink3.credentials: a credentials file" "$tmp/root"
rm "$tmp/root/etc/tickwire/ilink3.credentials"
printf -- '-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn\n' >"$tmp/root/root/.ssh/id_ed25519"
scan_rootfs "private key" 1 "^/root/.ssh/id_ed25519: a private key" "$tmp/root"

# 12. the secrets role in an image build: credentials refused, nothing written
printf -- '---\n- name: The secrets role in an image build\n  hosts: all\n  gather_facts: false\n  roles:\n    - role: tickwire_secrets\n' >"$tmp/secrets.yml"
secrets_play() {
	(cd "$src/ansible" && ANSIBLE_CONFIG=$src/ansible/ansible.cfg ANSIBLE_NOCOLOR=1 ANSIBLE_LOCAL_TEMP=$tmp/ansible-tmp \
		ansible-playbook -i localhost, -c local -e ansible_python_interpreter=/usr/bin/python3 "$tmp/secrets.yml" \
		-e tickwire_image_build=true -e "tickwire_ilink_credentials_file=$tmp/cred/ilink3.credentials" "$@") >"$tmp/secrets.log" 2>&1
}
if secrets_play -e '{"tickwire_ilink_credentials": {"access_key_id": "AKID", "secret_key": "c2VjcmV0"}}'; then
	not_ok "secrets role: credentials accepted in an image build"
elif grep -q "credentials never go into an image" "$tmp/secrets.log" && [ ! -e "$tmp/cred" ]; then
	ok "secrets role: credentials refused in an image build, nothing written"
else
	not_ok "secrets role: refused for another reason, or wrote something"; tail -n 15 "$tmp/secrets.log"
fi
if secrets_play && [ ! -e "$tmp/cred" ]; then
	ok "secrets role: an image build without credentials writes nothing"
else
	not_ok "secrets role: image build without credentials"; tail -n 15 "$tmp/secrets.log"
fi
# and on a running host (not an image build) the same credentials are
# written, owner-only (the extra variable given last wins)
if secrets_play -e tickwire_image_build=false \
	-e '{"tickwire_ilink_credentials": {"access_key_id": "AKID", "secret_key": "c2VjcmV0"}}' &&
	[ "$(stat -c "%U %a" "$tmp/cred/ilink3.credentials" 2>/dev/null)" = "root 600" ] &&
	grep -qx 'secret_key=c2VjcmV0' "$tmp/cred/ilink3.credentials" &&
	grep -qx 'access_key_id=AKID' "$tmp/cred/ilink3.credentials"; then
	ok "secrets role: a running host gets the credentials file, root 0600"
else
	not_ok "secrets role: credentials on a running host"; tail -n 15 "$tmp/secrets.log"
fi

# 13. --sign-key given a public key
signify-openbsd -G -n -p "$tmp/sign.pub" -s "$tmp/sign.sec" 2>/dev/null || true
expect_refusal "public key as --sign-key" "--sign-key $tmp/sign.pub: not a signify-openbsd secret key" --sign-key "$tmp/sign.pub"

# 9. shellcheck
if command -v shellcheck >/dev/null; then
	if shellcheck "$src/image/build" "$src/image/qemu-run" "$src/image/files/tickwire-image-check" \
		"$src/image/files/tickwire-vfio-bind" "$src/image/files/tickwire-slot" "$src/image/lib/sign-image" "$src/image/lib/secrets-scan" \
		"$src/tests/image/"*.sh; then
		ok "shellcheck"
	else
		not_ok "shellcheck"
	fi
else
	not_ok "shellcheck not installed (.ci/packages lists it)"
fi

echo "$failures failed"
[ "$failures" -eq 0 ]
