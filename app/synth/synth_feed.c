/* SPDX-License-Identifier: BSD-3-Clause */
/* Feed impairments: drops, duplicates, reordering (see synth_feed.h). */
#include <errno.h>
#include <string.h>

#include "synth_feed.h"

#define LATE_GAP_NS 50
#define DUP_GAP_NS 200

int
synth_feed_open(struct synth_feed *feed, uint64_t seed, uint64_t stream)
{
	synth_rng_seed(&feed->rng, seed, stream);
	feed->last_time_ns = 0;
	feed->held_count = 0;
	memset(&feed->counters, 0, sizeof(feed->counters));
	return synth_pcap_open(&feed->pcap, feed->path);
}

static int
write_frame(struct synth_feed *feed, uint64_t time_ns, const uint8_t *data, uint16_t len)
{
	int rc;

	if (time_ns < feed->last_time_ns)
		time_ns = feed->last_time_ns;
	rc = synth_pcap_write_udp(&feed->pcap, time_ns, &feed->flow, data, len);
	if (rc < 0)
		return rc;
	feed->last_time_ns = time_ns;
	feed->counters.records++;
	return 0;
}

static int
hold(struct synth_feed *feed, uint64_t time_ns, const uint8_t *data, uint16_t len,
		uint32_t wait)
{
	struct synth_feed_held *h;

	if (feed->held_count >= SYNTH_FEED_MAX_HELD)
		return -ENOSPC;
	h = &feed->held[feed->held_count++];
	h->time_ns = time_ns;
	h->wait = wait;
	h->len = len;
	memcpy(h->data, data, len);
	return 0;
}

/* A packet was written in its turn: held packets due now follow it. */
static int
release(struct synth_feed *feed)
{
	unsigned int i, kept = 0;
	int rc;

	for (i = 0; i < feed->held_count; i++)
		if (feed->held[i].wait > 0)
			feed->held[i].wait--;
	for (i = 0; i < feed->held_count; i++) {
		if (feed->held[i].wait == 0) {
			rc = write_frame(feed, feed->last_time_ns + LATE_GAP_NS,
					feed->held[i].data, feed->held[i].len);
			if (rc < 0)
				return rc;
		} else {
			if (kept != i)
				feed->held[kept] = feed->held[i];
			kept++;
		}
	}
	feed->held_count = kept;
	return 0;
}

int
synth_feed_send(struct synth_feed *feed, uint64_t time_ns, const uint8_t *payload,
		uint16_t len, bool force_drop)
{
	uint64_t u_drop, u_dup, u_reorder, k_reorder, k_dup;
	bool reorder, dup;
	uint32_t wait;
	int rc;

	if (len > SYNTH_FEED_MAX_PAYLOAD)
		return -EMSGSIZE;
	/* Always five draws: the fate of packet n depends on n alone. */
	u_drop = synth_rng_next(&feed->rng) >> 32;
	u_dup = synth_rng_next(&feed->rng) >> 32;
	u_reorder = synth_rng_next(&feed->rng) >> 32;
	k_reorder = synth_rng_below(&feed->rng, 3);
	k_dup = synth_rng_below(&feed->rng, 3);
	feed->counters.packets++;
	if (force_drop) {
		feed->counters.gap_dropped++;
		return 0;
	}
	if (u_drop < feed->drop) {
		feed->counters.dropped++;
		return 0;
	}
	dup = u_dup < feed->dup;
	reorder = u_reorder < feed->reorder && feed->held_count + 2 <= SYNTH_FEED_MAX_HELD;
	if (reorder) {
		wait = 1 + (uint32_t)k_reorder;
		rc = hold(feed, time_ns, payload, len, wait);
		if (rc == 0 && dup)
			rc = hold(feed, time_ns, payload, len, wait + (uint32_t)k_dup);
		if (rc < 0)
			return rc;
		feed->counters.reordered++;
		feed->counters.duplicated += dup;
		return 0;
	}
	rc = write_frame(feed, time_ns, payload, len);
	if (rc == 0 && dup) {
		feed->counters.duplicated++;
		/* With the hold queue full, the copy follows at once. */
		if (k_dup == 0 || feed->held_count >= SYNTH_FEED_MAX_HELD)
			rc = write_frame(feed, feed->last_time_ns + DUP_GAP_NS, payload, len);
		else
			rc = hold(feed, time_ns, payload, len, (uint32_t)k_dup + 1);
	}
	if (rc < 0)
		return rc;
	return release(feed);
}

int
synth_feed_close(struct synth_feed *feed)
{
	unsigned int i;
	int rc = 0, rc2;

	for (i = 0; i < feed->held_count && rc == 0; i++)
		rc = write_frame(feed, feed->last_time_ns + LATE_GAP_NS, feed->held[i].data,
				feed->held[i].len);
	feed->held_count = 0;
	rc2 = synth_pcap_close(&feed->pcap);
	return rc < 0 ? rc : rc2;
}
