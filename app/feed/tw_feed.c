/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * The feed path of one channel: arbiter -> decoder -> book -> signal over
 * lib/mdp3 and lib/book. See tw_feed.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tw_feed.h"

/* -- arbiter ------------------------------------------------------------------ */

static int
arb_deliver(void *ctx, const struct mdp3_arb_packet *p)
{
	struct tw_feed *f = ctx;

	if (f->hops.packet != NULL)
		return f->hops.packet(f->hops.ctx, f, p);
	return tw_feed_decode(f, p);
}

static void
arb_loss(void *ctx, uint32_t first_seq, uint32_t count, uint64_t now_ns)
{
	struct tw_feed *f = ctx;

	if (f->hops.loss != NULL)
		f->hops.loss(f->hops.ctx, f, first_seq, count, now_ns);
	else
		tw_feed_book_loss(f, first_seq, count, now_ns);
}

int
tw_feed_arbitrate(struct tw_feed *f, enum mdp3_feed_id side, const uint8_t *data,
		  size_t length, uint64_t rx_ns)
{
	return mdp3_arb_push(f->arb, side, data, length, rx_ns);
}

int
tw_feed_poll(struct tw_feed *f, uint64_t now_ns)
{
	return mdp3_arb_poll(f->arb, now_ns);
}

int
tw_feed_flush(struct tw_feed *f, uint64_t now_ns)
{
	return mdp3_arb_flush(f->arb, now_ns);
}

/* -- decoder ------------------------------------------------------------------ */

static inline void
hand_batch(struct tw_feed *f, const struct tw_feed_batch *b)
{
	f->hops.batch(f->hops.ctx, f, b);
}

static inline struct mdp3_msg *
next_slot(struct tw_feed *f)
{
	struct tw_feed_batch *b = f->batch;

	if (__builtin_expect(b->n == TW_FEED_BATCH, 0)) {
		/* a packet of more messages than a batch: hand this part on */
		hand_batch(f, b);
		b->first = false;
		b->n = 0;
	}
	return &b->msg[b->n++];
}

/* Direct composition (no batch hop): each message straight to the book;
 * with a batch hop, into the batch. */
static int
walk_message(void *ctx, const struct mdp3_packet *pkt, const struct mdp3_msg *msg)
{
	struct tw_feed *f = ctx;

	(void)pkt;
	if (f->batch == NULL)
		book_feed_message(f->book, &f->pc, msg);
	else
		*next_slot(f) = *msg;
	return 0;
}

static void
walk_skip(void *ctx, const struct mdp3_packet *pkt, const struct mdp3_skip *skip)
{
	struct tw_feed *f = ctx;

	(void)pkt;
	(void)skip;
	if (f->batch == NULL)
		book_feed_message(f->book, &f->pc, NULL);
	else
		next_slot(f)->info = NULL;
}

int
tw_feed_decode(struct tw_feed *f, const struct mdp3_arb_packet *p)
{
	struct tw_feed_batch b;
	int rc;

	if (f->hops.batch == NULL) {
		/* stages joined by direct calls: nothing to carry between them,
		 * the book applies each message as the walker delivers it */
		tw_feed_book_begin(f, p);
		rc = mdp3_walk_packet(&f->walker, p->data, p->length);
		tw_feed_book_end(f, rc);
		return rc;
	}
	b.packet = p;
	b.n = 0;
	b.first = true;
	b.last = false;
	f->batch = &b;
	rc = mdp3_walk_packet(&f->walker, p->data, p->length);
	f->batch = NULL;
	b.last = true;
	b.walk_rc = rc;
	hand_batch(f, &b);
	return rc;
}

/* -- book --------------------------------------------------------------------- */

void
tw_feed_book_batch(struct tw_feed *f, const struct tw_feed_batch *b)
{
	if (b->first)
		tw_feed_book_begin(f, b->packet);
	for (uint16_t i = 0; i < b->n; i++)
		tw_feed_book_message(f, &b->msg[i]);
	if (b->last)
		tw_feed_book_end(f, b->walk_rc);
}

void
tw_feed_book_begin(struct tw_feed *f, const struct mdp3_arb_packet *p)
{
	book_feed_packet_begin(f->book, (enum mdp3_feed_id)p->feed, p->data, p->length,
			       p->rx_ns, &f->pc);
	f->pc.held = p->held;
}

int
tw_feed_book_end(struct tw_feed *f, int walk_rc)
{
	return book_feed_packet_end(f->book, &f->pc, walk_rc);
}

void
tw_feed_book_loss(struct tw_feed *f, uint32_t first_seq, uint32_t count, uint64_t now_ns)
{
	book_feed_loss(f->book, first_seq, count, now_ns);
}

int
tw_feed_book_stream(struct tw_feed *f, enum mdp3_stream stream, enum mdp3_feed_id side,
		    const uint8_t *data, size_t length, uint64_t rx_ns)
{
	return book_feed_stream_packet(f->book, stream, side, data, length, rx_ns);
}

void
tw_feed_book_publish(struct tw_feed *f, uint64_t now_ns)
{
	book_feed_flush(f->book, now_ns);
}

/* -- the whole path ------------------------------------------------------------ */

int
tw_feed_packet(struct tw_feed *f, enum mdp3_stream stream, enum mdp3_feed_id side,
	       const uint8_t *data, size_t length, uint64_t rx_ns)
{
	if ((unsigned int)side >= MDP3_FEED_COUNT || (unsigned int)stream >= MDP3_STREAM_COUNT)
		return -EINVAL;
	if (stream == MDP3_STREAM_INCREMENTAL)
		return tw_feed_arbitrate(f, side, data, length, rx_ns);
	return tw_feed_book_stream(f, stream, side, data, length, rx_ns);
}

int
tw_feed_datagram(struct tw_feed *f, const struct mdp3_routes *routes, uint32_t dst_ip,
		 uint16_t dst_port, const uint8_t *data, size_t length, uint64_t rx_ns)
{
	struct mdp3_route r;
	int rc;

	if (routes == NULL)
		return -EINVAL;
	rc = mdp3_routes_match(routes, dst_ip, dst_port, &r);
	if (rc < 0)
		return rc;
	return tw_feed_packet(f, (enum mdp3_stream)r.stream, (enum mdp3_feed_id)r.feed, data,
			      length, rx_ns);
}

int
tw_feed_finish(struct tw_feed *f, uint64_t now_ns)
{
	int n = tw_feed_flush(f, now_ns);

	tw_feed_book_publish(f, now_ns);
	return n;
}

int
tw_feed_sequence_reset(struct tw_feed *f)
{
	mdp3_arb_reset(f->arb);
	return book_feed_sequence_reset(f->book);
}

/* -- life --------------------------------------------------------------------- */

struct tw_feed *
tw_feed_create(const struct tw_feed_config *config)
{
	const struct mdp3_handler wh = { .on_message = walk_message, .on_skip = walk_skip };
	struct mdp3_arb_handler ah = { .deliver = arb_deliver, .loss = arb_loss };
	struct book_feed_config bcfg;
	struct tw_feed *f;
	int saved;

	if (config == NULL) {
		errno = EINVAL;
		return NULL;
	}
	f = aligned_alloc(64, (sizeof(*f) + 63) / 64 * 64);
	if (f == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	memset(f, 0, sizeof(*f));
	f->hops = config->hops;
	ah.ctx = f;
	f->arb = mdp3_arb_create(&config->arb, &ah);
	if (f->arb == NULL)
		goto fail;
	bcfg = config->book;
	/* the recovery buffer keeps packets the arbiter delivers: its slots
	 * hold the arbiter's largest packet */
	if (bcfg.max_packet_size == 0)
		bcfg.max_packet_size = mdp3_arb_config(f->arb)->max_packet_size;
	f->book = book_feed_create(&bcfg);
	if (f->book == NULL)
		goto fail;
	mdp3_walker_init(&f->walker, NULL, &wh);
	f->walker.handler.ctx = f;
	return f;
fail:
	saved = errno != 0 ? errno : ENOMEM;
	tw_feed_destroy(f);
	errno = saved;
	return NULL;
}

void
tw_feed_destroy(struct tw_feed *f)
{
	if (f == NULL)
		return;
	book_feed_destroy(f->book);
	mdp3_arb_destroy(f->arb);
	free(f);
}
