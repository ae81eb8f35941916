/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * tickwire: the DPDK appliance (DESIGN.md sections 1, 5, 7).
 *
 *   tickwire [EAL args] -- --ports FILE --config FILE [--latency-out FILE]
 *            [--stats-interval S] [--print-books N] [--rx-clock tsc|nic]
 *            [--latency-max N] [--topology XML | --synthetic S] [--sysfs DIR]
 *            [--preflight-root DIR]
 *
 * Threads (lcores from tickwire.cfg):
 *  - capture A / capture B (two-stage): rx bursts of 32 with prefetch, t0 per
 *    packet, keep only the configured feeds (destination group + UDP port of
 *    the queue's feeds), hand each packet to the decode group with act_send()
 *    of a pooled TW_MSG_RX (or an rte_ring of mbufs when the profile says
 *    rte_ring). They never block: a full hand-off is counted and the mbuf
 *    freed.
 *  - decode: steps the decode group (act_group_step): arbiter (lib/mdp3, one
 *    per channel of ports.ini) -> decoder (SBE walk) -> book (lib/book, one
 *    feed per channel) -> signal, by act_fast_send (tw_chain.h); the arbiter
 *    frees each mbuf once the decoder and the book are done with it. t0 per
 *    packet: the TSC at rx, or with --rx-clock nic the port's rx timestamp.
 *    One-thread topology: it polls the rx queues itself and calls the
 *    chain directly.
 *  - order-out: steps its own group. With session.credentials_file it runs
 *    lib/ilink3's session (non-blocking TCP to session.gateway_host:port,
 *    stepped from its loop) behind pre-trade risk (il3_risk_*, limits from
 *    risk { }); without, it writes each order as a UDP packet to the
 *    session's tx port. Every order is answered to the strategy (sent, or
 *    refused and why); execution reports are relayed to it. Kill switch:
 *    telemetry /tickwire/kill,on|off or SIGUSR1 (cancels open orders,
 *    refuses new ones).
 *  - main: signals, stop conditions, periodic stats (a "stats:" log line per
 *    interval, per channel), telemetry (/tickwire/stats with channel_<ID>_*
 *    counters, /tickwire/book,<id>, /tickwire/latency), teardown. A failed
 *    EAL start, or a PCI port EAL did not probe, runs the preflight
 *    (tw_preflight.h), which prints the command that fixes a known cause.
 *
 * Shutdown order: captures stop first, then decode drains what was handed
 * to it and flushes the arbiter, then order-out drains (and terminates the
 * session), then decode handles the last replies and execution reports; so
 * every mbuf is freed, every order written and every report seen by the
 * strategy before the ports are closed.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>
#include <rte_prefetch.h>
#include <rte_eth_ring.h>
#include <rte_ring.h>
#include <rte_telemetry.h>

#include "act.h"
#include "tw_chain.h"
#include "tw_config.h"
#include "tw_pcap.h"
#include "tw_preflight.h"
#include "tw_sdnotify.h"  /* image: systemd notify protocol */
#include "tw_heartbeat.h" /* hot lcores' progress, for the watchdog */
#include "tw_player.h"    /* paced replay into ring-backed ports */
#include "tw_merge.h"     /* ... taken in release order */
#include "tw_fault.h"     /* [feed.NAME] fault.*: faults on the rx path (tests) */
#include "tw_topo.h"

RTE_LOG_REGISTER(tw_log_app, tickwire.app, INFO);
RTE_LOG_REGISTER(tw_log_capture, tickwire.capture, INFO);
RTE_LOG_REGISTER(tw_log_decode, tickwire.decode, INFO);
RTE_LOG_REGISTER(tw_log_order, tickwire.order, INFO);

#define TW_LOG(level, type, ...) rte_log(RTE_LOG_##level, tw_log_##type, "tickwire: " __VA_ARGS__)

#define BURST 32
#define PREFETCH_AHEAD 3
#define MAX_QUEUES 16
#define MAX_QUEUE_FEEDS 8
#define TICK_US 100

/* -- state ------------------------------------------------------------------- */

struct queue_feed {
	uint32_t group;        /* host byte order */
	uint16_t udp_port;
	uint16_t channel;      /* CME channel: which arbiter and books */
	uint8_t side;
	uint8_t stream;
	struct tw_fault *fault;  /* fault injection (tw_fault.h); NULL: none */
};

/* One rx queue and the feeds it carries. */
struct rx_queue {
	uint16_t port_id;
	uint16_t queue;
	uint32_t n_feeds;
	struct queue_feed feeds[MAX_QUEUE_FEEDS];
	uint32_t n_faults;                      /* its feeds with faults: */
	struct tw_fault *faults[MAX_QUEUE_FEEDS];
	int input;                              /* paced: the player's input, else -1 */
};

/* Counters of one polling lcore: single writer, relaxed readers. */
struct poll_stats {
	uint64_t rx;
	uint64_t passed;
	uint64_t filtered;
	uint64_t handoff_drops;
	uint64_t over_budget;
	uint64_t bursts;
};

struct poller {
	const char *name;
	unsigned int lcore;
	struct poller *also;             /* a second poller this lcore drains (one capture lcore) */
	bool hosts_player;               /* steps the player between its polls */
	int hb;                          /* tw_heartbeat index */
	uint32_t n_queues;
	struct rx_queue queues[MAX_QUEUES];
	struct poll_stats stats;
};

/* What travels with an mbuf through the rte_ring hand-off. */
struct rx_meta {                 /* 16 bytes: the mbuf's dynamic area is small */
	uint64_t t0;
	uint16_t length;
	uint16_t qlen;                  /* saturates at 65535 */
	uint16_t channel;
	uint8_t offset;                 /* UDP payload in the frame: at most 14 + 8 + 60 + 8 */
	uint8_t side_stream;            /* side in bit 7, stream in bits 0-1 */
};

struct app {
	struct tw_cfg *cfg;
	const char *latency_out;
	/* paced replay (--pace): the player feeds ring-backed ports */
	uint64_t speed_milli;            /* 0: unpaced (net_pcap replays at once) */
	uint64_t loop_passes;            /* --loop: 0 once, TW_PLAYER_FOREVER until stopped */
	int player_lcore;                /* -1: a capture lcore hosts it, or none */
	struct tw_player *player;
	int stamp_offset;                /* struct tw_player_stamp dynfield */
	int release_offset;              /* the player's release number (uint64_t) */
	/* paced: the decode lcore takes datagrams in release order (tw_merge.h);
	 * each input's poller counts the frames it took off the input */
	struct tw_merge *merge;
	_Atomic uint64_t paced_gone[TW_PLAYER_MAX_INPUTS];
	uint64_t paced_tick_ns;          /* the last tick, in capture time */
	/* paced, no iLink session: order-out runs only when the decode lcore
	 * gives it its turn, between two datagrams, as in tickwire-replay */
	_Atomic uint64_t order_grant;
	_Atomic uint64_t order_served;
	bool order_lockstep;
	bool order_out_free;             /* --order-out-free: no turns */
	/* ... and its clock: the capture time of the packet (or the step
	 * before it) the decode lcore is at; order-out reads it in its turn */
	uint64_t paced_now_ns;
	int paced_port[TW_CFG_MAX_PORTS];   /* DPDK port id of a ring-backed port, -1 */
	struct rte_ring *paced_ring[TW_CFG_MAX_PORTS];
	_Atomic bool quit_player;
	uint32_t stats_interval_ms;
	uint32_t print_books;
	bool rx_clock_nic;
	bool capture_cut;          /* a replayed capture is cut short or corrupt */
	bool t0_capture_time;            /* --rx-clock nic on net_pcap: t0 = capture time */
	uint64_t latency_max;
	struct tw_topo_opts topo;        /* start-up check: this machine, or a test's */
	const char *preflight_root;      /* "" or a test's directory holding sys/ and proc/ */

	struct rte_mempool *pool;
	uint16_t port_ids[TW_CFG_MAX_PORTS];
	bool port_started[TW_CFG_MAX_PORTS];
	int tx_port;                     /* DPDK port id of the order port, -1 none */
	int ts_offset;                   /* mbuf rx timestamp dynfield, -1 none */
	uint64_t ts_flag;
	/* ns per unit of a port's rx timestamp: net_pcap gives the capture time
	 * in microseconds; other drivers are taken as ns (their clock is the
	 * NIC's, synchronised to the host by PTP) */
	uint64_t ts_scale[RTE_MAX_ETHPORTS];
	int meta_offset;                 /* rx_meta dynfield (rte_ring hand-off) */

	struct poller capture[2];
	struct poller decode_poll;       /* one-thread topology */
	struct rte_ring *ring;           /* rte_ring hand-off, else NULL */
	uint64_t ring_drops;

	struct tw_chain *chain;
	struct tw_lat_recorder latency;
	struct tw_lat_recorder order_latency;  /* order-out's records (tick-to-trade) */
	struct tw_heartbeat hb;          /* hot lcores beat, the main lcore checks */
	int hb_decode, hb_order;
	uint64_t tsc_hz;
	uint64_t tx_fail;

	_Atomic uint64_t rx_budget_used; /* replay.stop_after_packets */
	_Atomic bool quit_capture;
	_Atomic bool quit_decode;
	_Atomic bool quit_order;
	_Atomic bool decode_flushed;     /* decode lcore: input drained and flushed */
	_Atomic bool quit_decode_final;  /* decode lcore: order-out is done, exit */
	_Atomic bool chain_ready;
	_Atomic int session_state;       /* enum il3_state, -1: no session */
	bool has_session;
	struct il3_session_config session;
};

static struct app g_app;
static volatile sig_atomic_t g_signal;
static volatile sig_atomic_t g_kill_request;

static void
on_signal(int signo)
{
	g_signal = signo;
}

/* SIGUSR1: the kill switch. Only a flag; the main lcore acts on it. */
static void
on_kill_signal(int signo)
{
	(void)signo;
	g_kill_request = 1;
}

static uint64_t
wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t
read_tsc(void)
{
	return rte_rdtsc();
}

static inline uint64_t
tsc_to_ns(uint64_t tsc)
{
	return (uint64_t)((__uint128_t)tsc * 1000000000u / g_app.tsc_hz);
}

static inline void
bump(uint64_t *counter, uint64_t n)
{
	/* single writer; pairs with the relaxed loads of the main lcore */
	__atomic_store_n(counter, *counter + n, __ATOMIC_RELAXED);
}

static inline uint64_t
peek(const uint64_t *counter)
{
	return __atomic_load_n(counter, __ATOMIC_RELAXED);
}

/* -- rx path ------------------------------------------------------------------- */

/* Keep only the queue's configured feeds. @return the feed or NULL. */
static inline const struct queue_feed *
match_feed(const struct rx_queue *q, struct rte_mbuf *m, struct tw_pcap_l4 *l4)
{
	if (m->nb_segs != 1 ||
	    tw_pcap_parse_frame(rte_pktmbuf_mtod(m, const uint8_t *), m->data_len,
				TW_PCAP_LINKTYPE_ETHERNET, l4, NULL) != 0 ||
	    l4->protocol != 17)
		return NULL;
	for (uint32_t i = 0; i < q->n_feeds; i++)
		if (q->feeds[i].group == l4->dst_ip && q->feeds[i].udp_port == l4->dst_port)
			return &q->feeds[i];
	return NULL;
}

/* replay.stop_after_packets: how many of @p n received packets may pass. */
static inline uint16_t
budget(uint16_t n)
{
	uint64_t limit = g_app.cfg->replay.stop_after_packets, before;

	if (limit == 0)
		return n;
	before = atomic_fetch_add_explicit(&g_app.rx_budget_used, n, memory_order_relaxed);
	if (before >= limit)
		return 0;
	return before + n <= limit ? n : (uint16_t)(limit - before);
}

/* The player's stamp of a packet of a ring-backed port (paced), or NULL. */
static inline const struct tw_player_stamp *
player_stamp(struct rte_mbuf *m)
{
	const struct tw_player_stamp *st;

	if (g_app.player == NULL)
		return NULL;
	st = RTE_MBUF_DYNFIELD(m, g_app.stamp_offset, const struct tw_player_stamp *);
	return st->magic == TW_PLAYER_STAMP_MAGIC ? st : NULL;
}

/*
 * t0 of a packet: paced, the player's release @p st (when it became
 * available); otherwise @p burst_tsc, the TSC read when its rx burst
 * returned (before any packet of the burst ran the chain); with --rx-clock
 * nic, the port's rx timestamp (ns), or the wall clock for a packet that
 * came without one. t1 is then read from the wall clock too.
 */
static inline uint64_t
rx_t0(struct rte_mbuf *m, const struct tw_player_stamp *st, uint64_t burst_tsc)
{
	if (st != NULL)
		return tw_player_stamp_t0(st);
	if (!g_app.rx_clock_nic)
		return burst_tsc;
	if (g_app.ts_offset >= 0 && (m->ol_flags & g_app.ts_flag))
		return *RTE_MBUF_DYNFIELD(m, g_app.ts_offset, rte_mbuf_timestamp_t *) *
		       g_app.ts_scale[m->port < RTE_MAX_ETHPORTS ? m->port : 0];
	return wall_ns();
}

/* The arbiter's time (ns) of a packet whose t0 is @p t0. */
static inline uint64_t
rx_ns_of(uint64_t t0)
{
	return g_app.rx_clock_nic ? t0 : tsc_to_ns(t0);
}

/* A latency (t1 - t0) in ns. */
static inline uint64_t
lat_to_ns(uint64_t ticks)
{
	return g_app.rx_clock_nic ? ticks : tsc_to_ns(ticks);
}

/*
 * Paced: the release number the player wrote, and the capture time as the
 * arbiter's clock (the same as tickwire-replay's; issue 18, item 0).
 */
static inline void
paced_rx(struct tw_rx *rx, const struct rte_mbuf *m)
{
	if (g_app.merge == NULL)
		return;
	rx->release = *RTE_MBUF_DYNFIELD(m, g_app.release_offset, const uint64_t *);
	rx->rx_ns = tw_player_capture_ns(g_app.player, rx->release);
	rx->rx_flags |= TW_RX_RELEASE;
}

/* Hand one accepted packet to the decode group. @return true if handed. */
static inline bool
hand_off(struct rte_mbuf *m, const struct queue_feed *f, const struct tw_pcap_l4 *l4,
	 uint64_t t0, uint32_t idx, const struct tw_player_stamp *st)
{
	struct act_msg *msg = act_msg_alloc(TW_MSG_RX, sizeof(struct tw_rx));
	struct tw_rx *rx;

	if (msg == NULL)
		return false;
	rx = ACT_PAYLOAD(msg, struct tw_rx);
	memset(rx, 0, sizeof(*rx));
	rx->cookie = m;
	rx->payload = l4->payload;
	rx->length = l4->payload_length;
	rx->side = f->side;
	rx->stream = f->stream;
	rx->channel = f->channel;
	rx->t0 = t0;
	rx->rx_ns = rx_ns_of(t0);
	rx->burst_idx = idx;
	if (st != NULL) {
		rx->rxq = st->rxq;
		rx->rx_flags = TW_RX_RXQ;
	}
	paced_rx(rx, m);
	if (act_send(tw_chain_feed(g_app.chain), msg) != 0) {
		act_msg_free(msg);
		return false;
	}
	return true;
}

/*
 * [feed.NAME] fault.* (tw_fault.h), right after the rx burst: the packets of
 * the queue's faulty feeds dropped, duplicated, reordered, delayed or
 * silenced; what goes on is written back to @p pkts (room for
 * TW_FAULT_OUT_MAX(BURST)). A feed that dies is logged.
 */
static uint16_t
fault_rx(const struct rx_queue *q, struct rte_mbuf **pkts, uint16_t n, uint64_t now)
{
	struct tw_fault_rx in[BURST];
	struct tw_pcap_l4 l4;
	uint32_t died = 0;

	for (uint16_t i = 0; i < n; i++) {
		const struct queue_feed *f = match_feed(q, pkts[i], &l4);

		in[i] = (struct tw_fault_rx){
			.m = pkts[i], .fault = f != NULL ? f->fault : NULL,
			.seq = f != NULL ? tw_fault_seq(l4.payload, l4.payload_length) : 0,
		};
	}
	n = tw_fault_burst(in, n, q->faults, q->n_faults, now, pkts, TW_FAULT_OUT_MAX(BURST),
			   &died);
	for (uint32_t i = 0; died != 0 && i < q->n_faults; i++)
		if (tw_fault_death_news(q->faults[i]))
			TW_LOG(NOTICE, capture, "feed %s (channel %u, side %c) died after %" PRIu64
			       " packets (fault.die_after): the rest of its packets are dropped\n",
			       q->faults[i]->name, q->faults[i]->channel,
			       q->faults[i]->side != 0 ? 'B' : 'A', q->faults[i]->cfg.die_after);
	return n;
}

/* Returns the packets received, or with faults passed on (0: the queue was empty). */
static uint16_t
poll_queue(struct poller *p, const struct rx_queue *q, bool direct)
{
	struct rte_mbuf *pkts[TW_FAULT_OUT_MAX(BURST)];     /* faults add duplicates */
	struct rte_mbuf *to_ring[TW_FAULT_OUT_MAX(BURST)];
	struct tw_pcap_l4 l4;
	uint16_t n, n_taken, allowed, n_ring = 0, handed = 0;
	uint32_t ring_qlen = 0;
	uint64_t burst_tsc;

	n = rte_eth_rx_burst(q->port_id, q->queue, pkts, BURST);
	if (n == 0 && (q->n_faults == 0 || !tw_fault_pending(q->faults, q->n_faults, rte_rdtsc())))
		return 0;
	n_taken = n;
	burst_tsc = rte_rdtsc();
	bump(&p->stats.bursts, 1);
	bump(&p->stats.rx, n);
	allowed = budget(n);
	if (allowed < n) {
		rte_pktmbuf_free_bulk(&pkts[allowed], n - allowed);
		bump(&p->stats.over_budget, n - allowed);
		n = allowed;
	}
	if (q->n_faults != 0)
		n = fault_rx(q, pkts, n, burst_tsc);
	for (uint16_t i = 0; i < n && i < PREFETCH_AHEAD; i++)
		rte_prefetch0(rte_pktmbuf_mtod(pkts[i], void *));
	if (g_app.ring != NULL && !direct)
		ring_qlen = rte_ring_count(g_app.ring);

	for (uint16_t i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		const struct queue_feed *f;
		const struct tw_player_stamp *st = player_stamp(m);
		uint64_t t0 = rx_t0(m, st, burst_tsc);

		if (i + PREFETCH_AHEAD < n)
			rte_prefetch0(rte_pktmbuf_mtod(pkts[i + PREFETCH_AHEAD], void *));
		f = match_feed(q, m, &l4);
		if (f == NULL) {
			bump(&p->stats.filtered, 1);
			rte_pktmbuf_free(m);
			continue;
		}
		if (direct) {
			struct tw_rx rx = {
				.cookie = m, .payload = l4.payload, .length = l4.payload_length,
				.side = f->side, .stream = f->stream, .channel = f->channel,
				.t0 = t0,
				.rx_ns = rx_ns_of(t0), .qlen = 0, .burst_idx = i,
				.rxq = st != NULL ? st->rxq : 0,
				.rx_flags = st != NULL ? TW_RX_RXQ : 0,
			};
			paced_rx(&rx, m);
			bump(&p->stats.passed, 1);
			if (tw_chain_rx_direct(g_app.chain, &rx) < 0) {
				bump(&p->stats.handoff_drops, 1);
				rte_pktmbuf_free(m);
			} else {
				handed++;
			}
		} else if (g_app.ring != NULL) {
			struct rx_meta *meta = RTE_MBUF_DYNFIELD(m, g_app.meta_offset,
								 struct rx_meta *);

			/* the player's stamp and rx_meta share the field: the
			 * packets ahead of it in the rx queue join those ahead
			 * of it in the ring */
			const uint32_t ahead = ring_qlen + n_ring + (st != NULL ? st->rxq : 0);

			meta->t0 = t0;
			meta->qlen = ahead > UINT16_MAX ? UINT16_MAX : (uint16_t)ahead;
			meta->offset = (uint8_t)(l4.payload - rte_pktmbuf_mtod(m, const uint8_t *));
			meta->length = (uint16_t)l4.payload_length;
			meta->channel = f->channel;
			meta->side_stream = (uint8_t)(f->side << 7 | f->stream);
			to_ring[n_ring++] = m;
		} else if (hand_off(m, f, &l4, t0, i, st)) {
			bump(&p->stats.passed, 1);
			handed++;
		} else {
			bump(&p->stats.handoff_drops, 1);
			rte_pktmbuf_free(m);
		}
	}
	if (n_ring != 0) {
		unsigned int done = rte_ring_enqueue_burst(g_app.ring, (void **)to_ring, n_ring,
							   NULL);

		bump(&p->stats.passed, done);
		handed += (uint16_t)done;
		if (done < n_ring) {
			bump(&p->stats.handoff_drops, n_ring - done);
			rte_pktmbuf_free_bulk(&to_ring[done], n_ring - done);
		}
	}
	/* paced: what was taken off the input and not handed over; the decode
	 * lcore's merge counts what arrived (tw_merge.h) */
	if (q->input >= 0 && n_taken > handed)
		atomic_fetch_add_explicit(&g_app.paced_gone[q->input], n_taken - handed,
					  memory_order_release);
	return n;
}

/*
 * tickwire.cfg poll: after idle_polls empty polls in a row a hot lcore
 * sleeps idle_sleep_us per further empty poll (lab hosts sharing their
 * cpus); idle_sleep_us = 0 busy-polls forever and costs one predicted
 * branch per poll.
 */
struct idler {
	uint32_t empty;
};

static inline void
idle_account_us(struct idler *id, bool worked, uint32_t sleep_us)
{
	const struct tw_cfg_poll *pc = &g_app.cfg->poll;

	if (worked) {
		id->empty = 0;
	} else if (sleep_us != 0 && ++id->empty >= pc->idle_polls) {
		id->empty = pc->idle_polls;
		rte_delay_us_sleep(sleep_us);
	}
}

static inline void
idle_account(struct idler *id, bool worked)
{
	idle_account_us(id, worked, g_app.cfg->poll.idle_sleep_us);
}

/* Stopping: what the fault injectors of @p p still hold goes on (tw_fault_stop()). */
static void
fault_flush(struct poller *p, bool direct)
{
	for (uint32_t i = 0; i < p->n_queues; i++) {
		const struct rx_queue *q = &p->queues[i];
		uint64_t held;

		for (uint32_t k = 0; k < q->n_faults; k++)
			tw_fault_stop(q->faults[k]);
		do {
			held = 0;
			poll_queue(p, q, direct);
			for (uint32_t k = 0; k < q->n_faults; k++)
				held += tw_fault_held(q->faults[k]);
		} while (held != 0);
	}
}

static int
capture_main(void *arg)
{
	struct poller *p = arg;
	struct idler idle = { 0 };
	/* a lcore that hosts the player never sleeps: releases are due */
	const bool player = p->hosts_player && g_app.player != NULL;

	TW_LOG(INFO, capture, "%s%s%s on lcore %u, %u rx queue(s)%s\n", p->name,
	       p->also != NULL ? " + " : "", p->also != NULL ? p->also->name : "",
	       rte_lcore_id(), p->n_queues + (p->also != NULL ? p->also->n_queues : 0),
	       player ? ", paced replay player" : "");
	while (!atomic_load_explicit(&g_app.quit_capture, memory_order_acquire)) {
		uint32_t got = 0;

		if (player)
			got += tw_player_step(g_app.player);
		for (uint32_t i = 0; i < p->n_queues; i++)
			got += poll_queue(p, &p->queues[i], false);
		if (p->also != NULL)
			for (uint32_t i = 0; i < p->also->n_queues; i++)
				got += poll_queue(p->also, &p->also->queues[i], false);
		tw_hb_beat(&g_app.hb, p->hb);
		if (p->also != NULL)
			tw_hb_beat(&g_app.hb, p->also->hb);
		idle_account(&idle, got != 0 || (player && !tw_player_done(g_app.player)));
	}
	fault_flush(p, false);
	if (p->also != NULL)
		fault_flush(p->also, false);
	return 0;
}

/* The player on a lcore of its own (--player-lcore). */
static int
player_main(void *arg)
{
	(void)arg;
	TW_LOG(INFO, app, "paced replay player on lcore %u, speed %" PRIu64 ".%03" PRIu64 "\n",
	       rte_lcore_id(), g_app.speed_milli / 1000, g_app.speed_milli % 1000);
	tw_player_run(g_app.player, &g_app.quit_player);
	return 0;
}

/* -- decode lcore ----------------------------------------------------------------- */

/* Returns the packets taken off the ring. */
static unsigned int
drain_ring(void)
{
	void *objs[BURST];
	unsigned int n, total = 0;

	while ((n = rte_ring_dequeue_burst(g_app.ring, objs, BURST, NULL)) != 0) {
		total += n;
		for (unsigned int i = 0; i < n; i++) {
			struct rte_mbuf *m = objs[i];
			const struct rx_meta *meta = RTE_MBUF_DYNFIELD(m, g_app.meta_offset,
								       const struct rx_meta *);
			struct tw_rx rx = {
				.cookie = m,
				.payload = rte_pktmbuf_mtod(m, const uint8_t *) + meta->offset,
				.length = meta->length, .side = meta->side_stream >> 7,
				.stream = meta->side_stream & 3, .channel = meta->channel,
				.t0 = meta->t0, .rx_ns = rx_ns_of(meta->t0), .qlen = meta->qlen,
				.burst_idx = i,
			};
			/* paced: qlen counts the rx queue too (poll_queue) */
			if (g_app.player != NULL)
				rx.rx_flags = TW_RX_RXQ;
			paced_rx(&rx, m);
			if (i + 1 < n)
				rte_prefetch0(rte_pktmbuf_mtod((struct rte_mbuf *)objs[i + 1], void *));
			if (tw_chain_rx_direct(g_app.chain, &rx) < 0) {
				g_app.ring_drops++;
				rte_pktmbuf_free(m);
			}
		}
	}
	return total;
}

/* -- paced: release order and the player's clock (issue 18, item 0) ------------ */

/* Order-out's clock when paced without a session (read in its turn). */
static uint64_t
paced_now(void)
{
	return g_app.paced_now_ns;
}

/* tw_chain_opts.rx_hold: a paced datagram waits in the merge. */
static bool
paced_hold(void *ctx, const struct tw_rx *rx)
{
	(void)ctx;
	if (!(rx->rx_flags & TW_RX_RELEASE))
		return false;
	/* full (cannot be while the FIFOs hold the pool): delivered at once, counted */
	return tw_merge_push(g_app.merge, tw_player_input_of(g_app.player, rx->release), rx,
			     rx->release) == 0;
}

/* Where the player and the pollers stand: before the hand-off is drained. */
static void
paced_progress(struct tw_merge_progress *pr)
{
	tw_player_progress(g_app.player, &pr->next, pr->released);
	for (uint32_t i = 0; i < TW_MERGE_MAX_INPUTS; i++)
		pr->gone[i] = atomic_load_explicit(&g_app.paced_gone[i], memory_order_acquire);
}

/*
 * Paced, no session: when a datagram left work for order-out (an order, a
 * halt notice), order-out takes it now and the decode lcore waits, then
 * runs order-out's replies: tickwire-replay drains order-out and then the
 * decode group after each datagram, and an order-out running beside the
 * decode lcore could see a halt notice of the next datagram ahead of an
 * order of this one.
 */
static void
paced_order_turn(void)
{
	uint64_t grant;

	if (!g_app.order_lockstep || act_group_queued(tw_chain_order_group(g_app.chain)) == 0)
		return;
	grant = atomic_load_explicit(&g_app.order_grant, memory_order_relaxed) + 1;
	atomic_store_explicit(&g_app.order_grant, grant, memory_order_release);
	while (atomic_load_explicit(&g_app.order_served, memory_order_acquire) != grant &&
	       !atomic_load_explicit(&g_app.quit_order, memory_order_acquire))
		rte_pause();
	while (act_group_step(tw_chain_decode_group(g_app.chain), 0) > 0)
		;
}

/*
 * Time's last step before @p before_ns (tw_chain_replay_tick()), with
 * order-out's clock at @p clock_ns; order-out's turn for what the step
 * caused, as tickwire-replay drains order-out after it.
 */
static void
paced_step(uint64_t before_ns, uint64_t clock_ns)
{
	g_app.paced_now_ns = clock_ns;
	if (tw_chain_replay_tick(g_app.chain, &g_app.paced_tick_ns, before_ns))
		paced_order_turn();
}

/* Deliver what @p pr lets go, in release order. @return delivered. */
static uint32_t
paced_deliver(const struct tw_merge_progress *pr)
{
	const struct tw_rx *held;
	uint32_t n = 0;

	while ((held = tw_merge_next(g_app.merge, pr)) != NULL) {
		struct tw_rx rx = *held;

		tw_merge_pop(g_app.merge);
		rx.rx_flags |= TW_RX_MERGED;
		paced_step(rx.rx_ns, rx.rx_ns);   /* on the packet's clock */
		if (tw_chain_rx_direct(g_app.chain, &rx) < 0) {
			g_app.ring_drops++;
			rte_pktmbuf_free(rx.cookie);
		}
		paced_order_turn();
		n++;
	}
	return n;
}

/*
 * Idle: time passes on the player's clock in the replay's steps
 * (tw_chain_replay_tick()), up to the step before the next release, once
 * every datagram released so far has been delivered: a step never passes a
 * datagram still on its way. Before each datagram paced_deliver() takes
 * the step tickwire-replay takes; these are the steps between, which
 * tickwire-replay leaves out: a tick only expires what is due, so one step
 * or several before a datagram end the same. @return false if not settled.
 */
static bool
paced_tick(const struct tw_merge_progress *pr, uint64_t now_tsc)
{
	uint64_t next_ns;

	if (!tw_merge_settled(g_app.merge, pr))
		return false;
	paced_order_turn();       /* what else came for order-out (kill switch) */
	if (pr->next >= tw_player_total(g_app.player))
		return true;      /* the end: tw_chain_tick(..., true) at the end of input */
	/* tickwire-replay takes this step just before the next packet, on
	 * that packet's clock */
	next_ns = tw_player_capture_ns(g_app.player, pr->next);
	paced_step(RTE_MIN(tw_player_capture_at(g_app.player, now_tsc) + 1, next_ns), next_ns);
	return true;
}

static int
decode_main(void *arg)
{
	struct act_group *g = tw_chain_decode_group(g_app.chain);
	const bool one_thread = g_app.cfg->topology == TW_CFG_TOPOLOGY_ONE_THREAD;
	const uint64_t tick = g_app.tsc_hz / (1000000 / TICK_US);
	uint64_t next_tick = rte_rdtsc() + tick;
	struct idler idle = { 0 };

	(void)arg;
	TW_LOG(INFO, decode, "decode group on lcore %u (%s)\n", rte_lcore_id(),
	       tw_cfg_topology_name(g_app.cfg->topology));
	act_group_bind(g);
	while (!atomic_load_explicit(&g_app.quit_decode, memory_order_acquire)) {
		struct tw_merge_progress pr;
		uint64_t now;
		uint32_t got = 0;

		if (g_app.merge != NULL)
			paced_progress(&pr);    /* before the hand-off is drained */
		if (one_thread) {
			for (uint32_t i = 0; i < g_app.decode_poll.n_queues; i++)
				got += poll_queue(&g_app.decode_poll,
						  &g_app.decode_poll.queues[i], true);
		} else if (g_app.ring != NULL) {
			got = drain_ring();
		}
		if (g_app.merge != NULL) {
			int n;

			/* the whole mailbox: what was handed over before the
			 * snapshot must be in the merge (tw_merge.h) */
			while ((n = act_group_step(g, 0)) > 0)
				got += (uint32_t)n;
			got += paced_deliver(&pr);
		} else {
			got += (uint32_t)act_group_step(g, 0);
		}
		tw_chain_serve_queries(g_app.chain);  /* telemetry: one load when idle */
		tw_hb_beat(&g_app.hb, g_app.hb_decode);
		idle_account(&idle, got != 0);
		now = rte_rdtsc();
		if (now >= next_tick) {
			if (g_app.merge == NULL) {
				tw_chain_tick(g_app.chain, tsc_to_ns(now), false);
				next_tick = now + tick;
			} else if (paced_tick(&pr, now)) {
				next_tick = now + tick;
			}
		}
	}
	if (one_thread)
		fault_flush(&g_app.decode_poll, true);
	/* Captures have stopped: run what they handed over, then end of input. */
	if (g_app.ring != NULL)
		drain_ring();
	act_group_drain(g);
	if (g_app.merge != NULL) {
		/* every input is done: what is held goes, in release order */
		struct tw_merge_progress all = { .next = UINT64_MAX };

		paced_deliver(&all);
		act_group_drain(g);
		/* tickwire-replay's end of input (one clock, issue 18), and
		 * order-out's turn for what it caused */
		tw_chain_tick(g_app.chain, UINT64_MAX / 2, true);
		paced_order_turn();
	} else {
		tw_chain_tick(g_app.chain, tsc_to_ns(rte_rdtsc()), true);
	}
	TW_LOG(DEBUG, decode, "decode group drained\n");
	/* pairs with the acquire load of the main lcore */
	atomic_store_explicit(&g_app.decode_flushed, true, memory_order_release);
	/* No new order can come now; order-out's replies and execution reports
	 * still arrive on this group's mailbox until order-out has finished. */
	while (!atomic_load_explicit(&g_app.quit_decode_final, memory_order_acquire))
		if (act_group_step(g, 0) == 0)
			rte_delay_us_sleep(100);
	act_group_drain(g);
	return 0;
}

/* -- order-out lcore --------------------------------------------------------------- */

static void
order_sink(void *ctx, const uint8_t *frame, uint32_t length)
{
	struct rte_mbuf *m;
	char *dst;

	(void)ctx;
	if (g_app.tx_port < 0)
		return;
	m = rte_pktmbuf_alloc(g_app.pool);
	if (m == NULL) {
		g_app.tx_fail++;
		return;
	}
	dst = rte_pktmbuf_append(m, (uint16_t)length);
	if (dst == NULL) {
		rte_pktmbuf_free(m);
		g_app.tx_fail++;
		return;
	}
	memcpy(dst, frame, length);
	if (rte_eth_tx_burst((uint16_t)g_app.tx_port, 0, &m, 1) != 1) {
		rte_pktmbuf_free(m);
		g_app.tx_fail++;
	}
}

/* A hot lcore whose loop has not run for this long is stalled. */
#define HB_STALL_NS UINT64_C(1000000000)

/* Terminate the session politely: at most this long for the gateway's answer. */
#define TERMINATE_WAIT_NS UINT64_C(500000000)

/* poll.order_out_idle_sleep_us, -1: as the other hot lcores */
static uint32_t
order_idle_sleep_us(void)
{
	const struct tw_cfg_poll *pc = &g_app.cfg->poll;

	return pc->order_out_idle_sleep_us < 0 ? pc->idle_sleep_us :
						 (uint32_t)pc->order_out_idle_sleep_us;
}

/*
 * Order-out's thread as poll says.  When it sleeps idle: a timer slack of
 * 1 us, in place of the 50 us a thread starts with, which the kernel may add
 * to every sleep (an order that arrives during one waits for its end).  At
 * nice poll.order_out_nice: where order-out shares a cpu with busy-polling
 * lcores (a lab host, the demo), a woken order-out otherwise waits for their
 * time slices, milliseconds (README: the demo's t3 - t2).  Either failing
 * leaves order-out as it was, with a warning.
 */
static void
order_sched(void)
{
	const int nice = g_app.cfg->poll.order_out_nice;

	if (order_idle_sleep_us() != 0 && prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL) != 0)
		TW_LOG(WARNING, order, "order-out: timer slack not set: %s\n", strerror(errno));
	if (nice != 0 && setpriority(PRIO_PROCESS, (id_t)gettid(), nice) != 0)
		TW_LOG(WARNING, order, "order-out: poll.order_out_nice = %d not applied: %s "
		       "(a negative value needs root or CAP_SYS_NICE); order-out keeps its "
		       "priority\n", nice, strerror(errno));
}

static int
order_main(void *arg)
{
	struct act_group *g = tw_chain_order_group(g_app.chain);
	struct idler idle = { 0 };

	(void)arg;
	order_sched();
	TW_LOG(INFO, order, "order-out on lcore %u, nice %d, timer slack %d ns%s\n",
	       rte_lcore_id(), getpriority(PRIO_PROCESS, (id_t)gettid()),
	       prctl(PR_GET_TIMERSLACK, 0UL, 0UL, 0UL, 0UL),
	       g_app.has_session ? ", iLink 3 session" : "");
	act_group_bind(g);
	while (!atomic_load_explicit(&g_app.quit_order, memory_order_acquire)) {
		int busy;

		if (g_app.order_lockstep) {
			/* paced: only in the turn the decode lcore gives */
			const uint64_t grant = atomic_load_explicit(&g_app.order_grant,
								    memory_order_acquire);
			int n;

			busy = 0;
			if (grant != atomic_load_explicit(&g_app.order_served,
							  memory_order_relaxed)) {
				while ((n = act_group_step(g, 0)) > 0)
					busy += n;
				atomic_store_explicit(&g_app.order_served, grant,
						      memory_order_release);
			}
		} else {
			busy = act_group_step(g, 0);
		}

		tw_hb_beat(&g_app.hb, g_app.hb_order);
		if (g_app.has_session) {
			int state = tw_chain_order_poll(g_app.chain, wall_ns());

			/* pairs with the acquire load of the main lcore's wait */
			atomic_store_explicit(&g_app.session_state, state, memory_order_release);
		} else if (busy == 0) {
			rte_pause();
			idle_account_us(&idle, false, order_idle_sleep_us());
		} else {
			idle_account_us(&idle, true, 0);
		}
	}
	act_group_drain(g);
	if (g_app.has_session) {
		const uint64_t until = wall_ns() + TERMINATE_WAIT_NS;

		tw_chain_order_terminate(g_app.chain, wall_ns());
		while (wall_ns() < until &&
		       tw_chain_order_poll(g_app.chain, wall_ns()) != IL3_STATE_DISCONNECTED)
			act_group_step(g, 0);
		act_group_drain(g);
	}
	return 0;
}

/* -- ports -------------------------------------------------------------------------- */

static int
port_socket(uint16_t port_id)
{
	int socket = rte_eth_dev_socket_id(port_id);

	return socket < 0 ? (int)rte_socket_id() : socket;
}

static int
port_up(uint32_t index)
{
	const struct tw_cfg_port *cp = &g_app.cfg->ports[index];
	struct rte_eth_conf conf;
	struct rte_eth_dev_info info;
	struct rte_ether_addr mc[TW_CFG_MAX_FEEDS];
	uint16_t port_id, rxd = cp->rx_desc, txd = cp->tx_desc;
	uint32_t n_mc = 0;
	int rc, socket;

	if (g_app.paced_port[index] >= 0) {
		port_id = (uint16_t)g_app.paced_port[index];   /* ring-backed (--pace) */
	} else if (rte_eth_dev_get_port_by_name(cp->devname, &port_id) != 0) {
		fprintf(stderr, "%s:%u: port %s: no DPDK port named %s (not probed: %s)\n",
			g_app.cfg->ports_path, cp->device_line, cp->name, cp->devname,
			cp->kind == TW_CFG_PORT_PCI ? "device missing or bound to the kernel driver" :
			"EAL refused the vdev's arguments; its driver's message is above");
		return -ENODEV;
	}
	g_app.port_ids[index] = port_id;
	socket = port_socket(port_id);

	rc = rte_eth_dev_info_get(port_id, &info);
	if (rc != 0)
		return rc;
	memset(&conf, 0, sizeof(conf));
	g_app.ts_scale[port_id] = info.driver_name != NULL &&
				  strcmp(info.driver_name, "net_pcap") == 0 ? 1000 : 1;
	if (g_app.rx_clock_nic && cp->rx_queues > 0) {
		/* net_pcap stamps every packet without advertising the offload */
		if (info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_TIMESTAMP)
			conf.rxmode.offloads |= RTE_ETH_RX_OFFLOAD_TIMESTAMP;
		else if (g_app.ts_scale[port_id] == 1)
			TW_LOG(WARNING, app, "port %s: no rx timestamp offload; --rx-clock nic "
			       "takes t0 from the wall clock for its packets\n", cp->name);
		if (g_app.ts_scale[port_id] != 1) {
			g_app.t0_capture_time = true;
			TW_LOG(WARNING, app, "port %s (net_pcap): --rx-clock nic takes t0 from the "
			       "capture's timestamps, which are not a clock: the records' t1 - t0 "
			       "is no latency (tickwire-report refuses it); hint: --pace SPEED "
			       "replays the capture with a t0 per packet at its arrival\n",
			       cp->name);
		}
	}
	rc = rte_eth_dev_configure(port_id, cp->rx_queues, cp->tx_queues, &conf);
	if (rc != 0) {
		TW_LOG(ERR, app, "port %s: configure: %s\n", cp->name, rte_strerror(-rc));
		return rc;
	}
	rc = rte_eth_dev_adjust_nb_rx_tx_desc(port_id, &rxd, &txd);
	if (rc != 0)
		return rc;
	for (uint16_t q = 0; q < cp->rx_queues; q++) {
		rc = rte_eth_rx_queue_setup(port_id, q, rxd, (unsigned int)socket, NULL, g_app.pool);
		if (rc != 0) {
			TW_LOG(ERR, app, "port %s: rx queue %u: %s\n", cp->name, q, rte_strerror(-rc));
			return rc;
		}
	}
	for (uint16_t q = 0; q < cp->tx_queues; q++) {
		rc = rte_eth_tx_queue_setup(port_id, q, txd, (unsigned int)socket, NULL);
		if (rc != 0) {
			TW_LOG(ERR, app, "port %s: tx queue %u: %s\n", cp->name, q, rte_strerror(-rc));
			return rc;
		}
	}
	rc = rte_eth_dev_start(port_id);
	if (rc != 0) {
		TW_LOG(ERR, app, "port %s: start: %s\n", cp->name, rte_strerror(-rc));
		return rc;
	}
	g_app.port_started[index] = true;

	/* Multicast: the groups of the feeds arriving on this port. */
	for (uint32_t f = 0; f < g_app.cfg->n_feeds; f++) {
		const struct tw_cfg_feed *feed = &g_app.cfg->feeds[f];
		uint32_t group = rte_be_to_cpu_32(feed->group);

		if (feed->port != index)
			continue;
		mc[n_mc] = (struct rte_ether_addr){{0x01, 0x00, 0x5e, (group >> 16) & 0x7f,
						    (group >> 8) & 0xff, group & 0xff}};
		n_mc++;
	}
	if (n_mc != 0) {
		rc = rte_eth_dev_set_mc_addr_list(port_id, mc, n_mc);
		if (rc != 0) {
			TW_LOG(DEBUG, app, "port %s: multicast list: %s; all-multicast instead\n",
			       cp->name, rte_strerror(-rc));
			rc = rte_eth_allmulticast_enable(port_id);
			if (rc != 0)
				TW_LOG(DEBUG, app, "port %s: all-multicast: %s (the vdev receives "
				       "everything anyway)\n", cp->name, rte_strerror(-rc));
		}
	}
	TW_LOG(INFO, app, "port %s (%s, port id %u, socket %d): %u rx / %u tx queues, "
	       "%u / %u descriptors\n", cp->name, cp->devname, port_id, socket, cp->rx_queues,
	       cp->tx_queues, rxd, txd);
	return 0;
}

static void
ports_down(void)
{
	for (uint32_t i = 0; i < g_app.cfg->n_ports; i++) {
		if (!g_app.port_started[i])
			continue;
		rte_eth_dev_stop(g_app.port_ids[i]);
		rte_eth_dev_close(g_app.port_ids[i]);
		g_app.port_started[i] = false;
	}
}

/* The player's inputs: input k is port paced_of_input[k]. */
static uint32_t paced_of_input[TW_PLAYER_MAX_INPUTS];
static uint32_t n_paced_inputs;

/* The injector of each feed of ports.ini with fault.* keys (tw_fault.h). */
static struct tw_fault g_faults[TW_CFG_MAX_FEEDS];

static void
add_queue(struct poller *p, const struct tw_cfg_feed *feed)
{
	struct rx_queue *q = NULL;
	uint16_t port_id = g_app.port_ids[feed->port];

	for (uint32_t i = 0; i < p->n_queues; i++)
		if (p->queues[i].port_id == port_id && p->queues[i].queue == feed->rx_queue)
			q = &p->queues[i];
	if (q == NULL) {
		if (p->n_queues == MAX_QUEUES)
			return;
		q = &p->queues[p->n_queues++];
		q->port_id = port_id;
		q->queue = feed->rx_queue;
		q->input = -1;
		for (uint32_t k = 0; g_app.merge != NULL && k < n_paced_inputs; k++)
			if (paced_of_input[k] == feed->port)
				q->input = (int)k;
	}
	if (q->n_feeds == MAX_QUEUE_FEEDS)
		return;
	q->feeds[q->n_feeds++] = (struct queue_feed){
		.group = rte_be_to_cpu_32(feed->group),
		.udp_port = feed->udp_port,
		.channel = (uint16_t)feed->channel,
		.side = feed->side == TW_CFG_SIDE_B ? TW_SIDE_B : TW_SIDE_A,
		.stream = (uint8_t)feed->kind, /* incremental, snapshot, definition: same order */
	};
	if (feed->fault.enabled) {
		struct tw_fault *ft = &g_faults[feed - g_app.cfg->feeds];

		tw_fault_init(ft, &feed->fault, feed->name, feed->side == TW_CFG_SIDE_B,
			      feed->channel, g_app.tsc_hz);
		q->feeds[q->n_feeds - 1].fault = ft;
		q->faults[q->n_faults++] = ft;
	}
}

/* -- telemetry (runs on DPDK's telemetry thread) ----------------------------------- */

static void
add_poller(struct rte_tel_data *d, const char *prefix, const struct poller *p)
{
	char key[64];

#define ADD(field)                                                               \
	do {                                                                         \
		snprintf(key, sizeof(key), "%s_" #field, prefix);                        \
		rte_tel_data_add_dict_u64(d, key, peek(&p->stats.field));                \
	} while (0)
	ADD(rx);
	ADD(passed);
	ADD(filtered);
	ADD(handoff_drops);
#undef ADD
}

/* Per channel: channel_<ID>_<counter>. */
static void
add_channels(struct rte_tel_data *d)
{
	struct tw_chain_channel_stats cs[TW_CHAIN_MAX_CHANNELS];
	uint32_t n = tw_chain_channel_stats(g_app.chain, cs, TW_CHAIN_MAX_CHANNELS);
	char key[64];

	for (uint32_t i = 0; i < n && i < TW_CHAIN_MAX_CHANNELS; i++) {
#define ADD(field)                                                               \
	do {                                                                         \
		snprintf(key, sizeof(key), "channel_%u_" #field, cs[i].channel);         \
		rte_tel_data_add_dict_u64(d, key, cs[i].field);                          \
	} while (0)
		ADD(rx_packets);
		ADD(packets_a);
		ADD(packets_b);
		ADD(duplicates);
		ADD(gaps);
		ADD(lost_packets);
		ADD(packets_applied);
		ADD(rpt_seq_gaps);
		ADD(stale_books);
		ADD(recoveries);
		ADD(events);
		ADD(instruments);
		ADD(silent);
		ADD(silences);
		ADD(mbo_orders_added);
		ADD(mbo_stale_books);
		ADD(mbo_snapshots);
		ADD(mbo_checks);
		ADD(mbo_mismatches);
		ADD(mbo_level_diffs);
		ADD(mbo_unknown_orders);
		ADD(mbo_bad_entries);
		ADD(mbo_books_refused);
		ADD(mbo_order_overflows);
		ADD(mbo_level_overflows);
		ADD(mbo_table_grows);
#undef ADD
	}
}

/* The counters of every feed with faults (tw_fault.h): the final report's
 * "fault.FEED.COUNTER VALUE" lines to @p out, or telemetry's
 * fault_FEED_COUNTER to @p d. */
static void
faults_report(FILE *out, struct rte_tel_data *d)
{
	for (uint32_t f = 0; f < g_app.cfg->n_feeds; f++) {
		const char *name = g_app.cfg->feeds[f].name;
		struct tw_fault_stats st;
		const uint64_t *v = (const uint64_t *)&st;
		char key[96];

		if (!g_app.cfg->feeds[f].fault.enabled)
			continue;
		tw_fault_stats(&g_faults[f], &st);
		for (unsigned int i = 0; i < RTE_DIM(tw_fault_stat_names); i++) {
			const char *counter = tw_fault_stat_names[i];

			if (d != NULL) {
				snprintf(key, sizeof(key), "fault_%s_%s", name, counter);
				rte_tel_data_add_dict_u64(d, key, v[i]);
			} else {
				fprintf(out, "fault.%s.%s %" PRIu64 "\n", name, counter, v[i]);
			}
		}
	}
}

/* The chain's counters in /tickwire/stats: name, then the field. */
#define TEL_FIELD(name, field) { name, offsetof(struct tw_chain_stats, field) }
static const struct {
	const char *name;
	size_t offset;
} tel_chain_fields[] = {
	TEL_FIELD("decode_rx_packets", rx_packets),
	TEL_FIELD("decode_duplicates", verdict[2]),
	TEL_FIELD("book_events", events),
	TEL_FIELD("signal_tops", tops),
	TEL_FIELD("orders_written", orders_written),
	TEL_FIELD("orders_in", orders_in),
	TEL_FIELD("orders_sent", orders_sent),
	TEL_FIELD("orders_refused", orders_refused),
	TEL_FIELD("exec_new", exec[TW_EXEC_NEW]),
	TEL_FIELD("exec_fill", exec[TW_EXEC_FILL]),
	TEL_FIELD("exec_reject", exec[TW_EXEC_REJECT]),
	TEL_FIELD("exec_canceled", exec[TW_EXEC_CANCELED]),
	TEL_FIELD("cancels_sent", cancels_sent),
	TEL_FIELD("queue_joins", queue_joins),
	TEL_FIELD("queue_joins_unknown", queue_joins_unknown),
	TEL_FIELD("kill_engaged", kill_engaged),
	/* stale means stop (dpdk-config/README.md) */
	TEL_FIELD("stale_halted", halted),
	TEL_FIELD("stale_halts", halts),
	TEL_FIELD("stale_resumes", resumes),
	TEL_FIELD("stale_alarms", alarms),
	TEL_FIELD("stale_alarm_active", alarm_active),
	TEL_FIELD("stale_silences", silences),
	TEL_FIELD("cancels_on_stale", cancels_on_stale),
};
#undef TEL_FIELD

static int
tel_stats(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct tw_chain_stats st;

	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	if (!atomic_load_explicit(&g_app.chain_ready, memory_order_acquire))
		return 0;
	tw_chain_stats(g_app.chain, &st);
	add_poller(d, "capture_a", &g_app.capture[0]);
	add_poller(d, "capture_b", &g_app.capture[1]);
	add_poller(d, "decode_poll", &g_app.decode_poll);
	for (size_t i = 0; i < sizeof(tel_chain_fields) / sizeof(tel_chain_fields[0]); i++)
		rte_tel_data_add_dict_u64(d, tel_chain_fields[i].name,
					  *(const uint64_t *)((const char *)&st +
							      tel_chain_fields[i].offset));
	rte_tel_data_add_dict_u64(d, "lcore_stalls", peek(&g_app.hb.stalls));
	rte_tel_data_add_dict_string(d, "session", g_app.has_session ?
		il3_state_name((enum il3_state)st.session_state) : "none");
	add_channels(d);
	faults_report(NULL, d);
	return 0;
}

static int
tel_kill(const char *cmd, const char *params, struct rte_tel_data *d)
{
	bool engage;
	int rc;

	(void)cmd;
	if (params == NULL || (strcmp(params, "on") != 0 && strcmp(params, "off") != 0))
		return -EINVAL;
	if (!atomic_load_explicit(&g_app.chain_ready, memory_order_acquire))
		return -EAGAIN;
	engage = strcmp(params, "on") == 0;
	rc = tw_chain_kill(g_app.chain, engage);
	if (rc != 0)
		return rc;
	TW_LOG(NOTICE, order, "kill switch %s (telemetry)\n", engage ? "engaged" : "released");
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "kill", engage ? "on" : "off");
	return 0;
}

/* The book of the SecurityID in @p params, copied by the decode lcore. */
static int
tel_query(const char *params, struct tw_query_reply *r, long *id)
{
	char *end;

	if (params == NULL || *params == '\0')
		return -EINVAL;
	*id = strtol(params, &end, 10);
	if (*end != '\0' || *id <= 0 || *id > INT32_MAX)
		return -EINVAL;
	if (!atomic_load_explicit(&g_app.chain_ready, memory_order_acquire))
		return -EAGAIN;
	/* the decode lcore copies the book between packets (its poll loop
	 * serves the query), so the copy is never torn. The loop turns every
	 * few microseconds, but its lcore may share a cpu (the demo floats five
	 * lcores over two): wait up to a second */
	return tw_chain_query(g_app.chain, (int32_t)*id, r, UINT64_C(1000000000));
}

static int
tel_book(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct tw_query_reply r;
	long id;
	int rc;

	(void)cmd;
	rc = tel_query(params, &r, &id);
	if (rc < 0)
		return rc;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_int(d, "security_id", (int)id);
	rte_tel_data_add_dict_int(d, "found", r.found);
	if (!r.found)
		return 0;
	rte_tel_data_add_dict_string(d, "state", r.state == 0 ? "ok" : "stale");
	rte_tel_data_add_dict_u64(d, "rpt_seq", r.rpt_seq);
	for (unsigned int i = 0; i < 5 && i < r.depth; i++) {
		char key[32], val[64];

		char bid[48] = "-", ask[48] = "-";   /* an empty side: "-" */

		snprintf(key, sizeof(key), "level_%u", i + 1);
		if (r.bid_price[i] != TW_PRICE_NONE)
			snprintf(bid, sizeof(bid), "%" PRId64 "@%" PRId64, r.bid_qty[i],
				 r.bid_price[i]);
		if (r.ask_price[i] != TW_PRICE_NONE)
			snprintf(ask, sizeof(ask), "%" PRId64 "@%" PRId64, r.ask_qty[i],
				 r.ask_price[i]);
		snprintf(val, sizeof(val), "%s | %s", bid, ask);
		rte_tel_data_add_dict_string(d, key, val);
	}
	return 0;
}

/* One MBO level as two telemetry strings (a value holds at most
 * RTE_TEL_MAX_STRING_LEN bytes): "qty@price xN" and its first orders
 * "id:qty ..." in priority order, "+K" for those that did not fit. */
static void
tel_mbo_level(struct rte_tel_data *d, const char *side, unsigned int n,
	      const struct tw_query_mbo_level *l)
{
	char key[32], val[RTE_TEL_MAX_STRING_LEN];
	size_t used = 0;
	uint32_t i;

	snprintf(key, sizeof(key), "%s_%u", side, n);
	snprintf(val, sizeof(val), "%" PRId64 "@%" PRId64 " x%" PRIu32, l->qty, l->price,
		 l->orders);
	rte_tel_data_add_dict_string(d, key, val);
	snprintf(key, sizeof(key), "%s_%u_orders", side, n);
	val[0] = '\0';
	for (i = 0; i < l->shown; i++) {
		char one[48];
		int w = snprintf(one, sizeof(one), "%s%" PRIu64 ":%" PRId64, i ? " " : "",
				 l->order[i].order_id, l->order[i].qty);

		/* room for this one and a "+K" after it */
		if (used + (size_t)w + 12 >= sizeof(val))
			break;
		memcpy(val + used, one, (size_t)w + 1);
		used += (size_t)w;
	}
	if (i < l->orders)
		snprintf(val + used, sizeof(val) - used, "%s+%" PRIu32, used ? " " : "",
			 l->orders - i);
	rte_tel_data_add_dict_string(d, key, val);
}

/* /tickwire/mbo,ID: an instrument's market-by-order book (book.mbo). */
static int
tel_mbo(const char *cmd, const char *params, struct rte_tel_data *d)
{
	static const char *const states[] = {"valid", "partial", "stale", "overflow"};
	struct tw_query_reply r;
	long id;
	int rc;

	(void)cmd;
	rc = tel_query(params, &r, &id);
	if (rc < 0)
		return rc;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_int(d, "security_id", (int)id);
	rte_tel_data_add_dict_int(d, "found", r.found);
	if (!r.found)
		return 0;
	/* no book: MBO off on its channel, or no order entry seen yet */
	rte_tel_data_add_dict_string(d, "mbo", r.mbo_state >= 0 && r.mbo_state < 4 ?
				     states[r.mbo_state] : "none");
	rte_tel_data_add_dict_u64(d, "orders", r.mbo_order_count);
	for (unsigned int i = 0; i < r.mbo_levels[0]; i++)
		tel_mbo_level(d, "bid", i + 1, &r.mbo_bid[i]);
	for (unsigned int i = 0; i < r.mbo_levels[1]; i++)
		tel_mbo_level(d, "ask", i + 1, &r.mbo_ask[i]);
	return 0;
}

static int
tel_latency(const char *cmd, const char *params, struct rte_tel_data *d)
{
	static const uint32_t pct[] = {5000, 9000, 9900, 9990, 9999};
	static const char *const names[] = {"p50_ns", "p90_ns", "p99_ns", "p99_9_ns",
					    "p99_99_ns"}; /* telemetry keys: no dots */

	const uint64_t max = peek(&g_app.latency.max);

	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	/* a percentile is its log2 bucket's upper bound: never above the max seen */
	for (unsigned int i = 0; i < RTE_DIM(pct); i++) {
		uint64_t v = tw_lat_hist_percentile(&g_app.latency, pct[i]);

		rte_tel_data_add_dict_u64(d, names[i], lat_to_ns(v < max ? v : max));
	}
	rte_tel_data_add_dict_u64(d, "max_ns", lat_to_ns(max));
	rte_tel_data_add_dict_u64(d, "records", peek(&g_app.latency.count));
	return 0;
}

/*
 * What a soak watches (tests/perf/soak): mbufs in use, queue depths, the
 * drops of every kind before the decode group, and the live latency
 * histogram, whose differences between two reads give the percentiles of
 * the interval (bucket i: [2^i, 2^(i+1)) ticks of latency_hz).
 */
static int
tel_resources(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct tw_player_stats ps;
	struct rte_tel_data *hist;
	uint64_t imissed = 0, ierrors = 0, nombuf = 0, rx_ring = 0, handoff = 0, drops;

	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	if (!atomic_load_explicit(&g_app.chain_ready, memory_order_acquire))
		return 0;
	memset(&ps, 0, sizeof(ps));
	if (g_app.player != NULL)
		tw_player_counters(g_app.player, &ps);
	for (uint32_t i = 0; i < g_app.cfg->n_ports; i++) {
		struct rte_eth_stats es;

		if (g_app.paced_ring[i] != NULL)
			rx_ring += rte_ring_count(g_app.paced_ring[i]);
		if (!g_app.port_started[i] || g_app.cfg->ports[i].rx_queues == 0 ||
		    rte_eth_stats_get(g_app.port_ids[i], &es) != 0)
			continue;
		imissed += es.imissed;
		ierrors += es.ierrors;
		nombuf += es.rx_nombuf;
	}
	handoff = peek(&g_app.capture[0].stats.handoff_drops) +
		  peek(&g_app.capture[1].stats.handoff_drops) +
		  peek(&g_app.decode_poll.stats.handoff_drops);
	drops = imissed + ierrors + nombuf + handoff + peek(&g_app.ring_drops) + ps.ring_full +
		ps.no_mbuf;
	rte_tel_data_add_dict_u64(d, "mbufs_in_use", rte_mempool_in_use_count(g_app.pool));
	rte_tel_data_add_dict_u64(d, "mbufs_total", g_app.pool->size);
	rte_tel_data_add_dict_u64(d, "decode_mailbox_depth",
				  act_group_queued(tw_chain_decode_group(g_app.chain)));
	rte_tel_data_add_dict_u64(d, "order_mailbox_depth",
				  act_group_queued(tw_chain_order_group(g_app.chain)));
	rte_tel_data_add_dict_u64(d, "handoff_ring_depth",
				  g_app.ring != NULL ? rte_ring_count(g_app.ring) : 0);
	rte_tel_data_add_dict_u64(d, "rx_ring_depth", rx_ring);
	rte_tel_data_add_dict_u64(d, "rx_imissed", imissed);
	rte_tel_data_add_dict_u64(d, "rx_errors", ierrors);
	rte_tel_data_add_dict_u64(d, "rx_nombuf", nombuf);
	rte_tel_data_add_dict_u64(d, "handoff_drops", handoff);
	rte_tel_data_add_dict_u64(d, "ring_drops", peek(&g_app.ring_drops));
	rte_tel_data_add_dict_u64(d, "player_ring_full", ps.ring_full);
	rte_tel_data_add_dict_u64(d, "player_no_mbuf", ps.no_mbuf);
	rte_tel_data_add_dict_u64(d, "rx_drops", drops);
	rte_tel_data_add_dict_u64(d, "player_released", ps.released);
	rte_tel_data_add_dict_u64(d, "player_passes", ps.passes);
	rte_tel_data_add_dict_u64(d, "latency_hz", g_app.rx_clock_nic ? UINT64_C(1000000000) :
				  g_app.tsc_hz);
	hist = rte_tel_data_alloc();
	if (hist == NULL)
		return -ENOMEM;
	rte_tel_data_start_array(hist, RTE_TEL_U64_VAL);
	for (unsigned int i = 0; i < TW_LAT_BUCKETS; i++)
		rte_tel_data_add_array_u64(hist, peek(&g_app.latency.hist[i]));
	rte_tel_data_add_dict_container(d, "latency_hist", hist, 0);
	return 0;
}

/* -- main lcore ------------------------------------------------------------------------ */

static uint64_t
total_rx(void)
{
	return peek(&g_app.capture[0].stats.rx) + peek(&g_app.capture[1].stats.rx) +
	       peek(&g_app.decode_poll.stats.rx);
}

static void
print_poller(FILE *out, const struct poller *p)
{
	fprintf(out, "%s.rx %" PRIu64 "\n%s.passed %" PRIu64 "\n%s.filtered %" PRIu64
		"\n%s.handoff_drops %" PRIu64 "\n%s.over_budget %" PRIu64 "\n",
		p->name, peek(&p->stats.rx), p->name, peek(&p->stats.passed), p->name,
		peek(&p->stats.filtered), p->name, peek(&p->stats.handoff_drops), p->name,
		peek(&p->stats.over_budget));
}

static void
print_periodic(void)
{
	struct tw_chain_channel_stats cs[TW_CHAIN_MAX_CHANNELS];
	uint32_t n = tw_chain_channel_stats(g_app.chain, cs, TW_CHAIN_MAX_CHANNELS);
	struct tw_chain_stats st;
	char line[1024];
	int len = 0;

	tw_chain_stats(g_app.chain, &st);
	for (uint32_t i = 0; i < n && i < TW_CHAIN_MAX_CHANNELS && len < (int)sizeof(line); i++)
		len += snprintf(line + len, sizeof(line) - (size_t)len, " | channel %u applied %"
				PRIu64 " lost %" PRIu64 " stale %" PRIu64, cs[i].channel,
				cs[i].packets_applied, cs[i].lost_packets, cs[i].stale_books);
	TW_LOG(INFO, app, "stats: rx %" PRIu64 " decoded %" PRIu64 " events %" PRIu64
	       " orders %" PRIu64 " drops %" PRIu64 "%s\n", total_rx(), st.rx_packets, st.events,
	       st.orders_in,
	       peek(&g_app.capture[0].stats.handoff_drops) +
	       peek(&g_app.capture[1].stats.handoff_drops) +
	       peek(&g_app.decode_poll.stats.handoff_drops), line);
}

static void
run_main_lcore(void)
{
	const struct tw_cfg_replay *replay = &g_app.cfg->replay;
	uint64_t last_rx = 0, last_change = rte_rdtsc(), next_stats = 0;
	const uint64_t ms = g_app.tsc_hz / 1000;

	if (g_app.stats_interval_ms != 0)
		next_stats = rte_rdtsc() + g_app.stats_interval_ms * ms;
	tw_sd_ready();  /* image: systemd Type=notify (tw_sdnotify.h) */
	for (;;) {
		uint64_t now, rx;
		uint32_t new_stalls;

		rte_delay_us_sleep(2000);
		/* image: WatchdogSec= (tw_sdnotify.h), only while every hot lcore
		 * makes progress: a stuck lcore ends in a watchdog restart */
		if (tw_hb_check(&g_app.hb, tsc_to_ns(rte_rdtsc()), &new_stalls) == 0)
			tw_sd_watchdog();
		for (uint32_t i = 0; new_stalls != 0; i++, new_stalls >>= 1)
			if (new_stalls & 1)
				TW_LOG(ERR, app, "lcore %s made no progress for %u ms: the "
				       "systemd watchdog is no longer pinged\n", g_app.hb.name[i],
				       (unsigned int)(HB_STALL_NS / 1000000));
		if (g_kill_request != 0) {
			g_kill_request = 0;
			TW_LOG(NOTICE, order, "SIGUSR1: kill switch engaged\n");
			if (tw_chain_kill(g_app.chain, true) != 0)
				g_kill_request = 1;  /* order-out's mailbox is full: retry */
		}
		if (g_signal != 0) {
			TW_LOG(NOTICE, app, "signal %d: shutting down\n", (int)g_signal);
			break;
		}
		now = rte_rdtsc();
		rx = total_rx();
		if (replay->stop_after_packets != 0 &&
		    atomic_load_explicit(&g_app.rx_budget_used, memory_order_relaxed) >=
			    replay->stop_after_packets) {
			TW_LOG(NOTICE, app, "replay: %" PRIu64 " packets received, stopping\n",
			       replay->stop_after_packets);
			break;
		}
		/* paced: the inputs are idle only once the player has finished
		 * (a quiet spell of the capture is not the end of it) */
		if (rx != last_rx ||
		    (g_app.player != NULL && !tw_player_done(g_app.player))) {
			last_rx = rx;
			last_change = now;
		} else if (replay->stop_idle_ms != 0 &&
			   now - last_change >= replay->stop_idle_ms * ms) {
			TW_LOG(NOTICE, app, "replay: inputs idle for %u ms after %" PRIu64
			       " packets, stopping\n", replay->stop_idle_ms, rx);
			break;
		}
		if (next_stats != 0 && now >= next_stats) {
			print_periodic();
			next_stats = now + g_app.stats_interval_ms * ms;
		}
	}
	tw_sd_stopping();  /* image: systemd Type=notify (tw_sdnotify.h) */
}

/* -- start-up ------------------------------------------------------------------------------ */

static void
usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [EAL args] -- --ports FILE --config FILE [--latency-out FILE]\n"
		"       [--stats-interval S] [--print-books N] [--rx-clock tsc|nic]\n"
		"       [--latency-max N] [--topology XML | --synthetic STRING] [--sysfs DIR]\n"
		"       [--preflight-root DIR] [--pace SPEED [--player-lcore N] [--loop N]]\n"
		"  --ports          ports.ini of the profile (dpdk-config/<profile>/ports.ini)\n"
		"  --config         tickwire.cfg of the profile\n"
		"  --latency-out    write latency records here (overrides latency.file)\n"
		"  --stats-interval print counters every S seconds (0: off; overrides stats)\n"
		"  --print-books    print the first N books by SecurityID at exit (default 10)\n"
		"  --rx-clock       t0 and arbiter time: tsc (default), or nic: the port's rx\n"
		"                   timestamp (ns; t1 then from the wall clock)\n"
		"  --latency-max    records kept in memory (default 1048576)\n"
		"  --topology XML   judge the core map against an hwloc XML topology instead\n"
		"                   of this machine (tests)\n"
		"  --synthetic STR  ... or an hwloc synthetic one, e.g. \"pack:1 core:2 pu:1\"\n"
		"  --sysfs DIR      sysfs root for the isolation and PCI NUMA checks (tests)\n"
		"  --preflight-root DIR  read DIR/sys and DIR/proc when explaining a failed\n"
		"                   start (tests)\n"
		"  --pace SPEED     paced replay: the rx_pcap captures of the profile's ports\n"
		"                   reach ring-backed ports at their capture times / SPEED\n"
		"                   (1 real time, 10, 100, ...; max: all at once, net_pcap)\n"
		"  --player-lcore N the player's lcore: a capture lcore (two-stage: it steps\n"
		"                   the player between polls) or an unused lcore of\n"
		"                   eal.lcores (default: capture A's lcore in two-stage)\n"
		"  --loop N         paced: replay the captures N times (0: until stopped) as\n"
		"                   one session: MsgSeqNum and SendingTime move on each pass;\n"
		"                   each feed must open with a ChannelReset\n"
		"                   (tickwire-synth --reset-first)\n"
		"  --order-out-free paced: order-out runs beside the decode lcore on the wall\n"
		"                   clock, as live (the latency study's tick-to-trade), not\n"
		"                   in the decode lcore's turns; its decisions may then\n"
		"                   differ from tickwire-replay's\n",
		prog);
}

static int
parse_app_args(int argc, char **argv, const char **ports, const char **config)
{
	static const struct option longopts[] = {
		{"ports", required_argument, NULL, 'p'},
		{"config", required_argument, NULL, 'c'},
		{"latency-out", required_argument, NULL, 'l'},
		{"stats-interval", required_argument, NULL, 's'},
		{"print-books", required_argument, NULL, 'b'},
		{"rx-clock", required_argument, NULL, 'r'},
		{"latency-max", required_argument, NULL, 'm'},
		{"topology", required_argument, NULL, 'x'},
		{"synthetic", required_argument, NULL, 'y'},
		{"sysfs", required_argument, NULL, 'f'},
		{"preflight-root", required_argument, NULL, 'P'},
		{"pace", required_argument, NULL, 'S'},
		{"player-lcore", required_argument, NULL, 'L'},
		{"loop", required_argument, NULL, 'O'},
		{"order-out-free", no_argument, NULL, 'F'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int opt;

	g_app.print_books = 10;
	g_app.preflight_root = "";
	g_app.latency_max = UINT64_C(1) << 20;
	g_app.stats_interval_ms = UINT32_MAX;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'p': *ports = optarg; break;
		case 'c': *config = optarg; break;
		case 'l': g_app.latency_out = optarg; break;
		case 's': g_app.stats_interval_ms = (uint32_t)strtoul(optarg, NULL, 10) * 1000u; break;
		case 'b': g_app.print_books = (uint32_t)strtoul(optarg, NULL, 10); break;
		case 'm': g_app.latency_max = strtoull(optarg, NULL, 10); break;
		case 'x':
		case 'y':
			if (g_app.topo.source != TW_TOPO_SOURCE_SYSTEM)
				return -1;
			g_app.topo.source = opt == 'x' ? TW_TOPO_SOURCE_XML :
						       TW_TOPO_SOURCE_SYNTHETIC;
			g_app.topo.arg = optarg;
			break;
		case 'f': g_app.topo.sysfs_root = optarg; break;
		case 'P': g_app.preflight_root = optarg; break;
		case 'F': g_app.order_out_free = true; break;
		case 'S':
			if (tw_lat_parse_speed(optarg, &g_app.speed_milli) != 0) {
				fprintf(stderr, "tickwire: --pace %s: not a speed; hint: a factor "
					"of real time such as 1, 10, 0.5, or max\n", optarg);
				return -1;
			}
			break;
		case 'L': {
			char *end;
			long v = strtol(optarg, &end, 10);

			if (*end != '\0' || v < 0 || v >= RTE_MAX_LCORE) {
				fprintf(stderr, "tickwire: --player-lcore %s: not an lcore id\n", optarg);
				return -1;
			}
			g_app.player_lcore = (int)v;
			break;
		}
		case 'O': {
			char *end;
			unsigned long long v = strtoull(optarg, &end, 10);

			if (*end != '\0' || *optarg == '-' || *optarg == '\0') {
				fprintf(stderr, "tickwire: --loop %s: not a count; hint: the passes "
					"over the captures, 0 until stopped\n", optarg);
				return -1;
			}
			g_app.loop_passes = v == 0 ? TW_PLAYER_FOREVER : v;
			break;
		}
		case 'r':
			if (strcmp(optarg, "nic") == 0)
				g_app.rx_clock_nic = true;
			else if (strcmp(optarg, "tsc") != 0)
				return -1;
			break;
		default:
			return -1;
		}
	}
	if (optind != argc || *ports == NULL || *config == NULL)
		return -1;
	if ((g_app.loop_passes != 0 || g_app.order_out_free) && g_app.speed_milli == 0) {
		fprintf(stderr, "tickwire: %s needs a paced replay; hint: add --pace SPEED "
			"(1 real time)\n", g_app.order_out_free ? "--order-out-free" : "--loop");
		return -1;
	}
	return 0;
}

static void
print_findings(struct tw_cfg_findings *findings)
{
	char line[2 * TW_CFG_TEXT_MAX + TW_CFG_PATH_MAX + 64];

	tw_cfg_findings_sort(findings);
	for (uint32_t i = 0; i < findings->count; i++) {
		if (findings->item[i].severity == TW_CFG_INFO)
			continue;
		tw_cfg_finding_format(&findings->item[i], line, sizeof(line));
		fprintf(stderr, "%s\n", line);
	}
	if (findings->dropped != 0)
		fprintf(stderr, "(%u more findings not shown)\n", findings->dropped);
}

/*
 * Start-up validation of the core map against the machine (or the topology
 * a test names): lcores exist, hot lcores on their own physical cores, on
 * the NIC's NUMA node, isolated. Findings join the profile's.
 * @return 0 (look at findings->errors), -1 if the topology cannot be read.
 */
static int
topology_check(struct tw_cfg_findings *findings)
{
	struct tw_topo *topo = tw_topo_open(&g_app.topo);
	int rc;

	if (topo == NULL) {
		fprintf(stderr, "tickwire: reading the %s topology%s%s failed: %s; hint: check "
			"the file or description (hwloc's lstopo shows the machine's)\n",
			g_app.topo.source == TW_TOPO_SOURCE_SYSTEM ? "machine's" :
			g_app.topo.source == TW_TOPO_SOURCE_XML ? "XML" : "synthetic",
			g_app.topo.arg != NULL ? " " : "",
			g_app.topo.arg != NULL ? g_app.topo.arg : "", strerror(errno));
		return -1;
	}
	rc = tw_topo_check(topo, g_app.cfg, findings);
	if (rc != 0)
		fprintf(stderr, "tickwire: topology check: %s\n", strerror(-rc));
	tw_topo_close(topo);
	return rc != 0 ? -1 : 0;
}

static struct act_group_opts
mailbox_opts(const char *name, const struct tw_cfg_handoff *h)
{
	static const enum act_queue_type types[] = {
		[TW_CFG_QUEUE_BQUEUE] = ACT_QUEUE_BQUEUE,
		[TW_CFG_QUEUE_BATCHED] = ACT_QUEUE_BQUEUE_BATCHED,
		[TW_CFG_QUEUE_SHARDED] = ACT_QUEUE_SHARDED,
		[TW_CFG_QUEUE_LOCKFREE] = ACT_QUEUE_LOCKFREE,
		[TW_CFG_QUEUE_RTE_RING] = ACT_QUEUE_LOCKFREE, /* mailbox still exists: control */
	};
	struct act_group_opts o;

	memset(&o, 0, sizeof(o));
	o.name = name;
	o.queue = types[h->type];
	o.capacity = h->capacity;
	o.shards = h->shards;
	/* The configured policy. Captures never block and must get a refused
	 * datagram back to free its mbuf: for capture_to_decode, "drop" and
	 * "fail" both end with the capture dropping the newest and counting it
	 * (the runtime's DROP_NEWEST would free the message, not the mbuf).
	 * signal_to_order_out: "drop" drops the order in the mailbox (counted
	 * in order_out.mailbox_dropped, no reply), "fail" refuses it to the
	 * strategy (strategy.missed). */
	o.overflow = tw_chain_overflow(h, strcmp(name, "decode") == 0);
	o.cpu = -1;
	/* the latency records and decode.mailbox_max_depth read the depth at
	 * each hand-off (one rdtsc and a depth read per send) */
	o.instrument = strcmp(name, "decode") == 0;
	return o;
}

/*
 * The iLink 3 session of tickwire.cfg, when credentials_file is set: every
 * setting a live session needs, or a finding with file, line and hint.
 * @return 0 (g_app.session filled, or no session), -EINVAL.
 */
static int
session_setup(void)
{
	const struct tw_cfg *cfg = g_app.cfg;
	const struct tw_cfg_session *se = &cfg->session;
	struct in_addr addr;
	int errors = 0;

	if (se->credentials_file[0] == '\0')
		return 0;
	if (se->gateway_host[0] == '\0' || se->gateway_port == 0 ||
	    inet_pton(AF_INET, se->gateway_host, &addr) != 1) {
		fprintf(stderr, "%s:%u: error: session.credentials_file is set but the gateway "
			"is not (gateway_host \"%s\", gateway_port %u); hint: set "
			"session.gateway_host and session.gateway_port\n", cfg->config_path,
			se->credentials_line, se->gateway_host, se->gateway_port);
		errors++;
	}
	if (strlen(se->session_id) != 3 || se->firm_id[0] == '\0') {
		fprintf(stderr, "%s:%u: error: session.credentials_file is set but session_id "
			"(\"%s\") is not 3 characters or firm_id (\"%s\") is empty; hint: set "
			"session.session_id and session.firm_id as CME assigned them\n",
			cfg->config_path, se->credentials_line, se->session_id, se->firm_id);
		errors++;
	}
	if (errors != 0)
		return -EINVAL;
	memset(&g_app.session, 0, sizeof(g_app.session));
	g_app.session.journal_path = se->file;
	g_app.session.credentials_path = se->credentials_file;
	g_app.session.session_id = se->session_id;
	g_app.session.firm_id = se->firm_id;
	g_app.session.sender_id = "TICKWIRE";
	g_app.session.location = "US,IL";
	g_app.session.system_name = "tickwire";
	g_app.session.system_version = "1.0";
	g_app.session.system_vendor = "tickwire";
	g_app.session.gateway_ip = ntohl(addr.s_addr);
	g_app.session.gateway_port = se->gateway_port;
	g_app.session.keep_alive_ms = se->keep_alive_ms;
	g_app.has_session = true;
	return 0;
}

/* Trading starts logged on: wait (bounded) for ESTABLISHED before the
 * captures start. @return true if established. */
static bool
wait_session(void)
{
	const uint64_t until = wall_ns() + UINT64_C(5000000000);

	while (wall_ns() < until && g_signal == 0) {
		if (atomic_load_explicit(&g_app.session_state, memory_order_acquire) ==
		    IL3_STATE_ESTABLISHED)
			return true;
		rte_delay_us_sleep(1000);
	}
	return false;
}

/* -- paced replay (--pace) ----------------------------------------------------------- */

/*
 * The mbuf's dynamic field of the rx path: the player's stamp, which the
 * capture lcore of an rte_ring hand-off overwrites with struct rx_meta once
 * it has read it (one field for both: the dynamic area has no room for two
 * beside net_pcap's timestamp). The same name registers the same offset.
 */
static int
rx_dynfield(void)
{
	static const struct rte_mbuf_dynfield desc = {
		.name = "tickwire_rx_meta",
		.size = sizeof(struct rx_meta),
		.align = __alignof__(struct rx_meta),
	};
	RTE_BUILD_BUG_ON(sizeof(struct tw_player_stamp) > sizeof(struct rx_meta) ||
			 __alignof__(struct tw_player_stamp) > __alignof__(struct rx_meta));
	return rte_mbuf_dynfield_register(&desc);
}

/* Paced: the player's release number (uint64_t), beside the rx field. */
static int
release_dynfield(void)
{
	static const struct rte_mbuf_dynfield desc = {
		.name = "tickwire_release",
		.size = sizeof(uint64_t),
		.align = __alignof__(uint64_t),
	};
	return rte_mbuf_dynfield_register(&desc);
}

/*
 * The captures the profile replays (rx_pcap=), read to their end before EAL
 * starts: net_pcap stops without a word at a record cut short, and a file
 * that is no capture fails its probe with nothing but a driver error. Say
 * which file and which frame instead. @return 0; -1 when a capture cannot
 * be read at all (refused). A capture that ends early is replayed up to
 * there, and the run exits non-zero (g_app.capture_cut).
 */
static int
check_captures(void)
{
	for (uint32_t i = 0; i < g_app.cfg->n_ports; i++) {
		const struct tw_cfg_port *cp = &g_app.cfg->ports[i];
		char path[TW_CFG_PATH_MAX];
		struct tw_pcap_frame fr;
		struct tw_pcap *pc;
		uint64_t n = 0;
		struct stat st;
		int rc;

		if (tw_cfg_port_rx_pcap(cp, path, sizeof(path)) == 0)
			continue;
		pc = tw_pcap_open(path);
		if (pc == NULL) {
			int e = errno;

			fprintf(stderr, "%s:%u: port %s: rx_pcap %s: %s; hint: %s\n",
				g_app.cfg->ports_path, cp->device_line, cp->name, path,
				e != EPROTO ? strerror(e) :
				stat(path, &st) == 0 && st.st_size == 0 ? "empty file" :
				"not a pcap or pcapng capture (no known magic number, or a header "
				"cut short)", e == ENOENT ? "the path is relative to the working "
				"directory" : "give a pcap or pcapng file (tickwire-synth writes one)");
			return -1;
		}
		while ((rc = tw_pcap_next(pc, &fr)) == 1)
			n = fr.number;
		if (rc < 0) {
			fprintf(stderr, "%s:%u: port %s: rx_pcap %s: frame %" PRIu64 ": %s; only the "
				"%" PRIu64 " frames before it are replayed, and tickwire will exit "
				"non-zero\n", g_app.cfg->ports_path, cp->device_line, cp->name, path,
				n + 1, tw_pcap_error(pc), n);
			g_app.capture_cut = true;
		}
		tw_pcap_close(pc);
	}
	return 0;
}

/* A port the player feeds: a vdev replaying a capture, with rx queues. */
static bool
port_paced(uint32_t index)
{
	const struct tw_cfg_port *cp = &g_app.cfg->ports[index];
	char path[TW_CFG_PATH_MAX];

	return g_app.speed_milli != 0 && cp->rx_queues > 0 &&
	       tw_cfg_port_rx_pcap(cp, path, sizeof(path)) != 0;
}

static bool
vdev_paced(const char *device)
{
	for (uint32_t i = 0; i < g_app.cfg->n_ports; i++)
		if (strcmp(g_app.cfg->ports[i].device, device) == 0 && port_paced(i))
			return true;
	return false;
}


/* The feed of a frame of player input @p input, or NULL. */
static const struct tw_cfg_feed *
paced_feed(uint32_t input, const uint8_t *frame, uint32_t length, uint32_t linktype)
{
	const uint32_t port = paced_of_input[input];
	struct tw_pcap_l4 l4;

	if (tw_pcap_parse_frame(frame, length, linktype, &l4, NULL) != 0 || l4.protocol != 17)
		return NULL;
	for (uint32_t f = 0; f < g_app.cfg->n_feeds; f++) {
		const struct tw_cfg_feed *feed = &g_app.cfg->feeds[f];

		if (feed->port == port && rte_be_to_cpu_32(feed->group) == l4.dst_ip &&
		    feed->udp_port == l4.dst_port)
			return feed;
	}
	return NULL;
}

/* The port's multicast filter, as port_up() programs it: the feeds of the port. */
static bool
player_filter(void *ctx, uint32_t input, const uint8_t *frame, uint32_t length,
	      uint32_t linktype)
{
	(void)ctx;
	return paced_feed(input, frame, length, linktype) != NULL;
}

/* --loop: the A and B copies of a channel's incremental feed share a
 * MsgSeqNum sequence; snapshot and definition streams are left as captured */
static int64_t
player_sequence(void *ctx, uint32_t input, const uint8_t *frame, uint32_t length,
		uint32_t linktype)
{
	const struct tw_cfg_feed *feed = paced_feed(input, frame, length, linktype);

	(void)ctx;
	return feed != NULL && feed->kind == TW_CFG_FEED_INCREMENTAL ? (int64_t)feed->channel : -1;
}

/* Is @p lcore the lcore of a used role? @return the role or -1. */
static int
lcore_role(int lcore)
{
	for (int r = 0; r < TW_CFG_ROLE_COUNT; r++)
		if (tw_cfg_role_used(g_app.cfg, (enum tw_cfg_role)r) &&
		    g_app.cfg->lcores[r].id == lcore)
			return r;
	return -1;
}

/*
 * Paced replay: a ring-backed port for every capture port, the player over
 * their captures, and who steps it: in two-stage a capture lcore (between
 * its polls; capture A's unless --player-lcore names the other), else a
 * lcore of its own (--player-lcore; in one-thread the unused capture_a
 * lcore by default). @return 0, -1 (reported).
 */
static int
setup_player(void)
{
	const struct tw_cfg *cfg = g_app.cfg;
	const bool two_stage = cfg->topology == TW_CFG_TOPOLOGY_TWO_STAGE;
	struct tw_player_opts po;
	char err[512];
	int role;

	memset(&po, 0, sizeof(po));
	g_app.stamp_offset = rx_dynfield();
	g_app.release_offset = release_dynfield();
	if (g_app.stamp_offset < 0 || g_app.release_offset < 0) {
		fprintf(stderr, "tickwire: --pace: mbuf dynfield: %s\n", rte_strerror(rte_errno));
		return -1;
	}
	for (uint32_t i = 0; i < cfg->n_ports; i++) {
		const struct tw_cfg_port *cp = &cfg->ports[i];
		static char paths[TW_CFG_MAX_PORTS][TW_CFG_PATH_MAX];
		char name[RTE_RING_NAMESIZE];
		unsigned int size = 64;
		int id;

		if (!port_paced(i))
			continue;
		if (cp->rx_queues != 1 || cp->tx_queues != 0) {
			fprintf(stderr, "%s:%u: error: [port.%s] has %u rx and %u tx queues; --pace "
				"replays a capture port with 1 rx queue and no tx; hint: set "
				"rx_queues = 1 and tx_queues = 0, or run without --pace\n",
				cfg->ports_path, cp->device_line, cp->name, cp->rx_queues,
				cp->tx_queues);
			return -1;
		}
		while (size < cp->rx_desc && size < 65536)
			size <<= 1;
		snprintf(name, sizeof(name), "tw_paced_%u", i);
		/* one producer (the player), one consumer (the port's poller) */
		g_app.paced_ring[i] = rte_ring_create(name, size, rte_socket_id(),
						      RING_F_SP_ENQ | RING_F_SC_DEQ);
		id = g_app.paced_ring[i] == NULL ? -1 :
		     /* net_ring wants a tx ring too; the port configures none */
		     rte_eth_from_rings(cp->name, &g_app.paced_ring[i], 1,
					&g_app.paced_ring[i], 1, rte_socket_id());
		if (id < 0) {
			fprintf(stderr, "tickwire: --pace: ring-backed port for [port.%s]: %s\n",
				cp->name, rte_strerror(rte_errno));
			return -1;
		}
		g_app.paced_port[i] = id;
		tw_cfg_port_rx_pcap(cp, paths[i], sizeof(paths[i]));
		paced_of_input[po.n_inputs] = i;
		po.inputs[po.n_inputs].path = paths[i];
		po.inputs[po.n_inputs].ring = g_app.paced_ring[i];
		po.inputs[po.n_inputs].port_id = (uint16_t)id;
		po.n_inputs++;
	}
	if (po.n_inputs == 0) {
		fprintf(stderr, "%s: error: --pace: no port replays a capture; hint: a capture "
			"port is a vdev with rx_pcap=FILE and rx_queues = 1\n", cfg->ports_path);
		return -1;
	}
	po.speed_milli = g_app.speed_milli;
	po.tsc_hz = g_app.tsc_hz;
	po.pool = g_app.pool;
	po.stamp_offset = g_app.stamp_offset;
	po.release_offset = g_app.release_offset;
	po.filter = player_filter;
	po.passes = g_app.loop_passes;
	po.seq = player_sequence;
	g_app.player = tw_player_create(&po, err, sizeof(err));
	if (g_app.player == NULL) {
		fprintf(stderr, "tickwire: --pace: %s\n", err);
		return -1;
	}
	/* every datagram in flight holds an mbuf: the pool bounds the merge */
	n_paced_inputs = po.n_inputs;
	g_app.merge = tw_merge_create(po.n_inputs, cfg->mempool.mbufs);
	if (g_app.merge == NULL) {
		fprintf(stderr, "tickwire: --pace: release-order merge of %u inputs x %u: %s\n",
			po.n_inputs, cfg->mempool.mbufs, strerror(errno));
		return -1;
	}

	/* who steps it */
	if (g_app.player_lcore < 0)
		g_app.player_lcore = cfg->lcores[TW_CFG_ROLE_CAPTURE_A].id;
	role = lcore_role(g_app.player_lcore);
	if (two_stage && (role == TW_CFG_ROLE_CAPTURE_A || role == TW_CFG_ROLE_CAPTURE_B)) {
		g_app.capture[role == TW_CFG_ROLE_CAPTURE_B &&
			      cfg->lcores[TW_CFG_ROLE_CAPTURE_A].id != g_app.player_lcore ?
			      1 : 0].hosts_player = true;
		g_app.player_lcore = -1;     /* hosted: no lcore of its own */
		return 0;
	}
	if (g_app.player_lcore < 0 || role >= 0 ||
	    !rte_lcore_is_enabled((unsigned int)g_app.player_lcore)) {
		char what[96];

		if (g_app.player_lcore < 0)
			snprintf(what, sizeof(what), "none given");
		else
			snprintf(what, sizeof(what), "lcore %d %s", g_app.player_lcore,
				 role >= 0 ? "runs a role" : "is not an lcore of eal.lcores");
		fprintf(stderr, "tickwire: --pace: the player needs an lcore of its own (%s); "
			"hint: --player-lcore N with N a capture lcore (two-stage) or an lcore "
			"of eal.lcores (%s) that no role uses\n", what, cfg->eal.lcores);
		return -1;
	}
	return 0;
}

static void
release_mbuf(void *ctx, void *cookie)
{
	(void)ctx;
	rte_pktmbuf_free(cookie);
}

/* recovery.max_wait_ms passed on a halted instrument (decode lcore, once
 * per halt): the alarm's log line; the counters and telemetry have it too. */
static void
stale_alarm(void *ctx, int32_t security_id, uint32_t why, uint64_t stale_ns)
{
	(void)ctx;
	TW_LOG(ERR, decode, "ALARM: instrument %" PRId32 " halted (%s) for %" PRIu64
	       " ms, past recovery.max_wait_ms = %" PRIu32 "%s\n", security_id,
	       tw_state_why_name(why), stale_ns / 1000000u, g_app.cfg->recovery.max_wait_ms,
	       g_app.cfg->recovery.kill_on_alarm ? "; kill switch engaged" : "");
}

static int
build_chain(void)
{
	const struct tw_cfg *cfg = g_app.cfg;
	struct tw_chain_opts o;

	memset(&o, 0, sizeof(o));
	g_app.order_lockstep = g_app.merge != NULL && !g_app.has_session && !g_app.order_out_free;
	o.decode_mailbox = mailbox_opts("decode", &cfg->capture_to_decode);
	o.order_mailbox = mailbox_opts("order_out", &cfg->signal_to_order_out);
	tw_chain_opts_from_cfg(&o, cfg);
	o.order_sink = order_sink;
	o.release = release_mbuf;
	o.ticks = g_app.rx_clock_nic ? wall_ns : read_tsc;
	o.latency = &g_app.latency;
	o.order_latency = &g_app.order_latency;
	o.now_ns = g_app.order_lockstep ? paced_now : wall_ns;
	o.on_alarm = stale_alarm;
	if (g_app.merge != NULL)
		o.rx_hold = paced_hold;
	if (g_app.has_session)
		o.session = &g_app.session;
	return (g_app.chain = tw_chain_create(&o)) == NULL ? -errno : 0;
}

int
main(int argc, char **argv)
{
	const char *ports = NULL, *config = NULL;
	struct tw_cfg_findings *findings;
	struct tw_cfg_argv *eal;
	char **eal_argv;
	int dash, eal_argc, rc, exit_code = 1;
	struct sigaction sa;

	g_app.tx_port = -1;
	g_app.ts_offset = -1;
	g_app.meta_offset = -1;
	g_app.stamp_offset = -1;
	g_app.release_offset = -1;
	g_app.player_lcore = -1;
	for (uint32_t i = 0; i < TW_CFG_MAX_PORTS; i++)
		g_app.paced_port[i] = -1;

	for (dash = 1; dash < argc && strcmp(argv[dash], "--") != 0; dash++)
		;
	if (dash == argc) {
		usage(argv[0]);
		return 2;
	}
	if (parse_app_args(argc - dash, argv + dash, &ports, &config) != 0) {
		usage(argv[0]);
		return 2;
	}

	/* The profile first: a bad file is refused with file, line and reason
	 * before anything touches the machine. */
	findings = malloc(sizeof(*findings));
	if (findings == NULL)
		return 1;
	tw_cfg_findings_init(findings);
	g_app.cfg = tw_cfg_load(ports, config, findings);
	if (g_app.cfg != NULL && topology_check(findings) != 0) {
		free(findings);
		tw_cfg_free(g_app.cfg);
		return 1;
	}
	print_findings(findings);
	if (g_app.cfg != NULL && findings->errors != 0) {
		fprintf(stderr, "tickwire: the core map does not fit this machine; refused before "
			"EAL (tickwire-check --ports %s --config %s explains the tuning)\n",
			ports, config);
		tw_cfg_free(g_app.cfg);
		g_app.cfg = NULL;
	}
	free(findings);
	if (g_app.cfg == NULL) {
		fprintf(stderr, "tickwire: profile refused (%s, %s)\n", ports, config);
		return 1;
	}
	if (g_app.stats_interval_ms == UINT32_MAX)
		g_app.stats_interval_ms = g_app.cfg->stats_interval_ms;
	if (g_app.latency_out == NULL && g_app.cfg->latency_file[0] != '\0')
		g_app.latency_out = g_app.cfg->latency_file;
	atomic_store_explicit(&g_app.session_state, -1, memory_order_relaxed);
	if (session_setup() != 0) {
		fprintf(stderr, "tickwire: profile refused (%s, %s)\n", ports, config);
		tw_cfg_free(g_app.cfg);
		return 1;
	}
	if (check_captures() != 0) {
		tw_cfg_free(g_app.cfg);
		return 1;
	}

	/* EAL arguments: the profile's, then the command line's (they win). */
	eal = malloc(sizeof(*eal));
	eal_argv = calloc((size_t)(TW_CFG_MAX_ARGV + dash + 1), sizeof(char *));
	if (eal == NULL || eal_argv == NULL ||
	    tw_cfg_eal_argv(g_app.cfg, argv[0], eal) != 0) {
		fprintf(stderr, "tickwire: EAL arguments of the profile do not fit\n");
		return 1;
	}
	eal_argc = 0;
	for (int i = 0; i < eal->argc; i++) {
		/* paced: a capture port becomes a ring-backed port the player
		 * feeds (setup_player), so its net_pcap vdev is not created */
		if (strcmp(eal->argv[i], "--vdev") == 0 && i + 1 < eal->argc &&
		    vdev_paced(eal->argv[i + 1])) {
			i++;
			continue;
		}
		eal_argv[eal_argc++] = eal->argv[i];
	}
	for (int i = 1; i < dash; i++)
		eal_argv[eal_argc++] = argv[i];

	rc = rte_eal_init(eal_argc, eal_argv);
	if (rc < 0) {
		fprintf(stderr, "tickwire: EAL init failed: %s\n", rte_strerror(rte_errno));
		if (tw_preflight(g_app.cfg, g_app.preflight_root, (unsigned int)geteuid(),
				 stderr) == 0)
			fprintf(stderr, "tickwire: preflight found no known cause; rerun with "
				"--log-level=lib.eal:debug\n");
		tw_cfg_free(g_app.cfg);
		free(eal);
		free(eal_argv);
		return 1;
	}
	g_app.tsc_hz = rte_get_tsc_hz();

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = on_kill_signal;
	sigaction(SIGUSR1, &sa, NULL);

	{
		static const struct {
			const char *cmd;
			telemetry_cb fn;
			const char *help;   /* DPDK refuses more than RTE_TEL_MAX_STRING_LEN */
		} tel[] = {
			{"/tickwire/stats", tel_stats,
			 "Counters of the captures, the decode group and order-out. No parameters."},
			{"/tickwire/book", tel_book, "Top 5 levels of one book. Parameter: SecurityID."},
			{"/tickwire/mbo", tel_mbo, "Market-by-order book (book.mbo): state, orders, "
			 "best 5 levels and their first orders. Parameter: SecurityID."},
			{"/tickwire/kill", tel_kill,
			 "Kill switch: refuse new orders and cancel open ones. Parameter: on or off."},
			{"/tickwire/latency", tel_latency,
			 "t1 - t0 percentiles (ns, log2 buckets: upper bounds) and max. No parameters."},
			{"/tickwire/resources", tel_resources,
			 "mbufs in use, queue depths, rx drops, t1 - t0 histogram. No parameters."},
		};

		for (size_t i = 0; i < sizeof(tel) / sizeof(tel[0]); i++)
			if (rte_telemetry_register_cmd(tel[i].cmd, tel[i].fn, tel[i].help) != 0)
				TW_LOG(WARNING, app, "telemetry %s not registered\n", tel[i].cmd);
	}

	if (tw_lat_init(&g_app.latency, g_app.latency_out != NULL ? g_app.latency_max : 0) != 0 ||
	    tw_lat_init(&g_app.order_latency, g_app.latency_out != NULL ? 65536 : 0) != 0) {
		fprintf(stderr, "tickwire: no memory for %" PRIu64 " latency records\n",
			g_app.latency_max);
		goto cleanup;
	}

	/* Ports need the pool; the pool lives on the NUMA node of the first port. */
	{
		uint16_t first;
		int socket = (int)rte_socket_id();

		if (g_app.cfg->n_ports > 0 &&
		    rte_eth_dev_get_port_by_name(g_app.cfg->ports[0].devname, &first) == 0)
			socket = port_socket(first);
		g_app.pool = rte_pktmbuf_pool_create("tw_mbufs", g_app.cfg->mempool.mbufs,
						     g_app.cfg->mempool.cache, 0,
						     (uint16_t)g_app.cfg->mempool.data_room, socket);
		if (g_app.pool == NULL) {
			fprintf(stderr, "%s:%u: mempool of %u mbufs: %s\n", g_app.cfg->ports_path,
				g_app.cfg->mempool.mbufs_line, g_app.cfg->mempool.mbufs,
				rte_strerror(rte_errno));
			goto cleanup;
		}
	}
	if (g_app.speed_milli != 0 && setup_player() != 0)
		goto cleanup;
	for (uint32_t i = 0; i < g_app.cfg->n_ports; i++) {
		if (port_up(i) != 0) {
			/* a PCI port EAL did not probe: missing, or bound to its kernel driver */
			if (g_app.cfg->ports[i].kind == TW_CFG_PORT_PCI &&
			    tw_preflight(g_app.cfg, g_app.preflight_root, (unsigned int)geteuid(),
					 stderr) == 0)
				fprintf(stderr, "tickwire: preflight found no known cause\n");
			goto cleanup;
		}
	}
	if (g_app.cfg->session.tx_port >= 0)
		g_app.tx_port = g_app.port_ids[g_app.cfg->session.tx_port];
	if (g_app.rx_clock_nic &&
	    rte_mbuf_dyn_rx_timestamp_register(&g_app.ts_offset, &g_app.ts_flag) != 0)
		g_app.ts_offset = -1;

	/* Who polls which queue. */
	g_app.capture[0].name = "capture_a";
	g_app.capture[1].name = "capture_b";
	g_app.decode_poll.name = "decode_poll";
	for (uint32_t f = 0; f < g_app.cfg->n_feeds; f++) {
		const struct tw_cfg_feed *feed = &g_app.cfg->feeds[f];

		if (g_app.cfg->topology == TW_CFG_TOPOLOGY_ONE_THREAD)
			add_queue(&g_app.decode_poll, feed);
		else
			add_queue(&g_app.capture[feed->side == TW_CFG_SIDE_B ? 1 : 0], feed);
	}

	if (g_app.cfg->topology == TW_CFG_TOPOLOGY_TWO_STAGE &&
	    g_app.cfg->capture_to_decode.type == TW_CFG_QUEUE_RTE_RING) {
		g_app.meta_offset = rx_dynfield();
		g_app.ring = rte_ring_create("tw_capture_decode",
					     g_app.cfg->capture_to_decode.capacity, rte_socket_id(),
					     RING_F_SC_DEQ);
		if (g_app.meta_offset < 0 || g_app.ring == NULL) {
			fprintf(stderr, "tickwire: rte_ring hand-off (%s): %s\n",
				g_app.meta_offset < 0 ? "mbuf dynfield" : "ring",
				rte_strerror(rte_errno));
			goto cleanup;
		}
	}

	if (build_chain() != 0) {
		if (g_app.has_session)
			fprintf(stderr, "%s:%u: error: iLink 3 session (journal %s, credentials "
				"%s): %s; hint: the credentials file must be owner-only "
				"(chmod 600) with access_key_id= and secret_key= lines, and the "
				"journal's directory writable\n", g_app.cfg->config_path,
				g_app.cfg->session.credentials_line, g_app.cfg->session.file,
				g_app.cfg->session.credentials_file, strerror(errno));
		else
			fprintf(stderr, "tickwire: building the actors: %s\n", strerror(errno));
		goto cleanup;
	}
	atomic_store_explicit(&g_app.chain_ready, true, memory_order_release);

	/* Launch: order-out, decode, then the captures (consumers before producers). */
	{
		const struct tw_cfg_lcore *lc = g_app.cfg->lcores;

		tw_hb_init(&g_app.hb, HB_STALL_NS);
		g_app.hb_order = tw_hb_add(&g_app.hb, "order-out", tsc_to_ns(rte_rdtsc()));
		rc = rte_eal_remote_launch(order_main, NULL, (unsigned int)lc[TW_CFG_ROLE_ORDER_OUT].id);
		if (rc == 0 && g_app.has_session) {
			if (wait_session())
				TW_LOG(NOTICE, order, "iLink 3 session established with %s:%u\n",
				       g_app.cfg->session.gateway_host,
				       g_app.cfg->session.gateway_port);
			else
				TW_LOG(WARNING, order, "iLink 3 session not established after 5 s "
				       "(%s:%u): orders are refused until it is\n",
				       g_app.cfg->session.gateway_host,
				       g_app.cfg->session.gateway_port);
		}
		g_app.hb_decode = tw_hb_add(&g_app.hb, "decode", tsc_to_ns(rte_rdtsc()));
		if (rc == 0)
			rc = rte_eal_remote_launch(decode_main, NULL,
						   (unsigned int)lc[TW_CFG_ROLE_DECODE].id);
		if (rc == 0 && g_app.cfg->topology == TW_CFG_TOPOLOGY_TWO_STAGE) {
			g_app.capture[0].lcore = (unsigned int)lc[TW_CFG_ROLE_CAPTURE_A].id;
			g_app.capture[1].lcore = (unsigned int)lc[TW_CFG_ROLE_CAPTURE_B].id;
			g_app.capture[0].hb = tw_hb_add(&g_app.hb, "capture A",
							tsc_to_ns(rte_rdtsc()));
			g_app.capture[1].hb = tw_hb_add(&g_app.hb, "capture B",
							tsc_to_ns(rte_rdtsc()));
			if (g_app.capture[0].lcore == g_app.capture[1].lcore) {
				/* one capture lcore drains both feeds */
				g_app.capture[0].also = &g_app.capture[1];
				g_app.capture[0].hosts_player |= g_app.capture[1].hosts_player;
			}
			rc = rte_eal_remote_launch(capture_main, &g_app.capture[0],
						   g_app.capture[0].lcore);
			if (rc == 0 && g_app.capture[0].also == NULL)
				rc = rte_eal_remote_launch(capture_main, &g_app.capture[1],
							   g_app.capture[1].lcore);
		}
		if (rc == 0 && g_app.player != NULL && g_app.player_lcore >= 0)
			rc = rte_eal_remote_launch(player_main, NULL,
						   (unsigned int)g_app.player_lcore);
		/* everything polls: the first frame is due 10 ms from now */
		if (rc == 0 && g_app.player != NULL)
			tw_player_start(g_app.player, rte_rdtsc() + g_app.tsc_hz / 100);
		if (rc != 0)
			fprintf(stderr, "tickwire: launching workers: %s (are the lcores of "
				"tickwire.cfg in --lcores?)\n", rte_strerror(-rc));
		else
			run_main_lcore();
	}

	/* Stop in pipeline order so nothing handed over is lost or leaked. */
	atomic_store_explicit(&g_app.quit_player, true, memory_order_release);
	if (g_app.player != NULL && g_app.player_lcore >= 0)
		rte_eal_wait_lcore((unsigned int)g_app.player_lcore);
	atomic_store_explicit(&g_app.quit_capture, true, memory_order_release);
	if (g_app.cfg->topology == TW_CFG_TOPOLOGY_TWO_STAGE) {
		rte_eal_wait_lcore((unsigned int)g_app.cfg->lcores[TW_CFG_ROLE_CAPTURE_A].id);
		rte_eal_wait_lcore((unsigned int)g_app.cfg->lcores[TW_CFG_ROLE_CAPTURE_B].id);
	}
	atomic_store_explicit(&g_app.quit_decode, true, memory_order_release);
	if (rc == 0)
		while (!atomic_load_explicit(&g_app.decode_flushed, memory_order_acquire))
			rte_delay_us_sleep(100);
	atomic_store_explicit(&g_app.quit_order, true, memory_order_release);
	rte_eal_wait_lcore((unsigned int)g_app.cfg->lcores[TW_CFG_ROLE_ORDER_OUT].id);
	atomic_store_explicit(&g_app.quit_decode_final, true, memory_order_release);
	rte_eal_mp_wait_lcore();
	atomic_store_explicit(&g_app.chain_ready, false, memory_order_release);

	if (rc == 0) {
		struct act_mailbox_stats mb;
		struct tw_player_stats ps;
		uint64_t rx_drops = g_app.ring_drops;

		for (unsigned int i = 0; i < 2; i++)
			rx_drops += peek(&g_app.capture[i].stats.handoff_drops);
		rx_drops += peek(&g_app.decode_poll.stats.handoff_drops);
		memset(&ps, 0, sizeof(ps));
		if (g_app.player != NULL) {
			tw_player_stats(g_app.player, &ps);
			rx_drops += ps.ring_full + ps.no_mbuf;
		}

		printf("== tickwire: %s, topology %s, hand-off %s\n",
		       g_signal != 0 ? "stopped by signal" : "replay finished",
		       tw_cfg_topology_name(g_app.cfg->topology),
		       g_app.cfg->topology == TW_CFG_TOPOLOGY_ONE_THREAD ? "direct" :
		       tw_cfg_queue_type_name(g_app.cfg->capture_to_decode.type));
		printf("== lcores\n");
		if (g_app.cfg->topology == TW_CFG_TOPOLOGY_TWO_STAGE) {
			print_poller(stdout, &g_app.capture[0]);
			print_poller(stdout, &g_app.capture[1]);
		} else {
			print_poller(stdout, &g_app.decode_poll);
		}
		act_group_mailbox_stats(tw_chain_decode_group(g_app.chain), &mb);
		printf("decode.mailbox_enqueued %" PRIu64 "\ndecode.mailbox_full %" PRIu64
		       "\ndecode.mailbox_max_depth %" PRIu64 "\ndecode.mailbox_control %" PRIu64
		       "\n", mb.enqueued, mb.full_fails, mb.max_depth, mb.control);
		act_group_mailbox_stats(tw_chain_order_group(g_app.chain), &mb);
		printf("order_out.mailbox_enqueued %" PRIu64 "\norder_out.mailbox_full %" PRIu64
		       "\norder_out.mailbox_dropped %" PRIu64 "\norder_out.mailbox_control %" PRIu64
		       "\n", mb.enqueued, mb.full_fails, mb.dropped, mb.control);
		printf("decode.ring_drops %" PRIu64 "\norder.tx_fail %" PRIu64 "\n",
		       g_app.ring_drops, g_app.tx_fail);
		if (g_app.player != NULL)
			printf("player.speed %" PRIu64 ".%03" PRIu64 "\nplayer.frames %" PRIu64
			       "\nplayer.passes %" PRIu64
			       "\nplayer.released %" PRIu64 "\nplayer.ring_full %" PRIu64
			       "\nplayer.no_mbuf %" PRIu64 "\nplayer.filtered %" PRIu64
			       "\nplayer.span_us %" PRIu64 "\nplayer.error_ns p50 %" PRIu64
			       " p99 %" PRIu64 " p99.9 %" PRIu64 " max %" PRIu64 "\n",
			       g_app.speed_milli / 1000, g_app.speed_milli % 1000, ps.frames,
			       ps.passes, ps.released, ps.ring_full, ps.no_mbuf, ps.filtered,
			       ps.span_ns / 1000, ps.err_ns[0], ps.err_ns[1], ps.err_ns[2],
			       ps.err_ns[3]);
		if (g_app.merge != NULL) {
			struct tw_merge_stats ms;

			tw_merge_stats(g_app.merge, &ms);
			printf("merge.delivered %" PRIu64 "\nmerge.waits %" PRIu64
			       "\nmerge.overflow %" PRIu64 "\nmerge.out_of_order %" PRIu64
			       "\norder_out.turns %" PRIu64 "\n", ms.delivered, ms.waits,
			       ms.overflow, ms.out_of_order,
			       atomic_load_explicit(&g_app.order_grant, memory_order_relaxed));
		}
		printf("rx_drops %" PRIu64 "\n", rx_drops);
		faults_report(stdout, NULL);
		tw_chain_print(g_app.chain, stdout, g_app.print_books);
		if (g_app.latency_out != NULL) {
			struct tw_lat_header h;

			memset(&h, 0, sizeof(h));
			h.flags = g_app.cfg->topology == TW_CFG_TOPOLOGY_ONE_THREAD ?
					  TW_LAT_FLAG_ONE_THREAD : 0;
			if (g_app.player != NULL) {
				h.flags |= TW_LAT_FLAG_PACED;
				h.speed_milli = g_app.speed_milli;
				h.start_tsc = tw_player_start_tsc(g_app.player);
				memcpy(h.player_err_ns, ps.err_ns, sizeof(h.player_err_ns));
				h.player_packets = ps.released;
			}
			h.rx_drops = rx_drops;
			/* with --rx-clock nic, t0 and t1 are ns (NIC and wall clock) */
			h.tsc_hz = g_app.rx_clock_nic ? UINT64_C(1000000000) : g_app.tsc_hz;
			if (g_app.rx_clock_nic)
				h.flags |= TW_LAT_FLAG_NIC_T0;
			if (g_app.t0_capture_time)
				h.flags |= TW_LAT_FLAG_CAPTURE_T0;
			snprintf(h.label, sizeof(h.label), "%s",
				 tw_cfg_topology_name(g_app.cfg->topology));
			const struct tw_lat_recorder *recs[2] = {&g_app.latency,
								 &g_app.order_latency};

			if (tw_lat_write(recs, 2, g_app.latency_out, &h) != 0)
				fprintf(stderr, "tickwire: writing %s failed\n", g_app.latency_out);
			else
				printf("== latency: %" PRIu64 " records (%" PRIu64 " dropped) in %s\n",
				       g_app.latency.count, g_app.latency.dropped, g_app.latency_out);
		}
		fflush(stdout);
		exit_code = 0;
		if (g_app.capture_cut) {
			fprintf(stderr, "tickwire: input was lost: a capture is cut short or "
				"corrupt (see the first lines of this run)\n");
			exit_code = 1;
		}
	}

cleanup:
	ports_down();
	tw_chain_destroy(g_app.chain);
	g_app.chain = NULL;
	if (g_app.ring != NULL)
		rte_ring_free(g_app.ring);
	/* the player's prepared mbufs go back to the pool before it goes */
	tw_player_destroy(g_app.player);
	tw_merge_destroy(g_app.merge);
	g_app.player = NULL;
	for (uint32_t i = 0; i < TW_CFG_MAX_PORTS; i++)
		if (g_app.paced_ring[i] != NULL) {
			struct rte_mbuf *m = NULL;

			while (rte_ring_dequeue(g_app.paced_ring[i], (void **)&m) == 0)
				rte_pktmbuf_free(m);
			rte_ring_free(g_app.paced_ring[i]);
		}
	rte_mempool_free(g_app.pool);
	tw_lat_fini(&g_app.latency);
	tw_lat_fini(&g_app.order_latency);
	rte_eal_cleanup();
	tw_cfg_free(g_app.cfg);
	free(eal);
	free(eal_argv);
	return exit_code;
}
