/* SPDX-License-Identifier: BSD-3-Clause
 * Seed corpora of the iLink 3 harnesses, written at build time with the
 * lib/ilink3 encoder (fuzz_il3_encode()).
 *
 *   fuzz_il3_seeds DECODE_DIR SESSION_DIR STAMP
 *
 * DECODE_DIR (fuzz_il3_decode: a byte stream from the gateway): every
 * template of the schema with 0, 1 and 2 entries per group, each also as
 * wire version 5; frames of an unknown template and schema; a session's
 * worth of gateway messages in one stream; every template in one stream.
 * SESSION_DIR (fuzz_il3_session: start flags, then operations, fuzz_il3.h):
 * the handshake played by the input; an established session with fills, a
 * gap, its retransmission, cancel, replace, heartbeats and a terminate; a
 * restart with a frame in doubt and NotApplied; rejects; timeouts; every
 * template delivered in turn.  STAMP gets the count of seeds written.  Exit
 * 0, or 1 when a file cannot be written.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_il3.h"

#define SEED_MAX 65536

struct seed {
	uint8_t bytes[SEED_MAX];
	size_t length;
};

static int failures, written;

static void
save(const char *dir, const char *name, const struct seed *seed)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (f == NULL || fwrite(seed->bytes, 1, seed->length, f) != seed->length ||
			fclose(f) != 0) {
		fprintf(stderr, "fuzz_il3_seeds: %s: %s\n", path, strerror(errno));
		failures++;
	}
	written++;
}

static void
append(struct seed *seed, const void *bytes, size_t length)
{
	if (length > SEED_MAX - seed->length)
		length = SEED_MAX - seed->length;
	memcpy(seed->bytes + seed->length, bytes, length);
	seed->length += length;
}

/* Append one encoded frame; returns its length (0 if it cannot be written). */
static size_t
frame(struct seed *seed, uint16_t template_id, const struct fuzz_il3_leaf *leaves,
		unsigned int count, unsigned int entries)
{
	uint8_t buf[8192];
	int n = fuzz_il3_encode(buf, sizeof(buf), template_id, leaves, count, entries);

	if (n <= 0)
		return 0;
	append(seed, buf, (size_t)n);
	return (size_t)n;
}

/* ---- decoder seeds ---- */

static void
decode_seeds(const char *dir)
{
	static const struct fuzz_il3_leaf leaves[] = {
		{ "SeqNum", 1 }, { "UUID", FUZZ_IL3_T0_NS / 1000 }, { "OrderQty", 5 },
		{ "Price.mantissa", 4500250000000 }, { "SecurityID", 13950 }, { "Side", 1 },
		{ "NextSeqNo", 1 }, { "KeepAliveInterval", FUZZ_IL3_KEEP_ALIVE_MS },
	};
	const unsigned int count = sizeof(leaves) / sizeof(leaves[0]);
	static struct seed one, all, session;
	char name[64];
	unsigned int template_id, entries;
	size_t start;

	all.length = 0;
	for (template_id = IL3_TEMPLATE_MIN; template_id <= IL3_TEMPLATE_MAX; template_id++) {
		for (entries = 0; entries <= 2; entries++) {
			one.length = 0;
			if (frame(&one, (uint16_t)template_id, leaves, count, entries) == 0)
				break;
			snprintf(name, sizeof(name), "t%u-e%u", template_id, entries);
			save(dir, name, &one);
			if (entries == 1)
				append(&all, one.bytes, one.length);
			if (il3_lookup(IL3_SCHEMA_VERSION_MIN, (uint16_t)template_id) == NULL)
				continue;
			il3__store_uint16(one.bytes + 10, IL3_SCHEMA_VERSION_MIN);
			snprintf(name, sizeof(name), "t%u-e%u-v%u", template_id, entries,
					IL3_SCHEMA_VERSION_MIN);
			save(dir, name, &one);
		}
	}
	save(dir, "stream-every-template", &all);

	one.length = 0;
	frame(&one, IL3_TEMPLATE_SEQUENCE506, leaves, count, 0);
	il3__store_uint16(one.bytes + 6, 511);          /* a template the schema lacks */
	start = one.length;
	frame(&one, IL3_TEMPLATE_SEQUENCE506, leaves, count, 0);
	il3__store_uint16(one.bytes + start + 8, 9);    /* another schema id */
	frame(&one, IL3_TEMPLATE_EXECUTION_REPORT_NEW522, leaves, count, 0);
	save(dir, "stream-skips", &one);

	session.length = 0;
	frame(&session, IL3_TEMPLATE_NEGOTIATION_RESPONSE501, leaves, count, 0);
	frame(&session, IL3_TEMPLATE_ESTABLISHMENT_ACK504, leaves, count, 0);
	frame(&session, IL3_TEMPLATE_EXECUTION_REPORT_NEW522, leaves, count, 0);
	frame(&session, IL3_TEMPLATE_EXECUTION_REPORT_TRADE_OUTRIGHT525, leaves, count, 2);
	frame(&session, IL3_TEMPLATE_SEQUENCE506, leaves, count, 0);
	frame(&session, IL3_TEMPLATE_EXECUTION_REPORT_CANCEL534, leaves, count, 0);
	frame(&session, IL3_TEMPLATE_TERMINATE507, leaves, count, 0);
	save(dir, "stream-session", &session);
	session.length -= 7;                            /* the last frame cut short */
	save(dir, "stream-session-cut", &session);
}

/* ---- session seeds ---- */

static void
op(struct seed *seed, enum fuzz_il3_op code, const void *arg, size_t length)
{
	uint8_t head[3] = { (uint8_t)code, (uint8_t)length, (uint8_t)(length >> 8) };

	append(seed, head, sizeof(head));
	append(seed, arg, length);
}

/* The gateway sends one frame. */
static void
gateway(struct seed *seed, uint16_t template_id, const struct fuzz_il3_leaf *leaves,
		unsigned int count, unsigned int entries)
{
	static struct seed one;

	one.length = 0;
	frame(&one, template_id, leaves, count, entries);
	op(seed, FUZZ_IL3_OP_BYTES, one.bytes, one.length);
}

/* An execution report of SeqNum @p seq (PossRetransFlag @p retransmitted). */
static void
report(struct seed *seed, uint16_t template_id, uint32_t seq, bool retransmitted)
{
	const struct fuzz_il3_leaf leaves[] = {
		{ "SeqNum", seq }, { "UUID", FUZZ_IL3_T0_NS / 1000 }, { "OrderQty", 3 },
		{ "Price.mantissa", 4500250000000 }, { "SecurityID", 13950 }, { "Side", 1 },
		{ "PossRetransFlag", retransmitted }, { "ClOrdID", 0x31 },
	};

	gateway(seed, template_id, leaves, sizeof(leaves) / sizeof(leaves[0]), 2);
}

static void
wait_ms(struct seed *seed, uint16_t ms)
{
	uint8_t arg[2] = { (uint8_t)ms, (uint8_t)(ms >> 8) };

	op(seed, FUZZ_IL3_OP_WAIT, arg, sizeof(arg));
}

static void
session_seeds(const char *dir)
{
	const uint64_t uuid = FUZZ_IL3_T0_NS / 1000;
	const struct fuzz_il3_leaf handshake[] = {
		{ "UUID", uuid }, { "NextSeqNo", 1 }, { "KeepAliveInterval", FUZZ_IL3_KEEP_ALIVE_MS },
	};
	const struct fuzz_il3_leaf resumed[] = {
		{ "UUID", FUZZ_IL3_JOURNAL_UUID }, { "NextSeqNo", FUZZ_IL3_JOURNAL_NEXT_IN + 5 },
		{ "KeepAliveInterval", FUZZ_IL3_KEEP_ALIVE_MS },
	};
	const struct fuzz_il3_leaf sequence[] = {
		{ "UUID", uuid }, { "NextSeqNo", 12 }, { "KeepAliveIntervalLapsed", 1 },
	};
	const struct fuzz_il3_leaf retransmission[] = {
		{ "UUID", uuid }, { "FromSeqNo", 3 }, { "MsgCount", 2 },
	};
	const struct fuzz_il3_leaf not_applied[] = {
		{ "UUID", FUZZ_IL3_JOURNAL_UUID }, { "FromSeqNo", FUZZ_IL3_JOURNAL_NEXT_OUT - 1 },
		{ "MsgCount", 1 },
	};
	const uint8_t order[8] = { 0, 0, 2, 0, 0x10, 0x27, 0, 0 };
	const uint8_t cancel[8] = { 0, 0, 1, 0, 0x10, 0x27, 0, 1 };
	const uint8_t retransmit[6] = { 20, 0, 0, 0, 5, 0 };
	const uint8_t flags_established = FUZZ_IL3_START_ESTABLISHED;
	static struct seed s;
	unsigned int template_id, seq = 1;

	/* the handshake played by the input, then a report and a heartbeat */
	s.length = 0;
	append(&s, "\0", 1);
	gateway(&s, IL3_TEMPLATE_NEGOTIATION_RESPONSE501, handshake, 3, 0);
	gateway(&s, IL3_TEMPLATE_ESTABLISHMENT_ACK504, handshake, 3, 0);
	op(&s, FUZZ_IL3_OP_ORDER, order, sizeof(order));
	report(&s, IL3_TEMPLATE_EXECUTION_REPORT_NEW522, 1, false);
	wait_ms(&s, 1500);
	gateway(&s, IL3_TEMPLATE_SEQUENCE506, sequence, 3, 0);
	wait_ms(&s, 2500);
	save(dir, "handshake-by-input", &s);

	/* established: fills, a gap and its retransmission, modify, terminate */
	s.length = 0;
	append(&s, &flags_established, 1);
	op(&s, FUZZ_IL3_OP_ORDER, order, sizeof(order));
	report(&s, IL3_TEMPLATE_EXECUTION_REPORT_NEW522, 1, false);
	report(&s, IL3_TEMPLATE_EXECUTION_REPORT_TRADE_OUTRIGHT525, 2, false);
	report(&s, IL3_TEMPLATE_EXECUTION_REPORT_MODIFY531, 5, false);
	gateway(&s, IL3_TEMPLATE_RETRANSMISSION509, retransmission, 3, 0);
	report(&s, IL3_TEMPLATE_EXECUTION_REPORT_STATUS532, 3, true);
	report(&s, IL3_TEMPLATE_EXECUTION_REPORT_CANCEL534, 4, true);
	op(&s, FUZZ_IL3_OP_MODIFY, cancel, sizeof(cancel));
	op(&s, FUZZ_IL3_OP_MODIFY, order, sizeof(order));
	gateway(&s, IL3_TEMPLATE_SEQUENCE506, sequence, 3, 0);
	gateway(&s, IL3_TEMPLATE_RETRANSMIT_REJECT510, retransmission, 3, 0);
	op(&s, FUZZ_IL3_OP_RETRANSMIT, retransmit, sizeof(retransmit));
	wait_ms(&s, 3000);
	op(&s, FUZZ_IL3_OP_END, NULL, 0);
	gateway(&s, IL3_TEMPLATE_TERMINATE507, handshake, 1, 0);
	op(&s, FUZZ_IL3_OP_END, NULL, 0);
	save(dir, "established-flow", &s);

	/* restart with a frame in doubt: NotApplied, resend, then a new order */
	s.length = 0;
	append(&s, (const uint8_t[]){ FUZZ_IL3_START_ESTABLISHED | FUZZ_IL3_START_JOURNAL_UUID |
			FUZZ_IL3_START_JOURNAL_PENDING }, 1);
	gateway(&s, IL3_TEMPLATE_NOT_APPLIED513, not_applied, 3, 0);
	op(&s, FUZZ_IL3_OP_ORDER, order, sizeof(order));
	gateway(&s, IL3_TEMPLATE_NOT_APPLIED513, not_applied, 3, 0);
	save(dir, "restart-in-doubt", &s);

	/* resume a journaled session: EstablishmentAck announces a gap */
	s.length = 0;
	append(&s, (const uint8_t[]){ FUZZ_IL3_START_JOURNAL_UUID }, 1);
	gateway(&s, IL3_TEMPLATE_ESTABLISHMENT_ACK504, resumed, 3, 0);
	gateway(&s, IL3_TEMPLATE_RETRANSMISSION509, retransmission, 3, 0);
	wait_ms(&s, 2100);
	wait_ms(&s, 2100);
	save(dir, "resume-with-gap", &s);

	/* rejects and timeouts, with reconnects */
	s.length = 0;
	append(&s, "\0", 1);
	gateway(&s, IL3_TEMPLATE_NEGOTIATION_REJECT502, handshake, 1, 0);
	op(&s, FUZZ_IL3_OP_END, NULL, 0);
	wait_ms(&s, 2500);
	op(&s, FUZZ_IL3_OP_END, (const uint8_t[]){ 1 }, 1);
	gateway(&s, IL3_TEMPLATE_NEGOTIATION_RESPONSE501, handshake, 1, 0);
	gateway(&s, IL3_TEMPLATE_ESTABLISHMENT_REJECT505, handshake, 1, 0);
	save(dir, "rejects-and-timeouts", &s);

	/* every template the gateway could send, in turn */
	s.length = 0;
	append(&s, &flags_established, 1);
	for (template_id = IL3_TEMPLATE_MIN; template_id <= IL3_TEMPLATE_MAX; template_id++)
		if (il3_lookup_encode((uint16_t)template_id) != NULL)
			report(&s, (uint16_t)template_id, seq++, false);
	save(dir, "every-template", &s);
}

int
main(int argc, char **argv)
{
	FILE *stamp;

	if (argc != 4) {
		fprintf(stderr, "usage: fuzz_il3_seeds DECODE_DIR SESSION_DIR STAMP\n");
		return 2;
	}
	if ((mkdir(argv[1], 0755) < 0 && errno != EEXIST) ||
			(mkdir(argv[2], 0755) < 0 && errno != EEXIST)) {
		fprintf(stderr, "fuzz_il3_seeds: mkdir: %s\n", strerror(errno));
		return 1;
	}
	decode_seeds(argv[1]);
	session_seeds(argv[2]);
	stamp = fopen(argv[3], "w");
	if (stamp == NULL || fprintf(stamp, "%d seeds in %s and %s\n", written, argv[1],
			argv[2]) < 0 || fclose(stamp) != 0)
		failures++;
	return failures == 0 ? 0 : 1;
}
