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
#  2. slot mode, active root_a (the cmdline file): root_b's bytes = the image's
#     root partition, /root_b/{vmlinuz,initrd.img} = the image rootfs's
#     /usr/lib/tickwire/boot copies (stale ones were put there first),
#     DEFAULT root_b, root_a / its kernel / the GPT / ldlinux untouched;
#  3. the target boots under qemu (--snapshot --check): PASS, slot=root_b;
#  4. slot mode again, active root_b: root_a (scribbled over first) = the
#     image's, /root_a/ = the image's kernel, DEFAULT root_a, root_b untouched;
#  5. disk mode onto a blank sparse file: read-back sha256 = the image's.
# Every loop device is detached and everything unmounted on exit.
# TW_FLASH_BOOT_TIMEOUT (s, default 600) bounds the boot.
set -eu
src=$(cd "$1" && pwd)
build=$(cd "$2" && pwd)
dir=$build/tests/ansible/flash
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (loop devices, mounts)"; exit 77; }
for t in ansible-playbook losetup partx sfdisk blockdev sha256sum qemu-system-x86_64 signify-openbsd; do
	command -v $t >/dev/null || { echo "SKIP: $t not installed"; exit 77; }
done
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
	for f in "$work/target.raw" "$work/blank.raw" "${img:-/nonexistent}"; do
		[ -e "$f" ] || continue
		losetup -l -n -O NAME -j "$f" 2>/dev/null | while read -r l; do losetup -d "$l" || true; done
	done
	rm -f "$work/target.raw" "$work/blank.raw"
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
partsum=$(sum "${iloop}p2")
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
printf 'SHA256 (%s) = %s\n' "$(basename "$img")" "$imgsum" >"$work/image.SHA256"
signify-openbsd -S -e -s "$work/sign.sec" -m "$work/image.SHA256" -x "$work/image.sig"
rm -f "$work/sign.sec"

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
run=0
flash() { # LOG ACTIVE-SLOT MODE [ansible-playbook options]: the exit status of the play
	log=$1 active=$2 mode=$3
	shift 3
	run=$((run + 1))
	echo "BOOT_IMAGE=/$active/vmlinuz root=PARTLABEL=$active rw console=ttyS0,115200n8" >"$work/cmdline.$run"
	cat >"$work/vars.$run.json" <<EOF
{"tickwire_flash_image": "$img", "tickwire_flash_image_sha256": "$imgsum",
 "tickwire_flash_mode": "$mode", "tickwire_flash_stage_dir": "$work/stage",
 "tickwire_flash_slots": {"root_a": "${tloop}p2", "root_b": "${tloop}p3"},
 "tickwire_flash_image_signature": "$work/image.sig", "tickwire_flash_signify_pubkey": "$work/sign.pub",
 "tickwire_flash_cmdline_file": "$work/cmdline.$run", "tickwire_flash_boot_dir": "$boot",
 "tickwire_flash_reboot": false}
EOF
	# profile_tasks: each task's time in the log
	(cd "$src/ansible" && ANSIBLE_CONFIG="$src/ansible/ansible.cfg" ANSIBLE_NOCOLOR=1 \
		ANSIBLE_LOCAL_TEMP="$work/ansible-tmp" ANSIBLE_RETRY_FILES_ENABLED=false \
		ANSIBLE_CALLBACKS_ENABLED=ansible.posix.profile_tasks PROFILE_TASKS_TASK_OUTPUT_LIMIT=12 \
		ansible-playbook -i localhost, -c local -e ansible_python_interpreter=/usr/bin/python3 \
		"$work/flash.yml" -e "@$work/vars.$run.json" "$@") >"$log" 2>&1
}
refused() { # LOG WHY-PATTERN (grep -E) TITLE
	grep -E "^localhost +: .*failed=1" "$1" >/dev/null || { tail -n 30 "$1"; fail "$3: the play did not fail"; }
	grep -Eq "$2" "$1" || { tail -n 30 "$1"; fail "$3: not refused for the expected reason /$2/"; }
	if grep -Eq 'TASK \[tickwire_flash : (Write the|Copy the|Boot the new slot)' "$1"; then
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

# --- 2. slot mode, root_a active: writes root_b ---------------------------------
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
cp "$boot/extlinux/extlinux.conf" "$work/extlinux.before"
a_sum=$(sum "${tloop}p2")
bootsums() { (cd "$boot" && sha256sum root_a/* root_b/* extlinux/ldlinux.sys extlinux/ldlinux.c32); }
bootsums >"$work/bootsums.before"
gpt_head=$(headsum "$tgt" 1048576)
gpt_tail=$(tail -c 1048576 "$tgt" | sha256)
phase "before the slot flash: root_a, boot files, GPT recorded"

flash "$work/flash-b.log" root_a slot || { tail -n 40 "$work/flash-b.log"; fail "slot flash into root_b failed"; }
grep -E '^localhost +: ' "$work/flash-b.log"
grep -q 'localhost boots root_b next' "$work/flash-b.log" || fail "no 'boots root_b next' from the handler"
phase "slot flash into root_b (image staged by copy)"
[ "$(headsum "${tloop}p3" "$partsize")" = "$partsum" ] || fail "root_b: the first $partsize bytes are not the image's root partition"
[ "$(sum "$boot/root_b/vmlinuz")" = "$ksum_vmlinuz" ] || fail "/root_b/vmlinuz is not the image rootfs's kernel"
[ "$(sum "$boot/root_b/initrd.img")" = "$ksum_initrd" ] || fail "/root_b/initrd.img is not the image rootfs's initrd"
if [ "$(grep -c '^DEFAULT ' "$boot/extlinux/extlinux.conf")" != 1 ] || ! grep -q '^DEFAULT root_b$' "$boot/extlinux/extlinux.conf"; then
	fail "extlinux.conf: DEFAULT is not root_b: $(grep DEFAULT "$boot/extlinux/extlinux.conf")"
fi
diff "$work/extlinux.image" "$boot/extlinux/extlinux.conf" | grep '^[<>]' >"$work/extlinux.diff" || true
printf '< DEFAULT root_a\n> DEFAULT root_b\n' | cmp -s - "$work/extlinux.diff" ||
	{ cat "$work/extlinux.diff"; fail "extlinux.conf is not the image's but for DEFAULT (root_b's APPEND not the new root's?)"; }
[ "$(sum "${tloop}p2")" = "$a_sum" ] || fail "root_a changed"
bootsums | grep -v ' root_b/' >"$work/bootsums.after"
grep -v ' root_b/' "$work/bootsums.before" | cmp -s - "$work/bootsums.after" || fail "/root_a/ or ldlinux changed"
[ "$(headsum "$tgt" 1048576)" = "$gpt_head" ] || fail "the protective MBR / primary GPT changed"
[ "$(tail -c 1048576 "$tgt" | sha256)" = "$gpt_tail" ] || fail "the backup GPT changed"
[ -z "$(ls -A "$work/stage")" ] || fail "the staged image was not removed"
[ -z "$(losetup -l -n -O NAME -j "$img")" ] || fail "the role left the image attached"
if findmnt -rn -o TARGET | grep -q '\.tickwire-flash$'; then fail "the role left the image mounted"; fi
phase "root_b = image root partition, /root_b/ kernel+initrd = image's, root_b's stale APPEND replaced by the image's, DEFAULT root_b; root_a, /root_a/, ldlinux, GPT unchanged"

# --- 3. boot the flashed target --------------------------------------------------
unmnt "$boot"
detach "$tloop"
rc=0
"$src/image/qemu-run" "$tgt" --snapshot --check --log "$work/serial.log" \
	--timeout "${TW_FLASH_BOOT_TIMEOUT:-600}" </dev/null >"$work/qemu.out" 2>&1 || rc=$?
line=$(tr -d '\r' <"$work/serial.log" | grep -a -m1 -o 'TICKWIRE-IMAGE-CHECK: .*' || true)
echo "boot: $line"
case $line in
"TICKWIRE-IMAGE-CHECK: PASS slot=root_b "*) ;;
*)
	cat "$work/qemu.out"
	tr -d '\r' <"$work/serial.log" | tail -n 30
	fail "the flashed target did not boot root_b with a passing check (qemu status $rc)"
	;;
esac
phase "flashed target booted under qemu: PASS on root_b"

# --- 4. slot mode again, root_b active: writes root_a ----------------------------
partscan "$tgt"
tloop=$loop
mnt "${tloop}p1" "$boot"
dd if=/dev/zero of="${tloop}p2" bs=1M count=4 conv=fsync status=none # an older root_a
echo "stale kernel of an older image" >"$boot/root_a/vmlinuz"
echo "stale initrd of an older image" >"$boot/root_a/initrd.img"
age_append root_a
b_sum=$(headsum "${tloop}p3" "$partsize")
bootsums | grep ' root_b/' >"$work/bootsums-b.before"
flash "$work/flash-a.log" root_b slot -e tickwire_flash_image_on_target=true ||
	{ tail -n 40 "$work/flash-a.log"; fail "slot flash into root_a failed"; }
grep -E '^localhost +: ' "$work/flash-a.log"
[ "$(headsum "${tloop}p2" "$partsize")" = "$partsum" ] || fail "root_a: not the image's root partition after the second flash"
[ "$(sum "$boot/root_a/vmlinuz")" = "$ksum_vmlinuz" ] || fail "/root_a/vmlinuz is not the image's kernel"
[ "$(sum "$boot/root_a/initrd.img")" = "$ksum_initrd" ] || fail "/root_a/initrd.img is not the image's initrd"
cmp -s "$work/extlinux.image" "$boot/extlinux/extlinux.conf" ||
	{ diff "$work/extlinux.image" "$boot/extlinux/extlinux.conf"; fail "extlinux.conf after the second flash is not the image's (DEFAULT root_a, root_a's APPEND)"; }
[ "$(headsum "${tloop}p3" "$partsize")" = "$b_sum" ] || fail "root_b changed in the second flash"
bootsums | grep ' root_b/' | cmp -s "$work/bootsums-b.before" - || fail "/root_b/ changed in the second flash"
unmnt "$boot"
detach "$tloop"
rm -f "$tgt"
phase "second slot flash (active root_b, image on the target): root_a and /root_a/ = image's, DEFAULT root_a, root_b unchanged"

# --- 5. disk mode onto a blank disk ------------------------------------------------
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
