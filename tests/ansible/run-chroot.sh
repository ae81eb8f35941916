#!/bin/sh
# Ansible tests against a chroot of a Debian 12 rootfs (meson suite ansible).
#   run-chroot.sh idempotency|badmap SOURCE_ROOT BUILD_ROOT
# idempotency: site.yml twice with tickwire_image_build=true; the second
#              run must report changed=0 failed=0.
# badmap:      site.yml once, then with an invalid core map: the play must
#              fail at validation with tickwire-check's FILE:LINE finding and
#              leave /etc/tickwire, the units, tuned, sysctl, defaults and
#              the binaries exactly as they were.
set -eu
mode=$1
src=$(cd "$2" && pwd)
build=$(cd "$3" && pwd)
here=$src/tests/ansible
work=$build/tests/ansible/work-$mode
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
export ANSIBLE_CONFIG="$src/ansible/ansible.cfg"
export ANSIBLE_NOCOLOR=1 ANSIBLE_FORCE_COLOR=0 ANSIBLE_LOCAL_TEMP="$build/tests/ansible/tmp-$mode"
[ "$(id -u)" = 0 ] || { echo "SKIP: the chroot connection needs root"; exit 77; }
command -v ansible-playbook >/dev/null || { echo "SKIP: ansible not installed"; exit 77; }

. "$here/image-root.sh"
rm -rf "$work"
mkdir -p "$work/root"
image=$build/tests/image/tickwire.raw
if [ -s "$image" ]; then
	# the image suite's image (it runs first): its root filesystem (slot
	# root_a), already provisioned by site.yml for the qemu profile; the
	# plays below move it to this test's inventory
	off=$(part_offset "$image" root_a) || { echo "FAIL: $image has no partition root_a"; exit 1; }
	mkdir -p "$work/image-mnt"
	trap 'umount "$work/image-mnt" 2>/dev/null || true' EXIT
	mount -o ro,loop,offset="$off" "$image" "$work/image-mnt"
	cp -a "$work/image-mnt/." "$work/root/"
	umount "$work/image-mnt"
	trap - EXIT
	echo "rootfs: root_a of $image"
else
	# no image: a minimal Debian 12 rootfs made here (mmdebstrap, cached)
	"$here/mkrootfs.sh" "$build/tests/ansible/rootfs.tar"
	tar -C "$work/root" --numeric-owner -xf "$build/tests/ansible/rootfs.tar"
	echo "rootfs: $build/tests/ansible/rootfs.tar (mmdebstrap; no image in $image)"
fi
meson install -C "$build" --no-rebuild --quiet --destdir "$work/dist" >/dev/null

play() {
	# play LOG [ansible-playbook args...]
	log=$1
	shift
	(cd "$src/ansible" && ansible-playbook -i "$here/inventory/chroot" site.yml \
		-e ansible_host="$work/root" -e tickwire_dist_dir="$work/dist" \
		--vault-password-file "$here/vault-password.txt" "$@") >"$log" 2>&1
}
recap() {
	grep -E '^rootfs +: ' "$1" | tail -n 1
}
fail() {
	echo "FAIL: $*"
	exit 1
}
sums() {
	# content of every regular file, then path, mode and link target of everything
	(cd "$work/root" && find etc/tickwire etc/systemd/system etc/tuned etc/default etc/sysctl.d \
		usr/local/bin usr/local/lib/tickwire boot -xdev -type f -print0 | sort -z | xargs -0 -r sha256sum &&
		find etc/tickwire etc/systemd/system etc/tuned etc/default etc/sysctl.d usr/local/bin usr/local/lib/tickwire \
			boot -xdev -printf '%p %m %l\n' | sort)
}

start=$(date +%s)
case $mode in
idempotency)
	play "$work/run1.log" || { tail -n 40 "$work/run1.log"; fail "first run failed"; }
	echo "run 1: $(recap "$work/run1.log") ($(($(date +%s) - start)) s)"
	t2=$(date +%s)
	play "$work/run2.log" || { tail -n 40 "$work/run2.log"; fail "second run failed"; }
	r2=$(recap "$work/run2.log")
	echo "run 2: $r2 ($(($(date +%s) - t2)) s)"
	echo "$r2" | grep -q ' changed=0 ' || { grep -B2 -E '^changed:' "$work/run2.log" | head -n 40; fail "second run changed something"; }
	echo "$r2" | grep -q ' failed=0 ' || fail "second run failed tasks"
	r=$work/root
	grep -q isolcpus=managed_irq,domain,1-4 "$r/etc/tickwire/kernel-cmdline" || fail "kernel-cmdline: $(cat "$r/etc/tickwire/kernel-cmdline")"
	grep -qx 'isolated_cores=1-4' "$r/etc/tuned/tickwire/tuned.conf" || fail "tuned.conf"
	grep -qx 'no_balance_cores=1-4' "$r/etc/tuned/cpu-partitioning-variables.conf" || fail "cpu-partitioning-variables.conf"
	grep -qx tickwire "$r/etc/tuned/active_profile" || fail "active_profile"
	grep -qx 'IRQBALANCE_BANNED_CPULIST=1-4' "$r/etc/default/irqbalance" || fail "irqbalance"
	[ "$(stat -c %a "$r/etc/tickwire/ilink3.credentials")" = 600 ] || fail "credentials mode"
	[ -L "$r/etc/systemd/system/multi-user.target.wants/tickwire.service" ] || fail "unit not enabled"
	grep -q '^CPUAffinity=0 5 0-4$' "$r/etc/systemd/system/tickwire.service" || fail "CPUAffinity"
	grep -q '^LimitMEMLOCK=infinity$' "$r/etc/systemd/system/tickwire.service" || fail "LimitMEMLOCK"
	[ -L "$r/etc/systemd/system/local-fs.target.wants/dev-hugepages\\x2dtw.mount" ] || fail "hugetlbfs mount unit"
	chroot "$r" /usr/local/bin/tickwire-check --ports /etc/tickwire/ports.ini --config /etc/tickwire/tickwire.cfg \
		--synthetic "pack:1 core:6 pu:1" --sysfs /var/lib/tickwire/candidate/sysfs >/dev/null 2>&1 || fail "installed pair does not pass tickwire-check"
	touch "$work/passed"
	;;
badmap)
	# start from a provisioned host: the idempotency test's rootfs when it
	# passed in this build tree (saves a full run), else one good run here
	done_root=$build/tests/ansible/work-idempotency
	if [ -e "$done_root/passed" ] && [ "$done_root/passed" -nt "$here/run-chroot.sh" ]; then
		rm -rf "$work/root"
		cp -a "$done_root/root" "$work/root"
		echo "good host: copied from the idempotency test"
	else
		play "$work/good.log" || { tail -n 40 "$work/good.log"; fail "good run failed"; }
		echo "good run: $(recap "$work/good.log") ($(($(date +%s) - start)) s)"
	fi
	sums >"$work/before.sums"
	t2=$(date +%s)
	if play "$work/bad.log" -e "@$here/badmap-vars.yml"; then
		fail "the bad core map was accepted"
	fi
	echo "bad run: $(recap "$work/bad.log") ($(($(date +%s) - t2)) s)"
	grep -E 'tickwire\.cfg:[0-9]+: error: ' "$work/bad.log" | head -n 5
	grep -qE 'tickwire\.cfg:[0-9]+: error: .*decode' "$work/bad.log" || { tail -n 30 "$work/bad.log"; fail "no FILE:LINE finding about decode"; }
	grep -q 'Validate the candidate pair with tickwire-check' "$work/bad.log" || fail "validation did not run"
	if grep -qE 'TASK \[tickwire_config : Install the validated pair\]|TASK \[tickwire_tuning' "$work/bad.log"; then
		fail "tasks after validation ran"
	fi
	sums >"$work/after.sums"
	if ! cmp -s "$work/before.sums" "$work/after.sums"; then
		diff "$work/before.sums" "$work/after.sums" | head -n 20
		fail "the host changed"
	fi
	echo "host unchanged: $(wc -l <"$work/before.sums") files compared"
	;;
*)
	fail "unknown mode $mode"
	;;
esac
echo "PASS ($(($(date +%s) - start)) s)"
