/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * The matching core of the simulated exchange (app/simx/simx.h) on
 * hand-made books, without sockets: a fill at the touch, a partial fill
 * (a sweep and a rest), the queue ahead consumed before the order fills,
 * a cancel racing a fill (both ways), the exchange's rejects, positions
 * and PnL. Every report's due time is checked against the latencies.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "simx.h"

#define LAT 1000u       /* decision -> exchange, ns */
#define RET 500u        /* exchange -> client, ns */
#define ID 7
#define BUY 1
#define SELL 2

struct fixture {
	struct simx *x;
	struct simx_book book;     /* instrument ID */
	bool known;
	struct simx_report got[64];
	unsigned int n;
};

static int
book_fn(void *ctx, int32_t security_id, struct simx_book *out)
{
	struct fixture *f = ctx;

	if (!f->known || security_id != ID)
		return -ENOENT;
	*out = f->book;
	return 0;
}

static void
report_fn(void *ctx, const struct simx_report *r)
{
	struct fixture *f = ctx;

	assert_true(f->n < 64);
	f->got[f->n++] = *r;
}

/* bid 100 x 10, 99 x 5; ask 101 x 5, 102 x 5 */
static void
book_default(struct fixture *f)
{
	memset(&f->book, 0, sizeof(f->book));
	f->known = true;
	f->book.ok = true;
	f->book.depth = 2;
	f->book.bid[0].price = 100; f->book.bid[0].qty = 10;
	f->book.bid[1].price = 99;  f->book.bid[1].qty = 5;
	f->book.ask[0].price = 101; f->book.ask[0].qty = 5;
	f->book.ask[1].price = 102; f->book.ask[1].qty = 5;
}

static void
trade(struct fixture *f, int64_t price, int64_t qty)
{
	f->book.has_trade = true;
	f->book.trade_price = price;
	f->book.trade_qty = qty;
	f->book.trade_key++;
}

static int
setup(void **state)
{
	static struct fixture f;

	memset(&f, 0, sizeof(f));
	book_default(&f);
	f.x = simx_create(&(struct simx_config){ .latency_ns = LAT, .return_ns = RET,
		.book = book_fn, .report = report_fn, .ctx = &f });
	assert_non_null(f.x);
	*state = &f;
	return 0;
}

static int
teardown(void **state)
{
	struct fixture *f = *state;

	simx_destroy(f->x);
	return 0;
}

static void
check(const struct simx_report *r, uint8_t kind, uint64_t ref, uint32_t last_qty,
      int64_t last_price, uint32_t leaves, uint64_t event_ns)
{
	assert_int_equal(r->kind, kind);
	assert_int_equal(r->ref, ref);
	assert_int_equal(r->last_qty, last_qty);
	assert_int_equal(r->last_price, last_price);
	assert_int_equal(r->leaves_qty, leaves);
	assert_int_equal(r->event_ns, event_ns);
	assert_int_equal(r->due_ns, event_ns + RET);
}

/* A buy at the ask fills at once at the ask; nothing before it arrives. */
static void
fill_at_touch(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(simx_submit_new(f->x, 1, 10000, ID, BUY, 2, 101), 0);
	assert_int_equal(simx_next_ns(f->x), 10000 + LAT);
	simx_run_until(f->x, 10000 + LAT, 0);           /* not yet arrived */
	assert_int_equal(f->n, 0);
	simx_run_until(f->x, 10000 + LAT + RET, 0);     /* applied; reports not due */
	assert_int_equal(f->n, 0);
	simx_run_until(f->x, 10000 + LAT + RET + 1, 0);
	assert_int_equal(f->n, 2);
	check(&f->got[0], SIMX_NEW, 1, 0, 0, 2, 10000 + LAT);
	check(&f->got[1], SIMX_FILL, 1, 2, 101, 0, 10000 + LAT);
	assert_int_equal(f->got[1].cum_qty, 2);
}

/* A buy of 8 at 102 sweeps 5 at 101 and 3 at 102; a buy of 8 at 101 fills
 * 5 and rests 3, filled later by a sell trading at 101. */
static void
partial_fill(void **state)
{
	struct fixture *f = *state;
	struct simx_stats st;

	simx_submit_new(f->x, 1, 0, ID, BUY, 8, 102);
	simx_run_until(f->x, UINT64_MAX, 0);
	assert_int_equal(f->n, 3);
	check(&f->got[1], SIMX_FILL, 1, 5, 101, 3, LAT);
	check(&f->got[2], SIMX_FILL, 1, 3, 102, 0, LAT);

	f->n = 0;
	simx_submit_new(f->x, 2, 5000, ID, BUY, 8, 101);
	simx_run_until(f->x, UINT64_MAX, 0);
	assert_int_equal(f->n, 2);
	check(&f->got[1], SIMX_FILL, 2, 5, 101, 3, 5000 + LAT);
	simx_stats(f->x, &st);
	assert_int_equal(st.resting, 1);
	/* the rest is alone at 101 on the bid (the recorded book has none
	 * there): a sell trading 2 at 101 fills 2 of it, at its price */
	f->n = 0;
	trade(f, 101, 2);
	simx_market(f->x, 20000);
	simx_run_until(f->x, UINT64_MAX, 0);
	assert_int_equal(f->n, 1);
	check(&f->got[0], SIMX_FILL, 2, 2, 101, 1, 20000);
	/* the same trade seen again fills nothing more */
	f->n = 0;
	simx_market(f->x, 20001);
	simx_run_until(f->x, UINT64_MAX, 0);
	assert_int_equal(f->n, 0);
}

/* A buy joining 10 at 100 fills only once trades at 100 have consumed the
 * 10 ahead of it; the level falling below the estimate shrinks it too. */
static void
queue_ahead(void **state)
{
	struct fixture *f = *state;

	simx_submit_new(f->x, 1, 0, ID, BUY, 3, 100);
	simx_run_until(f->x, UINT64_MAX, 0);
	assert_int_equal(f->n, 1);                      /* new, resting */
	f->n = 0;
	trade(f, 100, 6);                               /* 4 ahead left */
	f->book.bid[0].qty = 4;
	simx_market(f->x, 100);
	simx_run_until(f->x, UINT64_MAX, 0);
	assert_int_equal(f->n, 0);
	f->book.bid[0].qty = 2;                         /* cancels ahead: 2 left */
	simx_market(f->x, 200);
	simx_run_until(f->x, UINT64_MAX, 0);
	assert_int_equal(f->n, 0);
	trade(f, 100, 4);                               /* 2 ahead, then 2 of ours */
	simx_market(f->x, 300);
	simx_run_until(f->x, UINT64_MAX, 0);
	assert_int_equal(f->n, 1);
	check(&f->got[0], SIMX_FILL, 1, 2, 100, 1, 300);
	f->n = 0;
	trade(f, 99, 1);                                /* through our price: the rest */
	simx_market(f->x, 400);
	simx_run_until(f->x, UINT64_MAX, 0);
	assert_int_equal(f->n, 1);
	check(&f->got[0], SIMX_FILL, 1, 1, 100, 0, 400);
}

/* A cancel arriving after the fill is rejected "too late"; one arriving
 * before it cancels, and the later trade fills nothing. */
static void
cancel_races_fill(void **state)
{
	struct fixture *f = *state;
	struct simx_stats st;

	simx_submit_new(f->x, 1, 0, ID, SELL, 1, 101);  /* joins 5 at 101 */
	simx_run_until(f->x, LAT + 1, 0);
	/* cancel decided at 1500 arrives at 2500; the buy trades through at 2000 */
	simx_submit_cancel(f->x, 2, 1500, 1, 0);
	simx_run_until(f->x, 2000, 0);
	trade(f, 102, 1);
	simx_market(f->x, 2000);
	simx_run_until(f->x, UINT64_MAX, 0);
	assert_int_equal(f->n, 3);
	assert_int_equal(f->got[0].kind, SIMX_NEW);
	check(&f->got[1], SIMX_FILL, 1, 1, 101, 0, 2000);
	assert_int_equal(f->got[2].kind, SIMX_CANCEL_REJECT);
	assert_int_equal(f->got[2].ref, 2);
	assert_string_equal(f->got[2].text, "too late to cancel");
	assert_int_equal(f->got[2].event_ns, 1500 + LAT);

	/* the other way round: the cancel arrives (at 11000) before the trade */
	f->n = 0;
	simx_submit_new(f->x, 3, 5000, ID, SELL, 1, 101);
	simx_submit_cancel(f->x, 4, 10000, 3, 0);
	simx_run_until(f->x, 12000, 0);
	trade(f, 102, 1);
	simx_market(f->x, 12000);
	simx_run_until(f->x, UINT64_MAX, 0);
	assert_int_equal(f->n, 2);
	assert_int_equal(f->got[0].kind, SIMX_NEW);
	assert_int_equal(f->got[1].kind, SIMX_CANCELED);
	assert_int_equal(f->got[1].ref, 4);
	assert_int_equal(f->got[1].event_ns, 10000 + LAT);
	simx_stats(f->x, &st);
	assert_int_equal(st.too_late, 1);
	assert_int_equal(st.canceled, 1);
	assert_int_equal(st.resting, 0);
}

/* Unknown instrument, a stale book, price <= 0, qty 0: rejected on arrival. */
static void
rejects(void **state)
{
	struct fixture *f = *state;
	static const char *const why[] = {"unknown instrument", "stale book",
					  "price must be positive", "quantity must be positive"};

	simx_submit_new(f->x, 1, 0, ID + 1, BUY, 1, 100);
	simx_run_until(f->x, UINT64_MAX, 0);
	f->book.ok = false;
	simx_submit_new(f->x, 2, 10, ID, BUY, 1, 100);
	simx_run_until(f->x, UINT64_MAX, 0);
	f->book.ok = true;
	simx_submit_new(f->x, 3, 20, ID, BUY, 1, 0);
	simx_submit_new(f->x, 4, 30, ID, BUY, 0, 100);
	simx_run_until(f->x, UINT64_MAX, 0);
	assert_int_equal(f->n, 4);
	for (unsigned int i = 0; i < 4; i++) {
		assert_int_equal(f->got[i].kind, SIMX_REJECT);
		assert_int_equal(f->got[i].ref, i + 1);
		assert_string_equal(f->got[i].text, why[i]);
	}
	/* a cancel of an order the exchange never had */
	simx_submit_cancel(f->x, 5, 40, 99, 0);
	simx_run_until(f->x, UINT64_MAX, 0);
	assert_int_equal(f->got[4].kind, SIMX_CANCEL_REJECT);
	assert_string_equal(f->got[4].text, "unknown order");
}

/* Buy 2 at 101, sell 1 at 100 (aggressive), marked at the last trade 104:
 * position 1, realised -1, unrealised 104 - 101 = 3. */
static void
positions(void **state)
{
	struct fixture *f = *state;
	struct simx_position p;

	simx_submit_new(f->x, 1, 0, ID, BUY, 2, 101);
	simx_submit_new(f->x, 2, 10, ID, SELL, 1, 100);
	simx_run_until(f->x, UINT64_MAX, 0);
	trade(f, 104, 1);
	simx_mark(f->x);
	assert_int_equal(simx_positions(f->x, &p, 1), 1);
	assert_int_equal(p.security_id, ID);
	assert_int_equal(p.position, 1);
	assert_int_equal(p.bought, 2);
	assert_int_equal(p.sold, 1);
	assert_int_equal(p.realised, -1);
	assert_int_equal(p.unrealised, 3);
	assert_int_equal(p.mark, 104);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(fill_at_touch, setup, teardown),
		cmocka_unit_test_setup_teardown(partial_fill, setup, teardown),
		cmocka_unit_test_setup_teardown(queue_ahead, setup, teardown),
		cmocka_unit_test_setup_teardown(cancel_races_fill, setup, teardown),
		cmocka_unit_test_setup_teardown(rejects, setup, teardown),
		cmocka_unit_test_setup_teardown(positions, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
