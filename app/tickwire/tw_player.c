/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * Paced replay into ring-backed ports (tw_player.h).
 *
 * The schedule: frame i of the merged inputs is due at
 *   start_tsc + (time_ns[i] - time_ns[0]) x tsc_hz / 1e9 / speed
 * (integer arithmetic, 128-bit intermediate). Frames are merged by capture
 * time; ties keep input order, then file order, as tickwire-replay merges.
 *
 * Looping: release g (counted over every pass) is frame g mod n of pass
 * g / n, due at its frame's due + pass x the pass period in ticks (rounded
 * once: the drift is under a tick per pass). Its mbuf copy is rewritten
 * (move_on()) before its release, never the mapped capture.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_mbuf_dyn.h>
#include <rte_pause.h>

#include "mdp3.h"
#include "tw_latency.h"
#include "tw_pcap.h"
#include "tw_player.h"

/* mbufs prepared ahead of their release; at most PREP_STEP per step */
#define PREP 32
#define PREP_STEP 4

/* UDP checksum: the last 2 bytes of the 8-byte UDP header, before the payload */
#define UDP_CHECKSUM_BACK 2

struct frame {
	uint64_t time_ns;      /* capture time */
	uint64_t due;          /* ticks after start_tsc (first pass) */
	const uint8_t *data;
	uint32_t length;
	uint16_t input;
	uint16_t mdp_offset;   /* looping: the MDP packet header in the frame; 0: none */
	uint32_t seq_span;     /* looping: MsgSeqNum moves on by this much a pass */
	uint8_t sequence;      /* looping: 1 + index in p->seq; 0: none */
	uint64_t number;       /* in its file: the tie-break */
};

/* A MsgSeqNum sequence of a looped replay. */
struct sequence {
	int64_t key;
	uint32_t min;
	uint32_t max;
};

struct tw_player {
	struct tw_player_opts opts;
	struct tw_pcap *pcap[TW_PLAYER_MAX_INPUTS];
	struct frame *frames;
	uint64_t n_frames;             /* of one pass */
	uint64_t total;                /* releases of every pass (UINT64_MAX: until stopped) */
	uint64_t period_ns;            /* capture time from one pass to the next */
	uint64_t period_ticks;
	struct sequence seq[TW_PLAYER_MAX_SEQUENCES];
	uint32_t n_seq;
	/* releases, counted over every pass (stepping thread) */
	uint64_t next;                 /* next release */
	uint64_t prepared;             /* releases [next, prepared) have an mbuf */
	struct rte_mbuf *prep[PREP];
	uint32_t *err_ns;              /* per frame of a pass: actual - scheduled release */
	uint64_t start_tsc;
	_Atomic bool started;
	_Atomic bool done;
	uint64_t released;             /* stepping thread writes, relaxed readers */
	/* tw_player_progress(): enqueued per input, then the next release */
	_Atomic uint64_t in_released[TW_PLAYER_MAX_INPUTS];
	_Atomic uint64_t published;
	uint64_t ring_full;
	uint64_t no_mbuf;
	uint64_t filtered;
};

static int
cmp_frame(const void *a, const void *b)
{
	const struct frame *x = a, *y = b;

	if (x->time_ns != y->time_ns)
		return x->time_ns < y->time_ns ? -1 : 1;
	if (x->input != y->input)
		return x->input < y->input ? -1 : 1;
	return (x->number > y->number) - (x->number < y->number);
}

/* MsgSeqNum of the MDP packet header at @p mdp (little-endian, unaligned) */
static inline uint32_t
msg_seq_num(const uint8_t *mdp)
{
	return rte_le_to_cpu_32(*(const unaligned_uint32_t *)mdp);
}

static bool
looping(const struct tw_player *p)
{
	return p->opts.passes > 1;
}

/*
 * Looping: the sequence of frame @p f (MsgSeqNum range, the MDP header's
 * offset), from the caller's key. @return 0, -1 with @p err filled.
 */
static int
sequence_of(struct tw_player *p, struct frame *f, const struct tw_pcap_frame *pf, char *err,
	    size_t err_len)
{
	const char *path = p->opts.inputs[f->input].path;
	struct tw_pcap_l4 l4;
	int64_t key;
	uint32_t s, seq;

	if (!looping(p) || p->opts.seq == NULL)
		return 0;
	key = p->opts.seq(p->opts.filter_ctx, f->input, pf->data, pf->caplen, pf->linktype);
	if (key < 0)
		return 0;
	if (tw_pcap_parse_frame(pf->data, pf->caplen, pf->linktype, &l4, NULL) != 0 ||
	    l4.protocol != 17 || l4.payload_length < MDP3_PACKET_HEADER_SIZE ||
	    l4.payload - pf->data > UINT16_MAX) {
		snprintf(err, err_len, "%s: frame %" PRIu64 ": --loop: no MDP packet header to "
			 "move on (not UDP, or a payload under %u bytes); hint: loop a capture of "
			 "MDP 3.0 feeds", path, pf->number, MDP3_PACKET_HEADER_SIZE);
		return -1;
	}
	seq = msg_seq_num(l4.payload);
	for (s = 0; s < p->n_seq && p->seq[s].key != key; s++)
		;
	if (s == p->n_seq) {
		if (s == TW_PLAYER_MAX_SEQUENCES) {
			snprintf(err, err_len, "%s: frame %" PRIu64 ": --loop: more than %u feeds to "
				 "sequence; hint: fewer feeds in the profile", path, pf->number,
				 TW_PLAYER_MAX_SEQUENCES);
			return -1;
		}
		p->seq[p->n_seq++] = (struct sequence){.key = key, .min = seq, .max = seq};
	}
	p->seq[s].min = RTE_MIN(p->seq[s].min, seq);
	p->seq[s].max = RTE_MAX(p->seq[s].max, seq);
	f->sequence = (uint8_t)(s + 1);
	f->mdp_offset = (uint16_t)(l4.payload - pf->data);
	return 0;
}

static int
load_input(struct tw_player *p, uint32_t i, uint64_t *cap, char *err, size_t err_len)
{
	struct tw_pcap_frame f;
	int rc;

	p->pcap[i] = tw_pcap_open(p->opts.inputs[i].path);
	if (p->pcap[i] == NULL) {
		snprintf(err, err_len, "%s: %s", p->opts.inputs[i].path, strerror(errno));
		return -1;
	}
	while ((rc = tw_pcap_next(p->pcap[i], &f)) == 1) {
		if (p->opts.filter != NULL &&
		    !p->opts.filter(p->opts.filter_ctx, i, f.data, f.caplen, f.linktype)) {
			p->filtered++;
			continue;
		}
		if (p->n_frames == *cap) {
			uint64_t ncap = *cap != 0 ? 2 * *cap : 4096;
			struct frame *g = realloc(p->frames, ncap * sizeof(*g));

			if (g == NULL) {
				snprintf(err, err_len, "%s: no memory for %" PRIu64 " frames",
					 p->opts.inputs[i].path, ncap);
				return -1;
			}
			p->frames = g;
			*cap = ncap;
		}
		p->frames[p->n_frames] = (struct frame){
			.time_ns = f.time_ns, .data = f.data, .length = f.caplen,
			.input = (uint16_t)i, .number = f.number,
		};
		if (sequence_of(p, &p->frames[p->n_frames], &f, err, err_len) != 0)
			return -1;
		p->n_frames++;
	}
	if (rc < 0) {
		snprintf(err, err_len, "%s: frame %" PRIu64 ": %s", p->opts.inputs[i].path,
			 f.number, tw_pcap_error(p->pcap[i]));
		return -1;
	}
	return 0;
}

/*
 * Looping, once the frames are in time order: each sequence must open with
 * a ChannelReset (lib/book restarts RptSeq only there); the span of each,
 * and the pass period. @return 0, -1 with @p err filled.
 */
static int
plan_passes(struct tw_player *p, char *err, size_t err_len)
{
	const uint64_t span = p->frames[p->n_frames - 1].time_ns - p->frames[0].time_ns;
	bool opened[TW_PLAYER_MAX_SEQUENCES] = {false};

	for (uint64_t i = 0; i < p->n_frames; i++) {
		struct frame *f = &p->frames[i];
		const struct sequence *s;
		const uint8_t *mdp;
		uint32_t template_at;

		if (f->sequence == 0)
			continue;
		s = &p->seq[f->sequence - 1];
		f->seq_span = s->max - s->min + 1;
		if (opened[f->sequence - 1])
			continue;
		opened[f->sequence - 1] = true;
		/* the first message: MsgSize, blockLength, then templateId */
		mdp = f->data + f->mdp_offset;
		template_at = MDP3_PACKET_HEADER_SIZE + 4;
		if (f->length < f->mdp_offset + template_at + 2u ||
		    rte_le_to_cpu_16(*(const unaligned_uint16_t *)(mdp + template_at)) !=
			    MDP3_TEMPLATE_CHANNEL_RESET4) {
			snprintf(err, err_len, "%s: frame %" PRIu64 ": --loop: the first packet of "
				 "its feed (MsgSeqNum %" PRIu32 ") does not open with a ChannelReset, "
				 "so a second pass would bring RptSeqs the books have applied (lib/book "
				 "skips them); hint: loop a capture that opens with one "
				 "(tickwire-synth --reset-first)", p->opts.inputs[f->input].path,
				 f->number, msg_seq_num(mdp));
			return -1;
		}
	}
	/* the next pass starts one mean inter-frame interval after the last frame */
	p->period_ns = span + (p->n_frames > 1 ? span / (p->n_frames - 1) : UINT64_C(1000000));
	if (p->period_ns == 0)
		p->period_ns = 1;
	p->period_ticks = (uint64_t)((unsigned __int128)p->period_ns * p->opts.tsc_hz * 1000u /
				     ((unsigned __int128)1000000000u * p->opts.speed_milli));
	if (p->period_ticks == 0)
		p->period_ticks = 1;
	return 0;
}

struct tw_player *
tw_player_create(const struct tw_player_opts *opts, char *err, size_t err_len)
{
	struct tw_player *p;
	uint64_t cap = 0;

	if (opts->n_inputs == 0 || opts->n_inputs > TW_PLAYER_MAX_INPUTS ||
	    opts->speed_milli == 0 || opts->tsc_hz == 0 || opts->pool == NULL ||
	    opts->stamp_offset < 0) {
		snprintf(err, err_len, "bad player options");
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (p == NULL) {
		snprintf(err, err_len, "no memory");
		return NULL;
	}
	p->opts = *opts;
	for (uint32_t i = 0; i < opts->n_inputs; i++) {
		if (load_input(p, i, &cap, err, err_len) != 0) {
			tw_player_destroy(p);
			return NULL;
		}
	}
	if (p->n_frames == 0) {
		snprintf(err, err_len, "%s%s: no frame to replay (empty capture, or no frame "
			 "for the feeds of its port)", opts->inputs[0].path,
			 opts->n_inputs > 1 ? " and the other inputs" : "");
		tw_player_destroy(p);
		return NULL;
	}
	qsort(p->frames, p->n_frames, sizeof(*p->frames), cmp_frame);
	for (uint64_t i = 0; i < p->n_frames; i++) {
		unsigned __int128 d = p->frames[i].time_ns - p->frames[0].time_ns;

		p->frames[i].due = (uint64_t)(d * opts->tsc_hz * 1000u /
					      ((unsigned __int128)1000000000u * opts->speed_milli));
	}
	p->total = p->n_frames;
	if (looping(p)) {
		if (plan_passes(p, err, err_len) != 0) {
			tw_player_destroy(p);
			return NULL;
		}
		p->total = opts->passes == TW_PLAYER_FOREVER || opts->passes > UINT64_MAX /
			   p->n_frames ? UINT64_MAX : opts->passes * p->n_frames;
	}
	p->err_ns = calloc(p->n_frames, sizeof(*p->err_ns));
	if (p->err_ns == NULL) {
		snprintf(err, err_len, "no memory for %" PRIu64 " frames", p->n_frames);
		tw_player_destroy(p);
		return NULL;
	}
	return p;
}

void
tw_player_destroy(struct tw_player *p)
{
	if (p == NULL)
		return;
	for (uint64_t i = p->next; i < p->prepared; i++)
		rte_pktmbuf_free(p->prep[i % PREP]);
	for (uint32_t i = 0; i < TW_PLAYER_MAX_INPUTS; i++)
		if (p->pcap[i] != NULL)
			tw_pcap_close(p->pcap[i]);
	free(p->frames);
	free(p->err_ns);
	free(p);
}

void
tw_player_start(struct tw_player *p, uint64_t start_tsc)
{
	p->start_tsc = start_tsc;
	atomic_store_explicit(&p->started, true, memory_order_release);
}

bool
tw_player_started(const struct tw_player *p)
{
	return atomic_load_explicit(&p->started, memory_order_acquire);
}

bool
tw_player_done(const struct tw_player *p)
{
	return atomic_load_explicit(&p->done, memory_order_acquire);
}

uint64_t
tw_player_start_tsc(const struct tw_player *p)
{
	return p->start_tsc;
}

uint64_t
tw_player_released(const struct tw_player *p)
{
	return __atomic_load_n(&p->released, __ATOMIC_RELAXED);
}

/* Frame and pass of release @p g: no division in the first pass (every
 * release without looping). */
static inline uint64_t
index_of(const struct tw_player *p, uint64_t g)
{
	return g < p->n_frames ? g : g % p->n_frames;
}

static inline uint64_t
pass_of(const struct tw_player *p, uint64_t g)
{
	return g < p->n_frames ? 0 : g / p->n_frames;
}

/* The TSC release @p g is due at. */
static inline uint64_t
due_of(const struct tw_player *p, uint64_t g)
{
	return p->start_tsc + pass_of(p, g) * p->period_ticks + p->frames[index_of(p, g)].due;
}

/*
 * Pass @p pass of a frame of a sequence: its MsgSeqNum and SendingTime
 * move on, and the UDP checksum follows (RFC 1624: HC' = ~(~HC + ~m + m')
 * per 16-bit word; 0 stays 0, no checksum).
 */
static void
move_on(const struct tw_player *p, const struct frame *f, uint64_t pass, uint8_t *frame)
{
	uint8_t *mdp = frame + f->mdp_offset;
	uint8_t *sum_at = mdp - UDP_CHECKSUM_BACK;
	/* the packet header: MsgSeqNum u32, SendingTime u64 */
	unaligned_uint64_t *sending_time = (unaligned_uint64_t *)(mdp + sizeof(uint32_t));
	uint16_t before[MDP3_PACKET_HEADER_SIZE / 2];
	uint32_t sum = (uint32_t)(sum_at[0] << 8 | sum_at[1]);

	for (unsigned int w = 0; w < RTE_DIM(before); w++)
		before[w] = (uint16_t)(mdp[2 * w] << 8 | mdp[2 * w + 1]);
	*(unaligned_uint32_t *)mdp = rte_cpu_to_le_32(msg_seq_num(mdp) +
						      (uint32_t)(pass * f->seq_span));
	*sending_time = rte_cpu_to_le_64(rte_le_to_cpu_64(*sending_time) + pass * p->period_ns);
	if (sum == 0)
		return;
	sum = ~sum & 0xffffu;
	for (unsigned int w = 0; w < RTE_DIM(before); w++)
		sum += (~before[w] & 0xffffu) + (uint32_t)(mdp[2 * w] << 8 | mdp[2 * w + 1]);
	sum = (sum & 0xffffu) + (sum >> 16);
	sum = (sum & 0xffffu) + (sum >> 16);
	sum = ~sum & 0xffffu;
	if (sum == 0)
		sum = 0xffffu;   /* UDP sends a computed 0 as all ones */
	sum_at[0] = (uint8_t)(sum >> 8);
	sum_at[1] = (uint8_t)sum;
}

/* An mbuf holding release @p g, or NULL (pool empty). */
static struct rte_mbuf *
build(struct tw_player *p, uint64_t g)
{
	const struct frame *f = &p->frames[index_of(p, g)];
	const uint64_t pass = pass_of(p, g);
	struct rte_mbuf *m = rte_pktmbuf_alloc(p->opts.pool);
	char *dst;

	if (m == NULL)
		return NULL;
	dst = rte_pktmbuf_append(m, (uint16_t)(f->length > UINT16_MAX ? UINT16_MAX : f->length));
	if (dst == NULL) {              /* longer than the data room: truncated copy */
		uint16_t room = rte_pktmbuf_tailroom(m);

		dst = rte_pktmbuf_append(m, room);
		memcpy(dst, f->data, room);
	} else {
		memcpy(dst, f->data, f->length);
	}
	if (pass != 0 && f->sequence != 0 &&
	    m->data_len >= f->mdp_offset + MDP3_PACKET_HEADER_SIZE)
		move_on(p, f, pass, (uint8_t *)dst);
	m->port = p->opts.inputs[f->input].port_id;
	return m;
}

/* Prepare up to @p budget releases ahead of the next one. */
static void
prepare(struct tw_player *p, uint32_t budget)
{
	while (budget-- != 0 && p->prepared < p->total && p->prepared < p->next + PREP) {
		struct rte_mbuf *m = build(p, p->prepared);

		if (m == NULL)
			return;     /* retried at the next step; the release counts it */
		p->prep[p->prepared % PREP] = m;
		p->prepared++;
	}
}

static inline void
count(uint64_t *c)
{
	/* single writer; pairs with the relaxed loads of readers */
	__atomic_store_n(c, *c + 1, __ATOMIC_RELAXED);
}

/* Release p->next, which is due; @return the TSC of its release. */
static uint64_t
release(struct tw_player *p)
{
	const uint64_t g = p->next;
	const uint64_t i = index_of(p, g);
	const struct frame *f = &p->frames[i];
	struct rte_ring *ring = p->opts.inputs[f->input].ring;
	struct rte_mbuf *m;
	struct tw_player_stamp *st;
	uint64_t now, late;

	if (p->prepared == g)
		prepare(p, 1);
	m = p->prepared > g ? p->prep[g % PREP] : NULL;
	now = rte_rdtsc();
	late = now - due_of(p, g);
	p->err_ns[i] =
		(uint32_t)RTE_MIN((unsigned __int128)late * 1000000000u / p->opts.tsc_hz,
				  (unsigned __int128)UINT32_MAX);
	p->next = g + 1;
	if (m == NULL) {
		p->prepared = p->next;
		count(&p->no_mbuf);
		atomic_store_explicit(&p->published, p->next, memory_order_release);
		return now;
	}
	st = RTE_MBUF_DYNFIELD(m, p->opts.stamp_offset, struct tw_player_stamp *);
	st->rxq = (uint16_t)RTE_MIN(rte_ring_count(ring), (unsigned int)UINT16_MAX);
	st->magic = TW_PLAYER_STAMP_MAGIC;
	st->t0_lo = (uint32_t)now;
	st->t0_hi = (uint32_t)(now >> 32);
	if (p->opts.release_offset >= 0)
		*RTE_MBUF_DYNFIELD(m, p->opts.release_offset, uint64_t *) = g;
	if (rte_ring_sp_enqueue(ring, m) != 0) {
		rte_pktmbuf_free(m);
		count(&p->ring_full);
	} else {
		count(&p->released);
		/* single writer: the count, then the release number (below) */
		atomic_store_explicit(&p->in_released[f->input],
				      atomic_load_explicit(&p->in_released[f->input],
							   memory_order_relaxed) + 1,
				      memory_order_release);
	}
	atomic_store_explicit(&p->published, p->next, memory_order_release);
	return now;
}

uint32_t
tw_player_step(struct tw_player *p)
{
	uint64_t now;
	uint32_t n = 0;

	if (p->next == p->total || !tw_player_started(p))
		return 0;
	now = rte_rdtsc();
	while (p->next < p->total && now >= due_of(p, p->next)) {
		release(p);
		n++;
		now = rte_rdtsc();
	}
	if (p->next == p->total)
		atomic_store_explicit(&p->done, true, memory_order_release);
	else
		prepare(p, PREP_STEP);
	return n;
}

void
tw_player_run(struct tw_player *p, const _Atomic bool *quit)
{
#define QUIT() atomic_load_explicit(quit, memory_order_relaxed)
	while (!tw_player_started(p) && !QUIT())
		rte_pause();
	while (p->next < p->total && !QUIT()) {
		const uint64_t due = due_of(p, p->next);

		prepare(p, PREP);
		while (rte_rdtsc() < due && !QUIT())
			rte_pause();
		if (QUIT())
			break;
		release(p);
	}
#undef QUIT
	atomic_store_explicit(&p->done, true, memory_order_release);
}

void
tw_player_progress(const struct tw_player *p, uint64_t *next, uint64_t *counts)
{
	*next = atomic_load_explicit(&p->published, memory_order_acquire);
	for (uint32_t i = 0; i < p->opts.n_inputs; i++)
		counts[i] = atomic_load_explicit(&p->in_released[i], memory_order_acquire);
}

uint64_t
tw_player_total(const struct tw_player *p)
{
	return p->total;
}

uint32_t
tw_player_input_of(const struct tw_player *p, uint64_t g)
{
	return p->frames[index_of(p, g)].input;
}

uint64_t
tw_player_capture_ns(const struct tw_player *p, uint64_t g)
{
	return p->frames[index_of(p, g)].time_ns + pass_of(p, g) * p->period_ns;
}

uint64_t
tw_player_capture_at(const struct tw_player *p, uint64_t tsc)
{
	unsigned __int128 d;

	if (tsc <= p->start_tsc)
		return p->frames[0].time_ns;
	d = (unsigned __int128)(tsc - p->start_tsc) * 1000000000u * p->opts.speed_milli /
	    ((unsigned __int128)p->opts.tsc_hz * 1000u);
	return p->frames[0].time_ns + (d > UINT64_MAX / 2 ? UINT64_MAX / 2 : (uint64_t)d);
}

void
tw_player_counters(const struct tw_player *p, struct tw_player_stats *st)
{
	uint64_t handled;

	memset(st, 0, sizeof(*st));
	st->frames = p->n_frames;
	st->released = tw_player_released(p);
	st->ring_full = __atomic_load_n(&p->ring_full, __ATOMIC_RELAXED);
	st->no_mbuf = __atomic_load_n(&p->no_mbuf, __ATOMIC_RELAXED);
	/* every release is counted once, in one of the three */
	handled = st->released + st->ring_full + st->no_mbuf;
	st->passes = (handled + p->n_frames - 1) / p->n_frames;
	st->filtered = p->filtered;
	st->span_ns = (uint64_t)((unsigned __int128)p->frames[p->n_frames - 1].due * 1000000000u /
				 p->opts.tsc_hz);
	st->period_ns = p->period_ns;
}

void
tw_player_stats(const struct tw_player *p, struct tw_player_stats *st)
{
	static const uint32_t per_10000[4] = {5000, 9900, 9990, 10000};
	const uint64_t n = RTE_MIN(p->next, p->n_frames);
	uint32_t *sorted;

	tw_player_counters(p, st);
	if (n == 0 || (sorted = malloc(n * sizeof(*sorted))) == NULL)
		return;
	memcpy(sorted, p->err_ns, n * sizeof(*sorted));
	tw_lat_percentiles_u32(sorted, n, per_10000, 4, st->err_ns);
	free(sorted);
}
