/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * Unit tests of the appliance's DPDK-free pieces: the latency record file
 * (round trip, little-endian layout, refusal of other files) and the
 * preflight (hugepages, kernel-bound PCI device, privilege) against a fake
 * sysfs/procfs root.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tw_latency.h"
#include "tw_preflight.h"
#include "tw_check.h"


static void
test_latency_round_trip(const char *dir)
{
	char path[512];
	struct tw_lat_recorder r, orders;
	const struct tw_lat_recorder *both[2] = {&r, &orders};
	struct tw_lat_header h = {.flags = TW_LAT_FLAG_ONE_THREAD | TW_LAT_FLAG_PACED,
				  .tsc_hz = 2000000000u, .label = "one-thread",
				  .speed_milli = 10000, .start_tsc = 77,
				  .player_err_ns = {10, 20, 30, 40}, .player_packets = 5,
				  .rx_drops = 6};
	struct tw_lat_header back;
	struct tw_lat_record *recs, *kept;
	unsigned char raw[TW_LAT_HEADER_SIZE + 3 * TW_LAT_RECORD_SIZE];
	FILE *f;

	snprintf(path, sizeof(path), "%s/lat.bin", dir);
	CHECK(tw_lat_init(&r, 2) == 0);
	CHECK(tw_lat_init(&orders, 1) == 0);
	for (int i = 0; i < 3; i++) {
		struct tw_lat_record x = {.t0 = 1000u + (uint64_t)i, .t1 = 3000u + 100u * (uint64_t)i,
					  .instrument = -7 + i, .stream = (uint8_t)(i & 1),
					  .idx = (uint16_t)i, .qlen = 40u + (uint32_t)i,
					  .msg_seq_num = 0x01020304u, .burst_idx = 3,
					  .rxq = 9, .flags = TW_LAT_REC_RXQ};
		kept = tw_lat_add(&r, &x);
		CHECK((kept != NULL) == (i < 2));
		if (kept != NULL) {  /* the writer completes a stored record */
			kept->t2 = 5000u + (uint64_t)i;
			kept->n_msgs = 4;
		}
	}
	CHECK(r.count == 2 && r.dropped == 1);
	CHECK(tw_lat_hist_percentile(&r, 10000) >= 2000);
	{
		/* an order: the histogram takes t3 - t0 */
		struct tw_lat_record o = {.t0 = 100, .t1 = 200, .t2 = 300, .t3 = 100 + 65536,
					  .stream = TW_LAT_ORDER, .order_id = 12};

		CHECK(tw_lat_add(&orders, &o) != NULL);
		CHECK(tw_lat_hist_percentile(&orders, 5000) >= 65536);
	}
	CHECK(tw_lat_write(both, 2, path, &h) == 0);
	CHECK(tw_lat_read(path, &back, &recs) == 0);
	CHECK(back.count == 3 && back.dropped == 1 && back.tsc_hz == 2000000000u);
	CHECK(back.flags == (TW_LAT_FLAG_ONE_THREAD | TW_LAT_FLAG_PACED) &&
	      strcmp(back.label, "one-thread") == 0);
	CHECK(back.speed_milli == 10000 && back.start_tsc == 77 && back.player_err_ns[3] == 40 &&
	      back.player_packets == 5 && back.rx_drops == 6);
	CHECK(recs[1].t0 == 1001 && recs[1].t1 == 3100 && recs[1].t2 == 5001 &&
	      recs[1].instrument == -6 && recs[1].stream == 1 && recs[1].idx == 1 &&
	      recs[1].qlen == 41 && recs[1].msg_seq_num == 0x01020304u &&
	      recs[1].n_msgs == 4 && recs[1].burst_idx == 3 && recs[1].rxq == 9 &&
	      recs[1].flags == TW_LAT_REC_RXQ);
	CHECK(recs[2].stream == TW_LAT_ORDER && recs[2].t3 == 100 + 65536 &&
	      recs[2].order_id == 12);
	free(recs);
	/* the documented layout, byte for byte */
	f = fopen(path, "rb");
	CHECK(f != NULL && fread(raw, 1, sizeof(raw), f) == sizeof(raw));
	if (f != NULL)
		fclose(f);
	CHECK(memcmp(raw, "TWLAT\0\0\2", 8) == 0);
	CHECK(raw[8] == 2 && raw[12] == 128 && raw[16] == 64 && raw[20] == 5 && raw[32] == 3 &&
	      raw[40] == 1);
	CHECK(raw[64] == 0x10 && raw[65] == 0x27);                /* speed 10000, LE */
	CHECK(raw[120] == 6);                                     /* rx drops */
	CHECK(raw[128] == 0xe8 && raw[129] == 0x03);              /* t0 = 1000, LE */
	CHECK(raw[128 + 32] == 0xf9 && raw[128 + 35] == 0xff);    /* instrument = -7 */
	CHECK(raw[128 + 37] == 3 && raw[128 + 40] == 4);          /* burst_idx, n_msgs */
	CHECK(raw[128 + 52] == 0x04 && raw[128 + 55] == 0x01);    /* MsgSeqNum LE */
	CHECK(raw[128 + 128 + 36] == 2 && raw[128 + 128 + 56] == 12); /* the order */
	tw_lat_fini(&r);
	tw_lat_fini(&orders);
	/* another file is refused */
	f = fopen(path, "wb");
	if (f != NULL) {
		fputs("not a latency file at all, not even close to one......................"
		      "...................................................................", f);
		fclose(f);
	}
	CHECK(tw_lat_read(path, &back, &recs) == -EPROTO);
}

static void
write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (f != NULL) {
		fputs(text, f);
		fclose(f);
	}
}

static void
test_preflight(const char *dir)
{
	static struct tw_cfg cfg; /* large: static */
	char path[512], target[512], out[8192];
	FILE *mem;
	int n;

	memset(&cfg, 0, sizeof(cfg));
	cfg.n_ports = 1;
	snprintf(cfg.ports[0].name, sizeof(cfg.ports[0].name), "feed_a");
	snprintf(cfg.ports[0].devname, sizeof(cfg.ports[0].devname), "0000:3b:00.0");
	cfg.ports[0].kind = TW_CFG_PORT_PCI;
	cfg.eal.hugepage_size = 2u << 20;
	cfg.mempool.mbufs = 1023;
	cfg.mempool.data_room = 2176;

	snprintf(path, sizeof(path), "%s/sys/bus/pci/devices/0000:3b:00.0", dir);
	CHECK(system("true") == 0);
	snprintf(out, sizeof(out), "mkdir -p '%s' '%s/sys/bus/pci/drivers/ixgbe' "
		 "'%s/sys/kernel/mm/hugepages/hugepages-2048kB' '%s/proc'", path, dir, dir, dir);
	CHECK(system(out) == 0);
	snprintf(target, sizeof(target), "%s/sys/bus/pci/drivers/ixgbe", dir);
	snprintf(path, sizeof(path), "%s/sys/bus/pci/devices/0000:3b:00.0/driver", dir);
	unlink(path);
	CHECK(symlink(target, path) == 0);
	snprintf(path, sizeof(path), "%s/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages", dir);
	write_file(path, "0\n");
	snprintf(path, sizeof(path), "%s/proc/mounts", dir);
	write_file(path, "proc /proc proc rw 0 0\n");

	mem = fmemopen(out, sizeof(out), "w");
	n = tw_preflight(&cfg, dir, 1000, mem);
	fclose(mem);
	fputs(out, stdout);
	CHECK(n == 4);
	CHECK(strstr(out, "kernel driver ixgbe") != NULL);
	CHECK(strstr(out, "dpdk-devbind.py --bind=vfio-pci 0000:3b:00.0") != NULL);
	CHECK(strstr(out, "nr_hugepages") != NULL && strstr(out, "| sudo tee") != NULL);
	CHECK(strstr(out, "mount -t hugetlbfs") != NULL);
	CHECK(strstr(out, "sudo") != NULL && strstr(out, "uid 1000") != NULL);

	/* fixed machine: vfio-pci, pages reserved, hugetlbfs mounted, root */
	snprintf(target, sizeof(target), "%s/sys/bus/pci/drivers/vfio-pci", dir);
	snprintf(out, sizeof(out), "mkdir -p '%s'", target);
	CHECK(system(out) == 0);
	snprintf(path, sizeof(path), "%s/sys/bus/pci/devices/0000:3b:00.0/driver", dir);
	unlink(path);
	CHECK(symlink(target, path) == 0);
	snprintf(path, sizeof(path), "%s/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages", dir);
	write_file(path, "1024\n");
	snprintf(path, sizeof(path), "%s/proc/mounts", dir);
	write_file(path, "nodev /dev/hugepages hugetlbfs rw 0 0\n");
	mem = fmemopen(out, sizeof(out), "w");
	n = tw_preflight(&cfg, dir, 0, mem);
	fclose(mem);
	CHECK(n == 0);

	/* --no-huge with vdevs: nothing to check, even unprivileged */
	cfg.eal.no_huge = true;
	cfg.ports[0].kind = TW_CFG_PORT_VDEV;
	mem = fmemopen(out, sizeof(out), "w");
	CHECK(tw_preflight(&cfg, dir, 1000, mem) == 0);
	fclose(mem);
}

int
main(void)
{
	char dir[] = "/tmp/tw-appliance-units-XXXXXX";
	char cmd[128];

	if (mkdtemp(dir) == NULL)
		return 1;
	test_latency_round_trip(dir);
	test_preflight(dir);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		failures++;
	printf("%s: %d failure(s)\n", failures ? "FAIL" : "ok", failures);
	return failures ? 1 : 0;
}
