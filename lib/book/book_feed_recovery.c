/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Recovery: the buffer of incremental packets kept while a book is stale,
 * its replay for one instrument, market-by-price snapshots (38, 52, 69 and
 * the conflated-TCP 61, 68) and the order-book snapshot fallback (44, 53).
 *
 * While an instrument is stale, every incremental packet applied is copied
 * into a ring of recovery_packets slots (the oldest overwritten, counted).
 * A snapshot replaces the instrument's books and RptSeq, then replays the
 * ring after its LastMsgSeqNumProcessed for that instrument only, through a
 * second walker, so the RptSeq gate decides what applies.  A replay walks
 * at most recovery_packets packets.
 */
#include <errno.h>
#include <string.h>

#include "book_feed_pvt.h"

/* ------------------------------------------------------------------------ */
/* Recovery buffer and replay                                                 */
/* ------------------------------------------------------------------------ */

void
book__recovery_append(struct book_feed *f, const struct book_packet_ctx *p)
{
	struct book__recovery_slot *s;
	uint32_t i;

	if (p->length > f->rec_stride) {
		f->counters.recovery_oversize++;
		f->any_unbuffered = true;
		f->last_unbuffered_seq = p->seq;
		return;
	}
	if (f->rec_count == f->rec_cap) {
		f->rec_head = f->rec_head + 1 == f->rec_cap ? 0 : f->rec_head + 1;
		f->rec_count--;
		f->counters.recovery_overflows++;
	}
	i = f->rec_head + f->rec_count;
	if (i >= f->rec_cap)
		i -= f->rec_cap;
	s = &f->rec[i];
	s->seq = p->seq;
	s->length = p->length;
	s->rx_ns = p->rx_ns;
	s->feed = p->feed;
	memcpy(f->rec_data + (size_t)i * f->rec_stride, p->data, p->length);
	f->rec_count++;
	f->counters.recovery_buffered++;
}

/*
 * Replay the buffered packets after last_seq for one instrument, through the
 * replay walker (book_feed.c's dispatch, in replay mode): the RptSeq gate
 * decides what applies, so nothing applied live is applied twice.
 */
void
book__replay(struct book_feed *f, int32_t sid, uint32_t last_seq, bool mbo)
{
	struct book__walk_ctx *c = &f->replay;
	struct book_instrument *in;
	uint32_t k, i;

	c->replay_sid = sid;
	c->replay_mbo = mbo;
	for (k = 0; k < f->rec_count; k++) {
		i = f->rec_head + k;
		if (i >= f->rec_cap)
			i -= f->rec_cap;
		if ((int32_t)(f->rec[i].seq - last_seq) <= 0)
			continue;
		c->seq = f->rec[i].seq;
		c->rx_ns = f->rec[i].rx_ns;
		c->feed_id = f->rec[i].feed;
		c->transact_time = 0;
		mdp3_walk_packet(&f->replay_walker, f->rec_data + (size_t)i * f->rec_stride,
				f->rec[i].length);
		f->counters.replayed_packets++;
		in = book__lookup(f, sid);
		if (in == NULL)
			break;
		if (mbo ? in->mbo >= BOOK__MBO_REFUSED ||
				f->mbo_books[in->mbo].state != BOOK_MBO_VALID :
				in->state != BOOK_STATE_OK)
			break;
	}
	c->replay_mbo = false;
	in = book__lookup(f, sid);
	if (in != NULL)
		book__flush_events(c, in);
}

/* ------------------------------------------------------------------------ */
/* Snapshots                                                                  */
/* ------------------------------------------------------------------------ */

/*
 * The instrument a MBP snapshot (RptSeq rpt, as of incremental packet
 * last_seq) should replace, or NULL when it brings nothing new.
 */
static struct book_instrument *
snapshot_target(const struct book__walk_ctx *c, int32_t sid, uint32_t rpt)
{
	struct book_feed *f = c->feed;
	struct book_instrument *in = book__lookup(f, sid);

	if (in == NULL)
		return book__create(f, sid, true);
	if ((in->flags & BOOK_INSTRUMENT_RPT_KNOWN) && !(in->flags & BOOK_INSTRUMENT_NEVER_SYNCED)
			&& (int32_t)(rpt - in->rpt_seq) <= 0) {
		f->counters.snapshots_ignored++;
		return NULL;
	}
	return in;
}

/* One snapshot entry into the books being rebuilt. */
static void
snapshot_entry(const struct book__walk_ctx *c, struct book_instrument *in, char type, int level_rc,
		int level, int px_rc, const struct mdp3_decimal *px, int64_t qty, int32_t orders)
{
	struct book_feed *f = c->feed;
	struct book_level v, *levels;
	unsigned int depth;

	switch (type) {
	case MDP3_MD_ENTRY_TYPE_BID:
		levels = in->bid;
		depth = in->depth;
		break;
	case MDP3_MD_ENTRY_TYPE_OFFER:
		levels = in->ask;
		depth = in->depth;
		break;
	case MDP3_MD_ENTRY_TYPE_IMPLIED_BID:
		levels = in->implied_bid;
		depth = in->implied_depth;
		break;
	case MDP3_MD_ENTRY_TYPE_IMPLIED_OFFER:
		levels = in->implied_ask;
		depth = in->implied_depth;
		break;
	case MDP3_MD_ENTRY_TYPE_TRADE:
		if (px_rc == 0 && book__price_normalize(px->mantissa, px->exponent,
					in->price_exponent, &in->last_trade.price) == 0) {
			in->last_trade.qty = qty;
			in->last_trade.orders = orders;
			in->last_trade.transact_time = c->transact_time;
		}
		return;
	default:
		return; /* statistics, market best: not kept */
	}
	if (level_rc != 0 || level < 1 || (unsigned int)level > depth) {
		f->counters.level_out_of_range++;
		return;
	}
	if (!book__entry_price(f, px_rc, px, in->price_exponent, &v.price))
		return;
	v.qty = qty;
	v.orders = orders;
	v.reserved = 0;
	book__level_set(&levels[level - 1], &v);
}

/* After the entries: the instrument is valid at rpt; replay what followed. */
static void
snapshot_done(const struct book__walk_ctx *c, struct book_instrument *in, uint32_t rpt,
		uint32_t last_seq, bool rpt_valid, bool replay_after, int status_rc,
		uint8_t status)
{
	struct book_feed *f = c->feed;
	bool was_stale = in->state == BOOK_STATE_STALE;
	int32_t sid = in->security_id;

	book__become_valid(c->feed, in);
	in->rpt_seq = rpt;
	if (rpt_valid)
		in->flags |= BOOK_INSTRUMENT_RPT_KNOWN;
	else
		in->flags &= (uint8_t)~BOOK_INSTRUMENT_RPT_KNOWN;
	in->last_msg_seq = last_seq;
	in->last_transact_time = c->transact_time;
	if (status_rc == 0)
		in->trading_status = status;
	in->dirty &= (uint8_t)~BOOK__DIRTY_CHANGES;
	in->flags |= BOOK_INSTRUMENT_COMPLETE;
	if (f->mbo_on)
		book__mbo_mbp_snapshot(f, in, last_seq);
	f->counters.snapshots++;
	if (was_stale)
		f->counters.recoveries++;
	book__publish(c, in, BOOK_EVENT_SNAPSHOT | BOOK_EVENT_BOOK |
			(was_stale ? BOOK_EVENT_RECOVERED : 0));
	if (replay_after && f->rec_count > 0)
		book__replay(f, sid, last_seq, false);
	if (!book__buffering(f))
		book__recovery_clear(f);
}

/* The entries of a MBP snapshot message (prefix P) into in's emptied books. */
#define SNAPSHOT_ENTRIES(P, SZ, LV, c, in, msg)                                    \
	do {                                                                       \
		struct mdp3_decimal px;                                            \
		struct mdp3_group g;                                               \
		int px_rc, level_rc;                                               \
		int32_t orders;                                                    \
		char type;                                                         \
		LV level;                                                          \
		SZ size;                                                           \
                                                                                   \
		book_instrument_clear(in);                                         \
		if (P##no_md_entries(msg, &g) != 0)                                \
			break;                                                     \
		while (mdp3_group_next(&g)) {                                      \
			P##no_md_entries_md_entry_type(&g, &type);                 \
			level_rc = P##no_md_entries_md_price_level(&g, &level);    \
			px_rc = P##no_md_entries_md_entry_px(&g, &px);             \
			if (P##no_md_entries_md_entry_size(&g, &size) != 0)        \
				size = 0;                                          \
			if (P##no_md_entries_number_of_orders(&g, &orders) != 0)   \
				orders = 0;                                        \
			snapshot_entry(c, in, type, level_rc, level, px_rc, &px,   \
					book__clamp_u64((uint64_t)size), orders);  \
		}                                                                  \
	} while (0)

/* SnapshotFullRefresh 38 (PRICENULL), 52 (PRICENULL9), 69 (UInt64 sizes). */
#define SNAPSHOT_HANDLER(NAME, P, SZ, LV)                                          \
static void                                                                        \
NAME(struct book__walk_ctx *c, const struct mdp3_msg *msg)                 \
{                                                                                  \
	struct book_instrument *in;                                                \
	uint32_t rpt, last_seq;                                                    \
	uint8_t status;                                                            \
	int status_rc;                                                             \
	int32_t sid;                                                               \
                                                                                   \
	if (c->replay)                                                             \
		return;                                                            \
	P##security_id(msg, &sid);                                                 \
	P##rpt_seq(msg, &rpt);                                                     \
	P##last_msg_seq_num_processed(msg, &last_seq);                             \
	P##transact_time(msg, &c->transact_time);                                  \
	status_rc = P##md_security_trading_status(msg, &status);                   \
	in = snapshot_target(c, sid, rpt);                                         \
	if (in == NULL)                                                            \
		return;                                                            \
	SNAPSHOT_ENTRIES(P, SZ, LV, c, in, msg);                                   \
	snapshot_done(c, in, rpt, last_seq, true, true, status_rc, status);        \
}

SNAPSHOT_HANDLER(on_snapshot38, mdp3_snapshot_full_refresh38_, int32_t, int8_t)
SNAPSHOT_HANDLER(on_snapshot52, mdp3_snapshot_full_refresh52_, int32_t, int8_t)
SNAPSHOT_HANDLER(on_snapshot69, mdp3_snapshot_full_refresh_long_qty69_, uint64_t, uint8_t)

/* Conflated-TCP snapshots 61 (Int32 sizes) and 68 (UInt64): no RptSeq. */
#define TCP_SNAPSHOT_HANDLER(NAME, P, SZ, LV)                                      \
static void                                                                        \
NAME(struct book__walk_ctx *c, const struct mdp3_msg *msg)                 \
{                                                                                  \
	struct book_instrument *in;                                                \
	int32_t sid;                                                               \
                                                                                   \
	if (c->replay)                                                             \
		return;                                                            \
	P##security_id(msg, &sid);                                                 \
	P##transact_time(msg, &c->transact_time);                                  \
	in = book__lookup(c->feed, sid);                                           \
	if (in == NULL && (in = book__create(c->feed, sid, true)) == NULL)         \
		return;                                                            \
	SNAPSHOT_ENTRIES(P, SZ, LV, c, in, msg);                                   \
	snapshot_done(c, in, 0, c->seq, false, false, -ENOENT, 0);                 \
}

TCP_SNAPSHOT_HANDLER(on_tcp_snapshot61, mdp3_snapshot_full_refresh_tcp61_, int32_t, int8_t)
TCP_SNAPSHOT_HANDLER(on_tcp_snapshot68, mdp3_snapshot_full_refresh_tcp_long_qty68_, uint64_t,
		uint8_t)

/*
 * Order-book (MBO) snapshots 44 and 53 as a fallback recovery of the
 * outright market-by-price book: orders are aggregated into the best
 * `depth` price levels per side (a price dropped as worse than a full set
 * never comes back, since the kept set only improves), over every chunk of
 * the instrument.  They carry no RptSeq, so they are applied only when
 * every incremental packet after LastMsgSeqNumProcessed is in the recovery
 * buffer (no loss, overflow or oversize packet since), the instrument is
 * stale or unknown, and it has no implied book (an MBO snapshot cannot
 * restore one).  The replay then takes the RptSeq of the instrument's first
 * replayed entry as its baseline.
 */
static void
mbo_add(struct book_level *levels, uint8_t *n, unsigned int depth, bool bid, int64_t price,
		int64_t qty)
{
	unsigned int i, j;

	for (i = 0; i < *n; i++) {
		if (levels[i].price == price) {
			levels[i].qty += qty;
			levels[i].orders++;
			return;
		}
		if (bid ? price > levels[i].price : price < levels[i].price)
			break;
	}
	if (i >= depth)
		return;
	j = *n < depth ? *n : depth - 1;
	for (; j > i; j--)
		levels[j] = levels[j - 1];
	levels[i].price = price;
	levels[i].qty = qty;
	levels[i].orders = 1;
	levels[i].reserved = 0;
	if (*n < depth)
		(*n)++;
}

/* Whether every incremental packet after last_seq is in the buffer. */
bool
book__buffer_complete_after(const struct book_feed *f, uint32_t last_seq)
{
	if (f->any_lost && (int32_t)(f->last_lost_seq - last_seq) > 0)
		return false;
	if (f->any_unbuffered && (int32_t)(f->last_unbuffered_seq - last_seq) > 0)
		return false;
	if (f->rec_count > 0)
		return (int32_t)(f->rec[f->rec_head].seq - (last_seq + 1)) <= 0;
	return !f->any_applied || (int32_t)(f->last_applied_seq - last_seq) <= 0;
}

static void
mbo_apply(const struct book__walk_ctx *c)
{
	struct book_feed *f = c->feed;
	struct book__mbo_scratch *m = &f->mbo;
	struct book_instrument *in = book__lookup(f, m->sid);
	unsigned int i;

	if ((in != NULL && in->state == BOOK_STATE_OK) ||
			(in != NULL ? in->implied_depth : f->config.default_implied_depth) > 0 ||
			!book__buffer_complete_after(f, m->last_seq)) {
		f->counters.snapshots_ignored++;
		return;
	}
	if (in == NULL && (in = book__create(f, m->sid, true)) == NULL)
		return;
	book_instrument_clear(in);
	for (i = 0; i < m->nbid && i < in->depth; i++)
		book__level_set(&in->bid[i], &m->bid[i]);
	for (i = 0; i < m->nask && i < in->depth; i++)
		book__level_set(&in->ask[i], &m->ask[i]);
	snapshot_done(c, in, 0, m->last_seq, false, true, -ENOENT, 0);
}

#define MBO_SNAPSHOT_HANDLER(NAME, P)                                              \
static void                                                                        \
NAME(struct book__walk_ctx *c, const struct mdp3_msg *msg)                 \
{                                                                                  \
	struct book__mbo_scratch *m = &c->feed->mbo;                               \
	const struct book_instrument *in;                                          \
	uint32_t chunk, chunks, last_seq;                                          \
	struct mdp3_decimal px;                                                    \
	struct mdp3_group g;                                                       \
	int32_t sid, qty;                                                          \
	int64_t price;                                                             \
	char type;                                                                 \
                                                                                   \
	if (c->replay)                                                             \
		return;                                                            \
	P##security_id(msg, &sid);                                                 \
	P##no_chunks(msg, &chunks);                                                \
	P##current_chunk(msg, &chunk);                                             \
	P##last_msg_seq_num_processed(msg, &last_seq);                             \
	P##transact_time(msg, &c->transact_time);                                  \
	if (chunk == 1) {                                                          \
		in = book__lookup(c->feed, sid);                                   \
		m->sid = sid;                                                      \
		m->chunks = chunks;                                                \
		m->last_seq = last_seq;                                            \
		m->depth = in != NULL ? in->depth : c->feed->config.default_depth; \
		m->nbid = m->nask = 0;                                             \
		m->next_chunk = 1;                                                 \
	}                                                                          \
	if (m->next_chunk == 0 || chunk != m->next_chunk || sid != m->sid ||       \
			chunks != m->chunks || last_seq != m->last_seq) {          \
		m->next_chunk = 0; /* a chunk went missing: wait for the next loop */ \
		return;                                                            \
	}                                                                          \
	if (P##no_md_entries(msg, &g) == 0) {                                      \
		while (mdp3_group_next(&g)) {                                      \
			P##no_md_entries_md_entry_type(&g, &type);                 \
			if (P##no_md_entries_md_entry_px(&g, &px) != 0 ||          \
					P##no_md_entries_md_display_qty(&g, &qty) != 0 || \
					book__price_normalize(px.mantissa, px.exponent, \
						c->feed->config.price_exponent,    \
						&price) < 0)                       \
				continue;                                          \
			if (type == MDP3_MD_ENTRY_TYPE_BOOK_BID)                   \
				mbo_add(m->bid, &m->nbid, m->depth, true, price, qty); \
			else if (type == MDP3_MD_ENTRY_TYPE_BOOK_OFFER)            \
				mbo_add(m->ask, &m->nask, m->depth, false, price, qty); \
		}                                                                  \
	}                                                                          \
	if (chunk < chunks) {                                                      \
		m->next_chunk++;                                                   \
		return;                                                            \
	}                                                                          \
	m->next_chunk = 0;                                                         \
	mbo_apply(c);                                                              \
}

MBO_SNAPSHOT_HANDLER(on_mbo_snapshot44, mdp3_snapshot_full_refresh_order_book44_)
MBO_SNAPSHOT_HANDLER(on_mbo_snapshot53, mdp3_snapshot_full_refresh_order_book53_)

void
book__on_snapshot(struct book__walk_ctx *c, const struct mdp3_msg *msg)
{
	switch (msg->template_id) {
	case MDP3_TEMPLATE_SNAPSHOT_FULL_REFRESH38:
		on_snapshot38(c, msg);
		break;
	case MDP3_TEMPLATE_SNAPSHOT_FULL_REFRESH52:
		on_snapshot52(c, msg);
		break;
	case MDP3_TEMPLATE_SNAPSHOT_FULL_REFRESH_LONG_QTY69:
		on_snapshot69(c, msg);
		break;
	case MDP3_TEMPLATE_SNAPSHOT_FULL_REFRESH_ORDER_BOOK44:
		on_mbo_snapshot44(c, msg);
		break;
	case MDP3_TEMPLATE_SNAPSHOT_FULL_REFRESH_ORDER_BOOK53:
		on_mbo_snapshot53(c, msg);
		if (c->feed->mbo_on)
			book__mbo_on_snapshot53(c, msg);
		break;
	case MDP3_TEMPLATE_SNAPSHOT_FULL_REFRESH_TCP61:
		on_tcp_snapshot61(c, msg);
		break;
	case MDP3_TEMPLATE_SNAPSHOT_FULL_REFRESH_TCP_LONG_QTY68:
		on_tcp_snapshot68(c, msg);
		break;
	default:
		break;
	}
}
