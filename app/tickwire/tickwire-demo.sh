#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The demo: tickwire with the dpdk-config/demo profile (net_pcap vdevs,
# --no-huge, --no-pci, lcores floating over the cpus there are) replaying the
# synthetic A/B capture the build generates, then the real CME channel-340
# capture when the CME data is present; prints the final books, the counters
# and the latency table of each run.
#
#   app/tickwire/tickwire-demo.sh [BUILD_DIR [SOURCE_DIR [CME_DATA]]]
#   ninja -C BUILD_DIR demo          (the same, from meson)
set -eu
build=$(cd "${1:-build}" && pwd)
source=$(cd "${2:-$(dirname "$0")/../..}" && pwd)
cme_data=${3:-$source/../shared/data/cme}
out=$(mktemp -d "${TMPDIR:-/tmp}/tickwire-demo.XXXXXX")
profile="python3 $source/tests/integration/tw_profile.py --from $source/dpdk-config/demo"

run() { # name speed feed_a_file feed_b_file
	name=$1
	speed=$2
	shift
	$profile --out "$out/$name" --rx "feed_a=$2" --rx "feed_b=$3" \
		--tx "orders=$out/$name/orders.pcap" \
		--cfg "^(\\s*file\\s*=\\s*)\"[^\"]*latency[^\"]*\"=>\\1\"$out/$name/latency.bin\"" \
		--cfg '(capture_to_decode = \{[^}]*?capacity = )\d+=>\g<1>16384' \
		--cfg 'capture_b = 2;=>capture_b = 1;' \
		--cfg '^(stats = \{)=>poll = {\n  order_out_idle_sleep_us = 100;\n  order_out_nice = -20;\n};\n\n\1'
	echo "==== tickwire demo: $name"
	"$build/app/tickwire/tickwire" --file-prefix "tickwire-demo-$$" \
		--log-level='tickwire.*:notice' -- \
		--ports "$out/$name/ports.ini" --config "$out/$name/tickwire.cfg" \
		--stats-interval 0 --print-books 8 --pace "$speed" --order-out-free
	echo "==== latency ($name, paced at ${speed}x)"
	"$build/app/report/tickwire-report" --streams 5 "$out/$name/latency.bin"
	echo "(orders: $out/$name/orders.pcap)"
}

# Paced (tickwire --pace): the synthetic capture (3.7 s) at real time, the
# real one (303 s, its traffic in the last 30) ten times faster. So that
# only two lcores busy-poll on a 2-cpu machine (the player rides on the
# capture lcore), one capture lcore drains both feeds and order-out sleeps
# 100 us when idle; at nice -20 it runs as soon as it wakes, not after the
# busy lcores' time slices. Order-out runs beside the decode lcore as it does live
# (--order-out-free), so tick-to-trade is the live path's.
run synthetic 1 "$build/app/synth/synth-demo-a.pcap" "$build/app/synth/synth-demo-b.pcap"
real="$cme_data/pcap/omi-data-packets/Cme/Mdp3.Sbe.v1.6/Cme.Mdp3.Sbe.v6.1.classic-nsec.pcap"
if [ -r "$real" ]; then
	run channel-340 10 "$real" "$real"
else
	echo "(CME data not found at $cme_data: real channel-340 run skipped)"
fi
