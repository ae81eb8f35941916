#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# image_vfio_bind: image/files/tickwire-vfio-bind against a fake sysfs (no
# NIC, no root, no boot). The ports of dpdk-config/colo-example, written
# quoted (pci = "0000:3b:00.0"), read through the build's tickwire-check:
# checked and bound (a stand-in dpdk-devbind.py that moves the fake driver
# links), refused with nothing bound for a link up, no IOMMU group, a group
# shared with a device on a kernel driver, a bind dpdk-devbind.py skipped;
# a vdev-only profile has nothing to bind.
#   tests/image/vfio-bind.sh BUILD SOURCE
set -euo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
bind=$src/image/files/tickwire-vfio-bind
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tw-vfio-bind.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
failures=0
ok() { echo "ok - $*"; }
not_ok() { echo "not ok - $*"; failures=$((failures + 1)); }

# The profile: colo-example with its pci keys quoted (the second one in
# the short upper-case form), on the machine it describes.
prof=$tmp/profile
mkdir -p "$prof"
sed -e 's/^pci = 0000:3b:00.0$/pci = "0000:3b:00.0"/' -e 's/^pci = 0000:3b:00.1$/pci = "3B:00.1"/' \
	"$src/dpdk-config/colo-example/ports.ini" >"$prof/ports.ini"
cp "$src/dpdk-config/colo-example/tickwire.cfg" "$prof/"
[ "$(grep -c '^pci = "' "$prof/ports.ini")" = 2 ] || { echo "fixture: no quoted pci keys"; exit 1; }
cat >"$tmp/check" <<EOF
#!/bin/sh
exec "$build/app/check/tickwire-check" "\$@" --synthetic "pack:2 numa:1 core:8 pu:2(indexes=2*8:16*2:1*2)"
EOF
# stand-in dpdk-devbind.py: logs its call and moves each device's driver link
# to vfio-pci in the fake tree ($FAKE_DEVBIND=skip: does nothing, as the real
# one does for an interface with routes, exit 0)
cat >"$tmp/devbind" <<'EOF'
#!/bin/sh
echo "$*" >>"$DEVBIND_LOG"
[ "${FAKE_DEVBIND:-}" = skip ] && { echo "Warning: routing table indicates that interface is active. Not modifying" >&2; exit 0; }
shift
for a; do ln -sfn ../../../bus/pci/drivers/vfio-pci "$FAKE_SYS/bus/pci/devices/$a/driver"; done
EOF
chmod +x "$tmp/check" "$tmp/devbind"
export TW_CHECK=$tmp/check TW_DEVBIND=$tmp/devbind DEVBIND_LOG=$tmp/devbind.log

# sysfs: each port on ice in an IOMMU group of its own, link down
fake_sys() { # dir
	local s=$1 a g i
	rm -rf "$s"
	mkdir -p "$s/devices/system/cpu" "$s/bus/pci/drivers/ice" "$s/bus/pci/drivers/vfio-pci"
	echo 2-5,18-21 >"$s/devices/system/cpu/isolated"
	echo 2-5,18-21 >"$s/devices/system/cpu/nohz_full"
	i=0
	for a in 0000:3b:00.0 0000:3b:00.1; do
		g=$((12 + i))
		mkdir -p "$s/bus/pci/devices/$a/net/ens1f$i" "$s/kernel/iommu_groups/$g/devices"
		echo 0 >"$s/bus/pci/devices/$a/numa_node"
		echo 0x020000 >"$s/bus/pci/devices/$a/class"
		echo down >"$s/bus/pci/devices/$a/net/ens1f$i/operstate"
		ln -s ../../../bus/pci/drivers/ice "$s/bus/pci/devices/$a/driver"
		ln -s ../../../kernel/iommu_groups/$g "$s/bus/pci/devices/$a/iommu_group"
		ln -s ../../../../bus/pci/devices/$a "$s/kernel/iommu_groups/$g/devices/$a"
		i=$((i + 1))
	done
}
other_device() { # sys addr class driver group: another device in a port's group
	local s=$1 a=$2
	mkdir -p "$s/bus/pci/devices/$a" "$s/bus/pci/drivers/$4"
	echo "$3" >"$s/bus/pci/devices/$a/class"
	ln -s "../../../bus/pci/drivers/$4" "$s/bus/pci/devices/$a/driver"
	ln -s "../../../../bus/pci/devices/$a" "$s/kernel/iommu_groups/$5/devices/$a"
}
export FAKE_SYS=$tmp/sys
drv() { basename "$(readlink "$FAKE_SYS/bus/pci/devices/$1/driver")"; }
run() { # expected-status name pattern [bind args]: runs the script, checks status and output
	local want=$1 name=$2 pattern=$3 rc=0
	shift 3
	: >"$DEVBIND_LOG"
	"$bind" --ports "$prof/ports.ini" --config "$prof/tickwire.cfg" --sysfs "$FAKE_SYS" "$@" \
		>"$tmp/out" 2>&1 || rc=$?
	if [ "$rc" -ne "$want" ]; then
		not_ok "$name: exit $rc, expected $want"; sed 's/^/    /' "$tmp/out"
	elif ! grep -qE -- "$pattern" "$tmp/out"; then
		not_ok "$name: output lacks /$pattern/"; sed 's/^/    /' "$tmp/out"
	else
		ok "$name: $(grep -m1 -E -- "$pattern" "$tmp/out")"
		return 0
	fi
	return 1
}

# 1. the quoted addresses, dry run: both ports checked, the devbind command printed
fake_sys "$FAKE_SYS"
run 0 "quoted pci, dry run" "dry run: $tmp/devbind --bind=vfio-pci 0000:3b:00.0 0000:3b:00.1\$" --dry-run &&
	{ [ ! -s "$DEVBIND_LOG" ] || not_ok "dry run called dpdk-devbind.py"; }

# 2. bound (stand-in devbind), then again: already on vfio-pci, devbind not called
if run 0 "bound" "0000:3b:00.1 bound to vfio-pci"; then
	[ "$(cat "$DEVBIND_LOG")" = "--bind=vfio-pci 0000:3b:00.0 0000:3b:00.1" ] ||
		not_ok "bound: devbind called as '$(cat "$DEVBIND_LOG")'"
	[ "$(drv 0000:3b:00.0) $(drv 0000:3b:00.1)" = "vfio-pci vfio-pci" ] || not_ok "bound: drivers $(drv 0000:3b:00.0) $(drv 0000:3b:00.1)"
fi
run 0 "second run" "0000:3b:00.0 \(IOMMU group 12\) already on vfio-pci" &&
	{ [ ! -s "$DEVBIND_LOG" ] || not_ok "second run called dpdk-devbind.py"; }

# 3. a link up under ice: refused, nothing bound
fake_sys "$FAKE_SYS"
echo up >"$FAKE_SYS/bus/pci/devices/0000:3b:00.1/net/ens1f1/operstate"
run 1 "link up refused" "0000:3b:00.1: interface ens1f1 \(driver ice\) has its link up" &&
	if [ -s "$DEVBIND_LOG" ] || [ "$(drv 0000:3b:00.0)" != ice ]; then not_ok "link up: something was bound"; fi
grep -q "no port of $prof/ports.ini was bound" "$tmp/out" || not_ok "link up: no 'no port was bound'"

# 4. no IOMMU group (the IOMMU off): refused, the hint names the kernel words
fake_sys "$FAKE_SYS"
rm "$FAKE_SYS/bus/pci/devices/0000:3b:00.0/iommu_group"
run 1 "no IOMMU group refused" "0000:3b:00.0 \(driver ice\): in no IOMMU group.*hint: boot with intel_iommu=on iommu=pt" &&
	{ [ ! -s "$DEVBIND_LOG" ] || not_ok "no IOMMU group: devbind called"; }

# 5. the group shared with an NVMe drive on its kernel driver: refused;
#    shared with a PCI bridge (pcieport) or an unbound device: accepted
fake_sys "$FAKE_SYS"
other_device "$FAKE_SYS" 0000:3a:00.0 0x010802 nvme 12
run 1 "shared IOMMU group refused" "IOMMU group 12 also holds 0000:3a:00.0 \(class 0x010802, driver nvme\)" &&
	{ [ ! -s "$DEVBIND_LOG" ] || not_ok "shared group: devbind called"; }
fake_sys "$FAKE_SYS"
other_device "$FAKE_SYS" 0000:3a:00.0 0x060400 pcieport 12
run 0 "group with a bridge accepted" "0000:3b:00.0 bound to vfio-pci"

# 6. dpdk-devbind.py skips a port (routes on it) and exits 0: caught
fake_sys "$FAKE_SYS"
FAKE_DEVBIND=skip run 1 "skipped bind caught" "0000:3b:00.0 is on driver ice after $tmp/devbind, not vfio-pci"

# 7. a vdev-only profile: nothing to bind
rc=0
"$bind" --ports "$src/dpdk-config/qemu/ports.ini" --config "$src/dpdk-config/qemu/tickwire.cfg" \
	--sysfs "$FAKE_SYS" >"$tmp/out" 2>&1 || rc=$?
if [ "$rc" -eq 0 ] && grep -q "no PCI port in .*: nothing to bind" "$tmp/out"; then
	ok "vdev-only profile: nothing to bind"
else
	not_ok "vdev-only profile (exit $rc)"; sed 's/^/    /' "$tmp/out"
fi

# 8. a ports.ini the parser refuses: no guessing at addresses
sed 's/^pci = "3B:00.1"$/pci = "3b:00.x"/' "$prof/ports.ini" >"$tmp/bad.ini"
rc=0
"$bind" --ports "$tmp/bad.ini" --config "$prof/tickwire.cfg" --sysfs "$FAKE_SYS" >"$tmp/out" 2>&1 || rc=$?
if [ "$rc" -eq 1 ] && grep -q "bad.ini:[0-9]*: error: .*not a PCI address" "$tmp/out" &&
	grep -q "tickwire-check cannot read the ports" "$tmp/out"; then
	ok "broken ports.ini refused with the parser's finding"
else
	not_ok "broken ports.ini (exit $rc)"; sed 's/^/    /' "$tmp/out"
fi

# 9. --sysfs without --dry-run or a stand-in devbind: refused (the real one writes /sys)
rc=0
TW_DEVBIND='' "$bind" --ports "$prof/ports.ini" --config "$prof/tickwire.cfg" --sysfs "$FAKE_SYS" \
	>"$tmp/out" 2>&1 || rc=$?
if [ "$rc" -eq 1 ] && grep -q "without --dry-run" "$tmp/out"; then ok "--sysfs alone refused"; else not_ok "--sysfs alone (exit $rc)"; fi

echo "$failures failed"
[ "$failures" -eq 0 ]
