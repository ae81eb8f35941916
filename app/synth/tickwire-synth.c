/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tickwire-synth: write synthetic CME MDP 3.0 captures (incremental feeds A
 * and B, the snapshot channel) with a JSON-lines manifest of every message
 * and the truth of every book, for tests and demos.  See app/synth/README.md.
 *
 * Flow: market events arrive by a Hawkes process; each becomes SBE messages
 * (synth_market.c) that are coalesced into packets: a packet is sent when the
 * next event falls outside its coalescing window or a message does not fit.
 * Sending a packet assigns its MsgSeqNum and SendingTime, applies its entries
 * to the truth books, writes the manifest and truth lines, offers a copy to
 * each incremental feed (drops, duplicates, reordering, A/B skew) and, while a
 * snapshot loop runs, one SnapshotFullRefresh52 to the snapshot channel.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "synth_gen.h"
#include "synth_layout_gen.h"

#define EXIT_USAGE 2
#define PROG "tickwire-synth"

#define NS_PER_MS UINT64_C(1000000)
/* Heartbeats in one idle spell at most (a tiny --burst-mu would write millions). */
#define SYNTH_MAX_IDLE_HEARTBEATS 1000
#define DEFAULT_START_NS UINT64_C(1709562600000000000) /* 2024-03-04 14:30:00 UTC */

/* ---- small helpers ---- */

static void
put_le32(uint8_t *p, uint32_t v)
{
	unsigned int i;

	for (i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void
put_le64(uint8_t *p, uint64_t v)
{
	unsigned int i;

	for (i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t
ipv4(unsigned int a, unsigned int b, unsigned int c, unsigned int d)
{
	return (uint32_t)a << 24 | (uint32_t)b << 16 | (uint32_t)c << 8 | d;
}

static void
set_error(struct synth_gen *gen, int rc, const char *path)
{
	if (gen->error == 0) {
		gen->error = rc;
		gen->error_path = path;
	}
}

/* ---- truth ---- */

static void
print_side(FILE *f, const struct synth_side *s, bool orders)
{
	unsigned int l;

	fputc('[', f);
	for (l = 0; l < s->count; l++) {
		fprintf(f, "%s[%" PRId64 ",%" PRId32, l > 0 ? "," : "", s->level[l].px,
				s->level[l].size);
		if (orders)
			fprintf(f, ",%" PRId32, s->level[l].orders);
		fputc(']', f);
	}
	fputc(']', f);
}

static void
write_truth_book(struct synth_gen *gen, uint32_t seq, const struct synth_instrument *inst,
		bool final)
{
	const struct synth_book *t = &inst->truth;
	FILE *f = gen->truth;

	fprintf(f, "{\"seq\":%" PRIu32 ",%s\"security_id\":%" PRId32 ",\"symbol\":\"%s\","
			"\"rpt_seq\":%" PRIu32 ",\"status\":%u,\"depth\":%u,\"bids\":", seq,
			final ? "\"final\":true," : "", t->security_id, inst->symbol, t->rpt_seq,
			t->status, t->depth);
	print_side(f, &t->side[SYNTH_SIDE_BID], true);
	fputs(",\"offers\":", f);
	print_side(f, &t->side[SYNTH_SIDE_OFFER], true);
	fputs(",\"implied_bids\":", f);
	print_side(f, &t->side[SYNTH_SIDE_IMPLIED_BID], false);
	fputs(",\"implied_offers\":", f);
	print_side(f, &t->side[SYNTH_SIDE_IMPLIED_OFFER], false);
	if (t->has_trade)
		fprintf(f, ",\"last_trade\":[%" PRId64 ",%" PRId32 "]}\n", t->trade_px,
				t->trade_size);
	else
		fputs(",\"last_trade\":null}\n", f);
}

/* ---- manifest ---- */

static void
write_manifest_line(struct synth_gen *gen, const char *channel, uint32_t seq,
		uint64_t sending_time, unsigned int index, const struct synth_pending *m)
{
	fprintf(gen->manifest, "{\"channel\":\"%s\",\"seq\":%" PRIu32 ",\"sending_time\":%"
			PRIu64 ",\"msg\":%u,\"size\":%u,\"block_length\":%u,\"template_id\":%u,"
			"\"schema_id\":1,\"version\":%u,\"name\":\"%s\",\"origin\":\"%s\","
			"\"event\":", channel, seq, sending_time, index, m->size, m->block_length,
			m->template_id, gen->opt->version, m->name, m->origin);
	if (m->event >= 0)
		fprintf(gen->manifest, "%" PRId64, m->event);
	else
		fputs("null", gen->manifest);
	fprintf(gen->manifest, ",\"fields\":%s}\n", m->fields_json);
}

static char *
render_fields(const struct synth_msg *msg)
{
	char *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);

	if (f == NULL)
		return NULL;
	synth_msg_print_fields(f, msg);
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

/* ---- snapshot channel ---- */

/* gen->snapshot_msg alone in a snapshot packet at t. */
static int
snapshot_send(struct synth_gen *gen, uint64_t t)
{
	struct synth_pending m;
	uint16_t len;
	int rc;

	rc = synth_msg_encode(gen->snapshot_msg, gen->snapshot_data + SYNTH_PACKET_HEADER_SIZE,
			gen->max_payload - SYNTH_PACKET_HEADER_SIZE);
	if (rc < 0)
		return rc;
	len = (uint16_t)(SYNTH_PACKET_HEADER_SIZE + rc);
	put_le32(gen->snapshot_data, ++gen->snapshot_seq);
	put_le64(gen->snapshot_data + 4, t);
	if (gen->manifest != NULL) {
		m.size = (uint16_t)rc;
		m.block_length = gen->snapshot_msg->layout->root.block_length;
		m.template_id = gen->snapshot_msg->layout->template_id;
		m.name = gen->snapshot_msg->layout->name;
		m.origin = "snapshot";
		m.event = -1;
		m.fields_json = render_fields(gen->snapshot_msg);
		if (m.fields_json == NULL)
			return -ENOMEM;
		write_manifest_line(gen, "snapshot", gen->snapshot_seq, t, 0, &m);
		free(m.fields_json);
	}
	rc = synth_feed_send(&gen->snapshot, t + 2000, gen->snapshot_data, len, false);
	if (rc < 0) {
		set_error(gen, rc, gen->snapshot.path);
		return rc;
	}
	gen->counters.snapshot_packets++;
	gen->counters.templates[gen->snapshot_msg->layout->template_id]++;
	return 0;
}

static int
snapshot_step(struct synth_gen *gen, uint32_t seq, uint64_t sending_time)
{
	uint32_t chunk, chunks = 1;
	int rc;

	if (!gen->loop_active && seq % gen->opt->snapshot_every == 0) {
		gen->loop_active = true;
		gen->loop_next = 0;
		gen->snapshot_seq = 0;
		gen->counters.snapshot_loops++;
	}
	if (!gen->loop_active)
		return 0;
	rc = synth_market_snapshot(gen, gen->snapshot_msg, gen->loop_next, seq,
			gen->instrument_count);
	if (rc == 0)
		rc = snapshot_send(gen, sending_time + 500);
	/* --mbo: the same instrument's orders, same LastMsgSeqNumProcessed, in chunks */
	for (chunk = 1; rc == 0 && gen->mbo != NULL && chunk <= chunks; chunk++) {
		rc = synth_mbo_snapshot(gen, gen->snapshot_msg, gen->loop_next, seq,
				gen->instrument_count, chunk, &chunks);
		if (rc == 0)
			rc = snapshot_send(gen, sending_time + 500 + chunk);
	}
	if (rc < 0)
		return rc;
	if (++gen->loop_next >= gen->instrument_count)
		gen->loop_active = false;
	return 0;
}

/* ---- incremental channel ---- */

static bool
in_gap(const struct synth_options *opt, uint32_t seq)
{
	unsigned int i;

	for (i = 0; i < opt->gap_count; i++)
		if (seq >= opt->gaps[i].first && seq - opt->gaps[i].first < opt->gaps[i].count)
			return true;
	return false;
}

static int
apply_ops(struct synth_gen *gen, uint32_t seq, bool *reset)
{
	const struct synth_packet *pk = gen->packet;
	struct synth_instrument *inst;
	const struct synth_op *op;
	unsigned int k, i;

	for (k = 0; k < pk->op_count; k++) {
		op = &pk->ops[k];
		inst = &gen->inst[op->instrument];
		switch (op->kind) {
		case SYNTH_OP_BOOK:
			if (synth_book_apply(&inst->truth, &op->book) < 0)
				return -EPROTO;
			inst->truth.rpt_seq = op->rpt_seq;
			inst->truth.transact_time = op->transact_time;
			break;
		case SYNTH_OP_TRADE:
			inst->truth.has_trade = true;
			inst->truth.trade_px = op->book.px;
			inst->truth.trade_size = op->book.size;
			inst->truth.rpt_seq = op->rpt_seq;
			inst->truth.transact_time = op->transact_time;
			break;
		case SYNTH_OP_STATUS:
			inst->truth.status = op->status;
			break;
		case SYNTH_OP_ORDER:
			if (synth_mbo_apply(&gen->mbo->truth[op->instrument], op) < 0)
				return -EPROTO;
			break;
		case SYNTH_OP_RESET:
			for (i = 0; i < gen->instrument_count; i++) {
				if (gen->mbo != NULL)
					synth_mbo_clear(&gen->mbo->truth[i]);
				synth_book_clear(&gen->inst[i].truth);
				gen->inst[i].touched = false;
			}
			gen->loop_active = false; /* CME drops the snapshots of the channel */
			gen->counters.reset_seq = seq;
			*reset = true;
			continue;
		}
		inst->touched = true;
	}
	return 0;
}

static bool
skew_model(const struct synth_options *opt)
{
	return opt->skew_lead_ns != 0 || opt->skew_tail[0] != 0 || opt->skew_tail[1] != 0;
}

/* Exponential of mean mean_ns; one draw. */
static uint64_t
exponential_ns(struct synth_rng *rng, uint64_t mean_ns)
{
	return (uint64_t)(((unsigned __int128)synth_fx_neg_ln(synth_rng_unit(rng)) * mean_ns) >>
			32);
}

int
synth_gen_flush(struct synth_gen *gen)
{
	const struct synth_options *opt = gen->opt;
	struct synth_packet *pk = gen->packet;
	uint64_t sending, time_a, time_b;
	bool reset = false, gap;
	uint32_t seq;
	unsigned int k, i;
	int rc;

	if (pk->msg_count == 0)
		return 0;
	seq = gen->next_seq++;
	sending = pk->last_time + (uint64_t)synth_rng_range(&gen->timing_rng, 1000, 4000);
	if (sending <= gen->last_sending_time)
		sending = gen->last_sending_time + 1;
	gen->last_sending_time = sending;
	put_le32(pk->data, seq);
	put_le64(pk->data + 4, sending);
	rc = apply_ops(gen, seq, &reset);
	if (rc < 0)
		return rc;
	if (gen->manifest != NULL)
		for (k = 0; k < pk->msg_count; k++)
			write_manifest_line(gen, "incremental", seq, sending, k, &pk->msgs[k]);
	time_a = sending + (uint64_t)synth_rng_range(&gen->timing_rng, 2000, 2300);
	time_b = time_a + (uint64_t)synth_rng_range(&gen->timing_rng, -(int64_t)opt->skew_ns,
			(int64_t)opt->skew_ns);
	if (skew_model(opt)) {
		/* Drawn only with the model on: the default captures keep their bytes. */
		time_b -= opt->skew_lead_ns;
		if (synth_rng_chance(&gen->timing_rng, opt->skew_tail[0]))
			time_a += exponential_ns(&gen->timing_rng, opt->skew_tail_ns[0]);
		if (synth_rng_chance(&gen->timing_rng, opt->skew_tail[1]))
			time_b += exponential_ns(&gen->timing_rng, opt->skew_tail_ns[1]);
	}
	if (time_b < sending)
		time_b = sending;
	gap = in_gap(opt, seq);
	rc = synth_feed_send(&gen->feed[0], time_a, pk->data, pk->len, gap);
	if (rc < 0) {
		set_error(gen, rc, gen->feed[0].path);
		return rc;
	}
	rc = synth_feed_send(&gen->feed[1], time_b, pk->data, pk->len, gap);
	if (rc < 0) {
		set_error(gen, rc, gen->feed[1].path);
		return rc;
	}
	if (gen->truth != NULL && opt->truth_every) {
		if (reset)
			fprintf(gen->truth, "{\"seq\":%" PRIu32 ",\"channel_reset\":true}\n", seq);
		for (i = 0; i < gen->instrument_count; i++)
			if (gen->inst[i].touched)
				write_truth_book(gen, seq, &gen->inst[i], false);
	}
	for (i = 0; i < gen->instrument_count; i++)
		gen->inst[i].touched = false;
	for (k = 0; k < pk->msg_count; k++)
		free(pk->msgs[k].fields_json);
	gen->counters.incremental_packets++;
	pk->msg_count = 0;
	pk->op_count = 0;
	pk->len = 0;
	if (gen->has_snapshot && gen->snapshots_enabled)
		return snapshot_step(gen, seq, sending);
	return 0;
}

int
synth_gen_emit(struct synth_gen *gen)
{
	struct synth_packet *pk = gen->packet;
	const struct synth_msg *msg = gen->msg;
	size_t size = synth_msg_size(msg);
	struct synth_pending *m;
	int rc;

	if (size + SYNTH_PACKET_HEADER_SIZE > gen->max_payload)
		return -EMSGSIZE;
	if (pk->msg_count > 0 && (pk->len + size > gen->max_payload ||
			pk->msg_count >= SYNTH_MAX_PACKET_MSGS ||
			pk->op_count + gen->msg_op_count > SYNTH_MAX_PACKET_OPS)) {
		rc = synth_gen_flush(gen);
		if (rc < 0)
			return rc;
	}
	if (pk->msg_count == 0) {
		pk->len = SYNTH_PACKET_HEADER_SIZE;
		pk->open_time = gen->event_time;
	}
	rc = synth_msg_encode(msg, pk->data + pk->len, gen->max_payload - pk->len);
	if (rc < 0)
		return rc;
	m = &pk->msgs[pk->msg_count++];
	m->size = (uint16_t)rc;
	m->block_length = msg->layout->root.block_length;
	m->template_id = msg->layout->template_id;
	m->name = msg->layout->name;
	m->origin = gen->origin;
	m->event = gen->event_index;
	m->fields_json = NULL;
	if (gen->manifest != NULL) {
		m->fields_json = render_fields(msg);
		if (m->fields_json == NULL)
			return -ENOMEM;
	}
	pk->len = (uint16_t)(pk->len + rc);
	memcpy(&pk->ops[pk->op_count], gen->msg_ops, gen->msg_op_count * sizeof(gen->msg_ops[0]));
	pk->op_count += gen->msg_op_count;
	gen->msg_op_count = 0;
	pk->last_time = gen->event_time;
	gen->counters.messages++;
	gen->counters.templates[msg->layout->template_id < 64 ? msg->layout->template_id : 0]++;
	return 0;
}

static int
heartbeat(struct synth_gen *gen, uint64_t time_ns)
{
	int rc = synth_msg_init(gen->msg, SYNTH_T_HEARTBEAT12, gen->opt->version);

	if (rc < 0)
		return rc;
	gen->event_time = time_ns;
	gen->origin = "heartbeat";
	gen->event_index = -1;
	gen->msg_op_count = 0;
	rc = synth_gen_emit(gen);
	return rc < 0 ? rc : synth_gen_flush(gen);
}

int
synth_gen_begin_event(struct synth_gen *gen, uint64_t time_ns, const char *origin,
		int64_t index)
{
	const struct synth_options *opt = gen->opt;
	struct synth_packet *pk = gen->packet;
	bool hawkes = index >= 0;
	unsigned int beats = 0;
	int rc;

	if (pk->msg_count > 0 && time_ns > pk->open_time + opt->coalesce_ns) {
		rc = synth_gen_flush(gen);
		if (rc < 0)
			return rc;
	}
	while (hawkes && opt->heartbeat_ns > 0 && pk->msg_count == 0 &&
			time_ns > gen->last_sending_time + opt->heartbeat_ns &&
			beats++ < SYNTH_MAX_IDLE_HEARTBEATS) {
		rc = heartbeat(gen, gen->last_sending_time + opt->heartbeat_ns);
		if (rc < 0)
			return rc;
	}
	if (hawkes && opt->reset_at != 0 && !gen->reset_done) {
		/* The reset takes MsgSeqNum reset_at unless an event straddled it. */
		if (pk->msg_count > 0 && gen->next_seq + 1 >= opt->reset_at) {
			rc = synth_gen_flush(gen);
			if (rc < 0)
				return rc;
		}
		if (pk->msg_count == 0 && gen->next_seq >= opt->reset_at) {
			gen->reset_done = true;
			gen->event_time = time_ns;
			gen->origin = "reset";
			gen->event_index = -1;
			rc = synth_market_reset(gen);
			if (rc < 0)
				return rc;
		}
	}
	gen->event_time = time_ns;
	gen->origin = origin;
	gen->event_index = index;
	return 0;
}

/* ---- options ---- */

static void
usage(FILE *f)
{
	fprintf(f,
		"usage: " PROG " --out-a A.pcap --out-b B.pcap [options]\n"
		"Write synthetic CME MDP 3.0 captures (classic pcap, ns) of one channel.\n"
		"Outputs:\n"
		"  --out-a FILE          incremental feed A (224.0.31.1, port 14000+channel)\n"
		"  --out-b FILE          incremental feed B (224.0.32.1, port 15000+channel)\n"
		"  --snapshot FILE       snapshot channel (224.0.31.22, port 14000+channel)\n"
		"  --manifest FILE       JSON lines: every message encoded, all field values\n"
		"  --truth FILE          JSON lines: the final book of every instrument\n"
		"  --truth-every         also the books changed by each MsgSeqNum\n"
		"  --stats               counters as JSON on stderr\n"
		"Content:\n"
		"  --seed N              PRNG seed (default 1); same seed, same bytes\n"
		"  --instruments K       instruments, 1..%u (default 8)\n"
		"  --events E            market events after the start of day (default 10000)\n"
		"  --schema-version V    9 or 13 (default 9)\n"
		"  --channel N           channel id (ApplID, ports), 1..999 (default 310)\n"
		"  --reset-at SEQ        ChannelReset4 in packet SEQ (the next one if an event\n"
		"                        straddles it), then every book is rebuilt\n"
		"  --reset-first         ChannelReset4 alone in packet 1, before the start of\n"
		"                        day: a looped replay starts each pass with clean books\n"
		"  --snapshot-every N    start a snapshot loop every N packets (default 500)\n"
		"  --mbo                 market by order too: order entries (46 NoOrderIDEntries,\n"
		"                        47) consistent with the price levels, and 53 snapshots\n"
		"Arrivals (Hawkes, rates per second; alpha < beta):\n"
		"  --preset NAME         arrivals fitted to a CME capture: cme-340 (CBOT\n"
		"                        commodities, 16.5 packets/s) or cme-320 (FX, 5.8/s);\n"
		"                        sets the options of this group and the skew model;\n"
		"                        options after it override\n"
		"  --burst-mu R          base rate (default 1000)\n"
		"  --burst-alpha R       intensity jump per event (default 8000; 0 = Poisson)\n"
		"  --burst-beta R        decay rate (default 10000)\n"
		"  --burst-kernel A:B    one more kernel, jump A and decay B (repeatable, up to\n"
		"                        %u); branching ratios sum(alpha/beta) < 1\n"
		"  --event-batch P       an arrival carries one more market event with\n"
		"                        probability P, repeatedly (default 0)\n"
		"  --coalesce-ns N       events within N ns share a packet (default 20000)\n"
		"  --mtu BYTES           700..1500 (default 1500: payload <= 1472)\n"
		"  --heartbeat-ms N      AdminHeartbeat12 after N ms idle (default 100, 0 = off)\n"
		"  --start-ns T          first SendingTime, ns since 1970 (default 2024-03-04)\n"
		"Impairments (probabilities 0..1, per packet and feed):\n"
		"  --drop-a P --drop-b P --dup-a P --dup-b P --reorder-a P --reorder-b P\n"
		"  --skew-ns N           B arrives within +-N ns of A (default 300)\n"
		"  --skew-lead-ns N      B arrives N ns before A on average (default 0)\n"
		"  --skew-tail-a P:NS    A's copy is late by an exponential of mean NS ns with\n"
		"                        probability P (default 0:0); --skew-tail-b for B\n"
		"  --gap SEQ[:COUNT]     drop COUNT (default 1) packets from SEQ on both feeds\n"
		"                        (repeatable, up to %u)\n"
		"Exit: 0 written; 1 an output failed; 2 usage.\n",
		SYNTH_MAX_INSTRUMENTS, SYNTH_HAWKES_KERNELS - 1, SYNTH_MAX_GAPS);
}

static int
bad_option(const char *option, const char *value, const char *what, const char *hint)
{
	fprintf(stderr, PROG ": %s '%s': %s; hint: %s\n", option, value, what, hint);
	return -EINVAL;
}

static int
parse_u64(const char *option, const char *value, uint64_t min, uint64_t max, uint64_t *out,
		const char *hint)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(value, &end, 10);
	if (value[0] == '\0' || value[0] == '-' || *end != '\0' || errno != 0 || v < min ||
			v > max) {
		char what[96];

		snprintf(what, sizeof(what), "not an integer in [%" PRIu64 ", %" PRIu64 "]", min,
				max);
		return bad_option(option, value, what, hint);
	}
	*out = v;
	return 0;
}

static int
parse_probability(const char *option, const char *value, uint64_t *out)
{
	if (synth_fx_parse(value, out) < 0 || *out > SYNTH_FX_ONE)
		return bad_option(option, value, "not a probability in [0, 1]",
				"0.01 means 1% of the packets");
	return 0;
}

static int
parse_rate(const char *option, const char *value, uint64_t *out)
{
	if (synth_fx_parse(value, out) < 0)
		return bad_option(option, value, "not a rate (a non-negative decimal, per second)",
				"e.g. --burst-mu 1000 --burst-alpha 8000 --burst-beta 10000");
	return 0;
}

static int
parse_gap(struct synth_options *opt, const char *value)
{
	static const char hint[] = "--gap 1200:5 drops packets 1200..1204 on both feeds";
	unsigned long long first, count = 1;
	char *end;

	if (opt->gap_count >= SYNTH_MAX_GAPS)
		return bad_option("--gap", value, "too many gaps", "merge neighbouring gaps");
	errno = 0;
	first = strtoull(value, &end, 10);
	if (*end == ':')
		count = strtoull(end + 1, &end, 10);
	if (value[0] < '0' || value[0] > '9' || *end != '\0' || errno != 0 || first == 0 ||
			first > UINT32_MAX || count == 0 || count > 1000000)
		return bad_option("--gap", value,
				"not SEQ or SEQ:COUNT (SEQ >= 1, COUNT 1..1000000)", hint);
	opt->gaps[opt->gap_count].first = (uint32_t)first;
	opt->gaps[opt->gap_count].count = (uint32_t)count;
	opt->gap_count++;
	return 0;
}

static const char *option_name(const struct option *longopts, int c);

/* Sum of the branching ratios of every kernel, Q32.32 (saturating). */
static uint64_t
branching(const struct synth_options *opt)
{
	unsigned __int128 sum = 0;
	unsigned int k;

	if (opt->beta != 0)
		sum += ((unsigned __int128)opt->alpha << 32) / opt->beta;
	for (k = 0; k < opt->kernel_count; k++)
		sum += ((unsigned __int128)opt->kernel_alpha[k] << 32) / opt->kernel_beta[k];
	return sum > UINT64_MAX ? UINT64_MAX : (uint64_t)sum;
}

/* "A:B" of two decimals into Q32.32; A and B are copied to a scratch buffer. */
static int
parse_pair(const char *value, uint64_t *first, uint64_t *second, bool integer_second)
{
	char buf[64];
	char *colon;

	if (strlen(value) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, value);
	colon = strchr(buf, ':');
	if (colon == NULL)
		return -EINVAL;
	*colon = '\0';
	if (synth_fx_parse(buf, first) < 0 || synth_fx_parse(colon + 1, second) < 0)
		return -EINVAL;
	if (integer_second)
		*second >>= 32;
	return 0;
}

static int
parse_kernel(struct synth_options *opt, const char *name, const char *value)
{
	static const char hint[] = "--burst-kernel 2:0.5 adds a kernel of branching ratio 0.8 "
			"and time scale 2 s";
	uint64_t alpha, beta;

	if (parse_pair(value, &alpha, &beta, false) < 0 || beta == 0)
		return bad_option(name, value, "not ALPHA:BETA, two rates per second with BETA > 0",
				hint);
	if (opt->kernel_count >= SYNTH_HAWKES_KERNELS - 1)
		return bad_option(name, value, "too many kernels", "at most 5 --burst-kernel");
	opt->kernel_alpha[opt->kernel_count] = alpha;
	opt->kernel_beta[opt->kernel_count] = beta;
	opt->kernel_count++;
	return 0;
}

static int
parse_skew_tail(struct synth_options *opt, const char *name, const char *value, bool b)
{
	uint64_t p, mean;

	if (parse_pair(value, &p, &mean, true) < 0 || p > SYNTH_FX_ONE || mean > 1000000)
		return bad_option(name, value, "not P:NS, a probability and a mean delay in ns "
				"(at most 1 ms)", "--skew-tail-a 0.08:2000");
	opt->skew_tail[b] = p;
	opt->skew_tail_ns[b] = mean;
	return 0;
}

/*
 * Arrival presets fitted to the public captures of channels 340 and 320 (see
 * README.md, Calibration): kernels as ALPHA:BETA strings, parsed like the
 * options so a preset is exactly the command line it stands for.
 */
struct synth_preset {
	const char *name;
	const char *mu;
	const char *kernels[SYNTH_HAWKES_KERNELS]; /* first: --burst-alpha:--burst-beta */
	const char *batch;
	uint64_t coalesce_ns;
	uint64_t heartbeat_ms;
	uint64_t skew_ns;
	uint64_t skew_lead_ns;
	const char *skew_tail_a;
	const char *skew_tail_b;
};

static const struct synth_preset presets[] = {
	{ "cme-340", "0.125807", { "10111.561085:20000", "347.513321:1000", "4.21478:50", "0.090754:1.731581", "0.001013:0.123562" }, "0.338472", 20000, 30000, 165, 261, "0.08:2000", "0.03:1000" },
	{ "cme-320", "0.033784", { "12414.740063:20000", "213.613739:1000", "1.836028:50", "0.148567:2.183875", "0.013791:0.234144" }, "0.090814", 2709, 30000, 420, 589, "0.11:3000", "0.16:1000" },
};

static int
apply_preset(struct synth_options *opt, const char *name, const char *value)
{
	const struct synth_preset *p = NULL;
	unsigned int i;
	int rc;

	for (i = 0; i < sizeof(presets) / sizeof(presets[0]); i++)
		if (strcmp(presets[i].name, value) == 0)
			p = &presets[i];
	if (p == NULL)
		return bad_option(name, value, "unknown preset", "cme-340 or cme-320");
	rc = synth_fx_parse(p->mu, &opt->mu);
	if (rc == 0)
		rc = parse_pair(p->kernels[0], &opt->alpha, &opt->beta, false);
	opt->kernel_count = 0;
	for (i = 1; rc == 0 && i < SYNTH_HAWKES_KERNELS && p->kernels[i] != NULL; i++)
		rc = parse_kernel(opt, name, p->kernels[i]);
	if (rc == 0)
		rc = synth_fx_parse(p->batch, &opt->batch);
	if (rc == 0)
		rc = parse_skew_tail(opt, name, p->skew_tail_a, false);
	if (rc == 0)
		rc = parse_skew_tail(opt, name, p->skew_tail_b, true);
	opt->coalesce_ns = p->coalesce_ns;
	opt->heartbeat_ns = p->heartbeat_ms * NS_PER_MS;
	opt->skew_ns = p->skew_ns;
	opt->skew_lead_ns = p->skew_lead_ns;
	return rc < 0 ? -EINVAL : 0;
}

enum {
	OPT_OUT_A = 256, OPT_OUT_B, OPT_SNAPSHOT, OPT_MANIFEST, OPT_TRUTH, OPT_TRUTH_EVERY,
	OPT_STATS, OPT_SEED, OPT_INSTRUMENTS, OPT_EVENTS, OPT_SCHEMA, OPT_CHANNEL, OPT_RESET,
	OPT_SNAP_EVERY, OPT_MU, OPT_ALPHA, OPT_BETA, OPT_COALESCE, OPT_MTU, OPT_HEARTBEAT,
	OPT_START, OPT_DROP_A, OPT_DROP_B, OPT_DUP_A, OPT_DUP_B, OPT_REORDER_A, OPT_REORDER_B,
	OPT_SKEW, OPT_GAP, OPT_HELP, OPT_PRESET, OPT_KERNEL, OPT_BATCH, OPT_SKEW_LEAD,
	OPT_SKEW_TAIL_A, OPT_SKEW_TAIL_B, OPT_RESET_FIRST, OPT_MBO,
};

static int
parse_options(int argc, char **argv, struct synth_options *opt)
{
	static const struct option longopts[] = {
		{ "out-a", required_argument, NULL, OPT_OUT_A },
		{ "out-b", required_argument, NULL, OPT_OUT_B },
		{ "snapshot", required_argument, NULL, OPT_SNAPSHOT },
		{ "manifest", required_argument, NULL, OPT_MANIFEST },
		{ "truth", required_argument, NULL, OPT_TRUTH },
		{ "truth-every", no_argument, NULL, OPT_TRUTH_EVERY },
		{ "stats", no_argument, NULL, OPT_STATS },
		{ "seed", required_argument, NULL, OPT_SEED },
		{ "instruments", required_argument, NULL, OPT_INSTRUMENTS },
		{ "events", required_argument, NULL, OPT_EVENTS },
		{ "schema-version", required_argument, NULL, OPT_SCHEMA },
		{ "channel", required_argument, NULL, OPT_CHANNEL },
		{ "reset-at", required_argument, NULL, OPT_RESET },
		{ "reset-first", no_argument, NULL, OPT_RESET_FIRST },
		{ "mbo", no_argument, NULL, OPT_MBO },
		{ "snapshot-every", required_argument, NULL, OPT_SNAP_EVERY },
		{ "burst-mu", required_argument, NULL, OPT_MU },
		{ "burst-alpha", required_argument, NULL, OPT_ALPHA },
		{ "burst-beta", required_argument, NULL, OPT_BETA },
		{ "coalesce-ns", required_argument, NULL, OPT_COALESCE },
		{ "mtu", required_argument, NULL, OPT_MTU },
		{ "heartbeat-ms", required_argument, NULL, OPT_HEARTBEAT },
		{ "start-ns", required_argument, NULL, OPT_START },
		{ "drop-a", required_argument, NULL, OPT_DROP_A },
		{ "drop-b", required_argument, NULL, OPT_DROP_B },
		{ "dup-a", required_argument, NULL, OPT_DUP_A },
		{ "dup-b", required_argument, NULL, OPT_DUP_B },
		{ "reorder-a", required_argument, NULL, OPT_REORDER_A },
		{ "reorder-b", required_argument, NULL, OPT_REORDER_B },
		{ "skew-ns", required_argument, NULL, OPT_SKEW },
		{ "gap", required_argument, NULL, OPT_GAP },
		{ "help", no_argument, NULL, OPT_HELP },
		{ "preset", required_argument, NULL, OPT_PRESET },
		{ "burst-kernel", required_argument, NULL, OPT_KERNEL },
		{ "event-batch", required_argument, NULL, OPT_BATCH },
		{ "skew-lead-ns", required_argument, NULL, OPT_SKEW_LEAD },
		{ "skew-tail-a", required_argument, NULL, OPT_SKEW_TAIL_A },
		{ "skew-tail-b", required_argument, NULL, OPT_SKEW_TAIL_B },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t v;
	int c, rc = 0;

	memset(opt, 0, sizeof(*opt));
	opt->seed = 1;
	opt->instruments = 8;
	opt->events = 10000;
	opt->version = 9;
	opt->channel = 310;
	opt->snapshot_every = 500;
	opt->mu = UINT64_C(1000) << 32;
	opt->alpha = UINT64_C(8000) << 32;
	opt->beta = UINT64_C(10000) << 32;
	opt->coalesce_ns = 20000;
	opt->mtu = 1500;
	opt->heartbeat_ns = 100 * NS_PER_MS;
	opt->start_ns = DEFAULT_START_NS;
	opt->skew_ns = 300;
	while (rc == 0 && (c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		const char *name = option_name(longopts, c);

		switch (c) {
		case OPT_OUT_A:
			opt->out_a = optarg;
			break;
		case OPT_OUT_B:
			opt->out_b = optarg;
			break;
		case OPT_SNAPSHOT:
			opt->out_snapshot = optarg;
			break;
		case OPT_MANIFEST:
			opt->manifest = optarg;
			break;
		case OPT_TRUTH:
			opt->truth = optarg;
			break;
		case OPT_TRUTH_EVERY:
			opt->truth_every = true;
			break;
		case OPT_STATS:
			opt->stats = true;
			break;
		case OPT_SEED:
			rc = parse_u64(name, optarg, 0, UINT64_MAX, &opt->seed,
					"any unsigned integer");
			break;
		case OPT_INSTRUMENTS:
			rc = parse_u64(name, optarg, 1, SYNTH_MAX_INSTRUMENTS, &v,
					"the generator keeps every book in memory");
			opt->instruments = (unsigned int)v;
			break;
		case OPT_EVENTS:
			rc = parse_u64(name, optarg, 0, 100000000, &opt->events,
					"about 1.07 messages per event");
			break;
		case OPT_SCHEMA:
			rc = parse_u64(name, optarg, 0, 65535, &v, "use 9 or 13");
			if (rc == 0 && synth_layout_find(SYNTH_T_BOOK46, (uint16_t)v) == NULL)
				rc = bad_option(name, optarg,
						"no encoder layout for that schema version",
						"use 9 or 13 (app/synth/README.md: adding one)");
			opt->version = (uint16_t)v;
			break;
		case OPT_CHANNEL:
			rc = parse_u64(name, optarg, 1, 999, &v,
					"CME channels are 3-digit numbers");
			opt->channel = (uint16_t)v;
			break;
		case OPT_RESET:
			rc = parse_u64(name, optarg, 2, UINT32_MAX, &v,
					"a packet MsgSeqNum after the start of day");
			opt->reset_at = (uint32_t)v;
			break;
		case OPT_RESET_FIRST:
			opt->reset_first = true;
			break;
		case OPT_MBO:
			opt->mbo = true;
			break;
		case OPT_SNAP_EVERY:
			rc = parse_u64(name, optarg, 1, UINT32_MAX, &v, "in incremental packets");
			opt->snapshot_every = (uint32_t)v;
			break;
		case OPT_MU:
			rc = parse_rate(name, optarg, &opt->mu);
			break;
		case OPT_ALPHA:
			rc = parse_rate(name, optarg, &opt->alpha);
			break;
		case OPT_BETA:
			rc = parse_rate(name, optarg, &opt->beta);
			break;
		case OPT_COALESCE:
			rc = parse_u64(name, optarg, 0, UINT64_C(1000000000), &opt->coalesce_ns,
					"0 sends every event in its own packet");
			break;
		case OPT_MTU:
			rc = parse_u64(name, optarg, 700, 1500, &v,
					"the UDP payload is the MTU minus 28 bytes; a full "
					"snapshot needs 700");
			opt->mtu = (uint32_t)v;
			break;
		case OPT_HEARTBEAT:
			rc = parse_u64(name, optarg, 0, 3600000, &v, "0 turns heartbeats off");
			opt->heartbeat_ns = v * NS_PER_MS;
			break;
		case OPT_START:
			rc = parse_u64(name, optarg, 0, UINT64_C(4000000000) * 1000000000u,
					&opt->start_ns, "nanoseconds since 1970-01-01");
			break;
		case OPT_DROP_A:
		case OPT_DROP_B:
			rc = parse_probability(name, optarg, &opt->drop[c == OPT_DROP_B]);
			break;
		case OPT_DUP_A:
		case OPT_DUP_B:
			rc = parse_probability(name, optarg, &opt->dup[c == OPT_DUP_B]);
			break;
		case OPT_REORDER_A:
		case OPT_REORDER_B:
			rc = parse_probability(name, optarg, &opt->reorder[c == OPT_REORDER_B]);
			break;
		case OPT_SKEW:
			rc = parse_u64(name, optarg, 0, 1000000, &opt->skew_ns, "at most 1 ms");
			break;
		case OPT_GAP:
			rc = parse_gap(opt, optarg);
			break;
		case OPT_PRESET:
			rc = apply_preset(opt, name, optarg);
			break;
		case OPT_KERNEL:
			rc = parse_kernel(opt, name, optarg);
			break;
		case OPT_BATCH:
			rc = parse_probability(name, optarg, &opt->batch);
			if (rc == 0 && opt->batch >= SYNTH_FX_ONE)
				rc = bad_option(name, optarg, "must be below 1",
						"0.5 gives 2 events per arrival on average");
			break;
		case OPT_SKEW_LEAD:
			rc = parse_u64(name, optarg, 0, 1000000, &opt->skew_lead_ns,
					"at most 1 ms");
			break;
		case OPT_SKEW_TAIL_A:
		case OPT_SKEW_TAIL_B:
			rc = parse_skew_tail(opt, name, optarg, c == OPT_SKEW_TAIL_B);
			break;
		case OPT_HELP:
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -EINVAL;
		}
	}
	if (rc < 0)
		return rc;
	if (optind < argc) {
		fprintf(stderr, PROG ": unexpected argument '%s'; hint: every input is an option "
				"(see --help)\n", argv[optind]);
		return -EINVAL;
	}
	if (opt->out_a == NULL || opt->out_b == NULL) {
		fprintf(stderr, PROG ": %s is missing; hint: both feeds are written, e.g. "
				"--out-a A.pcap --out-b B.pcap\n",
				opt->out_a == NULL ? "--out-a" : "--out-b");
		return -EINVAL;
	}
	if (opt->mu == 0) {
		fprintf(stderr, PROG ": --burst-mu must be above 0; hint: it is the base event "
				"rate per second\n");
		return -EINVAL;
	}
	if (opt->alpha >= opt->beta || branching(opt) >= SYNTH_FX_ONE) {
		fprintf(stderr, PROG ": the branching ratios of the kernels (--burst-alpha / "
				"--burst-beta plus each --burst-kernel's A/B) must sum below 1; "
				"hint: the process explodes otherwise\n");
		return -EINVAL;
	}
	if (opt->truth_every && opt->truth == NULL) {
		fprintf(stderr, PROG ": --truth-every needs --truth FILE; hint: add --truth "
				"truth.jsonl\n");
		return -EINVAL;
	}
	return 0;
}

static const char *
option_name(const struct option *longopts, int c)
{
	static char buf[40];
	unsigned int i;

	for (i = 0; longopts[i].name != NULL; i++) {
		if (longopts[i].val == c) {
			snprintf(buf, sizeof(buf), "--%s", longopts[i].name);
			return buf;
		}
	}
	return "option";
}

/* ---- setup and teardown ---- */

static int
open_text(FILE **f, const char *path)
{
	*f = fopen(path, "w");
	if (*f == NULL) {
		fprintf(stderr, PROG ": %s: cannot create: %s; hint: check that the directory "
				"exists and is writable\n", path, strerror(errno));
		return -errno;
	}
	return 0;
}

static int
open_feed(struct synth_feed *feed, const struct synth_options *opt, const char *name,
		const char *path, uint64_t stream)
{
	int rc;

	feed->name = name;
	feed->path = path;
	rc = synth_feed_open(feed, opt->seed, stream);
	if (rc < 0)
		fprintf(stderr, PROG ": %s: cannot create: %s; hint: check that the directory "
				"exists and is writable\n", path, strerror(-rc));
	return rc;
}

static int
open_outputs(struct synth_gen *gen)
{
	const struct synth_options *opt = gen->opt;
	struct synth_feed *a = &gen->feed[0], *b = &gen->feed[1], *s = &gen->snapshot;
	static const uint8_t mac_a[6] = { 0x02, 0x00, 0x5e, 0x10, 0x00, 0x0a };
	static const uint8_t mac_b[6] = { 0x02, 0x00, 0x5e, 0x10, 0x00, 0x0b };
	static const uint8_t mac_s[6] = { 0x02, 0x00, 0x5e, 0x10, 0x00, 0x05 };
	int rc;

	a->flow.src_ip = ipv4(205, 209, 221, 71);
	a->flow.dst_ip = ipv4(224, 0, 31, 1);
	a->flow.src_port = a->flow.dst_port = (uint16_t)(14000 + opt->channel);
	memcpy(a->flow.src_mac, mac_a, 6);
	a->drop = opt->drop[0];
	a->dup = opt->dup[0];
	a->reorder = opt->reorder[0];
	b->flow.src_ip = ipv4(205, 209, 212, 71);
	b->flow.dst_ip = ipv4(224, 0, 32, 1);
	b->flow.src_port = b->flow.dst_port = (uint16_t)(15000 + opt->channel);
	memcpy(b->flow.src_mac, mac_b, 6);
	b->drop = opt->drop[1];
	b->dup = opt->dup[1];
	b->reorder = opt->reorder[1];
	s->flow.src_ip = ipv4(205, 209, 222, 71);
	s->flow.dst_ip = ipv4(224, 0, 31, 22);
	s->flow.src_port = s->flow.dst_port = (uint16_t)(14000 + opt->channel);
	memcpy(s->flow.src_mac, mac_s, 6);
	rc = open_feed(a, opt, "A", opt->out_a, 0xa);
	if (rc == 0)
		rc = open_feed(b, opt, "B", opt->out_b, 0xb);
	if (rc == 0 && opt->out_snapshot != NULL) {
		rc = open_feed(s, opt, "snapshot", opt->out_snapshot, 0x5);
		gen->has_snapshot = rc == 0;
	}
	if (rc == 0 && opt->manifest != NULL)
		rc = open_text(&gen->manifest, opt->manifest);
	if (rc == 0 && opt->truth != NULL)
		rc = open_text(&gen->truth, opt->truth);
	return rc;
}

static void
write_failed(const char *path, int err)
{
	fprintf(stderr, PROG ": %s: write failed: %s; hint: check the free space\n", path,
			strerror(err));
}

static int
close_text(FILE *f, const char *path)
{
	bool bad;

	if (f == NULL)
		return 0;
	errno = 0;
	bad = ferror(f) != 0;
	if (fclose(f) != 0)
		bad = true;
	if (bad) {
		write_failed(path, errno != 0 ? errno : EIO);
		return -EIO;
	}
	return 0;
}

static int
close_outputs(struct synth_gen *gen)
{
	int status = 0, rc;
	unsigned int i;

	for (i = 0; i < 2; i++) {
		rc = synth_feed_close(&gen->feed[i]);
		if (rc < 0) {
			write_failed(gen->feed[i].path, -rc);
			status = rc;
		}
	}
	if (gen->has_snapshot) {
		rc = synth_feed_close(&gen->snapshot);
		if (rc < 0) {
			write_failed(gen->snapshot.path, -rc);
			status = rc;
		}
	}
	if (close_text(gen->manifest, gen->opt->manifest) < 0)
		status = -EIO;
	if (close_text(gen->truth, gen->opt->truth) < 0)
		status = -EIO;
	gen->manifest = NULL;
	gen->truth = NULL;
	return status;
}

static void
print_feed_stats(FILE *f, const char *name, const struct synth_feed_counters *c)
{
	fprintf(f, "\"%s\":{\"packets\":%" PRIu64 ",\"records\":%" PRIu64 ",\"dropped\":%" PRIu64
			",\"gap_dropped\":%" PRIu64 ",\"duplicated\":%" PRIu64 ",\"reordered\":%"
			PRIu64 "}", name, c->packets, c->records, c->dropped, c->gap_dropped,
			c->duplicated, c->reordered);
}

static void
print_stats(const struct synth_gen *gen)
{
	const struct synth_counters *c = &gen->counters;
	FILE *f = stderr;
	unsigned int i;
	bool first = true;

	fprintf(f, "{\"stats\":{\"incremental_packets\":%" PRIu64 ",\"messages\":%" PRIu64
			",\"last_seq\":%" PRIu32 ",\"events\":%" PRIu64 ",\"hawkes_candidates\":%"
			PRIu64 ",\"snapshot_packets\":%" PRIu64 ",\"snapshot_loops\":%" PRIu64
			",\"reset_seq\":%" PRIu32 ",\"implied_entries\":%" PRIu64
			",\"trade_entries\":%" PRIu64 ",\"actions\":[", c->incremental_packets,
			c->messages, gen->next_seq - 1, gen->hawkes.events, gen->hawkes.candidates,
			c->snapshot_packets, c->snapshot_loops, c->reset_seq, c->implied_entries,
			c->trade_entries);
	for (i = 0; i < 6; i++)
		fprintf(f, "%s%" PRIu64, i > 0 ? "," : "", c->actions[i]);
	fputs("],\"templates\":{", f);
	for (i = 0; i < 64; i++) {
		if (c->templates[i] == 0)
			continue;
		fprintf(f, "%s\"%u\":%" PRIu64, first ? "" : ",", i, c->templates[i]);
		first = false;
	}
	fputs("},", f);
	print_feed_stats(f, "a", &gen->feed[0].counters);
	fputc(',', f);
	print_feed_stats(f, "b", &gen->feed[1].counters);
	if (gen->mbo != NULL) {
		const struct synth_mbo_counters *m = &gen->mbo->counters;

		fprintf(f, ",\"mbo\":{\"level_entries\":%" PRIu64 ",\"order_entries_46\":%"
				PRIu64 ",\"order_entries_47\":%" PRIu64 ",\"new\":%" PRIu64
				",\"update\":%" PRIu64 ",\"delete\":%" PRIu64 ",\"qty_up\":%" PRIu64
				",\"priority_changes\":%" PRIu64 ",\"price_changes\":%" PRIu64
				",\"moves\":%" PRIu64 ",\"cancels\":%" PRIu64
				",\"fills\":%" PRIu64 ",\"snapshot53\":%" PRIu64 "}",
				m->level_entries, m->order_entries_46, m->order_entries_47,
				m->actions[0], m->actions[1], m->actions[2], m->qty_up,
				m->priority_changes, m->price_changes, m->moves, m->cancels,
				m->fills, m->snapshot53);
	}
	fputs("}}\n", f);
}

static int
run(struct synth_gen *gen)
{
	const struct synth_options *opt = gen->opt;
	uint64_t e, t = 0, next, batched = 0;
	unsigned int i;
	int rc;

	rc = 0;
	if (opt->reset_first) {
		rc = synth_gen_begin_event(gen, opt->start_ns, "reset", -1);
		if (rc == 0)
			rc = synth_market_reset_message(gen);
	}
	if (rc == 0)
		rc = synth_market_setup(gen);
	if (rc == 0)
		rc = synth_gen_flush(gen);
	gen->snapshots_enabled = true;
	for (e = 0; rc == 0 && e < opt->events; e++) {
		/* The events of one arrival are 1 ns apart: they share its packet. */
		if (batched > 0) {
			batched--;
			t++;
		} else {
			next = synth_hawkes_next(&gen->hawkes);
			t = next > t ? next : t + 1;
			while (opt->batch != 0 && synth_rng_chance(&gen->batch_rng, opt->batch))
				batched++;
		}
		rc = synth_gen_begin_event(gen, t, "event", (int64_t)e);
		if (rc == 0)
			rc = synth_market_event(gen);
	}
	if (rc == 0)
		rc = synth_gen_flush(gen);
	if (rc < 0)
		return rc;
	if (opt->reset_at != 0 && !gen->reset_done) {
		fprintf(stderr, PROG ": --reset-at %" PRIu32 ": the run ended at MsgSeqNum %"
				PRIu32 " before it; hint: lower --reset-at or raise --events\n",
				opt->reset_at, gen->next_seq - 1);
		return -ERANGE;
	}
	for (i = 0; i < gen->instrument_count; i++) {
		if (!synth_book_equal(&gen->inst[i].book, &gen->inst[i].truth)) {
			fprintf(stderr, PROG ": internal error: the book of %s differs from what "
					"its entries build; hint: report the command line\n",
					gen->inst[i].symbol);
			return -EPROTO;
		}
		if (gen->mbo != NULL && !synth_mbo_equal(&gen->mbo->book[i], &gen->mbo->truth[i])) {
			fprintf(stderr, PROG ": internal error: the orders of %s differ from what "
					"their entries build; hint: report the command line\n",
					gen->inst[i].symbol);
			return -EPROTO;
		}
		if (gen->truth != NULL)
			write_truth_book(gen, gen->next_seq - 1, &gen->inst[i], true);
	}
	return 0;
}

int
main(int argc, char **argv)
{
	struct synth_options opt;
	struct synth_gen *gen;
	unsigned int i;
	int rc, status;

	if (parse_options(argc, argv, &opt) < 0)
		return EXIT_USAGE;
	gen = calloc(1, sizeof(*gen));
	if (gen != NULL) {
		gen->inst = calloc(opt.instruments, sizeof(*gen->inst));
		gen->msg = malloc(sizeof(*gen->msg));
		gen->snapshot_msg = malloc(sizeof(*gen->snapshot_msg));
		gen->packet = calloc(1, sizeof(*gen->packet));
	}
	if (gen == NULL || gen->inst == NULL || gen->msg == NULL || gen->snapshot_msg == NULL ||
			gen->packet == NULL) {
		fprintf(stderr, PROG ": out of memory; hint: fewer --instruments\n");
		return 1;
	}
	gen->opt = &opt;
	gen->instrument_count = opt.instruments;
	gen->max_payload = (uint16_t)(opt.mtu - 28);
	gen->next_seq = 1;
	synth_rng_seed(&gen->market_rng, opt.seed, 1);
	synth_rng_seed(&gen->timing_rng, opt.seed, 2);
	synth_market_init(gen);
	if (opt.mbo) {
		gen->mbo = calloc(1, sizeof(*gen->mbo));
		if (gen->mbo != NULL) {
			gen->mbo->book = calloc(opt.instruments, sizeof(*gen->mbo->book));
			gen->mbo->truth = calloc(opt.instruments, sizeof(*gen->mbo->truth));
		}
		if (gen->mbo == NULL || gen->mbo->book == NULL || gen->mbo->truth == NULL) {
			fprintf(stderr, PROG ": out of memory; hint: fewer --instruments\n");
			return 1;
		}
		synth_rng_seed(&gen->mbo->rng, opt.seed, 4);
		for (i = 0; i < opt.instruments; i++) {
			/* OrderIDs and priorities of their own (48's aggressor ids stay) */
			gen->mbo->book[i].next_id = (uint64_t)(300000 + i) * 1000000u;
			gen->mbo->book[i].next_priority = UINT64_C(10000000000) * (i + 1);
		}
	}
	synth_rng_seed(&gen->batch_rng, opt.seed, 3);
	synth_hawkes_init(&gen->hawkes, opt.mu, opt.alpha, opt.beta, opt.start_ns + NS_PER_MS,
			opt.seed);
	for (i = 0; i < opt.kernel_count; i++)
		synth_hawkes_add_kernel(&gen->hawkes, opt.kernel_alpha[i], opt.kernel_beta[i]);
	rc = open_outputs(gen);
	if (rc == 0) {
		rc = run(gen);
		if (rc < 0 && gen->error != 0)
			write_failed(gen->error_path, -gen->error);
		else if (rc < 0 && rc != -ERANGE && rc != -EPROTO)
			fprintf(stderr, PROG ": generation failed: %s; hint: report the command "
					"line\n", strerror(-rc));
	}
	status = close_outputs(gen);
	if (rc == 0 && status == 0 && opt.stats)
		print_stats(gen);
	/* After an error the packet being filled was never sent. */
	for (i = 0; i < gen->packet->msg_count; i++)
		free(gen->packet->msgs[i].fields_json);
	free(gen->packet);
	free(gen->snapshot_msg);
	free(gen->msg);
	if (gen->mbo != NULL) {
		free(gen->mbo->book);
		free(gen->mbo->truth);
		free(gen->mbo);
	}
	free(gen->inst);
	free(gen);
	return rc == 0 && status == 0 ? 0 : 1;
}
