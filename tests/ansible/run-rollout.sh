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
# TW_ROLLOUT_TIMEOUT (s, default 1500) bounds the whole test.
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
deadline=$((start + ${TW_ROLLOUT_TIMEOUT:-1500}))
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
	--timeout $((deadline - t)) </dev/null >"$work/qemu.out" 2>&1 &
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
echo "PASS ($(($(date +%s) - start)) s)"
