/* SPDX-License-Identifier: BSD-3-Clause */
/* MDP 3.0 market-by-price book rules (see synth_book.h). */
#include <errno.h>
#include <string.h>

#include "synth_book.h"
#include "synth_layout_gen.h"

static void
remove_top(struct synth_side *s, unsigned int n)
{
	memmove(&s->level[0], &s->level[n], (s->count - n) * sizeof(s->level[0]));
	s->count = (uint8_t)(s->count - n);
}

int
synth_book_apply(struct synth_book *book, const struct synth_book_op *op)
{
	struct synth_side *s;
	unsigned int depth, at;

	if (op->side >= SYNTH_SIDE_COUNT || op->level == 0)
		return -EINVAL;
	s = &book->side[op->side];
	depth = synth_book_side_depth(book, op->side);
	at = op->level - 1u;
	switch (op->action) {
	case SYNTH_V_MD_UPDATE_ACTION_NEW:
		if (op->level > depth || at > s->count)
			return -EINVAL;
		if (s->count == depth)
			s->count--; /* the last level falls off */
		memmove(&s->level[at + 1], &s->level[at], (s->count - at) * sizeof(s->level[0]));
		s->count++;
		break;
	case SYNTH_V_MD_UPDATE_ACTION_CHANGE:
		if (at >= s->count || s->level[at].px != op->px)
			return -EINVAL;
		break;
	case SYNTH_V_MD_UPDATE_ACTION_OVERLAY:
		if (at >= s->count)
			return -EINVAL;
		break;
	case SYNTH_V_MD_UPDATE_ACTION_DELETE:
		if (at >= s->count)
			return -EINVAL;
		memmove(&s->level[at], &s->level[at + 1],
				(s->count - at - 1) * sizeof(s->level[0]));
		s->count--;
		return 0;
	case SYNTH_V_MD_UPDATE_ACTION_DELETE_THRU:
		s->count = 0;
		return 0;
	case SYNTH_V_MD_UPDATE_ACTION_DELETE_FROM:
		if (op->level > s->count)
			return -EINVAL;
		remove_top(s, op->level);
		return 0;
	default:
		return -EINVAL;
	}
	s->level[at].px = op->px;
	s->level[at].size = op->size;
	s->level[at].orders = op->orders;
	return 0;
}

void
synth_book_clear(struct synth_book *book)
{
	unsigned int i;

	for (i = 0; i < SYNTH_SIDE_COUNT; i++)
		book->side[i].count = 0;
	book->rpt_seq = 0;
	book->has_trade = false;
	book->trade_px = 0;
	book->trade_size = 0;
}

bool
synth_book_equal(const struct synth_book *a, const struct synth_book *b)
{
	unsigned int i, l;

	if (a->security_id != b->security_id || a->rpt_seq != b->rpt_seq ||
			a->status != b->status || a->has_trade != b->has_trade ||
			(a->has_trade && (a->trade_px != b->trade_px ||
					  a->trade_size != b->trade_size)))
		return false;
	for (i = 0; i < SYNTH_SIDE_COUNT; i++) {
		if (a->side[i].count != b->side[i].count)
			return false;
		for (l = 0; l < a->side[i].count; l++)
			if (a->side[i].level[l].px != b->side[i].level[l].px ||
					a->side[i].level[l].size != b->side[i].level[l].size ||
					a->side[i].level[l].orders != b->side[i].level[l].orders)
				return false;
	}
	return true;
}
