#!/bin/sh
# The tuning role's extlinux step alone (tasks/extlinux.yml) on files in a
# temporary directory: nothing of this machine is touched.
#   run-tuning-extlinux.sh SOURCE_ROOT
# 1. two root slots, running root_b: only root_b's APPEND gets the tuning
#    words, root_a's line and every other byte stay; a second run changes
#    nothing.
# 1b. the IOMMU words (tickwire-check's) replaced, never doubled.
# 2. one APPEND line without root=: it is tuned.
# 3. two APPEND lines, neither with the running root=: the step fails and
#    says why; the file is untouched.
set -eu
src=$(cd "$1" && pwd)
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
export ANSIBLE_CONFIG="$src/ansible/ansible.cfg" ANSIBLE_NOCOLOR=1 ANSIBLE_FORCE_COLOR=0
command -v ansible-playbook >/dev/null || { echo "SKIP: ansible not installed"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export ANSIBLE_LOCAL_TEMP="$work/tmp" ANSIBLE_REMOTE_TEMP="$work/tmp"

cat > "$work/play.yml" <<PLAY
- name: The tuning role's extlinux step
  hosts: localhost
  gather_facts: false
  vars:
    tickwire_tuning_cmdline: isolcpus=1-3 nohz_full=1-3 rcu_nocbs=1-3
  tasks:
    - name: Run tasks/extlinux.yml
      ansible.builtin.include_role:
        name: tickwire_tuning
        tasks_from: extlinux
PLAY

run() { # conf cmdline -> ansible output in $work/out, status in $rc
	rc=0
	ansible-playbook -i localhost, -c local "$work/play.yml" \
		-e "tickwire_tuning_extlinux_conf=$1 tickwire_tuning_proc_cmdline=$2" \
		>"$work/out" 2>&1 || rc=$?
}
fail() { echo "FAIL: $*"; cat "$work/out"; exit 1; }

# 1. two slots
cat > "$work/slots.conf" <<'CONF'
DEFAULT root_b
TIMEOUT 30

LABEL root_a
  KERNEL /vmlinuz-a
  APPEND root=PARTLABEL=root_a console=ttyS0 isolcpus=1 nohz_full=1

LABEL root_b
  KERNEL /vmlinuz-b
  APPEND root=PARTLABEL=root_b console=ttyS0 isolcpus=3
CONF
cp "$work/slots.conf" "$work/slots.orig"
echo "BOOT_IMAGE=/vmlinuz-b root=PARTLABEL=root_b console=ttyS0 isolcpus=3" > "$work/cmdline-b"
run "$work/slots.conf" "$work/cmdline-b"
[ "$rc" = 0 ] || fail "two slots: exit $rc"
grep -q 'changed=1' "$work/out" || fail "two slots: not changed once"
want='  APPEND root=PARTLABEL=root_b console=ttyS0 isolcpus=1-3 nohz_full=1-3 rcu_nocbs=1-3'
grep -qxF "$want" "$work/slots.conf" || fail "root_b's APPEND not tuned: $(grep root_b "$work/slots.conf")"
# every line but root_b's APPEND byte-identical
diff "$work/slots.orig" "$work/slots.conf" | grep '^[<>]' | grep -v 'root=PARTLABEL=root_b' &&
	fail "a line other than root_b's APPEND changed"
grep -qxF '  APPEND root=PARTLABEL=root_a console=ttyS0 isolcpus=1 nohz_full=1' "$work/slots.conf" ||
	fail "the inactive slot root_a's APPEND changed"
run "$work/slots.conf" "$work/cmdline-b"
[ "$rc" = 0 ] && grep -q 'changed=0' "$work/out" || fail "second run not idempotent"
echo "ok: two slots: only the running root_b's APPEND tuned, root_a's kept; idempotent"

# 1b. the IOMMU words are the tuning's too: replaced, never doubled
printf 'DEFAULT linux\nLABEL linux\n  APPEND ro intel_iommu=on iommu=pt quiet\n' > "$work/iommu.conf"
echo "BOOT_IMAGE=/vmlinuz ro" > "$work/cmdline-iommu"
rc=0
ansible-playbook -i localhost, -c local "$work/play.yml" \
	-e "tickwire_tuning_extlinux_conf=$work/iommu.conf tickwire_tuning_proc_cmdline=$work/cmdline-iommu" \
	-e "tickwire_tuning_cmdline='isolcpus=1 intel_iommu=on iommu=pt'" >"$work/out" 2>&1 || rc=$?
[ "$rc" = 0 ] || fail "IOMMU words: exit $rc"
grep -qxF '  APPEND ro quiet isolcpus=1 intel_iommu=on iommu=pt' "$work/iommu.conf" ||
	fail "IOMMU words doubled or lost: $(grep APPEND "$work/iommu.conf")"
echo "ok: the IOMMU words are replaced, not doubled"

# 2. one APPEND line without root=
printf 'DEFAULT linux\nLABEL linux\n  KERNEL /vmlinuz\n  APPEND ro quiet isolcpus=2\n' > "$work/one.conf"
echo "BOOT_IMAGE=/vmlinuz ro quiet" > "$work/cmdline-one"
run "$work/one.conf" "$work/cmdline-one"
[ "$rc" = 0 ] || fail "one APPEND: exit $rc"
grep -qxF '  APPEND ro quiet isolcpus=1-3 nohz_full=1-3 rcu_nocbs=1-3' "$work/one.conf" ||
	fail "one APPEND: not tuned: $(grep APPEND "$work/one.conf")"
echo "ok: a single APPEND line is tuned"

# 3. no APPEND with the running root=
echo "BOOT_IMAGE=/vmlinuz root=UUID=1234 console=ttyS0" > "$work/cmdline-uuid"
cp "$work/slots.orig" "$work/guess.conf"
run "$work/guess.conf" "$work/cmdline-uuid"
[ "$rc" != 0 ] || fail "two APPEND lines, none with the running root=: accepted"
grep -q 'cannot tell apart' "$work/out" || fail "no reason given"
cmp -s "$work/slots.orig" "$work/guess.conf" || fail "the refused file was changed"
echo "ok: no APPEND with the running root=: refused, file untouched"
