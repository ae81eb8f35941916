#!/bin/sh
# Ansible tests against a chroot of a Debian 12 rootfs (meson suite ansible).
#   run-chroot.sh idempotency|badmap|backtest|rollback SOURCE_ROOT BUILD_ROOT
# idempotency: site.yml twice with tickwire_image_build=true; the second
#              run must report changed=0 failed=0, and no credentials file
#              lands; a third run given vaulted credentials
#              (image-secrets/vault.yml) must be refused by the secrets role
#              with the rootfs unchanged.
# badmap:      site.yml once, then with an invalid core map: the play must
#              fail at validation with tickwire-check's FILE:LINE finding and
#              leave /etc/tickwire, the units, tuned, sysctl, defaults and
#              the binaries exactly as they were.
# backtest:    backtest-worker.yml twice into a bare node (tickwire's
#              libraries purged first), second run changed=0 failed=0; the
#              programs run in the chroot (a session as user nobody), their
#              packages are back, nothing of the appliance landed (no unit,
#              config, secret, tuning, sysctl, health gate, state
#              directory) and Slurm is left alone; then a run with the
#              Slurm packages.
# rollback:    on a provisioned host without the hugepages sysctl file, a
#              snapshot, a tuning change and restore.yml (rollout.yml's
#              rescue): the tuning files byte-identical to before, the sysctl
#              file the change made gone again.
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
	# play LOG [ansible-playbook args...]: site.yml, or backtest-worker.yml
	# (mode backtest: its own inventory, no vault)
	log=$1
	shift
	case $mode in
	backtest) set -- -i "$here/inventory/backtest-chroot" backtest-worker.yml "$@" ;;
	rollback-change) set -- -i "$here/inventory/chroot" "$here/rollback-tuning.yml" "$@" ;;
	*) set -- -i "$here/inventory/chroot" site.yml "$@" ;;
	esac
	(cd "$src/ansible" && ansible-playbook "$@" \
		-e ansible_host="$work/root" -e tickwire_dist_dir="$work/dist") >"$log" 2>&1
}
recap() {
	grep -E '^rootfs +: ' "$1" | tail -n 1
}
fail() {
	echo "FAIL: $*"
	exit 1
}
sums() {
	# sums DIR...: under those directories of the rootfs, the content of
	# every regular file, then path, mode and link target of everything
	# (an absent directory is listed as such)
	(cd "$work/root" && dirs= && for d in "$@"; do
		if [ -e "$d" ]; then dirs="$dirs $d"; else echo "absent $d"; fi
	done && if [ -n "$dirs" ]; then
		# shellcheck disable=SC2086 # the word list is the point
		find $dirs -xdev -type f -print0 | sort -z | xargs -0 -r sha256sum &&
			find $dirs -xdev -printf '%p %m %l\n' | sort
	fi)
}
appliance_dirs="etc/tickwire etc/systemd/system etc/tuned etc/default etc/sysctl.d usr/local/lib/tickwire boot"

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
	[ ! -e "$r/etc/tickwire/ilink3.credentials" ] || fail "a credentials file landed in an image build"
	[ -L "$r/etc/systemd/system/multi-user.target.wants/tickwire.service" ] || fail "unit not enabled"
	grep -q '^CPUAffinity=0 5 0-4$' "$r/etc/systemd/system/tickwire.service" || fail "CPUAffinity"
	grep -q '^LimitMEMLOCK=infinity$' "$r/etc/systemd/system/tickwire.service" || fail "LimitMEMLOCK"
	[ -L "$r/etc/systemd/system/local-fs.target.wants/dev-hugepages\\x2dtw.mount" ] || fail "hugetlbfs mount unit"
	chroot "$r" /usr/local/bin/tickwire-check --ports /etc/tickwire/ports.ini --config /etc/tickwire/tickwire.cfg \
		--synthetic "pack:1 core:6 pu:1" --sysfs /var/lib/tickwire/candidate/sysfs >/dev/null 2>&1 || fail "installed pair does not pass tickwire-check"
	# credentials in an image build: refused, nothing written
	sums $appliance_dirs usr/local/bin >"$work/before.sums"
	if play "$work/run3.log" -e "@$here/image-secrets/vault.yml" \
		--vault-password-file "$here/vault-password.txt"; then
		fail "vaulted credentials were accepted in an image build"
	fi
	grep -q 'tickwire_ilink_credentials is set in an image build' "$work/run3.log" ||
		{ tail -n 30 "$work/run3.log"; fail "run 3 did not fail on the credentials"; }
	sums $appliance_dirs usr/local/bin >"$work/after.sums"
	cmp -s "$work/before.sums" "$work/after.sums" ||
		{ diff "$work/before.sums" "$work/after.sums" | head -n 20; fail "the refused run changed the rootfs"; }
	[ ! -e "$r/etc/tickwire/ilink3.credentials" ] || fail "credentials written by the refused run"
	echo "run 3 (vaulted credentials): refused by tickwire_secrets, rootfs unchanged"
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
	sums $appliance_dirs usr/local/bin >"$work/before.sums"
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
	sums $appliance_dirs usr/local/bin >"$work/after.sums"
	if ! cmp -s "$work/before.sums" "$work/after.sums"; then
		diff "$work/before.sums" "$work/after.sums" | head -n 20
		fail "the host changed"
	fi
	echo "host unchanged: $(wc -l <"$work/before.sums") files compared"
	;;
backtest)
	# a bare worker node: without the programs' libraries (the role must
	# install them from the mirror: the host's resolver in the rootfs)
	r=$work/root
	purge="libconfig9 libiniparser1"
	# shellcheck disable=SC2086
	chroot "$r" dpkg --purge $purge >"$work/purge.log" 2>&1 || { cat "$work/purge.log"; fail "dpkg --purge $purge"; }
	rm -f "$r/etc/resolv.conf"
	cp /etc/resolv.conf "$r/etc/resolv.conf"
	# the programs the overlay holds (tickwire-backtest once meson installs it)
	programs="tickwire-replay tickwire-synth"
	[ -f "$work/dist/usr/local/bin/tickwire-backtest" ] && programs="$programs tickwire-backtest"
	echo "programs: $programs"
	list=$(printf '"%s",' $programs)
	sums $appliance_dirs >"$work/before.sums"
	touch "$work/marker"
	play "$work/run1.log" -e "{\"tickwire_backtest_worker_programs\": [${list%,}]}" ||
		{ tail -n 40 "$work/run1.log"; fail "first run failed"; }
	echo "run 1: $(recap "$work/run1.log") ($(($(date +%s) - start)) s)"
	t2=$(date +%s)
	play "$work/run2.log" -e "{\"tickwire_backtest_worker_programs\": [${list%,}]}" ||
		{ tail -n 40 "$work/run2.log"; fail "second run failed"; }
	r2=$(recap "$work/run2.log")
	echo "run 2: $r2 ($(($(date +%s) - t2)) s)"
	echo "$r2" | grep -q ' changed=0 ' || { grep -B2 -E '^changed:' "$work/run2.log" | head -n 40; fail "second run changed something"; }
	echo "$r2" | grep -q ' failed=0 ' || fail "second run failed tasks"
	# shellcheck disable=SC2086
	n=$(chroot "$r" dpkg-query -W -f='${Package} ${db:Status-Abbrev}\n' $purge 2>/dev/null | grep -c ' ii ') || true
	[ "$n" = "$(echo $purge | wc -w)" ] || fail "the purged $purge not installed again"
	for p in $programs; do
		[ "$(stat -c '%U %a' "$r/usr/local/bin/$p")" = "root 755" ] || fail "$p: $(stat -c '%U %a' "$r/usr/local/bin/$p")"
		# --help prints the usage on stdout and exits 0
		rc=0
		chroot "$r" "/usr/local/bin/$p" --help >"$work/help-$p.log" 2>&1 || rc=$?
		[ "$rc" = 0 ] && grep -qi '^usage: ' "$work/help-$p.log" ||
			{ head -n 5 "$work/help-$p.log"; fail "$p --help in the chroot: exit $rc"; }
		echo "$p --help: exit $rc, $(head -n 1 "$work/help-$p.log")"
	done
	[ "$(stat -c '%U %a' "$r/var/lib/tickwire-backtest")" = "root 1777" ] || fail "work directory"
	# an array task's work as an ordinary user in the work directory: a
	# synthetic session (feeds A, B, snapshots) replayed with the demo
	# profile, through tickwire-backtest when installed
	w=/var/lib/tickwire-backtest/smoke
	mkdir "$r$w"
	cp -r "$src/dpdk-config/demo" "$r$w/profile"
	chmod -R a+rX "$r$w"
	chmod 1777 "$r$w"
	if echo " $programs " | grep -q ' tickwire-backtest '; then
		job="tickwire-backtest run --profile $w/profile --out $w/out -j 1 $w/s1 && test -s $w/out/report.json"
	else
		job="tickwire-replay --ports $w/profile/ports.ini --config $w/profile/tickwire.cfg --print-books 0 s1/a.pcap s1/b.pcap"
	fi
	chroot --userspec=nobody:nogroup "$r" /usr/bin/env -i PATH=/usr/local/bin:/usr/bin:/bin sh -ec "cd $w && mkdir s1 &&
		tickwire-synth --out-a s1/a.pcap --out-b s1/b.pcap --snapshot s1/s.pcap --seed 1 --events 2000 && $job" \
		>"$work/smoke.log" 2>&1 || { tail -n 20 "$work/smoke.log"; fail "a session as user nobody: $job"; }
	echo "a session as user nobody: $(grep -m 1 -E '^tickwire-backtest: [0-9]+ sessions' "$work/smoke.log" || echo "$job: exit 0")"
	rm -rf "${r:?}$w"
	# nothing of the appliance: the unit, config, secrets, tuning, sysctl,
	# defaults, health gate and boot as before, and nothing else named
	# tickwire changed in the rootfs than the programs and the work directory
	sums $appliance_dirs >"$work/after.sums"
	if ! cmp -s "$work/before.sums" "$work/after.sums"; then
		diff "$work/before.sums" "$work/after.sums" | head -n 20
		fail "the appliance's files changed"
	fi
	allowed=$(for p in $programs; do echo "./usr/local/bin/$p"; done; echo ./var/lib/tickwire-backtest)
	(cd "$r" && find . -xdev -cnewer "$work/marker" -name '*tickwire*' -print) | sort >"$work/new-tickwire"
	extra=$(echo "$allowed" | sort | comm -23 "$work/new-tickwire" -)
	[ -z "$extra" ] || { echo "$extra" | head -n 20; fail "files of the appliance landed"; }
	echo "appliance untouched: $(wc -l <"$work/before.sums") entries compared; new: $(echo $(cat "$work/new-tickwire"))"
	# Slurm: left alone by default; its packages (only) on request
	chroot "$r" dpkg-query -W -f='${Package} ${db:Status-Abbrev}\n' slurmd munge 2>/dev/null | grep ' ii ' &&
		fail "Slurm installed without tickwire_backtest_worker_slurm"
	t3=$(date +%s)
	play "$work/run3.log" -e "{\"tickwire_backtest_worker_programs\": [${list%,}]}" -e tickwire_backtest_worker_slurm=true ||
		{ tail -n 40 "$work/run3.log"; fail "run with tickwire_backtest_worker_slurm=true failed"; }
	echo "run 3 (slurm): $(recap "$work/run3.log") ($(($(date +%s) - t3)) s)"
	n=$(chroot "$r" dpkg-query -W -f='${Package} ${db:Status-Abbrev}\n' slurmd munge 2>/dev/null | grep -c ' ii ') || true
	[ "$n" = 2 ] || fail "slurmd and munge not installed with tickwire_backtest_worker_slurm=true"
	[ ! -e "$r/etc/slurm/slurm.conf" ] || fail "a slurm.conf landed"
	touch "$work/passed"
	;;
rollback)
	# a provisioned host: the idempotency test's rootfs when it passed in
	# this build tree, else one run here
	done_root=$build/tests/ansible/work-idempotency
	if [ -e "$done_root/passed" ] && [ "$done_root/passed" -nt "$here/run-chroot.sh" ]; then
		rm -rf "$work/root"
		cp -a "$done_root/root" "$work/root"
		echo "good host: copied from the idempotency test"
	else
		play "$work/good.log" || { tail -n 40 "$work/good.log"; fail "good run failed"; }
		echo "good run: $(recap "$work/good.log") ($(($(date +%s) - start)) s)"
	fi
	r=$work/root
	# a host installed before the hugepages sysctl file existed
	rm -f "$r/etc/sysctl.d/60-tickwire-hugepages.conf"
	tuning="etc/tuned etc/sysctl.d etc/default boot etc/tickwire"
	sums $tuning >"$work/before.sums"
	mode=rollback-change
	play "$work/rollback.log" -e tickwire_health_timeout=1 ||
		{ tail -n 40 "$work/rollback.log"; fail "the snapshot, change and restore play failed"; }
	mode=rollback
	grep -q 'TASK \[tickwire_service : Remove the tuning files the rollout may have made\]' "$work/rollback.log" ||
		fail "restore.yml did not run its tuning step"
	# the change did change the tuning (else the test proves nothing)
	sed -n '/TASK \[tickwire_tuning : Write the tuned child profile\]/,/^$/p' "$work/rollback.log" |
		grep -q '^changed:' || fail "the tuning change changed nothing"
	sums $tuning >"$work/after.sums"
	if ! cmp -s "$work/before.sums" "$work/after.sums"; then
		diff "$work/before.sums" "$work/after.sums" | head -n 20
		fail "the tuning files were not rolled back"
	fi
	[ ! -e "$r/etc/sysctl.d/60-tickwire-hugepages.conf" ] || fail "the sysctl file the change made is still there"
	echo "rolled back: $(wc -l <"$work/before.sums") entries of $tuning as before"
	touch "$work/passed"
	;;
*)
	fail "unknown mode $mode"
	;;
esac
echo "PASS ($(($(date +%s) - start)) s)"
