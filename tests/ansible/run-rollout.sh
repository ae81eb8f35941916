#!/bin/sh
# rollout.yml over ssh against the booted qemu image (meson suite ansible).
#   run-rollout.sh SOURCE_ROOT BUILD_ROOT
# 1. builds BUILD/tests/ansible/rollout/tickwire.raw with image/build and a
#    throw-away ssh key made here (reused while both exist); with
#    TW_ROLLOUT_BASE_IMAGE=FILE (an image image/build made) it copies that
#    image instead and adds the key to root's authorized_keys on root_a;
# 2. boots it with image/qemu-run --snapshot --ssh-port N (127.0.0.1 only);
# 3. rollout.yml with the image's inventory host: must pass the health gate;
# 4. rollout.yml again with a broken feed (an rx_pcap that does not exist:
#    the pair validates, the appliance cannot start) and a second inventory
#    host behind it: the gate fails, the first host is rolled back to the
#    previous pair and healthy again, and the second host is never touched.
# 5. a trial boot over ssh with real reboots (qemu-run --reboot): root_b
#    holds a copy of root_a whose health command never passes (made here
#    before the boot); a trial of root_b is armed as tickwire_flash arms one
#    (record, trial file with timeout=20, extlinux --once, GRUB's next_entry),
#    ansible.builtin.reboot boots it, and the role's verdict tasks poll over
#    ssh: the trial gives up and reboots under them, the poll finds the
#    host unreachable, waits for it and reads the record again on root_a:
#    "runs root_a: FELL BACK from root_b (...: not healthy within 20s ...)",
#    the host failed; the guest runs root_a, still DEFAULT.
# TW_ROLLOUT_TIMEOUT (s, default 1800) bounds the whole test.
set -eu
src=$(cd "$1" && pwd)
build=$(cd "$2" && pwd)
here=$src/tests/ansible
dir=$build/tests/ansible/rollout
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
export ANSIBLE_CONFIG="$src/ansible/ansible.cfg" ANSIBLE_NOCOLOR=1 ANSIBLE_LOCAL_TEMP="$dir/ansible-tmp"
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (image/build)"; exit 77; }
for t in ansible-playbook qemu-system-x86_64 ssh ssh-keygen; do
	command -v $t >/dev/null || { echo "SKIP: $t not installed"; exit 77; }
done
[ -x "$src/image/build" ] && [ -x "$src/image/qemu-run" ] || { echo "SKIP: image/build or image/qemu-run missing"; exit 77; }
start=$(date +%s)
deadline=$((start + ${TW_ROLLOUT_TIMEOUT:-1800}))
fail() {
	echo "FAIL: $*"
	exit 1
}
. "$here/image-root.sh"
mkdir -p "$dir"
work=$dir/work
rm -rf "$work"
mkdir -p "$work"

# 1. the image, with a test-only key
key=$dir/id_ed25519
img=$dir/tickwire.raw
if [ ! -s "$key" ] || [ ! -s "$img" ] || [ "$key" -nt "$img" ]; then
	rm -f "$key" "$key.pub" "$img"
	ssh-keygen -q -t ed25519 -N '' -C tickwire-ansible-test-only -f "$key"
	t=$(date +%s)
fi
# the image suite's image (image_boot runs first and boots it with
# --snapshot, so it is unmodified): no second image/build
if [ -z "${TW_ROLLOUT_BASE_IMAGE:-}" ] && [ -s "$build/tests/image/tickwire.raw" ]; then
	TW_ROLLOUT_BASE_IMAGE=$build/tests/image/tickwire.raw
fi
# a copy made from an older base image is stale
if [ -s "$img" ] && [ -n "${TW_ROLLOUT_BASE_IMAGE:-}" ] && [ "$TW_ROLLOUT_BASE_IMAGE" -nt "$img" ]; then
	rm -f "$img"
fi
if [ ! -s "$img" ] && [ -n "${TW_ROLLOUT_BASE_IMAGE:-}" ]; then
	# an image image/build already made (e.g. by the image tests): a copy
	# with the test key added to root's authorized_keys on slot root_a
	cp --sparse=always "$TW_ROLLOUT_BASE_IMAGE" "$img.tmp"
	off=$(part_offset "$img.tmp" root_a) || fail "$TW_ROLLOUT_BASE_IMAGE has no partition root_a"
	mkdir -p "$dir/mnt"
	mount -o loop,offset="$off" "$img.tmp" "$dir/mnt"
	install -d -m 0700 "$dir/mnt/root/.ssh"
	cat "$key.pub" >>"$dir/mnt/root/.ssh/authorized_keys"
	chmod 0600 "$dir/mnt/root/.ssh/authorized_keys"
	umount "$dir/mnt"
	mv "$img.tmp" "$img"
	echo "image: $TW_ROLLOUT_BASE_IMAGE with the test key"
fi
if [ ! -s "$img" ]; then
	t=$(date +%s)
	"$src/image/build" --build-dir "$build" --out "$img" --ssh-key "$key.pub" >"$dir/image-build.log" 2>&1 ||
		{ tail -n 30 "$dir/image-build.log"; fail "image/build failed"; }
	echo "image built in $(($(date +%s) - t)) s"
fi

# root_b: a copy of root_a (the test key too) whose trial never passes its
# health check, for step 5 (the guest runs with --snapshot: $img stays as made here)
off_a=$(part_offset "$img" root_a) || fail "$img has no partition root_a"
off_b=$(part_offset "$img" root_b) || fail "$img has no partition root_b"
mib=1048576
dd if="$img" of="$img" bs=$mib skip=$((off_a / mib)) seek=$((off_b / mib)) count=$(((off_b - off_a) / mib)) \
	conv=notrunc,sparse status=none
mkdir -p "$dir/mnt"
mount -o loop,offset="$off_b" "$img" "$dir/mnt"
printf '%s\n' 'TW_SLOT_HEALTH_TIMEOUT=600' 'TW_SLOT_HEALTH_CMD=false' >"$dir/mnt/etc/tickwire/slot.conf"
umount "$dir/mnt"

# 2. boot it, ssh on a free port of 127.0.0.1
port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
qemu_pid=
cleanup() {
	if [ -n "$qemu_pid" ]; then
		kill "$qemu_pid" 2>/dev/null || true
		wait "$qemu_pid" 2>/dev/null || true
	fi
}
trap cleanup EXIT
t=$(date +%s)
# in the foreground of a background job (its own --timeout ends it too)
"$src/image/qemu-run" "$img" --snapshot --ssh-port "$port" --log "$work/serial.log" \
	--reboot --timeout $((deadline - t)) </dev/null >"$work/qemu.out" 2>&1 &
qemu_pid=$!
sshopts="-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o BatchMode=yes -o ConnectTimeout=10 -o LogLevel=ERROR"
# shellcheck disable=SC2086
until ssh $sshopts -i "$key" -p "$port" root@127.0.0.1 true 2>/dev/null; do
	[ "$(date +%s)" -lt "$deadline" ] || { tail -n 20 "$work/serial.log"; fail "no ssh on 127.0.0.1:$port"; }
	kill -0 "$qemu_pid" 2>/dev/null || { cat "$work/qemu.out"; tail -n 20 "$work/serial.log"; fail "qemu exited"; }
	sleep 5
done
echo "guest up (ssh 127.0.0.1:$port) after $(($(date +%s) - t)) s"
guest() {
	# shellcheck disable=SC2086
	ssh $sshopts -i "$key" -p "$port" root@127.0.0.1 "$@"
}

# the inventory: the image's host, and a second name for the same guest that
# a stopped rollout must never reach
inv=$work/inventory
mkdir -p "$inv/host_vars"
cp "$src/image/inventory/host_vars/tickwire-qemu.yml" "$inv/host_vars/tickwire-qemu.yml"
cp "$src/image/inventory/host_vars/tickwire-qemu.yml" "$inv/host_vars/tickwire-qemu-second.yml"
cat >"$inv/hosts.yml" <<EOI
---
tickwire:
  hosts:
    tickwire-qemu:
    tickwire-qemu-second:
  vars:
    ansible_host: 127.0.0.1
    ansible_port: $port
    ansible_user: root
    ansible_ssh_private_key_file: $key
    ansible_ssh_common_args: "$sshopts"
    ansible_python_interpreter: /usr/bin/python3
EOI
meson install -C "$build" --no-rebuild --quiet --destdir "$work/dist" >/dev/null
rollout() {
	log=$1
	shift
	(cd "$src/ansible" && ansible-playbook -i "$inv" rollout.yml -e tickwire_dist_dir="$work/dist" \
		-e "@$here/rollout-vars.yml" "$@") >"$log" 2>&1
}

# 3. a good rollout, first host only
t=$(date +%s)
rollout "$work/good.log" --limit tickwire-qemu || { tail -n 40 "$work/good.log"; fail "good rollout failed"; }
grep -E '^tickwire-qemu +: ' "$work/good.log"
grep -q '"healthy": true' "$work/good.log" || fail "no passed health gate in the good rollout"
good=$(guest sha256sum /etc/tickwire/ports.ini /etc/tickwire/tickwire.cfg)
guest systemctl is-active tickwire.service >/dev/null || fail "tickwire.service not active after the good rollout"
echo "good rollout: health gate passed ($(($(date +%s) - t)) s)"

# 4. a broken rollout: both hosts, the first fails its gate
t=$(date +%s)
if rollout "$work/bad.log" -e "@$here/rollout-broken-vars.yml"; then
	fail "the broken rollout passed"
fi
grep -E '^tickwire-qemu(-second)? +: ' "$work/bad.log"
grep -q 'health gate failed on tickwire-qemu' "$work/bad.log" || { tail -n 40 "$work/bad.log"; fail "the health gate did not fail"; }
# the appliance cannot start: systemd's restarts run out and the gate says
# so at once instead of waiting out tickwire_health_timeout
grep -q 'failed, no restart pending' "$work/bad.log" || { tail -n 40 "$work/bad.log"; fail "the gate did not see the failed unit"; }
# the rescue imports tickwire_service's restore.yml: its tasks, in order,
# then the previous appliance's health (reported) and the stop
sed -n '/TASK \[tickwire_service : Restore the snapshot\]/,$p' "$work/bad.log" >"$work/bad-rescue.log"
[ -s "$work/bad-rescue.log" ] || fail "no rollback (no task 'Restore the snapshot')"
grep -q 'TASK \[tickwire_service : Restart the previous appliance\]' "$work/bad-rescue.log" ||
	fail "the rollback did not restart the previous appliance"
grep -q '"healthy": true' "$work/bad-rescue.log" || fail "the previous appliance was not healthy after the rollback"
grep -q 'rolled back to the snapshot' "$work/bad.log" || fail "the play did not stop with the rollback message"
if grep -q '\[tickwire-qemu-second\]' "$work/bad.log"; then
	fail "the rollout went on to the second host"
fi
after=$(guest sha256sum /etc/tickwire/ports.ini /etc/tickwire/tickwire.cfg)
[ "$good" = "$after" ] || fail "the config was not rolled back: $after"
guest /usr/local/lib/tickwire/tickwire-health --file-prefix tickwire --timeout 60 --nonzero >"$work/health-after.json" ||
	fail "the rolled-back appliance is not healthy: $(cat "$work/health-after.json")"
echo "broken rollout: gate failed, rolled back, healthy again, second host untouched ($(($(date +%s) - t)) s)"

# 5. a trial of root_b that falls back under the role's verdict tasks
t=$(date +%s)
attempt=$(date -u +%Y%m%dT%H%M%SZ)-root_b
cat >"$work/trial.yml" <<EOF
---
- name: A trial boot that falls back (tests/ansible/run-rollout.sh)
  hosts: tickwire-qemu
  gather_facts: false
  tasks:
    - name: Arm a trial of root_b as tickwire_flash's slot mode does
      ansible.builtin.shell: |
        set -eu
        mkdir -p /boot/tickwire
        echo "\$(date -u +%Y-%m-%dT%H:%M:%SZ) attempt=$attempt slot=root_b state=flashed reason=\"run-rollout.sh\"" >>/boot/tickwire/attempts
        echo "attempt=$attempt slot=root_b from=root_a timeout=20" >/boot/tickwire/trial
        extlinux --once=root_b /boot/extlinux
        /usr/local/lib/tickwire-image/tickwire-slot grub-once root_b
        sync
      changed_when: true
    - name: Reboot into the trial (as tickwire_flash does)
      ansible.builtin.reboot:
        reboot_timeout: 600
    - name: The role's verdict tasks
      ansible.builtin.include_role:
        name: tickwire_flash
        tasks_from: verdict.yml
      vars:
        tickwire_flash_attempt: "$attempt"
        tickwire_flash_target: root_b
        tickwire_flash_verdict_timeout: 600
        tickwire_flash_verdict_poll_s: 5
EOF
if (cd "$src/ansible" && ansible-playbook -i "$inv" "$work/trial.yml") >"$work/trial.log" 2>&1; then
	tail -n 30 "$work/trial.log"
	fail "a fallen-back trial passed the verdict"
fi
sed -n '/TASK \[tickwire_flash : Wait for the host to come back after a fallback reboot\]/,/^TASK/p' "$work/trial.log" >"$work/trial-reconnect.log"
grep -q '^ok: \[tickwire-qemu\]' "$work/trial-reconnect.log" ||
	{ tail -n 40 "$work/trial.log"; fail "the verdict did not wait for the host across the fallback reboot"; }
grep -q "tickwire-qemu runs root_a: FELL BACK from root_b (attempt $attempt: root_b: not healthy within 20s (false))" "$work/trial.log" ||
	{ tail -n 40 "$work/trial.log"; fail "no 'runs root_a: FELL BACK from root_b' report"; }
status=$(guest /usr/local/lib/tickwire-image/tickwire-slot status | head -n 1)
case $status in
"booted=root_a committed=root_a "*) ;;
*) fail "after the fallback: $status" ;;
esac
guest grep -F " attempt=$attempt " /boot/tickwire/attempts | sed 's/.* state=\([a-z-]*\) .*/\1/' | tr '\n' ' ' >"$work/trial-states"
[ "$(cat "$work/trial-states")" = "flashed trial failed fallen-back " ] || fail "records of $attempt: $(cat "$work/trial-states")"
echo "trial over ssh: root_b booted once, not healthy in 20 s, rebooted under the verdict's poll; the role waited, read fallen-back on root_a and failed the host ($(($(date +%s) - t)) s)"
echo "PASS ($(($(date +%s) - start)) s)"
