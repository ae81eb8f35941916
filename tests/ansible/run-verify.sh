#!/bin/sh
# ansible_flash_verify: the tickwire_flash role's signature check alone
# (tasks verify.yml, then checksum.yml, as main.yml runs them before
# anything is staged or written), against localhost, on a small file
# standing in for the image (the check reads no partition). Key pairs are
# made here (signify-openbsd -G -n) and removed; no private key is kept.
#   run-verify.sh SOURCE_ROOT BUILD_ROOT
# Refused, each with a message naming the image and the key: unsigned, signed
# with another key, no public key given, a signature that is not signify's,
# the image altered after signing, an expected sha256 other than the signed
# one. Accepted: signed by image/lib/sign-image with the key (the signed
# sha256 becomes tickwire_flash_expected_sha256).
set -eu
src=$(cd "$1" && pwd)
build=$(cd "$2" && pwd)
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
# shellcheck source=tests/ansible/tap.sh
. "$src/tests/ansible/tap.sh"
tap_begin verify ansible-playbook signify-openbsd

img=$work/tickwire.raw
head -c 1048576 /dev/urandom >"$img"
signify-openbsd -G -n -c "tickwire test image key" -p "$work/test.pub" -s "$work/test.sec"
signify-openbsd -G -n -c "another key" -p "$work/other.pub" -s "$work/other.sec"
cat >"$work/verify.yml" <<'EOF'
---
- name: Verify an image's signature (tests/ansible/run-verify.sh)
  hosts: all
  gather_facts: false
  tasks:
    - name: Signature
      ansible.builtin.include_role:
        name: tickwire_flash
        tasks_from: verify
    - name: Checksum
      ansible.builtin.include_role:
        name: tickwire_flash
        tasks_from: checksum
    - name: Accepted
      ansible.builtin.debug:
        msg: "VERIFIED {{ tickwire_flash_expected_sha256 }} {{ tickwire_flash_signed_name }}"
EOF
play() { # LOG [ansible-playbook -e ...]
	log=$1
	shift
	(cd "$src/ansible" && ANSIBLE_CONFIG="$src/ansible/ansible.cfg" ANSIBLE_NOCOLOR=1 \
		ANSIBLE_LOCAL_TEMP="$work/ansible-tmp" ANSIBLE_RETRY_FILES_ENABLED=false \
		ansible-playbook -i localhost, -c local -e ansible_python_interpreter=/usr/bin/python3 \
		-e "tickwire_flash_image=$img" "$work/verify.yml" "$@") >"$log" 2>&1
}
refused() { # NAME PATTERN [ansible-playbook -e ...]: the play fails with PATTERN in its log
	name=$1 pattern=$2
	shift 2
	if play "$work/$name.log" "$@"; then
		not_ok "$name: accepted"
		tail -n 20 "$work/$name.log"
	elif ! tr -s ' \n' ' ' <"$work/$name.log" | grep -Eq -- "$pattern"; then
		not_ok "$name: refused, but not for /$pattern/"
		grep -E '^fatal|msg' "$work/$name.log" | head -n 5
	elif grep -q 'VERIFIED' "$work/$name.log"; then
		not_ok "$name: refused, yet the play went on"
	else
		ok "$name: $(grep -o '"msg": ".*' "$work/$name.log" | head -n 1 | cut -c 1-240)"
	fi
}
key="tickwire_flash_signify_pubkey=$work/test.pub"

# unsigned: no tickwire.raw.sig
refused unsigned "$img: refused, not signed: no signature $img.sig on the controller \(public key $work/test.pub\)" -e "$key"

# signed with another key
"$src/image/lib/sign-image" "$work/other.sec" "$img" >/dev/null
refused "other-key" "$img: refused, its signature $img.sig does not verify with the public key $work/test.pub: .*(wrong key|failed)" -e "$key"

# no public key given
refused "no-key" "$img: refused, no public key to verify its signature with"

# a signature file that is not signify's
printf 'untrusted comment: x\nnot base64\n' >"$work/garbage.sig"
refused "garbage-signature" "its signature $work/garbage.sig does not verify with the public key $work/test.pub" \
	-e "$key" -e "tickwire_flash_image_signature=$work/garbage.sig"

# signed with the key (image/lib/sign-image, as image/build --sign-key): accepted
"$src/image/lib/sign-image" "$work/test.sec" "$img" >/dev/null
sha=$(sha256sum "$img" | cut -d' ' -f1)
if play "$work/good.log" -e "$key" && grep -q "VERIFIED $sha tickwire.raw" "$work/good.log"; then
	ok "signed with the key: accepted, expected sha256 = the signed one ($sha)"
else
	not_ok "signed with the key: not accepted"
	tail -n 20 "$work/good.log"
fi
if play "$work/good-sha.log" -e "$key" -e "tickwire_flash_image_sha256=$sha" && grep -q "VERIFIED $sha" "$work/good-sha.log"; then
	ok "signed, with the same expected sha256 given: accepted"
else
	not_ok "signed, with the same expected sha256 given: not accepted"
	tail -n 20 "$work/good-sha.log"
fi

# an expected sha256 other than the signed one
refused "other-sha" "signs sha256 $sha, expected 0{64}" -e "$key" \
	-e tickwire_flash_image_sha256=0000000000000000000000000000000000000000000000000000000000000000

# altered after signing: the signature verifies, the bytes are not the signed ones
printf x >>"$img"
refused altered "$img: refused, sha256 [0-9a-f]{64} is not the sha256 $sha its signature $img.sig signs with the key $work/test.pub" -e "$key"

echo "$failures failed"
[ "$failures" -eq 0 ]
