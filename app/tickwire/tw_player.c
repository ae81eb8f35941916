/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * Paced replay into ring-backed ports (tw_player.h).
 *
 * The schedule: frame i of the merged inputs is due at
 *   start_tsc + (time_ns[i] - time_ns[0]) x tsc_hz / 1e9 / speed
 * (integer arithmetic, 128-bit intermediate). Frames are merged by capture
 * time; ties keep input order, then file order, as tickwire-replay merges.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_mbuf_dyn.h>
#include <rte_pause.h>

#include "tw_latency.h"
#include "tw_pcap.h"
#include "tw_player.h"

/* mbufs prepared ahead of their release; at most PREP_STEP per step */
#define PREP 32
#define PREP_STEP 4

struct frame {
	uint64_t time_ns;      /* capture time */
	uint64_t due;          /* ticks after start_tsc */
	const uint8_t *data;
	uint32_t length;
	uint16_t input;
	uint64_t number;       /* in its file: the tie-break */
};

struct tw_player {
	struct tw_player_opts opts;
	struct tw_pcap *pcap[TW_PLAYER_MAX_INPUTS];
	struct frame *frames;
	uint64_t n_frames;
	uint64_t next;                 /* next frame to release (stepping thread) */
	uint64_t prepared;             /* frames [next, prepared) have an mbuf */
	struct rte_mbuf *prep[PREP];
	uint32_t *err_ns;              /* per frame: actual - scheduled release */
	uint64_t start_tsc;
	_Atomic bool started;
	_Atomic bool done;
	uint64_t released;             /* stepping thread writes, relaxed readers */
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
		p->frames[p->n_frames++] = (struct frame){
			.time_ns = f.time_ns, .data = f.data, .length = f.caplen,
			.input = (uint16_t)i, .number = f.number,
		};
	}
	if (rc < 0) {
		snprintf(err, err_len, "%s: frame %" PRIu64 ": %s", p->opts.inputs[i].path,
			 f.number, tw_pcap_error(p->pcap[i]));
		return -1;
	}
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

/* An mbuf holding frame @p i, or NULL (pool empty). */
static struct rte_mbuf *
build(struct tw_player *p, uint64_t i)
{
	const struct frame *f = &p->frames[i];
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
	m->port = p->opts.inputs[f->input].port_id;
	return m;
}

/* Prepare up to @p budget frames ahead of the next release. */
static void
prepare(struct tw_player *p, uint32_t budget)
{
	while (budget-- != 0 && p->prepared < p->n_frames && p->prepared < p->next + PREP) {
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

/* Release frame p->next, which is due; @return the TSC of its release. */
static uint64_t
release(struct tw_player *p)
{
	const uint64_t i = p->next;
	const struct frame *f = &p->frames[i];
	struct rte_ring *ring = p->opts.inputs[f->input].ring;
	struct rte_mbuf *m;
	struct tw_player_stamp *st;
	uint64_t now, late;

	if (p->prepared == i)
		prepare(p, 1);
	m = p->prepared > i ? p->prep[i % PREP] : NULL;
	now = rte_rdtsc();
	late = now - (p->start_tsc + f->due);
	p->err_ns[i] = (uint32_t)RTE_MIN((unsigned __int128)late * 1000000000u / p->opts.tsc_hz,
					 (unsigned __int128)UINT32_MAX);
	p->next = i + 1;
	if (m == NULL) {
		p->prepared = p->next;
		count(&p->no_mbuf);
		return now;
	}
	st = RTE_MBUF_DYNFIELD(m, p->opts.stamp_offset, struct tw_player_stamp *);
	st->rxq = (uint16_t)RTE_MIN(rte_ring_count(ring), (unsigned int)UINT16_MAX);
	st->magic = TW_PLAYER_STAMP_MAGIC;
	st->t0_lo = (uint32_t)now;
	st->t0_hi = (uint32_t)(now >> 32);
	if (rte_ring_sp_enqueue(ring, m) != 0) {
		rte_pktmbuf_free(m);
		count(&p->ring_full);
	} else {
		count(&p->released);
	}
	return now;
}

uint32_t
tw_player_step(struct tw_player *p)
{
	uint64_t now;
	uint32_t n = 0;

	if (p->next == p->n_frames || !tw_player_started(p))
		return 0;
	now = rte_rdtsc();
	while (p->next < p->n_frames && now >= p->start_tsc + p->frames[p->next].due) {
		release(p);
		n++;
		now = rte_rdtsc();
	}
	if (p->next == p->n_frames)
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
	while (p->next < p->n_frames && !QUIT()) {
		const uint64_t due = p->start_tsc + p->frames[p->next].due;

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
tw_player_stats(const struct tw_player *p, struct tw_player_stats *st)
{
	static const uint32_t per_10000[4] = {5000, 9900, 9990, 10000};
	const uint64_t n = p->next;
	uint32_t *sorted;

	memset(st, 0, sizeof(*st));
	st->frames = p->n_frames;
	st->released = tw_player_released(p);
	st->ring_full = __atomic_load_n(&p->ring_full, __ATOMIC_RELAXED);
	st->no_mbuf = __atomic_load_n(&p->no_mbuf, __ATOMIC_RELAXED);
	st->filtered = p->filtered;
	st->span_ns = (uint64_t)((unsigned __int128)p->frames[p->n_frames - 1].due * 1000000000u /
				 p->opts.tsc_hz);
	if (n == 0 || (sorted = malloc(n * sizeof(*sorted))) == NULL)
		return;
	memcpy(sorted, p->err_ns, n * sizeof(*sorted));
	tw_lat_percentiles_u32(sorted, n, per_10000, 4, st->err_ns);
	free(sorted);
}
