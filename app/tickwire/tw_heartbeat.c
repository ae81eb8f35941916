/* SPDX-License-Identifier: BSD-3-Clause */
#include "tw_heartbeat.h"

#include <string.h>

void
tw_hb_init(struct tw_heartbeat *hb, uint64_t stall_ns)
{
	memset(hb, 0, sizeof(*hb));
	hb->stall_ns = stall_ns;
}

int
tw_hb_add(struct tw_heartbeat *hb, const char *name, uint64_t now_ns)
{
	uint32_t i = hb->n;

	if (i >= TW_HB_MAX)
		return -1;
	atomic_store_explicit(&hb->beat[i].count, 0, memory_order_relaxed);
	hb->name[i] = name;
	hb->seen[i] = 0;
	hb->since[i] = now_ns;
	hb->stalled[i] = false;
	hb->n = i + 1;
	return (int)i;
}

uint32_t
tw_hb_check(struct tw_heartbeat *hb, uint64_t now_ns, uint32_t *new_mask)
{
	uint32_t stalled = 0;

	*new_mask = 0;
	for (uint32_t i = 0; i < hb->n; i++) {
		uint64_t c = atomic_load_explicit(&hb->beat[i].count, memory_order_relaxed);

		if (c != hb->seen[i]) {
			hb->seen[i] = c;
			hb->since[i] = now_ns;
			hb->stalled[i] = false;
			continue;
		}
		if (now_ns - hb->since[i] < hb->stall_ns)
			continue;
		if (!hb->stalled[i]) {
			hb->stalled[i] = true;
			/* read by the telemetry thread */
			__atomic_store_n(&hb->stalls, hb->stalls + 1, __ATOMIC_RELAXED);
			*new_mask |= UINT32_C(1) << i;
		}
		stalled++;
	}
	return stalled;
}
