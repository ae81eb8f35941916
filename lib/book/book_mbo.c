/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Market-by-order books (config.mbo): every resting outright order of an
 * instrument, from template 47 entries, the NoOrderIDEntries of template 46
 * and order-book snapshots 53; and the oracle that compares them, at every
 * EndOfEvent, with the price-level books built from the same channel.
 *
 * Structure and bounds.  A pool of mbo_instruments books, taken by an
 * instrument at its first order entry (or snapshot) and given back when it
 * is removed; none free: the instrument is refused (counted) and shows no
 * book.  Each book holds at most mbo_orders orders in a slab (slots never
 * used since the last clear are taken in order above a mark, freed ones
 * from a stack: a clear is O(1) and the live orders stay packed), an
 * open-addressing table keyed by OrderID (linear probing, load <= 1/2;
 * backward-shift deletion, no tombstones), and per side an array of at
 * most mbo_levels price levels sorted worst to best (a branch-free count over the best 8 levels, a
 * binary search below them; the best level is the last, so inserts and
 * removals near the top move few entries, and an order alone at its level
 * that moves on its side takes the level's place).  A level chains
 * its orders in a doubly linked list ordered by MDOrderPriority (a new order
 * usually has the highest value: its insertion walks from the tail, O(1) in
 * the common case).  Costs: find O(1) expected, level O(1) in the best 8,
 * else O(log L), + a move of the levels between it and the top, queue
 * position O(orders ahead).
 * The OrderID table is sized to the orders the book holds, not to its
 * bound: its memory is laid out for mbo_orders (the power of two >=
 * 2 * mbo_orders entries), but a book starts on the first TABLE_MIN of them
 * and doubles in place when an insert would take the load over 1/2 (a
 * rehash of the book's orders, walked through its levels: O(orders) once
 * per doubling, at most log2(mbo_orders / 16) times between clears, counted
 * in mbo_table_grows).  A table sized to the bound spread a book of 50
 * orders over 32 KiB, an L1 miss at nearly every entry (bench_feed,
 * RESULTS.md).  config.mbo_presize starts every book at the bound's size
 * instead: no doubling ever, at that cost.
 * Hitting mbo_orders or mbo_levels empties the book and marks it
 * BOOK_MBO_OVERFLOW (counted): it is never shown half-built, and a snapshot
 * that fits or a ChannelReset brings it back.  All memory is laid out by
 * book_feed_init(); nothing here allocates, prints or uses floating point.
 *
 * Sequencing.  Template 47 and the order entries carry no RptSeq, so a book
 * cannot tell by itself that it missed a packet: it goes stale with its
 * instrument's RptSeq gap (book__go_stale), with a declared loss, and with a
 * MsgSeqNum jump seen by book_feed_packet_begin(); and a valid book that is
 * told to change or delete an order it does not hold goes stale too.  Stale
 * books keep the recovery buffer recording; a snapshot 53 (all chunks, in
 * order, the same LastMsgSeqNumProcessed) is applied only when every
 * incremental packet after its LastMsgSeqNumProcessed is in the buffer, and
 * those packets are then replayed for that book only.
 */
#include <assert.h>
#include <errno.h>
#include <stddef.h>
#include <string.h>

#ifdef __SSE2__
#include <emmintrin.h>
#endif
#ifdef __SSE4_2__
#include <nmmintrin.h>
#endif
/* The oracle's AVX2 comparison, chosen at run time (the build's baseline
 * is x86-64-v2). */
#if defined(__x86_64__) && defined(__GNUC__)
#define BOOK__AVX2 1
#include <immintrin.h>
#endif

#include "book_feed_pvt.h"

#define O47(f) mdp3_md_incremental_refresh_order_book47_##f
#define B46(f) mdp3_md_incremental_refresh_book46_##f
#define S53(f) mdp3_snapshot_full_refresh_order_book53_##f

enum { OP_NEW = 0, OP_CHANGE = 1, OP_DELETE = 2 };

/* One order entry as read from the wire. */
struct mbo_entry {
	uint64_t id;
	uint64_t priority;
	struct mdp3_decimal px;
	int64_t qty;
	uint8_t action;
	char type;
	bool has_id;
	bool has_priority;
	bool has_px;
	bool has_qty;
};

/* What applying an entry did (counted by the caller for live entries). */
enum outcome {
	DONE_NEW,
	DONE_CHANGE,
	DONE_DELETE,
	UNKNOWN,
	BAD,
	NOT_APPLIED,
};

/* The counter of each outcome of a live entry. */
static const size_t outcome_counter[] = {
	[DONE_NEW] = offsetof(struct book_feed_counters, mbo_new),
	[DONE_CHANGE] = offsetof(struct book_feed_counters, mbo_changes),
	[DONE_DELETE] = offsetof(struct book_feed_counters, mbo_deletes),
	[UNKNOWN] = offsetof(struct book_feed_counters, mbo_unknown_orders),
	[BAD] = offsetof(struct book_feed_counters, mbo_bad_entries),
	[NOT_APPLIED] = offsetof(struct book_feed_counters, mbo_not_applied),
};

static size_t
round64(size_t v)
{
	return (v + BOOK__FEED_ALIGN - 1) / BOOK__FEED_ALIGN * BOOK__FEED_ALIGN;
}

static uint32_t
table_size(uint32_t orders)
{
	uint32_t n = 2;

	while (n < 2 * orders)
		n <<= 1;
	return n;
}

static size_t
book_bytes(const struct book_feed_config *c)
{
	return round64((size_t)c->mbo_orders * sizeof(struct book__mbo_order)) +
		round64((size_t)c->mbo_orders * sizeof(uint32_t)) +
		round64((size_t)table_size(c->mbo_orders) * sizeof(uint32_t)) +
		2 * round64(((size_t)c->mbo_levels + BOOK_MAX_DEPTH) *
			    sizeof(struct book__mbo_level));
}

/* A side's level array, after BOOK_MAX_DEPTH empty levels that the oracle
 * reads as the levels beyond the worst (a fixed trip count, no branch on
 * the number of levels). */
static struct book__mbo_level *
levels_lay(uint8_t *mem, size_t *off, uint32_t capacity)
{
	struct book__mbo_level *lv = (struct book__mbo_level *)(mem + *off);
	unsigned int i;

	for (i = 0; i < BOOK_MAX_DEPTH; i++)
		lv[i] = (struct book__mbo_level){ .price = BOOK_PRICE_NONE, .head = BOOK__NIL,
						  .tail = BOOK__NIL };
	*off += round64(((size_t)capacity + BOOK_MAX_DEPTH) * sizeof(*lv));
	return lv + BOOK_MAX_DEPTH;
}

size_t
book__mbo_memsize(const struct book_feed_config *c)
{
	size_t n = c->mbo_instruments;

	if (!c->mbo)
		return 0;
	return round64(n * sizeof(struct book_mbo)) + round64(n * sizeof(uint32_t)) +
		round64(n * sizeof(uint32_t)) +
		round64((size_t)c->mbo_diffs * sizeof(struct book_mbo_diff)) + n * book_bytes(c);
}

/* The OrderID table a book starts with (entries, at most its bound's). */
enum { TABLE_MIN = 32 };

/* Use the first size entries of the table (a power of two, at most
 * table_size(capacity)), all empty. */
static void
table_use(struct book_mbo *m, uint32_t size, uint32_t capacity)
{
	uint32_t i;

	m->table_mask = size - 1;
	m->table_shift = 64 - (uint32_t)__builtin_ctz(size);
	/* at the bound's size, capacity <= size / 2 orders keep the load */
	m->grow_at = size < table_size(capacity) ? size / 2 : UINT32_MAX;
	for (i = 0; i < size; i++)
		m->table[i] = BOOK__NIL;
}

/* Empty a book (cold: resets, overflows, snapshots, attach): O(TABLE_MIN),
 * not O(capacity), unless config.mbo_presize (the whole table). */
static void
book_clear(const struct book_feed_config *c, struct book_mbo *m)
{
	const uint32_t max = table_size(c->mbo_orders);

	table_use(m, max < TABLE_MIN || c->mbo_presize ? max : TABLE_MIN, c->mbo_orders);
	m->free_top = 0;
	m->fresh = 0;
	m->order_count = 0;
	m->nlevels[BOOK_BID] = 0;
	m->nlevels[BOOK_ASK] = 0;
}

void
book__mbo_init(struct book_feed *f, uint8_t *mem)
{
	const struct book_feed_config *c = &f->config;
	uint32_t n = c->mbo_instruments, i, tsize;
	size_t off = 0;

	f->mbo_on = c->mbo;
	if (!c->mbo)
		return;
	f->mbo_avx2 = c->max_simd_bits >= 256;
	f->mbo_books = (struct book_mbo *)mem;
	off += round64((size_t)n * sizeof(struct book_mbo));
	f->mbo_free = (uint32_t *)(mem + off);
	off += round64((size_t)n * sizeof(uint32_t));
	f->mbo_check = (uint32_t *)(mem + off);
	off += round64((size_t)n * sizeof(uint32_t));
	f->mbo_diffs = (struct book_mbo_diff *)(mem + off);
	off += round64((size_t)c->mbo_diffs * sizeof(struct book_mbo_diff));
	tsize = table_size(c->mbo_orders);
	for (i = 0; i < n; i++) {
		struct book_mbo *m = &f->mbo_books[i];

		memset(m, 0, sizeof(*m));
		m->instrument = BOOK__NIL;
		m->orders = (struct book__mbo_order *)(mem + off);
		off += round64((size_t)c->mbo_orders * sizeof(struct book__mbo_order));
		m->free_stack = (uint32_t *)(mem + off);
		off += round64((size_t)c->mbo_orders * sizeof(uint32_t));
		m->table = (uint32_t *)(mem + off);
		off += round64((size_t)tsize * sizeof(uint32_t));
		m->levels[BOOK_BID] = levels_lay(mem, &off, c->mbo_levels);
		m->levels[BOOK_ASK] = levels_lay(mem, &off, c->mbo_levels);
		book_clear(c, m);
		f->mbo_free[i] = n - 1 - i;
	}
	f->mbo_free_top = n;
}

/* ------------------------------------------------------------------------ */
/* States                                                                     */
/* ------------------------------------------------------------------------ */

static void
set_state(struct book_feed *f, struct book_mbo *m, uint8_t state)
{
	bool was = m->state >= BOOK_MBO_STALE, now = state >= BOOK_MBO_STALE;

	if (now && !was)
		f->counters.mbo_stale_books++;
	else if (was && !now)
		f->counters.mbo_stale_books--;
	m->state = state;
}

static void
touch(struct book_feed *f, struct book_mbo *m, unsigned int sides)
{
	book__mbo_list(f, (uint32_t)(m - f->mbo_books), sides);
}

/* A valid or partial book missed something: stale until a snapshot. */
static void
go_stale(struct book_feed *f, struct book_mbo *m)
{
	if (m->state >= BOOK_MBO_STALE)
		return;
	set_state(f, m, BOOK_MBO_STALE);
	f->counters.mbo_stale_marked++;
}

static void
overflow(struct book_feed *f, struct book_mbo *m, bool orders)
{
	if (orders)
		f->counters.mbo_order_overflows++;
	else
		f->counters.mbo_level_overflows++;
	book_clear(&f->config, m);
	m->loading = false;
	set_state(f, m, BOOK_MBO_OVERFLOW);
}

/* Give in the MBO book b (or BOOK__NIL, BOOK__MBO_REFUSED), in the
 * instrument and in its lookup cache way, which order_entry() reads. */
static void
set_mbo(struct book_feed *f, struct book_instrument *in, uint32_t b)
{
	struct book__lookup_entry *way = book__lookup_way(f, in->security_id);

	in->mbo = b;
	if (way->sid == in->security_id)
		way->mbo = b;
}

/* The book of an instrument, taken from the pool at its first use; NULL when
 * the pool is empty (the instrument is refused, counted once). */
static struct book_mbo *
book_of(struct book_feed *f, struct book_instrument *in)
{
	uint32_t b = in->mbo;
	struct book_mbo *m;
	uint8_t state;

	if (__builtin_expect(b < BOOK__MBO_REFUSED, 1))
		return &f->mbo_books[b];
	if (f->mbo_free_top == 0) {
		if (b != BOOK__MBO_REFUSED)
			f->counters.mbo_books_refused++;
		set_mbo(f, in, BOOK__MBO_REFUSED);
		return NULL;
	}
	if (b != BOOK__MBO_REFUSED && f->mbo_clean)
		state = BOOK_MBO_VALID;  /* empty at the reset, every update seen since */
	else if (f->config.join == BOOK_JOIN_RECOVER)
		state = BOOK_MBO_STALE;
	else
		state = BOOK_MBO_PARTIAL;
	set_mbo(f, in, f->mbo_free[--f->mbo_free_top]);
	m = &f->mbo_books[in->mbo];
	book_clear(&f->config, m);
	m->security_id = in->security_id;
	m->instrument = in->index;
	m->loading = false;
	m->listed = false;
	m->mbp_ahead = false;
	m->check_sides = 0;
	m->state = BOOK_MBO_VALID;
	set_state(f, m, state);
	return m;
}

void
book__mbo_release(struct book_feed *f, struct book_instrument *in)
{
	uint32_t b = in->mbo, i;
	struct book_mbo *m;

	set_mbo(f, in, BOOK__NIL);
	if (b >= BOOK__MBO_REFUSED)
		return;
	m = &f->mbo_books[b];
	if (m->listed) {
		for (i = 0; i < f->mbo_check_count && f->mbo_check[i] != b; i++)
			;
		if (i < f->mbo_check_count)
			f->mbo_check[i] = f->mbo_check[--f->mbo_check_count];
		m->listed = false;
	}
	set_state(f, m, BOOK_MBO_VALID);
	m->instrument = BOOK__NIL;
	m->loading = false;
	f->mbo_free[f->mbo_free_top++] = b;
}

void
book__mbo_instrument_stale(struct book_feed *f, struct book_instrument *in)
{
	uint32_t b = in->mbo;

	f->mbo_clean = false;
	if (b < BOOK__MBO_REFUSED)
		go_stale(f, &f->mbo_books[b]);
}

void
book__mbo_all_stale(struct book_feed *f)
{
	uint32_t i;

	f->mbo_clean = false;
	for (i = 0; i < f->config.mbo_instruments; i++)
		if (f->mbo_books[i].instrument != BOOK__NIL)
			go_stale(f, &f->mbo_books[i]);
}

static void
empty_book(struct book_feed *f, struct book_mbo *m)
{
	book_clear(&f->config, m);
	m->loading = false;
	set_state(f, m, BOOK_MBO_VALID);
	f->counters.mbo_resets++;
	touch(f, m, BOOK__MBO_SIDES);
}

void
book__mbo_channel_reset(struct book_feed *f)
{
	uint32_t i;

	for (i = 0; i < f->config.mbo_instruments; i++)
		if (f->mbo_books[i].instrument != BOOK__NIL)
			empty_book(f, &f->mbo_books[i]);
	for (i = 0; i < f->high_water; i++)
		if (f->instruments[i].mbo == BOOK__MBO_REFUSED)
			f->instruments[i].mbo = BOOK__NIL;
	f->mbo_clean = true;
}

/* ------------------------------------------------------------------------ */
/* Orders and levels                                                          */
/* ------------------------------------------------------------------------ */

static inline uint32_t
order_home(const struct book_mbo *m, uint64_t id)
{
	return (uint32_t)((id * UINT64_C(0x9e3779b97f4a7c15)) >> m->table_shift) & m->table_mask;
}

/* The order slot of an OrderID, or BOOK__NIL; *at is where the probe
 * stopped: the OrderID's table entry, or the free entry where an insert of
 * it goes (valid until the table changes). */
static inline uint32_t
order_find_at(const struct book_mbo *m, uint64_t id, uint32_t *at)
{
	uint32_t h, o;

	for (h = order_home(m, id);; h = (h + 1) & m->table_mask) {
		o = m->table[h];
		if (o == BOOK__NIL || m->orders[o].id == id) {
			*at = h;
			return o;
		}
	}
}

static inline uint32_t
order_find(const struct book_mbo *m, uint64_t id)
{
	uint32_t at;

	return order_find_at(m, id, &at);
}

/* Empty table entry i, the entry of an order being removed: backward-shift
 * deletion, no tombstones. */
static void
table_remove_at(struct book_mbo *m, uint32_t i)
{
	uint32_t j, k;

	m->table[i] = BOOK__NIL;
	for (j = (i + 1) & m->table_mask; m->table[j] != BOOK__NIL; j = (j + 1) & m->table_mask) {
		k = order_home(m, m->orders[m->table[j]].id);
		/* Move j into the hole i unless its home lies cyclically in (i, j]. */
		if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
			continue;
		m->table[i] = m->table[j];
		m->table[j] = BOOK__NIL;
		i = j;
	}
}

/* Double the table in place and put every order back: the orders are
 * those chained in the levels of both sides. */
static __attribute__((noinline, cold)) void
table_grow(struct book_feed *f, struct book_mbo *m)
{
	uint32_t side, i, o, at, n = 0;

	table_use(m, 2 * (m->table_mask + 1), f->config.mbo_orders);
	for (side = 0; side < 2; side++)
		for (i = 0; i < m->nlevels[side]; i++)
			for (o = m->levels[side][i].head; o != BOOK__NIL; o = m->orders[o].next) {
				/* not there yet: the probe stops at its free entry */
				(void)order_find_at(m, m->orders[o].id, &at);
				m->table[at] = o;
				n++;
			}
	assert(n == m->order_count);
	(void)n;
	f->counters.mbo_table_grows++;
}

/* Before a lookup whose free entry an insert may take: the load stays at
 * most 1/2 after that insert. */
static inline void
table_room(struct book_feed *f, struct book_mbo *m)
{
	if (__builtin_expect(m->order_count >= m->grow_at, 0))
		table_grow(f, m);
}

/* The levels level_search() scans at the top of a side before it searches. */
enum { TOP_SCAN = 8 };

/* in_scan[len + j], len < TOP_SCAN: whether level j of the top scan of a
 * side of len levels is one of them (all ones) or one of the empty levels
 * below the worst (zero); from in_scan[TOP_SCAN], all are. */
static const int64_t in_scan[2 * TOP_SCAN] = {
	0, 0, 0, 0, 0, 0, 0, 0, -1, -1, -1, -1, -1, -1, -1, -1,
};

/* The first level of a side that is not worse than price (the arrays run
 * worst to best).  Most orders go near the top: when the side has at most
 * TOP_SCAN levels, or price is better than the level TOP_SCAN from the
 * best, the answer is a count over the best TOP_SCAN, independent loads in
 * place of a chain of dependent ones and no branch on the data (bench_feed:
 * MBO+MBP / MBP 2.35 -> 2.28 for the long sides; short sides, about half
 * of the searches on the bench's capture, then still took the binary
 * search).  The scan of a short side starts among the empty levels below
 * its worst (BOOK_MAX_DEPTH >= TOP_SCAN of them), masked out by in_scan.
 * Otherwise a binary search without data branches (a branch on the
 * comparison mispredicts about every other time; compilers turned the
 * ternaries of the earlier version into branches): the step is a mask, the
 * trip count depends only on the number of levels (which changes slowly),
 * and one comparison serves both sides: ~x reverses the order of int64
 * without overflow, so an ask is worse when ~price is less. */
static inline uint32_t
level_search(const struct book_mbo *m, unsigned int side, int64_t price)
{
	const struct book__mbo_level *lv = m->levels[side];
	const int64_t flip = -(int64_t)side;  /* BOOK_BID 0, BOOK_ASK all ones */
	const int64_t key = price ^ flip;
	uint32_t base = 0, len = m->nlevels[side];

	_Static_assert(TOP_SCAN <= BOOK_MAX_DEPTH, "a short side's scan stays in the array");
	if (len <= TOP_SCAN || (lv[len - TOP_SCAN].price ^ flip) < key) {
		const struct book__mbo_level *top = lv + (int32_t)len - TOP_SCAN;
		const int64_t *mask = &in_scan[len < TOP_SCAN ? len : TOP_SCAN];
		const uint32_t below = len > TOP_SCAN ? len - TOP_SCAN : 0;
		uint32_t j;
#ifdef __SSE4_2__
		/* two levels a compare */
		const __m128i f2 = _mm_set1_epi64x(flip), k2 = _mm_set1_epi64x(key);
		__m128i acc = _mm_setzero_si128();

		for (j = 0; j < TOP_SCAN; j += 2) {
			const __m128i p = _mm_castpd_si128(_mm_loadh_pd(
					_mm_castsi128_pd(_mm_loadl_epi64((const __m128i *)&top[j].price)),
					(const double *)&top[j + 1].price));
			const __m128i worse = _mm_cmpgt_epi64(k2, _mm_xor_si128(p, f2));

			acc = _mm_sub_epi64(acc, _mm_and_si128(worse,
					_mm_loadu_si128((const __m128i *)&mask[j])));
		}
		acc = _mm_add_epi64(acc, _mm_unpackhi_epi64(acc, acc));
		return below + (uint32_t)_mm_cvtsi128_si64(acc);
#else
		uint32_t c = below;

		/* a constant trip count: unrolled, no loop branch */
		for (j = 0; j < TOP_SCAN; j++)
			c += (uint32_t)((top[j].price ^ flip) < key) & (uint32_t)mask[j];
		return c;
#endif
	}
	while (len > 1) {
		const uint32_t half = len / 2;
		const uint32_t worse = -(uint32_t)((lv[base + half - 1].price ^ flip) < key);

		base += half & worse;
		len -= half;
	}
	return base + (uint32_t)((lv[base].price ^ flip) < key);
}

static inline struct book__mbo_level *
level_find(const struct book_mbo *m, unsigned int side, int64_t price)
{
	uint32_t i = level_search(m, side, price);

	if (i < m->nlevels[side] && m->levels[side][i].price == price)
		return &m->levels[side][i];
	return NULL;
}

/* Move n levels from src to dst, one level up or down (the ranges
 * overlap).  Near the top of a side, where most level changes are, n is a
 * few levels: a loop costs less than a call to memmove and its size
 * dispatch. */
static inline void
levels_move(struct book__mbo_level *dst, const struct book__mbo_level *src, uint32_t n)
{
	uint32_t k;

	if (n > TOP_SCAN) {
		memmove(dst, src, (size_t)n * sizeof(*dst));
		return;
	}
	if (dst < src)
		for (k = 0; k < n; k++)
			dst[k] = src[k];
	else
		for (k = n; k-- > 0;)
			dst[k] = src[k];
}

static inline void
level_init(struct book__mbo_level *lv, int64_t price)
{
	*lv = (struct book__mbo_level){ .price = price, .head = BOOK__NIL, .tail = BOOK__NIL };
}

/* The level of price, inserted empty if absent; NULL when the side is full. */
static struct book__mbo_level *
level_get(struct book_mbo *m, unsigned int side, int64_t price, uint32_t capacity)
{
	struct book__mbo_level *lv = m->levels[side];
	uint32_t i = level_search(m, side, price), n = m->nlevels[side];

	if (i < n && lv[i].price == price)
		return &lv[i];
	if (n == capacity)
		return NULL;
	levels_move(&lv[i + 1], &lv[i], n - i);
	m->nlevels[side] = n + 1;
	level_init(&lv[i], price);
	return &lv[i];
}

/* Chain order o into its level by priority (after equal priorities). */
static void
level_link(struct book_mbo *m, struct book__mbo_level *lv, uint32_t o)
{
	struct book__mbo_order *ord = m->orders;
	uint32_t p = lv->tail;

	while (p != BOOK__NIL && ord[p].priority > ord[o].priority)
		p = ord[p].prev;
	ord[o].prev = p;
	ord[o].next = p == BOOK__NIL ? lv->head : ord[p].next;
	if (ord[o].next != BOOK__NIL)
		ord[ord[o].next].prev = o;
	else
		lv->tail = o;
	if (p != BOOK__NIL)
		ord[p].next = o;
	else
		lv->head = o;
	lv->qty += ord[o].qty;
	lv->orders++;
}

static void
level_unlink(struct book_mbo *m, struct book__mbo_level *lv, uint32_t o)
{
	struct book__mbo_order *ord = m->orders;

	if (ord[o].prev != BOOK__NIL)
		ord[ord[o].prev].next = ord[o].next;
	else
		lv->head = ord[o].next;
	if (ord[o].next != BOOK__NIL)
		ord[ord[o].next].prev = ord[o].prev;
	else
		lv->tail = ord[o].prev;
	lv->qty -= ord[o].qty;
	lv->orders--;
}

/* Remove level i of a side (empty). */
static inline void
level_remove(struct book_mbo *m, unsigned int side, uint32_t i)
{
	struct book__mbo_level *lv = m->levels[side];
	const uint32_t n = m->nlevels[side];

	levels_move(&lv[i], &lv[i + 1], n - i - 1);
	m->nlevels[side] = n - 1;
}

/* Take order o off its level; the level goes when it is empty. */
static void
detach(struct book_mbo *m, uint32_t o)
{
	unsigned int side = m->orders[o].side;
	uint32_t i = level_search(m, side, m->orders[o].price);
	struct book__mbo_level *lv = &m->levels[side][i];

	level_unlink(m, lv, o);
	if (lv->orders == 0)
		level_remove(m, side, i);
}

/* Put order o (fields set) on its level; false when the side is full. */
static bool
attach(struct book_feed *f, struct book_mbo *m, uint32_t o)
{
	struct book__mbo_level *lv = level_get(m, m->orders[o].side, m->orders[o].price,
			f->config.mbo_levels);

	if (lv == NULL)
		return false;
	level_link(m, lv, o);
	return true;
}

/* Move order o to another price, side or priority; false when the side it
 * goes to is full.  An order alone at its level that moves on the same side
 * (tickwire-synth opens most levels with one order) takes its level's place:
 * only the levels between the two prices shift, by one, and there is one
 * level search fewer and one move fewer than a removal and an insertion. */
static bool
relocate(struct book_feed *f, struct book_mbo *m, uint32_t o, unsigned int side,
	 int64_t price, uint64_t priority, int64_t qty)
{
	struct book__mbo_order *ord = &m->orders[o];
	const unsigned int from = ord->side;
	struct book__mbo_level *lv = m->levels[from];
	const uint32_t i = level_search(m, from, ord->price), n = m->nlevels[from];
	const bool same_price = from == side && ord->price == price;
	uint32_t j;

	level_unlink(m, &lv[i], o);
	ord->side = (uint8_t)side;
	ord->price = price;
	ord->priority = priority;
	ord->qty = qty;
	if (same_price) {  /* a priority change: back into the same level */
		level_link(m, &lv[i], o);
		return true;
	}
	if (lv[i].orders != 0 || from != side) {
		if (lv[i].orders == 0)
			level_remove(m, from, i);
		return attach(f, m, o);
	}
	/* level i is empty and still in the array: j counts it when it is
	 * worse than price */
	j = level_search(m, side, price);
	if (j < n && lv[j].price == price) {
		level_remove(m, side, i);
		level_link(m, &lv[j - (uint32_t)(j > i)], o);
		return true;
	}
	if (j > i) {
		levels_move(&lv[i], &lv[i + 1], j - 1 - i);
		j--;
	} else {
		levels_move(&lv[j + 1], &lv[j], i - j);
	}
	level_init(&lv[j], price);
	level_link(m, &lv[j], o);
	return true;
}

/* A new order; at: the free table entry order_find_at() gave for id. */
static enum outcome
add_order(struct book_feed *f, struct book_mbo *m, uint64_t id, uint64_t priority,
		int64_t price, int64_t qty, unsigned int side, uint32_t at)
{
	struct book__mbo_order *ord;
	uint32_t o;

	if (m->free_top != 0) {
		o = m->free_stack[--m->free_top];
	} else if (m->fresh < f->config.mbo_orders) {
		o = m->fresh++;
	} else {
		overflow(f, m, true);
		return NOT_APPLIED;
	}
	ord = &m->orders[o];
	ord->id = id;
	ord->priority = priority;
	ord->price = price;
	ord->qty = qty;
	ord->side = (uint8_t)side;
	if (!attach(f, m, o)) {
		overflow(f, m, false);
		return NOT_APPLIED;
	}
	m->table[at] = o;
	m->order_count++;
	return DONE_NEW;
}

/* BOOK_BID, BOOK_ASK or 2 (neither) of an MDEntryType, without a branch on
 * the data (the side of consecutive entries is a coin toss). */
static inline unsigned int
entry_side(char type)
{
	const unsigned int t = (unsigned int)(unsigned char)type -
		(unsigned char)MDP3_MD_ENTRY_TYPE_BOOK_BID;

	_Static_assert(MDP3_MD_ENTRY_TYPE_BOOK_OFFER == MDP3_MD_ENTRY_TYPE_BOOK_BID + 1 &&
		       BOOK_BID == 0 && BOOK_ASK == 1, "entry types and sides in step");
	return t < 2 ? t : 2;
}

/* The sides an entry of entry_side() s touches (neither: both). */
static const uint8_t side_bits[3] = { 1u << BOOK_BID, 1u << BOOK_ASK, BOOK__MBO_SIDES };

/* One order entry into a book that accepts entries (valid or partial). */
static enum outcome
apply(struct book_feed *f, struct book_mbo *m, const struct book_instrument *in,
		const struct mbo_entry *e)
{
	struct book__mbo_order *ord;
	unsigned int side;
	int64_t price = BOOK_PRICE_NONE;
	uint64_t priority;
	uint32_t o, at;

	side = entry_side(e->type);
	if (!e->has_id || e->action > OP_DELETE ||
			(e->action != OP_DELETE && (side > BOOK_ASK || !e->has_px || !e->has_qty ||
				e->qty < 0 || book__price_normalize(e->px.mantissa, e->px.exponent,
					in->price_exponent, &price) < 0))) {
		if (m->state == BOOK_MBO_VALID)
			go_stale(f, m);
		return BAD;
	}
	table_room(f, m);
	o = order_find_at(m, e->id, &at);
	if (e->action == OP_DELETE) {
		if (o == BOOK__NIL) {
			if (m->state == BOOK_MBO_VALID)
				go_stale(f, m);
			return UNKNOWN;
		}
		m->check_sides |= (uint8_t)(1u << m->orders[o].side);
		detach(m, o);
		table_remove_at(m, at);
		m->free_stack[m->free_top++] = o;
		m->order_count--;
		return DONE_DELETE;
	}
	if (o == BOOK__NIL) {
		if (e->action == OP_CHANGE) {
			/* A partial book holds only the orders seen since the join. */
			if (m->state == BOOK_MBO_VALID) {
				go_stale(f, m);
				return UNKNOWN;
			}
			return add_order(f, m, e->id, e->has_priority ? e->priority : UINT64_MAX,
					price, e->qty, side, at) == DONE_NEW ? UNKNOWN : NOT_APPLIED;
		}
		return add_order(f, m, e->id, e->has_priority ? e->priority : UINT64_MAX, price,
				e->qty, side, at);
	}
	/* Change (or a New of an order held: the same). */
	ord = &m->orders[o];
	priority = e->has_priority ? e->priority : ord->priority;
	if (ord->side == side && ord->price == price && ord->priority == priority) {
		struct book__mbo_level *lv = level_find(m, side, price);

		lv->qty += e->qty - ord->qty;
		ord->qty = e->qty;
		return DONE_CHANGE;
	}
	m->check_sides |= (uint8_t)(1u << ord->side);
	if (!relocate(f, m, o, side, price, priority, e->qty)) {
		overflow(f, m, false);
		return NOT_APPLIED;
	}
	return DONE_CHANGE;
}

/* An entry for SecurityID sid, live or in an MBO replay: find the book,
 * apply, count. */
static void
order_entry(struct book__walk_ctx *c, int32_t sid, const struct mbo_entry *e)
{
	struct book_feed *f = c->feed;
	struct book_instrument *in;
	struct book_mbo *m = NULL;
	enum outcome r = NOT_APPLIED;
	const struct book__lookup_entry *way = book__lookup_way(f, sid);

	if (c->replay && sid != c->replay_sid)
		return;
	/* The book straight from the lookup cache way: one dependent load
	 * (in->mbo) fewer before the book's own, on every order entry
	 * (bench_feed: MBO+MBP / MBP 0.00-0.05 lower, by the host's minute;
	 * RESULTS.md, 2026-12-07). */
	if (__builtin_expect(way->sid == sid && way->mbo < BOOK__MBO_REFUSED, 1)) {
		in = way->in;
		m = &f->mbo_books[way->mbo];
		assert(in->mbo == way->mbo);
	} else {
		in = book__lookup(f, sid);
		if (in == NULL && !c->replay)
			in = book__create(f, sid, false);
		if (in != NULL)
			m = book_of(f, in);
	}
	if (m != NULL && m->state <= BOOK_MBO_PARTIAL) {
		r = apply(f, m, in, e);
		/* the entry's side (apply() adds the side an order left) */
		touch(f, m, side_bits[entry_side(e->type)]);
	}
	if (c->replay) {
		f->counters.mbo_replayed += r <= DONE_DELETE;
		return;
	}
	/* one counter per outcome, by table: a switch here is an indirect
	 * jump that mispredicts whenever the kind of entry changes */
	(*(uint64_t *)((char *)&f->counters + outcome_counter[r]))++;
}

/* ------------------------------------------------------------------------ */
/* Messages                                                                   */
/* ------------------------------------------------------------------------ */

uint8_t
book__mbo_on_order_book47(struct book__walk_ctx *c, const struct mdp3_msg *msg)
{
	struct mbo_entry e;
	struct mdp3_group g;
	int32_t sid, qty;
	uint8_t mei;

	O47(transact_time)(msg, &c->transact_time);
	O47(match_event_indicator)(msg, &mei);
	if ((c->replay && !c->replay_mbo) || O47(no_md_entries)(msg, &g) != 0)
		return mei;
	while (mdp3_group_next_flat(&g)) {
		if (!c->replay)
			c->feed->counters.mbo_entries_47++;
		e.has_id = O47(no_md_entries_order_id)(&g, &e.id) == 0;
		e.has_priority = O47(no_md_entries_md_order_priority)(&g, &e.priority) == 0;
		e.has_px = O47(no_md_entries_md_entry_px)(&g, &e.px) == 0;
		e.has_qty = O47(no_md_entries_md_display_qty)(&g, &qty) == 0;
		e.qty = qty;
		O47(no_md_entries_security_id)(&g, &sid);
		O47(no_md_entries_md_update_action)(&g, &e.action);
		O47(no_md_entries_md_entry_type)(&g, &e.type);
		order_entry(c, sid, &e);
	}
	return mei;
}

/* EmptyBook entries of a 46 empty the MBO book too (whatever its state:
 * the exchange says the book is empty now), except one loading a snapshot,
 * whose replay will see the entry. */
static void
empty_book_entries(struct book__walk_ctx *c, struct mdp3_group g)
{
	struct book_feed *f = c->feed;
	struct book_instrument *in;
	struct book_mbo *m;
	int32_t sid;
	char type;

	while (mdp3_group_next_flat(&g)) {
		B46(no_md_entries_md_entry_type)(&g, &type);
		if (type != MDP3_MD_ENTRY_TYPE_BOOK_BOOK_RESET)
			continue;
		B46(no_md_entries_security_id)(&g, &sid);
		if (c->replay && sid != c->replay_sid)
			continue;
		in = book__lookup(f, sid);
		if (in != NULL && (m = book_of(f, in)) != NULL && !m->loading)
			empty_book(f, m);
	}
}

void
book__mbo_on_book46(struct book__walk_ctx *c, const struct mdp3_msg *msg, bool resets)
{
	struct mdp3_group levels, g, ref;
	struct mbo_entry e;
	int32_t sid, qty;
	uint8_t reference;

	if ((c->replay && !c->replay_mbo) || B46(no_md_entries)(msg, &levels) != 0)
		return;
	if (resets)  /* the price-level pass saw an EmptyBook entry */
		empty_book_entries(c, levels);
	if (B46(no_order_id_entries)(msg, &g) != 0)
		return;
	while (mdp3_group_next_flat(&g)) {
		if (!c->replay)
			c->feed->counters.mbo_entries_46++;
		e.has_id = B46(no_order_id_entries_order_id)(&g, &e.id) == 0;
		e.has_priority = B46(no_order_id_entries_md_order_priority)(&g, &e.priority) == 0;
		e.has_qty = B46(no_order_id_entries_md_display_qty)(&g, &qty) == 0;
		e.qty = qty;
		B46(no_order_id_entries_order_update_action)(&g, &e.action);
		if (B46(no_order_id_entries_reference_id)(&g, &reference) != 0 || reference == 0 ||
				reference > levels.count) {
			/* no level entry: no instrument to blame either */
			if (!c->replay)
				c->feed->counters.mbo_bad_entries++;
			continue;
		}
		/* The level entry it names (1-based), read in place. */
		ref = levels;
		ref.entry = levels.next + (size_t)(reference - 1) * levels.block_length;
		B46(no_md_entries_security_id)(&ref, &sid);
		B46(no_md_entries_md_entry_type)(&ref, &e.type);
		e.has_px = B46(no_md_entries_md_entry_px)(&ref, &e.px) == 0;
		order_entry(c, sid, &e);
	}
}

void
book__mbo_on_snapshot53(struct book__walk_ctx *c, const struct mdp3_msg *msg)
{
	struct book_feed *f = c->feed;
	uint32_t chunk, chunks, last_seq, at;
	struct book_instrument *in;
	struct book_mbo *m;
	struct mdp3_group g;
	struct mbo_entry e;
	int32_t sid, qty;
	int64_t price;

	if (c->replay)
		return;
	S53(security_id)(msg, &sid);
	S53(no_chunks)(msg, &chunks);
	S53(current_chunk)(msg, &chunk);
	S53(last_msg_seq_num_processed)(msg, &last_seq);
	in = book__lookup(f, sid);
	if (chunk == 1) {
		if (in == NULL && (in = book__create(f, sid, true)) == NULL)
			return;
		m = book_of(f, in);
		if (m == NULL)
			return;
		/* Nothing after LastMsgSeqNumProcessed may be missing from the buffer
		 * (it only loses packets as time goes on: decided now). */
		if (m->state == BOOK_MBO_VALID || !book__buffer_complete_after(f, last_seq)) {
			f->counters.mbo_snapshots_ignored++;
			return;
		}
		book_clear(&f->config, m);
		set_state(f, m, BOOK_MBO_STALE);
		m->loading = true;
		m->snap_next_chunk = 1;
		m->snap_chunks = chunks;
		m->snap_last_seq = last_seq;
	} else {
		if (in == NULL || in->mbo >= BOOK__MBO_REFUSED)
			return;
		m = &f->mbo_books[in->mbo];
		if (!m->loading)
			return;
	}
	if (chunk != m->snap_next_chunk || chunks != m->snap_chunks ||
			last_seq != m->snap_last_seq) {
		/* a chunk went missing: empty, stale, wait for the next loop */
		book_clear(&f->config, m);
		m->loading = false;
		f->counters.mbo_snapshots_ignored++;
		return;
	}
	if (S53(no_md_entries)(msg, &g) == 0) {
		while (mdp3_group_next_flat(&g)) {
			table_room(f, m);
			S53(no_md_entries_order_id)(&g, &e.id);
			if (S53(no_md_entries_md_order_priority)(&g, &e.priority) != 0)
				e.priority = UINT64_MAX;
			S53(no_md_entries_md_entry_px)(&g, &e.px);
			S53(no_md_entries_md_display_qty)(&g, &qty);
			S53(no_md_entries_md_entry_type)(&g, &e.type);
			if ((e.type != MDP3_MD_ENTRY_TYPE_BOOK_BID &&
					e.type != MDP3_MD_ENTRY_TYPE_BOOK_OFFER) || qty < 0 ||
					book__price_normalize(e.px.mantissa, e.px.exponent,
						in->price_exponent, &price) < 0 ||
					order_find_at(m, e.id, &at) != BOOK__NIL) {
				f->counters.mbo_bad_entries++;
				continue;
			}
			if (add_order(f, m, e.id, e.priority, price, qty,
						e.type == MDP3_MD_ENTRY_TYPE_BOOK_BID ? BOOK_BID :
						BOOK_ASK, at) != DONE_NEW)
				return;  /* overflow: emptied, marked, counted */
		}
	}
	if (chunk < chunks) {
		m->snap_next_chunk++;
		return;
	}
	m->loading = false;
	set_state(f, m, BOOK_MBO_VALID);
	f->counters.mbo_snapshots++;
	touch(f, m, BOOK__MBO_SIDES);
	if (f->rec_count > 0)
		book__replay(f, sid, last_seq, true);
	if (!book__buffering(f))
		book__recovery_clear(f);
}

/* ------------------------------------------------------------------------ */
/* The oracle                                                                 */
/* ------------------------------------------------------------------------ */

/* Nonzero when an aggregated level and a price level differ (no branch). */
static inline uint64_t
level_differs(int64_t price, int64_t qty, uint32_t orders, const struct book_level *b)
{
	return (uint64_t)(price ^ b->price) | (uint64_t)(qty ^ b->qty) |
	       (uint64_t)(orders ^ (uint32_t)b->orders);
}

/* Whether a side differs anywhere in its first depth levels, lv just past
 * its best level (the usual answer, no: one pass without branches).  Always
 * BOOK_MAX_DEPTH levels, those past depth masked out: instruments of
 * different depths follow one another in the checks, and a trip count that
 * changes with them mispredicts.  Out of line, so that the full-depth pass
 * below keeps its registers. */
static __attribute__((noinline)) bool
side_differs_masked(const struct book__mbo_level *lv, const struct book_level *mbp,
		    unsigned int depth)
{
	uint64_t d = 0;
	unsigned int i;

	for (i = 0; i < BOOK_MAX_DEPTH; i++) {
		--lv;
		d |= level_differs(lv->price, lv->qty, lv->orders, &mbp[i]) &
			-(uint64_t)(i < depth);
	}
	return d != 0;
}

uint16_t
book__simd_bits(uint16_t max)
{
#ifdef BOOK__AVX2
	if (max != 128 && __builtin_cpu_supports("avx2"))
		return 256;
	return 128;
#else
	(void)max;
	return 0;
#endif
}

#ifdef BOOK__AVX2
_Static_assert(sizeof(struct book__mbo_level) == 32 &&
	       offsetof(struct book__mbo_level, orders) == 16 &&
	       offsetof(struct book_level, orders) == 16 && sizeof(struct book_level) == 24,
	       "a level in one 32-byte load, price, qty and orders in its first 20 bytes");
_Static_assert(offsetof(struct book_instrument, ask) ==
	       offsetof(struct book_instrument, bid) + sizeof(((struct book_instrument *)0)->bid) &&
	       offsetof(struct book_instrument, ask) + sizeof(((struct book_instrument *)0)->ask) +
	       8 <= sizeof(struct book_instrument),
	       "the 32-byte load of a side's last level stays in the instrument");

/* Whether a side differs anywhere in its first depth levels, lv just past
 * its best level, mbp an instrument's bid or ask: one 32-byte xor a level
 * (AVX2), its first 20 bytes kept (price, qty, orders; the MBO level's
 * list links and the price level's reserved field and the 8 bytes after
 * it, still inside the instrument, are masked out): ~4 instructions a
 * level against ~8 for two 16-byte compares.  bench_feed: MBO+MBP / MBP
 * 2.02-2.07 -> 2.00-2.03 (RESULTS.md, issue 17). */
static __attribute__((target("avx2"), noinline)) bool
side_differs_avx2(const struct book__mbo_level *lv, const struct book_level *mbp,
		  unsigned int depth)
{
	const __m256i keep = _mm256_setr_epi32(-1, -1, -1, -1, -1, 0, 0, 0);
	__m256i acc = _mm256_setzero_si256();
	unsigned int i;

	for (i = 0; i < depth; i++) {
		--lv;
		acc = _mm256_or_si256(acc, _mm256_and_si256(keep, _mm256_xor_si256(
				_mm256_loadu_si256((const __m256i *)lv),
				_mm256_loadu_si256((const __m256i *)&mbp[i]))));
	}
	return !_mm256_testz_si256(acc, acc);
}
#endif

/* Whether side differs anywhere in its first depth levels.  At the usual
 * depth (BOOK_MAX_DEPTH), nothing to mask: price and qty in one 16-byte
 * compare and the order count in another, ~6 instructions a level against
 * ~13 for the masked pass. */
static inline bool
side_differs(const struct book_feed *f, const struct book_mbo *m, unsigned int side,
	     const struct book_level *mbp, unsigned int depth)
{
	/* best is last; below the worst lie BOOK_MAX_DEPTH empty levels */
	const struct book__mbo_level *lv = &m->levels[side][m->nlevels[side]];

#ifdef BOOK__AVX2
	if (f->mbo_avx2)
		return side_differs_avx2(lv, mbp, depth);
#else
	(void)f;
#endif

#ifdef __SSE2__
	if (__builtin_expect(depth == BOOK_MAX_DEPTH, 1)) {
		__m128i acc = _mm_setzero_si128();
		unsigned int i;

		_Static_assert(offsetof(struct book__mbo_level, qty) == 8 &&
			       offsetof(struct book_level, qty) == 8, "price, qty: 16 bytes");
		for (i = 0; i < BOOK_MAX_DEPTH; i++) {
			--lv;
			acc = _mm_or_si128(acc, _mm_xor_si128(_mm_loadu_si128((const __m128i *)lv),
					_mm_loadu_si128((const __m128i *)&mbp[i])));
			acc = _mm_or_si128(acc, _mm_xor_si128(_mm_cvtsi32_si128((int)lv->orders),
					_mm_cvtsi32_si128(mbp[i].orders)));
		}
		return _mm_movemask_epi8(_mm_cmpeq_epi8(acc, _mm_setzero_si128())) != 0xffff;
	}
#endif
	return side_differs_masked(lv, mbp, depth);
}

/* The differences of one side, level by level (only when there is one). */
static __attribute__((noinline, cold)) unsigned int
side_diffs(const struct book__walk_ctx *c, const struct book_mbo *m, unsigned int side,
	   const struct book_instrument *in, const struct book_level *mbp)
{
	struct book_feed *f = c->feed;
	const uint32_t n = m->nlevels[side];
	struct book_level agg;
	unsigned int i, diffs = 0;

	for (i = 0; i < in->depth; i++) {
		if (i < n) {
			const struct book__mbo_level *lv = &m->levels[side][n - 1 - i];

			agg.price = lv->price;
			agg.qty = lv->qty;
			agg.orders = (int32_t)lv->orders;
		} else {
			agg.price = BOOK_PRICE_NONE;
			agg.qty = 0;
			agg.orders = 0;
		}
		agg.reserved = 0;
		if (level_differs(agg.price, agg.qty, (uint32_t)agg.orders, &mbp[i]) == 0)
			continue;
		diffs++;
		if (f->mbo_diff_count < f->config.mbo_diffs) {
			struct book_mbo_diff *d = &f->mbo_diffs[f->mbo_diff_count++];

			d->security_id = in->security_id;
			d->msg_seq_num = c->seq;
			d->side = (uint8_t)side;
			d->level = (uint8_t)(i + 1);
			d->mbo = agg;
			d->mbp = mbp[i];
		}
	}
	return diffs;
}

static void
compare(const struct book__walk_ctx *c, struct book_mbo *m, const struct book_instrument *in)
{
	struct book_feed *f = c->feed;
	unsigned int diffs = 0, sides = m->check_sides, side;
	const struct book_level *mbp;

	f->counters.mbo_checks++;
	m->check_sides = 0;
	/* only the sides that changed in either book since the last comparison
	 * (an unchanged side was compared then), each picked by its index: a
	 * branch on each side's bit mispredicts, as an event changes one side
	 * or the other at random */
	while (sides != 0) {
		side = (unsigned int)__builtin_ctz(sides);
		sides &= sides - 1;
		mbp = side == BOOK_BID ? in->bid : in->ask;
		if (__builtin_expect(side_differs(f, m, side, mbp, in->depth), 0))
			diffs += side_diffs(c, m, side, in, mbp);
	}
	if (diffs != 0) {
		f->counters.mbo_mismatches++;
		f->counters.mbo_level_diffs += diffs;
	}
}

void
book__mbo_check(const struct book__walk_ctx *c)
{
	struct book_feed *f = c->feed;
	uint32_t i, kept = 0;

	for (i = 0; i < f->mbo_check_count; i++) {
		struct book_mbo *m = &f->mbo_books[f->mbo_check[i]];
		const struct book_instrument *in;

		m->listed = false;
		if (m->state != BOOK_MBO_VALID || m->instrument == BOOK__NIL)
			continue;
		in = &f->instruments[m->instrument];
		if (in->state != BOOK_STATE_OK || !(in->flags & BOOK_INSTRUMENT_COMPLETE))
			continue;
		/* the price levels as of the end of a packet not yet past (a 52
		 * came ahead of the incrementals it covers, perhaps of this one):
		 * the orders of the packets up to it are still to come; compare
		 * once the incrementals are past it */
		if (m->mbp_ahead && (int32_t)(c->seq - m->mbp_ahead_seq) <= 0) {
			f->counters.mbo_checks_ahead++;
			m->listed = true;
			f->mbo_check[kept++] = f->mbo_check[i];
			continue;
		}
		m->mbp_ahead = false;
		compare(c, m, in);
	}
	f->mbo_check_count = kept;
}

/* ------------------------------------------------------------------------ */
/* Queries                                                                    */
/* ------------------------------------------------------------------------ */

const struct book_mbo *
book_feed_mbo(const struct book_feed *feed, int32_t security_id)
{
	const struct book_instrument *in;
	uint32_t b;

	if (feed == NULL) {
		errno = EINVAL;
		return NULL;
	}
	in = feed->mbo_on ? book_feed_find(feed, security_id) : NULL;
	b = in != NULL ? in->mbo : BOOK__NIL;
	if (b >= BOOK__MBO_REFUSED) {
		errno = ENOENT;
		return NULL;
	}
	return &feed->mbo_books[b];
}

enum book_mbo_state
book_mbo_state(const struct book_mbo *mbo)
{
	return mbo != NULL ? (enum book_mbo_state)mbo->state : BOOK_MBO_STALE;
}

static bool
readable(const struct book_mbo *mbo)
{
	return mbo->state <= BOOK_MBO_PARTIAL;
}

static void
order_out(const struct book__mbo_order *o, struct book_order *out)
{
	out->order_id = o->id;
	out->priority = o->priority;
	out->price = o->price;
	out->qty = o->qty;
	out->side = o->side;
}

uint32_t
book_mbo_order_count(const struct book_mbo *mbo)
{
	return mbo != NULL && readable(mbo) ? mbo->order_count : 0;
}

int
book_mbo_order(const struct book_mbo *mbo, uint64_t order_id, struct book_order *out)
{
	uint32_t o;

	if (mbo == NULL || out == NULL)
		return -EINVAL;
	if (!readable(mbo))
		return -ESTALE;
	o = order_find(mbo, order_id);
	if (o == BOOK__NIL)
		return -ENOENT;
	order_out(&mbo->orders[o], out);
	return 0;
}

int
book_mbo_levels(const struct book_mbo *mbo, enum book_side side, struct book_level *out,
		unsigned int max)
{
	uint32_t n, i;

	if (mbo == NULL || (out == NULL && max > 0) || (unsigned int)side > BOOK_ASK)
		return -EINVAL;
	if (!readable(mbo))
		return -ESTALE;
	n = mbo->nlevels[side];
	for (i = 0; i < n && i < max; i++) {
		const struct book__mbo_level *lv = &mbo->levels[side][n - 1 - i];

		out[i].price = lv->price;
		out[i].qty = lv->qty;
		out[i].orders = (int32_t)lv->orders;
		out[i].reserved = 0;
	}
	return (int)i;
}

int
book_mbo_level_orders(const struct book_mbo *mbo, enum book_side side, int64_t price,
		struct book_order *out, unsigned int max)
{
	const struct book__mbo_level *lv;
	unsigned int n = 0;
	uint32_t o;

	if (mbo == NULL || (out == NULL && max > 0) || (unsigned int)side > BOOK_ASK)
		return -EINVAL;
	if (!readable(mbo))
		return -ESTALE;
	lv = level_find(mbo, side, price);
	if (lv == NULL)
		return -ENOENT;
	for (o = lv->head; o != BOOK__NIL && n < max; o = mbo->orders[o].next)
		order_out(&mbo->orders[o], &out[n++]);
	return (int)n;
}

/* Sum the orders of lv ahead of the first that stop() says is not ahead. */
#define QUEUE_WALK(mbo, lv, out, ahead_cond)                                       \
	do {                                                                       \
		uint32_t o_;                                                       \
		for (o_ = (lv)->head; o_ != BOOK__NIL; o_ = (mbo)->orders[o_].next) { \
			const struct book__mbo_order *q_ = &(mbo)->orders[o_];     \
			if (!(ahead_cond))                                         \
				break;                                             \
			(out)->orders_ahead++;                                     \
			(out)->qty_ahead += q_->qty;                               \
		}                                                                  \
	} while (0)

static int
queue_begin(const struct book_mbo *mbo, enum book_side side, int64_t price,
		struct book_mbo_queue *out, const struct book__mbo_level **lv)
{
	if (mbo == NULL || out == NULL || (unsigned int)side > BOOK_ASK)
		return -EINVAL;
	if (mbo->state != BOOK_MBO_VALID)
		return -ESTALE;
	memset(out, 0, sizeof(*out));
	out->price = price;
	*lv = level_find(mbo, side, price);
	if (*lv != NULL) {
		out->level_qty = (*lv)->qty;
		out->level_orders = (*lv)->orders;
	}
	return 0;
}

int
book_mbo_queue_by_order(const struct book_mbo *mbo, enum book_side side, int64_t price,
		uint64_t order_id, struct book_mbo_queue *out)
{
	const struct book__mbo_level *lv;
	uint32_t o;
	int rc = queue_begin(mbo, side, price, out, &lv);

	if (rc < 0)
		return rc;
	o = order_find(mbo, order_id);
	if (lv == NULL || o == BOOK__NIL || mbo->orders[o].side != side ||
			mbo->orders[o].price != price)
		return -ENOENT;
	QUEUE_WALK(mbo, lv, out, q_->id != order_id);
	return 0;
}

int
book_mbo_queue_by_priority(const struct book_mbo *mbo, enum book_side side, int64_t price,
		uint64_t priority, struct book_mbo_queue *out)
{
	const struct book__mbo_level *lv;
	int rc = queue_begin(mbo, side, price, out, &lv);

	if (rc < 0 || lv == NULL)
		return rc;
	QUEUE_WALK(mbo, lv, out, q_->priority <= priority);
	return 0;
}

int
book_mbo_queue_back(const struct book_mbo *mbo, enum book_side side, int64_t price,
		uint64_t *priority)
{
	const struct book__mbo_level *lv;

	if (mbo == NULL || priority == NULL || (unsigned int)side > BOOK_ASK)
		return -EINVAL;
	if (mbo->state != BOOK_MBO_VALID)
		return -ESTALE;
	lv = level_find(mbo, side, price);
	*priority = lv != NULL && lv->tail != BOOK__NIL ? mbo->orders[lv->tail].priority : 0;
	return 0;
}

uint64_t
book_mbo_hash(const struct book_mbo *mbo)
{
	uint64_t h = UINT64_C(0xbb67ae8584caa73b);

	if (mbo == NULL)
		return 0;
	h = book__mix(h, (uint64_t)(uint32_t)mbo->security_id);
	h = book__mix(h, mbo->state);
	if (!readable(mbo))
		goto out;
	for (unsigned int side = 0; side < 2; side++) {
		/* best first: the arrays are sorted worst to best */
		for (uint32_t l = mbo->nlevels[side]; l-- > 0;) {
			const struct book__mbo_level *lv = &mbo->levels[side][l];

			h = book__mix(h, (uint64_t)lv->price);
			h = book__mix(h, (uint64_t)lv->qty);
			h = book__mix(h, lv->orders);
			for (uint32_t o = lv->head; o != BOOK__NIL; o = mbo->orders[o].next) {
				h = book__mix(h, mbo->orders[o].id);
				h = book__mix(h, mbo->orders[o].priority);
				h = book__mix(h, (uint64_t)mbo->orders[o].qty);
			}
		}
		h = book__mix(h, UINT64_C(0x5151));  /* the sides apart */
	}
out:
	return book__hash_finish(h);
}

uint64_t
book_feed_mbo_hash(const struct book_feed *feed)
{
	uint64_t h = 0;

	if (feed == NULL || !feed->mbo_on)
		return 0;
	for (uint32_t i = 0; i < feed->high_water; i++) {
		const uint32_t b = feed->instruments[i].mbo;

		if ((feed->instruments[i].flags & BOOK_INSTRUMENT_IN_USE) &&
		    b < feed->config.mbo_instruments)
			h += book_mbo_hash(&feed->mbo_books[b]);
	}
	return h;
}

int
book_feed_mbo_diffs(const struct book_feed *feed, struct book_mbo_diff *out, unsigned int max)
{
	uint32_t i;

	if (feed == NULL || (out == NULL && max > 0))
		return -EINVAL;
	for (i = 0; i < feed->mbo_diff_count && i < max; i++)
		out[i] = feed->mbo_diffs[i];
	return (int)i;
}

const char *
book_mbo_state_name(enum book_mbo_state state)
{
	switch (state) {
	case BOOK_MBO_VALID:
		return "valid";
	case BOOK_MBO_PARTIAL:
		return "partial";
	case BOOK_MBO_STALE:
		return "stale";
	case BOOK_MBO_OVERFLOW:
		return "overflow";
	default:
		return "?";
	}
}
