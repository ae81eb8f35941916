/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * State of one tickwire-synth run, shared by the market model
 * (synth_market.c: instruments, books, events -> SBE messages) and the
 * program (tickwire-synth.c: packets, feeds, snapshot loop, manifest, truth).
 *
 * Two copies of every book are kept.  The generator's own book (inst->book)
 * changes as soon as an entry is written, so the next entry of the same event
 * can depend on it.  The truth (inst->truth) changes only when the packet
 * holding the entry is sent, by applying the recorded operations with the same
 * rules a receiver uses: it is what a receiver knows after each MsgSeqNum, and
 * what the snapshot channel and the truth file report.  At the end of the run
 * both must be equal.
 *
 * Single-threaded.
 */
#ifndef SYNTH_GEN_H
#define SYNTH_GEN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "synth_book.h"
#include "synth_feed.h"
#include "synth_mbo.h"
#include "synth_random.h"
#include "synth_sbe.h"

#define SYNTH_MAX_INSTRUMENTS 256
#define SYNTH_MAX_GAPS 16
/** Operations (book entries, trades, status, reset) one packet may carry. */
#define SYNTH_MAX_PACKET_OPS 256
/** Messages one packet may carry (a heartbeat is 10 bytes). */
#define SYNTH_MAX_PACKET_MSGS 160
/** Bytes of the binary packet header: MsgSeqNum u32 + SendingTime u64. */
#define SYNTH_PACKET_HEADER_SIZE 12

struct synth_gap {
	uint32_t first;
	uint32_t count;
};

struct synth_options {
	const char *out_a;
	const char *out_b;
	const char *out_snapshot;
	const char *manifest;
	const char *truth;
	bool truth_every;
	bool stats;
	uint64_t seed;
	unsigned int instruments;
	uint64_t events;
	uint16_t version;
	uint64_t drop[2];         /**< [0] A, [1] B; probabilities Q32.32 */
	uint64_t dup[2];
	uint64_t reorder[2];
	uint32_t reset_at;        /**< 0: no channel reset */
	bool reset_first;         /**< packet 1 is a ChannelReset4 (looped replays) */
	uint64_t mu;              /**< Hawkes, Q32.32 per second */
	uint64_t alpha;
	uint64_t beta;
	/** Further Hawkes kernels (--burst-kernel), Q32.32 per second. */
	unsigned int kernel_count;
	uint64_t kernel_alpha[SYNTH_HAWKES_KERNELS - 1];
	uint64_t kernel_beta[SYNTH_HAWKES_KERNELS - 1];
	uint64_t batch;           /**< chance of one more event per arrival, Q32.32 */
	uint64_t skew_lead_ns;    /**< B's copy this much before A's on average */
	uint64_t skew_tail[2];    /**< [0] A, [1] B: chance the copy is late, Q32.32 */
	uint64_t skew_tail_ns[2]; /**< mean of that exponential delay */
	uint32_t mtu;
	uint64_t coalesce_ns;
	uint64_t skew_ns;
	uint64_t heartbeat_ns;
	uint64_t start_ns;
	uint32_t snapshot_every;
	uint16_t channel;
	bool mbo;                 /**< --mbo: market-by-order entries and snapshots */
	unsigned int gap_count;
	struct synth_gap gaps[SYNTH_MAX_GAPS];
};

/** A product the instruments are drawn from (a contract month is added). */
struct synth_product {
	const char *code;         /**< symbol root, also SecurityGroup and Asset */
	const char *exchange;     /**< SecurityExchange */
	const char *cfi;          /**< CFICode */
	const char *unit;         /**< UnitOfMeasure */
	const char *currency;
	int64_t tick;             /**< MinPriceIncrement, PRICE9 mantissa */
	int64_t ref_px;           /**< starting price, PRICE9 mantissa (on the tick) */
	int64_t display_factor;   /**< Decimal9 mantissa */
	int64_t unit_qty;         /**< UnitOfMeasureQty, Decimal9 mantissa */
	int64_t tick_value;       /**< MinPriceIncrementAmount, PRICE9 mantissa */
	uint8_t depth;            /**< GBX MarketDepth */
	uint8_t market_segment;
	uint8_t underlying_product;
	char match_algorithm;
	uint32_t max_trade_vol;
};

enum synth_op_kind {
	SYNTH_OP_BOOK,            /**< a book entry (outright or implied) */
	SYNTH_OP_TRADE,           /**< a trade summary entry */
	SYNTH_OP_STATUS,          /**< a security status change */
	SYNTH_OP_RESET,           /**< channel reset: every book emptied */
	SYNTH_OP_ORDER,           /**< an order entry (--mbo): book.action/side/px/size */
};

/** What one message does to the truth, applied when its packet is sent. */
struct synth_op {
	uint8_t kind;             /**< enum synth_op_kind */
	uint8_t status;           /**< SYNTH_OP_STATUS */
	uint16_t instrument;      /**< index in gen->inst */
	uint32_t rpt_seq;         /**< BOOK, TRADE */
	uint64_t transact_time;
	struct synth_book_op book;/**< BOOK; TRADE uses px and size */
	uint64_t order_id;        /**< ORDER */
	uint64_t priority;        /**< ORDER */
};

struct synth_instrument {
	const struct synth_product *product;
	char symbol[21];
	uint16_t maturity_year;
	uint8_t maturity_month;
	uint32_t weight;          /**< relative activity */
	int64_t ref_px;           /**< last trade or start price */
	int64_t high_limit;
	int64_t low_limit;
	int64_t max_variation;
	uint32_t trade_entry_id;
	uint64_t next_order_id;
	uint64_t last_update_time;/**< LastUpdateTime of the definition */
	bool touched;             /**< truth changed by the packet being sent */
	struct synth_book book;   /**< generator's view (see above) */
	struct synth_book truth;  /**< receiver's view after the last packet sent */
};

/** A message placed in the packet being filled. */
struct synth_pending {
	uint16_t size;
	uint16_t block_length;
	uint16_t template_id;
	const char *name;
	const char *origin;       /**< "setup", "event", "reset", "rebuild", "heartbeat" */
	int64_t event;            /**< Hawkes event index, -1 otherwise */
	char *fields_json;        /**< manifest text, malloc'd; NULL without --manifest */
};

struct synth_packet {
	uint16_t len;             /**< bytes used, header included */
	uint64_t open_time;       /**< time of its first event */
	uint64_t last_time;       /**< time of its last event */
	unsigned int msg_count;
	unsigned int op_count;
	struct synth_pending msgs[SYNTH_MAX_PACKET_MSGS];
	struct synth_op ops[SYNTH_MAX_PACKET_OPS];
	uint8_t data[SYNTH_FEED_MAX_PAYLOAD];
};

struct synth_counters {
	uint64_t incremental_packets;
	uint64_t snapshot_packets;
	uint64_t messages;
	uint64_t snapshot_loops;
	uint64_t templates[64];
	uint64_t actions[6];      /**< book entries per MDUpdateAction */
	uint64_t implied_entries;
	uint64_t trade_entries;
	uint32_t reset_seq;       /**< MsgSeqNum of the ChannelReset4 packet, 0: none */
};

struct synth_gen {
	const struct synth_options *opt;
	uint16_t max_payload;     /**< UDP payload limit from --mtu */
	struct synth_rng market_rng;
	struct synth_rng timing_rng;
	struct synth_hawkes hawkes;
	struct synth_rng batch_rng;   /**< --event-batch draws only */
	unsigned int instrument_count;
	uint64_t total_weight;
	struct synth_instrument *inst;

	/* message being built and the ops of its entries */
	struct synth_msg *msg;
	unsigned int msg_op_count;
	struct synth_op msg_ops[SYNTH_MAX_ENTRIES * 2];
	uint64_t event_time;
	int64_t event_index;
	const char *origin;

	/* incremental channel */
	struct synth_packet *packet;
	uint32_t next_seq;
	uint64_t last_sending_time;
	bool reset_done;
	struct synth_feed feed[2];

	/* snapshot channel */
	bool has_snapshot;
	struct synth_feed snapshot;
	bool loop_active;
	unsigned int loop_next;
	bool snapshots_enabled;   /**< after the start of day */
	uint32_t snapshot_seq;
	struct synth_msg *snapshot_msg;
	uint8_t snapshot_data[SYNTH_FEED_MAX_PAYLOAD];

	FILE *manifest;
	FILE *truth;
	int error;                /**< first write error (negative errno) */
	const char *error_path;
	struct synth_counters counters;
	struct synth_mbo *mbo;    /**< NULL without --mbo */
};

/* ---- synth_market.c ---- */

/** Build the instrument universe (products x contract months). */
void synth_market_init(struct synth_gen *gen);

/** Start of day: definitions, security status, an initial book per instrument. */
int synth_market_setup(struct synth_gen *gen);

/** One random market event (Hawkes arrival) at gen->event_time. */
int synth_market_event(struct synth_gen *gen);

/** Channel reset: ChannelReset4, books emptied, then rebuilt from new entries. */
int synth_market_reset(struct synth_gen *gen);

/** The ChannelReset4 alone in a packet of its own, at gen->event_time. */
int synth_market_reset_message(struct synth_gen *gen);

/** Fill msg with the SnapshotFullRefresh52 of instrument i (from its truth). */
int synth_market_snapshot(struct synth_gen *gen, struct synth_msg *msg, unsigned int i,
		uint32_t last_seq, uint32_t reports);

/* ---- synth_mbo.c (only with --mbo) ---- */

/**
 * Apply a price-level entry of instrument i to the order model before it is
 * written: plans its order entries; may set bop->size and bop->orders (a deep
 * level coming into view, a fill, the order bound).
 * @return 0; -EPROTO if the entry does not fit the model; -ENOSPC.
 */
int synth_mbo_plan(struct synth_gen *gen, unsigned int i, struct synth_book_op *bop);

/** Write the planned order entries after level entry `reference` (1-based) of
 * the Book46 being built; deep ones and those that do not fit wait for 47. */
int synth_mbo_write(struct synth_gen *gen, unsigned int reference);

/** Send the waiting order entries as 47 messages; the last one carries mei. */
int synth_mbo_flush(struct synth_gen *gen, unsigned int match_event_indicator);

/** Now and then a change of the deep book (47 alone, its own event). */
int synth_mbo_deep_event(struct synth_gen *gen);

/** Price of level at (0-based, deep levels included) of the order model, or none. */
int64_t synth_mbo_level_px(const struct synth_gen *gen, unsigned int i, unsigned int side,
		unsigned int at, int64_t none);

/**
 * The market takes one order of visible level at (0-based) of instrument i,
 * side: cancelled by the next outright entry of that side (a Delete of the
 * level if it was its only order, else a Change less its quantity), or, with
 * move, held by it and placed by the entry after it (a New of one order or a
 * Change plus its quantity, at another price): one Update, a price change.
 * @return the order's quantity; 0 if the level has no order (nothing taken).
 */
int32_t synth_mbo_take(struct synth_gen *gen, unsigned int i, unsigned int side,
		unsigned int at, bool move);

/** Apply an SYNTH_OP_ORDER to a book (the truth). @return 0 or -EPROTO / -ENOSPC. */
int synth_mbo_apply(struct synth_order_book *book, const struct synth_op *op);

void synth_mbo_clear(struct synth_order_book *book);

bool synth_mbo_equal(const struct synth_order_book *a, const struct synth_order_book *b);

/** Fill msg with chunk (1-based) of the SnapshotFullRefreshOrderBook53 of
 * instrument i (from its truth); *chunks: how many there are. */
int synth_mbo_snapshot(struct synth_gen *gen, struct synth_msg *msg, unsigned int i,
		uint32_t last_seq, uint32_t reports, uint32_t chunk, uint32_t *chunks);

/* ---- tickwire-synth.c ---- */

/**
 * Start an event at time_ns: may send the packet being filled (coalescing
 * window), heartbeats, or the channel reset.
 */
int synth_gen_begin_event(struct synth_gen *gen, uint64_t time_ns, const char *origin,
		int64_t index);

/** Append gen->msg with gen->msg_ops to the packet being filled. */
int synth_gen_emit(struct synth_gen *gen);

/** Send the packet being filled now (no-op when empty). */
int synth_gen_flush(struct synth_gen *gen);

#endif /* SYNTH_GEN_H */
