#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# image_reproducible: two builds of the image from the same inputs give the
# same bytes (issue 7: "reproducible (SOURCE_DATE_EPOCH)").
#   tests/image/image-reproducible.sh BUILD SOURCE
# The first image is image_boot's (BUILD/tests/image/tickwire.raw, which
# runs first); the second is built here from the same Debian base that
# image_boot kept (BUILD/tests/image/rootfs.base, the mmdebstrap output) into
# BUILD/tests/image/repro/. Both builds record their inputs (OUT.inputs:
# epoch, options, digests of the binaries, profile, inventory, roles and
# image scripts); if the first image is missing or was built from other
# inputs, it is rebuilt here first. Same inputs, different bytes: FAIL, with
# the partitions and 4 KiB blocks that differ.
# Why the same base: mmdebstrap resolves packages against the mirror of the
# day, so a second mmdebstrap is only comparable against a pinned snapshot
# mirror; what this project adds on top of it (Ansible provisioning, the file
# systems, extlinux, the partition table) is what the test holds to bytes.
set -euo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
dir=$build/tests/image
first=$dir/tickwire.raw
base=$dir/rootfs.base
second=$dir/repro/tickwire.raw
mkdir -p "$dir/repro"

t0=$SECONDS
if [ ! -x "$base/usr/bin/dpkg" ]; then
	echo "image_reproducible: no Debian base in $base (image_boot keeps it): a full build to make one"
	rm -rf "$first.work"
	"$src/image/build" --build-dir "$build" --out "$first" --keep-work
	rm -rf "$base"
	mv "$first.work/rootfs.base" "$base"
	rm -rf "$first.work"
fi
"$src/image/build" --build-dir "$build" --out "$second" --base-rootfs "$base"
if [ ! -f "$first" ] || ! cmp -s "$first.inputs" "$second.inputs"; then
	echo "image_reproducible: $first is missing or was built from other inputs; rebuilding it from the same base"
	[ ! -f "$first.inputs" ] || diff "$first.inputs" "$second.inputs" | head -10 || true
	"$src/image/build" --build-dir "$build" --out "$first" --base-rootfs "$base"
fi
echo "image_reproducible: builds done in $((SECONDS - t0)) s"

a=$(cut -d' ' -f1 "$first.sha256")
b=$(cut -d' ' -f1 "$second.sha256")
if [ "$a" = "$b" ]; then
	echo "image_reproducible: PASS: both builds are $a ($(du -h --apparent-size "$first" | cut -f1))"
	rm -f "$second"
	exit 0
fi

echo "image_reproducible: FAIL: same inputs, different images: $a vs $b"
# Per partition, the first 4 KiB blocks that differ (block numbers relative
# to the partition; debugfs -R 'icheck N' then 'ncheck I' name the file).
# The second image is kept for that.
sfdisk -J "$first" | /usr/bin/python3 -c '
import json, sys
for p in json.load(sys.stdin)["partitiontable"]["partitions"]:
    print(p.get("name", "?"), p["start"], p["size"])' |
	while read -r name start size; do
		# (cmp is cut short by head: its status is not the answer)
		blocks=$( (cmp -l -i "$((start * 512)):$((start * 512))" -n "$((size * 512))" "$first" "$second" 2>/dev/null || true) |
			awk '{print int(($1 - 1) / 4096)}' | uniq | head -20 | tr '\n' ' ' || true)
		echo "  $name: ${blocks:-identical}"
	done
cmp -n $((2048 * 512)) "$first" "$second" >/dev/null || echo "  partition table / boot code (first MiB): differs"
exit 1
