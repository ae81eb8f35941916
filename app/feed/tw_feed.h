/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 */
#ifndef TICKWIRE_TW_FEED_H
#define TICKWIRE_TW_FEED_H

/**
 * @file
 * The feed path of one MDP 3.0 channel, composed from the libraries
 * (DESIGN.md section 3): lib/mdp3 arbitrates and decodes, lib/book applies,
 * this module composes. Every program that keeps books runs it: the
 * appliance and tickwire-replay (each stage in its own actor of the decode
 * group, tw_chain.c), tickwire-book, bench_feed and the tests (the stages
 * calling each other directly). So what a benchmark measures is what the
 * appliance runs, hops aside.
 *
 *   arbiter --packet--> decoder --batch--> book --event--> signal
 *      |                                    ^
 *      +-------------- loss ----------------+
 *   snapshot and definition packets: straight to the book (tw_feed_book_stream)
 *
 * Stages and what each owns (the members of struct tw_feed it may touch):
 *  - arbiter: @c arb (struct mdp3_arb: A/B by MsgSeqNum, gaps held, then
 *    declared lost); tw_feed_arbitrate(), tw_feed_poll(), tw_feed_flush().
 *  - decoder: @c walker (lib/mdp3's bounds-checked SBE walker);
 *    tw_feed_decode(). Through a hop it hands the book a packet's decoded
 *    messages in batches (struct tw_feed_batch, one per packet unless a
 *    packet holds more than TW_FEED_BATCH messages): one hop per packet,
 *    not one per message; the walker checks the whole packet before it
 *    delivers its first message, so batching delays no message behind a
 *    check. Without a batch hop, each message goes to the book as the
 *    walker delivers it (begin, messages, end: the same calls, no copy).
 *  - book: @c book (struct book_feed: RptSeq, recovery, books, events) and
 *    @c pc (the open packet); tw_feed_book_batch() (or its parts
 *    tw_feed_book_begin(), tw_feed_book_message(), tw_feed_book_end()),
 *    tw_feed_book_loss(), tw_feed_book_stream(), tw_feed_book_publish().
 *  - signal: the book's event handler (book_feed_config.handler).
 *
 * Hops. Where a stage hands work to the next, it calls the hop of
 * struct tw_feed_hops when one is set (the appliance: an act_fast_send to
 * the next stage's actor, whose handler calls that stage's function), else
 * the next stage's function directly. Each hop member is independent.
 *
 * No allocation after tw_feed_create(), no floating point, no clock: times
 * come with the packets.
 */

#include <stddef.h>
#include <stdint.h>

#include "book.h"
#include "mdp3.h"
#include "mdp3_feed.h"

#ifdef __cplusplus
extern "C" {
#endif

struct tw_feed;

/** Most messages of one batch (decoder -> book). */
#define TW_FEED_BATCH 16

/**
 * Decoded messages of one packet on their way to the book (the decoder's
 * stack; valid during the hop). A packet is one batch, or several when it
 * holds more than TW_FEED_BATCH messages: the first opens it, the last
 * closes it with the walker's result.
 */
struct tw_feed_batch {
	const struct mdp3_arb_packet *packet; /**< the packet (its bytes are the views') */
	uint16_t n;               /**< messages in msg[] */
	bool first;               /**< opens the packet (book_feed_packet_begin) */
	bool last;                /**< closes it (book_feed_packet_end with walk_rc) */
	int32_t walk_rc;          /**< last: the walker's result (< 0: malformed, n == 0) */
	/** the walker's views, in packet order; info NULL: a message it
	 *  skipped (unknown schema or template) */
	struct mdp3_msg msg[TW_FEED_BATCH];
};

/** Hops between stages; a NULL member is a direct call of the next stage. */
struct tw_feed_hops {
	/** arbiter -> decoder: an in-sequence packet; returns what
	 *  tw_feed_decode() returns (the arbiter's deliver result). */
	int (*packet)(void *ctx, struct tw_feed *f, const struct mdp3_arb_packet *p);
	/** arbiter -> book: sequence numbers declared lost. */
	void (*loss)(void *ctx, struct tw_feed *f, uint32_t first_seq, uint32_t count,
		     uint64_t now_ns);
	/** decoder -> book: decoded messages of the packet. */
	void (*batch)(void *ctx, struct tw_feed *f, const struct tw_feed_batch *b);
	void *ctx;
};

/** A channel's path. */
struct tw_feed_config {
	struct mdp3_arb_config arb;   /**< the arbiter (lib/mdp3; zeros: its defaults) */
	struct book_feed_config book; /**< the books (lib/book); its handler is the signal */
	struct tw_feed_hops hops;     /**< zeros: every stage calls the next directly */
};

/**
 * The path of one channel. Members are public so a stage's actor reaches
 * its own part without a call; each stage touches only its own members
 * (see the file comment).
 */
struct tw_feed {
	struct mdp3_arb *arb;         /**< arbiter */
	struct mdp3_walker walker;    /**< decoder */
	struct book_feed *book;       /**< book */
	struct book_packet_ctx pc;    /**< book: the open packet */
	struct tw_feed_batch *batch;  /**< decoder: the batch being filled (during a walk) */
	struct tw_feed_hops hops;
	void *user;                   /**< the caller's (tw_chain: its channel) */
};

/**
 * Build a channel's path (arbiter, walker and books are allocated here,
 * nothing after).
 * @return the path, or NULL with errno set (EINVAL: a bad configuration).
 */
struct tw_feed *tw_feed_create(const struct tw_feed_config *config);

/** Free a path (NULL is a no-op). */
void tw_feed_destroy(struct tw_feed *f);

/* -- stages ------------------------------------------------------------------- */

/**
 * Arbiter stage: push one copy of an incremental packet (mdp3_arb_push()).
 * In-sequence packets, and held ones it releases, go on to the decoder
 * before this returns; the bytes are only read during the call.
 * @return an enum mdp3_arb_verdict, or a negative errno.
 */
int tw_feed_arbitrate(struct tw_feed *f, enum mdp3_feed_id side, const uint8_t *data,
		      size_t length, uint64_t rx_ns);

/** Arbiter stage: let time-bounded gaps expire (mdp3_arb_poll()). */
int tw_feed_poll(struct tw_feed *f, uint64_t now_ns);

/**
 * Arbiter stage: end of input; release everything held, declaring the
 * missing numbers lost (mdp3_arb_flush()). Does not publish: the book stage
 * does (tw_feed_book_publish(); tw_feed_finish() does both).
 * @return packets released, or a negative errno.
 */
int tw_feed_flush(struct tw_feed *f, uint64_t now_ns);

/**
 * Decoder stage: walk an in-sequence packet and hand its messages to the
 * book (in batches through hops.batch; else directly). All-or-nothing is
 * the walker's: a malformed packet delivers no message (one batch with n 0
 * and the error), and the book's packet ends with that error.
 * @return the walker's result (>= 0 messages, or -EBADMSG).
 */
int tw_feed_decode(struct tw_feed *f, const struct mdp3_arb_packet *p);

/**
 * Book stage: one batch: begin when it opens the packet, its messages,
 * end when it closes it (what the parts below do).
 */
void tw_feed_book_batch(struct tw_feed *f, const struct tw_feed_batch *b);

/** Book stage: a packet opens (book_feed_packet_begin()). */
void tw_feed_book_begin(struct tw_feed *f, const struct mdp3_arb_packet *p);

/** Book stage: one message of the open packet (book_feed_message(); a
 *  message whose info is NULL was skipped by the walker). */
static inline void
tw_feed_book_message(struct tw_feed *f, const struct mdp3_msg *msg)
{
	book_feed_message(f->book, &f->pc, msg->info != NULL ? msg : NULL);
}

/** Book stage: the open packet closes (book_feed_packet_end()). */
int tw_feed_book_end(struct tw_feed *f, int walk_rc);

/** Book stage: sequence numbers the arbiter declared lost (book_feed_loss()). */
void tw_feed_book_loss(struct tw_feed *f, uint32_t first_seq, uint32_t count,
		       uint64_t now_ns);

/** Book stage: a snapshot or definition packet (book_feed_stream_packet()). */
int tw_feed_book_stream(struct tw_feed *f, enum mdp3_stream stream, enum mdp3_feed_id side,
			const uint8_t *data, size_t length, uint64_t rx_ns);

/** Book stage: publish pending book changes (book_feed_flush()). */
void tw_feed_book_publish(struct tw_feed *f, uint64_t now_ns);

/* -- the whole path, for callers on one thread ---------------------------- */

/**
 * One datagram of any stream: incremental ones to the arbiter, the others
 * to the book. @return as tw_feed_arbitrate() or tw_feed_book_stream();
 * -EINVAL for a bad stream or side.
 */
int tw_feed_packet(struct tw_feed *f, enum mdp3_stream stream, enum mdp3_feed_id side,
		   const uint8_t *data, size_t length, uint64_t rx_ns);

/**
 * tw_feed_packet() for a datagram identified by its destination.
 * @return as tw_feed_packet(); -ENOENT when no route matches.
 */
int tw_feed_datagram(struct tw_feed *f, const struct mdp3_routes *routes, uint32_t dst_ip,
		     uint16_t dst_port, const uint8_t *data, size_t length, uint64_t rx_ns);

/** End of input: tw_feed_flush() then tw_feed_book_publish(). @return as tw_feed_flush(). */
int tw_feed_finish(struct tw_feed *f, uint64_t now_ns);

/**
 * A new sequence (a channel reset of the sequence numbers): the arbiter
 * forgets what it saw and held, the books drop their recovery state
 * (book_feed_sequence_reset()).
 */
int tw_feed_sequence_reset(struct tw_feed *f);

#ifdef __cplusplus
}
#endif

#endif /* TICKWIRE_TW_FEED_H */
