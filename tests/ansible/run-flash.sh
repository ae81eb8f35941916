#!/bin/sh
# ansible_flash: the tickwire_flash role for real, against localhost
# (connection local), on loop devices over files made here only.
#   run-flash.sh SOURCE_ROOT BUILD_ROOT
# The image: TW_FLASH_IMAGE, else the image suite's BUILD/tests/image/tickwire.raw,
# else one built here (BUILD/tests/ansible/flash/tickwire.raw, reused). It is
# only read. The "target disk" is a sparse copy of it, attached with
# losetup --partscan; its boot partition is mounted on a directory here.
#  1. refused, target byte-identical (sha256 of the whole file): a wrong
#     expected sha256 (before anything is staged); an extlinux.conf of the
#     older layout (one kernel for both slots); a root_b slot 1 MiB smaller
#     than the image's root partition;
#  2. slot mode, active root_a (the cmdline file), the "good" variant of the
#     image: root_b's bytes = its root partition, /root_b/{vmlinuz,initrd.img}
#     = its /usr/lib/tickwire/boot copies (stale ones were put there first),
#     DEFAULT still root_a, a one-time boot of root_b in ldlinux.sys's ADV
#     (nothing else of it changed), the trial and a "flashed" record in
#     /boot/tickwire; root_a / its kernel / the GPT untouched;
#  3. the trial boot under qemu (image/qemu-run --reboot --check, i6300esb):
#     root_b boots once, tickwire-slot finds it healthy and makes it DEFAULT,
#     the check passes on root_b; the record says trial, committed, and the
#     role's verdict tasks (verdict.yml) report it committed;
#  4. the "sick" variant (its health command never passes) into root_a,
#     active root_b, tickwire_flash_trial_timeout 20: root_a written, root_b
#     untouched; its trial boot gives up after 20 s and reboots, the host
#     comes back on root_b (the DEFAULT the commit of 3 wrote) by itself and
#     records fallen-back with the reason; the verdict tasks fail the host;
#  5. the "unbootable" variant (its kernel cannot mount its root:
#     rootfstype=btrfs) into root_a: the initramfs gives up, panic=10
#     reboots, extlinux's one-time boot is spent, root_b comes back and
#     records fallen-back (never reached its health check); after each
#     failed trial the files of root_b's usr/ and etc/ are what they were
#     before it (sha256 of each; root_b itself changes by running);
#  6. disk mode onto a blank sparse file: read-back sha256 = the image's.
# Two loaders: the trial boots of the good and the unbootable variant run
# under UEFI (OVMF: GRUB from the EFI system partition, its one-time boot in
# /boot/grub/grubenv), the sick one under legacy BIOS (SeaBIOS: extlinux);
# after each flash grub.cfg is extlinux.conf's (the new APPEND line, DEFAULT)
# and grubenv names the trial slot; a commit moves GRUB's default too, and
# every trial leaves GRUB's one-time boot spent.
# The state both slots share: before the first flash a session journal
# (tw-journal-plant, the appliance's own writer) goes onto the data partition
# (partition 4, /var/lib/tickwire); no flash changes a byte of that partition;
# after the switch to root_b the boot check reads the same numbers back
# (tickwire-session), and so does the sick root_a's trial after the switch
# back (its health command logs them onto the data partition). An image that
# needs the data partition is refused on a disk without one.
# The variants are copies of the image with one file of their root partition
# changed, signed with the test's key.
# Every loop device is detached and everything unmounted on exit.
# TW_FLASH_BOOT_TIMEOUT (s, default 600) bounds each qemu run.
set -eu
src=$(cd "$1" && pwd)
build=$(cd "$2" && pwd)
dir=$build/tests/ansible/flash
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (loop devices, mounts)"; exit 77; }
plant=$build/tests/image/tw-journal-plant
[ -x "$plant" ] || { echo "FAIL: $plant not built (ninja -C $build)"; exit 1; }
for t in ansible-playbook losetup partx sfdisk blockdev sha256sum qemu-system-x86_64 signify-openbsd blkid; do
	command -v $t >/dev/null || { echo "SKIP: $t not installed"; exit 77; }
done
[ -r /usr/share/OVMF/OVMF_CODE_4M.fd ] || { echo "SKIP: no OVMF (apt-get install ovmf)"; exit 77; }
ansible-doc -t module ansible.posix.mount >/dev/null 2>&1 || { echo "SKIP: no ansible.posix collection"; exit 77; }
start=$(date +%s)
lap=$start
phase() { # what was done since the last phase
	now=$(date +%s)
	echo "[$((now - lap)) s] $*"
	lap=$now
}
fail() {
	echo "FAIL: $*"
	exit 1
}
mkdir -p "$dir"
work=$dir/work

# --- cleanup: every mount and loop device made here, also on failure -------
mounts=
loops=
cleanup() {
	rc=$?
	for m in $mounts; do
		if mountpoint -q "$m"; then umount "$m" || umount -l "$m" || true; fi
	done
	# the role's own mount of the image, if a run was killed halfway
	findmnt -rn -o TARGET | grep '\.tickwire-flash$' | while read -r m; do umount "$m" || true; done
	for l in $loops; do losetup -d "$l" 2>/dev/null || true; done
	# and anything still attached to our files (the role's image loop)
	for f in "$work/target.raw" "$work/blank.raw" "$work/good.raw" "$work/sick.raw" "$work/unbootable.raw" "${img:-/nonexistent}"; do
		[ -e "$f" ] || continue
		losetup -l -n -O NAME -j "$f" 2>/dev/null | while read -r l; do losetup -d "$l" || true; done
	done
	rm -f "$work/target.raw" "$work/blank.raw" "$work/good.raw" "$work/sick.raw" "$work/unbootable.raw"
	rm -rf "$work/stage"
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM
# loop devices and mounts are recorded here (not in $(...) subshells)
attach() { # FILE [losetup options]: sets $loop (registered for cleanup)
	f=$1
	shift
	loop=$(losetup --find --show "$@" "$f")
	loops="$loop $loops"
}
detach() {
	losetup -d "$1"
	loops=$(echo "$loops" | tr ' ' '\n' | grep -vx "$1" | tr '\n' ' ' || true)
}
partscan() { # FILE [losetup options]: with partition devices (partx, for kernels without parsers)
	f=$1
	shift
	attach "$f" --partscan "$@"
	partx --update "$loop"
}
mnt() { # DEV DIR [mount options]
	mkdir -p "$2"
	if [ $# -gt 2 ]; then mount -o "$3" "$1" "$2"; else mount "$1" "$2"; fi
	mounts="$2 $mounts"
}
unmnt() {
	umount "$1"
	mounts=$(echo "$mounts" | tr ' ' '\n' | grep -vx "$1" | tr '\n' ' ' || true)
}
# sha256 of a file or the first BYTES of a device: openssl's (about 2.5 times
# coreutils' speed here, sha extensions), else sha256sum
if command -v openssl >/dev/null; then
	sha256() { openssl dgst -sha256 -r | cut -d' ' -f1; }
else
	sha256() { sha256sum | cut -d' ' -f1; }
fi
sum() { sha256 <"$1"; }
headsum() { head -c "$2" "$1" | sha256; } # DEV BYTES

rm -rf "$work"
mkdir -p "$work/stage"
# the role's temporary copies of tickwire-slot there before (a killed run's)
slot_copies() { find /tmp -maxdepth 1 -name 'ansible.*.tickwire-slot' | LC_ALL=C sort; }
slot_copies >"$work/slot-copies"

# --- the image --------------------------------------------------------------
img=${TW_FLASH_IMAGE:-}
if [ -z "$img" ] && [ -s "$build/tests/image/tickwire.raw" ]; then
	img=$build/tests/image/tickwire.raw
fi
if [ -z "$img" ]; then
	img=$dir/tickwire.raw
	if [ ! -s "$img" ]; then
		t=$(date +%s)
		"$src/image/build" --build-dir "$build" --out "$img" >"$dir/image-build.log" 2>&1 ||
			{ tail -n 30 "$dir/image-build.log"; fail "image/build failed"; }
		echo "image built in $(($(date +%s) - t)) s"
	fi
fi
img=$(cd "$(dirname "$img")" && pwd)/$(basename "$img")
echo "image: $img"
if [ -s "$img.sha256" ]; then
	imgsum=$(cut -d' ' -f1 "$img.sha256")
else
	imgsum=$(sum "$img")
fi
imgsize=$(stat -c %s "$img")
partscan "$img" --read-only
iloop=$loop
partsize=$(blockdev --getsize64 "${iloop}p2")
mnt "${iloop}p2" "$work/img-root" ro,noload
kdir=$work/img-root/usr/lib/tickwire/boot
for f in vmlinuz initrd.img; do
	[ -f "$kdir/$f" ] || fail "the image's root filesystem has no /usr/lib/tickwire/boot/$f (an image of an older image/build)"
done
ksum_vmlinuz=$(sum "$kdir/vmlinuz")
ksum_initrd=$(sum "$kdir/initrd.img")
unmnt "$work/img-root"
detach "$iloop"
phase "image: sha256 $imgsum, root partition $partsize bytes, kernel $ksum_vmlinuz"
# the role flashes signed images only: a throw-away key pair, the image's
# checksum line signed as image/lib/sign-image does (the image is only read)
signify-openbsd -G -n -c "tickwire flash test key" -p "$work/sign.pub" -s "$work/sign.sec"
sign() { # IMAGE SUM SIG
	printf 'SHA256 (%s) = %s\n' "$(basename "$1")" "$2" >"$3.SHA256"
	signify-openbsd -S -e -s "$work/sign.sec" -m "$3.SHA256" -x "$3"
}
sign "$img" "$imgsum" "$work/image.sig"
# the variants: the image with one file of its root filesystem changed
variant() { # NAME FILE CONTENT: $work/NAME.raw and its .sig; sets vsum, vpart (its root partition's sha256)
	v=$work/$1.raw
	cp --sparse=always "$img" "$v"
	partscan "$v"
	mnt "${loop}p2" "$work/vroot"
	printf '%s\n' "$3" >"$work/vroot/$2"
	unmnt "$work/vroot"
	vpart=$(sum "${loop}p2")
	detach "$loop"
	vsum=$(sum "$v")
	sign "$v" "$vsum" "$v.sig"
}
# good: healthy once tickwire.service has replayed the capture and exited 0
# (the qemu profile's appliance is a finite replay; a live host's gate is
# tickwire-health, written by the tickwire_service role)
# shellcheck disable=SC2016 # expanded by tickwire-slot on the guest
variant good etc/tickwire/slot.conf 'TW_SLOT_HEALTH_TIMEOUT=600
TW_SLOT_HEALTH_CMD='"'"'test "$(systemctl show -P ActiveState tickwire.service)/$(systemctl show -P Result tickwire.service)/$(systemctl show -P ExecMainStatus tickwire.service)" = inactive/success/0 && journalctl -u tickwire.service -o cat | grep -q "^== tickwire: replay finished"'"'"
good_sum=$vsum good_part=$vpart
# (sick: what the trial slot reads of the session journal goes onto the data
# partition, then the check fails)
variant sick etc/tickwire/slot.conf 'TW_SLOT_HEALTH_TIMEOUT=600
TW_SLOT_HEALTH_CMD='"'"'/usr/local/bin/tickwire-session /var/lib/tickwire/tickwire.session >/var/lib/tickwire/trial-read.log 2>&1; false'"'"
sick_sum=$vsum sick_part=$vpart
partscan "$img" --read-only
mnt "${loop}p2" "$work/img-root" ro,noload
bad_append="$(cat "$work/img-root/usr/lib/tickwire/boot/append") rootfstype=btrfs"
unmnt "$work/img-root"
detach "$loop"
variant unbootable usr/lib/tickwire/boot/append "$bad_append"
unbootable_sum=$vsum unbootable_part=$vpart
rm -f "$work/sign.sec"
phase "variants good, sick, unbootable made and signed"

# --- the target disk: a sparse copy; an older image's kernel in /root_b/ ----
tgt=$work/target.raw
cp --sparse=always "$img" "$tgt"
partscan "$tgt"
tloop=$loop
boot=$work/boot
mnt "${tloop}p1" "$boot"
grep -q '^DEFAULT root_a$' "$boot/extlinux/extlinux.conf" || fail "the image's extlinux.conf does not boot root_a"
echo "stale kernel of an older image" >"$boot/root_b/vmlinuz"
echo "stale initrd of an older image" >"$boot/root_b/initrd.img"
unmnt "$boot"
phase "target: $tgt on $tloop, stale /root_b/ kernel"

# --- the role -----------------------------------------------------------------
cat >"$work/flash.yml" <<'EOF'
---
- name: Flash (tests/ansible/run-flash.sh)
  hosts: all
  gather_facts: false
  roles:
    - role: tickwire_flash
EOF
# ansible-playbook against localhost; profile_tasks: each task's time in the log
play() { # LOG PLAYBOOK [ansible-playbook options]: the exit status of the play
	log=$1
	shift
	(cd "$src/ansible" && ANSIBLE_CONFIG="$src/ansible/ansible.cfg" ANSIBLE_NOCOLOR=1 \
		ANSIBLE_LOCAL_TEMP="$work/ansible-tmp" ANSIBLE_RETRY_FILES_ENABLED=false \
		ANSIBLE_CALLBACKS_ENABLED=ansible.posix.profile_tasks PROFILE_TASKS_TASK_OUTPUT_LIMIT=12 \
		ansible-playbook -i localhost, -c local -e ansible_python_interpreter=/usr/bin/python3 "$@") >"$log" 2>&1
}
run=0
use() { # IMAGE SUM SIGNATURE: what flash() flashes
	fimg=$1 fsum=$2 fsig=$3
}
use "$img" "$imgsum" "$work/image.sig"
flash() { # LOG ACTIVE-SLOT MODE [ansible-playbook options]: the exit status of the play
	log=$1 active=$2 mode=$3
	shift 3
	run=$((run + 1))
	echo "BOOT_IMAGE=/$active/vmlinuz root=PARTLABEL=$active rw console=ttyS0,115200n8" >"$work/cmdline.$run"
	cat >"$work/vars.$run.json" <<EOF
{"tickwire_flash_image": "$fimg", "tickwire_flash_image_sha256": "$fsum",
 "tickwire_flash_mode": "$mode", "tickwire_flash_stage_dir": "$work/stage",
 "tickwire_flash_slots": {"root_a": "${tloop}p2", "root_b": "${tloop}p3"},
 "tickwire_flash_image_signature": "$fsig", "tickwire_flash_signify_pubkey": "$work/sign.pub",
 "tickwire_flash_cmdline_file": "$work/cmdline.$run", "tickwire_flash_boot_dir": "$boot",
 "tickwire_flash_data_dev": "${tloop}p4",
 "tickwire_flash_reboot": false}
EOF
	play "$log" "$work/flash.yml" -e "@$work/vars.$run.json" "$@"
}
refused() { # LOG WHY-PATTERN (grep -E) TITLE
	grep -E "^localhost +: .*failed=1" "$1" >/dev/null || { tail -n 30 "$1"; fail "$3: the play did not fail"; }
	grep -Eq "$2" "$1" || { tail -n 30 "$1"; fail "$3: not refused for the expected reason /$2/"; }
	if grep -Eq 'TASK \[tickwire_flash : (Write the|Copy the|Boot the new slot|Record the attempt)' "$1"; then
		fail "$3: a writing task ran"
	fi
}

# --- 1. refusals: the target stays byte-identical -----------------------------
mnt "${tloop}p1" "$boot" ro,noload # read-only: the mount itself writes nothing
before=$(sum "$tgt")
phase "target sha256 $before"

flash "$work/bad-sha.log" root_a slot -e tickwire_flash_image_sha256=0000000000000000000000000000000000000000000000000000000000000000 || true
refused "$work/bad-sha.log" "sha256 $imgsum, expected 0{64}" "wrong sha256"
[ -z "$(ls -A "$work/stage")" ] || fail "wrong sha256: something was staged"
[ "$(sum "$tgt")" = "$before" ] || fail "wrong sha256: the target changed"
phase "wrong expected sha256: refused on the controller, nothing staged, target unchanged"

# the boot layout of an older image/build (one kernel for both slots), in a
# copy of extlinux.conf: refused before the image is even checksummed
sed 's|^\( *KERNEL\) /root_b/vmlinuz$|\1 /vmlinuz-6.1.0-old-amd64|' "$boot/extlinux/extlinux.conf" >"$work/extlinux.old"
flash "$work/old-layout.log" root_a slot -e tickwire_flash_image_on_target=true \
	-e "tickwire_flash_extlinux_conf=$work/extlinux.old" || true
refused "$work/old-layout.log" "LABEL root_b must boot /root_b/vmlinuz" "old boot layout"
if grep -q 'TASK \[tickwire_flash : Checksum of the image' "$work/old-layout.log"; then
	fail "old boot layout: refused only after the image's checksum"
fi
[ "$(sum "$tgt")" = "$before" ] || fail "old boot layout: the target changed"
phase "boot partition of the older layout: refused before the image is read, target unchanged"

p3start=$(partx -g -n 3 -o START "$tgt" | tr -d ' ')
attach "$tgt" --offset $((p3start * 512)) --sizelimit $((partsize - 1048576))
small=$loop
flash "$work/small-slot.log" root_a slot -e tickwire_flash_image_on_target=true \
	-e "{\"tickwire_flash_slots\": {\"root_a\": \"${tloop}p2\", \"root_b\": \"$small\"}}" || true
refused "$work/small-slot.log" "$small \($((partsize - 1048576)) bytes\) is smaller than the image's root partition" "small slot"
detach "$small"
[ "$(sum "$tgt")" = "$before" ] || fail "small slot: the target changed"
[ -z "$(losetup -l -n -O NAME -j "$img")" ] || fail "small slot: the role left the image attached"
phase "slot 1 MiB smaller than the root partition: refused, target unchanged, image detached"

flash "$work/no-data.log" root_a slot -e tickwire_flash_image_on_target=true -e "tickwire_flash_data_dev=${tloop}p3" || true
refused "$work/no-data.log" "mounts /var/lib/tickwire from the partition labelled data .* ${tloop}p3 on localhost is not one" "no data partition"
[ "$(sum "$tgt")" = "$before" ] || fail "no data partition: the target changed"
phase "a disk without the data partition the image mounts: refused, target unchanged"

# --- 2. slot mode, root_a active: the good variant into root_b ----------------
unmnt "$boot"
mnt "${tloop}p1" "$boot"
cp "$boot/extlinux/extlinux.conf" "$work/extlinux.image"
# root_b as an older image left it: another core map on its APPEND line. The
# flash must give the slot the new root's line (and keep its root=).
age_append() { # slot
	sed -i "/^LABEL $1\$/,/^LABEL /s/ hugepages=256/ hugepages=64 tw_stale_core_map=1/" "$boot/extlinux/extlinux.conf"
	[ "$(grep -c tw_stale_core_map "$boot/extlinux/extlinux.conf")" = 1 ] || fail "test set-up: no APPEND hugepages=256 of $1 to age"
}
age_append root_b
a_sum=$(sum "${tloop}p2")
# the journal the running slot (root_a) left on the data partition
mnt "${tloop}p4" "$work/data"
"$plant" "$work/data/tickwire.session" 4242 17 99 20261205
unmnt "$work/data"
journal_want="journal=out:4242,in:17,clordid:99"
data_sum=$(sum "${tloop}p4")
bootsums() { (cd "$boot" && sha256sum root_a/* root_b/* extlinux/ldlinux.c32); }
bootsums >"$work/bootsums.before"
cp "$boot/extlinux/ldlinux.sys" "$work/ldlinux.before"
gpt_head=$(headsum "$tgt" 1048576)
gpt_tail=$(tail -c 1048576 "$tgt" | sha256)
phase "before the slot flash: root_a, boot files, GPT recorded"

# the one-time boot lives in ldlinux.sys's ADV (its last 1 KiB, two copies):
# the rest of the file is the loader and must not change
# GRUB's side (UEFI): grub.cfg's default and grubenv's one-time boot
grub_state() {
	[ "$(stat -c %s "$boot/grub/grubenv")" = 1024 ] || fail "grubenv is not 1024 bytes"
	echo "default=$(sed -n 's/^set default=//p' "$boot/grub/grub.cfg") next=$(sed -n 's/^next_entry=//p' "$boot/grub/grubenv")"
}
grub_is() { # STATE WHEN
	[ "$(grub_state)" = "$1" ] || fail "$2: GRUB $(grub_state), want $1"
	# grub.cfg is extlinux.conf's: each APPEND line is a linux line
	sed -n 's/^ *APPEND //p' "$boot/extlinux/extlinux.conf" | tr -d "'" >"$work/appends.extlinux"
	sed -n "s/^	linux [^ ]* //p" "$boot/grub/grub.cfg" | tr -d "'" >"$work/appends.grub"
	cmp -s "$work/appends.extlinux" "$work/appends.grub" ||
		{ diff "$work/appends.extlinux" "$work/appends.grub"; fail "$2: grub.cfg's command lines are not extlinux.conf's"; }
	slot_copies | cmp -s "$work/slot-copies" - ||
		fail "$2: the role left its copy of tickwire-slot in /tmp: $(slot_copies | tr '\n' ' ')"
}
adv_once() { # SLOT: ldlinux.sys = the recorded one but for an ADV naming SLOT
	n=$(($(stat -c %s "$work/ldlinux.before") - 1024))
	[ "$(headsum "$boot/extlinux/ldlinux.sys" $n)" = "$(headsum "$work/ldlinux.before" $n)" ] ||
		fail "ldlinux.sys changed outside its ADV"
	[ "$(tail -c 1024 "$boot/extlinux/ldlinux.sys" | tr -c 'a-z_' '\n' | grep -cx "$1")" = 2 ] ||
		fail "ldlinux.sys's ADV does not name $1 for the one-time boot"
}
trial_of() { # SLOT FROM [TIMEOUT]: the trial file and the last record as tickwire_flash writes them
	want="^attempt=[0-9]{8}T[0-9]{6}Z-$1 slot=$1 from=$2${3:+ timeout=$3}\$"
	grep -Eq "$want" "$boot/tickwire/trial" || fail "trial file: '$(cat "$boot/tickwire/trial")', want /$want/"
	attempt=$(sed -n 's/^attempt=\([^ ]*\) .*/\1/p' "$boot/tickwire/trial")
	tail -n 1 "$boot/tickwire/attempts" | grep -Eq " attempt=$attempt slot=$1 state=flashed reason=\"image sha256 $fsum " ||
		fail "no flashed record: $(tail -n 1 "$boot/tickwire/attempts")"
}

use "$work/good.raw" "$good_sum" "$work/good.raw.sig"
flash "$work/flash-b.log" root_a slot || { tail -n 40 "$work/flash-b.log"; fail "slot flash into root_b failed"; }
grep -E '^localhost +: ' "$work/flash-b.log"
grep -q 'localhost boots root_b next, once, on trial' "$work/flash-b.log" || fail "no 'boots root_b next, once, on trial' from the handler"
phase "slot flash of the good variant into root_b (image staged by copy)"
[ "$(headsum "${tloop}p3" "$partsize")" = "$good_part" ] || fail "root_b: the first $partsize bytes are not the good variant's root partition"
[ "$(sum "$boot/root_b/vmlinuz")" = "$ksum_vmlinuz" ] || fail "/root_b/vmlinuz is not the image rootfs's kernel"
[ "$(sum "$boot/root_b/initrd.img")" = "$ksum_initrd" ] || fail "/root_b/initrd.img is not the image rootfs's initrd"
cmp -s "$work/extlinux.image" "$boot/extlinux/extlinux.conf" ||
	{ diff "$work/extlinux.image" "$boot/extlinux/extlinux.conf"; fail "extlinux.conf is not the image's (DEFAULT root_a, root_b's APPEND the new root's)"; }
adv_once root_b
grub_is "default=root_a next=root_b" "after the slot flash of root_b"
trial_of root_b root_a
[ "$(sum "${tloop}p2")" = "$a_sum" ] || fail "root_a changed"
[ "$(sum "${tloop}p4")" = "$data_sum" ] || fail "the data partition changed in the slot flash"
bootsums | grep -v ' root_b/' >"$work/bootsums.after"
grep -v ' root_b/' "$work/bootsums.before" | cmp -s - "$work/bootsums.after" || fail "/root_a/ or ldlinux.c32 changed"
[ "$(headsum "$tgt" 1048576)" = "$gpt_head" ] || fail "the protective MBR / primary GPT changed"
[ "$(tail -c 1048576 "$tgt" | sha256)" = "$gpt_tail" ] || fail "the backup GPT changed"
[ -z "$(ls -A "$work/stage")" ] || fail "the staged image was not removed"
[ -z "$(losetup -l -n -O NAME -j "$fimg")" ] || fail "the role left the image attached"
if findmnt -rn -o TARGET | grep -q '\.tickwire-flash$'; then fail "the role left the image mounted"; fi
phase "root_b = good variant, /root_b/ kernel+initrd = image's, root_b's stale APPEND replaced; DEFAULT root_a, one-time boot root_b (ADV), trial + flashed record; root_a, /root_a/, GPT unchanged"

# --- boots: the target under qemu, reboots allowed, until the check powers off
boot() { # NAME [--uefi]: sets $line, the boot check's last result line; the target detached meanwhile
	unmnt "$boot"
	detach "$tloop"
	rc=0
	# shellcheck disable=SC2086 # no option or one
	"$src/image/qemu-run" "$tgt" --reboot --check --log "$work/serial.$1.log" ${2:-} \
		--timeout "${TW_FLASH_BOOT_TIMEOUT:-600}" </dev/null >"$work/qemu.$1.out" 2>&1 || rc=$?
	line=$(tr -d '\r' <"$work/serial.$1.log" | grep -a -o 'TICKWIRE-IMAGE-CHECK: .*' | tail -n 1 || true)
	echo "boot $1 (qemu status $rc): $line"
	partscan "$tgt"
	tloop=$loop
	mnt "${tloop}p1" "$boot"
}
boot_failed() { # NAME WHY
	cat "$work/qemu.$1.out"
	tr -d '\r' <"$work/serial.$1.log" | grep -a -E 'tickwire-slot|TICKWIRE|panic|Kernel|ALERT|Rebooting|reboot' | tail -n 30
	fail "boot $1: $2"
}
records() { grep -F " attempt=$attempt " "$boot/tickwire/attempts" | sed -n 's/.* slot=\([a-z_]*\) state=\([a-z-]*\) .*/\1:\2/p' | tr '\n' ' '; }
# the role's verdict tasks on the record the guest left (as after its reboot)
verdict() { # LOG RUNNING-SLOT TARGET: the exit status of the play
	echo "BOOT_IMAGE=/$2/vmlinuz root=PARTLABEL=$2 rw" >"$work/cmdline.verdict"
	cat >"$work/verdict.yml" <<EOF
---
- name: Verdict (tests/ansible/run-flash.sh)
  hosts: all
  gather_facts: false
  tasks:
    - name: The role's verdict tasks
      ansible.builtin.include_role:
        name: tickwire_flash
        tasks_from: verdict.yml
      vars:
        tickwire_flash_attempt: "$attempt"
        tickwire_flash_target: "$3"
        tickwire_flash_boot_dir: "$boot"
        tickwire_flash_cmdline_file: "$work/cmdline.verdict"
        tickwire_flash_verdict_timeout: 2
        tickwire_flash_verdict_poll_s: 1
EOF
	play "$1" "$work/verdict.yml"
}

# --- 3. the trial boot of root_b: healthy, committed ------------------------------
boot trial-good --uefi
case $line in
"TICKWIRE-IMAGE-CHECK: PASS slot=root_b "*" firmware=uefi "*" committed=root_b "*) ;;
*) boot_failed trial-good "the check did not pass on root_b, booted by UEFI, with root_b committed" ;;
esac
grub_is "default=root_b next=" "after the commit"
grep -q '^DEFAULT root_b$' "$boot/extlinux/extlinux.conf" || fail "after the commit: $(grep DEFAULT "$boot/extlinux/extlinux.conf")"
[ "$(records)" = "root_b:flashed root_b:trial root_b:committed " ] || fail "records of $attempt: $(records)"
case " $line " in *" data=ok $journal_want "*) ;; *) fail "root_b does not read the journal root_a left on the data partition ($journal_want)" ;; esac
[ ! -e "$boot/tickwire/trial" ] || fail "the trial file outlived the commit"
verdict "$work/verdict-good.log" root_b root_b || { tail -n 30 "$work/verdict-good.log"; fail "verdict tasks: the committed trial failed the host"; }
grep -q "localhost runs root_b: committed root_b (attempt $attempt" "$work/verdict-good.log" ||
	{ tail -n 30 "$work/verdict-good.log"; fail "verdict tasks: no 'runs root_b: committed'"; }
phase "trial boot by UEFI (GRUB): root_b once, healthy, committed (DEFAULT root_b in extlinux.conf and grub.cfg), check PASS on root_b; the role reports it committed"

# --- 4. the sick variant into root_a: not healthy in 20 s, back on root_b ---------
dd if=/dev/zero of="${tloop}p2" bs=1M count=4 conv=fsync status=none # an older root_a
echo "stale kernel of an older image" >"$boot/root_a/vmlinuz"
echo "stale initrd of an older image" >"$boot/root_a/initrd.img"
age_append root_a
# root_b ran (its journal, its logs): what the flash must not touch is its
# state now
b_sum=$(headsum "${tloop}p3" "$partsize")
# what of root_b does not change by running it (programs, configuration):
# the same after each failed trial and the boots back on root_b
b_files() { # the sha256 of every file under usr/ and etc/, root_b mounted read-only
	mnt "${tloop}p3" "$work/broot" ro,noload
	(cd "$work/broot" && find usr etc -xdev -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum) >"$work/b-files.$1"
	unmnt "$work/broot"
}
b_files before
data_sum=$(sum "${tloop}p4")
bootsums | grep ' root_b/' >"$work/bootsums-b.before"
cp "$boot/extlinux/ldlinux.sys" "$work/ldlinux.before"
use "$work/sick.raw" "$sick_sum" "$work/sick.raw.sig"
flash "$work/flash-a.log" root_b slot -e tickwire_flash_trial_timeout=20 ||
	{ tail -n 40 "$work/flash-a.log"; fail "slot flash into root_a failed"; }
grep -E '^localhost +: ' "$work/flash-a.log"
[ "$(headsum "${tloop}p2" "$partsize")" = "$sick_part" ] || fail "root_a: not the sick variant's root partition after the second flash"
[ "$(sum "$boot/root_a/vmlinuz")" = "$ksum_vmlinuz" ] || fail "/root_a/vmlinuz is not the image's kernel"
[ "$(sum "$boot/root_a/initrd.img")" = "$ksum_initrd" ] || fail "/root_a/initrd.img is not the image's initrd"
sed 's/^DEFAULT root_a$/DEFAULT root_b/' "$work/extlinux.image" | cmp -s - "$boot/extlinux/extlinux.conf" ||
	{ diff "$work/extlinux.image" "$boot/extlinux/extlinux.conf"; fail "extlinux.conf after the second flash is not the image's with DEFAULT root_b"; }
adv_once root_a
grub_is "default=root_b next=root_a" "after the slot flash of root_a"
trial_of root_a root_b 20
[ "$(headsum "${tloop}p3" "$partsize")" = "$b_sum" ] || fail "root_b changed in the second flash"
[ "$(sum "${tloop}p4")" = "$data_sum" ] || fail "the data partition changed in the second flash"
bootsums | grep ' root_b/' | cmp -s "$work/bootsums-b.before" - || fail "/root_b/ changed in the second flash"
phase "sick variant into root_a (active root_b): DEFAULT root_b, one-time boot root_a, root_b untouched"
boot trial-sick
case $line in
"TICKWIRE-IMAGE-CHECK: PASS slot=root_b "*" firmware=bios "*" committed=root_b "*) ;;
*) boot_failed trial-sick "the host did not come back on root_b by itself" ;;
esac
[ "$(records)" = "root_a:flashed root_a:trial root_a:failed root_b:fallen-back " ] || fail "records of $attempt: $(records)"
grep -F " attempt=$attempt " "$boot/tickwire/attempts" | tail -n 1 |
	grep -q 'state=fallen-back reason="root_a: not healthy within 20s (/usr/local/bin/tickwire-session ' ||
	fail "fallen-back record: $(tail -n 1 "$boot/tickwire/attempts")"
grep -q '^DEFAULT root_b$' "$boot/extlinux/extlinux.conf" || fail "after the fallback: $(grep DEFAULT "$boot/extlinux/extlinux.conf")"
[ ! -e "$boot/tickwire/trial" ] || fail "the trial file outlived the fallback"
grub_is "default=root_b next=" "after the fallback (BIOS)"
if tr -d '\r' <"$work/serial.trial-sick.log" | grep -a -q 'TICKWIRE-IMAGE-CHECK: .* slot=root_a '; then
	fail "the check ran on the failed trial slot (it must reboot before multi-user)"
fi
if verdict "$work/verdict-sick.log" root_b root_a; then
	tail -n 30 "$work/verdict-sick.log"
	fail "verdict tasks: a fallen-back trial passed"
fi
grep -q "localhost runs root_b: FELL BACK from root_a (attempt $attempt: root_a: not healthy within 20s" "$work/verdict-sick.log" ||
	{ tail -n 30 "$work/verdict-sick.log"; fail "verdict tasks: no 'runs root_b: FELL BACK from root_a'"; }
case " $line " in *" data=ok $journal_want "*) ;; *) fail "back on root_b: the journal on the data partition is not $journal_want" ;; esac
mnt "${tloop}p4" "$work/data" ro,noload
grep -q ' state=ok uuid=20261205 .* next_out_seq=4242 next_in_seq=17 next_clordid=99 ' "$work/data/trial-read.log" ||
	fail "the trial slot root_a did not read the journal on the data partition: $(cat "$work/data/trial-read.log" 2>&1)"
unmnt "$work/data"
b_files after-sick
cmp -s "$work/b-files.before" "$work/b-files.after-sick" ||
	{ diff "$work/b-files.before" "$work/b-files.after-sick" | head; fail "root_b's usr/ or etc/ changed by the failed trial"; }
phase "sick trial: not healthy in 20 s, rebooted, back on root_b (still DEFAULT) by itself, fallen-back recorded; the role fails the host and says why; root_a and root_b read the same journal on the data partition; root_b's usr/ and etc/ unchanged"

# --- 5. the unbootable variant into root_a: panic=, back on root_b -----------------
use "$work/unbootable.raw" "$unbootable_sum" "$work/unbootable.raw.sig"
cp "$boot/extlinux/ldlinux.sys" "$work/ldlinux.before"
flash "$work/flash-a2.log" root_b slot -e tickwire_flash_trial_timeout=20 ||
	{ tail -n 40 "$work/flash-a2.log"; fail "slot flash of the unbootable variant failed"; }
[ "$(headsum "${tloop}p2" "$partsize")" = "$unbootable_part" ] || fail "root_a: not the unbootable variant's root partition"
grep -q 'rootfstype=btrfs' "$boot/extlinux/extlinux.conf" || fail "root_a's APPEND does not carry the variant's rootfstype=btrfs"
adv_once root_a
grub_is "default=root_b next=root_a" "after the slot flash of the unbootable variant"
trial_of root_a root_b 20
boot trial-unbootable --uefi
case $line in
"TICKWIRE-IMAGE-CHECK: PASS slot=root_b "*" firmware=uefi "*" committed=root_b "*) ;;
*) boot_failed trial-unbootable "the host did not come back on root_b by itself" ;;
esac
tr -d '\r' <"$work/serial.trial-unbootable.log" | grep -a -q 'Rebooting automatically due to panic= boot argument' ||
	boot_failed trial-unbootable "the initramfs did not reboot by panic="
[ "$(records)" = "root_a:flashed root_b:fallen-back " ] || fail "records of $attempt: $(records)"
grub_is "default=root_b next=" "after the unbootable trial (GRUB spent its one-time boot)"
tail -n 1 "$boot/tickwire/attempts" | grep -q 'reason="root_a never reached its health check' ||
	fail "fallen-back record: $(tail -n 1 "$boot/tickwire/attempts")"
if verdict "$work/verdict-unbootable.log" root_b root_a; then
	tail -n 30 "$work/verdict-unbootable.log"
	fail "verdict tasks: the unbootable trial passed"
fi
grep -q "localhost runs root_b: FELL BACK from root_a (attempt $attempt: root_a never reached its health check" "$work/verdict-unbootable.log" ||
	{ tail -n 30 "$work/verdict-unbootable.log"; fail "verdict tasks: no 'runs root_b: FELL BACK from root_a' for the unbootable trial"; }
b_files after-unbootable
cmp -s "$work/b-files.before" "$work/b-files.after-unbootable" ||
	{ diff "$work/b-files.before" "$work/b-files.after-unbootable" | head; fail "root_b's usr/ or etc/ changed by the failed trial"; }
unmnt "$boot"
detach "$tloop"
rm -f "$tgt"
phase "unbootable trial by UEFI: GRUB spent its one-time boot, the initramfs could not mount root_a, panic=10 rebooted, root_b came back by itself, fallen-back recorded, the role fails the host and says why; root_b's usr/ and etc/ unchanged"

# --- 6. disk mode onto a blank disk ------------------------------------------------
use "$img" "$imgsum" "$work/image.sig"
truncate -s "$imgsize" "$work/blank.raw"
attach "$work/blank.raw"
bloop=$loop
flash "$work/disk.log" root_a disk -e tickwire_flash_image_on_target=true -e "tickwire_flash_disk=$bloop" ||
	{ tail -n 40 "$work/disk.log"; fail "disk flash failed"; }
grep -E '^localhost +: ' "$work/disk.log"
[ "$(headsum "$bloop" "$imgsize")" = "$imgsum" ] || fail "disk mode: the blank disk does not read back as the image"
detach "$bloop"
rm -f "$work/blank.raw"
phase "disk mode: blank loop disk reads back as the image"

echo "PASS ($(($(date +%s) - start)) s)"
