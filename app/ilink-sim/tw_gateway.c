/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * The FIXP server side of an iLink 3 gateway (tw_gateway.h), factored out
 * of tickwire-ilink-sim so that tickwire-replay's simulated exchange speaks
 * the same protocol with the same code. The session rules are listed at the
 * top of tickwire-ilink-sim.c and in lib/ilink3/README.md.
 */
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "tw_gateway.h"

#define STORE_SIZE TW_GW_STORE_SIZE
#define STORE_FRAME TW_GW_STORE_FRAME
#define MAX_RETRANSMIT 2500      /* largest MsgCount honoured */
#define OUT_CAPACITY TW_GW_OUT_CAPACITY
#define NS_PER_MS UINT64_C(1000000)
#define AUDIT_SESSIONS TW_GW_AUDIT_SESSIONS
#define AUDIT_IDS TW_GW_AUDIT_IDS

enum {
	REJECT_HMAC = 0,
	REJECT_UUID = 2,
	REJECT_SEQUENCE = 7,
	REJECT_KEEP_ALIVE = 8,
};

static uint64_t
gw_now(const struct tw_gw *gw)
{
	return gw->ops.now_ns(gw->ops.ctx);
}

static uint64_t
gw_epoch(const struct tw_gw *gw)
{
	return gw->ops.epoch_ns(gw->ops.ctx);
}

static void
trace(struct tw_gw *gw, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
trace(struct tw_gw *gw, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	if (gw->ops.trace == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	gw->ops.trace(gw->ops.ctx, line);
}

static void
close_client(struct tw_gw *gw, const char *why)
{
	if (gw->fd < 0)
		return;
	/* best effort: what is queued goes out before the close */
	if (!gw->silent && gw->out_sent < gw->out_length)
		(void)send(gw->fd, gw->out + gw->out_sent, gw->out_length - gw->out_sent,
			MSG_NOSIGNAL | MSG_DONTWAIT);
	close(gw->fd);
	gw->fd = -1;
	gw->established = false;
	gw->out_length = gw->out_sent = 0;
	il3_stream_reset(&gw->stream);
	trace(gw, "disconnect %s", why);
}

static void
flush_out(struct tw_gw *gw)
{
	if (gw->silent)
		return;
	while (gw->fd >= 0 && gw->out_sent < gw->out_length) {
		ssize_t n = send(gw->fd, gw->out + gw->out_sent,
				gw->out_length - gw->out_sent, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				return;
			close_client(gw, "send_error");
			return;
		}
		gw->out_sent += (size_t)n;
	}
	if (gw->out_sent == gw->out_length)
		gw->out_sent = gw->out_length = 0;
}

/* Queue one encoded frame for the client (dropped while silent). */
static void
emit(struct tw_gw *gw, const uint8_t *frame, size_t length)
{
	if (gw->fd < 0 || gw->silent)
		return;
	if (gw->out_sent > 0) {
		memmove(gw->out, gw->out + gw->out_sent, gw->out_length - gw->out_sent);
		gw->out_length -= gw->out_sent;
		gw->out_sent = 0;
	}
	if (OUT_CAPACITY - gw->out_length < length) {
		/* the client does not read: bounded output, so drop it */
		close_client(gw, "output_full");
		return;
	}
	memcpy(gw->out + gw->out_length, frame, length);
	gw->out_length += length;
	gw->last_tx_ns = gw_now(gw);
}

static void
reply_delay(struct tw_gw *gw)
{
	struct timespec ts;

	if (gw->delay_ms == 0)
		return;
	ts.tv_sec = gw->delay_ms / 1000;
	ts.tv_nsec = (long)(gw->delay_ms % 1000) * 1000000L;
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* ---------------------------------------------------------------------- */
/* Audit                                                                   */
/* ---------------------------------------------------------------------- */

/* The gw's sequence numbers into the current UUID's audit. */
static void
audit_sync(struct tw_gw *gw)
{
	if (gw->audit == NULL)
		return;
	gw->audit->next_in = gw->next_in;
	gw->audit->next_out = gw->next_out;
}

/* Owed messages still in the store. */
static uint32_t
audit_owed(const struct tw_gw *gw)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < STORE_SIZE; i++)
		n += gw->store[i].owed;
	return n;
}

/* A new session UUID (Negotiate): a fresh audit for it. */
static void
audit_begin(struct tw_gw *gw, uint64_t uuid)
{
	audit_sync(gw);
	if (gw->audit != NULL)
		gw->audit->unrequested += audit_owed(gw);  /* the store is emptied next */
	if (gw->audit_count == AUDIT_SESSIONS) {
		gw->audit = NULL;
		gw->audit_untracked++;
		return;
	}
	gw->audit = &gw->audits[gw->audit_count++];
	*gw->audit = (struct tw_gw_audit){ .uuid = uuid, .next_in = 1, .next_out = 1 };
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
audit_seen(struct tw_gw *gw, char kind, const char *id)
{
	uint64_t uuid = gw->audit->uuid;
	uint64_t i = id_hash(uuid, kind, id) & (AUDIT_IDS - 1);

	for (;; i = (i + 1) & (AUDIT_IDS - 1)) {
		struct tw_gw_audit_id *slot = &gw->ids[i];

		if (slot->uuid == 0)
			break;
		if (slot->uuid == uuid && slot->kind == kind && strcmp(slot->id, id) == 0)
			return true;
	}
	if (gw->ids_used >= AUDIT_IDS / 4 * 3) {
		gw->audit_untracked++;
		return false;
	}
	gw->ids[i].uuid = uuid;
	gw->ids[i].kind = kind;
	snprintf(gw->ids[i].id, sizeof(gw->ids[i].id), "%s", id);
	gw->ids_used++;
	return false;
}

/* Established: the stored messages of [owed-from, NextSeqNo) are owed, on
 * top of those still owed from before (a kill before the client asked). */
static void
audit_established(struct tw_gw *gw)
{
	uint32_t seq;

	if (gw->audit == NULL)
		return;
	gw->audit->establishes++;
	if (gw->owed_pending == 0)
		return;
	seq = gw->owed_pending;
	if (gw->next_out > STORE_SIZE && seq < gw->next_out - STORE_SIZE)
		seq = gw->next_out - STORE_SIZE;  /* older ones are gone: asked, rejected */
	for (; seq < gw->next_out; seq++)
		if (gw->store[seq % STORE_SIZE].seq == seq)
			gw->store[seq % STORE_SIZE].owed = true;
	gw->owed_pending = 0;
}

/* One "audit" line per UUID and the summary.  @return the violations. */
static uint64_t
audit_report(struct tw_gw *gw)
{
	uint64_t total = 0;

	audit_sync(gw);
	for (uint32_t i = 0; i < gw->audit_count; i++) {
		const struct tw_gw_audit *a = &gw->audits[i];
		uint32_t skipped = a->next_in - 1 - a->applied;
		uint32_t unrequested = a->unrequested + (a == gw->audit ? audit_owed(gw) : 0);
		uint64_t violations = (uint64_t)skipped + a->duplicate_seq + a->duplicate_clordid +
			a->duplicate_request + a->retransmit_rejects + unrequested;

		trace(gw, "audit uuid=%" PRIu64 " establishes=%" PRIu32 " next_in=%" PRIu32
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
	trace(gw, "audit-summary sessions=%" PRIu32 " violations=%" PRIu64 " untracked=%" PRIu64,
		gw->audit_count, total, gw->audit_untracked);
	return total + gw->audit_untracked;
}

/* ---------------------------------------------------------------------- */
/* Session-layer replies                                                   */
/* ---------------------------------------------------------------------- */

static void
send_session(struct tw_gw *gw, struct il3_encoder *enc)
{
	int n = il3_encode_end(enc);

	if (n > 0)
		emit(gw, enc->buf, (size_t)n);
}

static void
send_negotiation_reject(struct tw_gw *gw, uint64_t uuid, uint64_t request_timestamp,
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
	send_session(gw, &enc);
	trace(gw, "negotiate reject uuid=%" PRIu64 " code=%u", uuid, (unsigned int)code);
}

static void
send_establishment_reject(struct tw_gw *gw, uint64_t uuid, uint64_t request_timestamp,
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
	il3_establishment_reject505_set_next_seq_no(root, gw->next_in);
	il3_establishment_reject505_set_error_codes(root, code);
	send_session(gw, &enc);
	trace(gw, "establish reject uuid=%" PRIu64 " code=%u expected=%" PRIu32, uuid,
		(unsigned int)code, gw->next_in);
}

static void
send_sequence(struct tw_gw *gw)
{
	struct il3_encoder enc;
	uint8_t buf[64];
	uint8_t *root = il3_encode_begin(&enc, buf, sizeof(buf), IL3_TEMPLATE_SEQUENCE506);

	if (root == NULL)
		return;
	il3_sequence506_set_uuid(root, gw->uuid);
	il3_sequence506_set_next_seq_no(root, gw->next_out);
	il3_sequence506_set_fault_tolerance_indicator(root, IL3_FTI_PRIMARY);
	il3_sequence506_set_keep_alive_interval_lapsed(root, IL3_KEEP_ALIVE_LAPSED_NOT_LAPSED);
	send_session(gw, &enc);
}

static void
send_terminate(struct tw_gw *gw, uint16_t code)
{
	struct il3_encoder enc;
	uint8_t buf[128];
	uint8_t *root = il3_encode_begin(&enc, buf, sizeof(buf), IL3_TEMPLATE_TERMINATE507);

	if (root == NULL)
		return;
	il3_terminate507_set_uuid(root, gw->uuid);
	il3_terminate507_set_request_timestamp(root, gw_epoch(gw));
	il3_terminate507_set_error_codes(root, code);
	send_session(gw, &enc);
}

static void
send_not_applied(struct tw_gw *gw, uint32_t from, uint32_t count)
{
	struct il3_encoder enc;
	uint8_t buf[64];
	uint8_t *root = il3_encode_begin(&enc, buf, sizeof(buf), IL3_TEMPLATE_NOT_APPLIED513);

	if (root == NULL)
		return;
	il3_not_applied513_set_uuid(root, gw->uuid);
	il3_not_applied513_set_from_seq_no(root, from);
	il3_not_applied513_set_msg_count(root, count);
	send_session(gw, &enc);
	trace(gw, "not-applied from=%" PRIu32 " count=%" PRIu32, from, count);
}

/* An open NotApplied range is closed unfilled (a new connection, or a new
 * range opens): the audit counts its numbers as skipped. */
static void
gap_abandon(struct tw_gw *gw)
{
	if (gw->gap_from != gw->gap_to)
		trace(gw, "gap-abandoned from=%" PRIu32 " count=%" PRIu32, gw->gap_from,
			gw->gap_to - gw->gap_from);
	gw->gap_from = gw->gap_to = 0;
}

/* A number ahead of the expected one: NotApplied and an open range. */
static void
inbound_ahead(struct tw_gw *gw, uint32_t seq)
{
	gap_abandon(gw);
	send_not_applied(gw, gw->next_in, seq - gw->next_in);
	gw->gap_from = gw->next_in;
	gw->gap_to = seq;
	gw->next_in = seq;
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
send_app(struct tw_gw *gw, struct il3_encoder *enc, uint32_t seq)
{
	struct tw_gw_stored *slot = &gw->store[seq % STORE_SIZE];
	int n = il3_encode_end(enc);

	if (n <= 0 || n > STORE_FRAME)
		return;
	gw->app_sent++;
	if (gw->ops.on_sent != NULL)
		gw->ops.on_sent(gw->ops.ctx, enc->buf, (size_t)n);
	if (slot->owed && gw->audit != NULL)
		gw->audit->unrequested++;  /* no longer stored: can never be asked for */
	slot->owed = false;
	slot->seq = seq;
	slot->length = (uint16_t)n;
	memcpy(slot->frame, enc->buf, (size_t)n);
	for (size_t i = 0; i < sizeof(gw->skip_seq) / sizeof(gw->skip_seq[0]); i++) {
		if (gw->skip_seq[i] != 0 && gw->skip_seq[i] == seq) {
			gw->skip_seq[i] = 0;
			trace(gw, "skipped seq=%" PRIu32, seq);
			return;
		}
	}
	if (!gw->drop_now)
		emit(gw, slot->frame, slot->length);
}

/* Begin an execution report: the common header fields. */
#define ER_COMMON(prefix, root, gw, in, seq, order_id, exec_id) do { \
	prefix##_set_seq_num(root, seq); \
	prefix##_set_uuid(root, (gw)->uuid); \
	prefix##_set_exec_id(root, exec_id, strlen(exec_id)); \
	prefix##_set_cl_ord_id(root, (in)->clordid, strlen((in)->clordid)); \
	prefix##_set_order_id(root, order_id); \
	prefix##_set_transact_time(root, gw_epoch(gw)); \
	prefix##_set_sending_time_epoch(root, gw_epoch(gw)); \
	prefix##_set_order_request_id(root, (in)->request_id); \
	prefix##_set_security_id(root, (in)->security_id); \
	prefix##_set_side(root, (in)->side); \
	prefix##_set_poss_retrans_flag(root, 0); \
} while (0)

static void
exec_id_text(struct tw_gw *gw, char *out, size_t size)
{
	snprintf(out, size, "E%" PRIu64, ++gw->next_exec_id);
}

void
tw_gw_report_reject(struct tw_gw *gw, const struct tw_gw_app *in, const char *text)
{
	struct il3_encoder enc;
	uint8_t buf[STORE_FRAME];
	char exec_id[24];
	uint32_t seq = gw->next_out++;
	uint8_t *root = il3_encode_begin(&enc, buf, sizeof(buf),
			IL3_TEMPLATE_EXECUTION_REPORT_REJECT523);

	if (root == NULL)
		return;
	exec_id_text(gw, exec_id, sizeof(exec_id));
	ER_COMMON(il3_execution_report_reject523, root, gw, in, seq, 0, exec_id);
	il3_execution_report_reject523_set_text(root, text, strlen(text));
	il3_execution_report_reject523_set_price(root, in->price);
	il3_execution_report_reject523_set_order_qty(root, in->quantity);
	il3_execution_report_reject523_set_ord_rej_reason(root, 1);
	send_app(gw, &enc, seq);
}

void
tw_gw_report_new(struct tw_gw *gw, const struct tw_gw_app *in, uint64_t order_id)
{
	struct il3_encoder enc;
	uint8_t buf[STORE_FRAME];
	char exec_id[24];
	uint32_t seq = gw->next_out++;
	uint8_t *root = il3_encode_begin(&enc, buf, sizeof(buf),
			IL3_TEMPLATE_EXECUTION_REPORT_NEW522);

	if (root == NULL)
		return;
	exec_id_text(gw, exec_id, sizeof(exec_id));
	ER_COMMON(il3_execution_report_new522, root, gw, in, seq, order_id, exec_id);
	il3_execution_report_new522_set_price(root, in->price);
	il3_execution_report_new522_set_order_qty(root, in->quantity);
	il3_execution_report_new522_set_ord_type(root, IL3_ORDER_TYPE_REQ_LIMIT);
	send_app(gw, &enc, seq);
}

void
tw_gw_report_fill(struct tw_gw *gw, const struct tw_gw_app *in, uint64_t order_id,
		  int64_t last_px, uint32_t last_qty, uint32_t cum_qty, uint32_t leaves_qty)
{
	struct il3_encoder enc;
	uint8_t buf[STORE_FRAME];
	char exec_id[24];
	uint32_t seq = gw->next_out++;
	uint8_t *root = il3_encode_begin(&enc, buf, sizeof(buf),
			IL3_TEMPLATE_EXECUTION_REPORT_TRADE_OUTRIGHT525);

	if (root == NULL)
		return;
	exec_id_text(gw, exec_id, sizeof(exec_id));
	ER_COMMON(il3_execution_report_trade_outright525, root, gw, in, seq, order_id,
		exec_id);
	il3_execution_report_trade_outright525_set_price(root, in->price);
	il3_execution_report_trade_outright525_set_order_qty(root, in->quantity);
	il3_execution_report_trade_outright525_set_last_px(root, last_px);
	il3_execution_report_trade_outright525_set_last_qty(root, last_qty);
	il3_execution_report_trade_outright525_set_cum_qty(root, cum_qty);
	il3_execution_report_trade_outright525_set_leaves_qty(root, leaves_qty);
	il3_execution_report_trade_outright525_set_ord_status(root, leaves_qty == 0 ?
		IL3_ORD_STATUS_TRD_FILLED : IL3_ORD_STATUS_TRD_PARTIALLY_FILLED);
	il3_execution_report_trade_outright525_set_sec_exec_id(root, gw->next_exec_id);
	il3_execution_report_trade_outright525_set_side_trade_id(root,
		(uint32_t)gw->next_exec_id);
	send_app(gw, &enc, seq);
}

void
tw_gw_report_cancel(struct tw_gw *gw, const struct tw_gw_app *in, uint64_t order_id,
		    int64_t price, uint32_t order_qty, uint32_t cum_qty)
{
	struct il3_encoder enc;
	uint8_t buf[STORE_FRAME];
	char exec_id[24];
	uint32_t seq = gw->next_out++;
	uint8_t *root = il3_encode_begin(&enc, buf, sizeof(buf),
			IL3_TEMPLATE_EXECUTION_REPORT_CANCEL534);

	if (root == NULL)
		return;
	exec_id_text(gw, exec_id, sizeof(exec_id));
	ER_COMMON(il3_execution_report_cancel534, root, gw, in, seq, order_id, exec_id);
	il3_execution_report_cancel534_set_price(root, price);
	il3_execution_report_cancel534_set_order_qty(root, order_qty);
	il3_execution_report_cancel534_set_cum_qty(root, cum_qty);
	il3_execution_report_cancel534_set_ord_type(root, IL3_ORDER_TYPE_REQ_LIMIT);
	send_app(gw, &enc, seq);
}

void
tw_gw_report_modify(struct tw_gw *gw, const struct tw_gw_app *in, uint64_t order_id,
		    int64_t price, uint32_t qty)
{
	struct il3_encoder enc;
	uint8_t buf[STORE_FRAME];
	char exec_id[24];
	uint32_t seq = gw->next_out++;
	uint8_t *root = il3_encode_begin(&enc, buf, sizeof(buf),
			IL3_TEMPLATE_EXECUTION_REPORT_MODIFY531);

	if (root == NULL)
		return;
	exec_id_text(gw, exec_id, sizeof(exec_id));
	ER_COMMON(il3_execution_report_modify531, root, gw, in, seq, order_id, exec_id);
	il3_execution_report_modify531_set_price(root, price);
	il3_execution_report_modify531_set_order_qty(root, qty);
	il3_execution_report_modify531_set_leaves_qty(root, qty);
	il3_execution_report_modify531_set_cum_qty(root, 0);
	il3_execution_report_modify531_set_ord_type(root, IL3_ORDER_TYPE_REQ_LIMIT);
	send_app(gw, &enc, seq);
}

void
tw_gw_report_cancel_reject(struct tw_gw *gw, const struct tw_gw_app *in, bool replace,
			   const char *text)
{
	struct il3_encoder enc;
	uint8_t buf[STORE_FRAME];
	char exec_id[24];
	uint32_t seq = gw->next_out++;
	uint8_t *root;

	exec_id_text(gw, exec_id, sizeof(exec_id));
	if (!replace) {
		root = il3_encode_begin(&enc, buf, sizeof(buf),
				IL3_TEMPLATE_ORDER_CANCEL_REJECT535);
		if (root == NULL)
			return;
		il3_order_cancel_reject535_set_seq_num(root, seq);
		il3_order_cancel_reject535_set_uuid(root, gw->uuid);
		il3_order_cancel_reject535_set_text(root, text, strlen(text));
		il3_order_cancel_reject535_set_exec_id(root, exec_id, strlen(exec_id));
		il3_order_cancel_reject535_set_cl_ord_id(root, in->clordid, strlen(in->clordid));
		il3_order_cancel_reject535_set_order_id(root, in->order_id);
		il3_order_cancel_reject535_set_transact_time(root, gw_epoch(gw));
		il3_order_cancel_reject535_set_sending_time_epoch(root, gw_epoch(gw));
		il3_order_cancel_reject535_set_order_request_id(root, in->request_id);
		il3_order_cancel_reject535_set_cxl_rej_reason(root, 1);
		il3_order_cancel_reject535_set_poss_retrans_flag(root, 0);
	} else {
		root = il3_encode_begin(&enc, buf, sizeof(buf),
				IL3_TEMPLATE_ORDER_CANCEL_REPLACE_REJECT536);
		if (root == NULL)
			return;
		il3_order_cancel_replace_reject536_set_seq_num(root, seq);
		il3_order_cancel_replace_reject536_set_uuid(root, gw->uuid);
		il3_order_cancel_replace_reject536_set_text(root, text, strlen(text));
		il3_order_cancel_replace_reject536_set_exec_id(root, exec_id, strlen(exec_id));
		il3_order_cancel_replace_reject536_set_cl_ord_id(root, in->clordid,
			strlen(in->clordid));
		il3_order_cancel_replace_reject536_set_order_id(root, in->order_id);
		il3_order_cancel_replace_reject536_set_transact_time(root, gw_epoch(gw));
		il3_order_cancel_replace_reject536_set_sending_time_epoch(root, gw_epoch(gw));
		il3_order_cancel_replace_reject536_set_order_request_id(root, in->request_id);
		il3_order_cancel_replace_reject536_set_cxl_rej_reason(root, 1);
		il3_order_cancel_replace_reject536_set_poss_retrans_flag(root, 0);
	}
	send_app(gw, &enc, seq);
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
decode_app(const struct il3_msg *msg, struct tw_gw_app *in)
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
		il3_new_order_single514_sending_time_epoch(msg, &in->sending_time_ns);
		break;
	case IL3_TEMPLATE_ORDER_CANCEL_REQUEST516:
		il3_order_cancel_request516_seq_num(msg, &in->seq);
		il3_order_cancel_request516_cl_ord_id(msg, &chars, &length);
		il3_order_cancel_request516_order_request_id(msg, &in->request_id);
		il3_order_cancel_request516_order_id(msg, &in->order_id);
		il3_order_cancel_request516_security_id(msg, &in->security_id);
		il3_order_cancel_request516_side(msg, &in->side);
		il3_order_cancel_request516_sending_time_epoch(msg, &in->sending_time_ns);
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
		il3_order_cancel_replace_request515_sending_time_epoch(msg, &in->sending_time_ns);
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
audit_applied(struct tw_gw *gw, const struct tw_gw_app *in, bool fill)
{
	struct tw_gw_audit *a = gw->audit;
	char request[24];

	a->applied++;
	a->fills += fill;
	if (in->template_id == IL3_TEMPLATE_NEW_ORDER_SINGLE514 &&
			audit_seen(gw, 'C', in->clordid)) {
		a->duplicate_clordid++;
		trace(gw, "violation duplicate_clordid seq=%" PRIu32 " clordid=%s", in->seq,
			in->clordid);
	}
	snprintf(request, sizeof(request), "%" PRIu64, in->request_id);
	if (audit_seen(gw, 'R', request)) {
		a->duplicate_request++;
		trace(gw, "violation duplicate_request seq=%" PRIu32 " request=%s", in->seq,
			request);
	}
}

static void
on_app(struct tw_gw *gw, const struct il3_msg *msg)
{
	struct tw_gw_app in;
	bool fill = false;

	if (!gw->established || gw->audit == NULL) {
		trace(gw, "protocol-error app before establish template=%u",
			(unsigned int)msg->template_id);
		close_client(gw, "protocol_error");
		return;
	}
	if (decode_app(msg, &in) < 0) {
		trace(gw, "ignored template=%u", (unsigned int)msg->template_id);
		return;
	}
	if (in.seq < gw->next_in) {
		if (gw->gap_from != gw->gap_to && in.seq == gw->gap_from) {
			gw->gap_from++;
			fill = true;
		} else {
			trace(gw, "duplicate seq=%" PRIu32 " expected=%" PRIu32, in.seq,
				gw->next_in);
			gw->audit->duplicate_seq++;
			return;
		}
	} else {
		if (in.seq > gw->next_in)
			inbound_ahead(gw, in.seq);
		gw->next_in = in.seq + 1;
	}
	trace(gw, "app seq=%" PRIu32 " template=%u clordid=%s request=%" PRIu64 " fill=%d",
		in.seq, (unsigned int)in.template_id, in.clordid, in.request_id, fill ? 1 : 0);
	audit_applied(gw, &in, fill);
	gw->app_received++;
	if (gw->drop_after != 0 && gw->app_received >= gw->drop_after) {
		gw->drop_after = 0;
		gw->drop_now = true;
	}
	reply_delay(gw);
	gw->ops.on_app(gw->ops.ctx, gw, &in);
	if (gw->drop_now) {
		gw->drop_now = false;
		close_client(gw, "drop_after");
	}
}

/* ---------------------------------------------------------------------- */
/* Session-layer input                                                     */
/* ---------------------------------------------------------------------- */

static bool
signature_ok(const struct tw_gw *gw, const char *canon, int length, const char *sig,
		size_t sig_length, const char *key_id, size_t key_id_length)
{
	uint8_t expected[IL3_SIGNATURE_SIZE];

	if (length < 0 || sig_length != IL3_SIGNATURE_SIZE ||
			key_id_length != strlen(gw->creds.access_key_id) ||
			memcmp(key_id, gw->creds.access_key_id, key_id_length) != 0)
		return false;
	if (il3_hmac_sha256(gw->creds.key, gw->creds.key_length, canon, (size_t)length,
			expected) < 0)
		return false;
	return CRYPTO_memcmp(expected, sig, IL3_SIGNATURE_SIZE) == 0;
}

static void
on_negotiate(struct tw_gw *gw, const struct il3_msg *msg)
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
	reply_delay(gw);
	if (!signature_ok(gw, canon, n, sig, sig_length, key_id, key_id_length)) {
		send_negotiation_reject(gw, uuid, ts, REJECT_HMAC, "HMAC not authenticated");
		return;
	}
	if (uuid == 0) {
		send_negotiation_reject(gw, uuid, ts, REJECT_UUID, "UUID missing");
		return;
	}
	if (uuid != gw->uuid) {
		audit_begin(gw, uuid);
		gw->last_uuid = gw->uuid;
		gw->uuid = uuid;
		gw->next_in = 1;
		gw->next_out = 1;
		gw->gap_from = gw->gap_to = 0;
		memset(gw->store, 0, sizeof(gw->store));
	}
	gw->negotiated = true;
	root = il3_encode_begin(&enc, buf, sizeof(buf), IL3_TEMPLATE_NEGOTIATION_RESPONSE501);
	if (root == NULL)
		return;
	il3_negotiation_response501_set_uuid(root, uuid);
	il3_negotiation_response501_set_request_timestamp(root, ts);
	il3_negotiation_response501_set_fault_tolerance_indicator(root, IL3_FTI_PRIMARY);
	il3_negotiation_response501_set_previous_uuid(root, gw->last_uuid);
	send_session(gw, &enc);
	trace(gw, "negotiate ok uuid=%" PRIu64, uuid);
}

static void
on_establish(struct tw_gw *gw, const struct il3_msg *msg)
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
	reply_delay(gw);
	if (!signature_ok(gw, canon, n, sig, sig_length, key_id, key_id_length)) {
		send_establishment_reject(gw, uuid, ts, REJECT_HMAC, "HMAC not authenticated");
		return;
	}
	if (!gw->negotiated || uuid != gw->uuid) {
		send_establishment_reject(gw, uuid, ts, REJECT_UUID, "UUID not negotiated");
		return;
	}
	if (next_seq < gw->next_in) {
		send_establishment_reject(gw, uuid, ts, REJECT_SEQUENCE,
			"NextSeqNo lower than expected");
		return;
	}
	if (keep_alive == 0) {
		send_establishment_reject(gw, uuid, ts, REJECT_KEEP_ALIVE,
			"KeepAliveInterval must be positive");
		return;
	}
	gw->established = true;
	gw->keep_alive_ms = keep_alive;
	root = il3_encode_begin(&enc, buf, sizeof(buf), IL3_TEMPLATE_ESTABLISHMENT_ACK504);
	if (root == NULL)
		return;
	il3_establishment_ack504_set_uuid(root, uuid);
	il3_establishment_ack504_set_request_timestamp(root, ts);
	il3_establishment_ack504_set_next_seq_no(root, gw->next_out);
	il3_establishment_ack504_set_previous_seq_no(root, gw->next_in - 1);
	il3_establishment_ack504_set_previous_uuid(root, gw->last_uuid);
	il3_establishment_ack504_set_keep_alive_interval(root, keep_alive);
	il3_establishment_ack504_set_secret_key_secure_id_expiration(root, 30);
	il3_establishment_ack504_set_fault_tolerance_indicator(root, IL3_FTI_PRIMARY);
	send_session(gw, &enc);
	trace(gw, "establish ok uuid=%" PRIu64 " next_in=%" PRIu32 " next_out=%" PRIu32
		" client_next=%" PRIu32 " keep_alive=%u", uuid, gw->next_in, gw->next_out,
		next_seq, (unsigned int)keep_alive);
	audit_established(gw);
	gap_abandon(gw);
	if (next_seq > gw->next_in)
		inbound_ahead(gw, next_seq);
}

static void
on_retransmit_request(struct tw_gw *gw, const struct il3_msg *msg)
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
	if (gw->ignore_rr) {
		trace(gw, "retransmit-request-ignored from=%" PRIu32 " count=%u", from,
			(unsigned int)count);
		return;
	}
	trace(gw, "retransmit-request from=%" PRIu32 " count=%u", from, (unsigned int)count);
	if (uuid != gw->uuid || (last_uuid != 0 && last_uuid != gw->uuid))
		why = "unknown UUID";
	else if (count == 0 || count > MAX_RETRANSMIT || from == 0 ||
			(uint64_t)from + count > gw->next_out)
		why = "range out of bounds";
	for (seq = from; why == NULL && seq < from + count; seq++)
		if (gw->store[seq % STORE_SIZE].seq != seq)
			why = "range no longer stored";
	reply_delay(gw);
	if (why != NULL) {
		root = il3_encode_begin(&enc, buf, sizeof(buf), IL3_TEMPLATE_RETRANSMIT_REJECT510);
		if (root == NULL)
			return;
		il3_retransmit_reject510_set_reason(root, why, strlen(why));
		il3_retransmit_reject510_set_uuid(root, uuid);
		il3_retransmit_reject510_set_last_uuid(root, last_uuid);
		il3_retransmit_reject510_set_request_timestamp(root, ts);
		il3_retransmit_reject510_set_error_codes(root, 1);
		send_session(gw, &enc);
		trace(gw, "retransmit-reject %s", why);
		if (gw->audit != NULL)
			gw->audit->retransmit_rejects++;
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
	send_session(gw, &enc);
	for (seq = from; seq < from + count; seq++) {
		struct tw_gw_stored *slot = &gw->store[seq % STORE_SIZE];
		uint8_t copy[STORE_FRAME];

		memcpy(copy, slot->frame, slot->length);
		set_poss_retrans(copy, slot->length);
		emit(gw, copy, slot->length);
		slot->owed = false;
	}
	trace(gw, "retransmission from=%" PRIu32 " count=%u", from, (unsigned int)count);
	if (gw->audit != NULL)
		gw->audit->retransmitted += count;
}

static void
on_frame(struct tw_gw *gw, const struct il3_msg *msg)
{
	uint32_t next = 0;
	uint16_t code = 0;
	uint8_t lapsed = 0;

	switch (msg->template_id) {
	case IL3_TEMPLATE_NEGOTIATE500:
		on_negotiate(gw, msg);
		return;
	case IL3_TEMPLATE_ESTABLISH503:
		on_establish(gw, msg);
		return;
	case IL3_TEMPLATE_SEQUENCE506:
		il3_sequence506_next_seq_no(msg, &next);
		il3_sequence506_keep_alive_interval_lapsed(msg, &lapsed);
		trace(gw, "sequence-in next=%" PRIu32 " lapsed=%u", next, (unsigned int)lapsed);
		if (!gw->established)
			return;
		if (gw->gap_from != gw->gap_to) {
			trace(gw, "gap-skipped from=%" PRIu32 " count=%" PRIu32, gw->gap_from,
				gw->gap_to - gw->gap_from);
			gw->gap_from = gw->gap_to = 0;
		}
		if (next > gw->next_in)
			inbound_ahead(gw, next);
		if (lapsed == IL3_KEEP_ALIVE_LAPSED_LAPSED)
			send_sequence(gw);
		return;
	case IL3_TEMPLATE_TERMINATE507:
		il3_terminate507_error_codes(msg, &code);
		trace(gw, "terminate-in code=%u", (unsigned int)code);
		send_terminate(gw, 0);
		flush_out(gw);
		close_client(gw, "terminated");
		return;
	case IL3_TEMPLATE_RETRANSMIT_REQUEST508:
		on_retransmit_request(gw, msg);
		return;
	default:
		on_app(gw, msg);
		return;
	}
}

static void
read_client(struct tw_gw *gw)
{
	struct il3_msg msg;
	uint8_t *space;
	size_t room = il3_stream_space(&gw->stream, &space);
	ssize_t n = recv(gw->fd, space, room, MSG_DONTWAIT);
	int rc;

	if (n < 0) {
		if (errno != EAGAIN && errno != EINTR)
			close_client(gw, "recv_error");
		return;
	}
	if (n == 0) {
		close_client(gw, "eof");
		return;
	}
	gw->last_rx_ns = gw_now(gw);
	il3_stream_commit(&gw->stream, (size_t)n);
	while (gw->fd >= 0 && (rc = il3_stream_next(&gw->stream, &msg)) == 1)
		on_frame(gw, &msg);
	if (gw->fd >= 0 && rc < 0) {
		trace(gw, "protocol-error malformed %s",
			il3_parse_error_name(gw->stream.last_error));
		close_client(gw, "malformed");
	}
}
static int
listen_loopback(uint16_t port, uint16_t *bound)
{
	struct sockaddr_in addr = { .sin_family = AF_INET };
	socklen_t length = sizeof(addr);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
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
accept_client(struct tw_gw *gw)
{
	int one = 1;
	int fd = accept4(gw->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

	if (fd < 0)
		return;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	gw->fd = fd;
	gw->established = false;
	gw->last_rx_ns = gw->last_tx_ns = gw_now(gw);
	il3_stream_reset(&gw->stream);
	trace(gw, "connect");
}

static void
run_timers(struct tw_gw *gw, uint64_t now)
{
	uint64_t k = (uint64_t)gw->keep_alive_ms * NS_PER_MS;

	/* silent means frozen towards the client: no heartbeats, no lapse */
	if (gw->fd < 0 || !gw->established || k == 0 || gw->silent)
		return;
	if (now - gw->last_rx_ns >= 2 * k) {
		trace(gw, "client-lapsed");
		send_terminate(gw, 0);
		flush_out(gw);
		close_client(gw, "client_lapsed");
		return;
	}
	if (!gw->silent && now - gw->last_tx_ns >= k)
		send_sequence(gw);
}

/* ---------------------------------------------------------------------- */
/* Public                                                                  */
/* ---------------------------------------------------------------------- */

struct tw_gw *
tw_gw_create(const struct il3_credentials *creds, const struct tw_gw_ops *ops, uint16_t port,
	     uint16_t *bound)
{
	struct tw_gw *gw;

	if (creds == NULL || ops == NULL || ops->now_ns == NULL || ops->epoch_ns == NULL ||
	    ops->on_app == NULL || bound == NULL) {
		errno = EINVAL;
		return NULL;
	}
	gw = calloc(1, sizeof(*gw));
	if (gw == NULL)
		return NULL;
	gw->ops = *ops;
	gw->creds = *creds;
	gw->fd = -1;
	gw->next_in = gw->next_out = 1;
	gw->listen_fd = listen_loopback(port, bound);
	if (gw->listen_fd < 0) {
		int e = -gw->listen_fd;

		il3_credentials_wipe(&gw->creds);
		free(gw);
		errno = e;
		return NULL;
	}
	return gw;
}

void
tw_gw_destroy(struct tw_gw *gw)
{
	if (gw == NULL)
		return;
	if (gw->fd >= 0)
		close(gw->fd);
	close(gw->listen_fd);
	il3_credentials_wipe(&gw->creds);
	free(gw);
}

struct pollfd
tw_gw_pollfd(const struct tw_gw *gw)
{
	if (gw->fd >= 0)
		return (struct pollfd){ .fd = gw->fd, .events = (short)(POLLIN |
			(gw->out_sent < gw->out_length && !gw->silent ? POLLOUT : 0)) };
	return (struct pollfd){ .fd = gw->listen_fd, .events = POLLIN };
}

void
tw_gw_step(struct tw_gw *gw, short revents)
{
	if (revents != 0) {
		if (gw->fd < 0)
			accept_client(gw);
		else if ((revents & (POLLIN | POLLHUP | POLLERR)) != 0)
			read_client(gw);
	}
	run_timers(gw, gw_now(gw));
	flush_out(gw);
}

void
tw_gw_flush(struct tw_gw *gw)
{
	flush_out(gw);
}

void
tw_gw_close_client(struct tw_gw *gw, const char *why)
{
	close_client(gw, why);
}

void
tw_gw_terminate(struct tw_gw *gw)
{
	send_terminate(gw, 0);
}

bool
tw_gw_skip_at(struct tw_gw *gw, uint32_t seq)
{
	for (size_t i = 0; i < sizeof(gw->skip_seq) / sizeof(gw->skip_seq[0]); i++) {
		if (gw->skip_seq[i] == 0 || gw->skip_seq[i] == seq) {
			gw->skip_seq[i] = seq;
			return true;
		}
	}
	return false;
}

uint64_t
tw_gw_audit_report(struct tw_gw *gw)
{
	return audit_report(gw);
}
