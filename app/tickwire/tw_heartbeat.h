/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tw_heartbeat: does every hot lcore still make progress? Each hot lcore
 * bumps its own beat once per loop iteration (a relaxed store to a cache
 * line nobody else writes); the main lcore samples the beats and calls a
 * lcore stalled when its beat has not moved for stall_ns. The main lcore
 * pings the systemd watchdog only while no lcore is stalled, so a hot lcore
 * stuck in a handler ends in a watchdog restart instead of a process that
 * looks alive because its main thread still runs.
 *
 * DPDK-free: the appliance passes its clock (ns) in; tests drive it.
 */
#ifndef TW_HEARTBEAT_H
#define TW_HEARTBEAT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define TW_HB_MAX 8

/** One lcore's beat, alone on its cache line. */
struct tw_hb_beat {
	_Alignas(64) _Atomic uint64_t count;
};

struct tw_heartbeat {
	struct tw_hb_beat beat[TW_HB_MAX];
	const char *name[TW_HB_MAX];     /**< role, for the log */
	uint32_t n;
	uint64_t stall_ns;
	/* main lcore only */
	uint64_t seen[TW_HB_MAX];        /**< beat at the last change */
	uint64_t since[TW_HB_MAX];       /**< time of the last change, ns */
	bool stalled[TW_HB_MAX];
	uint64_t stalls;                 /**< stall episodes since start */
};

/** Empty heartbeat: lcores stalled after @p stall_ns without a beat. */
void tw_hb_init(struct tw_heartbeat *hb, uint64_t stall_ns);

/** Register a hot lcore; @return its index for tw_hb_beat(), -1 when full. */
int tw_hb_add(struct tw_heartbeat *hb, const char *name, uint64_t now_ns);

/** Hot lcore @p i made progress (its loop ran once). */
static inline void
tw_hb_beat(struct tw_heartbeat *hb, int i)
{
	struct tw_hb_beat *b = &hb->beat[i];

	/* one writer: load + store, no read-modify-write on the hot path */
	atomic_store_explicit(&b->count,
			      atomic_load_explicit(&b->count, memory_order_relaxed) + 1,
			      memory_order_relaxed);
}

/**
 * Main lcore: sample the beats at @p now_ns.
 * @param new_mask receives bit i for each lcore i that became stalled in
 *        this call (log those once); an lcore that beats again is no
 *        longer stalled
 * @return the number of lcores that made no progress for stall_ns (0: all
 *         alive, ping the watchdog)
 */
uint32_t tw_hb_check(struct tw_heartbeat *hb, uint64_t now_ns, uint32_t *new_mask);

#endif
