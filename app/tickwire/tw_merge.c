/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * Release order for a paced replay (tw_merge.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tw_merge.h"

struct slot {
	struct tw_rx rx;
	uint64_t g;
};

struct fifo {
	struct slot *slots;
	uint64_t head;         /* next to deliver */
	uint64_t tail;         /* next free */
	uint64_t last_g;       /* of the newest pushed; UINT64_MAX: none yet */
	uint64_t pushed;       /* ever */
};

/* Every frame released to @p f by the snapshot has arrived or is gone. */
static inline bool
complete(const struct fifo *f, const struct tw_merge_progress *pr, uint32_t i)
{
	return f->pushed + pr->gone[i] >= pr->released[i];
}

struct tw_merge {
	uint32_t n_inputs;
	uint64_t mask;
	uint32_t next_input;   /* tw_merge_next()'s choice, for tw_merge_pop() */
	struct tw_merge_stats stats;
	struct fifo in[TW_MERGE_MAX_INPUTS];
};

struct tw_merge *
tw_merge_create(uint32_t n_inputs, uint32_t capacity)
{
	struct tw_merge *m;
	uint64_t size = 1;

	if (n_inputs == 0 || n_inputs > TW_MERGE_MAX_INPUTS || capacity == 0) {
		errno = EINVAL;
		return NULL;
	}
	while (size < capacity)
		size <<= 1;
	m = calloc(1, sizeof(*m));
	if (m == NULL)
		return NULL;
	m->n_inputs = n_inputs;
	m->mask = size - 1;
	m->next_input = UINT32_MAX;
	for (uint32_t i = 0; i < n_inputs; i++) {
		m->in[i].slots = calloc(size, sizeof(struct slot));
		m->in[i].last_g = UINT64_MAX;
		if (m->in[i].slots == NULL) {
			tw_merge_destroy(m);
			errno = ENOMEM;
			return NULL;
		}
	}
	return m;
}

void
tw_merge_destroy(struct tw_merge *m)
{
	if (m == NULL)
		return;
	for (uint32_t i = 0; i < TW_MERGE_MAX_INPUTS; i++)
		free(m->in[i].slots);
	free(m);
}

int
tw_merge_push(struct tw_merge *m, uint32_t input, const struct tw_rx *rx, uint64_t g)
{
	struct fifo *f = &m->in[input];

	if (f->tail - f->head > m->mask) {
		m->stats.overflow++;
		return -ENOBUFS;
	}
	if (f->last_g != UINT64_MAX && g < f->last_g)
		m->stats.out_of_order++;
	f->last_g = g;
	f->slots[f->tail & m->mask] = (struct slot){ .rx = *rx, .g = g };
	f->tail++;
	f->pushed++;
	return 0;
}

const struct tw_rx *
tw_merge_next(struct tw_merge *m, const struct tw_merge_progress *pr)
{
	uint32_t best = UINT32_MAX;
	uint64_t best_g = UINT64_MAX;

	m->next_input = UINT32_MAX;
	for (uint32_t i = 0; i < m->n_inputs; i++) {
		const struct fifo *f = &m->in[i];

		if (f->head != f->tail && f->slots[f->head & m->mask].g < best_g) {
			best = i;
			best_g = f->slots[f->head & m->mask].g;
		}
	}
	if (best == UINT32_MAX)
		return NULL;
	if (best_g >= pr->next)
		goto wait;       /* published after the snapshot: an older one may come */
	for (uint32_t i = 0; i < m->n_inputs; i++)
		if (i != best && m->in[i].head == m->in[i].tail && !complete(&m->in[i], pr, i))
			goto wait;   /* input i has frames on their way */
	m->next_input = best;
	return &m->in[best].slots[m->in[best].head & m->mask].rx;
wait:
	m->stats.waits++;
	return NULL;
}

void
tw_merge_pop(struct tw_merge *m)
{
	if (m->next_input == UINT32_MAX)
		return;
	m->in[m->next_input].head++;
	m->next_input = UINT32_MAX;
	m->stats.delivered++;
}

bool
tw_merge_settled(const struct tw_merge *m, const struct tw_merge_progress *pr)
{
	for (uint32_t i = 0; i < m->n_inputs; i++)
		if (m->in[i].head != m->in[i].tail || !complete(&m->in[i], pr, i))
			return false;
	return true;
}

uint64_t
tw_merge_held(const struct tw_merge *m)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < m->n_inputs; i++)
		n += m->in[i].tail - m->in[i].head;
	return n;
}

void
tw_merge_stats(const struct tw_merge *m, struct tw_merge_stats *st)
{
	*st = m->stats;
	st->pushed = 0;
	for (uint32_t i = 0; i < m->n_inputs; i++)
		st->pushed += m->in[i].pushed;
}
