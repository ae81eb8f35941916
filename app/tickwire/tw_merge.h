/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 */
#ifndef TICKWIRE_TW_MERGE_H
#define TICKWIRE_TW_MERGE_H

/**
 * @file
 * Release order for a paced replay (issue 18, item 0): the decode lcore
 * takes the datagrams of every input in the order the player released
 * them, which is the order tickwire-replay merges the captures in (capture
 * time, then input, then file order). The capture lcores and the hand-off
 * keep each input's order but not the interleaving of two inputs; this
 * puts it back.
 *
 * Each input has a FIFO of the datagrams that reached the decode lcore,
 * tagged with their release number. The oldest head is delivered when no
 * other input can still bring an older one:
 *  - its release was published before the progress snapshot was taken
 *    (struct tw_merge_progress.next), and
 *  - for every other input whose FIFO is empty, each frame the player had
 *    enqueued for it by the snapshot has reached the merge or is gone
 *    (pushed + gone >= released): its poller dropped or filtered it.
 * Counting arrivals, not what the pollers handed over, matters: a hand-off
 * queue may hold a completed enqueue behind another producer's unfinished
 * one, so "handed over" is not "arrived". Each input's frames arrive in
 * release order (one poller, one producer). The caller takes the snapshot,
 * drains its hand-off into the merge, then asks for deliveries.
 *
 * Single thread (the decode lcore). Memory is allocated at creation only.
 */

#include <stdbool.h>
#include <stdint.h>

#include "tw_msg.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TW_MERGE_MAX_INPUTS 8

/** Where the inputs stood when the caller looked (before draining). */
struct tw_merge_progress {
	uint64_t next;                           /**< releases [0, next) published */
	uint64_t released[TW_MERGE_MAX_INPUTS];  /**< enqueued by the player, per input */
	/** taken off the input by its poller and not handed over (filtered,
	 *  over budget, hand-off full) */
	uint64_t gone[TW_MERGE_MAX_INPUTS];
};

struct tw_merge_stats {
	uint64_t pushed;
	uint64_t delivered;
	/** asks that found a datagram that had to wait for another input */
	uint64_t waits;
	uint64_t overflow;    /**< refused (then delivered at once): a FIFO was full */
	uint64_t out_of_order;/**< pushed behind a later release of its input (faults) */
};

struct tw_merge;

/**
 * @param n_inputs  1..TW_MERGE_MAX_INPUTS
 * @param capacity  datagrams per input (rounded up to a power of two): at
 *                  least what can be in flight (the mbuf pool)
 * @return the merge, or NULL (errno EINVAL or ENOMEM).
 */
struct tw_merge *tw_merge_create(uint32_t n_inputs, uint32_t capacity);
void tw_merge_destroy(struct tw_merge *m);

/**
 * Hold datagram @p rx, release @p g of input @p input (copied).
 * @return 0, -ENOBUFS (the FIFO is full: not held, the caller drops it).
 */
int tw_merge_push(struct tw_merge *m, uint32_t input, const struct tw_rx *rx, uint64_t g);

/**
 * The next datagram to deliver under @p pr, or NULL (none may go yet). It
 * stays held until tw_merge_pop().
 */
const struct tw_rx *tw_merge_next(struct tw_merge *m, const struct tw_merge_progress *pr);

/** Drop the datagram tw_merge_next() returned. */
void tw_merge_pop(struct tw_merge *m);

/**
 * true when everything published by @p pr has been delivered: no input
 * holds a datagram and every frame released to each has arrived or is gone.
 */
bool tw_merge_settled(const struct tw_merge *m, const struct tw_merge_progress *pr);

/** Datagrams held now. */
uint64_t tw_merge_held(const struct tw_merge *m);

void tw_merge_stats(const struct tw_merge *m, struct tw_merge_stats *st);

#ifdef __cplusplus
}
#endif

#endif /* TICKWIRE_TW_MERGE_H */
