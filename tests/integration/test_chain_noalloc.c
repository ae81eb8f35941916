/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * The appliance's actors allocate nothing once built: malloc and friends
 * are wrapped at link time (tests/common/tw_alloc_count.c, non-sanitized
 * builds) and counted while the synthetic channel-310 A/B capture goes
 * through the decode group (arbiter -> decoder -> book -> signal, the
 * sample strategy sending orders) and order-out (orders written to a sink,
 * its replies back to the signal), one datagram at a time as
 * tickwire-replay delivers them, then the end-of-input flush.
 *
 *   test_chain_noalloc A.pcap B.pcap
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "act.h"
#include "tw_alloc_count.h"
#include "tw_chain.h"
#include "tw_check.h"
#include "tw_pcap.h"

struct dgram {
	uint8_t *payload;
	uint32_t length;
	uint8_t side;
	uint64_t time_ns;
};

static uint64_t orders;

static void
sink(void *ctx, const uint8_t *frame, uint32_t length)
{
	(void)ctx;
	(void)frame;
	(void)length;
	orders++;
}

/* Both captures in memory, merged by capture time (reading allocates). */
static struct dgram *
load(const char *a, const char *b, size_t *count)
{
	struct tw_pcap *p[2] = {tw_pcap_open(a), tw_pcap_open(b)};
	struct tw_pcap_frame fr[2];
	struct dgram *d = NULL;
	size_t n = 0, cap = 0;
	bool has[2];

	if (p[0] == NULL || p[1] == NULL) {
		fprintf(stderr, "test_chain_noalloc: cannot open %s or %s\n", a, b);
		exit(1);
	}
	for (int i = 0; i < 2; i++)
		has[i] = tw_pcap_next(p[i], &fr[i]) == 1;
	while (has[0] || has[1]) {
		int i = !has[0] || (has[1] && fr[1].time_ns < fr[0].time_ns);
		struct tw_pcap_l4 l4;

		if (tw_pcap_parse_frame(fr[i].data, fr[i].caplen, fr[i].linktype, &l4, NULL) == 0 &&
		    l4.protocol == 17) {
			if (n == cap) {
				cap = cap ? 2 * cap : 4096;
				d = realloc(d, cap * sizeof(*d));
				if (d == NULL)
					exit(1);
			}
			d[n].payload = malloc(l4.payload_length);
			if (d[n].payload == NULL)
				exit(1);
			memcpy(d[n].payload, l4.payload, l4.payload_length);
			d[n].length = l4.payload_length;
			d[n].side = (uint8_t)i;
			d[n].time_ns = fr[i].time_ns;
			n++;
		}
		has[i] = tw_pcap_next(p[i], &fr[i]) == 1;
	}
	tw_pcap_close(p[0]);
	tw_pcap_close(p[1]);
	*count = n;
	return d;
}

int
main(int argc, char **argv)
{
	struct tw_chain_stats st;
	struct tw_chain_opts o;
	struct tw_chain *c;
	struct dgram *d;
	size_t n;

	if (argc != 3) {
		fprintf(stderr, "usage: test_chain_noalloc A.pcap B.pcap\n");
		return 2;
	}
	d = load(argv[1], argv[2], &n);
	memset(&o, 0, sizeof(o));
	o.decode_mailbox.name = "decode";
	o.decode_mailbox.cpu = -1;
	o.order_mailbox.name = "order_out";
	o.order_mailbox.cpu = -1;
	o.order_mailbox.overflow = ACT_OVERFLOW_FAIL;
	o.gap_wait_packets = 64;
	o.n_channels = 1;
	o.channels[0] = 310;
	o.strategy_enabled = true;
	o.strategy.n_instruments = 2;
	o.strategy.instruments[0] = 100000;
	o.strategy.instruments[1] = 101000;
	o.strategy.ratio_numerator = 3;
	o.strategy.ratio_denominator = 2;
	o.strategy.order_qty = 1;
	o.strategy.max_orders = 100;
	o.order_sink = sink;
	c = tw_chain_create(&o);
	CHECK(c != NULL);
	if (c == NULL)
		return 1;
	act_group_bind(tw_chain_decode_group(c));
	act_group_bind(tw_chain_order_group(c));

	tw_alloc_counting = 1;
	for (size_t i = 0; i < n; i++) {
		struct tw_rx rx;

		memset(&rx, 0, sizeof(rx));
		rx.payload = d[i].payload;
		rx.length = d[i].length;
		rx.side = d[i].side;
		rx.channel = 310;
		rx.rx_ns = d[i].time_ns;
		CHECK(tw_chain_rx_direct(c, &rx) >= 0);
		act_group_drain(tw_chain_order_group(c));
		act_group_drain(tw_chain_decode_group(c));  /* order-out's replies */
	}
	tw_chain_tick(c, UINT64_MAX / 2, true);
	act_group_drain(tw_chain_order_group(c));
	act_group_drain(tw_chain_decode_group(c));
	tw_alloc_counting = 0;

	tw_chain_stats(c, &st);
	printf("%zu datagrams, %" PRIu64 " tops, %" PRIu64 " orders: %" PRIu64
	       " allocations while counting\n", n, st.tops, orders, (uint64_t)tw_allocations);
	CHECK(tw_allocations == 0);
	CHECK(st.tops > 1000);
	CHECK(orders > 0 && st.orders_in == orders);
	CHECK(st.replies_failed == 0);
	tw_chain_destroy(c);
	for (size_t i = 0; i < n; i++)
		free(d[i].payload);
	free(d);
	return failures != 0;
}
