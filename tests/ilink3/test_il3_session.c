/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/ilink3 FIXP session against tickwire-ilink-sim (a child process on an
 * ephemeral 127.0.0.1 port).  Usage: test_il3_session SIM_PATH TEST_NAME.
 * The simulator's stdout (one line per event) is collected and checked; its
 * stdin takes control commands.  Every wait is bounded (WAIT_MS).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "ilink3.h"

#define WAIT_MS 10000
#define MAX_LINES 65536
#define MAX_RECORDS 1024
#define PX(whole) ((int64_t)(whole) * 1000000000)

static const char *sim_path;

struct app_record {
	uint16_t template_id;
	bool retransmitted;
	uint32_t seq;
	uint64_t order_id;
	char clordid[21];
};

struct state_record {
	enum il3_state from, to;
	enum il3_event why;
};

struct ctx {
	pid_t sim_pid;
	int sim_in, sim_out;
	uint16_t port;
	char partial[4096];
	size_t partial_length;
	char **lines;
	size_t line_count;
	char dir[64], journal[128], creds[128], bad_creds[128];
	struct il3_session *s;
	struct app_record app[MAX_RECORDS];
	size_t app_count;
	struct state_record states[MAX_RECORDS];
	size_t state_count;
};

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---------------------------------------------------------------------- */
/* Simulator process                                                       */
/* ---------------------------------------------------------------------- */

static void
write_file(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static void
sim_collect(struct ctx *c)
{
	for (;;) {
		ssize_t n = read(c->sim_out, c->partial + c->partial_length,
				sizeof(c->partial) - 1 - c->partial_length);
		char *start, *nl;

		if (n <= 0)
			return;
		c->partial_length += (size_t)n;
		c->partial[c->partial_length] = '\0';
		start = c->partial;
		while ((nl = strchr(start, '\n')) != NULL) {
			*nl = '\0';
			assert_true(c->line_count < MAX_LINES);
			c->lines[c->line_count] = strdup(start);
			assert_non_null(c->lines[c->line_count]);
			c->line_count++;
			start = nl + 1;
		}
		c->partial_length -= (size_t)(start - c->partial);
		memmove(c->partial, start, c->partial_length);
	}
}

static size_t
sim_count(const struct ctx *c, const char *prefix)
{
	size_t i, n = 0;

	for (i = 0; i < c->line_count; i++)
		n += strncmp(c->lines[i], prefix, strlen(prefix)) == 0;
	return n;
}

static const char *
last_line(const struct ctx *c, const char *prefix)
{
	size_t i;

	for (i = c->line_count; i > 0; i--)
		if (strncmp(c->lines[i - 1], prefix, strlen(prefix)) == 0)
			return c->lines[i - 1];
	return "";
}

static void
dump_lines(const struct ctx *c)
{
	size_t i = c->line_count > 40 ? c->line_count - 40 : 0;

	for (; i < c->line_count; i++)
		print_message("sim: %s\n", c->lines[i]);
}

static void
sim_start(struct ctx *c, const char *const *extra)
{
	const char *argv[16];
	int in[2], out[2];
	size_t n = 0;
	uint64_t end;

	argv[n++] = sim_path;
	argv[n++] = "--credentials";
	argv[n++] = c->creds;
	argv[n++] = "--port";
	argv[n++] = "0";
	while (extra != NULL && *extra != NULL && n < 15)
		argv[n++] = *extra++;
	argv[n] = NULL;
	assert_int_equal(pipe2(in, O_CLOEXEC), 0);
	assert_int_equal(pipe2(out, O_CLOEXEC), 0);
	c->sim_pid = fork();
	assert_true(c->sim_pid >= 0);
	if (c->sim_pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(in[0], STDIN_FILENO);
		dup2(out[1], STDOUT_FILENO);
		execv(sim_path, (char *const *)argv);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	c->sim_in = in[1];
	c->sim_out = out[0];
	fcntl(c->sim_out, F_SETFL, O_NONBLOCK);
	end = now_ns() + WAIT_MS * UINT64_C(1000000);
	while (c->line_count == 0 && now_ns() < end) {
		struct pollfd pfd = { .fd = c->sim_out, .events = POLLIN };

		poll(&pfd, 1, 10);
		sim_collect(c);
	}
	assert_true(c->line_count > 0);
	c->port = (uint16_t)atoi(c->lines[0]);
	assert_true(c->port > 0);
}

static int
setup(void **state)
{
	struct ctx *c = calloc(1, sizeof(*c));

	assert_non_null(c);
	c->lines = calloc(MAX_LINES, sizeof(*c->lines));
	assert_non_null(c->lines);
	snprintf(c->dir, sizeof(c->dir), "/tmp/il3_session_XXXXXX");
	assert_non_null(mkdtemp(c->dir));
	snprintf(c->journal, sizeof(c->journal), "%s/session.journal", c->dir);
	snprintf(c->creds, sizeof(c->creds), "%s/creds", c->dir);
	snprintf(c->bad_creds, sizeof(c->bad_creds), "%s/bad_creds", c->dir);
	write_file(c->creds, "# test key\naccess_key_id=TESTKEY1\n"
		"secret_key=AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8\n", 0600);
	write_file(c->bad_creds, "access_key_id=TESTKEY1\n"
		"secret_key=bm90LXRoZS1yaWdodC1rZXktbm90LXRoZS1yaWdodCE\n", 0600);
	c->sim_pid = -1;
	*state = c;
	return 0;
}

static int
teardown(void **state)
{
	struct ctx *c = *state;
	char path[256];
	size_t i;

	il3_session_destroy(c->s);
	if (c->sim_pid > 0) {
		int status = 0;

		close(c->sim_in);
		kill(c->sim_pid, SIGTERM);
		assert_int_equal(waitpid(c->sim_pid, &status, 0), c->sim_pid);
		close(c->sim_out);
		/* a clean exit: no sanitizer report, no error */
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	for (i = 0; i < c->line_count; i++)
		free(c->lines[i]);
	free(c->lines);
	unlink(c->journal);
	snprintf(path, sizeof(path), "%s.tmp", c->journal);
	unlink(path);
	unlink(c->creds);
	unlink(c->bad_creds);
	rmdir(c->dir);
	free(c);
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Session driving                                                         */
/* ---------------------------------------------------------------------- */

static void
copy_field_chars(const struct il3_msg *msg, const char *name, char *out, size_t size)
{
	unsigned int i;

	out[0] = '\0';
	for (i = 0; i < msg->info->field_count; i++) {
		const struct il3_field_info *f = &msg->info->fields[i];

		if (strcmp(f->name, name) == 0 && f->size > 0 &&
				il3_field_present(f, msg->version, msg->block_length)) {
			size_t length = il3__strnlen((const char *)msg->root + f->offset, f->size);

			if (length >= size)
				length = size - 1;
			memcpy(out, msg->root + f->offset, length);
			out[length] = '\0';
		}
	}
}

static uint64_t
field_u(const struct il3_msg *msg, const char *name)
{
	unsigned int i;

	for (i = 0; i < msg->info->field_count; i++) {
		const struct il3_field_info *f = &msg->info->fields[i];

		if (strcmp(f->name, name) == 0 && f->size > 0 &&
				il3_field_present(f, msg->version, msg->block_length))
			return il3_load(msg->root, f);
	}
	return 0;
}

static void
on_app_message(void *arg, const struct il3_msg *msg, bool retransmitted)
{
	struct ctx *c = arg;
	struct app_record *r;

	assert_true(c->app_count < MAX_RECORDS);
	r = &c->app[c->app_count++];
	r->template_id = msg->template_id;
	r->retransmitted = retransmitted;
	r->seq = (uint32_t)field_u(msg, "SeqNum");
	r->order_id = field_u(msg, "OrderID");
	copy_field_chars(msg, "ClOrdID", r->clordid, sizeof(r->clordid));
}

static void
on_state(void *arg, enum il3_state from, enum il3_state to, enum il3_event why)
{
	struct ctx *c = arg;

	assert_true(c->state_count < MAX_RECORDS);
	c->states[c->state_count++] = (struct state_record){ from, to, why };
}

static struct il3_session *
session_new(struct ctx *c, const char *creds, uint16_t keep_alive_ms)
{
	const struct il3_session_config config = {
		.journal_path = c->journal,
		.credentials_path = creds,
		.session_id = "ABC",
		.firm_id = "12345",
		.sender_id = "TRADER1",
		.location = "US,IL",
		.system_name = "tickwire",
		.system_version = "0.1",
		.system_vendor = "tickwire",
		.gateway_ip = INADDR_LOOPBACK,
		.gateway_port = c->port,
		.keep_alive_ms = keep_alive_ms,
		.party_details_list_req_id = 7,
	};
	const struct il3_session_handlers handlers = {
		.on_app_message = on_app_message, .on_state = on_state, .ctx = c,
	};
	struct il3_session *s = il3_session_create(&config, &handlers);

	assert_non_null(s);
	return s;
}

static void
session_replace(struct ctx *c, const char *creds, uint16_t keep_alive_ms)
{
	il3_session_destroy(c->s);
	c->s = session_new(c, creds, keep_alive_ms);
}

enum wait_kind { WAIT_NOTHING, WAIT_STATE, WAIT_LINES, WAIT_APP };

/*
 * Run the session and collect simulator lines until the condition holds
 * (state reached, n lines with a prefix, n application messages) or ms pass.
 */
static bool
pump(struct ctx *c, int ms, enum wait_kind kind, int state, const char *prefix, size_t n)
{
	uint64_t end = now_ns() + (uint64_t)ms * 1000000u;

	for (;;) {
		struct pollfd pfd[2];
		nfds_t count = 0;

		sim_collect(c);
		switch (kind) {
		case WAIT_STATE:
			if (il3_session_state(c->s) == (enum il3_state)state)
				return true;
			break;
		case WAIT_LINES:
			if (sim_count(c, prefix) >= n)
				return true;
			break;
		case WAIT_APP:
			if (c->app_count >= n)
				return true;
			break;
		default:
			break;
		}
		if (now_ns() >= end)
			break;
		pfd[count++] = (struct pollfd){ .fd = c->sim_out, .events = POLLIN };
		if (c->s != NULL && il3_session_fd(c->s) >= 0)
			pfd[count++] = (struct pollfd){ .fd = il3_session_fd(c->s),
				.events = il3_session_poll_events(c->s) };
		poll(pfd, count, 5);
		if (c->s != NULL && il3_session_fd(c->s) >= 0)
			il3_session_step(c->s, now_ns());
	}
	if (kind != WAIT_NOTHING)
		dump_lines(c);
	return kind == WAIT_NOTHING;
}

#define WAIT_STATE_IS(c, st) assert_true(pump(c, WAIT_MS, WAIT_STATE, st, NULL, 0))
#define WAIT_LINE(c, prefix, n) assert_true(pump(c, WAIT_MS, WAIT_LINES, 0, prefix, n))
#define WAIT_APP_COUNT(c, n) assert_true(pump(c, WAIT_MS, WAIT_APP, 0, NULL, n))

static void
sim_command(struct ctx *c, const char *command)
{
	char line[160], ok[170];

	snprintf(line, sizeof(line), "%s\n", command);
	assert_int_equal(write(c->sim_in, line, strlen(line)), (ssize_t)strlen(line));
	snprintf(ok, sizeof(ok), "ok %s", command);
	WAIT_LINE(c, ok, sim_count(c, ok) + 1);
}

static void
connect_established(struct ctx *c, bool new_uuid)
{
	assert_int_equal(il3_session_connect(c->s, now_ns(), new_uuid), 0);
	WAIT_STATE_IS(c, IL3_STATE_ESTABLISHED);
}

static bool
saw_transition(const struct ctx *c, enum il3_state to, enum il3_event why)
{
	size_t i;

	for (i = 0; i < c->state_count; i++)
		if (c->states[i].to == to && c->states[i].why == why)
			return true;
	return false;
}

static uint64_t
send_order(struct ctx *c, uint32_t qty, int64_t price)
{
	const struct il3_order order = {
		.security_id = 42, .side = IL3_SIDE_REQ_BUY, .quantity = qty,
		.price_mantissa = price, .time_in_force = IL3_TIME_IN_FORCE_DAY,
	};
	uint64_t clordid = 0;

	assert_int_equal(il3_session_send_new_order(c->s, &order, now_ns(), &clordid), 0);
	return clordid;
}

/* ---------------------------------------------------------------------- */
/* Tests                                                                   */
/* ---------------------------------------------------------------------- */

/* Negotiate ok / reject, Establish ok / reject (signature, UUID, sequence),
 * connect refused. */
static void
test_handshake(void **state)
{
	struct ctx *c = *state;
	struct il3_journal_record rec;
	uint64_t uuid;
	uint32_t next_out, next_in;
	int listener;
	struct sockaddr_in addr = { .sin_family = AF_INET };
	socklen_t length = sizeof(addr);

	sim_start(c, NULL);
	/* wrong secret: NegotiationReject; reconnecting negotiates again */
	c->s = session_new(c, c->bad_creds, 2000);
	assert_int_equal(il3_session_connect(c->s, now_ns(), false), 0);
	assert_int_equal(il3_session_connect(c->s, now_ns(), false), -EISCONN);
	WAIT_STATE_IS(c, IL3_STATE_DISCONNECTED);
	assert_int_equal(il3_session_last_event(c->s), IL3_EVENT_NEGOTIATION_REJECTED);
	assert_true(saw_transition(c, IL3_STATE_CONNECTING, IL3_EVENT_NONE));
	assert_true(saw_transition(c, IL3_STATE_NEGOTIATING, IL3_EVENT_CONNECTED));
	assert_int_equal(sim_count(c, "negotiate reject"), 1);
	assert_int_equal(il3_session_connect(c->s, now_ns(), false), 0);
	WAIT_STATE_IS(c, IL3_STATE_DISCONNECTED);
	assert_int_equal(sim_count(c, "negotiate reject"), 2);
	assert_int_equal(sim_count(c, "establish"), 0);
	assert_int_equal(access(c->journal, F_OK), -1); /* nothing durable yet */

	/* right secret: Negotiate -> Establish -> established */
	c->state_count = 0;
	session_replace(c, c->creds, 2000);
	connect_established(c, false);
	assert_true(saw_transition(c, IL3_STATE_NEGOTIATING, IL3_EVENT_CONNECTED));
	assert_true(saw_transition(c, IL3_STATE_ESTABLISHING, IL3_EVENT_NEGOTIATED));
	assert_true(saw_transition(c, IL3_STATE_ESTABLISHED, IL3_EVENT_ESTABLISHED));
	assert_int_equal(sim_count(c, "negotiate ok"), 1);
	assert_int_equal(sim_count(c, "establish ok"), 1);
	send_order(c, 5, PX(100));
	send_order(c, 5, PX(100));
	WAIT_APP_COUNT(c, 4);
	il3_session_sequence(c->s, &uuid, &next_out, &next_in);
	assert_int_equal(next_out, 3);
	assert_int_equal(next_in, 5);

	/* a restart establishes (no Negotiate) with the journal's numbers */
	il3_session_disconnect(c->s);
	assert_int_equal(il3_session_state(c->s), IL3_STATE_DISCONNECTED);
	session_replace(c, c->creds, 2000);
	connect_established(c, false);
	assert_int_equal(sim_count(c, "negotiate ok"), 1);
	assert_int_equal(sim_count(c, "establish ok uuid="), 2);

	/* journal rewound: NextSeqNo lower than expected -> EstablishmentReject */
	il3_session_disconnect(c->s);
	assert_int_equal(il3_journal_load(c->journal, &rec), 0);
	rec.next_out_seq = 2;
	rec.pending_seq = 0;
	assert_int_equal(il3_journal_save(c->journal, &rec), 0);
	session_replace(c, c->creds, 2000);
	assert_int_equal(il3_session_connect(c->s, now_ns(), false), 0);
	WAIT_STATE_IS(c, IL3_STATE_DISCONNECTED);
	assert_int_equal(il3_session_last_event(c->s), IL3_EVENT_ESTABLISHMENT_REJECTED);
	assert_int_equal(sim_count(c, "establish reject"), 1);
	assert_non_null(strstr(last_line(c, "establish reject"), "code=7 expected=3"));

	/* a UUID the gateway never negotiated -> EstablishmentReject */
	rec.uuid = uuid + 1000;
	rec.next_out_seq = 3;
	assert_int_equal(il3_journal_save(c->journal, &rec), 0);
	session_replace(c, c->creds, 2000);
	assert_int_equal(il3_session_connect(c->s, now_ns(), false), 0);
	WAIT_STATE_IS(c, IL3_STATE_DISCONNECTED);
	assert_int_equal(il3_session_last_event(c->s), IL3_EVENT_ESTABLISHMENT_REJECTED);
	assert_int_equal(sim_count(c, "establish reject"), 2);
	assert_non_null(strstr(last_line(c, "establish reject"), "code=2"));

	/* new_uuid negotiates a fresh session: sequence numbers restart at 1 */
	connect_established(c, true);
	il3_session_sequence(c->s, &uuid, &next_out, &next_in);
	assert_int_equal(next_out, 1);
	assert_int_equal(sim_count(c, "negotiate ok"), 2);

	/* nobody listening: connect_failed */
	listener = socket(AF_INET, SOCK_STREAM, 0);
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(listener, (struct sockaddr *)&addr, sizeof(addr)), 0);
	assert_int_equal(getsockname(listener, (struct sockaddr *)&addr, &length), 0);
	close(listener);
	il3_session_disconnect(c->s);
	c->port = ntohs(addr.sin_port);
	session_replace(c, c->creds, 2000);
	if (il3_session_connect(c->s, now_ns(), false) == 0)
		WAIT_STATE_IS(c, IL3_STATE_DISCONNECTED);
	assert_int_equal(il3_session_last_event(c->s), IL3_EVENT_CONNECT_FAILED);
	assert_int_equal(il3_session_step(c->s, now_ns()), -ENOTCONN);
}

/* Sequence heartbeats both ways, lapsed peer detected, lapsed client. */
static void
test_heartbeat(void **state)
{
	struct ctx *c = *state;
	const struct il3_session_counters *counters;
	struct timespec pause = { 0, 800 * 1000000L };

	sim_start(c, NULL);
	c->s = session_new(c, c->creds, 250);
	connect_established(c, false);
	counters = il3_session_counters(c->s);
	pump(c, 900, WAIT_NOTHING, 0, NULL, 0);
	assert_int_equal(il3_session_state(c->s), IL3_STATE_ESTABLISHED);
	assert_true(counters->heartbeats_out >= 2);
	assert_true(counters->heartbeats_in >= 2);
	assert_true(il3_session_next_timeout_ns(c->s) <= now_ns() + 260 * UINT64_C(1000000));
	/* the simulator's report of them may still be in its pipe: wait for it */
	WAIT_LINE(c, "sequence-in next=1 lapsed=0", 2);

	/* the simulator stops sending: KeepAliveIntervalLapsed, then peer lapsed */
	sim_command(c, "silence on");
	WAIT_STATE_IS(c, IL3_STATE_DISCONNECTED);
	assert_int_equal(il3_session_last_event(c->s), IL3_EVENT_PEER_LAPSED);
	WAIT_LINE(c, "sequence-in next=1 lapsed=1", 1);
	WAIT_LINE(c, "terminate-in", 1);
	sim_command(c, "silence off");

	/* the client stops sending: the simulator terminates it */
	connect_established(c, false);
	nanosleep(&pause, NULL);
	WAIT_LINE(c, "client-lapsed", 1);
	WAIT_STATE_IS(c, IL3_STATE_DISCONNECTED);
	assert_true(il3_session_last_event(c->s) == IL3_EVENT_TERMINATED_BY_PEER ||
		il3_session_last_event(c->s) == IL3_EVENT_PEER_LAPSED);
}

/* Terminate by us, by the peer, and a Negotiate nobody answers. */
static void
test_terminate(void **state)
{
	struct ctx *c = *state;

	sim_start(c, NULL);
	c->s = session_new(c, c->creds, 300);
	connect_established(c, false);
	assert_int_equal(il3_session_terminate(c->s, 0, now_ns()), 0);
	assert_int_equal(il3_session_state(c->s), IL3_STATE_TERMINATING);
	WAIT_STATE_IS(c, IL3_STATE_DISCONNECTED);
	assert_int_equal(il3_session_last_event(c->s), IL3_EVENT_TERMINATED);
	assert_int_equal(sim_count(c, "terminate-in"), 1);
	assert_int_equal(il3_session_terminate(c->s, 0, now_ns()), -ENOTCONN);

	connect_established(c, false);
	sim_command(c, "terminate");
	WAIT_STATE_IS(c, IL3_STATE_DISCONNECTED);
	assert_int_equal(il3_session_last_event(c->s), IL3_EVENT_TERMINATED_BY_PEER);
	WAIT_LINE(c, "terminate-in", 2);

	/* no answer to Establish within 2 keep-alive intervals */
	sim_command(c, "silence on");
	assert_int_equal(il3_session_connect(c->s, now_ns(), false), 0);
	WAIT_STATE_IS(c, IL3_STATE_DISCONNECTED);
	assert_int_equal(il3_session_last_event(c->s), IL3_EVENT_RESPONSE_TIMEOUT);
	assert_true(saw_transition(c, IL3_STATE_ESTABLISHING, IL3_EVENT_CONNECTED));
}

static const struct app_record *
find_app(const struct ctx *c, uint16_t template_id, size_t from)
{
	size_t i;

	for (i = from; i < c->app_count; i++)
		if (c->app[i].template_id == template_id)
			return &c->app[i];
	return NULL;
}

/* NewOrderSingle -> New/Fill, New (resting), cancel, replace, rejects. */
static void
test_app_flow(void **state)
{
	struct ctx *c = *state;
	const struct il3_order resting = {
		.security_id = 42, .side = IL3_SIDE_REQ_SELL, .quantity = 50,
		.price_mantissa = PX(101), .time_in_force = IL3_TIME_IN_FORCE_DAY,
	};
	struct il3_order replace = resting;
	const struct app_record *r;
	uint64_t filled, rest, request, request2, order_id;
	char text[24];
	size_t mark;

	sim_start(c, NULL);
	c->s = session_new(c, c->creds, 2000);
	assert_int_equal(il3_session_send_new_order(c->s, &resting, now_ns(), NULL), -ENOTCONN);
	connect_established(c, false);

	/* qty <= 10: New then a full fill at the order price */
	filled = send_order(c, 5, PX(100));
	WAIT_APP_COUNT(c, 2);
	snprintf(text, sizeof(text), "%" PRIu64, filled);
	assert_int_equal(c->app[0].template_id, IL3_TEMPLATE_EXECUTION_REPORT_NEW522);
	assert_int_equal(c->app[1].template_id, IL3_TEMPLATE_EXECUTION_REPORT_TRADE_OUTRIGHT525);
	assert_string_equal(c->app[0].clordid, text);
	assert_string_equal(c->app[1].clordid, text);
	assert_false(c->app[0].retransmitted);
	assert_int_equal(c->app[0].seq, 1);
	assert_int_equal(c->app[1].seq, 2);

	/* qty > 10: New only, the order rests */
	assert_int_equal(il3_session_send_new_order(c->s, &resting, now_ns(), &rest), 0);
	assert_true(rest > filled);
	WAIT_APP_COUNT(c, 3);
	assert_int_equal(c->app[2].template_id, IL3_TEMPLATE_EXECUTION_REPORT_NEW522);
	order_id = c->app[2].order_id;
	assert_true(order_id != 0);

	/* replace: ClOrdID reused, a new OrderRequestID returned */
	replace.quantity = 60;
	replace.price_mantissa = PX(102);
	assert_int_equal(il3_session_send_replace(c->s, rest, order_id, &replace, now_ns(),
		&request), 0);
	assert_true(request > rest);
	WAIT_APP_COUNT(c, 4);
	assert_int_equal(c->app[3].template_id, IL3_TEMPLATE_EXECUTION_REPORT_MODIFY531);
	snprintf(text, sizeof(text), "%" PRIu64, rest);
	assert_string_equal(c->app[3].clordid, text);
	WAIT_LINE(c, "app seq=3 template=515 clordid=", 1);

	/* replace to price 0: OrderCancelReplaceReject */
	replace.price_mantissa = 0;
	assert_int_equal(il3_session_send_replace(c->s, rest, order_id, &replace, now_ns(),
		&request2), 0);
	assert_true(request2 > request);
	WAIT_APP_COUNT(c, 5);
	assert_int_equal(c->app[4].template_id, IL3_TEMPLATE_ORDER_CANCEL_REPLACE_REJECT536);

	/* cancel: ExecutionReportCancel; again: OrderCancelReject */
	assert_int_equal(il3_session_send_cancel(c->s, rest, order_id, 42, IL3_SIDE_REQ_SELL,
		now_ns(), &request), 0);
	WAIT_APP_COUNT(c, 6);
	assert_int_equal(c->app[5].template_id, IL3_TEMPLATE_EXECUTION_REPORT_CANCEL534);
	assert_string_equal(c->app[5].clordid, text);
	assert_int_equal(il3_session_send_cancel(c->s, rest, order_id, 42, IL3_SIDE_REQ_SELL,
		now_ns(), NULL), 0);
	WAIT_APP_COUNT(c, 7);
	assert_int_equal(c->app[6].template_id, IL3_TEMPLATE_ORDER_CANCEL_REJECT535);

	/* price <= 0: ExecutionReportReject */
	mark = c->app_count;
	send_order(c, 5, -PX(1));
	WAIT_APP_COUNT(c, mark + 1);
	r = find_app(c, IL3_TEMPLATE_EXECUTION_REPORT_REJECT523, mark);
	assert_non_null(r);
	assert_int_equal(il3_session_counters(c->s)->app_out, 7);
	assert_int_equal(il3_session_counters(c->s)->app_in, 8);
	assert_int_equal(sim_count(c, "duplicate"), 0);
}

/* The simulator drops the connection after N messages: reconnect,
 * re-establish, sequence numbers continue, the gap is retransmitted; then
 * skipped outbound numbers are asked for again on the same connection. */
static void
test_reconnect(void **state)
{
	static const char *const extra[] = { "--drop-after", "3", NULL };
	struct ctx *c = *state;
	const struct il3_session_counters *counters;
	uint32_t next_out, next_in;
	size_t i, retransmitted = 0;

	sim_start(c, extra);
	c->s = session_new(c, c->creds, 2000);
	counters = il3_session_counters(c->s);
	connect_established(c, false);
	send_order(c, 5, PX(100));
	send_order(c, 5, PX(100));
	WAIT_APP_COUNT(c, 4);
	send_order(c, 5, PX(100));  /* its two reports are stored, not sent */
	WAIT_STATE_IS(c, IL3_STATE_DISCONNECTED);
	assert_int_equal(il3_session_last_event(c->s), IL3_EVENT_PEER_CLOSED);
	assert_int_equal(c->app_count, 4);
	WAIT_LINE(c, "disconnect drop_after", 1);

	connect_established(c, false);
	WAIT_APP_COUNT(c, 6);
	WAIT_LINE(c, "establish ok", 2);
	assert_int_equal(sim_count(c, "retransmit-request from=5 count=2"), 1);
	assert_true(c->app[4].retransmitted && c->app[5].retransmitted);
	assert_int_equal(c->app[4].seq, 5);
	assert_int_equal(c->app[5].seq, 6);
	assert_int_equal(counters->retransmit_requests, 1);
	assert_int_equal(counters->retransmitted_in, 2);
	il3_session_sequence(c->s, NULL, &next_out, &next_in);
	assert_int_equal(next_out, 4);
	assert_int_equal(next_in, 7);

	/* live traffic continues without another gap */
	send_order(c, 5, PX(100));
	WAIT_APP_COUNT(c, 8);
	assert_false(c->app[6].retransmitted);
	assert_int_equal(c->app[6].seq, 7);
	WAIT_LINE(c, "app seq=4 ", 1);
	assert_int_equal(counters->retransmit_requests, 1);

	/* two skipped numbers on one connection: two retransmissions */
	for (i = 0; i < 2; i++) {
		sim_command(c, "skip");
		send_order(c, 5, PX(100));
		WAIT_APP_COUNT(c, 8 + 2 * (i + 1));
		WAIT_LINE(c, "retransmission from=", i + 2);
	}
	for (i = 0; i < c->app_count; i++)
		retransmitted += c->app[i].retransmitted;
	assert_int_equal(retransmitted, 4);
	assert_int_equal(counters->retransmit_requests, 3);
	assert_int_equal(sim_count(c, "retransmit-reject"), 0);
	assert_int_equal(sim_count(c, "duplicate"), 0);
	il3_session_sequence(c->s, NULL, &next_out, &next_in);
	assert_int_equal(next_out, 7);
	assert_int_equal(next_in, 13);
}

/* Run the session until *counter >= n (or WAIT_MS pass). */
static bool
wait_counter(struct ctx *c, const uint64_t *counter, uint64_t n)
{
	uint64_t end = now_ns() + (uint64_t)WAIT_MS * 1000000u;

	while (*counter < n && now_ns() < end)
		pump(c, 10, WAIT_NOTHING, 0, NULL, 0);
	return *counter >= n;
}

/* A session established with the simulator, one order answered (gateway
 * SeqNums 1 and 2); @return its counters. */
static const struct il3_session_counters *
start_with_one_order(struct ctx *c, uint16_t keep_alive_ms)
{
	sim_start(c, NULL);
	c->s = session_new(c, c->creds, keep_alive_ms);
	connect_established(c, false);
	send_order(c, 5, PX(100));
	WAIT_APP_COUNT(c, 2);
	return il3_session_counters(c->s);
}

static size_t
count_retransmitted(const struct ctx *c)
{
	size_t i, n = 0;

	for (i = 0; i < c->app_count; i++)
		n += c->app[i].retransmitted;
	return n;
}

/* Two gaps on one connection, the second found while the request for the
 * first is still outstanding: it waits in the gap queue and is requested as
 * soon as the first retransmission completes. */
static void
test_gap_while_outstanding(void **state)
{
	struct ctx *c = *state;
	const struct il3_session_counters *counters = start_with_one_order(c, 2000);
	uint32_t next_in;

	sim_command(c, "skip-at 3");
	sim_command(c, "skip-at 5");
	/* both orders are on the wire before the request for 3, so the gateway
	 * answers them (4, then 6 with 5 missing) before it sees the request */
	send_order(c, 5, PX(100));
	send_order(c, 5, PX(100));
	WAIT_APP_COUNT(c, 6);
	WAIT_LINE(c, "retransmit-request from=3 count=1", 1);
	WAIT_LINE(c, "retransmit-request from=5 count=1", 1);
	assert_int_equal(count_retransmitted(c), 2);
	assert_int_equal(counters->gaps_in, 2);
	assert_int_equal(counters->retransmit_requests, 2);
	assert_int_equal(counters->retransmitted_in, 2);
	assert_int_equal(counters->retransmit_lost, 0);
	assert_int_equal(sim_count(c, "retransmit-reject"), 0);
	il3_session_sequence(c->s, NULL, NULL, &next_in);
	assert_int_equal(next_in, 7);
	assert_int_equal(il3_session_state(c->s), IL3_STATE_ESTABLISHED);
}

/* A RetransmitRequest the gateway never answers times out after 2K and is
 * sent once more; unanswered again, its range is given up and counted.  A
 * retry that is answered fills the gap. */
static void
test_retransmit_timeout(void **state)
{
	struct ctx *c = *state;
	const struct il3_session_counters *counters = start_with_one_order(c, 300);
	uint64_t t0;

	sim_command(c, "ignore-rr on");
	sim_command(c, "skip-at 3");
	t0 = now_ns();
	send_order(c, 5, PX(100));
	WAIT_LINE(c, "retransmit-request-ignored from=3 count=1", 1);
	assert_int_equal(counters->retransmit_timeouts, 0);
	WAIT_LINE(c, "retransmit-request-ignored from=3 count=1", 2);
	assert_true(now_ns() - t0 >= 600 * UINT64_C(1000000));  /* not before 2K */
	assert_int_equal(counters->retransmit_timeouts, 1);
	assert_true(wait_counter(c, &counters->retransmit_lost, 1));
	assert_int_equal(counters->retransmit_timeouts, 2);
	assert_int_equal(counters->retransmit_lost, 1);
	assert_int_equal(counters->retransmit_requests, 2);
	assert_int_equal(il3_session_state(c->s), IL3_STATE_ESTABLISHED);

	/* a new gap whose first request is ignored and whose retry is answered */
	sim_command(c, "skip-at 5");
	send_order(c, 5, PX(100));
	WAIT_LINE(c, "retransmit-request-ignored from=5 count=1", 1);
	sim_command(c, "ignore-rr off");
	WAIT_LINE(c, "retransmit-request from=5 count=1", 1);
	WAIT_APP_COUNT(c, 5);  /* 1, 2, 4, 6 live; 5 retransmitted; 3 lost */
	assert_int_equal(count_retransmitted(c), 1);
	assert_int_equal(counters->retransmit_timeouts, 3);
	assert_int_equal(counters->retransmit_lost, 1);
	assert_int_equal(counters->retransmitted_in, 1);
	assert_int_equal(il3_session_state(c->s), IL3_STATE_ESTABLISHED);
}

/* --delay-ms: every reply of the gateway waits; the session still works. */
static void
test_gateway_delay(void **state)
{
	static const char *const extra[] = { "--delay-ms", "150", NULL };
	struct ctx *c = *state;
	uint64_t t0;

	sim_start(c, extra);
	c->s = session_new(c, c->creds, 2000);
	connect_established(c, false);
	t0 = now_ns();
	send_order(c, 5, PX(100));
	WAIT_APP_COUNT(c, 2);
	assert_true(now_ns() - t0 >= 150 * UINT64_C(1000000));
	assert_int_equal(il3_session_state(c->s), IL3_STATE_ESTABLISHED);
}

/* A message journaled but never written (crash between the two): the
 * gateway answers Establish with NotApplied and it is resent, same SeqNum
 * and ClOrdID; a number the client cannot resend is skipped with Sequence. */
static void
test_not_applied(void **state)
{
	struct ctx *c = *state;
	struct il3_journal_record rec;
	struct il3_msg msg;
	uint8_t *root;
	uint64_t clordid;
	char text[24], expect[80];

	sim_start(c, NULL);
	c->s = session_new(c, c->creds, 2000);
	connect_established(c, false);
	clordid = send_order(c, 5, PX(100));
	WAIT_APP_COUNT(c, 2);
	il3_session_disconnect(c->s);
	WAIT_LINE(c, "disconnect", 1);

	/* forge "order 2 journaled, then kill -9 before the write" */
	assert_int_equal(il3_journal_load(c->journal, &rec), 0);
	assert_int_equal(rec.pending_seq, 1);
	assert_int_equal(il3_msg_parse(rec.pending_frame, rec.pending_length, &msg, NULL), 0);
	root = (uint8_t *)(uintptr_t)msg.root;
	il3_new_order_single514_set_seq_num(root, 2);
	snprintf(text, sizeof(text), "%" PRIu64, clordid + 1);
	il3_new_order_single514_set_cl_ord_id(root, text, strlen(text));
	rec.pending_seq = 2;
	rec.next_out_seq = 3;
	rec.next_clordid = clordid + 2;
	assert_int_equal(il3_journal_save(c->journal, &rec), 0);

	session_replace(c, c->creds, 2000);
	connect_established(c, false);
	WAIT_LINE(c, "not-applied from=2 count=1", 1);
	snprintf(expect, sizeof(expect), "app seq=2 template=514 clordid=%s", text);
	WAIT_LINE(c, expect, 1);
	WAIT_APP_COUNT(c, 4);
	assert_int_equal(il3_session_counters(c->s)->not_applied, 1);
	assert_int_equal(il3_session_counters(c->s)->resent_after_crash, 1);
	send_order(c, 5, PX(100));
	WAIT_LINE(c, "app seq=3 ", 1);

	/* ahead by a number nobody holds: NotApplied, then Sequence skips it */
	il3_session_disconnect(c->s);
	WAIT_LINE(c, "disconnect", 2);  /* eof, or a reset with replies unread */
	assert_int_equal(il3_journal_load(c->journal, &rec), 0);
	rec.next_out_seq = 6;
	rec.pending_seq = 0;
	assert_int_equal(il3_journal_save(c->journal, &rec), 0);
	session_replace(c, c->creds, 2000);
	connect_established(c, false);
	WAIT_LINE(c, "not-applied from=4 count=2", 1);
	WAIT_LINE(c, "gap-skipped from=4 count=2", 1);
	send_order(c, 5, PX(100));
	WAIT_LINE(c, "app seq=6 ", 1);
	assert_int_equal(sim_count(c, "duplicate"), 0);
}

/* A crash while an inbound gap is being retransmitted, after an order was
 * journaled: the journal keeps the gap's first number as the next inbound
 * one, so the restarted session asks for the gap again (live numbering had
 * moved past it; a journal of the live number lost it for good). */
static void
test_kill9_gap(void **state)
{
	struct ctx *c = *state;
	struct il3_journal_record rec;

	start_with_one_order(c, 2000);          /* gateway SeqNums 1, 2 */
	sim_command(c, "ignore-rr on");
	sim_command(c, "skip-at 3");
	send_order(c, 5, PX(100));              /* 3 withheld, 4 arrives */
	WAIT_LINE(c, "retransmit-request-ignored from=3 count=1", 1);
	send_order(c, 5, PX(100));              /* journaled while 3 is missing */
	WAIT_APP_COUNT(c, 5);                   /* 1, 2, 4, 5, 6 */
	assert_int_equal(il3_journal_load(c->journal, &rec), 0);
	assert_int_equal(rec.next_out_seq, 4);
	assert_int_equal(rec.next_in_seq, 3);

	/* "kill -9": the session goes without a word, a new one reads the journal */
	session_replace(c, c->creds, 2000);
	WAIT_LINE(c, "disconnect", 1);
	sim_command(c, "ignore-rr off");
	connect_established(c, false);
	WAIT_LINE(c, "retransmission from=3 count=4", 1);
	WAIT_APP_COUNT(c, 9);                   /* 3 at last; 4, 5, 6 again */
	assert_int_equal(c->app[5].seq, 3);
	assert_true(c->app[5].retransmitted);
	assert_int_equal(count_retransmitted(c), 4);
	assert_int_equal(sim_count(c, "retransmit-reject"), 0);
}

/* ---------------------------------------------------------------------- */
/* kill -9 and restart                                                     */
/* ---------------------------------------------------------------------- */

/* Child: connect from the journal and send orders until killed. */
static void __attribute__((noreturn))
order_loop(struct ctx *c)
{
	struct il3_session *s;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	c->s = NULL;
	s = session_new(c, c->creds, 2000);
	if (il3_session_connect(s, now_ns(), false) < 0)
		_exit(3);
	for (;;) {
		struct pollfd pfd = { .fd = il3_session_fd(s), .events = il3_session_poll_events(s) };
		const struct il3_order order = {
			.security_id = 42, .side = IL3_SIDE_REQ_BUY, .quantity = 5,
			.price_mantissa = PX(100), .time_in_force = IL3_TIME_IN_FORCE_DAY,
		};

		if (pfd.fd < 0)
			_exit(4);
		poll(&pfd, 1, 1);
		il3_session_step(s, now_ns());
		if (il3_session_state(s) == IL3_STATE_ESTABLISHED)
			il3_session_send_new_order(s, &order, now_ns(), NULL);
	}
}

static int
compare_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void
test_kill9(void **state)
{
	struct ctx *c = *state;
	uint64_t *seqs, *clordids;
	size_t i, n = 0, rounds;
	unsigned int seed = (unsigned int)getpid() ^ (unsigned int)now_ns();
	uint32_t next_out;

	sim_start(c, NULL);
	/* negotiate once so that every child only establishes */
	c->s = session_new(c, c->creds, 2000);
	connect_established(c, true);
	il3_session_destroy(c->s);
	c->s = NULL;
	print_message("kill9 seed %u\n", seed);
	for (rounds = 0; rounds < 6; rounds++) {
		size_t established = sim_count(c, "establish ok");
		size_t disconnects = sim_count(c, "disconnect");
		size_t apps = sim_count(c, "app seq=");
		pid_t child = fork();
		int status;

		assert_true(child >= 0);
		if (child == 0)
			order_loop(c);
		/* let it establish and send a few, then kill at a random point */
		WAIT_LINE(c, "establish ok", established + 1);
		WAIT_LINE(c, "app seq=", apps + 1 + (size_t)(rand_r(&seed) % 5));
		pump(c, (int)(rand_r(&seed) % 40), WAIT_NOTHING, 0, NULL, 0);
		kill(child, SIGKILL);
		assert_int_equal(waitpid(child, &status, 0), child);
		assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
		/* EOF, or a reset when unread replies were pending */
		WAIT_LINE(c, "disconnect", disconnects + 1);
	}
	/* a last clean restart: any message in doubt is settled */
	c->s = session_new(c, c->creds, 2000);
	connect_established(c, false);
	send_order(c, 5, PX(100));
	il3_session_sequence(c->s, NULL, &next_out, NULL);
	WAIT_LINE(c, "app seq=", next_out - 1);
	pump(c, 100, WAIT_NOTHING, 0, NULL, 0);

	/* every outbound number seen once, none missing; ClOrdIDs never repeat */
	seqs = calloc(c->line_count, sizeof(*seqs));
	clordids = calloc(c->line_count, sizeof(*clordids));
	assert_non_null(seqs);
	assert_non_null(clordids);
	for (i = 0; i < c->line_count; i++) {
		unsigned long long seq, clordid;

		if (sscanf(c->lines[i], "app seq=%llu template=514 clordid=%llu", &seq,
				&clordid) == 2) {
			seqs[n] = seq;
			clordids[n++] = clordid;
		}
	}
	print_message("kill9: %zu orders over %zu restarts, %zu resent after NotApplied\n",
		n, rounds, sim_count(c, "not-applied"));
	assert_int_equal(n, next_out - 1);
	qsort(seqs, n, sizeof(*seqs), compare_u64);
	qsort(clordids, n, sizeof(*clordids), compare_u64);
	for (i = 0; i < n; i++) {
		assert_int_equal(seqs[i], i + 1);
		if (i > 0)
			assert_true(clordids[i] > clordids[i - 1]);
	}
	assert_int_equal(sim_count(c, "duplicate"), 0);
	assert_int_equal(sim_count(c, "gap-skipped"), 0);
	assert_int_equal(sim_count(c, "establish reject"), 0);
	free(seqs);
	free(clordids);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_handshake, setup, teardown),
		cmocka_unit_test_setup_teardown(test_heartbeat, setup, teardown),
		cmocka_unit_test_setup_teardown(test_terminate, setup, teardown),
		cmocka_unit_test_setup_teardown(test_app_flow, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reconnect, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gap_while_outstanding, setup, teardown),
		cmocka_unit_test_setup_teardown(test_retransmit_timeout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gateway_delay, setup, teardown),
		cmocka_unit_test_setup_teardown(test_not_applied, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kill9, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kill9_gap, setup, teardown),
	};
	char filter[64];

	if (argc < 2) {
		fprintf(stderr, "usage: %s SIM_PATH [TEST_NAME]\n", argv[0]);
		return 2;
	}
	sim_path = argv[1];
	signal(SIGPIPE, SIG_IGN);
	if (argc > 2) {
		snprintf(filter, sizeof(filter), "test_%s", argv[2]);
		cmocka_set_test_filter(filter);
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
