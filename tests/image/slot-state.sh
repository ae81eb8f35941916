#!/bin/bash
# image_slot_state: image/files/tickwire-slot (the A/B trial-boot state
# machine) on a fake boot partition, kernel command line, health command and
# reboot; no root, no boot. Each case starts from the image's extlinux.conf
# (DEFAULT root_a) and a trial file as tickwire_flash writes it.
#  1. trial slot healthy: DEFAULT root_b (the rest of extlinux.conf byte for
#     byte), records trial + committed, trial file gone, no reboot;
#  2. trial slot never healthy: DEFAULT unchanged, record failed, one-time
#     boot cleared, reboot; the old slot's boot then records fallen-back
#     with the trial's reason and ends the trial; a boot after that changes
#     nothing;
#  3. the trial slot never booted (kernel, root mount): the old slot records
#     fallen-back "never reached its health check";
#  4. the trial slot booted and died before its verdict: "stopped before";
#  5. the trial slot booted a second time (once not consumed): failed, reboot;
#  6. no trial: nothing written on DEFAULT, a slot other than DEFAULT left
#     uncommitted, no reboot;
#  7. an unreadable trial file on the non-default slot: removed, reboot;
#  8. GRUB (UEFI) beside extlinux: grub.cfg written from extlinux.conf (the
#     same entries and DEFAULT, every kernel argument quoted, grub-script-check
#     clean), grubenv 1024 bytes with next_entry for grub-once; a commit
#     writes DEFAULT into grub.cfg too and clears next_entry, a failed trial
#     clears it; a quote in a kernel argument is refused, grub.cfg kept.
#   slot-state.sh BUILD_ROOT SOURCE_ROOT
set -u
src=$(cd "$2" && pwd)
slot=$src/image/files/tickwire-slot
t=$(mktemp -d /tmp/tw-slot-state.XXXXXX)
trap 'rm -rf "$t"' EXIT
fails=0
fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}
case_fails=0
ok() { # printed only when the case had no failure
	[ $fails != "$case_fails" ] || echo "ok: $*"
	case_fails=$fails
}

extlinux_image() {
	cat <<'EOF'
# tickwire image (image/build)
DEFAULT root_a
PROMPT 0
TIMEOUT 10

LABEL root_a
  KERNEL /root_a/vmlinuz
  APPEND root=PARTLABEL=root_a rw panic=10

LABEL root_b
  KERNEL /root_b/vmlinuz
  APPEND root=PARTLABEL=root_b rw panic=10
EOF
}
setup() { # fresh boot partition with a trial of root_b from root_a (unless "notrial")
	rm -rf "${t:?}/boot" "$t/ev"
	mkdir -p "$t/boot/extlinux" "$t/boot/tickwire"
	extlinux_image >"$t/boot/extlinux/extlinux.conf"
	: >"$t/ev"
	if [ "${1:-}" != notrial ]; then
		echo "attempt=20261205T101010Z-root_b slot=root_b from=root_a timeout=2" >"$t/boot/tickwire/trial"
		echo "2026-12-05T10:10:10Z attempt=20261205T101010Z-root_b slot=root_b state=flashed reason=\"test\"" \
			>"$t/boot/tickwire/attempts"
	fi
}
run() { # BOOTED-SLOT HEALTH-CMD: tickwire-slot boot as that slot's boot would
	echo "BOOT_IMAGE=/$1/vmlinuz root=PARTLABEL=$1 rw panic=10" >"$t/cmdline"
	TW_SLOT_BOOT_DIR=$t/boot TW_SLOT_CONF=$t/none TW_SLOT_CMDLINE=$t/cmdline TW_SLOT_POLL_S=0.2 \
		TW_SLOT_REBOOT_CMD="echo reboot >>$t/ev" TW_SLOT_EXTLINUX="$t/fake-extlinux" \
		TW_SLOT_HEALTH_CMD="$2" "$slot" boot >"$t/out" 2>&1
	rc=$?
	[ $rc = 0 ] || { cat "$t/out"; fail "tickwire-slot boot on $1 exited $rc"; }
}
states() { sed -n 's/.* state=\([a-z-]*\) .*/\1/p' "$t/boot/tickwire/attempts" | tr '\n' ' '; }
events() { tr '\n' ' ' <"$t/ev"; }
default() { sed -n 's/^DEFAULT //p' "$t/boot/extlinux/extlinux.conf"; }
printf '#!/bin/sh\necho "extlinux $*" >>%s\n' "$t/ev" >"$t/fake-extlinux"
chmod +x "$t/fake-extlinux"

# 1. healthy trial: committed
setup
run root_b true
[ "$(default)" = root_b ] || fail "1: DEFAULT $(default), want root_b"
extlinux_image | sed 's/^DEFAULT root_a$/DEFAULT root_b/' | cmp -s - "$t/boot/extlinux/extlinux.conf" ||
	fail "1: extlinux.conf differs from the image's in more than DEFAULT"
[ "$(states)" = "flashed trial committed " ] || fail "1: states '$(states)'"
[ ! -e "$t/boot/tickwire/trial" ] || fail "1: trial file left"
[ -z "$(events)" ] || fail "1: events '$(events)'"
for f in "$t"/boot/extlinux/*.tickwire-slot.*; do [ ! -e "$f" ] || fail "1: temporary file $f left"; done
grep -q 'state=committed reason="healthy; DEFAULT root_b (was root_a)"' "$t/out" || fail "1: no committed line on stdout (the journal)"
# a later boot of root_b: committed, nothing written
cp "$t/boot/tickwire/attempts" "$t/attempts.1"
run root_b false
cmp -s "$t/attempts.1" "$t/boot/tickwire/attempts" || fail "1: a boot after the commit wrote a record"
[ -z "$(events)" ] || fail "1: a boot after the commit: events '$(events)'"
ok "healthy trial: DEFAULT root_b, flashed -> trial -> committed, no reboot; the next boot changes nothing"

# 2. never healthy: failed, reboot, then the old slot records the fallback
setup
start=$SECONDS
run root_b false
[ $((SECONDS - start)) -ge 2 ] || fail "2: gave up before the 2 s timeout of the trial file"
[ "$(default)" = root_a ] || fail "2: DEFAULT $(default), want root_a"
extlinux_image | cmp -s - "$t/boot/extlinux/extlinux.conf" || fail "2: extlinux.conf changed"
[ "$(states)" = "flashed trial failed " ] || fail "2: states '$(states)'"
[ "$(events)" = "extlinux --clear-once $t/boot/extlinux reboot " ] || fail "2: events '$(events)'"
[ -e "$t/boot/tickwire/trial" ] || fail "2: the trial ended before the old slot saw it"
: >"$t/ev"
run root_a true
[ "$(states)" = "flashed trial failed fallen-back " ] || fail "2: old slot: states '$(states)'"
grep -q 'slot=root_a state=fallen-back reason="root_b: not healthy within 2s (false)"' "$t/boot/tickwire/attempts" ||
	fail "2: fallen-back line: $(tail -n 1 "$t/boot/tickwire/attempts")"
[ ! -e "$t/boot/tickwire/trial" ] || fail "2: trial file left after the fallback"
[ -z "$(events)" ] || fail "2: old slot: events '$(events)'"
extlinux_image | cmp -s - "$t/boot/extlinux/extlinux.conf" || fail "2: extlinux.conf changed by the old slot"
cp "$t/boot/tickwire/attempts" "$t/attempts.2"
run root_a true
cmp -s "$t/attempts.2" "$t/boot/tickwire/attempts" || fail "2: a further boot wrote a record"
ok "never healthy: failed after the timeout, one-time boot cleared, reboot; root_a records fallen-back with the reason"

# 3. the trial slot never booted
setup
run root_a true
[ "$(states)" = "flashed fallen-back " ] || fail "3: states '$(states)'"
grep -q 'reason="root_b never reached its health check' "$t/boot/tickwire/attempts" || fail "3: reason: $(tail -n 1 "$t/boot/tickwire/attempts")"
if [ "$(default)" != root_a ] || [ -e "$t/boot/tickwire/trial" ] || [ -n "$(events)" ]; then fail "3: DEFAULT $(default), events '$(events)'"; fi
ok "trial slot never booted: root_a records fallen-back (never reached its health check)"

# 4. booted, then died before its verdict
setup
echo "2026-12-05T10:11:00Z attempt=20261205T101010Z-root_b slot=root_b state=trial reason=\"test\"" >>"$t/boot/tickwire/attempts"
run root_a true
grep -q 'state=fallen-back reason="root_b booted but stopped before its health verdict' "$t/boot/tickwire/attempts" ||
	fail "4: reason: $(tail -n 1 "$t/boot/tickwire/attempts")"
ok "trial slot died before its verdict: root_a records fallen-back (stopped before its health verdict)"

# 5. the trial slot boots a second time
setup
echo "2026-12-05T10:11:00Z attempt=20261205T101010Z-root_b slot=root_b state=trial reason=\"test\"" >>"$t/boot/tickwire/attempts"
run root_b true
[ "$(default)" = root_a ] || fail "5: a second trial boot committed"
[ "$(states)" = "flashed trial failed " ] || fail "5: states '$(states)'"
[ "$(events)" = "extlinux --clear-once $t/boot/extlinux reboot " ] || fail "5: events '$(events)'"
ok "second boot of the trial slot: failed, reboot to root_a, no commit"

# 6. no trial
setup notrial
run root_a false
[ ! -e "$t/boot/tickwire/attempts" ] || fail "6: a record without a trial"
run root_b true
[ "$(default)" = root_a ] || fail "6: root_b committed without a trial"
if [ -e "$t/boot/tickwire/attempts" ] || [ -n "$(events)" ]; then fail "6: wrote or rebooted: events '$(events)'"; fi
grep -q "not DEFAULT (root_a) and no trial is recorded" "$t/out" || fail "6: no warning: $(cat "$t/out")"
ok "no trial: nothing recorded on DEFAULT; a non-default slot left uncommitted, no reboot"

# 7. an unreadable trial file
setup
echo "garbage" >"$t/boot/tickwire/trial"
run root_b true
[ "$(default)" = root_a ] || fail "7: committed an unreadable trial"
[ ! -e "$t/boot/tickwire/trial" ] || fail "7: unreadable trial file left"
[ "$(events)" = "extlinux --clear-once $t/boot/extlinux reboot " ] || fail "7: events '$(events)'"
ok "unreadable trial file on root_b: removed, no commit, reboot to root_a"

# 8. GRUB beside extlinux
slotcmd() { TW_SLOT_BOOT_DIR=$t/boot TW_SLOT_CONF=$t/none "$slot" "$@"; }
grub_setup() { # a boot partition with /grub, grub.cfg written, $1: a pending next_entry
	setup "${2:-}"
	mkdir -p "$t/boot/grub"
	slotcmd grub-sync || fail "8: grub-sync exited $?"
	slotcmd grub-once "${1:---clear}" || fail "8: grub-once ${1:---clear} exited $?"
}
grub_next() { sed -n 's/^next_entry=//p' "$t/boot/grub/grubenv"; }
grub_default() { sed -n 's/^set default=//p' "$t/boot/grub/grub.cfg"; }
grub_setup root_b
cfg=$t/boot/grub/grub.cfg
[ "$(grub_default)" = root_a ] || fail "8: grub.cfg default '$(grub_default)', want root_a"
for slot_ in root_a root_b; do
	grep -qx "menuentry $slot_ --id $slot_ {" "$cfg" || fail "8: no menuentry $slot_"
	grep -qxF "	linux /$slot_/vmlinuz 'root=PARTLABEL=$slot_' 'rw' 'panic=10'" "$cfg" ||
		fail "8: $slot_'s linux line: $(grep "linux /$slot_/" "$cfg")"
done
if command -v grub-script-check >/dev/null; then
	grub-script-check "$cfg" || fail "8: grub-script-check refuses grub.cfg"
fi
[ "$(stat -c %s "$t/boot/grub/grubenv")" = 1024 ] || fail "8: grubenv is $(stat -c %s "$t/boot/grub/grubenv") bytes"
[ "$(head -c 44 "$t/boot/grub/grubenv")" = "# GRUB Environment Block
next_entry=root_b
#" ] || fail "8: grubenv: $(head -c 60 "$t/boot/grub/grubenv")"
if slotcmd grub-once root_c 2>/dev/null; then fail "8: grub-once of a slot grub.cfg does not have"; fi
[ "$(grub_next)" = root_b ] || fail "8: a refused grub-once changed grubenv"
run root_b true
[ "$(grub_default)" = root_b ] || fail "8: commit: grub.cfg default '$(grub_default)'"
[ -z "$(grub_next)" ] || fail "8: commit: next_entry '$(grub_next)' left"
[ "$(stat -c %s "$t/boot/grub/grubenv")" = 1024 ] || fail "8: commit: grubenv not 1024 bytes"
grub_setup root_b
run root_b false
[ "$(grub_default)" = root_a ] || fail "8: failed trial: grub.cfg default '$(grub_default)'"
[ -z "$(grub_next)" ] || fail "8: failed trial: next_entry '$(grub_next)' left"
cp "$cfg" "$t/grub.cfg.before"
sed -i "s/ panic=10\$/ tw_arg=it's/" "$t/boot/extlinux/extlinux.conf"
if slotcmd grub-sync 2>"$t/err"; then fail "8: a quote in a kernel argument was written into grub.cfg"; fi
grep -q "a quote in kernel argument tw_arg=it's" "$t/err" || fail "8: refusal: $(cat "$t/err")"
cmp -s "$t/grub.cfg.before" "$cfg" || fail "8: grub.cfg changed by a refused grub-sync"
# without /boot/grub (a BIOS-only disk) the grub commands do nothing
setup notrial
if ! slotcmd grub-sync || ! slotcmd grub-once root_b; then fail "8: grub commands fail without /boot/grub"; fi
[ ! -e "$t/boot/grub" ] || fail "8: grub commands made /boot/grub"
ok "GRUB: grub.cfg from extlinux.conf (quoted arguments), grubenv next_entry; commit and fallback keep both loaders in step"

# the status command
echo "BOOT_IMAGE=/root_a/vmlinuz root=PARTLABEL=root_a" >"$t/cmdline"
st=$(TW_SLOT_BOOT_DIR=$t/boot TW_SLOT_CONF=$t/none TW_SLOT_CMDLINE=$t/cmdline TW_SLOT_EFI_DIR=$t/none \
	"$slot" status | head -n 2 | tr '\n' '|')
[ "$st" = "booted=root_a committed=root_a firmware=bios|trial: none|" ] || fail "status: '$st'"
mkdir -p "$t/efi"
st=$(TW_SLOT_BOOT_DIR=$t/boot TW_SLOT_CONF=$t/none TW_SLOT_CMDLINE=$t/cmdline TW_SLOT_EFI_DIR=$t/efi \
	"$slot" status | head -n 1)
[ "$st" = "booted=root_a committed=root_a firmware=uefi" ] || fail "status under UEFI: '$st'"
TW_SLOT_CONF=$t/none "$slot" frobnicate >/dev/null 2>&1
[ $? = 2 ] || fail "an unknown command does not exit 2"

if [ $fails -gt 0 ]; then
	echo "$fails failure(s)"
	exit 1
fi
echo PASS
