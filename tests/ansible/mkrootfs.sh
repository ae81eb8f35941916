#!/bin/sh
# Build (once) the minimal Debian 12 root filesystem the ansible tests
# provision through the chroot connection: python3 for the modules, systemd
# (units are enabled offline), tuned, irqbalance, and the runtime libraries
# of tickwire-check and tickwire. Cached as a tarball; each test unpacks its
# own copy.
#   mkrootfs.sh OUT.tar
set -eu
out=$1
if [ -s "$out" ]; then
	exit 0
fi
mkdir -p "$(dirname "$out")"
pkgs=python3,systemd,systemd-sysv,tuned,irqbalance,procps,kmod,udev,
pkgs=${pkgs}libconfig9,libiniparser1,libhwloc15,libhwloc-plugins,libudev1,libssl3,libbsd0,libnuma1,libfdt1,
pkgs=${pkgs}librte-eal23,librte-ethdev23,librte-mbuf23,librte-mempool23,librte-ring23,librte-telemetry23,
pkgs=${pkgs}librte-net23,librte-kvargs23,librte-meter23,librte-net-pcap23
mirror=${TW_DEBIAN_MIRROR:-http://deb.debian.org/debian}
tmp="$out.tmp.$$"
trap 'rm -f "$tmp"' EXIT
mmdebstrap --quiet --mode=root --format=tar --variant=apt --include="$pkgs" \
	--customize-hook='rm -f "$1"/etc/machine-id; touch "$1"/etc/machine-id' \
	bookworm "$tmp" "$mirror" >&2
mv "$tmp" "$out"
trap - EXIT
