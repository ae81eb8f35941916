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
 *                   [--print-books N] [--latency-out FILE] [--pace SPEED]
 *                   [--result FILE [--session NAME]]
 *                   [--exchange [--latency-us N] [--return-latency-us N]
 *                    [--exchange-log FILE]] [PCAP...]
 *
 * --pace SPEED delivers each frame at its capture time scaled by SPEED
 * (1 real time; max: as fast as the thread goes, the default). The one
 * thread both plays and runs the actors, so a frame due while an earlier
 * one is still being handled waits: its t0 is its scheduled time, and the
 * wait is part of its latency. The player's error (start of delivery minus
 * scheduled time) is printed and written to the latency file's header.
 *
 * --result FILE writes the session result (tw_result.h, JSON; the orders to
 * FILE.orders.pcap unless --orders-out names another file).
 *
 * --exchange puts the simulated exchange (app/simx) behind order-out: an
 * iLink 3 gateway on 127.0.0.1 (ephemeral port) in this process, stepped on
 * this thread and on the capture's clock. Order-out runs lib/ilink3's
 * session against it (journal and credentials in a directory made for the
 * run), so the strategy's orders are acknowledged, filled (against the
 * recorded books, with a queue estimate), cancelled or rejected by
 * execution reports through the production path. An order decided at
 * capture time t reaches the exchange at t + --latency-us, its reports come
 * back --return-latency-us after the exchange made them; before each frame
 * everything due earlier is applied, after each frame the resting orders
 * are matched against what it changed. The same inputs give the same
 * orders, reports, counters and fills, byte for byte; --exchange-log FILE
 * keeps the execution reports as sent (raw iLink 3 frames).
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
#include "tw_result.h"
#include "book.h"
#include "simx_exchange.h"

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
	uint64_t tick_ns;       /* the last tick (capture time) */
	uint32_t *err_ns;       /* paced: per frame, delivery - schedule */
	uint64_t n_err, cap_err;
	struct input inputs[MAX_INPUTS];
	uint32_t n_inputs;
	FILE *orders;
	uint64_t frames, passed, filtered;
	struct simx_exchange *ex;   /* --exchange; NULL: none */
	struct tw_chain *chain;
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

	if (r->ex != NULL)
		simx_exchange_order_frame(r->ex, frame, length);
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
		/* one clock (issue 18): time's last step before the packet, as in
		 * the paced appliance */
		if (tw_chain_replay_tick(chain, &r->tick_ns, fr->time_ns))
			act_group_drain(tw_chain_order_group(chain));
		tw_chain_rx_direct(chain, &rx);
		act_group_drain(tw_chain_order_group(chain));
		/* order-out's replies, on the decode group's control queue */
		act_group_drain(tw_chain_decode_group(chain));
		return;
	}
	r->filtered++;
}

/* -- the simulated exchange (--exchange) -------------------------------------- */

/* Session clock steps while nothing is due: well inside the keep-alive, so
 * neither end of the session sees the other lapse across a quiet spell. */
#define EXCHANGE_STEP_NS (UINT64_C(10) * 1000000000u)
/* Polls of 1 ms waiting for the loopback socket before giving up. */
#define EXCHANGE_SYNC_POLLS 10000

/* The recorded book of an instrument, as the exchange reads it. */
static int
exchange_book(void *ctx, int32_t security_id, struct simx_book *out)
{
	const struct replay *r = ctx;
	const struct book_mbo *mbo = NULL;
	const struct book_instrument *in = tw_chain_instrument(r->chain, security_id, &mbo);

	if (in == NULL)
		return -ENOENT;
	out->ok = in->state == BOOK_STATE_OK;
	out->depth = in->depth < SIMX_MAX_LEVELS ? in->depth : SIMX_MAX_LEVELS;
	for (uint32_t i = 0; i < out->depth; i++) {
		out->bid[i].price = in->bid[i].price;
		out->bid[i].qty = in->bid[i].price == BOOK_PRICE_NONE ? 0 : in->bid[i].qty;
		out->ask[i].price = in->ask[i].price;
		out->ask[i].qty = in->ask[i].price == BOOK_PRICE_NONE ? 0 : in->ask[i].qty;
	}
	out->has_trade = in->last_trade.price != BOOK_PRICE_NONE;
	if (out->has_trade) {
		const struct book_trade *t = &in->last_trade;
		uint64_t k = UINT64_C(0xcbf29ce484222325);

		k = (k ^ t->transact_time) * UINT64_C(0x100000001b3);
		k = (k ^ t->trade_id) * UINT64_C(0x100000001b3);
		k = (k ^ (uint64_t)t->price) * UINT64_C(0x100000001b3);
		k = (k ^ (uint64_t)t->qty) * UINT64_C(0x100000001b3);
		k = (k ^ in->last_msg_seq) * UINT64_C(0x100000001b3);
		out->trade_key = k != 0 ? k : 1;
		out->trade_price = t->price;
		out->trade_qty = t->qty;
	}
	out->mbo = mbo != NULL && book_mbo_state(mbo) == BOOK_MBO_VALID ? mbo : NULL;
	return 0;
}

/*
 * Let order-out and the exchange read everything the other wrote: order-out
 * steps its session (execution reports to the strategy, on the decode
 * group's control queue), the strategy runs, its orders are written, the
 * gateway reads them. Done when the gateway applied every request order-out
 * sent and order-out read every report the gateway sent.
 */
static int
exchange_sync(struct replay *r)
{
	struct tw_chain *chain = r->chain;

	for (int i = 0; i < EXCHANGE_SYNC_POLLS; i++) {
		struct tw_chain_stats st;
		uint64_t received = 0;

		tw_chain_order_poll(chain, g_capture_ns);
		act_group_drain(tw_chain_decode_group(chain));
		act_group_drain(tw_chain_order_group(chain));
		simx_exchange_set_now(r->ex, g_capture_ns);
		simx_exchange_pump(r->ex, i == 0 ? 0 : 1);
		tw_chain_stats(chain, &st);
		for (unsigned int k = 0; k < TW_EXEC_KIND_COUNT_; k++)
			received += st.exec[k];
		if (simx_exchange_in_sync(r->ex, st.orders_sent + st.cancels_sent,
					  received + st.exec_other))
			return 0;
	}
	return -ETIMEDOUT;
}

/* Everything the exchange has due before @p until_ns, on its time. */
static int
exchange_advance(struct replay *r, uint64_t until_ns)
{
	for (;;) {
		uint64_t next = simx_exchange_next_ns(r->ex);
		int rc;

		if (next > g_capture_ns + EXCHANGE_STEP_NS)
			next = g_capture_ns + EXCHANGE_STEP_NS;
		if (next >= until_ns)
			return 0;
		if (next > g_capture_ns)
			g_capture_ns = next;
		simx_exchange_set_now(r->ex, g_capture_ns);
		simx_exchange_step(r->ex, g_capture_ns + 1);
		if ((rc = exchange_sync(r)) != 0)
			return rc;
	}
}

/* Connect order-out's session to the exchange at @p now_ns. */
static int
exchange_connect(struct replay *r, uint64_t now_ns)
{
	g_capture_ns = now_ns;
	simx_exchange_set_now(r->ex, now_ns);
	for (int i = 0; i < EXCHANGE_SYNC_POLLS; i++) {
		int st = tw_chain_order_poll(r->chain, g_capture_ns);

		if (st == IL3_STATE_ESTABLISHED)
			return 0;
		simx_exchange_pump(r->ex, 1);
	}
	return -ETIMEDOUT;
}

/* After the last frame: what is still due, then Terminate. */
static int
exchange_finish(struct replay *r)
{
	int rc = 0;

	while (rc == 0 && simx_exchange_next_ns(r->ex) != UINT64_MAX)
		rc = exchange_advance(r, simx_exchange_next_ns(r->ex) + 1);
	if (rc != 0)
		return rc;
	simx_mark(simx_exchange_core(r->ex));
	tw_chain_order_terminate(r->chain, g_capture_ns);
	for (int i = 0; i < EXCHANGE_SYNC_POLLS; i++) {
		simx_exchange_pump(r->ex, i == 0 ? 0 : 1);
		if (tw_chain_order_poll(r->chain, g_capture_ns) == IL3_STATE_DISCONNECTED)
			return 0;
	}
	return -ETIMEDOUT;
}

/*
 * The session result's fills, positions and latency histograms from the
 * exchange (tw_result.h); exchange_result_free() releases them.
 * @return 0 or -ENOMEM.
 */
static int
exchange_result(struct replay *r, struct tw_result_session *s)
{
	static struct tw_result_hist ack, fill;
	const struct simx_exchange_latency *lat = simx_exchange_latency(r->ex);
	struct simx_position pos[SIMX_MAX_INSTRUMENTS];
	const struct simx_exchange_fill *f;
	const uint32_t n_fills = simx_exchange_fills(r->ex, &f);
	uint32_t n_pos = simx_positions(simx_exchange_core(r->ex), pos, SIMX_MAX_INSTRUMENTS);
	struct tw_result_fill *fills = calloc(n_fills != 0 ? n_fills : 1, sizeof(*fills));
	struct tw_result_position *positions = calloc(SIMX_MAX_INSTRUMENTS, sizeof(*positions));

	if (fills == NULL || positions == NULL) {
		free(fills);
		free(positions);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < n_fills; i++)
		fills[i] = (struct tw_result_fill){
			.client_order_id = f[i].client_order_id, .security_id = f[i].security_id,
			.side = f[i].side, .qty = f[i].qty, .leaves_qty = f[i].leaves_qty,
			.price = f[i].price, .time_ns = f[i].time_ns,
		};
	if (n_pos > SIMX_MAX_INSTRUMENTS)
		n_pos = SIMX_MAX_INSTRUMENTS;
	for (uint32_t i = 0; i < n_pos; i++)
		positions[i] = (struct tw_result_position){
			.security_id = pos[i].security_id, .position = pos[i].position,
			.realised = pos[i].realised, .unrealised = pos[i].unrealised,
		};
	memcpy(ack.count, lat->order_to_ack, sizeof(ack.count));
	memcpy(fill.count, lat->order_to_fill, sizeof(fill.count));
	s->fills = fills;
	s->n_fills = n_fills;
	s->positions = positions;
	s->n_positions = n_pos;
	s->order_to_ack = &ack;
	s->order_to_fill = &fill;
	return 0;
}

static void
exchange_result_free(struct tw_result_session *s)
{
	free((void *)s->fills);
	free((void *)s->positions);
	s->fills = NULL;
	s->positions = NULL;
}

/* The exchange's counters and positions, after the chain's. */
static void
exchange_print(struct replay *r, FILE *out)
{
	struct simx_position pos[SIMX_MAX_INSTRUMENTS];
	struct simx_stats st;
	uint32_t n;

	simx_stats(simx_exchange_core(r->ex), &st);
	fprintf(out, "== simulated exchange\n"
		"simx.news %" PRIu64 "\nsimx.acks %" PRIu64 "\nsimx.rejects %" PRIu64
		"\nsimx.fills %" PRIu64 "\nsimx.filled_qty %" PRIu64
		"\nsimx.aggressive_fills %" PRIu64 "\nsimx.passive_fills %" PRIu64
		"\nsimx.mbo_joins %" PRIu64
		"\nsimx.cancels %" PRIu64 "\nsimx.canceled %" PRIu64
		"\nsimx.cancel_rejects %" PRIu64 "\nsimx.too_late %" PRIu64
		"\nsimx.resting %" PRIu64 "\nsimx.overflows %" PRIu64
		"\nsimx.mismatches %" PRIu64 "\n",
		st.news, st.acks, st.rejects, st.fills, st.filled_qty, st.aggressive_fills,
		st.passive_fills, st.mbo_joins, st.cancels, st.canceled, st.cancel_rejects, st.too_late,
		st.resting, st.overflows, simx_exchange_mismatches(r->ex));
	n = simx_positions(simx_exchange_core(r->ex), pos, SIMX_MAX_INSTRUMENTS);
	for (uint32_t i = 0; i < n && i < SIMX_MAX_INSTRUMENTS; i++)
		fprintf(out, "simx.position.%" PRId32 " position %" PRId64 " bought %" PRIu64
			" sold %" PRIu64 " realised %" PRId64 " unrealised %" PRId64
			" mark %" PRId64 "\n", pos[i].security_id, pos[i].position,
			pos[i].bought, pos[i].sold, pos[i].realised, pos[i].unrealised,
			pos[i].mark);
}

static void
usage(FILE *out)
{
	fprintf(out,
		"usage: tickwire-replay --ports FILE --config FILE [--orders-out FILE]\n"
		"                       [--print-books N] [--latency-out FILE] [--pace SPEED]\n"
		"                       [--result FILE [--session NAME]] [PCAP...]\n"
		"Replays the profile's rx_pcap inputs (or the PCAP files, read as arriving on\n"
		"every port) through the appliance's actors on one thread, without DPDK.\n"
		"--pace SPEED: each frame at its capture time / SPEED (1 real time, 10, ...;\n"
		"max: unpaced, the default).\n"
		"--result FILE: the session result as JSON (counters, orders, inputs and\n"
		"their SHA-256; the orders go to FILE.orders.pcap unless --orders-out);\n"
		"--session NAME its name (default: the first input's file name).\n"
		"--exchange: the simulated exchange behind order-out (iLink 3 on loopback,\n"
		"the capture's clock): acks, fills, cancels and rejects for the strategy;\n"
		"--latency-us N (default 50): decision to exchange; --return-latency-us N\n"
		"(default 50): exchange to order-out; --exchange-log FILE: the execution\n"
		"reports as the exchange sent them (raw iLink 3 frames).\n");
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
		{"result", required_argument, NULL, 'R'},
		{"session", required_argument, NULL, 'N'},
		{"exchange", no_argument, NULL, 'X'},
		{"latency-us", required_argument, NULL, 'L'},
		{"return-latency-us", required_argument, NULL, 'T'},
		{"exchange-log", required_argument, NULL, 'E'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *ports = NULL, *config = NULL, *orders = NULL, *latency_out = NULL;
	const char *result = NULL, *session = NULL;
	bool exchange = false;
	const char *exchange_log = NULL;
	FILE *xlog = NULL;
	int exchange_rc = 0;
	uint64_t latency_us = 50, return_us = 50;
	struct il3_session_config exchange_session;
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
		case 'R':
			/* the result lists the orders: written to a file of its own
			 * unless --orders-out (before or after) names one */
			result = optarg;
			if (orders == NULL && (orders = tw_result_orders_path(optarg)) == NULL) {
				fprintf(stderr, "tickwire-replay: --result %s: name too long\n",
					optarg);
				return 2;
			}
			break;
		case 'N': session = optarg; break;
		case 'X': exchange = true; break;
		case 'E': exchange_log = optarg; break;
		case 'L':
		case 'T': {
			char *end;
			unsigned long long v = strtoull(optarg, &end, 10);

			if (end == optarg || *end != '\0' || v > UINT64_C(3600000000)) {
				fprintf(stderr, "tickwire-replay: --%s %s: not a latency; hint: "
					"microseconds, 0 to 3600000000\n", opt == 'L' ?
					"latency-us" : "return-latency-us", optarg);
				return 2;
			}
			*(opt == 'L' ? &latency_us : &return_us) = v;
			break;
		}
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (ports == NULL || config == NULL) {
		usage(stderr);
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
	if (exchange) {
		r.ex = simx_exchange_create(&(struct simx_exchange_config){
			.latency_ns = latency_us * 1000u, .return_ns = return_us * 1000u,
			.book = exchange_book, .book_ctx = &r });
		if (r.ex == NULL) {
			fprintf(stderr, "tickwire-replay: the simulated exchange: %s\n",
				strerror(errno));
			return 1;
		}
		/* order-out's session against it, on the capture's clock; the
		 * orders pcap still gets every order and cancel frame */
		if (exchange_log != NULL) {
			if ((xlog = fopen(exchange_log, "wb")) == NULL) {
				fprintf(stderr, "tickwire-replay: %s: %s\n", exchange_log,
					strerror(errno));
				return 1;
			}
			simx_exchange_set_log(r.ex, xlog);
		}
		simx_exchange_session(r.ex, &exchange_session);
		o.session = &exchange_session;
		o.sink_with_session = true;
	}
	chain = tw_chain_create(&o);
	r.chain = chain;
	if (chain == NULL) {
		fprintf(stderr, "tickwire-replay: building the actors: %s\n", strerror(errno));
		return 1;
	}
	act_group_bind(tw_chain_decode_group(chain));
	act_group_bind(tw_chain_order_group(chain));

	/* merge by capture time; ties keep input order */
	for (uint32_t i = 0; i < r.n_inputs; i++)
		next_frame(&r.inputs[i]);
	if (r.ex != NULL) {
		uint64_t first = UINT64_MAX;

		for (uint32_t i = 0; i < r.n_inputs; i++)
			if (r.inputs[i].has_frame && r.inputs[i].frame.time_ns < first)
				first = r.inputs[i].frame.time_ns;
		if (exchange_connect(&r, first != UINT64_MAX ? first : 0) != 0) {
			fprintf(stderr, "tickwire-replay: the session to the simulated exchange "
				"was not established\n");
			return 1;
		}
	}
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
		if (r.ex != NULL && (exchange_rc = exchange_advance(&r, best->frame.time_ns)) != 0)
			break;
		deliver(&r, chain, best);
		if (r.ex != NULL) {
			if ((exchange_rc = exchange_sync(&r)) != 0)
				break;
			simx_exchange_market(r.ex, g_capture_ns);
		}
		next_frame(best);
	}
	tw_chain_tick(chain, UINT64_MAX / 2, true);
	act_group_drain(tw_chain_order_group(chain));
	act_group_drain(tw_chain_decode_group(chain));
	if (r.ex != NULL && (exchange_rc != 0 || exchange_sync(&r) != 0 ||
			     exchange_finish(&r) != 0)) {
		fprintf(stderr, "tickwire-replay: the simulated exchange lost its session\n");
		rc = 1;
	}

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
	if (r.ex != NULL)
		exchange_print(&r, stdout);
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
	if (result != NULL) {
		const char *paths[MAX_INPUTS];
		struct tw_result_session s = {
			.name = session, .ports_path = ports, .config_path = config,
			.inputs = paths, .n_inputs = r.n_inputs, .orders_path = orders,
			.frames = r.frames, .passed = r.passed, .filtered = r.filtered,
		};
		int e = fflush(r.orders) != 0 ? -errno : 0;  /* the orders are read back */

		for (uint32_t i = 0; i < r.n_inputs; i++)
			paths[i] = r.inputs[i].path;
		if (e == 0 && r.ex != NULL)
			e = exchange_result(&r, &s);
		if (e == 0)
			e = tw_result_write(result, &s, chain);
		exchange_result_free(&s);
		if (e != 0) {
			fprintf(stderr, "tickwire-replay: writing %s: %s\n", result, strerror(-e));
			rc = 1;
		}
	}
	tw_chain_destroy(chain);
	simx_exchange_destroy(r.ex);
	if (xlog != NULL && fclose(xlog) != 0)
		rc = 1;
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
