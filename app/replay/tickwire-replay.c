/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * tickwire-replay: the appliance's actors without DPDK. Reads the profile
 * (ports.ini + tickwire.cfg), replays the rx_pcap file of each port (or the
 * files given) merged by capture time through the same feed filter, the
 * same decode group (feed -> signal) and the same order-out actor, all
 * stepped on this one thread, and writes the orders to a pcap file. The
 * strategy sees the same book events as in the appliance, so its orders are
 * the same bytes: this is the backtest path of DESIGN.md section 2
 * ("Determinism").
 *
 *   tickwire-replay --ports FILE --config FILE [--orders-out FILE]
 *                   [--print-books N] [--latency-out FILE] [--pace SPEED] [PCAP...]
 *
 * --pace SPEED delivers each frame at its capture time scaled by SPEED
 * (1 real time; max: as fast as the thread goes, the default). The one
 * thread both plays and runs the actors, so a frame due while an earlier
 * one is still being handled waits: its t0 is its scheduled time, and the
 * wait is part of its latency. The player's error (start of delivery minus
 * scheduled time) is printed and written to the latency file's header.
 *
 * With PCAP arguments, every file is read as if it arrived on every port
 * (each port keeps only its feeds), which is what the demo profile does by
 * pointing both feed ports at the one channel-340 capture.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "act.h"
#include "tw_chain.h"
#include "tw_config.h"
#include "tw_pcap.h"

#define MAX_INPUTS (2 * TW_CFG_MAX_PORTS)

struct input {
	struct tw_pcap *pcap;
	char path[TW_CFG_PATH_MAX];
	uint32_t port;          /* index in cfg->ports; UINT32_MAX: every port */
	struct tw_pcap_frame frame;
	uint64_t last_number;   /* of the last frame read */
	bool has_frame;
	bool failed;            /* the rest of the file could not be read */
};

struct replay {
	struct tw_cfg *cfg;
	uint64_t speed_milli;   /* 0: unpaced */
	uint64_t start_ns;      /* paced: when the first frame is due */
	uint64_t first_capture_ns;
	uint64_t cur_t0;        /* t0 of the frame being delivered */
	uint32_t *err_ns;       /* paced: per frame, delivery - schedule */
	uint64_t n_err, cap_err;
	struct input inputs[MAX_INPUTS];
	uint32_t n_inputs;
	FILE *orders;
	uint64_t frames, passed, filtered;
};

static uint64_t
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void
put_u32(FILE *f, uint32_t v)
{
	uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};

	fwrite(b, 1, 4, f);
}

static void
order_sink(void *ctx, const uint8_t *frame, uint32_t length)
{
	struct replay *r = ctx;

	if (r->orders == NULL)
		return;
	/* classic pcap record; time 0: the bytes of an order carry no time */
	put_u32(r->orders, 0);
	put_u32(r->orders, 0);
	put_u32(r->orders, length);
	put_u32(r->orders, length);
	fwrite(frame, 1, length, r->orders);
}

static FILE *
open_orders(const char *path)
{
	FILE *f = fopen(path, "wb");

	if (f == NULL)
		return NULL;
	put_u32(f, 0xa1b2c3d4);
	put_u32(f, 2 | (4u << 16)); /* version 2.4 */
	put_u32(f, 0);
	put_u32(f, 0);
	put_u32(f, 65535);
	put_u32(f, 1); /* Ethernet */
	return f;
}

/*
 * Paced: wait until the frame captured at @p capture_ns is due, and take
 * its t0 = the scheduled time; record how late delivery starts.
 */
static void
pace(struct replay *r, uint64_t capture_ns)
{
	uint64_t due, now;

	if (r->n_err == 0) {
		r->first_capture_ns = capture_ns;
		r->start_ns = mono_ns() + 1000000;     /* the first frame 1 ms from now */
	}
	due = r->start_ns + (uint64_t)((unsigned __int128)(capture_ns - r->first_capture_ns) *
				       1000u / r->speed_milli);
	while ((now = mono_ns()) < due)
		;
	if (r->n_err == r->cap_err) {
		uint64_t ncap = r->cap_err != 0 ? 2 * r->cap_err : 4096;
		uint32_t *g = realloc(r->err_ns, ncap * sizeof(*g));

		if (g == NULL) {
			r->cur_t0 = due;
			return;
		}
		r->err_ns = g;
		r->cap_err = ncap;
	}
	r->err_ns[r->n_err++] = now - due > UINT32_MAX ? UINT32_MAX : (uint32_t)(now - due);
	r->cur_t0 = due;
}

static int
add_input(struct replay *r, const char *path, uint32_t port)
{
	struct input *in;

	if (r->n_inputs == MAX_INPUTS)
		return -ENOSPC;
	in = &r->inputs[r->n_inputs];
	snprintf(in->path, sizeof(in->path), "%s", path);
	in->port = port;
	in->pcap = tw_pcap_open(path);
	if (in->pcap == NULL) {
		int e = errno;
		struct stat st;

		if (e == EPROTO && stat(path, &st) == 0 && st.st_size == 0)
			fprintf(stderr, "tickwire-replay: %s: empty file, not a capture; hint: "
				"give a pcap or pcapng file (tickwire-synth writes one)\n", path);
		else if (e == EPROTO)
			fprintf(stderr, "tickwire-replay: %s: not a pcap or pcapng capture (no "
				"known magic number, or a header cut short); hint: give a pcap or "
				"pcapng file (tickwire-synth writes one)\n", path);
		else
			fprintf(stderr, "tickwire-replay: %s: %s\n", path, strerror(e));
		return -e;
	}
	r->n_inputs++;
	return 0;
}

/*
 * The next frame of an input. A file that ends inside a record, or holds
 * garbage where a record should be, is reported with the file and the
 * frame number at fault; the run goes on with the other inputs and exits
 * non-zero (input was lost).
 */
static void
next_frame(struct input *in)
{
	int rc = tw_pcap_next(in->pcap, &in->frame);

	in->has_frame = rc == 1;
	if (rc == 1) {
		in->last_number = in->frame.number;
	} else if (rc < 0) {
		in->failed = true;
		fprintf(stderr, "tickwire-replay: %s: frame %" PRIu64 ": %s; the rest of the file "
			"is not replayed (%" PRIu64 " frames were)\n", in->path, in->last_number + 1,
			tw_pcap_error(in->pcap)[0] != '\0' ? tw_pcap_error(in->pcap) :
			strerror(-rc), in->last_number);
	}
}

/* The feed of @p port that a datagram belongs to, or NULL. */
static const struct tw_cfg_feed *
match(const struct tw_cfg *cfg, uint32_t port, const struct tw_pcap_l4 *l4)
{
	for (uint32_t i = 0; i < cfg->n_feeds; i++) {
		const struct tw_cfg_feed *f = &cfg->feeds[i];
		uint32_t group = __builtin_bswap32(f->group);

		if (f->port == port && group == l4->dst_ip && f->udp_port == l4->dst_port)
			return f;
	}
	return NULL;
}

/* Capture time of the frame being delivered (the order session's clock). */
static uint64_t g_capture_ns;

static uint64_t
capture_ns(void)
{
	return g_capture_ns;
}

static void
deliver(struct replay *r, struct tw_chain *chain, const struct input *in)
{
	g_capture_ns = in->frame.time_ns;
	const struct tw_pcap_frame *fr = &in->frame;
	struct tw_pcap_l4 l4;

	r->frames++;
	if (tw_pcap_parse_frame(fr->data, fr->caplen, fr->linktype, &l4, NULL) != 0 ||
	    l4.protocol != 17) {
		r->filtered++;
		return;
	}
	for (uint32_t p = 0; p < r->cfg->n_ports; p++) {
		const struct tw_cfg_feed *f;

		if (in->port != UINT32_MAX && in->port != p)
			continue;
		f = match(r->cfg, p, &l4);
		if (f == NULL)
			continue;
		struct tw_rx rx = {
			.payload = l4.payload, .length = l4.payload_length,
			.side = f->side == TW_CFG_SIDE_B ? TW_SIDE_B : TW_SIDE_A,
			.stream = (uint8_t)f->kind, .channel = f->channel,
			.t0 = r->speed_milli != 0 ? r->cur_t0 : mono_ns(),
			.rx_ns = fr->time_ns,
		};
		r->passed++;
		tw_chain_rx_direct(chain, &rx);
		act_group_drain(tw_chain_order_group(chain));
		/* order-out's replies, on the decode group's control queue */
		act_group_drain(tw_chain_decode_group(chain));
		return;
	}
	r->filtered++;
}

static void
usage(void)
{
	fprintf(stderr,
		"usage: tickwire-replay --ports FILE --config FILE [--orders-out FILE]\n"
		"                       [--print-books N] [--latency-out FILE] [--pace SPEED]\n"
		"                       [PCAP...]\n"
		"Replays the profile's rx_pcap inputs (or the PCAP files, read as arriving on\n"
		"every port) through the appliance's actors on one thread, without DPDK.\n"
		"--pace SPEED: each frame at its capture time / SPEED (1 real time, 10, ...;\n"
		"max: unpaced, the default).\n");
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"ports", required_argument, NULL, 'p'},
		{"config", required_argument, NULL, 'c'},
		{"orders-out", required_argument, NULL, 'o'},
		{"print-books", required_argument, NULL, 'b'},
		{"latency-out", required_argument, NULL, 'l'},
		{"pace", required_argument, NULL, 'S'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *ports = NULL, *config = NULL, *orders = NULL, *latency_out = NULL;
	uint32_t print_books = 10;
	struct tw_cfg_findings *findings;
	struct tw_chain_opts o;
	struct tw_lat_recorder lat, order_lat;
	uint64_t err[4] = {0};
	struct replay r;
	struct tw_chain *chain;
	int opt, rc = 0;

	memset(&r, 0, sizeof(r));
	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'p': ports = optarg; break;
		case 'c': config = optarg; break;
		case 'o': orders = optarg; break;
		case 'b': print_books = (uint32_t)strtoul(optarg, NULL, 10); break;
		case 'l': latency_out = optarg; break;
		case 'S':
			if (tw_lat_parse_speed(optarg, &r.speed_milli) != 0) {
				fprintf(stderr, "tickwire-replay: --pace %s: not a speed; hint: a "
					"factor of real time such as 1, 10, 0.5, or max\n", optarg);
				return 2;
			}
			break;
		default: usage(); return 2;
		}
	}
	if (ports == NULL || config == NULL) {
		usage();
		return 2;
	}
	findings = malloc(sizeof(*findings));
	if (findings == NULL)
		return 1;
	tw_cfg_findings_init(findings);
	r.cfg = tw_cfg_load(ports, config, findings);
	for (uint32_t i = 0; i < findings->count; i++) {
		char line[1024];

		if (findings->item[i].severity == TW_CFG_ERROR) {
			tw_cfg_finding_format(&findings->item[i], line, sizeof(line));
			fprintf(stderr, "%s\n", line);
		}
	}
	free(findings);
	if (r.cfg == NULL)
		return 1;

	if (optind < argc) {
		for (int i = optind; i < argc; i++)
			if (add_input(&r, argv[i], UINT32_MAX) != 0)
				return 1;
	} else {
		for (uint32_t p = 0; p < r.cfg->n_ports; p++) {
			char path[TW_CFG_PATH_MAX];

			tw_cfg_port_rx_pcap(&r.cfg->ports[p], path, sizeof(path));
			if (path[0] != '\0' && add_input(&r, path, p) != 0)
				return 1;
		}
	}
	if (orders != NULL && (r.orders = open_orders(orders)) == NULL) {
		fprintf(stderr, "tickwire-replay: %s: %s\n", orders, strerror(errno));
		return 1;
	}
	if (tw_lat_init(&lat, latency_out != NULL ? UINT64_C(1) << 20 : 0) != 0 ||
	    tw_lat_init(&order_lat, latency_out != NULL ? 65536 : 0) != 0)
		return 1;

	memset(&o, 0, sizeof(o));
	o.decode_mailbox.name = "decode";
	o.decode_mailbox.cpu = -1;
	o.order_mailbox.name = "order_out";
	o.order_mailbox.cpu = -1;
	o.order_mailbox.capacity = r.cfg->signal_to_order_out.capacity;
	o.order_mailbox.overflow = tw_chain_overflow(&r.cfg->signal_to_order_out, false);
	/* the latency records carry the mailbox depth at the hand-off */
	o.decode_mailbox.instrument = true;
	tw_chain_opts_from_cfg(&o, r.cfg);  /* arbitration, recovery, books, channels, strategy */
	o.order_sink = order_sink;
	o.order_sink_ctx = &r;
	o.ticks = mono_ns;
	/* risk's rate window runs on the capture's time (the appliance's on the
	 * wall clock: issue 18 gives both one clock) */
	o.now_ns = capture_ns;
	o.latency = &lat;
	o.order_latency = &order_lat;
	chain = tw_chain_create(&o);
	if (chain == NULL) {
		fprintf(stderr, "tickwire-replay: building the actors: %s\n", strerror(errno));
		return 1;
	}
	act_group_bind(tw_chain_decode_group(chain));
	act_group_bind(tw_chain_order_group(chain));

	/* merge by capture time; ties keep input order */
	for (uint32_t i = 0; i < r.n_inputs; i++)
		next_frame(&r.inputs[i]);
	for (;;) {
		struct input *best = NULL;

		for (uint32_t i = 0; i < r.n_inputs; i++)
			if (r.inputs[i].has_frame &&
			    (best == NULL || r.inputs[i].frame.time_ns < best->frame.time_ns))
				best = &r.inputs[i];
		if (best == NULL)
			break;
		if (r.speed_milli != 0)
			pace(&r, best->frame.time_ns);
		deliver(&r, chain, best);
		next_frame(best);
	}
	tw_chain_tick(chain, UINT64_MAX / 2, true);
	act_group_drain(tw_chain_order_group(chain));
	act_group_drain(tw_chain_decode_group(chain));

	printf("== tickwire-replay, %" PRIu64 " frames, %" PRIu64 " passed, %" PRIu64
	       " filtered\n", r.frames, r.passed, r.filtered);
	if (r.speed_milli != 0) {
		static const uint32_t per_10000[4] = {5000, 9900, 9990, 10000};

		tw_lat_percentiles_u32(r.err_ns, r.n_err, per_10000, 4, err);
		printf("player.speed %" PRIu64 ".%03" PRIu64 "\nplayer.frames %" PRIu64
		       "\nplayer.error_ns p50 %" PRIu64 " p99 %" PRIu64 " p99.9 %" PRIu64
		       " max %" PRIu64 "\n", r.speed_milli / 1000, r.speed_milli % 1000, r.n_err,
		       err[0], err[1], err[2], err[3]);
	}
	tw_chain_print(chain, stdout, print_books);
	if (latency_out != NULL) {
		struct tw_lat_header h = {.tsc_hz = 1000000000u, .label = "replay"};
		const struct tw_lat_recorder *recs[2] = {&lat, &order_lat};

		if (r.speed_milli != 0) {
			h.flags = TW_LAT_FLAG_PACED | TW_LAT_FLAG_ONE_THREAD;
			h.speed_milli = r.speed_milli;
			h.start_tsc = r.start_ns;
			memcpy(h.player_err_ns, err, sizeof(err));
			h.player_packets = r.n_err;
		}
		if (tw_lat_write(recs, 2, latency_out, &h) != 0) {
			fprintf(stderr, "tickwire-replay: writing %s failed\n", latency_out);
			rc = 1;
		}
	}
	tw_chain_destroy(chain);
	tw_lat_fini(&lat);
	tw_lat_fini(&order_lat);
	free(r.err_ns);
	if (r.orders != NULL && fclose(r.orders) != 0)
		rc = 1;
	for (uint32_t i = 0; i < r.n_inputs; i++) {
		if (r.inputs[i].failed)
			rc = 1;  /* reported when it happened: input was lost */
		tw_pcap_close(r.inputs[i].pcap);
	}
	tw_cfg_free(r.cfg);
	return rc;
}
