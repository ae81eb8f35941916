/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * FIXP client session for iLink 3.  Single threaded and poll driven: the
 * owner calls il3_session_step() when the socket is ready or a timer is due;
 * nothing blocks, nothing allocates after il3_session_create().
 *
 * Timers (K = negotiated keep-alive): we send Sequence after K of silence;
 * no byte from the peer for K -> we send Sequence with KeepAliveIntervalLapsed;
 * for 2K -> the peer has lapsed: Terminate and disconnect.  Negotiate,
 * Establish and Terminate wait at most 2K for their answer.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ilink3.h"

#define OUT_CAPACITY 65536
#define NS_PER_MS UINT64_C(1000000)
/* Most messages one RetransmitRequest may ask for (FIXP). */
#define RETRANSMIT_MAX 2500u

/* An inbound range still to be retransmitted. */
struct il3_gap {
	uint32_t from, count;
	uint8_t attempts;          /* requests already sent for it */
};

/* Where SeqNum and PossRetransFlag sit in an application message, found by
 * name once per message layout instead of per inbound message. */
#define APP_FIELDS_SLOTS 64
struct app_fields {
	const struct il3_message_info *info;   /* NULL: empty slot */
	const struct il3_field_info *seq;      /* NULL: the layout has no SeqNum */
	const struct il3_field_info *poss_retrans;
};

struct il3_session {
	char journal_path[256];
	struct app_fields app_fields[APP_FIELDS_SLOTS];  /* direct-mapped by template id */
	char session_id[4], firm_id[6], sender_id[21], location[6];
	char system_name[31], system_version[11], system_vendor[11];
	uint32_t gateway_ip;
	uint16_t gateway_port;
	uint16_t proposed_keep_alive_ms;
	uint64_t party_details_list_req_id;
	struct il3_credentials creds;
	struct il3_journal_record journal;
	struct il3_session_handlers handlers;
	struct il3_session_counters counters;
	enum il3_state state;
	enum il3_event event;
	int fd;
	uint16_t keep_alive_ms;
	bool lapse_warned;
	bool negotiate_needed;         /* journal.uuid not yet accepted by the gateway */
	bool retransmit_outstanding;
	uint32_t retransmit_remaining; /* retransmitted messages still to come */
	uint64_t retransmit_deadline_ns; /* the outstanding request times out */
	struct il3_gap retransmit_current; /* what the outstanding request asked */
	/* gaps waiting for their request: FIFO ring, oldest at gap_head */
	struct il3_gap gaps[IL3_SESSION_GAP_QUEUE];
	uint32_t gap_head, gap_count;
	/* the journal's pending frame as loaded before this connection: after a
	 * crash it is the message in doubt, which new sends must not make
	 * unrecoverable before the gateway's NotApplied arrives */
	uint32_t doubt_seq;
	uint16_t doubt_length;
	uint8_t doubt_frame[IL3_JOURNAL_MAX_FRAME];
	uint64_t request_timestamp;
	uint64_t last_rx_ns, last_tx_ns, deadline_ns;
	size_t out_length, out_sent;
	uint8_t out[OUT_CAPACITY];
	struct il3_stream stream;
};

static const char *const state_names[IL3_STATE_COUNT] = {
	"disconnected", "connecting", "negotiating", "establishing", "established", "terminating",
};

static const char *const event_names[IL3_EVENT_COUNT] = {
	"none", "connected", "connect_failed", "negotiated", "negotiation_rejected",
	"established", "establishment_rejected", "peer_lapsed", "response_timeout",
	"terminated_by_peer", "terminated", "peer_closed", "protocol_error",
};

const char *
il3_state_name(enum il3_state state)
{
	return (unsigned int)state < IL3_STATE_COUNT ? state_names[state] : "unknown";
}

const char *
il3_event_name(enum il3_event event)
{
	return (unsigned int)event < IL3_EVENT_COUNT ? event_names[event] : "unknown";
}

static int
copy_str(char *dst, size_t size, const char *src)
{
	if (src == NULL || strlen(src) >= size)
		return -EINVAL;
	memcpy(dst, src, strlen(src) + 1);
	return 0;
}

struct il3_session *
il3_session_create(const struct il3_session_config *config,
		const struct il3_session_handlers *handlers)
{
	struct il3_session *s;
	int rc;

	if (config == NULL || config->keep_alive_ms == 0) {
		errno = EINVAL;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return NULL;
	s->fd = -1;
	if (copy_str(s->journal_path, sizeof(s->journal_path), config->journal_path) < 0 ||
			copy_str(s->session_id, sizeof(s->session_id), config->session_id) < 0 ||
			copy_str(s->firm_id, sizeof(s->firm_id), config->firm_id) < 0 ||
			copy_str(s->sender_id, sizeof(s->sender_id), config->sender_id) < 0 ||
			copy_str(s->location, sizeof(s->location), config->location) < 0 ||
			copy_str(s->system_name, sizeof(s->system_name), config->system_name) < 0 ||
			copy_str(s->system_version, sizeof(s->system_version),
				config->system_version) < 0 ||
			copy_str(s->system_vendor, sizeof(s->system_vendor),
				config->system_vendor) < 0) {
		rc = -EINVAL;
		goto fail;
	}
	s->gateway_ip = config->gateway_ip;
	s->gateway_port = config->gateway_port;
	s->proposed_keep_alive_ms = config->keep_alive_ms;
	s->keep_alive_ms = config->keep_alive_ms;
	s->party_details_list_req_id = config->party_details_list_req_id;
	if (handlers != NULL)
		s->handlers = *handlers;
	rc = il3_credentials_load(config->credentials_path, &s->creds);
	if (rc < 0)
		goto fail;
	rc = il3_journal_load(s->journal_path, &s->journal);
	if (rc < 0)
		goto fail;
	return s;
fail:
	il3_credentials_wipe(&s->creds);
	free(s);
	errno = -rc;
	return NULL;
}

static void
set_state(struct il3_session *s, enum il3_state to, enum il3_event why)
{
	enum il3_state from = s->state;

	s->state = to;
	s->event = why;
	if (s->handlers.on_state != NULL && from != to)
		s->handlers.on_state(s->handlers.ctx, from, to, why);
}

/*
 * Gap queue.  One RetransmitRequest is outstanding at a time; gaps found
 * meanwhile wait here, oldest first, and are requested when the outstanding
 * one completes, is rejected or times out.  A range whose request got no
 * answer IL3_SESSION_RETRANSMIT_ATTEMPTS times, or that finds the queue
 * full, is given up and counted (retransmit_lost).
 */
static struct il3_gap *
gap_at(struct il3_session *s, uint32_t i)
{
	return &s->gaps[(s->gap_head + i) % IL3_SESSION_GAP_QUEUE];
}

static void
gap_push(struct il3_session *s, struct il3_gap gap, bool front)
{
	struct il3_gap *tail;

	if (gap.count == 0)
		return;
	if (!front && s->gap_count > 0) {
		tail = gap_at(s, s->gap_count - 1);
		if (tail->attempts == 0 && gap.attempts == 0 &&
				tail->from + tail->count == gap.from) {
			tail->count += gap.count;  /* adjacent: one range */
			return;
		}
	}
	if (s->gap_count == IL3_SESSION_GAP_QUEUE) {
		s->counters.retransmit_lost += gap.count;
		return;
	}
	if (front) {
		s->gap_head = (s->gap_head + IL3_SESSION_GAP_QUEUE - 1) % IL3_SESSION_GAP_QUEUE;
		s->gaps[s->gap_head] = gap;
	} else {
		*gap_at(s, s->gap_count) = gap;
	}
	s->gap_count++;
}

static void
gap_clear(struct il3_session *s)
{
	s->gap_head = s->gap_count = 0;
	s->retransmit_outstanding = false;
	s->retransmit_remaining = 0;
}

/* The outstanding request ends unfilled: what is still missing goes back to
 * the front of the queue, or is given up after its last attempt. */
static void
retransmit_unfilled(struct il3_session *s, bool give_up)
{
	struct il3_gap gap = s->retransmit_current;

	if (!s->retransmit_outstanding)
		return;
	if (s->retransmit_remaining > 0 && s->retransmit_remaining < gap.count) {
		gap.from += gap.count - s->retransmit_remaining;
		gap.count = s->retransmit_remaining;
	}
	s->retransmit_outstanding = false;
	s->retransmit_remaining = 0;
	if (give_up || gap.attempts >= IL3_SESSION_RETRANSMIT_ATTEMPTS)
		s->counters.retransmit_lost += gap.count;
	else
		gap_push(s, gap, true);
}

static void
close_socket(struct il3_session *s, enum il3_event why)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	s->out_length = s->out_sent = 0;
	/* unfilled gaps stay queued: re-established on the same UUID, they are
	 * requested again */
	if (s->retransmit_outstanding) {
		s->retransmit_current.attempts--;  /* the connection failed, not the request */
		retransmit_unfilled(s, false);
	}
	il3_stream_reset(&s->stream);
	set_state(s, IL3_STATE_DISCONNECTED, why);
}

void
il3_session_destroy(struct il3_session *s)
{
	if (s == NULL)
		return;
	if (s->fd >= 0)
		close(s->fd);
	il3_credentials_wipe(&s->creds);
	free(s);
}

void
il3_session_disconnect(struct il3_session *s)
{
	close_socket(s, IL3_EVENT_PEER_CLOSED);
}

int il3_session_fd(const struct il3_session *s) { return s->fd; }
enum il3_state il3_session_state(const struct il3_session *s) { return s->state; }
enum il3_event il3_session_last_event(const struct il3_session *s) { return s->event; }

const struct il3_session_counters *
il3_session_counters(const struct il3_session *s)
{
	return &s->counters;
}

void
il3_session_sequence(const struct il3_session *s, uint64_t *uuid, uint32_t *next_out,
		uint32_t *next_in)
{
	if (uuid != NULL)
		*uuid = s->journal.uuid;
	if (next_out != NULL)
		*next_out = s->journal.next_out_seq;
	if (next_in != NULL)
		*next_in = s->journal.next_in_seq;
}

short
il3_session_poll_events(const struct il3_session *s)
{
	if (s->fd < 0)
		return 0;
	if (s->state == IL3_STATE_CONNECTING || s->out_sent < s->out_length)
		return POLLIN | POLLOUT;
	return POLLIN;
}

uint64_t
il3_session_next_timeout_ns(const struct il3_session *s)
{
	uint64_t k = (uint64_t)s->keep_alive_ms * NS_PER_MS;

	switch (s->state) {
	case IL3_STATE_ESTABLISHED: {
		uint64_t tx = s->last_tx_ns + k, rx = s->last_rx_ns + (s->lapse_warned ? 2 * k : k);
		uint64_t next = tx < rx ? tx : rx;

		if (s->retransmit_outstanding && s->retransmit_deadline_ns < next)
			next = s->retransmit_deadline_ns;
		return next;
	}
	case IL3_STATE_DISCONNECTED:
		return UINT64_MAX;
	default:
		return s->deadline_ns;
	}
}

static void
flush(struct il3_session *s)
{
	while (s->fd >= 0 && s->out_sent < s->out_length) {
		ssize_t n = send(s->fd, s->out + s->out_sent, s->out_length - s->out_sent,
				MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
				return;
			close_socket(s, IL3_EVENT_PEER_CLOSED);
			return;
		}
		s->out_sent += (size_t)n;
	}
	if (s->out_sent == s->out_length)
		s->out_sent = s->out_length = 0;
}

/* Room for one frame at the end of the output buffer, or NULL. */
static uint8_t *
out_space(struct il3_session *s, size_t need)
{
	if (s->out_sent > 0 && s->out_sent == s->out_length)
		s->out_sent = s->out_length = 0;
	if (s->out_sent > 0 && OUT_CAPACITY - s->out_length < need) {
		memmove(s->out, s->out + s->out_sent, s->out_length - s->out_sent);
		s->out_length -= s->out_sent;
		s->out_sent = 0;
	}
	if (OUT_CAPACITY - s->out_length < need) {
		s->counters.send_blocked++;
		return NULL;
	}
	return s->out + s->out_length;
}

static void
queued(struct il3_session *s, int length, uint64_t now_ns)
{
	s->out_length += (size_t)length;
	s->counters.frames_out++;
	s->last_tx_ns = now_ns;
}

static int
send_negotiate(struct il3_session *s, uint64_t now_ns)
{
	struct il3_encoder enc;
	uint8_t sig[IL3_SIGNATURE_SIZE];
	char canon[256];
	uint8_t *buf = out_space(s, 256), *root;
	int n;

	if (buf == NULL)
		return -ENOBUFS;
	s->request_timestamp = now_ns;
	n = il3_canonical_negotiate(canon, sizeof(canon), now_ns, s->journal.uuid,
			s->session_id, s->firm_id);
	if (n < 0 || il3_hmac_sha256(s->creds.key, s->creds.key_length, canon, (size_t)n,
			sig) < 0)
		return -EIO;
	root = il3_encode_begin(&enc, buf, 256, IL3_TEMPLATE_NEGOTIATE500);
	if (root == NULL)
		return -errno;
	il3_negotiate500_set_hmac_signature(root, (const char *)sig, sizeof(sig));
	il3_negotiate500_set_access_key_id(root, s->creds.access_key_id,
			strlen(s->creds.access_key_id));
	il3_negotiate500_set_uuid(root, s->journal.uuid);
	il3_negotiate500_set_request_timestamp(root, now_ns);
	il3_negotiate500_set_session(root, s->session_id, strlen(s->session_id));
	il3_negotiate500_set_firm(root, s->firm_id, strlen(s->firm_id));
	n = il3_encode_end(&enc);
	if (n < 0)
		return n;
	queued(s, n, now_ns);
	s->deadline_ns = now_ns + 2 * (uint64_t)s->proposed_keep_alive_ms * NS_PER_MS;
	set_state(s, IL3_STATE_NEGOTIATING, IL3_EVENT_CONNECTED);
	return 0;
}

static int
send_establish(struct il3_session *s, uint64_t now_ns, enum il3_event why)
{
	struct il3_encoder enc;
	uint8_t sig[IL3_SIGNATURE_SIZE];
	char canon[512];
	uint8_t *buf = out_space(s, 256), *root;
	int n;

	if (buf == NULL)
		return -ENOBUFS;
	s->request_timestamp = now_ns;
	n = il3_canonical_establish(canon, sizeof(canon), now_ns, s->journal.uuid, s->session_id,
			s->firm_id, s->system_name, s->system_version, s->system_vendor,
			s->journal.next_out_seq, s->proposed_keep_alive_ms);
	if (n < 0 || il3_hmac_sha256(s->creds.key, s->creds.key_length, canon, (size_t)n,
			sig) < 0)
		return -EIO;
	root = il3_encode_begin(&enc, buf, 256, IL3_TEMPLATE_ESTABLISH503);
	if (root == NULL)
		return -errno;
	il3_establish503_set_hmac_signature(root, (const char *)sig, sizeof(sig));
	il3_establish503_set_access_key_id(root, s->creds.access_key_id,
			strlen(s->creds.access_key_id));
	il3_establish503_set_trading_system_name(root, s->system_name, strlen(s->system_name));
	il3_establish503_set_trading_system_version(root, s->system_version,
			strlen(s->system_version));
	il3_establish503_set_trading_system_vendor(root, s->system_vendor,
			strlen(s->system_vendor));
	il3_establish503_set_uuid(root, s->journal.uuid);
	il3_establish503_set_request_timestamp(root, now_ns);
	il3_establish503_set_next_seq_no(root, s->journal.next_out_seq);
	il3_establish503_set_session(root, s->session_id, strlen(s->session_id));
	il3_establish503_set_firm(root, s->firm_id, strlen(s->firm_id));
	il3_establish503_set_keep_alive_interval(root, s->proposed_keep_alive_ms);
	n = il3_encode_end(&enc);
	if (n < 0)
		return n;
	queued(s, n, now_ns);
	s->deadline_ns = now_ns + 2 * (uint64_t)s->proposed_keep_alive_ms * NS_PER_MS;
	set_state(s, IL3_STATE_ESTABLISHING, why);
	return 0;
}

static int
send_sequence(struct il3_session *s, uint64_t now_ns, bool lapsed)
{
	struct il3_encoder enc;
	uint8_t *buf = out_space(s, 64), *root;
	int n;

	if (buf == NULL)
		return -ENOBUFS;
	root = il3_encode_begin(&enc, buf, 64, IL3_TEMPLATE_SEQUENCE506);
	if (root == NULL)
		return -errno;
	il3_sequence506_set_uuid(root, s->journal.uuid);
	il3_sequence506_set_next_seq_no(root, s->journal.next_out_seq);
	il3_sequence506_set_fault_tolerance_indicator(root, IL3_FTI_PRIMARY);
	il3_sequence506_set_keep_alive_interval_lapsed(root, lapsed ?
			IL3_KEEP_ALIVE_LAPSED_LAPSED : IL3_KEEP_ALIVE_LAPSED_NOT_LAPSED);
	n = il3_encode_end(&enc);
	if (n < 0)
		return n;
	queued(s, n, now_ns);
	s->counters.heartbeats_out++;
	return 0;
}

static int
send_terminate(struct il3_session *s, uint16_t code, uint64_t now_ns)
{
	struct il3_encoder enc;
	uint8_t *buf = out_space(s, 128), *root;
	int n;

	if (buf == NULL)
		return -ENOBUFS;
	root = il3_encode_begin(&enc, buf, 128, IL3_TEMPLATE_TERMINATE507);
	if (root == NULL)
		return -errno;
	il3_terminate507_set_uuid(root, s->journal.uuid);
	il3_terminate507_set_request_timestamp(root, now_ns);
	il3_terminate507_set_error_codes(root, code);
	n = il3_encode_end(&enc);
	if (n < 0)
		return n;
	queued(s, n, now_ns);
	return 0;
}

int
il3_session_connect(struct il3_session *s, uint64_t now_ns, bool new_uuid)
{
	struct sockaddr_in addr;
	int one = 1;

	if (s->state != IL3_STATE_DISCONNECTED)
		return -EISCONN;
	if (new_uuid || s->journal.uuid == 0) {
		uint64_t uuid = now_ns / 1000;

		if (uuid <= s->journal.uuid)
			uuid = s->journal.uuid + 1;
		s->journal.last_uuid = s->journal.uuid;
		s->journal.uuid = uuid;
		s->journal.next_out_seq = 1;
		s->journal.next_in_seq = 1;
		s->journal.pending_seq = 0;
		s->journal.pending_length = 0;
		gap_clear(s);  /* gaps of the old UUID cannot be asked for on the new one */
		/* negotiated state only becomes durable once the gateway accepts;
		 * until then every connect negotiates again (a rejected or
		 * unanswered Negotiate must not be followed by Establish) */
		s->negotiate_needed = true;
	}
	s->doubt_seq = 0;
	if (!s->negotiate_needed && s->journal.pending_seq != 0 &&
			s->journal.pending_seq + 1 == s->journal.next_out_seq) {
		s->doubt_seq = s->journal.pending_seq;
		s->doubt_length = s->journal.pending_length;
		memcpy(s->doubt_frame, s->journal.pending_frame, s->doubt_length);
	}
	s->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s->fd < 0)
		return -errno;
	setsockopt(s->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	memset(&addr, 0, sizeof(addr));
	addr.sin_family = AF_INET;
	addr.sin_addr.s_addr = htonl(s->gateway_ip);
	addr.sin_port = htons(s->gateway_port);
	il3_stream_reset(&s->stream);
	s->out_length = s->out_sent = 0;
	s->lapse_warned = false;
	s->deadline_ns = now_ns + 2 * (uint64_t)s->proposed_keep_alive_ms * NS_PER_MS;
	s->last_rx_ns = s->last_tx_ns = now_ns;
	if (connect(s->fd, (struct sockaddr *)&addr, sizeof(addr)) < 0 && errno != EINPROGRESS) {
		int err = errno;

		close_socket(s, IL3_EVENT_CONNECT_FAILED);
		return -err;
	}
	set_state(s, IL3_STATE_CONNECTING, IL3_EVENT_NONE);
	return 0;
}

/* Send the request for the oldest queued gap, unless one is outstanding. */
static void
retransmit_next(struct il3_session *s, uint64_t now_ns)
{
	struct il3_encoder enc;
	struct il3_gap *head;
	uint8_t *buf, *root;
	uint32_t count;
	int n;

	if (s->retransmit_outstanding || s->gap_count == 0 || s->state != IL3_STATE_ESTABLISHED)
		return;
	buf = out_space(s, 64);
	if (buf == NULL)
		return;  /* output full: the timers try again */
	root = il3_encode_begin(&enc, buf, 64, IL3_TEMPLATE_RETRANSMIT_REQUEST508);
	if (root == NULL)
		return;
	head = gap_at(s, 0);
	count = head->count > RETRANSMIT_MAX ? RETRANSMIT_MAX : head->count;
	il3_retransmit_request508_set_uuid(root, s->journal.uuid);
	il3_retransmit_request508_set_request_timestamp(root, now_ns);
	il3_retransmit_request508_set_from_seq_no(root, head->from);
	il3_retransmit_request508_set_msg_count(root, (uint16_t)count);
	n = il3_encode_end(&enc);
	if (n < 0)
		return;
	queued(s, n, now_ns);
	s->retransmit_current = (struct il3_gap){ head->from, count, (uint8_t)(head->attempts + 1) };
	if (count == head->count) {
		s->gap_head = (s->gap_head + 1) % IL3_SESSION_GAP_QUEUE;
		s->gap_count--;
	} else {  /* more than one request may carry: the rest stays first */
		head->from += count;
		head->count -= count;
		head->attempts = 0;
	}
	s->retransmit_outstanding = true;
	s->retransmit_remaining = 0;
	s->retransmit_deadline_ns = now_ns + 2 * (uint64_t)s->keep_alive_ms * NS_PER_MS;
	s->counters.retransmit_requests++;
}

/* Inbound numbers [from, from + count) are missing: queue and request. */
static void
request_retransmit(struct il3_session *s, uint32_t from, uint32_t count, uint64_t now_ns)
{
	gap_push(s, (struct il3_gap){ from, count, 0 }, false);
	retransmit_next(s, now_ns);
}

/* The outstanding request is complete (or refused): on to the next gap. */
static void
retransmit_done(struct il3_session *s, uint64_t now_ns)
{
	s->retransmit_outstanding = false;
	s->retransmit_remaining = 0;
	retransmit_next(s, now_ns);
}

int
il3_session_request_retransmit(struct il3_session *s, uint32_t from, uint16_t count,
		uint64_t now_ns)
{
	if (s->state != IL3_STATE_ESTABLISHED)
		return -ENOTCONN;
	if (s->retransmit_outstanding)
		return -EBUSY;
	if (count == 0)
		return -EINVAL;
	if (s->gap_count == IL3_SESSION_GAP_QUEUE)
		return -ENOBUFS;
	gap_push(s, (struct il3_gap){ from, count, 0 }, true);
	retransmit_next(s, now_ns);
	if (!s->retransmit_outstanding)
		return -ENOBUFS;  /* stays queued: requested when output drains */
	flush(s);
	return 0;
}

/* SeqNum and PossRetransFlag of an application message, if it has them. */
static bool
app_seq(struct il3_session *s, const struct il3_msg *msg, uint32_t *seq, bool *poss_retrans)
{
	const struct il3_message_info *info = msg->info;
	struct app_fields *af = &s->app_fields[info->template_id % APP_FIELDS_SLOTS];

	if (af->info != info) {
		af->info = info;
		af->seq = af->poss_retrans = NULL;
		for (unsigned int i = 0; i < info->field_count; i++) {
			const struct il3_field_info *f = &info->fields[i];

			if (strcmp(f->name, "SeqNum") == 0 && f->size == 4)
				af->seq = f;
			else if (strcmp(f->name, "PossRetransFlag") == 0 && f->size == 1)
				af->poss_retrans = f;
		}
	}
	*poss_retrans = af->poss_retrans != NULL &&
			il3_field_present(af->poss_retrans, msg->version, msg->block_length) &&
			msg->root[af->poss_retrans->offset] == 1;
	if (af->seq == NULL)
		return false;
	*seq = il3__load_uint32(msg->root + af->seq->offset);
	return true;
}

static void
on_app(struct il3_session *s, const struct il3_msg *msg, uint64_t now_ns)
{
	uint32_t seq = 0;
	bool retrans;

	if (!app_seq(s, msg, &seq, &retrans))
		return;
	s->counters.app_in++;
	if (retrans || seq < s->journal.next_in_seq) {
		s->counters.retransmitted_in++;
		retrans = true;
		if (s->retransmit_remaining > 0 && --s->retransmit_remaining == 0)
			retransmit_done(s, now_ns);
	} else {
		if (seq > s->journal.next_in_seq) {
			s->counters.gaps_in++;
			request_retransmit(s, s->journal.next_in_seq, seq - s->journal.next_in_seq,
				now_ns);
		}
		s->journal.next_in_seq = seq + 1;
	}
	if (s->handlers.on_app_message != NULL)
		s->handlers.on_app_message(s->handlers.ctx, msg, retrans);
}

/* Resend a copy we still hold of a message the gateway did not apply. */
static bool
resend_copy(struct il3_session *s, uint32_t seq, const uint8_t *frame, uint16_t length,
		uint64_t now_ns)
{
	uint8_t *buf;

	if (seq == 0 || length == 0)
		return false;
	buf = out_space(s, length);
	if (buf == NULL)
		return false;
	memcpy(buf, frame, length);
	queued(s, length, now_ns);
	s->counters.resent_after_crash++;
	return true;
}

/*
 * NotApplied [from, from + count): resend what we hold with its original
 * SeqNum (the journal's pending frame and the frame in doubt after a
 * restart).  @return true when the whole range was resent.
 */
static bool
resend_not_applied(struct il3_session *s, uint32_t from, uint32_t count, uint64_t now_ns)
{
	uint32_t seq, resent = 0;

	if (count == 0 || count > 2)
		return false;
	for (seq = from; seq - from < count; seq++) {
		if (seq == s->doubt_seq && seq != s->journal.pending_seq) {
			resent += resend_copy(s, seq, s->doubt_frame, s->doubt_length, now_ns);
			s->doubt_seq = 0;
		} else if (seq == s->journal.pending_seq) {
			resent += resend_copy(s, seq, s->journal.pending_frame,
				s->journal.pending_length, now_ns);
		}
	}
	return resent == count;
}

static void
protocol_error(struct il3_session *s)
{
	close_socket(s, IL3_EVENT_PROTOCOL_ERROR);
}

static void
on_frame(struct il3_session *s, const struct il3_msg *msg, uint64_t now_ns)
{
	uint64_t uuid = 0;
	uint32_t u32 = 0;
	uint16_t u16 = 0;
	uint8_t u8 = 0;

	s->counters.frames_in++;
	switch (msg->template_id) {
	case IL3_TEMPLATE_NEGOTIATION_RESPONSE501:
		il3_negotiation_response501_uuid(msg, &uuid);
		if (s->state != IL3_STATE_NEGOTIATING || uuid != s->journal.uuid)
			return protocol_error(s);
		if (il3_journal_save(s->journal_path, &s->journal) < 0)
			return protocol_error(s);
		s->negotiate_needed = false;
		if (send_establish(s, now_ns, IL3_EVENT_NEGOTIATED) < 0)
			return protocol_error(s);
		return;
	case IL3_TEMPLATE_NEGOTIATION_REJECT502:
		if (s->state != IL3_STATE_NEGOTIATING)
			return protocol_error(s);
		return close_socket(s, IL3_EVENT_NEGOTIATION_REJECTED);
	case IL3_TEMPLATE_ESTABLISHMENT_ACK504:
		il3_establishment_ack504_uuid(msg, &uuid);
		if (s->state != IL3_STATE_ESTABLISHING || uuid != s->journal.uuid)
			return protocol_error(s);
		il3_establishment_ack504_keep_alive_interval(msg, &u16);
		if (u16 > 0)
			s->keep_alive_ms = u16;
		set_state(s, IL3_STATE_ESTABLISHED, IL3_EVENT_ESTABLISHED);
		il3_establishment_ack504_next_seq_no(msg, &u32);
		if (u32 > s->journal.next_in_seq) {
			s->counters.gaps_in++;
			request_retransmit(s, s->journal.next_in_seq, u32 - s->journal.next_in_seq,
				now_ns);
			/* the gap is being filled by retransmission: live messages
			 * continue at NextSeqNo, not at the start of the gap */
			s->journal.next_in_seq = u32;
		}
		retransmit_next(s, now_ns);  /* gaps left unfilled by the last connection */
		return;
	case IL3_TEMPLATE_ESTABLISHMENT_REJECT505:
		if (s->state != IL3_STATE_ESTABLISHING)
			return protocol_error(s);
		return close_socket(s, IL3_EVENT_ESTABLISHMENT_REJECTED);
	case IL3_TEMPLATE_SEQUENCE506:
		s->counters.heartbeats_in++;
		if (s->state != IL3_STATE_ESTABLISHED)
			return;
		il3_sequence506_next_seq_no(msg, &u32);
		if (u32 > s->journal.next_in_seq) {
			s->counters.gaps_in++;
			request_retransmit(s, s->journal.next_in_seq, u32 - s->journal.next_in_seq,
				now_ns);
			s->journal.next_in_seq = u32;
		}
		il3_sequence506_keep_alive_interval_lapsed(msg, &u8);
		if (u8 == IL3_KEEP_ALIVE_LAPSED_LAPSED)
			send_sequence(s, now_ns, false);
		return;
	case IL3_TEMPLATE_TERMINATE507:
		if (s->state == IL3_STATE_TERMINATING)
			return close_socket(s, IL3_EVENT_TERMINATED);
		send_terminate(s, 0, now_ns);
		flush(s);
		return close_socket(s, IL3_EVENT_TERMINATED_BY_PEER);
	case IL3_TEMPLATE_RETRANSMISSION509:
		il3_retransmission509_msg_count(msg, &u16);
		if (!s->retransmit_outstanding)
			return;  /* not ours (timed out): its messages count as retransmitted */
		s->retransmit_remaining = u16;
		if (u16 == 0)
			retransmit_done(s, now_ns);
		return;
	case IL3_TEMPLATE_RETRANSMIT_REJECT510:
		s->counters.retransmit_rejects++;
		retransmit_unfilled(s, true);
		retransmit_next(s, now_ns);
		return;
	case IL3_TEMPLATE_NOT_APPLIED513: {
		uint32_t from = 0, count = 0;

		s->counters.not_applied++;
		il3_not_applied513_from_seq_no(msg, &from);
		il3_not_applied513_msg_count(msg, &count);
		if (!resend_not_applied(s, from, count, now_ns))
			send_sequence(s, now_ns, false);  /* cannot fill: skip past the gap */
		return;
	}
	default:
		if (s->state != IL3_STATE_ESTABLISHED && s->state != IL3_STATE_TERMINATING)
			return protocol_error(s);
		on_app(s, msg, now_ns);
		return;
	}
}

static void
finish_connect(struct il3_session *s, uint64_t now_ns)
{
	struct pollfd pfd = { .fd = s->fd, .events = POLLOUT };
	int err = 0;
	socklen_t len = sizeof(err);

	if (poll(&pfd, 1, 0) <= 0)
		return;
	if (getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0 || err != 0) {
		close_socket(s, IL3_EVENT_CONNECT_FAILED);
		return;
	}
	s->last_rx_ns = now_ns;
	if (s->negotiate_needed) {
		if (send_negotiate(s, now_ns) < 0)
			close_socket(s, IL3_EVENT_PROTOCOL_ERROR);
	} else if (send_establish(s, now_ns, IL3_EVENT_CONNECTED) < 0) {
		close_socket(s, IL3_EVENT_PROTOCOL_ERROR);
	}
}

static void
read_input(struct il3_session *s, uint64_t now_ns)
{
	struct il3_msg msg;
	int rc;

	for (;;) {
		uint8_t *space;
		size_t room = il3_stream_space(&s->stream, &space);
		ssize_t n = recv(s->fd, space, room, MSG_DONTWAIT);

		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			if (errno == EINTR)
				continue;
			close_socket(s, IL3_EVENT_PEER_CLOSED);
			return;
		}
		if (n == 0) {
			close_socket(s, IL3_EVENT_PEER_CLOSED);
			return;
		}
		s->last_rx_ns = now_ns;
		s->lapse_warned = false;
		il3_stream_commit(&s->stream, (size_t)n);
		while ((rc = il3_stream_next(&s->stream, &msg)) == 1) {
			on_frame(s, &msg, now_ns);
			if (s->fd < 0)
				return;
		}
		if (rc < 0) {
			protocol_error(s);
			return;
		}
	}
}

static void
run_timers(struct il3_session *s, uint64_t now_ns)
{
	uint64_t k = (uint64_t)s->keep_alive_ms * NS_PER_MS;

	if (s->state == IL3_STATE_ESTABLISHED) {
		if (now_ns - s->last_rx_ns >= 2 * k) {
			send_terminate(s, 0, now_ns);
			flush(s);
			close_socket(s, IL3_EVENT_PEER_LAPSED);
			return;
		}
		if (s->retransmit_outstanding && now_ns >= s->retransmit_deadline_ns) {
			s->counters.retransmit_timeouts++;
			retransmit_unfilled(s, false);
		}
		retransmit_next(s, now_ns);
		if (now_ns - s->last_rx_ns >= k && !s->lapse_warned) {
			s->lapse_warned = true;
			send_sequence(s, now_ns, true);
		} else if (now_ns - s->last_tx_ns >= k) {
			send_sequence(s, now_ns, false);
		}
		return;
	}
	if (s->state != IL3_STATE_DISCONNECTED && now_ns >= s->deadline_ns)
		close_socket(s, s->state == IL3_STATE_TERMINATING ? IL3_EVENT_TERMINATED :
			IL3_EVENT_RESPONSE_TIMEOUT);
}

int
il3_session_step(struct il3_session *s, uint64_t now_ns)
{
	if (s->fd < 0)
		return -ENOTCONN;
	if (s->state == IL3_STATE_CONNECTING)
		finish_connect(s, now_ns);
	if (s->fd >= 0 && s->state != IL3_STATE_CONNECTING)
		read_input(s, now_ns);
	if (s->fd >= 0)
		run_timers(s, now_ns);
	if (s->fd >= 0)
		flush(s);
	return s->fd < 0 ? -ENOTCONN : 0;
}

int
il3_session_terminate(struct il3_session *s, uint16_t error_code, uint64_t now_ns)
{
	if (s->fd < 0 || s->state == IL3_STATE_CONNECTING)
		return -ENOTCONN;
	if (send_terminate(s, error_code, now_ns) < 0)
		return -ENOBUFS;
	s->deadline_ns = now_ns + 2 * (uint64_t)s->keep_alive_ms * NS_PER_MS;
	set_state(s, IL3_STATE_TERMINATING, IL3_EVENT_NONE);
	flush(s);
	return 0;
}

/* The oldest inbound number still missing: the live next one, or the start
 * of a gap being retransmitted or queued (those live only in memory). */
static uint32_t
oldest_missing_in(const struct il3_session *s)
{
	uint32_t oldest = s->journal.next_in_seq;

	if (s->retransmit_outstanding && s->retransmit_current.from < oldest)
		oldest = s->retransmit_current.from;
	for (uint32_t i = 0; i < s->gap_count; i++) {
		const struct il3_gap *gap = &s->gaps[(s->gap_head + i) % IL3_SESSION_GAP_QUEUE];

		if (gap->from < oldest)
			oldest = gap->from;
	}
	return oldest;
}

/* Journal an application frame before it is written, then queue it.  The
 * record's next inbound number is the oldest still missing, so that after a
 * crash the restarted session asks again for the gaps it had not filled. */
static int
commit_app(struct il3_session *s, uint8_t *frame, int length, uint64_t now_ns)
{
	struct il3_journal_record saved = s->journal;
	int rc;

	if (length < 0)
		return length;
	if ((size_t)length > IL3_JOURNAL_MAX_FRAME)
		return -EMSGSIZE;
	s->journal.pending_seq = s->journal.next_out_seq;
	s->journal.pending_length = (uint16_t)length;
	memcpy(s->journal.pending_frame, frame, (size_t)length);
	s->journal.next_out_seq++;
	s->journal.next_in_seq = oldest_missing_in(s);
	rc = il3_journal_save(s->journal_path, &s->journal);
	s->journal.next_in_seq = saved.next_in_seq;
	if (rc < 0) {
		s->journal = saved;
		return rc;
	}
	queued(s, length, now_ns);
	s->counters.app_out++;
	flush(s);
	return 0;
}

static int
app_prologue(struct il3_session *s, uint8_t **buf)
{
	if (s->state != IL3_STATE_ESTABLISHED)
		return -ENOTCONN;
	*buf = out_space(s, IL3_JOURNAL_MAX_FRAME);
	return *buf == NULL ? -ENOBUFS : 0;
}

static int
clordid_text(char *out, uint64_t number)
{
	return snprintf(out, 21, "%llu", (unsigned long long)number);
}

int
il3_session_send_new_order(struct il3_session *s, const struct il3_order *order,
		uint64_t now_ns, uint64_t *clordid)
{
	struct il3_encoder enc;
	char id[24];
	uint8_t *buf, *root;
	uint64_t number;
	int rc = app_prologue(s, &buf);

	if (rc < 0)
		return rc;
	number = s->journal.next_clordid++;
	root = il3_encode_begin(&enc, buf, IL3_JOURNAL_MAX_FRAME,
			IL3_TEMPLATE_NEW_ORDER_SINGLE514);
	if (root == NULL) {
		s->journal.next_clordid--;
		return -errno;
	}
	il3_new_order_single514_set_price(root, order->price_mantissa);
	il3_new_order_single514_set_order_qty(root, order->quantity);
	il3_new_order_single514_set_security_id(root, order->security_id);
	il3_new_order_single514_set_side(root, order->side);
	il3_new_order_single514_set_seq_num(root, s->journal.next_out_seq);
	il3_new_order_single514_set_sender_id(root, s->sender_id, strlen(s->sender_id));
	il3_new_order_single514_set_cl_ord_id(root, id, (size_t)clordid_text(id, number));
	il3_new_order_single514_set_party_details_list_req_id(root, s->party_details_list_req_id);
	il3_new_order_single514_set_order_request_id(root, number);
	il3_new_order_single514_set_sending_time_epoch(root, now_ns);
	il3_new_order_single514_set_location(root, s->location, strlen(s->location));
	il3_new_order_single514_set_ord_type(root, IL3_ORDER_TYPE_REQ_LIMIT);
	il3_new_order_single514_set_time_in_force(root, order->time_in_force);
	il3_new_order_single514_set_manual_order_indicator(root,
			IL3_MANUAL_ORD_IND_REQ_AUTOMATED);
	il3_new_order_single514_set_execution_mode(root, IL3_EXEC_MODE_AGGRESSIVE);
	rc = commit_app(s, buf, il3_encode_end(&enc), now_ns);
	if (rc < 0) {
		s->journal.next_clordid--;
		return rc;
	}
	if (clordid != NULL)
		*clordid = number;
	return 0;
}

int
il3_session_send_cancel(struct il3_session *s, uint64_t orig_clordid, uint64_t order_id,
		int32_t security_id, uint8_t side, uint64_t now_ns, uint64_t *clordid)
{
	struct il3_encoder enc;
	char id[24];
	uint8_t *buf, *root;
	uint64_t number;
	int rc = app_prologue(s, &buf);

	if (rc < 0)
		return rc;
	number = s->journal.next_clordid++;
	root = il3_encode_begin(&enc, buf, IL3_JOURNAL_MAX_FRAME,
			IL3_TEMPLATE_ORDER_CANCEL_REQUEST516);
	if (root == NULL) {
		s->journal.next_clordid--;
		return -errno;
	}
	il3_order_cancel_request516_set_order_id(root, order_id);
	il3_order_cancel_request516_set_party_details_list_req_id(root,
			s->party_details_list_req_id);
	il3_order_cancel_request516_set_manual_order_indicator(root,
			IL3_MANUAL_ORD_IND_REQ_AUTOMATED);
	il3_order_cancel_request516_set_seq_num(root, s->journal.next_out_seq);
	il3_order_cancel_request516_set_sender_id(root, s->sender_id, strlen(s->sender_id));
	il3_order_cancel_request516_set_cl_ord_id(root, id,
			(size_t)clordid_text(id, orig_clordid));
	il3_order_cancel_request516_set_order_request_id(root, number);
	il3_order_cancel_request516_set_sending_time_epoch(root, now_ns);
	il3_order_cancel_request516_set_location(root, s->location, strlen(s->location));
	il3_order_cancel_request516_set_security_id(root, security_id);
	il3_order_cancel_request516_set_side(root, side);
	rc = commit_app(s, buf, il3_encode_end(&enc), now_ns);
	if (rc < 0) {
		s->journal.next_clordid--;
		return rc;
	}
	if (clordid != NULL)
		*clordid = number;
	return 0;
}

int
il3_session_send_replace(struct il3_session *s, uint64_t orig_clordid, uint64_t order_id,
		const struct il3_order *order, uint64_t now_ns, uint64_t *clordid)
{
	struct il3_encoder enc;
	char id[24];
	uint8_t *buf, *root;
	uint64_t number;
	int rc = app_prologue(s, &buf);

	if (rc < 0)
		return rc;
	number = s->journal.next_clordid++;
	root = il3_encode_begin(&enc, buf, IL3_JOURNAL_MAX_FRAME,
			IL3_TEMPLATE_ORDER_CANCEL_REPLACE_REQUEST515);
	if (root == NULL) {
		s->journal.next_clordid--;
		return -errno;
	}
	il3_order_cancel_replace_request515_set_price(root, order->price_mantissa);
	il3_order_cancel_replace_request515_set_order_qty(root, order->quantity);
	il3_order_cancel_replace_request515_set_security_id(root, order->security_id);
	il3_order_cancel_replace_request515_set_side(root, order->side);
	il3_order_cancel_replace_request515_set_seq_num(root, s->journal.next_out_seq);
	il3_order_cancel_replace_request515_set_sender_id(root, s->sender_id,
			strlen(s->sender_id));
	il3_order_cancel_replace_request515_set_cl_ord_id(root, id,
			(size_t)clordid_text(id, orig_clordid));
	il3_order_cancel_replace_request515_set_party_details_list_req_id(root,
			s->party_details_list_req_id);
	il3_order_cancel_replace_request515_set_order_id(root, order_id);
	il3_order_cancel_replace_request515_set_order_request_id(root, number);
	il3_order_cancel_replace_request515_set_sending_time_epoch(root, now_ns);
	il3_order_cancel_replace_request515_set_location(root, s->location,
			strlen(s->location));
	il3_order_cancel_replace_request515_set_ord_type(root, IL3_ORDER_TYPE_REQ_LIMIT);
	il3_order_cancel_replace_request515_set_time_in_force(root, order->time_in_force);
	il3_order_cancel_replace_request515_set_manual_order_indicator(root,
			IL3_MANUAL_ORD_IND_REQ_AUTOMATED);
	il3_order_cancel_replace_request515_set_execution_mode(root,
			IL3_EXEC_MODE_AGGRESSIVE);
	rc = commit_app(s, buf, il3_encode_end(&enc), now_ns);
	if (rc < 0) {
		s->journal.next_clordid--;
		return rc;
	}
	if (clordid != NULL)
		*clordid = number;
	return 0;
}
