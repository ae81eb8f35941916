/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tickwire-ilink-sim: a CME iLink 3 gateway simulator for tests, loopback
 * TCP only (bound to 127.0.0.1).  One client connection at a time; further
 * connections wait in the listen backlog until the current one closes.
 *
 * Session layer (FIXP, lib/ilink3 codec):
 *  - Negotiate: HMAC-SHA256 over the canonical string with the key of the
 *    credentials file (same format as il3_credentials_load()) and the access
 *    key id must match, else NegotiationReject (code 0).  A new UUID starts a
 *    new session: both sequence numbers back to 1, the outbound store empty.
 *  - Establish: signature (else EstablishmentReject code 0), the negotiated
 *    UUID (else code 2), NextSeqNo not below the next expected (else code 7,
 *    the reject's NextSeqNo says what was expected), KeepAliveInterval > 0
 *    (else code 8).  EstablishmentAck carries our next outbound SeqNum.
 *  - Inbound sequence: a message (or Establish, or Sequence) whose number is
 *    ahead of the expected one gets NotApplied(expected, count).  The range
 *    stays open for a gap fill: a message numbered inside it is applied once,
 *    in order.  A Sequence received while the range is open closes it (the
 *    client gave up).  A number below the expected one (outside an open
 *    range) is a duplicate and is ignored.
 *  - Sequence heartbeats after one keep-alive interval without sending; a
 *    client silent for two intervals is sent Terminate and dropped.
 *  - RetransmitRequest: Retransmission then the stored originals with
 *    PossRetransFlag set; RetransmitReject when the range is not stored
 *    (the store keeps the last STORE_SIZE application messages) or the UUID
 *    is wrong.
 *  - Terminate is answered with Terminate and the connection closes.
 *
 * Application rule (documented in lib/ilink3/README.md):
 *  - NewOrderSingle: price <= 0 or quantity 0 -> ExecutionReportReject;
 *    quantity <= fill-max (default 10) -> ExecutionReportNew then a full
 *    ExecutionReportTradeOutright at the order price; otherwise
 *    ExecutionReportNew and the order rests (table of MAX_ORDERS; full ->
 *    reject).
 *  - OrderCancelRequest: a resting order (by OrderID, else ClOrdID) ->
 *    ExecutionReportCancel; unknown -> OrderCancelReject.
 *  - OrderCancelReplaceRequest: a resting order with a new price > 0 ->
 *    ExecutionReportModify (new price and quantity); unknown or price <= 0
 *    -> OrderCancelReplaceReject.
 *
 * Faults: --drop-after N (the N-th application message received: its replies
 * are sequenced and stored but the connection is closed instead of sending
 * them; once), --delay-ms D (sleep before each reply), --skip-seq-at N
 * (outbound SeqNum N is stored but not sent, so the client asks for it;
 * once).  Control commands on stdin, one per line, each answered with
 * "ok <command>" or "error <command>" on stdout:
 *   silence on|off     send nothing at all, detect no lapsed client (still
 *                      read and apply)
 *   drop               close the client connection now
 *   terminate          send Terminate to the client
 *   skip               withhold the next outbound SeqNum (as --skip-seq-at)
 *   skip-at N          withhold outbound SeqNum N (up to 8 pending)
 *   ignore-rr on|off   leave RetransmitRequests unanswered
 *                      ("retransmit-request-ignored from=F count=N")
 *   drop-after N       as the option, counted from now
 *   delay D            as --delay-ms
 *   status             "status uuid=U next_in=N next_out=M orders=K"
 *   owed-from N        the client's durable inbound position is N (the test
 *                      read it from the client's journal): on its next
 *                      Establish it must ask again for [N, our NextSeqNo)
 *   audit              the audit lines below, now
 * stdout: first line the bound port, then one line per event (see README).
 *
 * Audit (always on; --strict makes any violation the exit status 3): per
 * session UUID, across connections, what a client that survives crashes must
 * guarantee.  Inbound: every SeqNum applied once and none left unfilled
 * (applied == next_in - 1), no SeqNum received again outside a NotApplied
 * fill, no NewOrderSingle ClOrdID and no OrderRequestID applied twice.
 * Outbound: no RetransmitRequest we had to reject, and the range owed after
 * "owed-from" asked for again.  At exit one "audit ..." line per UUID and an
 * "audit-summary sessions=N violations=V untracked=U" line (untracked: UUIDs
 * or IDs beyond the tables, AUDIT_SESSIONS and 3/4 of AUDIT_IDS; counted as
 * violations under --strict, since they went unchecked).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "ilink3.h"

#define STORE_SIZE 4096          /* application messages kept for retransmission */
#define STORE_FRAME 512
#define MAX_ORDERS 1024
#define MAX_RETRANSMIT 2500      /* largest MsgCount honoured */
#define OUT_CAPACITY (1024 * 1024)
#define CONTROL_LINE 128
#define NS_PER_MS UINT64_C(1000000)
#define AUDIT_SESSIONS 16        /* UUIDs audited per run */
#define AUDIT_IDS 65536          /* ClOrdIDs + OrderRequestIDs remembered (power of two) */
#define EXIT_VIOLATIONS 3        /* --strict: the audit found a violation */

enum {
	REJECT_HMAC = 0,
	REJECT_UUID = 2,
	REJECT_SEQUENCE = 7,
	REJECT_KEEP_ALIVE = 8,
};

struct stored {
	uint32_t seq;
	bool owed;                   /* the client must ask for it again (audit) */
	uint16_t length;
	uint8_t frame[STORE_FRAME];
};

struct order {
	bool live;
	uint64_t order_id;
	char clordid[21];
	int32_t security_id;
	uint8_t side;
	uint32_t quantity;
	int64_t price;
};

/* What one session UUID's client did, across its connections. */
struct audit {
	uint64_t uuid;
	uint32_t establishes;
	uint32_t next_in, next_out;  /* the sim's numbers, as of the last audit_sync() */
	uint32_t applied;            /* application messages applied (fills included) */
	uint32_t fills;              /* of them, numbers of a NotApplied range */
	uint32_t duplicate_seq;      /* a SeqNum received again: reused */
	uint32_t duplicate_clordid;  /* a NewOrderSingle ClOrdID applied before */
	uint32_t duplicate_request;  /* an OrderRequestID applied before */
	uint32_t retransmitted;      /* messages sent again on RetransmitRequest */
	uint32_t retransmit_rejects;
	uint32_t unrequested;        /* owed messages that left the store unasked */
};

/* One identifier applied on a UUID: kind 'C' ClOrdID, 'R' OrderRequestID. */
struct audit_id {
	uint64_t uuid;               /* 0: free slot */
	char kind;
	char id[21];
};

struct sim {
	struct il3_credentials creds;
	bool strict;
	uint32_t fill_max;
	uint32_t drop_after;         /* 0: off */
	uint32_t delay_ms;
	uint32_t skip_seq[8];        /* outbound SeqNums to withhold; 0: free slot */
	bool ignore_rr;
	bool silent;
	int listen_fd, fd;
	/* session */
	uint64_t uuid, last_uuid;
	bool negotiated, established;
	uint32_t next_in, next_out;
	uint32_t gap_from, gap_to;   /* open NotApplied range [from, to) */
	uint16_t keep_alive_ms;
	uint64_t last_rx_ns, last_tx_ns;
	uint32_t app_received;
	bool drop_now;
	uint64_t next_order_id, next_exec_id;
	struct il3_stream stream;
	size_t out_length, out_sent;
	uint8_t out[OUT_CAPACITY];
	char control[CONTROL_LINE];
	size_t control_length;
	struct order orders[MAX_ORDERS];
	struct stored store[STORE_SIZE];
	/* audit */
	struct audit audits[AUDIT_SESSIONS];
	struct audit *audit;         /* the current UUID's; NULL: none or untracked */
	uint32_t audit_count;
	uint32_t owed_pending;       /* from "owed-from", for the next Establish; 0: none */
	uint64_t audit_untracked;    /* UUIDs and identifiers the tables had no room for */
	uint32_t ids_used;
	struct audit_id ids[AUDIT_IDS];
};

static volatile sig_atomic_t quit;

static void
on_signal(int sig)
{
	(void)sig;
	quit = 1;
}

static uint64_t
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t
epoch_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void
trace(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void
trace(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

static void
close_client(struct sim *sim, const char *why)
{
	if (sim->fd < 0)
		return;
	/* best effort: what is queued goes out before the close */
	if (!sim->silent && sim->out_sent < sim->out_length)
		(void)send(sim->fd, sim->out + sim->out_sent, sim->out_length - sim->out_sent,
			MSG_NOSIGNAL | MSG_DONTWAIT);
	close(sim->fd);
	sim->fd = -1;
	sim->established = false;
	sim->out_length = sim->out_sent = 0;
	il3_stream_reset(&sim->stream);
	trace("disconnect %s", why);
}

static void
flush_out(struct sim *sim)
{
	if (sim->silent)
		return;
	while (sim->fd >= 0 && sim->out_sent < sim->out_length) {
		ssize_t n = send(sim->fd, sim->out + sim->out_sent,
				sim->out_length - sim->out_sent, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				return;
			close_client(sim, "send_error");
			return;
		}
		sim->out_sent += (size_t)n;
	}
	if (sim->out_sent == sim->out_length)
		sim->out_sent = sim->out_length = 0;
}

/* Queue one encoded frame for the client (dropped while silent). */
static void
emit(struct sim *sim, const uint8_t *frame, size_t length)
{
	if (sim->fd < 0 || sim->silent)
		return;
	if (sim->out_sent > 0) {
		memmove(sim->out, sim->out + sim->out_sent, sim->out_length - sim->out_sent);
		sim->out_length -= sim->out_sent;
		sim->out_sent = 0;
	}
	if (OUT_CAPACITY - sim->out_length < length) {
		/* the client does not read: bounded output, so drop it */
		close_client(sim, "output_full");
		return;
	}
	memcpy(sim->out + sim->out_length, frame, length);
	sim->out_length += length;
	sim->last_tx_ns = mono_ns();
}

static void
reply_delay(struct sim *sim)
{
	struct timespec ts;

	if (sim->delay_ms == 0)
		return;
	ts.tv_sec = sim->delay_ms / 1000;
	ts.tv_nsec = (long)(sim->delay_ms % 1000) * 1000000L;
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* ---------------------------------------------------------------------- */
/* Audit                                                                   */
/* ---------------------------------------------------------------------- */

/* The sim's sequence numbers into the current UUID's audit. */
static void
audit_sync(struct sim *sim)
{
	if (sim->audit == NULL)
		return;
	sim->audit->next_in = sim->next_in;
	sim->audit->next_out = sim->next_out;
}

/* Owed messages still in the store. */
static uint32_t
audit_owed(const struct sim *sim)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < STORE_SIZE; i++)
		n += sim->store[i].owed;
	return n;
}

/* A new session UUID (Negotiate): a fresh audit for it. */
static void
audit_begin(struct sim *sim, uint64_t uuid)
{
	audit_sync(sim);
	if (sim->audit != NULL)
		sim->audit->unrequested += audit_owed(sim);  /* the store is emptied next */
	if (sim->audit_count == AUDIT_SESSIONS) {
		sim->audit = NULL;
		sim->audit_untracked++;
		return;
	}
	sim->audit = &sim->audits[sim->audit_count++];
	*sim->audit = (struct audit){ .uuid = uuid, .next_in = 1, .next_out = 1 };
}

static uint64_t
id_hash(uint64_t uuid, char kind, const char *id)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325) ^ uuid;

	h = (h ^ (uint8_t)kind) * UINT64_C(0x100000001b3);
	for (; *id != '\0'; id++)
		h = (h ^ (uint8_t)*id) * UINT64_C(0x100000001b3);
	return h;
}

/* Remember @p id of @p kind on the current UUID.  @return true if it was
 * applied before (linear probing; beyond 3/4 full nothing new is kept). */
static bool
audit_seen(struct sim *sim, char kind, const char *id)
{
	uint64_t uuid = sim->audit->uuid;
	uint64_t i = id_hash(uuid, kind, id) & (AUDIT_IDS - 1);

	for (;; i = (i + 1) & (AUDIT_IDS - 1)) {
		struct audit_id *slot = &sim->ids[i];

		if (slot->uuid == 0)
			break;
		if (slot->uuid == uuid && slot->kind == kind && strcmp(slot->id, id) == 0)
			return true;
	}
	if (sim->ids_used >= AUDIT_IDS / 4 * 3) {
		sim->audit_untracked++;
		return false;
	}
	sim->ids[i].uuid = uuid;
	sim->ids[i].kind = kind;
	snprintf(sim->ids[i].id, sizeof(sim->ids[i].id), "%s", id);
	sim->ids_used++;
	return false;
}

/* Established: the stored messages of [owed-from, NextSeqNo) are owed, on
 * top of those still owed from before (a kill before the client asked). */
static void
audit_established(struct sim *sim)
{
	uint32_t seq;

	if (sim->audit == NULL)
		return;
	sim->audit->establishes++;
	if (sim->owed_pending == 0)
		return;
	seq = sim->owed_pending;
	if (sim->next_out > STORE_SIZE && seq < sim->next_out - STORE_SIZE)
		seq = sim->next_out - STORE_SIZE;  /* older ones are gone: asked, rejected */
	for (; seq < sim->next_out; seq++)
		if (sim->store[seq % STORE_SIZE].seq == seq)
			sim->store[seq % STORE_SIZE].owed = true;
	sim->owed_pending = 0;
}

/* One "audit" line per UUID and the summary.  @return the violations. */
static uint64_t
audit_report(struct sim *sim)
{
	uint64_t total = 0;

	audit_sync(sim);
	for (uint32_t i = 0; i < sim->audit_count; i++) {
		const struct audit *a = &sim->audits[i];
		uint32_t skipped = a->next_in - 1 - a->applied;
		uint32_t unrequested = a->unrequested + (a == sim->audit ? audit_owed(sim) : 0);
		uint64_t violations = (uint64_t)skipped + a->duplicate_seq + a->duplicate_clordid +
			a->duplicate_request + a->retransmit_rejects + unrequested;

		trace("audit uuid=%" PRIu64 " establishes=%" PRIu32 " next_in=%" PRIu32
			" applied=%" PRIu32 " fills=%" PRIu32 " skipped=%" PRIu32
			" duplicate_seq=%" PRIu32 " duplicate_clordid=%" PRIu32
			" duplicate_request=%" PRIu32 " next_out=%" PRIu32
			" retransmitted=%" PRIu32 " retransmit_rejects=%" PRIu32
			" unrequested=%" PRIu32 " violations=%" PRIu64,
			a->uuid, a->establishes, a->next_in, a->applied, a->fills, skipped,
			a->duplicate_seq, a->duplicate_clordid, a->duplicate_request, a->next_out,
			a->retransmitted, a->retransmit_rejects, unrequested, violations);
		total += violations;
	}
	trace("audit-summary sessions=%" PRIu32 " violations=%" PRIu64 " untracked=%" PRIu64,
		sim->audit_count, total, sim->audit_untracked);
	return total + sim->audit_untracked;
}

/* ---------------------------------------------------------------------- */
/* Session-layer replies                                                   */
/* ---------------------------------------------------------------------- */

static void
send_session(struct sim *sim, struct il3_encoder *enc)
{
	int n = il3_encode_end(enc);

	if (n > 0)
		emit(sim, enc->buf, (size_t)n);
}

static void
send_negotiation_reject(struct sim *sim, uint64_t uuid, uint64_t request_timestamp,
		uint16_t code, const char *reason)
{
	struct il3_encoder enc;
	uint8_t buf[256];
	uint8_t *root = il3_encode_begin(&enc, buf, sizeof(buf),
			IL3_TEMPLATE_NEGOTIATION_REJECT502);

	if (root == NULL)
		return;
	il3_negotiation_reject502_set_reason(root, reason, strlen(reason));
	il3_negotiation_reject502_set_uuid(root, uuid);
	il3_negotiation_reject502_set_request_timestamp(root, request_timestamp);
	il3_negotiation_reject502_set_error_codes(root, code);
	send_session(sim, &enc);
	trace("negotiate reject uuid=%" PRIu64 " code=%u", uuid, (unsigned int)code);
}

static void
send_establishment_reject(struct sim *sim, uint64_t uuid, uint64_t request_timestamp,
		uint16_t code, const char *reason)
{
	struct il3_encoder enc;
	uint8_t buf[256];
	uint8_t *root = il3_encode_begin(&enc, buf, sizeof(buf),
			IL3_TEMPLATE_ESTABLISHMENT_REJECT505);

	if (root == NULL)
		return;
	il3_establishment_reject505_set_reason(root, reason, strlen(reason));
	il3_establishment_reject505_set_uuid(root, uuid);
	il3_establishment_reject505_set_request_timestamp(root, request_timestamp);
	il3_establishment_reject505_set_next_seq_no(root, sim->next_in);
	il3_establishment_reject505_set_error_codes(root, code);
	send_session(sim, &enc);
	trace("establish reject uuid=%" PRIu64 " code=%u expected=%" PRIu32, uuid,
		(unsigned int)code, sim->next_in);
}

static void
send_sequence(struct sim *sim)
{
	struct il3_encoder enc;
	uint8_t buf[64];
	uint8_t *root = il3_encode_begin(&enc, buf, sizeof(buf), IL3_TEMPLATE_SEQUENCE506);

	if (root == NULL)
		return;
	il3_sequence506_set_uuid(root, sim->uuid);
	il3_sequence506_set_next_seq_no(root, sim->next_out);
	il3_sequence506_set_fault_tolerance_indicator(root, IL3_FTI_PRIMARY);
	il3_sequence506_set_keep_alive_interval_lapsed(root, IL3_KEEP_ALIVE_LAPSED_NOT_LAPSED);
	send_session(sim, &enc);
}

static void
send_terminate(struct sim *sim, uint16_t code)
{
	struct il3_encoder enc;
	uint8_t buf[128];
	uint8_t *root = il3_encode_begin(&enc, buf, sizeof(buf), IL3_TEMPLATE_TERMINATE507);

	if (root == NULL)
		return;
	il3_terminate507_set_uuid(root, sim->uuid);
	il3_terminate507_set_request_timestamp(root, epoch_ns());
	il3_terminate507_set_error_codes(root, code);
	send_session(sim, &enc);
}

static void
send_not_applied(struct sim *sim, uint32_t from, uint32_t count)
{
	struct il3_encoder enc;
	uint8_t buf[64];
	uint8_t *root = il3_encode_begin(&enc, buf, sizeof(buf), IL3_TEMPLATE_NOT_APPLIED513);

	if (root == NULL)
		return;
	il3_not_applied513_set_uuid(root, sim->uuid);
	il3_not_applied513_set_from_seq_no(root, from);
	il3_not_applied513_set_msg_count(root, count);
	send_session(sim, &enc);
	trace("not-applied from=%" PRIu32 " count=%" PRIu32, from, count);
}

/* An open NotApplied range is closed unfilled (a new connection, or a new
 * range opens): the audit counts its numbers as skipped. */
static void
gap_abandon(struct sim *sim)
{
	if (sim->gap_from != sim->gap_to)
		trace("gap-abandoned from=%" PRIu32 " count=%" PRIu32, sim->gap_from,
			sim->gap_to - sim->gap_from);
	sim->gap_from = sim->gap_to = 0;
}

/* A number ahead of the expected one: NotApplied and an open range. */
static void
inbound_ahead(struct sim *sim, uint32_t seq)
{
	gap_abandon(sim);
	send_not_applied(sim, sim->next_in, seq - sim->next_in);
	sim->gap_from = sim->next_in;
	sim->gap_to = seq;
	sim->next_in = seq;
}

/* ---------------------------------------------------------------------- */
/* Application replies                                                     */
/* ---------------------------------------------------------------------- */

static void
set_poss_retrans(uint8_t *frame, size_t length)
{
	struct il3_msg msg;
	unsigned int i;

	if (il3_msg_parse(frame, length, &msg, NULL) < 0)
		return;
	for (i = 0; i < msg.info->field_count; i++) {
		const struct il3_field_info *f = &msg.info->fields[i];

		if (strcmp(f->name, "PossRetransFlag") == 0 && f->size == 1)
			frame[(size_t)(msg.root - frame) + f->offset] = 1;
	}
}

/* Store an encoded application frame under its SeqNum and send it. */
static void
send_app(struct sim *sim, struct il3_encoder *enc, uint32_t seq)
{
	struct stored *slot = &sim->store[seq % STORE_SIZE];
	int n = il3_encode_end(enc);

	if (n <= 0 || n > STORE_FRAME)
		return;
	if (slot->owed && sim->audit != NULL)
		sim->audit->unrequested++;  /* no longer stored: can never be asked for */
	slot->owed = false;
	slot->seq = seq;
	slot->length = (uint16_t)n;
	memcpy(slot->frame, enc->buf, (size_t)n);
	for (size_t i = 0; i < sizeof(sim->skip_seq) / sizeof(sim->skip_seq[0]); i++) {
		if (sim->skip_seq[i] != 0 && sim->skip_seq[i] == seq) {
			sim->skip_seq[i] = 0;
			trace("skipped seq=%" PRIu32, seq);
			return;
		}
	}
	if (!sim->drop_now)
		emit(sim, slot->frame, slot->length);
}

struct app_in {
	uint32_t seq;
	uint16_t template_id;
	char clordid[21];
	uint64_t request_id;
	uint64_t order_id;
	int32_t security_id;
	uint8_t side;
	uint32_t quantity;
	int64_t price;
};

/* Begin an execution report: the common header fields. */
#define ER_COMMON(prefix, root, sim, in, seq, order_id, exec_id) do { \
	prefix##_set_seq_num(root, seq); \
	prefix##_set_uuid(root, (sim)->uuid); \
	prefix##_set_exec_id(root, exec_id, strlen(exec_id)); \
	prefix##_set_cl_ord_id(root, (in)->clordid, strlen((in)->clordid)); \
	prefix##_set_order_id(root, order_id); \
	prefix##_set_transact_time(root, epoch_ns()); \
	prefix##_set_sending_time_epoch(root, epoch_ns()); \
	prefix##_set_order_request_id(root, (in)->request_id); \
	prefix##_set_security_id(root, (in)->security_id); \
	prefix##_set_side(root, (in)->side); \
	prefix##_set_poss_retrans_flag(root, 0); \
} while (0)

static void
exec_id_text(struct sim *sim, char *out, size_t size)
{
	snprintf(out, size, "E%" PRIu64, ++sim->next_exec_id);
}

static void
report_reject(struct sim *sim, const struct app_in *in, const char *text)
{
	struct il3_encoder enc;
	uint8_t buf[STORE_FRAME];
	char exec_id[24];
	uint32_t seq = sim->next_out++;
	uint8_t *root = il3_encode_begin(&enc, buf, sizeof(buf),
			IL3_TEMPLATE_EXECUTION_REPORT_REJECT523);

	if (root == NULL)
		return;
	exec_id_text(sim, exec_id, sizeof(exec_id));
	ER_COMMON(il3_execution_report_reject523, root, sim, in, seq, 0, exec_id);
	il3_execution_report_reject523_set_text(root, text, strlen(text));
	il3_execution_report_reject523_set_price(root, in->price);
	il3_execution_report_reject523_set_order_qty(root, in->quantity);
	il3_execution_report_reject523_set_ord_rej_reason(root, 1);
	send_app(sim, &enc, seq);
}

static void
report_new(struct sim *sim, const struct app_in *in, uint64_t order_id)
{
	struct il3_encoder enc;
	uint8_t buf[STORE_FRAME];
	char exec_id[24];
	uint32_t seq = sim->next_out++;
	uint8_t *root = il3_encode_begin(&enc, buf, sizeof(buf),
			IL3_TEMPLATE_EXECUTION_REPORT_NEW522);

	if (root == NULL)
		return;
	exec_id_text(sim, exec_id, sizeof(exec_id));
	ER_COMMON(il3_execution_report_new522, root, sim, in, seq, order_id, exec_id);
	il3_execution_report_new522_set_price(root, in->price);
	il3_execution_report_new522_set_order_qty(root, in->quantity);
	il3_execution_report_new522_set_ord_type(root, IL3_ORDER_TYPE_REQ_LIMIT);
	send_app(sim, &enc, seq);
}

static void
report_fill(struct sim *sim, const struct app_in *in, uint64_t order_id)
{
	struct il3_encoder enc;
	uint8_t buf[STORE_FRAME];
	char exec_id[24];
	uint32_t seq = sim->next_out++;
	uint8_t *root = il3_encode_begin(&enc, buf, sizeof(buf),
			IL3_TEMPLATE_EXECUTION_REPORT_TRADE_OUTRIGHT525);

	if (root == NULL)
		return;
	exec_id_text(sim, exec_id, sizeof(exec_id));
	ER_COMMON(il3_execution_report_trade_outright525, root, sim, in, seq, order_id,
		exec_id);
	il3_execution_report_trade_outright525_set_price(root, in->price);
	il3_execution_report_trade_outright525_set_order_qty(root, in->quantity);
	il3_execution_report_trade_outright525_set_last_px(root, in->price);
	il3_execution_report_trade_outright525_set_last_qty(root, in->quantity);
	il3_execution_report_trade_outright525_set_cum_qty(root, in->quantity);
	il3_execution_report_trade_outright525_set_leaves_qty(root, 0);
	il3_execution_report_trade_outright525_set_ord_status(root, IL3_ORD_STATUS_TRD_FILLED);
	il3_execution_report_trade_outright525_set_sec_exec_id(root, sim->next_exec_id);
	il3_execution_report_trade_outright525_set_side_trade_id(root,
		(uint32_t)sim->next_exec_id);
	send_app(sim, &enc, seq);
}

static void
report_cancel(struct sim *sim, const struct app_in *in, const struct order *o)
{
	struct il3_encoder enc;
	uint8_t buf[STORE_FRAME];
	char exec_id[24];
	uint32_t seq = sim->next_out++;
	uint8_t *root = il3_encode_begin(&enc, buf, sizeof(buf),
			IL3_TEMPLATE_EXECUTION_REPORT_CANCEL534);

	if (root == NULL)
		return;
	exec_id_text(sim, exec_id, sizeof(exec_id));
	ER_COMMON(il3_execution_report_cancel534, root, sim, in, seq, o->order_id, exec_id);
	il3_execution_report_cancel534_set_price(root, o->price);
	il3_execution_report_cancel534_set_order_qty(root, o->quantity);
	il3_execution_report_cancel534_set_cum_qty(root, 0);
	il3_execution_report_cancel534_set_ord_type(root, IL3_ORDER_TYPE_REQ_LIMIT);
	send_app(sim, &enc, seq);
}

static void
report_modify(struct sim *sim, const struct app_in *in, const struct order *o)
{
	struct il3_encoder enc;
	uint8_t buf[STORE_FRAME];
	char exec_id[24];
	uint32_t seq = sim->next_out++;
	uint8_t *root = il3_encode_begin(&enc, buf, sizeof(buf),
			IL3_TEMPLATE_EXECUTION_REPORT_MODIFY531);

	if (root == NULL)
		return;
	exec_id_text(sim, exec_id, sizeof(exec_id));
	ER_COMMON(il3_execution_report_modify531, root, sim, in, seq, o->order_id, exec_id);
	il3_execution_report_modify531_set_price(root, o->price);
	il3_execution_report_modify531_set_order_qty(root, o->quantity);
	il3_execution_report_modify531_set_leaves_qty(root, o->quantity);
	il3_execution_report_modify531_set_cum_qty(root, 0);
	il3_execution_report_modify531_set_ord_type(root, IL3_ORDER_TYPE_REQ_LIMIT);
	send_app(sim, &enc, seq);
}

static void
report_cancel_reject(struct sim *sim, const struct app_in *in, bool replace, const char *text)
{
	struct il3_encoder enc;
	uint8_t buf[STORE_FRAME];
	char exec_id[24];
	uint32_t seq = sim->next_out++;
	uint8_t *root;

	exec_id_text(sim, exec_id, sizeof(exec_id));
	if (!replace) {
		root = il3_encode_begin(&enc, buf, sizeof(buf), IL3_TEMPLATE_ORDER_CANCEL_REJECT535);
		if (root == NULL)
			return;
		il3_order_cancel_reject535_set_seq_num(root, seq);
		il3_order_cancel_reject535_set_uuid(root, sim->uuid);
		il3_order_cancel_reject535_set_text(root, text, strlen(text));
		il3_order_cancel_reject535_set_exec_id(root, exec_id, strlen(exec_id));
		il3_order_cancel_reject535_set_cl_ord_id(root, in->clordid, strlen(in->clordid));
		il3_order_cancel_reject535_set_order_id(root, in->order_id);
		il3_order_cancel_reject535_set_transact_time(root, epoch_ns());
		il3_order_cancel_reject535_set_sending_time_epoch(root, epoch_ns());
		il3_order_cancel_reject535_set_order_request_id(root, in->request_id);
		il3_order_cancel_reject535_set_cxl_rej_reason(root, 1);
		il3_order_cancel_reject535_set_poss_retrans_flag(root, 0);
	} else {
		root = il3_encode_begin(&enc, buf, sizeof(buf),
				IL3_TEMPLATE_ORDER_CANCEL_REPLACE_REJECT536);
		if (root == NULL)
			return;
		il3_order_cancel_replace_reject536_set_seq_num(root, seq);
		il3_order_cancel_replace_reject536_set_uuid(root, sim->uuid);
		il3_order_cancel_replace_reject536_set_text(root, text, strlen(text));
		il3_order_cancel_replace_reject536_set_exec_id(root, exec_id, strlen(exec_id));
		il3_order_cancel_replace_reject536_set_cl_ord_id(root, in->clordid,
			strlen(in->clordid));
		il3_order_cancel_replace_reject536_set_order_id(root, in->order_id);
		il3_order_cancel_replace_reject536_set_transact_time(root, epoch_ns());
		il3_order_cancel_replace_reject536_set_sending_time_epoch(root, epoch_ns());
		il3_order_cancel_replace_reject536_set_order_request_id(root, in->request_id);
		il3_order_cancel_replace_reject536_set_cxl_rej_reason(root, 1);
		il3_order_cancel_replace_reject536_set_poss_retrans_flag(root, 0);
	}
	send_app(sim, &enc, seq);
}

static struct order *
find_order(struct sim *sim, const struct app_in *in)
{
	unsigned int i;

	for (i = 0; i < MAX_ORDERS; i++) {
		struct order *o = &sim->orders[i];

		if (!o->live)
			continue;
		if (in->order_id != 0 && o->order_id == in->order_id)
			return o;
		if (in->order_id == 0 && strcmp(o->clordid, in->clordid) == 0)
			return o;
	}
	return NULL;
}

static void
apply_new_order(struct sim *sim, const struct app_in *in)
{
	uint64_t order_id;
	unsigned int i;

	if (in->price <= 0 || in->quantity == 0) {
		report_reject(sim, in, in->price <= 0 ? "price must be positive" :
			"quantity must be positive");
		return;
	}
	order_id = ++sim->next_order_id;
	if (in->quantity <= sim->fill_max) {
		report_new(sim, in, order_id);
		report_fill(sim, in, order_id);
		return;
	}
	for (i = 0; i < MAX_ORDERS && sim->orders[i].live; i++)
		;
	if (i == MAX_ORDERS) {
		report_reject(sim, in, "order table full");
		return;
	}
	sim->orders[i] = (struct order){
		.live = true, .order_id = order_id, .security_id = in->security_id,
		.side = in->side, .quantity = in->quantity, .price = in->price,
	};
	memcpy(sim->orders[i].clordid, in->clordid, sizeof(in->clordid));
	report_new(sim, in, order_id);
}

static void
apply_cancel(struct sim *sim, const struct app_in *in)
{
	struct order *o = find_order(sim, in);

	if (o == NULL) {
		report_cancel_reject(sim, in, false, "unknown order");
		return;
	}
	o->live = false;
	report_cancel(sim, in, o);
}

static void
apply_replace(struct sim *sim, const struct app_in *in)
{
	struct order *o = find_order(sim, in);

	if (o == NULL || in->price <= 0 || in->quantity == 0) {
		report_cancel_reject(sim, in, true, o == NULL ? "unknown order" : "bad price");
		return;
	}
	o->price = in->price;
	o->quantity = in->quantity;
	report_modify(sim, in, o);
}

static void
copy_chars(char *dst, size_t size, const char *src, size_t length)
{
	if (length >= size)
		length = size - 1;
	memcpy(dst, src, length);
	dst[length] = '\0';
}

static int
decode_app(const struct il3_msg *msg, struct app_in *in)
{
	struct il3_decimal px = { 0, 0 };
	const char *chars = "";
	size_t length = 0;

	memset(in, 0, sizeof(*in));
	in->template_id = msg->template_id;
	switch (msg->template_id) {
	case IL3_TEMPLATE_NEW_ORDER_SINGLE514:
		il3_new_order_single514_seq_num(msg, &in->seq);
		il3_new_order_single514_cl_ord_id(msg, &chars, &length);
		il3_new_order_single514_order_request_id(msg, &in->request_id);
		il3_new_order_single514_security_id(msg, &in->security_id);
		il3_new_order_single514_side(msg, &in->side);
		il3_new_order_single514_order_qty(msg, &in->quantity);
		il3_new_order_single514_price(msg, &px);
		break;
	case IL3_TEMPLATE_ORDER_CANCEL_REQUEST516:
		il3_order_cancel_request516_seq_num(msg, &in->seq);
		il3_order_cancel_request516_cl_ord_id(msg, &chars, &length);
		il3_order_cancel_request516_order_request_id(msg, &in->request_id);
		il3_order_cancel_request516_order_id(msg, &in->order_id);
		il3_order_cancel_request516_security_id(msg, &in->security_id);
		il3_order_cancel_request516_side(msg, &in->side);
		break;
	case IL3_TEMPLATE_ORDER_CANCEL_REPLACE_REQUEST515:
		il3_order_cancel_replace_request515_seq_num(msg, &in->seq);
		il3_order_cancel_replace_request515_cl_ord_id(msg, &chars, &length);
		il3_order_cancel_replace_request515_order_request_id(msg, &in->request_id);
		if (il3_order_cancel_replace_request515_order_id(msg, &in->order_id) < 0)
			in->order_id = 0;
		il3_order_cancel_replace_request515_security_id(msg, &in->security_id);
		il3_order_cancel_replace_request515_side(msg, &in->side);
		il3_order_cancel_replace_request515_order_qty(msg, &in->quantity);
		il3_order_cancel_replace_request515_price(msg, &px);
		break;
	default:
		return -ENOENT;
	}
	if (in->template_id == IL3_TEMPLATE_ORDER_CANCEL_REQUEST516 && in->order_id == UINT64_MAX)
		in->order_id = 0;
	copy_chars(in->clordid, sizeof(in->clordid), chars, length);
	in->price = px.mantissa;
	return 0;
}

/* An applied message: counted, its ClOrdID (new orders) and OrderRequestID
 * checked against those applied before on this UUID. */
static void
audit_applied(struct sim *sim, const struct app_in *in, bool fill)
{
	struct audit *a = sim->audit;
	char request[24];

	a->applied++;
	a->fills += fill;
	if (in->template_id == IL3_TEMPLATE_NEW_ORDER_SINGLE514 &&
			audit_seen(sim, 'C', in->clordid)) {
		a->duplicate_clordid++;
		trace("violation duplicate_clordid seq=%" PRIu32 " clordid=%s", in->seq,
			in->clordid);
	}
	snprintf(request, sizeof(request), "%" PRIu64, in->request_id);
	if (audit_seen(sim, 'R', request)) {
		a->duplicate_request++;
		trace("violation duplicate_request seq=%" PRIu32 " request=%s", in->seq, request);
	}
}

static void
on_app(struct sim *sim, const struct il3_msg *msg)
{
	struct app_in in;
	bool fill = false;

	if (!sim->established || sim->audit == NULL) {
		trace("protocol-error app before establish template=%u",
			(unsigned int)msg->template_id);
		close_client(sim, "protocol_error");
		return;
	}
	if (decode_app(msg, &in) < 0) {
		trace("ignored template=%u", (unsigned int)msg->template_id);
		return;
	}
	if (in.seq < sim->next_in) {
		if (sim->gap_from != sim->gap_to && in.seq == sim->gap_from) {
			sim->gap_from++;
			fill = true;
		} else {
			trace("duplicate seq=%" PRIu32 " expected=%" PRIu32, in.seq, sim->next_in);
			sim->audit->duplicate_seq++;
			return;
		}
	} else {
		if (in.seq > sim->next_in)
			inbound_ahead(sim, in.seq);
		sim->next_in = in.seq + 1;
	}
	trace("app seq=%" PRIu32 " template=%u clordid=%s request=%" PRIu64 " fill=%d",
		in.seq, (unsigned int)in.template_id, in.clordid, in.request_id, fill ? 1 : 0);
	audit_applied(sim, &in, fill);
	sim->app_received++;
	if (sim->drop_after != 0 && sim->app_received >= sim->drop_after) {
		sim->drop_after = 0;
		sim->drop_now = true;
	}
	reply_delay(sim);
	switch (in.template_id) {
	case IL3_TEMPLATE_NEW_ORDER_SINGLE514:
		apply_new_order(sim, &in);
		break;
	case IL3_TEMPLATE_ORDER_CANCEL_REQUEST516:
		apply_cancel(sim, &in);
		break;
	default:
		apply_replace(sim, &in);
		break;
	}
	if (sim->drop_now) {
		sim->drop_now = false;
		close_client(sim, "drop_after");
	}
}

/* ---------------------------------------------------------------------- */
/* Session-layer input                                                     */
/* ---------------------------------------------------------------------- */

static bool
signature_ok(const struct sim *sim, const char *canon, int length, const char *sig,
		size_t sig_length, const char *key_id, size_t key_id_length)
{
	uint8_t expected[IL3_SIGNATURE_SIZE];

	if (length < 0 || sig_length != IL3_SIGNATURE_SIZE ||
			key_id_length != strlen(sim->creds.access_key_id) ||
			memcmp(key_id, sim->creds.access_key_id, key_id_length) != 0)
		return false;
	if (il3_hmac_sha256(sim->creds.key, sim->creds.key_length, canon, (size_t)length,
			expected) < 0)
		return false;
	return CRYPTO_memcmp(expected, sig, IL3_SIGNATURE_SIZE) == 0;
}

static void
on_negotiate(struct sim *sim, const struct il3_msg *msg)
{
	const char *sig, *key_id, *session, *firm;
	size_t sig_length, key_id_length, session_length, firm_length;
	char s_text[8], f_text[8], canon[256];
	uint64_t uuid = 0, ts = 0;
	struct il3_encoder enc;
	uint8_t buf[128], *root;
	int n;

	il3_negotiate500_hmac_signature(msg, &sig, &sig_length);
	il3_negotiate500_access_key_id(msg, &key_id, &key_id_length);
	il3_negotiate500_uuid(msg, &uuid);
	il3_negotiate500_request_timestamp(msg, &ts);
	il3_negotiate500_session(msg, &session, &session_length);
	il3_negotiate500_firm(msg, &firm, &firm_length);
	/* the signature is binary: all 32 bytes count, not only up to a NUL */
	sig_length = IL3_SIGNATURE_SIZE;
	copy_chars(s_text, sizeof(s_text), session, session_length);
	copy_chars(f_text, sizeof(f_text), firm, firm_length);
	n = il3_canonical_negotiate(canon, sizeof(canon), ts, uuid, s_text, f_text);
	reply_delay(sim);
	if (!signature_ok(sim, canon, n, sig, sig_length, key_id, key_id_length)) {
		send_negotiation_reject(sim, uuid, ts, REJECT_HMAC, "HMAC not authenticated");
		return;
	}
	if (uuid == 0) {
		send_negotiation_reject(sim, uuid, ts, REJECT_UUID, "UUID missing");
		return;
	}
	if (uuid != sim->uuid) {
		audit_begin(sim, uuid);
		sim->last_uuid = sim->uuid;
		sim->uuid = uuid;
		sim->next_in = 1;
		sim->next_out = 1;
		sim->gap_from = sim->gap_to = 0;
		memset(sim->store, 0, sizeof(sim->store));
	}
	sim->negotiated = true;
	root = il3_encode_begin(&enc, buf, sizeof(buf), IL3_TEMPLATE_NEGOTIATION_RESPONSE501);
	if (root == NULL)
		return;
	il3_negotiation_response501_set_uuid(root, uuid);
	il3_negotiation_response501_set_request_timestamp(root, ts);
	il3_negotiation_response501_set_fault_tolerance_indicator(root, IL3_FTI_PRIMARY);
	il3_negotiation_response501_set_previous_uuid(root, sim->last_uuid);
	send_session(sim, &enc);
	trace("negotiate ok uuid=%" PRIu64, uuid);
}

static void
on_establish(struct sim *sim, const struct il3_msg *msg)
{
	const char *sig, *key_id, *session, *firm, *name, *version, *vendor;
	size_t sig_length, key_id_length, session_length, firm_length;
	size_t name_length, version_length, vendor_length;
	char s_text[8], f_text[8], n_text[32], v_text[16], d_text[16], canon[512];
	uint64_t uuid = 0, ts = 0;
	uint32_t next_seq = 0;
	uint16_t keep_alive = 0;
	struct il3_encoder enc;
	uint8_t buf[128], *root;
	int n;

	il3_establish503_hmac_signature(msg, &sig, &sig_length);
	il3_establish503_access_key_id(msg, &key_id, &key_id_length);
	il3_establish503_trading_system_name(msg, &name, &name_length);
	il3_establish503_trading_system_version(msg, &version, &version_length);
	il3_establish503_trading_system_vendor(msg, &vendor, &vendor_length);
	il3_establish503_uuid(msg, &uuid);
	il3_establish503_request_timestamp(msg, &ts);
	il3_establish503_next_seq_no(msg, &next_seq);
	il3_establish503_session(msg, &session, &session_length);
	il3_establish503_firm(msg, &firm, &firm_length);
	il3_establish503_keep_alive_interval(msg, &keep_alive);
	sig_length = IL3_SIGNATURE_SIZE;
	copy_chars(s_text, sizeof(s_text), session, session_length);
	copy_chars(f_text, sizeof(f_text), firm, firm_length);
	copy_chars(n_text, sizeof(n_text), name, name_length);
	copy_chars(v_text, sizeof(v_text), version, version_length);
	copy_chars(d_text, sizeof(d_text), vendor, vendor_length);
	n = il3_canonical_establish(canon, sizeof(canon), ts, uuid, s_text, f_text, n_text,
			v_text, d_text, next_seq, keep_alive);
	reply_delay(sim);
	if (!signature_ok(sim, canon, n, sig, sig_length, key_id, key_id_length)) {
		send_establishment_reject(sim, uuid, ts, REJECT_HMAC, "HMAC not authenticated");
		return;
	}
	if (!sim->negotiated || uuid != sim->uuid) {
		send_establishment_reject(sim, uuid, ts, REJECT_UUID, "UUID not negotiated");
		return;
	}
	if (next_seq < sim->next_in) {
		send_establishment_reject(sim, uuid, ts, REJECT_SEQUENCE,
			"NextSeqNo lower than expected");
		return;
	}
	if (keep_alive == 0) {
		send_establishment_reject(sim, uuid, ts, REJECT_KEEP_ALIVE,
			"KeepAliveInterval must be positive");
		return;
	}
	sim->established = true;
	sim->keep_alive_ms = keep_alive;
	root = il3_encode_begin(&enc, buf, sizeof(buf), IL3_TEMPLATE_ESTABLISHMENT_ACK504);
	if (root == NULL)
		return;
	il3_establishment_ack504_set_uuid(root, uuid);
	il3_establishment_ack504_set_request_timestamp(root, ts);
	il3_establishment_ack504_set_next_seq_no(root, sim->next_out);
	il3_establishment_ack504_set_previous_seq_no(root, sim->next_in - 1);
	il3_establishment_ack504_set_previous_uuid(root, sim->last_uuid);
	il3_establishment_ack504_set_keep_alive_interval(root, keep_alive);
	il3_establishment_ack504_set_secret_key_secure_id_expiration(root, 30);
	il3_establishment_ack504_set_fault_tolerance_indicator(root, IL3_FTI_PRIMARY);
	send_session(sim, &enc);
	trace("establish ok uuid=%" PRIu64 " next_in=%" PRIu32 " next_out=%" PRIu32
		" client_next=%" PRIu32 " keep_alive=%u", uuid, sim->next_in, sim->next_out,
		next_seq, (unsigned int)keep_alive);
	audit_established(sim);
	gap_abandon(sim);
	if (next_seq > sim->next_in)
		inbound_ahead(sim, next_seq);
}

static void
on_retransmit_request(struct sim *sim, const struct il3_msg *msg)
{
	uint64_t uuid = 0, last_uuid = 0, ts = 0;
	uint32_t from = 0, seq;
	uint16_t count = 0;
	struct il3_encoder enc;
	uint8_t buf[256], *root;
	const char *why = NULL;

	il3_retransmit_request508_uuid(msg, &uuid);
	if (il3_retransmit_request508_last_uuid(msg, &last_uuid) < 0)
		last_uuid = 0;
	il3_retransmit_request508_request_timestamp(msg, &ts);
	il3_retransmit_request508_from_seq_no(msg, &from);
	il3_retransmit_request508_msg_count(msg, &count);
	if (sim->ignore_rr) {
		trace("retransmit-request-ignored from=%" PRIu32 " count=%u", from,
			(unsigned int)count);
		return;
	}
	trace("retransmit-request from=%" PRIu32 " count=%u", from, (unsigned int)count);
	if (uuid != sim->uuid || (last_uuid != 0 && last_uuid != sim->uuid))
		why = "unknown UUID";
	else if (count == 0 || count > MAX_RETRANSMIT || from == 0 ||
			(uint64_t)from + count > sim->next_out)
		why = "range out of bounds";
	for (seq = from; why == NULL && seq < from + count; seq++)
		if (sim->store[seq % STORE_SIZE].seq != seq)
			why = "range no longer stored";
	reply_delay(sim);
	if (why != NULL) {
		root = il3_encode_begin(&enc, buf, sizeof(buf), IL3_TEMPLATE_RETRANSMIT_REJECT510);
		if (root == NULL)
			return;
		il3_retransmit_reject510_set_reason(root, why, strlen(why));
		il3_retransmit_reject510_set_uuid(root, uuid);
		il3_retransmit_reject510_set_last_uuid(root, last_uuid);
		il3_retransmit_reject510_set_request_timestamp(root, ts);
		il3_retransmit_reject510_set_error_codes(root, 1);
		send_session(sim, &enc);
		trace("retransmit-reject %s", why);
		if (sim->audit != NULL)
			sim->audit->retransmit_rejects++;
		return;
	}
	root = il3_encode_begin(&enc, buf, sizeof(buf), IL3_TEMPLATE_RETRANSMISSION509);
	if (root == NULL)
		return;
	il3_retransmission509_set_uuid(root, uuid);
	il3_retransmission509_set_last_uuid(root, last_uuid);
	il3_retransmission509_set_request_timestamp(root, ts);
	il3_retransmission509_set_from_seq_no(root, from);
	il3_retransmission509_set_msg_count(root, count);
	send_session(sim, &enc);
	for (seq = from; seq < from + count; seq++) {
		struct stored *slot = &sim->store[seq % STORE_SIZE];
		uint8_t copy[STORE_FRAME];

		memcpy(copy, slot->frame, slot->length);
		set_poss_retrans(copy, slot->length);
		emit(sim, copy, slot->length);
		slot->owed = false;
	}
	trace("retransmission from=%" PRIu32 " count=%u", from, (unsigned int)count);
	if (sim->audit != NULL)
		sim->audit->retransmitted += count;
}

static void
on_frame(struct sim *sim, const struct il3_msg *msg)
{
	uint32_t next = 0;
	uint16_t code = 0;
	uint8_t lapsed = 0;

	switch (msg->template_id) {
	case IL3_TEMPLATE_NEGOTIATE500:
		on_negotiate(sim, msg);
		return;
	case IL3_TEMPLATE_ESTABLISH503:
		on_establish(sim, msg);
		return;
	case IL3_TEMPLATE_SEQUENCE506:
		il3_sequence506_next_seq_no(msg, &next);
		il3_sequence506_keep_alive_interval_lapsed(msg, &lapsed);
		trace("sequence-in next=%" PRIu32 " lapsed=%u", next, (unsigned int)lapsed);
		if (!sim->established)
			return;
		if (sim->gap_from != sim->gap_to) {
			trace("gap-skipped from=%" PRIu32 " count=%" PRIu32, sim->gap_from,
				sim->gap_to - sim->gap_from);
			sim->gap_from = sim->gap_to = 0;
		}
		if (next > sim->next_in)
			inbound_ahead(sim, next);
		if (lapsed == IL3_KEEP_ALIVE_LAPSED_LAPSED)
			send_sequence(sim);
		return;
	case IL3_TEMPLATE_TERMINATE507:
		il3_terminate507_error_codes(msg, &code);
		trace("terminate-in code=%u", (unsigned int)code);
		send_terminate(sim, 0);
		flush_out(sim);
		close_client(sim, "terminated");
		return;
	case IL3_TEMPLATE_RETRANSMIT_REQUEST508:
		on_retransmit_request(sim, msg);
		return;
	default:
		on_app(sim, msg);
		return;
	}
}

static void
read_client(struct sim *sim)
{
	struct il3_msg msg;
	uint8_t *space;
	size_t room = il3_stream_space(&sim->stream, &space);
	ssize_t n = recv(sim->fd, space, room, MSG_DONTWAIT);
	int rc;

	if (n < 0) {
		if (errno != EAGAIN && errno != EINTR)
			close_client(sim, "recv_error");
		return;
	}
	if (n == 0) {
		close_client(sim, "eof");
		return;
	}
	sim->last_rx_ns = mono_ns();
	il3_stream_commit(&sim->stream, (size_t)n);
	while (sim->fd >= 0 && (rc = il3_stream_next(&sim->stream, &msg)) == 1)
		on_frame(sim, &msg);
	if (sim->fd >= 0 && rc < 0) {
		trace("protocol-error malformed %s", il3_parse_error_name(sim->stream.last_error));
		close_client(sim, "malformed");
	}
}

/* ---------------------------------------------------------------------- */
/* Control                                                                 */
/* ---------------------------------------------------------------------- */

static bool
parse_u32(const char *text, uint32_t *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(text, &end, 10);
	if (errno != 0 || end == text || *end != '\0' || v > UINT32_MAX)
		return false;
	*out = (uint32_t)v;
	return true;
}

/* Withhold outbound SeqNum @p seq once.  @return false when 8 are pending. */
static bool
add_skip(struct sim *sim, uint32_t seq)
{
	for (size_t i = 0; i < sizeof(sim->skip_seq) / sizeof(sim->skip_seq[0]); i++) {
		if (sim->skip_seq[i] == 0 || sim->skip_seq[i] == seq) {
			sim->skip_seq[i] = seq;
			return true;
		}
	}
	return false;
}

static void
control_command(struct sim *sim, char *line)
{
	uint32_t v;
	bool ok = true;

	if (strcmp(line, "silence on") == 0) {
		sim->silent = true;
	} else if (strcmp(line, "silence off") == 0) {
		sim->silent = false;
		sim->last_tx_ns = 0;
	} else if (strcmp(line, "drop") == 0) {
		close_client(sim, "control");
	} else if (strcmp(line, "terminate") == 0) {
		send_terminate(sim, 0);
	} else if (strcmp(line, "skip") == 0) {
		add_skip(sim, sim->next_out);
	} else if (strncmp(line, "skip-at ", 8) == 0 && parse_u32(line + 8, &v) && v != 0) {
		ok = add_skip(sim, v);
	} else if (strcmp(line, "ignore-rr on") == 0) {
		sim->ignore_rr = true;
	} else if (strcmp(line, "ignore-rr off") == 0) {
		sim->ignore_rr = false;
	} else if (strncmp(line, "drop-after ", 11) == 0 && parse_u32(line + 11, &v)) {
		sim->drop_after = v == 0 ? 0 : sim->app_received + v;
	} else if (strncmp(line, "delay ", 6) == 0 && parse_u32(line + 6, &v) && v <= 10000) {
		sim->delay_ms = v;
	} else if (strcmp(line, "status") == 0) {
		unsigned int i, live = 0;

		for (i = 0; i < MAX_ORDERS; i++)
			live += sim->orders[i].live;
		trace("status uuid=%" PRIu64 " next_in=%" PRIu32 " next_out=%" PRIu32
			" orders=%u", sim->uuid, sim->next_in, sim->next_out, live);
	} else if (strncmp(line, "owed-from ", 10) == 0 && parse_u32(line + 10, &v) && v != 0) {
		sim->owed_pending = v;
	} else if (strcmp(line, "audit") == 0) {
		audit_report(sim);
	} else {
		ok = false;
	}
	trace("%s %s", ok ? "ok" : "error", line);
}

/* @return false on EOF of stdin. */
static bool
read_control(struct sim *sim)
{
	char buf[256];
	ssize_t n = read(STDIN_FILENO, buf, sizeof(buf));
	ssize_t i;

	if (n <= 0)
		return n < 0 && errno == EINTR;
	for (i = 0; i < n; i++) {
		if (buf[i] == '\n') {
			sim->control[sim->control_length] = '\0';
			control_command(sim, sim->control);
			sim->control_length = 0;
		} else if (sim->control_length < CONTROL_LINE - 1) {
			sim->control[sim->control_length++] = buf[i];
		}
	}
	return true;
}

/* ---------------------------------------------------------------------- */
/* Main loop                                                               */
/* ---------------------------------------------------------------------- */

static int
listen_loopback(uint16_t port, uint16_t *bound)
{
	struct sockaddr_in addr = { .sin_family = AF_INET };
	socklen_t length = sizeof(addr);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int one = 1;

	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	addr.sin_port = htons(port);
	if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0 || listen(fd, 8) < 0 ||
			getsockname(fd, (struct sockaddr *)&addr, &length) < 0) {
		int err = errno;

		close(fd);
		return -err;
	}
	*bound = ntohs(addr.sin_port);
	return fd;
}

static void
accept_client(struct sim *sim)
{
	int one = 1;
	int fd = accept4(sim->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

	if (fd < 0)
		return;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	sim->fd = fd;
	sim->established = false;
	sim->last_rx_ns = sim->last_tx_ns = mono_ns();
	il3_stream_reset(&sim->stream);
	trace("connect");
}

static void
run_timers(struct sim *sim, uint64_t now)
{
	uint64_t k = (uint64_t)sim->keep_alive_ms * NS_PER_MS;

	/* silent means frozen towards the client: no heartbeats, no lapse */
	if (sim->fd < 0 || !sim->established || k == 0 || sim->silent)
		return;
	if (now - sim->last_rx_ns >= 2 * k) {
		trace("client-lapsed");
		send_terminate(sim, 0);
		flush_out(sim);
		close_client(sim, "client_lapsed");
		return;
	}
	if (!sim->silent && now - sim->last_tx_ns >= k)
		send_sequence(sim);
}

static int
run(struct sim *sim)
{
	bool control_open = true;

	while (!quit) {
		struct pollfd pfd[3];
		nfds_t count = 0;
		int client = -1, control = -1, listener = -1;
		int rc;

		if (control_open) {
			control = (int)count;
			pfd[count++] = (struct pollfd){ .fd = STDIN_FILENO, .events = POLLIN };
		}
		if (sim->fd >= 0) {
			client = (int)count;
			pfd[count++] = (struct pollfd){ .fd = sim->fd, .events = (short)(POLLIN |
				(sim->out_sent < sim->out_length && !sim->silent ? POLLOUT : 0)) };
		} else {
			listener = (int)count;
			pfd[count++] = (struct pollfd){ .fd = sim->listen_fd, .events = POLLIN };
		}
		rc = poll(pfd, count, 5);
		if (rc < 0 && errno != EINTR)
			return -errno;
		if (rc > 0 && control >= 0 && pfd[control].revents != 0)
			control_open = read_control(sim);
		if (rc > 0 && listener >= 0 && pfd[listener].revents != 0)
			accept_client(sim);
		if (rc > 0 && client >= 0 && sim->fd >= 0 &&
				(pfd[client].revents & (POLLIN | POLLHUP | POLLERR)) != 0)
			read_client(sim);
		run_timers(sim, mono_ns());
		flush_out(sim);
	}
	return 0;
}

static void
usage(FILE *out)
{
	fprintf(out,
		"usage: tickwire-ilink-sim --credentials FILE [--port P] [--fill-max N]\n"
		"         [--drop-after N] [--delay-ms D] [--skip-seq-at N] [--strict]\n"
		"  Loopback (127.0.0.1) iLink 3 gateway simulator. Prints the bound port\n"
		"  on the first line of stdout (--port 0: ephemeral), then one line per\n"
		"  event; control commands on stdin (see lib/ilink3/README.md).\n"
		"  At exit (SIGTERM, SIGINT) it prints its audit of each session UUID:\n"
		"  \"audit uuid=U ... violations=V\" (SeqNums skipped or received twice,\n"
		"  ClOrdIDs or OrderRequestIDs applied twice, RetransmitRequests rejected,\n"
		"  an owed range not asked for again) and \"audit-summary sessions=N\n"
		"  violations=V untracked=U\".\n"
		"  --strict  exit status 3 when violations + untracked > 0.\n");
}

int
main(int argc, char **argv)
{
	static const struct option options[] = {
		{ "port", required_argument, NULL, 'p' },
		{ "credentials", required_argument, NULL, 'c' },
		{ "fill-max", required_argument, NULL, 'f' },
		{ "drop-after", required_argument, NULL, 'd' },
		{ "delay-ms", required_argument, NULL, 'D' },
		{ "skip-seq-at", required_argument, NULL, 's' },
		{ "strict", no_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *credentials = NULL;
	struct sigaction sa;
	struct sim *sim;
	uint32_t port = 0;
	uint16_t bound = 0;
	uint64_t violations;
	int opt, rc;

	sim = calloc(1, sizeof(*sim));
	if (sim == NULL) {
		fprintf(stderr, "tickwire-ilink-sim: out of memory\n");
		return 1;
	}
	sim->fill_max = 10;
	sim->fd = -1;
	sim->next_in = sim->next_out = 1;
	while ((opt = getopt_long(argc, argv, "h", options, NULL)) != -1) {
		uint32_t v = 0;

		if (opt != 'c' && opt != 'h' && opt != 'S' &&
				(optarg == NULL || !parse_u32(optarg, &v))) {
			fprintf(stderr, "tickwire-ilink-sim: bad number '%s'\n",
				optarg != NULL ? optarg : "");
			free(sim);
			return 2;
		}
		switch (opt) {
		case 'p': port = v; break;
		case 'c': credentials = optarg; break;
		case 'f': sim->fill_max = v; break;
		case 'd': sim->drop_after = v; break;
		case 'D': sim->delay_ms = v; break;
		case 's': add_skip(sim, v); break;
		case 'S': sim->strict = true; break;
		case 'h': usage(stdout); free(sim); return 0;
		default: usage(stderr); free(sim); return 2;
		}
	}
	if (credentials == NULL || optind != argc || port > UINT16_MAX || sim->delay_ms > 10000) {
		usage(stderr);
		free(sim);
		return 2;
	}
	rc = il3_credentials_load(credentials, &sim->creds);
	if (rc < 0) {
		fprintf(stderr, "tickwire-ilink-sim: credentials %s: %s\n", credentials,
			rc == -EPERM ? "must be owned by us and not readable by others" :
			strerror(-rc));
		free(sim);
		return 1;
	}
	sim->listen_fd = listen_loopback((uint16_t)port, &bound);
	if (sim->listen_fd < 0) {
		fprintf(stderr, "tickwire-ilink-sim: listen on 127.0.0.1:%u: %s\n",
			(unsigned int)port, strerror(-sim->listen_fd));
		il3_credentials_wipe(&sim->creds);
		free(sim);
		return 1;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	trace("%u", (unsigned int)bound);
	rc = run(sim);
	close_client(sim, "exit");
	violations = audit_report(sim);
	if (!sim->strict)
		violations = 0;
	close(sim->listen_fd);
	il3_credentials_wipe(&sim->creds);
	free(sim);
	if (rc < 0) {
		fprintf(stderr, "tickwire-ilink-sim: poll: %s\n", strerror(-rc));
		return 1;
	}
	return violations > 0 ? EXIT_VIOLATIONS : 0;
}
