/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tickwire-ilink-sim: a CME iLink 3 gateway simulator for tests, loopback
 * TCP only (bound to 127.0.0.1).  The FIXP server (session layer, store,
 * audit, faults) is tw_gateway.c, shared with tickwire-replay's simulated
 * exchange; this file holds the order rule, the options, the control
 * commands and the loop.  One client connection at a time; further
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
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ilink3.h"
#include "tw_gateway.h"

#define MAX_ORDERS 1024
#define CONTROL_LINE 128
#define EXIT_VIOLATIONS 3        /* --strict: the audit found a violation */

struct order {
	bool live;
	uint64_t order_id;
	char clordid[21];
	int32_t security_id;
	uint8_t side;
	uint32_t quantity;
	int64_t price;
};

struct sim {
	struct tw_gw *gw;
	bool strict;
	uint32_t fill_max;
	uint64_t next_order_id;
	char control[CONTROL_LINE];
	size_t control_length;
	struct order orders[MAX_ORDERS];
};

static volatile sig_atomic_t quit;

static void
on_signal(int sig)
{
	(void)sig;
	quit = 1;
}

static uint64_t
mono_ns(void *ctx)
{
	struct timespec ts;

	(void)ctx;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t
epoch_ns(void *ctx)
{
	struct timespec ts;

	(void)ctx;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void
trace_line(void *ctx, const char *line)
{
	(void)ctx;
	printf("%s\n", line);
	fflush(stdout);
}

static void
trace(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#include <stdarg.h>

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

/* ---------------------------------------------------------------------- */
/* Order rule                                                              */
/* ---------------------------------------------------------------------- */

static struct order *
find_order(struct sim *sim, const struct tw_gw_app *in)
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
apply_new_order(struct sim *sim, const struct tw_gw_app *in)
{
	uint64_t order_id;
	unsigned int i;

	if (in->price <= 0 || in->quantity == 0) {
		tw_gw_report_reject(sim->gw, in, in->price <= 0 ? "price must be positive" :
			"quantity must be positive");
		return;
	}
	order_id = ++sim->next_order_id;
	if (in->quantity <= sim->fill_max) {
		tw_gw_report_new(sim->gw, in, order_id);
		tw_gw_report_fill(sim->gw, in, order_id, in->price, in->quantity, in->quantity, 0);
		return;
	}
	for (i = 0; i < MAX_ORDERS && sim->orders[i].live; i++)
		;
	if (i == MAX_ORDERS) {
		tw_gw_report_reject(sim->gw, in, "order table full");
		return;
	}
	sim->orders[i] = (struct order){
		.live = true, .order_id = order_id, .security_id = in->security_id,
		.side = in->side, .quantity = in->quantity, .price = in->price,
	};
	memcpy(sim->orders[i].clordid, in->clordid, sizeof(in->clordid));
	tw_gw_report_new(sim->gw, in, order_id);
}

static void
apply_cancel(struct sim *sim, const struct tw_gw_app *in)
{
	struct order *o = find_order(sim, in);

	if (o == NULL) {
		tw_gw_report_cancel_reject(sim->gw, in, false, "unknown order");
		return;
	}
	o->live = false;
	tw_gw_report_cancel(sim->gw, in, o->order_id, o->price, o->quantity, 0);
}

static void
apply_replace(struct sim *sim, const struct tw_gw_app *in)
{
	struct order *o = find_order(sim, in);

	if (o == NULL || in->price <= 0 || in->quantity == 0) {
		tw_gw_report_cancel_reject(sim->gw, in, true, o == NULL ? "unknown order" :
			"bad price");
		return;
	}
	o->price = in->price;
	o->quantity = in->quantity;
	tw_gw_report_modify(sim->gw, in, o->order_id, o->price, o->quantity);
}

static void
on_app(void *ctx, struct tw_gw *gw, const struct tw_gw_app *in)
{
	struct sim *sim = ctx;

	(void)gw;
	switch (in->template_id) {
	case IL3_TEMPLATE_NEW_ORDER_SINGLE514:
		apply_new_order(sim, in);
		break;
	case IL3_TEMPLATE_ORDER_CANCEL_REQUEST516:
		apply_cancel(sim, in);
		break;
	default:
		apply_replace(sim, in);
		break;
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

static void
control_command(struct sim *sim, char *line)
{
	uint32_t v;
	bool ok = true;

	if (strcmp(line, "silence on") == 0) {
		sim->gw->silent = true;
	} else if (strcmp(line, "silence off") == 0) {
		sim->gw->silent = false;
		sim->gw->last_tx_ns = 0;
	} else if (strcmp(line, "drop") == 0) {
		tw_gw_close_client(sim->gw, "control");
	} else if (strcmp(line, "terminate") == 0) {
		tw_gw_terminate(sim->gw);
	} else if (strcmp(line, "skip") == 0) {
		tw_gw_skip_at(sim->gw, sim->gw->next_out);
	} else if (strncmp(line, "skip-at ", 8) == 0 && parse_u32(line + 8, &v) && v != 0) {
		ok = tw_gw_skip_at(sim->gw, v);
	} else if (strcmp(line, "ignore-rr on") == 0) {
		sim->gw->ignore_rr = true;
	} else if (strcmp(line, "ignore-rr off") == 0) {
		sim->gw->ignore_rr = false;
	} else if (strncmp(line, "drop-after ", 11) == 0 && parse_u32(line + 11, &v)) {
		sim->gw->drop_after = v == 0 ? 0 : sim->gw->app_received + v;
	} else if (strncmp(line, "delay ", 6) == 0 && parse_u32(line + 6, &v) && v <= 10000) {
		sim->gw->delay_ms = v;
	} else if (strcmp(line, "status") == 0) {
		unsigned int i, live = 0;

		for (i = 0; i < MAX_ORDERS; i++)
			live += sim->orders[i].live;
		trace("status uuid=%" PRIu64 " next_in=%" PRIu32 " next_out=%" PRIu32
			" orders=%u", sim->gw->uuid, sim->gw->next_in, sim->gw->next_out, live);
	} else if (strncmp(line, "owed-from ", 10) == 0 && parse_u32(line + 10, &v) && v != 0) {
		sim->gw->owed_pending = v;
	} else if (strcmp(line, "audit") == 0) {
		tw_gw_audit_report(sim->gw);
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
static int
run(struct sim *sim)
{
	bool control_open = true;

	while (!quit) {
		struct pollfd pfd[2];
		nfds_t count = 0;
		int control = -1, gateway;
		int rc;

		if (control_open) {
			control = (int)count;
			pfd[count++] = (struct pollfd){ .fd = STDIN_FILENO, .events = POLLIN };
		}
		gateway = (int)count;
		pfd[count++] = tw_gw_pollfd(sim->gw);
		rc = poll(pfd, count, 5);
		if (rc < 0 && errno != EINTR)
			return -errno;
		if (rc > 0 && control >= 0 && pfd[control].revents != 0)
			control_open = read_control(sim);
		tw_gw_step(sim->gw, rc > 0 ? pfd[gateway].revents : 0);
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
	uint32_t drop_after = 0, delay_ms = 0, skip_at[8];
	unsigned int n_skip = 0;
	struct il3_credentials creds;
	int opt, rc;

	sim = calloc(1, sizeof(*sim));
	if (sim == NULL) {
		fprintf(stderr, "tickwire-ilink-sim: out of memory\n");
		return 1;
	}
	sim->fill_max = 10;
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
		case 'd': drop_after = v; break;
		case 'D': delay_ms = v; break;
		case 's':
			if (n_skip < 8)
				skip_at[n_skip++] = v;
			break;
		case 'S': sim->strict = true; break;
		case 'h': usage(stdout); free(sim); return 0;
		default: usage(stderr); free(sim); return 2;
		}
	}
	if (credentials == NULL || optind != argc || port > UINT16_MAX || delay_ms > 10000) {
		usage(stderr);
		free(sim);
		return 2;
	}
	rc = il3_credentials_load(credentials, &creds);
	if (rc < 0) {
		fprintf(stderr, "tickwire-ilink-sim: credentials %s: %s\n", credentials,
			rc == -EPERM ? "must be owned by us and not readable by others" :
			strerror(-rc));
		free(sim);
		return 1;
	}
	sim->gw = tw_gw_create(&creds, &(struct tw_gw_ops){ .now_ns = mono_ns,
		.epoch_ns = epoch_ns, .trace = trace_line, .on_app = on_app, .ctx = sim },
		(uint16_t)port, &bound);
	il3_credentials_wipe(&creds);
	if (sim->gw == NULL) {
		fprintf(stderr, "tickwire-ilink-sim: listen on 127.0.0.1:%u: %s\n",
			(unsigned int)port, strerror(errno));
		free(sim);
		return 1;
	}
	sim->gw->drop_after = drop_after;
	sim->gw->delay_ms = delay_ms;
	for (unsigned int i = 0; i < n_skip; i++)
		tw_gw_skip_at(sim->gw, skip_at[i]);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	trace("%u", (unsigned int)bound);
	rc = run(sim);
	tw_gw_close_client(sim->gw, "exit");
	violations = tw_gw_audit_report(sim->gw);
	if (!sim->strict)
		violations = 0;
	tw_gw_destroy(sim->gw);
	free(sim);
	if (rc < 0) {
		fprintf(stderr, "tickwire-ilink-sim: poll: %s\n", strerror(-rc));
		return 1;
	}
	return violations > 0 ? EXIT_VIOLATIONS : 0;
}
