/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reference data and channel state: instrument definitions (27, 29, 41, 54,
 * 55, 56, 57, 58, 63), SecurityStatus (30) by instrument or by group, and
 * ChannelReset (4).  Off the hot path: reached from the dispatch switch of
 * book_feed.c, never replayed.
 */
#include <string.h>

#include "book_feed_pvt.h"

/* ------------------------------------------------------------------------ */
/* Channel reset, security status, definitions                                */
/* ------------------------------------------------------------------------ */

void
book__on_channel_reset(struct book__walk_ctx *c, const struct mdp3_msg *msg)
{
	struct book_feed *f = c->feed;
	uint32_t i;

	if (c->replay)
		return;
	mdp3_channel_reset4_transact_time(msg, &c->transact_time);
	book__flush_events(c, NULL);
	for (i = 0; i < f->high_water; i++) {
		struct book_instrument *in = &f->instruments[i];

		if (!(in->flags & BOOK_INSTRUMENT_IN_USE))
			continue;
		book_instrument_clear(in);
		in->state = BOOK_STATE_OK;
		in->rpt_seq = 0;
		in->flags |= BOOK_INSTRUMENT_RPT_KNOWN | BOOK_INSTRUMENT_COMPLETE;
		in->flags &= (uint8_t)~BOOK_INSTRUMENT_NEVER_SYNCED;
		in->last_trade.price = BOOK_PRICE_NONE;
		in->volume = -1;
		in->dirty = 0;
		book__publish(c, in, BOOK_EVENT_RESET | BOOK_EVENT_BOOK);
	}
	book__set_stale_count(f, 0);
	if (f->mbo_on)
		book__mbo_channel_reset(f);
	book__recovery_clear(f);
	f->mbo.next_chunk = 0;
	f->counters.channel_resets++;
}

/*
 * An instrument's security_group is NUL-padded to BOOK_GROUP_SIZE (zeroed by
 * book_instrument_init, written by copy_chars) and so is a status's (zeroed,
 * then at most BOOK_GROUP_SIZE - 1 bytes without a NUL): the strings are
 * equal exactly when all BOOK_GROUP_SIZE bytes are, a fixed-size compare the
 * compiler does in registers (a status scans every instrument).
 */
static inline bool
group_equal(const char a[BOOK_GROUP_SIZE], const char b[BOOK_GROUP_SIZE])
{
	return memcmp(a, b, BOOK_GROUP_SIZE) == 0;
}

void
book__on_security_status(struct book__walk_ctx *c, const struct mdp3_msg *msg)
{
#define SS30(f) mdp3_security_status30_##f
	struct book_feed *f = c->feed;
	struct book_instrument *in;
	struct book_status st;
	const char *group;
	size_t glen = 0;
	int32_t sid;
	uint32_t i;

	if (c->replay)
		return;
	f->counters.status_updates++;
	SS30(transact_time)(msg, &c->transact_time);
	memset(&st, 0, sizeof(st));
	SS30(security_trading_status)(msg, &st.trading_status);
	SS30(halt_reason)(msg, &st.halt_reason);
	SS30(security_trading_event)(msg, &st.trading_event);
	if (SS30(security_group)(msg, &group, &glen) == 0 && glen < BOOK_GROUP_SIZE)
		memcpy(st.security_group, group, glen);
	else
		glen = 0;
	if (SS30(security_id)(msg, &sid) == 0) {
		in = book__lookup(f, sid);
		if (in != NULL)
			in->trading_status = st.trading_status;
		book__publish_status(c, in, sid, &st);
		return;
	}
	for (i = 0; glen > 0 && i < f->high_water; i++) {
		in = &f->instruments[i];
		if (!(in->flags & BOOK_INSTRUMENT_IN_USE) ||
				!group_equal(in->security_group, st.security_group))
			continue;
		in->trading_status = st.trading_status;
		book__publish_status(c, in, in->security_id, &st);
	}
	book__publish_status(c, NULL, 0, &st);
#undef SS30
}

static void
copy_chars(char *dst, size_t size, const char *src, size_t n)
{
	if (n >= size)
		n = size - 1;
	memcpy(dst, src, n);
	memset(dst + n, 0, size - n);
}

/* What a definition says about an instrument. */
struct definition {
	int32_t sid;
	char action;
	int status_rc;
	uint8_t status;
	int depth;          /* GBX MarketDepth; -1 absent */
	int implied_depth;  /* GBI MarketDepth; -1 absent */
	int tick_rc;
	struct mdp3_decimal tick;
	int factor_rc;
	struct mdp3_decimal factor;
	const char *symbol;
	size_t symbol_len;
	const char *group;
	size_t group_len;
};

static void
apply_definition(struct book__walk_ctx *c, const struct definition *d)
{
	struct book_feed *f = c->feed;
	struct book_instrument *in = book__lookup(f, d->sid);
	struct book_instrument before;
	unsigned int depth, implied;
	bool created = false;
	int64_t tick;

	if (d->action == MDP3_SECURITY_UPDATE_ACTION_DELETE) {
		if (in == NULL)
			return;
		book__flush_events(c, NULL);
		book__publish(c, in, BOOK_EVENT_DELETED);
		book__remove(f, in);
		f->counters.definitions_deleted++;
		return;
	}
	if (in == NULL) {
		in = book__create(f, d->sid, false);
		if (in == NULL)
			return;
		created = true;
	}
	before = *in;
	depth = d->depth > 0 ? (unsigned int)d->depth : f->config.default_depth;
	if (depth > BOOK_MAX_DEPTH) {
		depth = BOOK_MAX_DEPTH;
		f->counters.depth_clamped++;
	}
	implied = d->implied_depth > 0 ? (unsigned int)d->implied_depth : 0;
	if (d->implied_depth < 0 && d->depth < 0)
		implied = f->config.default_implied_depth;
	if (implied > BOOK_IMPLIED_DEPTH) {
		implied = BOOK_IMPLIED_DEPTH;
		f->counters.depth_clamped++;
	}
	book_instrument_set_depth(in, depth, implied);
	/* Levels beyond a smaller depth were emptied: the next event compares its top. */
	in->dirty |= BOOK__DIRTY_TOP;
	if (d->tick_rc == 0 && book__price_normalize(d->tick.mantissa, d->tick.exponent,
				in->price_exponent, &tick) == 0)
		in->tick = tick;
	if (d->factor_rc == 0) {
		in->display_factor_mantissa = d->factor.mantissa;
		in->display_factor_exponent = d->factor.exponent;
	}
	if (d->symbol != NULL)
		copy_chars(in->symbol, sizeof(in->symbol), d->symbol, d->symbol_len);
	if (d->group != NULL)
		copy_chars(in->security_group, sizeof(in->security_group), d->group, d->group_len);
	if (d->status_rc == 0)
		in->trading_status = d->status;
	in->flags |= BOOK_INSTRUMENT_DEFINED;
	f->counters.definitions++;
	if (created || before.depth != in->depth || before.implied_depth != in->implied_depth ||
			before.tick != in->tick || before.flags != in->flags ||
			before.display_factor_mantissa != in->display_factor_mantissa ||
			before.display_factor_exponent != in->display_factor_exponent ||
			strcmp(before.symbol, in->symbol) != 0 ||
			strcmp(before.security_group, in->security_group) != 0)
		book__publish(c, in, BOOK_EVENT_DEFINITION);
}

#define DEFINITION_HANDLER(NAME, P)                                                \
static void                                                                        \
NAME(struct book__walk_ctx *c, const struct mdp3_msg *msg)                 \
{                                                                                  \
	struct definition d = { .depth = -1, .implied_depth = -1 };                \
	struct mdp3_group g;                                                       \
	const char *type;                                                          \
	size_t type_len;                                                           \
	int8_t depth;                                                              \
                                                                                   \
	if (c->replay)                                                             \
		return;                                                            \
	P##security_id(msg, &d.sid);                                               \
	P##security_update_action(msg, &d.action);                                 \
	d.status_rc = P##md_security_trading_status(msg, &d.status);               \
	d.tick_rc = P##min_price_increment(msg, &d.tick);                          \
	d.factor_rc = P##display_factor(msg, &d.factor);                           \
	if (P##symbol(msg, &d.symbol, &d.symbol_len) != 0)                         \
		d.symbol = NULL;                                                   \
	if (P##security_group(msg, &d.group, &d.group_len) != 0)                   \
		d.group = NULL;                                                    \
	if (P##no_md_feed_types(msg, &g) == 0) {                                   \
		while (mdp3_group_next(&g)) {                                      \
			if (P##no_md_feed_types_md_feed_type(&g, &type, &type_len) != 0 \
					|| P##no_md_feed_types_market_depth(&g, &depth) != 0) \
				continue;                                          \
			if (type_len == 3 && memcmp(type, "GBX", 3) == 0)          \
				d.depth = depth;                                   \
			else if (type_len == 3 && memcmp(type, "GBI", 3) == 0)     \
				d.implied_depth = depth;                           \
		}                                                                  \
	}                                                                          \
	apply_definition(c, &d);                                                   \
}

DEFINITION_HANDLER(on_def27, mdp3_md_instrument_definition_future27_)
DEFINITION_HANDLER(on_def29, mdp3_md_instrument_definition_spread29_)
DEFINITION_HANDLER(on_def41, mdp3_md_instrument_definition_option41_)
DEFINITION_HANDLER(on_def54, mdp3_md_instrument_definition_future54_)
DEFINITION_HANDLER(on_def55, mdp3_md_instrument_definition_option55_)
DEFINITION_HANDLER(on_def56, mdp3_md_instrument_definition_spread56_)
DEFINITION_HANDLER(on_def57, mdp3_md_instrument_definition_fixed_income57_)
DEFINITION_HANDLER(on_def58, mdp3_md_instrument_definition_repo58_)
DEFINITION_HANDLER(on_def63, mdp3_md_instrument_definition_fx63_)

void
book__on_definition(struct book__walk_ctx *c, const struct mdp3_msg *msg)
{
	switch (msg->template_id) {
	case MDP3_TEMPLATE_MD_INSTRUMENT_DEFINITION_FUTURE27:
		on_def27(c, msg);
		break;
	case MDP3_TEMPLATE_MD_INSTRUMENT_DEFINITION_SPREAD29:
		on_def29(c, msg);
		break;
	case MDP3_TEMPLATE_MD_INSTRUMENT_DEFINITION_OPTION41:
		on_def41(c, msg);
		break;
	case MDP3_TEMPLATE_MD_INSTRUMENT_DEFINITION_FUTURE54:
		on_def54(c, msg);
		break;
	case MDP3_TEMPLATE_MD_INSTRUMENT_DEFINITION_OPTION55:
		on_def55(c, msg);
		break;
	case MDP3_TEMPLATE_MD_INSTRUMENT_DEFINITION_SPREAD56:
		on_def56(c, msg);
		break;
	case MDP3_TEMPLATE_MD_INSTRUMENT_DEFINITION_FIXED_INCOME57:
		on_def57(c, msg);
		break;
	case MDP3_TEMPLATE_MD_INSTRUMENT_DEFINITION_REPO58:
		on_def58(c, msg);
		break;
	case MDP3_TEMPLATE_MD_INSTRUMENT_DEFINITION_FX63:
		on_def63(c, msg);
		break;
	default:
		break;
	}
}
