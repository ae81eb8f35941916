#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# image_boot: build the image from this tree (image/build, profile
# dpdk-config/qemu), boot it under qemu TCG with image/qemu-run --check and
# read the result line the image's boot check prints on the serial console.
# The build signs the image with a throw-away signify-openbsd key made here
# (image/build --sign-key); the signature must verify with the public key
# and carry the image's sha256.
#   tests/image/image-boot.sh BUILD SOURCE
# Everything goes under BUILD/tests/image/ (nothing is cached elsewhere); the
# Debian base the build started from is kept there as rootfs.base for
# image_reproducible.
# TW_IMAGE_BOOT_TIMEOUT (s, default 600) bounds the boot.
set -euo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
dir=$build/tests/image
img=$dir/tickwire.raw
log=$dir/serial.log
mkdir -p "$dir"
rm -f "$img" "$log"

t0=$SECONDS
rm -rf "$img.work" "$dir/rootfs.base"
rm -f "$dir/sign.pub" "$dir/sign.sec"
signify-openbsd -G -n -c "tickwire image_boot test key" -p "$dir/sign.pub" -s "$dir/sign.sec"
"$src/image/build" --build-dir "$build" --out "$img" --keep-work --sign-key "$dir/sign.sec"
t_build=$((SECONDS - t0))
rm -f "$dir/sign.sec"
# the signature verifies, and the sha256 it carries is the image's
(cd "$dir" && signify-openbsd -C -p sign.pub -x "$(basename "$img").sig" "$(basename "$img")") ||
	{ echo "image_boot: FAIL: the image's signature does not verify"; exit 1; }
grep -q "= $(cut -d' ' -f1 "$img.sha256")\$" "$img.SHA256" ||
	{ echo "image_boot: FAIL: $img.SHA256 does not carry $img.sha256"; exit 1; }
echo "image_boot: signed, the signature verifies: $(cat "$img.SHA256")"
# the mmdebstrap output, for image_reproducible's second build
mv "$img.work/rootfs.base" "$dir/rootfs.base"
rm -rf "$img.work"
echo "image_boot: image built in ${t_build} s"

t1=$SECONDS
rc=0
"$src/image/qemu-run" "$img" --snapshot --check --log "$log" \
	--timeout "${TW_IMAGE_BOOT_TIMEOUT:-600}" </dev/null || rc=$?
t_boot=$((SECONDS - t1))
echo "image_boot: qemu exited with status $rc after ${t_boot} s (build ${t_build} s, total $((SECONDS - t0)) s)"

line=$(tr -d '\r' <"$log" | grep -a -m1 -o 'TICKWIRE-IMAGE-CHECK: .*' || true)
if [ -z "$line" ]; then
	echo "image_boot: FAIL: no TICKWIRE-IMAGE-CHECK line on the serial console; last lines of $log:"
	tail -40 "$log" | tr -d '\r'
	exit 1
fi
echo "image_boot: $line"
booted=$(tr -d '\r' <"$log" | grep -a -m1 -o 'Reached target.*Multi-User System' || true)
[ -n "$booted" ] || echo "image_boot: (no 'Reached target Multi-User System' line in the log)"
case $line in
"TICKWIRE-IMAGE-CHECK: PASS "*)
	# the host comes back by itself: panic=, systemd driving qemu-run's
	# i6300esb, root_a committed (no trial: the image as built); the data
	# partition on /var/lib/tickwire, no session journal on it yet
	for w in panic=10 firmware=bios "watchdog=active(i6300ESB" committed=root_a data=ok journal=none; do
		case " $line" in
		*" $w"*) ;;
		*) echo "image_boot: FAIL: '$w' missing from the check's line"; exit 1 ;;
		esac
	done
	exit 0
	;;
*)
	tr -d '\r' <"$log" | grep -a -E 'tickwire|tuned' | tail -30
	exit 1
	;;
esac
