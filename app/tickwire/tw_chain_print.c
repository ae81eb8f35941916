/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * Counters of the chain and its final report (tw_chain_stats(),
 * tw_chain_print()). See tw_chain.h.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "tw_chain_pvt.h"

void
tw_chain_stats(const struct tw_chain *c, struct tw_chain_stats *st)
{
	const uint64_t *src = (const uint64_t *)&c->stats;
	uint64_t *dst = (uint64_t *)st;

	for (size_t i = 0; i < sizeof(*st) / sizeof(uint64_t); i++)
		dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
}

const char *const tw_exec_kind_names[TW_EXEC_KIND_COUNT_] = {
	"new", "fill", "reject", "canceled", "cancel_reject",
};

const char *
tw_state_why_name(uint32_t why)
{
	static const char *const names[TW_STATE_WHY_COUNT_] = {
		"none", "rpt_seq_gap", "loss", "reset", "silent", "recovered", "alive",
	};

	return why < TW_STATE_WHY_COUNT_ ? names[why] : "?";
}

static int
cmp_instrument(const void *a, const void *b)
{
	const struct book_instrument *x = *(const struct book_instrument *const *)a;
	const struct book_instrument *y = *(const struct book_instrument *const *)b;

	return (x->security_id > y->security_id) - (x->security_id < y->security_id);
}

static void
print_level(FILE *out, const struct book_level *l)
{
	if (l->price == BOOK_PRICE_NONE)
		fprintf(out, " %24s", "-");
	else
		fprintf(out, " %6" PRId64 " @ %-15" PRId64, l->qty, l->price);
}

/* The counters of every channel, added. */
static void
sum_counters(const struct tw_chain *c, struct book_feed_counters *fc,
	     struct mdp3_arb_counters *ac, uint64_t *hash, uint64_t *instruments)
{
	memset(fc, 0, sizeof(*fc));
	memset(ac, 0, sizeof(*ac));
	*hash = 0;
	*instruments = 0;
	for (uint32_t i = 0; i < c->n_channels; i++) {
		const uint64_t *f = (const uint64_t *)book_feed_counters(c->path[i]->book);
		const uint64_t *a = (const uint64_t *)mdp3_arb_counters(c->path[i]->arb);

		for (size_t w = 0; w < sizeof(*fc) / sizeof(uint64_t); w++)
			((uint64_t *)fc)[w] += f[w];
		for (size_t w = 0; w < sizeof(*ac) / sizeof(uint64_t); w++)
			((uint64_t *)ac)[w] += a[w];
		*hash += book_feed_hash(c->path[i]->book);
		*instruments += book_feed_instrument_count(c->path[i]->book);
	}
}

/* Market by order, when a channel keeps MBO books (book.mbo): the counters
 * of every channel added, the hash of the MBO books and the first
 * differences the MBO/MBP consistency check found. */
static void
print_mbo(const struct tw_chain *c, const struct book_feed_counters *fc, FILE *out)
{
	struct book_mbo_diff d[4];
	uint64_t hash = 0;
	bool any = false;

	for (uint32_t i = 0; i < c->n_channels; i++) {
		any |= c->opts.mbo[i];
		hash += book_feed_mbo_hash(c->path[i]->book);
	}
	if (!any)
		return;
	fprintf(out, "mbo.entries_47 %" PRIu64 "\n", fc->mbo_entries_47);
	fprintf(out, "mbo.entries_46 %" PRIu64 "\n", fc->mbo_entries_46);
	fprintf(out, "mbo.new %" PRIu64 "\n", fc->mbo_new);
	fprintf(out, "mbo.changes %" PRIu64 "\n", fc->mbo_changes);
	fprintf(out, "mbo.deletes %" PRIu64 "\n", fc->mbo_deletes);
	fprintf(out, "mbo.unknown_orders %" PRIu64 "\n", fc->mbo_unknown_orders);
	fprintf(out, "mbo.bad_entries %" PRIu64 "\n", fc->mbo_bad_entries);
	fprintf(out, "mbo.not_applied %" PRIu64 "\n", fc->mbo_not_applied);
	fprintf(out, "mbo.replayed %" PRIu64 "\n", fc->mbo_replayed);
	fprintf(out, "mbo.books_refused %" PRIu64 "\n", fc->mbo_books_refused);
	fprintf(out, "mbo.order_overflows %" PRIu64 "\n", fc->mbo_order_overflows);
	fprintf(out, "mbo.level_overflows %" PRIu64 "\n", fc->mbo_level_overflows);
	fprintf(out, "mbo.stale_marked %" PRIu64 "\n", fc->mbo_stale_marked);
	fprintf(out, "mbo.stale_books %" PRIu64 "\n", fc->mbo_stale_books);
	fprintf(out, "mbo.snapshots %" PRIu64 "\n", fc->mbo_snapshots);
	fprintf(out, "mbo.snapshots_ignored %" PRIu64 "\n", fc->mbo_snapshots_ignored);
	fprintf(out, "mbo.resets %" PRIu64 "\n", fc->mbo_resets);
	fprintf(out, "mbo.table_grows %" PRIu64 "\n", fc->mbo_table_grows);
	fprintf(out, "mbo.checks %" PRIu64 "\n", fc->mbo_checks);
	fprintf(out, "mbo.mismatches %" PRIu64 "\n", fc->mbo_mismatches);
	fprintf(out, "mbo.level_diffs %" PRIu64 "\n", fc->mbo_level_diffs);
	fprintf(out, "mbo.checks_ahead %" PRIu64 "\n", fc->mbo_checks_ahead);
	fprintf(out, "mbo.hash 0x%016" PRIx64 "\n", hash);
	for (uint32_t i = 0; i < c->n_channels; i++) {
		int n = book_feed_mbo_diffs(c->path[i]->book, d, 4);

		for (int k = 0; k < n; k++)
			fprintf(out, "mbo.diff channel=%u security_id=%" PRId32 " seq=%" PRIu32
				" %s level %u: mbo %" PRId64 "@%" PRId64 " x%d, mbp %" PRId64
				"@%" PRId64 " x%d\n", c->channel_stats[i].channel,
				d[k].security_id, d[k].msg_seq_num,
				d[k].side == BOOK_BID ? "bid" : "ask", d[k].level, d[k].mbo.qty,
				d[k].mbo.price, d[k].mbo.orders, d[k].mbp.qty, d[k].mbp.price,
				d[k].mbp.orders);
	}
}

static void
print_channels(const struct tw_chain *c, FILE *out)
{
	for (uint32_t i = 0; i < c->n_channels; i++) {
		const struct book_feed *feed = c->path[i]->book;
		const struct book_feed_counters *fc = book_feed_counters(feed);
		const struct mdp3_arb_counters *ac = mdp3_arb_counters(c->path[i]->arb);
		const char *p = "channel";
		const uint32_t id = c->channel_stats[i].channel;

		fprintf(out, "%s.%u.rx_packets %" PRIu64 "\n", p, id,
			__atomic_load_n(&c->channel_stats[i].rx_packets, __ATOMIC_RELAXED));
		fprintf(out, "%s.%u.arb.packets_a %" PRIu64 "\n", p, id, ac->packets[0]);
		fprintf(out, "%s.%u.arb.packets_b %" PRIu64 "\n", p, id, ac->packets[1]);
		fprintf(out, "%s.%u.arb.duplicates %" PRIu64 "\n", p, id,
			ac->duplicates[0] + ac->duplicates[1]);
		fprintf(out, "%s.%u.arb.gaps %" PRIu64 "\n", p, id, ac->gaps);
		fprintf(out, "%s.%u.arb.lost_packets %" PRIu64 "\n", p, id, ac->lost_packets);
		fprintf(out, "%s.%u.book.packets_applied %" PRIu64 "\n", p, id,
			fc->packets_applied);
		fprintf(out, "%s.%u.book.messages %" PRIu64 "\n", p, id, fc->messages);
		fprintf(out, "%s.%u.book.rpt_seq_gaps %" PRIu64 "\n", p, id, fc->rpt_seq_gaps);
		fprintf(out, "%s.%u.book.stale_books %" PRIu64 "\n", p, id, fc->stale_books);
		fprintf(out, "%s.%u.book.recoveries %" PRIu64 "\n", p, id, fc->recoveries);
		fprintf(out, "%s.%u.book.snapshots %" PRIu64 "\n", p, id, fc->snapshots);
		fprintf(out, "%s.%u.book.instruments %" PRIu32 "\n", p, id,
			book_feed_instrument_count(feed));
		fprintf(out, "%s.%u.book.hash 0x%016" PRIx64 "\n", p, id, book_feed_hash(feed));
		fprintf(out, "%s.%u.silences %" PRIu64 "\n", p, id,
			__atomic_load_n(&c->channel_stats[i].silences, __ATOMIC_RELAXED));
	}
}

void
tw_chain_print(const struct tw_chain *c, FILE *out, uint32_t max_books)
{
	struct book_feed_counters fcs;
	struct mdp3_arb_counters acs;
	const struct book_feed_counters *fc = &fcs;
	const struct mdp3_arb_counters *ac = &acs;
	struct tw_chain_stats st;
	uint64_t hash, instruments, cap = 0, n = 0;
	const struct book_instrument **list;

	sum_counters(c, &fcs, &acs, &hash, &instruments);
	tw_chain_stats(c, &st);
	fprintf(out, "== counters\n");
	fprintf(out, "chain.rx_packets %" PRIu64 "\n", st.rx_packets);
	fprintf(out, "chain.rx_bytes %" PRIu64 "\n", st.rx_bytes);
	fprintf(out, "chain.delivered %" PRIu64 "\n", st.verdict[0]);
	fprintf(out, "chain.held %" PRIu64 "\n", st.verdict[1]);
	fprintf(out, "chain.duplicates %" PRIu64 "\n", st.verdict[2]);
	fprintf(out, "chain.rejected %" PRIu64 "\n", st.verdict[3]);
	fprintf(out, "chain.dropped %" PRIu64 "\n", st.verdict[4]);
	fprintf(out, "chain.feed_errors %" PRIu64 "\n", st.feed_errors);
	fprintf(out, "chain.unknown_channel %" PRIu64 "\n", st.unknown_channel);
	fprintf(out, "chain.snapshots_skipped %" PRIu64 "\n", st.snapshots_skipped);
	fprintf(out, "chain.decoded %" PRIu64 "\n", st.decoded);
	fprintf(out, "chain.malformed %" PRIu64 "\n", st.malformed);
	fprintf(out, "chain.events %" PRIu64 "\n", st.events);
	fprintf(out, "chain.tops %" PRIu64 "\n", st.tops);
	fprintf(out, "chain.signal_errors %" PRIu64 "\n", st.signal_errors);
	fprintf(out, "chain.orders_written %" PRIu64 "\n", st.orders_written);
	fprintf(out, "stale.state_events %" PRIu64 "\n", st.state_events);
	fprintf(out, "stale.halts %" PRIu64 "\n", st.halts);
	fprintf(out, "stale.resumes %" PRIu64 "\n", st.resumes);
	fprintf(out, "stale.halted %" PRIu64 "\n", st.halted);
	fprintf(out, "stale.cancel_requests %" PRIu64 "\n", st.cancel_requests);
	fprintf(out, "stale.cancel_failed %" PRIu64 "\n", st.cancel_failed);
	fprintf(out, "stale.alarms %" PRIu64 "\n", st.alarms);
	fprintf(out, "stale.alarm_active %" PRIu64 "\n", st.alarm_active);
	fprintf(out, "stale.silences %" PRIu64 "\n", st.silences);
	fprintf(out, "stale.halt_table_full %" PRIu64 "\n", st.halt_table_full);
	fprintf(out, "arb.packets_a %" PRIu64 "\n", ac->packets[0]);
	fprintf(out, "arb.packets_b %" PRIu64 "\n", ac->packets[1]);
	fprintf(out, "arb.accepted %" PRIu64 "\n", ac->accepted[0] + ac->accepted[1]);
	fprintf(out, "arb.duplicates %" PRIu64 "\n", ac->duplicates[0] + ac->duplicates[1]);
	fprintf(out, "arb.gaps %" PRIu64 "\n", ac->gaps);
	fprintf(out, "arb.lost_packets %" PRIu64 "\n", ac->lost_packets);
	fprintf(out, "book.packets_applied %" PRIu64 "\n", fc->packets_applied);
	fprintf(out, "book.malformed %" PRIu64 "\n", fc->malformed);
	fprintf(out, "book.messages %" PRIu64 "\n", fc->messages);
	fprintf(out, "book.messages_ignored %" PRIu64 "\n", fc->messages_ignored);
	fprintf(out, "book.messages_unknown %" PRIu64 "\n", fc->messages_unknown);
	fprintf(out, "book.entries %" PRIu64 "\n", fc->entries);
	fprintf(out, "book.book_updates %" PRIu64 "\n", fc->book_updates);
	fprintf(out, "book.trades %" PRIu64 "\n", fc->trades);
	fprintf(out, "book.rpt_seq_gaps %" PRIu64 "\n", fc->rpt_seq_gaps);
	fprintf(out, "book.stale_books %" PRIu64 "\n", fc->stale_books);
	fprintf(out, "book.stale_entries %" PRIu64 "\n", fc->stale_entries);
	fprintf(out, "book.stale_marked_on_loss %" PRIu64 "\n", fc->stale_marked_on_loss);
	fprintf(out, "book.recoveries %" PRIu64 "\n", fc->recoveries);
	fprintf(out, "book.snapshots %" PRIu64 "\n", fc->snapshots);
	fprintf(out, "book.declared_losses %" PRIu64 "\n", fc->declared_losses);
	fprintf(out, "book.events %" PRIu64 "\n", fc->events);
	fprintf(out, "book.instruments %" PRIu64 "\n", instruments);
	fprintf(out, "book.hash 0x%016" PRIx64 "\n", hash);
	print_mbo(c, fc, out);
	fprintf(out, "queue.joins %" PRIu64 "\n", st.queue_joins);
	fprintf(out, "queue.joins_unknown %" PRIu64 "\n", st.queue_joins_unknown);
	fprintf(out, "queue.join_refused %" PRIu64 "\n", st.queue_join_refused);
	print_channels(c, out);
	if (c->strategy != NULL) {
		struct tw_strategy_stats ss;

		tw_strategy_stats(c->strategy, &ss);
		fprintf(out, "strategy.events %" PRIu64 "\n", ss.events);
		fprintf(out, "strategy.considered %" PRIu64 "\n", ss.considered);
		fprintf(out, "strategy.stale_events %" PRIu64 "\n", ss.states[0]);
		fprintf(out, "strategy.valid_events %" PRIu64 "\n", ss.states[1]);
		fprintf(out, "strategy.orders %" PRIu64 "\n", ss.orders);
		fprintf(out, "strategy.missed %" PRIu64 "\n", ss.missed);
		fprintf(out, "strategy.capped %" PRIu64 "\n", ss.capped);
		fprintf(out, "strategy.replies_sent %" PRIu64 "\n", ss.replies_sent);
		fprintf(out, "strategy.replies_refused %" PRIu64 "\n", ss.replies_refused);
		for (unsigned int i = 0; i < TW_ORDER_REASON_MAX_; i++)
			if (ss.refused[i] != 0)
				fprintf(out, "strategy.refused.%s %" PRIu64 "\n",
					tw_order_reason_name(i), ss.refused[i]);
		for (unsigned int i = 0; i < TW_EXEC_KIND_COUNT_; i++)
			fprintf(out, "strategy.exec.%s %" PRIu64 "\n", tw_exec_kind_names[i],
				ss.exec[i]);
		fprintf(out, "strategy.filled_qty %" PRIu64 "\n", ss.filled_qty);
		fprintf(out, "strategy.queue_joins %" PRIu64 "\n", ss.queue_joins);
		fprintf(out, "strategy.queue_join_failed %" PRIu64 "\n", ss.queue_join_failed);
		fprintf(out, "strategy.queue_known %" PRIu64 "\n", ss.queue_known);
		fprintf(out, "strategy.queue_unknown %" PRIu64 "\n", ss.queue_unknown);
		fprintf(out, "strategy.queue_held %" PRIu64 "\n", ss.queue_held);
		fprintf(out, "strategy.queue_qty_ahead_max %" PRIu64 "\n", ss.queue_qty_ahead_max);
	}
	fprintf(out, "order.in %" PRIu64 "\n", st.orders_in);
	fprintf(out, "order.sent %" PRIu64 "\n", st.orders_sent);
	fprintf(out, "order.refused %" PRIu64 "\n", st.orders_refused);
	for (unsigned int i = 0; i < TW_ORDER_REASON_MAX_; i++)
		if (st.refused[i] != 0)
			fprintf(out, "order.refused.%s %" PRIu64 "\n", tw_order_reason_name(i),
				st.refused[i]);
	fprintf(out, "order.replies_failed %" PRIu64 "\n", st.replies_failed);
	fprintf(out, "order.cancels_sent %" PRIu64 "\n", st.cancels_sent);
	fprintf(out, "order.cancels_on_stale %" PRIu64 "\n", st.cancels_on_stale);
	fprintf(out, "order.kill_events %" PRIu64 "\n", st.kill_events);
	if (c->order_state.session != NULL) {
		const struct il3_session_counters *sc = il3_session_counters(c->order_state.session);

		for (unsigned int i = 0; i < TW_EXEC_KIND_COUNT_; i++)
			fprintf(out, "order.exec.%s %" PRIu64 "\n", tw_exec_kind_names[i], st.exec[i]);
		fprintf(out, "order.exec_other %" PRIu64 "\n", st.exec_other);
		fprintf(out, "order.exec_relay_failed %" PRIu64 "\n", st.exec_relay_failed);
		fprintf(out, "session.state %s\n", il3_state_name(
				il3_session_state(c->order_state.session)));
		fprintf(out, "session.connects %" PRIu64 "\n", st.session_connects);
		fprintf(out, "session.established %" PRIu64 "\n", st.session_established);
		fprintf(out, "session.app_out %" PRIu64 "\n", sc->app_out);
		fprintf(out, "session.app_in %" PRIu64 "\n", sc->app_in);
	}
	if (max_books == 0)
		return;
	for (uint32_t i = 0; i < c->n_channels; i++)
		cap += book_feed_capacity(c->path[i]->book);
	list = calloc(cap ? cap : 1, sizeof(*list));
	if (list == NULL)
		return;
	for (uint32_t i = 0; i < c->n_channels; i++)
		for (uint32_t s = 0; s < book_feed_capacity(c->path[i]->book); s++) {
			const struct book_instrument *in =
				book_feed_instrument(c->path[i]->book, s);

			if (in != NULL)
				list[n++] = in;
		}
	qsort(list, n, sizeof(*list), cmp_instrument);
	fprintf(out, "== books (%" PRIu64 " of %" PRIu64 ")\n", n < max_books ? n : max_books, n);
	for (uint64_t i = 0; i < n && i < max_books; i++) {
		const struct book_instrument *in = list[i];

		fprintf(out, "book %" PRId32 " %s state=%s rpt_seq=%" PRIu32 " hash=0x%016" PRIx64
			"\n", in->security_id, in->symbol[0] ? in->symbol : "-",
			book_state_name((enum book_state)in->state), in->rpt_seq,
			book_instrument_hash(in));
		for (unsigned int l = 0; l < in->depth && l < 5; l++) {
			fprintf(out, "  %u", l + 1);
			print_level(out, &in->bid[l]);
			fprintf(out, " |");
			print_level(out, &in->ask[l]);
			fprintf(out, "\n");
		}
	}
	free(list);
}
