/* SPDX-License-Identifier: BSD-3-Clause
 * Replaying tickwire-synth captures (feed A, feed B, snapshot channel)
 * merged by capture time into one app/feed path, for the synth tests
 * (test_synth_recovery, test_synth_mbo).  Failures are printed as
 * "FAIL: ..." and counted; the caller decides what they mean.
 */
#ifndef TESTS_SYNTH_REPLAY_H
#define TESTS_SYNTH_REPLAY_H

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "mdp3_feed.h"
#include "tw_feed.h"
#include "tw_pcap.h"

/* One capture being read: its next frame. */
struct synth_source {
	struct tw_pcap *pcap;
	struct tw_pcap_frame frame;
	bool live;                /* frame holds the next frame */
	const char *path;
};

static inline int
synth_source_next(struct synth_source *s)
{
	int rc = tw_pcap_next(s->pcap, &s->frame);

	if (rc < 0) {
		printf("FAIL: %s: %s\n", s->path, tw_pcap_error(s->pcap));
		return rc;
	}
	s->live = rc == 1;
	return 0;
}

/* Open the non-NULL of paths[0..count) into src; @return how many, or -EIO. */
static inline int
synth_sources_open(const char *const *paths, unsigned int count, struct synth_source *src)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < count; i++) {
		if (paths[i] == NULL)
			continue;
		src[n].path = paths[i];
		src[n].pcap = tw_pcap_open(paths[i]);
		if (src[n].pcap == NULL) {
			printf("FAIL: %s: cannot open: %s\n", paths[i], strerror(errno));
			return -EIO;
		}
		if (synth_source_next(&src[n]) < 0)
			return -EIO;
		n++;
	}
	return (int)n;
}

static inline void
synth_sources_close(struct synth_source *src, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		tw_pcap_close(src[i].pcap);
}

/*
 * Every frame of the n sources in capture-time order into @p path: snapshot
 * and definition packets always, incremental ones of feed A only with
 * use_a, of feed B only with use_b.  *last_ns: the last frame's time.
 * A frame that is not a routed UDP datagram, or that the path refuses,
 * adds one to *failures.  @return 0, or -EPROTO when a capture cannot be read.
 */
static inline int
synth_replay(struct tw_feed *path, struct synth_source *src, unsigned int n,
	     const struct mdp3_routes *routes, bool use_a, bool use_b, uint64_t *last_ns,
	     unsigned int *failures)
{
	struct mdp3_route route;
	struct tw_pcap_l4 l4;
	unsigned int i, best;
	int rc;

	for (;;) {
		best = n;
		for (i = 0; i < n; i++)
			if (src[i].live && (best == n ||
					src[i].frame.time_ns < src[best].frame.time_ns))
				best = i;
		if (best == n)
			return 0;
		*last_ns = src[best].frame.time_ns;
		if (tw_pcap_parse_frame(src[best].frame.data, src[best].frame.caplen,
				src[best].frame.linktype, &l4, NULL) < 0 || l4.protocol != 17 ||
				mdp3_routes_match(routes, l4.dst_ip, l4.dst_port, &route) < 0) {
			if ((*failures)++ < 20)
				printf("FAIL: %s frame %" PRIu64 ": not a routed UDP datagram\n",
				       src[best].path, src[best].frame.number);
		} else if (route.stream != MDP3_STREAM_INCREMENTAL ||
				(route.feed == MDP3_FEED_A ? use_a : use_b)) {
			rc = tw_feed_packet(path, (enum mdp3_stream)route.stream,
					(enum mdp3_feed_id)route.feed, l4.payload,
					l4.payload_length, src[best].frame.time_ns);
			if (rc < 0 && (*failures)++ < 20)
				printf("FAIL: %s frame %" PRIu64 ": tw_feed_packet: %s\n",
				       src[best].path, src[best].frame.number, strerror(-rc));
		}
		if (synth_source_next(&src[best]) < 0)
			return -EPROTO;
	}
}

#endif /* TESTS_SYNTH_REPLAY_H */
