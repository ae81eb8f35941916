/* SPDX-License-Identifier: BSD-3-Clause
 * libFuzzer harness of the iLink 3 session's inbound path (lib/ilink3
 * il3_session.c): the FIXP client state machine fed the gateway's bytes.
 *
 * The session has no transport hooks: it calls socket() and connect()
 * itself.  The harness is linked with -Wl,--wrap=socket,--wrap=connect, so
 * those calls get one end of an AF_UNIX socketpair, already connected; the
 * harness holds the other end and plays the gateway.  No network, no port.
 * Journal and credentials live in the process's scratch directory (tmpfs).
 *
 * An input (format in fuzz_il3.h) chooses the start (fresh journal, journal
 * with a UUID, with a frame in doubt; the handshake answered by the harness
 * or left to the input), then a list of operations: gateway bytes, time
 * passing, orders, cancels and replaces, retransmit requests, terminate and
 * reconnect.  Every application message the session delivers goes through
 * fuzz_il3_check_msg() (an exact-size copy, every leaf, group, data field
 * and typed accessor); every frame the session writes is reassembled and
 * checked the same way.  Besides ASan/UBSan findings the harness aborts
 * when the session breaks a promise of ilink3.h and its README:
 *   - state changes follow the lifecycle (CONNECTING from DISCONNECTED,
 *     NEGOTIATING from CONNECTING, ESTABLISHING from CONNECTING or
 *     NEGOTIATING, ESTABLISHED from ESTABLISHING), the callback's "from" is
 *     the state before, a disconnect names its cause; fd, poll events and
 *     next timeout agree with the state;
 *   - counters never go back; every message counted app_in was delivered,
 *     with retransmitted set when it carries PossRetransFlag;
 *   - the session writes only client templates, each a well-formed frame of
 *     its UUID; a RetransmitRequest asks for 1 to 2500 messages; an
 *     application frame carries a SeqNum already assigned;
 *   - an order, cancel or replace takes exactly one outbound SeqNum when
 *     sent (none when refused) and a ClOrdID / OrderRequestID never used
 *     before; operations return only the errors their contract lists.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fuzz_il3.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int __wrap_socket(int domain, int type, int protocol);
int __wrap_connect(int fd, const struct sockaddr *addr, socklen_t length);

#define NS_PER_MS UINT64_C(1000000)
/* Writes to a session that does not read are given up after this many steps. */
#define WRITE_ATTEMPTS 8

struct harness {
	struct il3_session *session;
	int gateway;                    /* our end of the socketpair; -1: none */
	uint64_t now;
	uint64_t uuid;                  /* of the current connection */
	enum il3_state state;           /* as on_state told */
	uint64_t delivered;             /* on_app_message calls */
	uint64_t last_id;               /* last ClOrdID / OrderRequestID handed out */
	struct il3_session_counters counters;  /* at the last check */
	char journal[300], credentials[300];
};

static struct harness h = { .gateway = -1 };
static struct il3_stream outbound;      /* what the session wrote */

int
__wrap_socket(int domain, int type, int protocol)
{
	int pair[2];

	(void)protocol;
	FUZZ_CHECK(domain == AF_INET);
	if (socketpair(AF_UNIX, SOCK_STREAM | (type & (SOCK_NONBLOCK | SOCK_CLOEXEC)), 0,
			pair) < 0)
		return -1;
	if (h.gateway >= 0)
		close(h.gateway);
	h.gateway = pair[1];
	FUZZ_CHECK(fcntl(h.gateway, F_SETFL, O_NONBLOCK) == 0);
	il3_stream_reset(&outbound);
	return pair[0];
}

int
__wrap_connect(int fd, const struct sockaddr *addr, socklen_t length)
{
	(void)fd;
	(void)addr;
	(void)length;
	return 0;
}

static void
on_state(void *ctx, enum il3_state from, enum il3_state to, enum il3_event why)
{
	(void)ctx;
	FUZZ_CHECK(from == h.state && from != to && to < IL3_STATE_COUNT &&
			why < IL3_EVENT_COUNT);
	FUZZ_CHECK(strcmp(il3_state_name(to), "unknown") != 0 &&
			strcmp(il3_event_name(why), "unknown") != 0);
	switch (to) {
	case IL3_STATE_CONNECTING:
		FUZZ_CHECK(from == IL3_STATE_DISCONNECTED);
		break;
	case IL3_STATE_NEGOTIATING:
		FUZZ_CHECK(from == IL3_STATE_CONNECTING);
		break;
	case IL3_STATE_ESTABLISHING:
		FUZZ_CHECK(from == IL3_STATE_CONNECTING || from == IL3_STATE_NEGOTIATING);
		break;
	case IL3_STATE_ESTABLISHED:
		FUZZ_CHECK(from == IL3_STATE_ESTABLISHING && why == IL3_EVENT_ESTABLISHED);
		break;
	case IL3_STATE_DISCONNECTED:
		FUZZ_CHECK(why >= IL3_EVENT_CONNECT_FAILED && why != IL3_EVENT_NEGOTIATED &&
				why != IL3_EVENT_ESTABLISHED);
		break;
	default:
		break;
	}
	h.state = to;
}

/* The raw value of root leaf @p name, if the message has it on the wire. */
static bool
root_leaf(const struct il3_msg *msg, const char *name, uint64_t *value)
{
	unsigned int i;

	for (i = 0; i < msg->info->field_count; i++) {
		if (strcmp(msg->info->fields[i].name, name) == 0 &&
				il3_field_present(&msg->info->fields[i], msg->version,
					msg->block_length)) {
			*value = il3_load(msg->root, &msg->info->fields[i]);
			return true;
		}
	}
	return false;
}

static void
on_app_message(void *ctx, const struct il3_msg *msg, bool retransmitted)
{
	uint64_t flag;

	(void)ctx;
	FUZZ_CHECK(h.state == IL3_STATE_ESTABLISHED || h.state == IL3_STATE_TERMINATING);
	fuzz_il3_check_msg(msg);
	FUZZ_CHECK(retransmitted || !root_leaf(msg, "PossRetransFlag", &flag) || flag != 1);
	h.delivered++;
}

/* A frame the session wrote: a client message of this session, well formed. */
static void
check_outbound(const struct il3_msg *msg)
{
	static const uint16_t client[] = {
		IL3_TEMPLATE_NEGOTIATE500, IL3_TEMPLATE_ESTABLISH503, IL3_TEMPLATE_SEQUENCE506,
		IL3_TEMPLATE_TERMINATE507, IL3_TEMPLATE_RETRANSMIT_REQUEST508,
		IL3_TEMPLATE_NEW_ORDER_SINGLE514, IL3_TEMPLATE_ORDER_CANCEL_REPLACE_REQUEST515,
		IL3_TEMPLATE_ORDER_CANCEL_REQUEST516,
	};
	uint32_t next_out;
	uint64_t value;
	size_t i = 0;

	fuzz_il3_check_msg(msg);
	while (i < sizeof(client) / sizeof(client[0]) && client[i] != msg->template_id)
		i++;
	FUZZ_CHECK(i < sizeof(client) / sizeof(client[0]));
	il3_session_sequence(h.session, NULL, &next_out, NULL);
	if (root_leaf(msg, "UUID", &value))
		FUZZ_CHECK(value == h.uuid);
	if (root_leaf(msg, "SeqNum", &value))           /* application messages */
		FUZZ_CHECK(value >= 1 && value < next_out);
	if (root_leaf(msg, "NextSeqNo", &value))        /* Establish, Sequence */
		FUZZ_CHECK(value <= next_out);
	if (msg->template_id == IL3_TEMPLATE_RETRANSMIT_REQUEST508)
		FUZZ_CHECK(root_leaf(msg, "MsgCount", &value) && value >= 1 && value <= 2500);
}

/* Read what the session wrote; on its EOF, forget our end. */
static void
drain_gateway(void)
{
	struct il3_msg msg;
	uint8_t *space;
	ssize_t n;
	int rc;

	while (h.gateway >= 0) {
		size_t room = il3_stream_space(&outbound, &space);

		n = recv(h.gateway, space, room, MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n <= 0) {
			close(h.gateway);
			h.gateway = -1;
			return;
		}
		il3_stream_commit(&outbound, (size_t)n);
		while ((rc = il3_stream_next(&outbound, &msg)) == 1)
			check_outbound(&msg);
		FUZZ_CHECK(rc == 0 && outbound.counters.skipped_unknown == 0);
	}
}

static void
check_counters(void)
{
	const struct il3_session_counters *now = il3_session_counters(h.session);
	const uint64_t *was = (const uint64_t *)&h.counters, *is = (const uint64_t *)now;
	size_t i;

	for (i = 0; i < sizeof(*now) / sizeof(uint64_t); i++)
		FUZZ_CHECK(is[i] >= was[i]);
	FUZZ_CHECK(now->app_in <= now->frames_in && now->heartbeats_in <= now->frames_in);
	FUZZ_CHECK(now->retransmitted_in <= now->app_in && now->app_out <= now->frames_out);
	FUZZ_CHECK(now->app_in == h.delivered);
	h.counters = *now;
}

/* One il3_session_step() at the harness's clock, then every check. */
static void
step(void)
{
	int rc = il3_session_step(h.session, h.now);
	int fd = il3_session_fd(h.session);
	short events = il3_session_poll_events(h.session);

	FUZZ_CHECK(rc == 0 || rc == -ENOTCONN);
	FUZZ_CHECK((rc == 0) == (fd >= 0));
	FUZZ_CHECK(il3_session_state(h.session) == h.state);
	FUZZ_CHECK((fd < 0) == (h.state == IL3_STATE_DISCONNECTED));
	if (fd < 0)
		FUZZ_CHECK(events == 0 && il3_session_next_timeout_ns(h.session) == UINT64_MAX);
	else
		FUZZ_CHECK((events & POLLIN) != 0);
	drain_gateway();
	check_counters();
}

/* The gateway writes @p length bytes; the session reads them as it steps. */
static void
gateway_write(const uint8_t *bytes, size_t length)
{
	unsigned int attempts = 0;

	while (length > 0 && h.gateway >= 0 && attempts++ < WRITE_ATTEMPTS) {
		ssize_t n = send(h.gateway, bytes, length, MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n < 0 && errno != EAGAIN && errno != EINTR)
			break;  /* the session closed its end */
		if (n > 0) {
			bytes += n;
			length -= (size_t)n;
		}
		step();
	}
	step();
}

static void
gateway_frame(uint16_t template_id, const struct fuzz_il3_leaf *leaves, unsigned int count)
{
	uint8_t frame[512];
	int n = fuzz_il3_encode(frame, sizeof(frame), template_id, leaves, count, 0);

	FUZZ_CHECK(n > 0);
	gateway_write(frame, (size_t)n);
}

/* Connect (our socketpair), then, if asked, answer Negotiate and Establish. */
static void
connect_session(bool new_uuid, bool handshake)
{
	struct fuzz_il3_leaf answer[] = {
		{ "UUID", 0 }, { "NextSeqNo", 0 }, { "KeepAliveInterval", FUZZ_IL3_KEEP_ALIVE_MS },
	};
	uint32_t next_in;

	FUZZ_CHECK(il3_session_connect(h.session, h.now, new_uuid) == 0);
	il3_session_sequence(h.session, &h.uuid, NULL, &next_in);
	step();
	FUZZ_CHECK(h.state == IL3_STATE_NEGOTIATING || h.state == IL3_STATE_ESTABLISHING);
	if (!handshake)
		return;
	answer[0].value = h.uuid;
	answer[1].value = next_in;
	if (h.state == IL3_STATE_NEGOTIATING) {
		gateway_frame(IL3_TEMPLATE_NEGOTIATION_RESPONSE501, answer, 1);
		FUZZ_CHECK(h.state == IL3_STATE_ESTABLISHING);
	}
	gateway_frame(IL3_TEMPLATE_ESTABLISHMENT_ACK504, answer, 3);
	FUZZ_CHECK(h.state == IL3_STATE_ESTABLISHED);
}

static void
prepare_journal(uint8_t flags)
{
	struct il3_journal_record rec = {
		.uuid = FUZZ_IL3_JOURNAL_UUID, .next_out_seq = FUZZ_IL3_JOURNAL_NEXT_OUT,
		.next_in_seq = FUZZ_IL3_JOURNAL_NEXT_IN, .next_clordid = 100,
	};
	const struct fuzz_il3_leaf order[] = {
		{ "SeqNum", FUZZ_IL3_JOURNAL_NEXT_OUT - 1 }, { "OrderQty", 1 },
		{ "Price.mantissa", 4500000000000 }, { "SecurityID", 13950 }, { "Side", 1 },
	};
	int n;

	if ((flags & FUZZ_IL3_START_JOURNAL_UUID) == 0) {
		FUZZ_CHECK(unlink(h.journal) == 0 || errno == ENOENT);
		return;
	}
	if (flags & FUZZ_IL3_START_JOURNAL_PENDING) {
		n = fuzz_il3_encode(rec.pending_frame, sizeof(rec.pending_frame),
				IL3_TEMPLATE_NEW_ORDER_SINGLE514, order, 5, 0);
		FUZZ_CHECK(n > 0);
		rec.pending_seq = FUZZ_IL3_JOURNAL_NEXT_OUT - 1;
		rec.pending_length = (uint16_t)n;
	}
	FUZZ_CHECK(il3_journal_save(h.journal, &rec) == 0);
}

/* An order, a cancel or a replace: one SeqNum and one fresh id, or nothing. */
static void
send_app(enum fuzz_il3_op op, const uint8_t *arg, size_t length)
{
	uint8_t a[8] = { 0 };
	struct il3_order order;
	uint32_t before, after;
	uint64_t id = 0;
	int rc;

	memcpy(a, arg, length < sizeof(a) ? length : sizeof(a));
	order = (struct il3_order){
		.security_id = 13950 + a[0] % 4, .side = 1 + (a[1] & 1),
		.quantity = il3__load_uint16(a + 2),
		.price_mantissa = (int64_t)il3__load_int16(a + 4) * 250000000,
		.time_in_force = a[6] % 2,
	};
	il3_session_sequence(h.session, NULL, &before, NULL);
	if (op == FUZZ_IL3_OP_ORDER)
		rc = il3_session_send_new_order(h.session, &order, h.now, &id);
	else if (a[7] & 1)
		rc = il3_session_send_cancel(h.session, h.last_id - a[6] % 4, a[5], order.security_id,
				order.side, h.now, &id);
	else
		rc = il3_session_send_replace(h.session, h.last_id - a[6] % 4, a[5], &order, h.now,
				&id);
	il3_session_sequence(h.session, NULL, &after, NULL);
	FUZZ_CHECK(rc == 0 || rc == -ENOTCONN || rc == -ENOBUFS);
	if (rc == 0) {
		FUZZ_CHECK(after == before + 1 && id > h.last_id);
		h.last_id = id;
	} else {
		FUZZ_CHECK(after == before);
	}
	drain_gateway();
	check_counters();
}

static void
run_op(uint8_t flags, enum fuzz_il3_op op, const uint8_t *arg, size_t length)
{
	uint8_t a[6] = { 0 };
	int rc;

	memcpy(a, arg, length < sizeof(a) ? length : sizeof(a));
	switch (op) {
	case FUZZ_IL3_OP_BYTES:
		gateway_write(arg, length);
		return;
	case FUZZ_IL3_OP_WAIT:
		h.now += (uint64_t)il3__load_uint16(a) * NS_PER_MS;
		step();
		return;
	case FUZZ_IL3_OP_ORDER:
	case FUZZ_IL3_OP_MODIFY:
		send_app(op, arg, length);
		return;
	case FUZZ_IL3_OP_RETRANSMIT:
		rc = il3_session_request_retransmit(h.session, il3__load_uint32(a),
				il3__load_uint16(a + 4), h.now);
		FUZZ_CHECK(rc == 0 || rc == -ENOTCONN || rc == -EBUSY || rc == -EINVAL ||
				rc == -ENOBUFS);
		FUZZ_CHECK(rc != 0 || il3__load_uint16(a + 4) > 0);
		step();
		return;
	case FUZZ_IL3_OP_END:
	default:
		if (il3_session_fd(h.session) < 0) {
			connect_session(a[0] & 1, flags & FUZZ_IL3_START_ESTABLISHED);
			return;
		}
		rc = il3_session_terminate(h.session, il3__load_uint16(a), h.now);
		FUZZ_CHECK(rc == 0 || rc == -ENOTCONN || rc == -ENOBUFS);
		step();
		return;
	}
}

static void
setup(void)
{
	static const char credentials[] = "# fuzz\naccess_key_id=FUZZKEY1\n"
		"secret_key=AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8\n";

	snprintf(h.journal, sizeof(h.journal), "%s/journal", fuzz_tmpdir());
	snprintf(h.credentials, sizeof(h.credentials), "%s/credentials", fuzz_tmpdir());
	fuzz_write_file(h.credentials, credentials, sizeof(credentials) - 1, 0600);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct il3_session_config config = {
		.journal_path = h.journal, .credentials_path = h.credentials,
		.session_id = "FZZ", .firm_id = "12345", .sender_id = "FUZZER",
		.location = "US,IL", .system_name = "tickwire-fuzz", .system_version = "1",
		.system_vendor = "tickwire", .gateway_ip = INADDR_LOOPBACK, .gateway_port = 9,
		.keep_alive_ms = FUZZ_IL3_KEEP_ALIVE_MS, .party_details_list_req_id = 7,
	};
	const struct il3_session_handlers handlers = {
		.on_app_message = on_app_message, .on_state = on_state,
	};
	uint8_t flags;
	size_t pos = 1;

	if (data == NULL || size == 0)
		return 0;
	if (h.journal[0] == '\0')
		setup();
	flags = data[0];
	prepare_journal(flags);
	h.session = il3_session_create(&config, &handlers);
	FUZZ_CHECK(h.session != NULL);
	h.now = FUZZ_IL3_T0_NS;
	h.state = IL3_STATE_DISCONNECTED;
	h.delivered = 0;
	h.last_id = 0;
	memset(&h.counters, 0, sizeof(h.counters));
	connect_session(false, flags & FUZZ_IL3_START_ESTABLISHED);
	while (pos < size) {
		enum fuzz_il3_op op = (enum fuzz_il3_op)(data[pos] % FUZZ_IL3_OP_COUNT);
		size_t length = size - pos >= 3 ? il3__load_uint16(data + pos + 1) : 0;

		pos = pos + 3 < size ? pos + 3 : size;
		if (length > size - pos)
			length = size - pos;
		run_op(flags, op, data + pos, length);
		pos += length;
	}
	il3_session_destroy(h.session);
	h.session = NULL;
	if (h.gateway >= 0)
		close(h.gateway);
	h.gateway = -1;
	return 0;
}
