/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * The simulated exchange behind the iLink 3 gateway (simx_exchange.h).
 * Requests are remembered in a ring of REQUESTS by their number (ref), so
 * a report finds the ClOrdID and OrderRequestID it answers; the ring is
 * far larger than the orders one session keeps open.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "simx_exchange.h"
#include "tw_gateway.h"
#include "tw_msg.h"

#define REQUESTS 65536           /* requests remembered (power of two) */
#define FRAMES 4096              /* order frames waiting for their request */
#define KEEP_ALIVE_MS 60000

/* Fixed: the gateway is in this process, on loopback; nothing to protect. */
static const char credentials_text[] =
	"access_key_id=SIMX\n"
	"secret_key=dGlja3dpcmUtc2ltdWxhdGVkLWV4Y2hhbmdlLWtleSE\n";

struct request {
	uint64_t ref;                /* 0: free */
	uint32_t client_order_id;
	struct tw_gw_app app;
};

struct frame_seen {
	uint32_t client_order_id;
	int32_t security_id;
	uint8_t side;
	uint32_t qty;
	int64_t price;
};

struct simx_exchange {
	struct simx_exchange_config cfg;
	struct tw_gw *gw;
	struct simx *core;
	uint64_t now_ns;
	uint16_t port;
	uint64_t next_ref;
	uint64_t mismatches;
	char dir[PATH_MAX];
	char credentials_path[PATH_MAX + 32];
	char journal_path[PATH_MAX + 32];
	struct frame_seen frames[FRAMES];
	uint32_t f_head, f_n;
	struct simx_exchange_fill *fills;
	uint32_t n_fills;
	struct simx_exchange_latency latency;
	FILE *log;
	struct request requests[REQUESTS];
};

static uint64_t
clock_now(void *ctx)
{
	return ((const struct simx_exchange *)ctx)->now_ns;
}

static unsigned int
bucket(uint64_t ns)
{
	return ns < 2 ? 0u : 63u - (unsigned int)__builtin_clzll(ns);
}

static struct request *
request_new(struct simx_exchange *ex, const struct tw_gw_app *in)
{
	struct request *r = &ex->requests[++ex->next_ref % REQUESTS];

	*r = (struct request){ .ref = ex->next_ref, .app = *in };
	return r;
}

static struct request *
request_of(struct simx_exchange *ex, uint64_t ref)
{
	struct request *r = &ex->requests[ref % REQUESTS];

	return r->ref == ref ? r : NULL;
}

/* The newest NewOrderSingle with this ClOrdID. */
static uint64_t
order_ref_of(const struct simx_exchange *ex, const char *clordid)
{
	for (uint64_t ref = ex->next_ref; ref > 0 && ex->next_ref - ref < REQUESTS; ref--) {
		const struct request *r = &ex->requests[ref % REQUESTS];

		if (r->ref == ref && r->app.template_id == IL3_TEMPLATE_NEW_ORDER_SINGLE514 &&
		    strcmp(r->app.clordid, clordid) == 0)
			return ref;
	}
	return 0;
}

static void
on_app(void *ctx, struct tw_gw *gw, const struct tw_gw_app *in)
{
	struct simx_exchange *ex = ctx;
	struct request *r;

	switch (in->template_id) {
	case IL3_TEMPLATE_NEW_ORDER_SINGLE514:
		r = request_new(ex, in);
		if (ex->f_n != 0) {
			const struct frame_seen *f = &ex->frames[ex->f_head];

			if (f->security_id != in->security_id || f->side != in->side ||
			    f->qty != in->quantity || f->price != in->price)
				ex->mismatches++;
			r->client_order_id = f->client_order_id;
			ex->f_head = (ex->f_head + 1) % FRAMES;
			ex->f_n--;
		}
		simx_submit_new(ex->core, r->ref, in->sending_time_ns, in->security_id, in->side,
				in->quantity, in->price);
		break;
	case IL3_TEMPLATE_ORDER_CANCEL_REQUEST516: {
		const uint64_t target = order_ref_of(ex, in->clordid);

		if (target == 0 && in->order_id == 0)
			ex->mismatches++;
		r = request_new(ex, in);
		simx_submit_cancel(ex->core, r->ref, in->sending_time_ns, target, in->order_id);
		break;
	}
	default:
		tw_gw_report_cancel_reject(gw, in, true, "replace not supported");
		break;
	}
}

static void
on_sent(void *ctx, const uint8_t *frame, size_t length)
{
	struct simx_exchange *ex = ctx;

	if (ex->log != NULL)
		fwrite(frame, 1, length, ex->log);
}

static int
book_of(void *ctx, int32_t security_id, struct simx_book *out)
{
	const struct simx_exchange *ex = ctx;

	return ex->cfg.book(ex->cfg.book_ctx, security_id, out);
}

static void
on_report(void *ctx, const struct simx_report *rep)
{
	struct simx_exchange *ex = ctx;
	struct request *r = request_of(ex, rep->ref);

	if (r == NULL) {
		ex->mismatches++;
		return;
	}
	switch (rep->kind) {
	case SIMX_NEW:
		tw_gw_report_new(ex->gw, &r->app, rep->order_id);
		ex->latency.order_to_ack[bucket(rep->due_ns - rep->decided_ns)]++;
		break;
	case SIMX_FILL:
		tw_gw_report_fill(ex->gw, &r->app, rep->order_id, rep->last_price, rep->last_qty,
				  rep->cum_qty, rep->leaves_qty);
		ex->latency.order_to_fill[bucket(rep->due_ns - rep->decided_ns)]++;
		if (ex->n_fills < SIMX_EXCHANGE_MAX_FILLS)
			ex->fills[ex->n_fills++] = (struct simx_exchange_fill){
				.client_order_id = r->client_order_id,
				.security_id = rep->security_id, .side = rep->side,
				.qty = rep->last_qty, .leaves_qty = rep->leaves_qty,
				.price = rep->last_price, .time_ns = rep->event_ns,
			};
		break;
	case SIMX_REJECT:
		tw_gw_report_reject(ex->gw, &r->app, rep->text);
		break;
	case SIMX_CANCELED:
		tw_gw_report_cancel(ex->gw, &r->app, rep->order_id, rep->price, rep->order_qty,
				    rep->cum_qty);
		break;
	default:
		tw_gw_report_cancel_reject(ex->gw, &r->app, false, rep->text);
		break;
	}
}

static int
write_credentials(struct simx_exchange *ex)
{
	int fd = open(ex->credentials_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, credentials_text, sizeof(credentials_text) - 1);
	if (close(fd) != 0 || n != (ssize_t)sizeof(credentials_text) - 1)
		return -EIO;
	return 0;
}

static void
remove_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		char path[PATH_MAX + 256];

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		unlink(path);
	}
	closedir(d);
	rmdir(dir);
}

struct simx_exchange *
simx_exchange_create(const struct simx_exchange_config *cfg)
{
	const char *tmp = getenv("TMPDIR");
	struct il3_credentials creds;
	struct simx_exchange *ex;
	int rc;

	if (cfg == NULL || cfg->book == NULL) {
		errno = EINVAL;
		return NULL;
	}
	ex = calloc(1, sizeof(*ex));
	if (ex == NULL)
		return NULL;
	ex->cfg = *cfg;
	ex->fills = calloc(SIMX_EXCHANGE_MAX_FILLS, sizeof(*ex->fills));
	snprintf(ex->dir, sizeof(ex->dir), "%s/tickwire-simx-XXXXXX",
		 tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");
	if (ex->fills == NULL || mkdtemp(ex->dir) == NULL) {
		rc = -errno;
		ex->dir[0] = '\0';
		goto fail;
	}
	snprintf(ex->credentials_path, sizeof(ex->credentials_path), "%s/credentials", ex->dir);
	snprintf(ex->journal_path, sizeof(ex->journal_path), "%s/session.journal", ex->dir);
	if ((rc = write_credentials(ex)) != 0 ||
	    (rc = il3_credentials_load(ex->credentials_path, &creds)) != 0)
		goto fail;
	ex->core = simx_create(&(struct simx_config){
		.latency_ns = cfg->latency_ns, .return_ns = cfg->return_ns,
		.book = book_of, .report = on_report, .ctx = ex });
	ex->gw = tw_gw_create(&creds, &(struct tw_gw_ops){
		.now_ns = clock_now, .epoch_ns = clock_now, .on_app = on_app, .on_sent = on_sent,
		.ctx = ex },
		0, &ex->port);
	rc = -errno;
	il3_credentials_wipe(&creds);
	if (ex->core == NULL || ex->gw == NULL)
		goto fail;
	return ex;
fail:
	simx_exchange_destroy(ex);
	errno = rc < 0 ? -rc : EIO;
	return NULL;
}

void
simx_exchange_destroy(struct simx_exchange *ex)
{
	if (ex == NULL)
		return;
	tw_gw_destroy(ex->gw);
	simx_destroy(ex->core);
	if (ex->dir[0] != '\0')
		remove_dir(ex->dir);
	free(ex->fills);
	free(ex);
}

void
simx_exchange_session(const struct simx_exchange *ex, struct il3_session_config *out)
{
	*out = (struct il3_session_config){
		.journal_path = ex->journal_path, .credentials_path = ex->credentials_path,
		.session_id = "SIM", .firm_id = "SIMX1", .sender_id = "TICKWIRE",
		.location = "US,IL", .system_name = "tickwire", .system_version = "1.0",
		.system_vendor = "tickwire", .gateway_ip = INADDR_LOOPBACK,
		.gateway_port = ex->port, .keep_alive_ms = KEEP_ALIVE_MS,
	};
}

void
simx_exchange_set_now(struct simx_exchange *ex, uint64_t now_ns)
{
	if (now_ns > ex->now_ns)
		ex->now_ns = now_ns;
}

void
simx_exchange_pump(struct simx_exchange *ex, int wait_ms)
{
	struct pollfd p = tw_gw_pollfd(ex->gw);
	int rc = poll(&p, 1, wait_ms > 0 ? wait_ms : 0);

	tw_gw_step(ex->gw, rc > 0 ? p.revents : 0);
	/* an accepted client may already have sent its Negotiate */
	if (rc > 0 && p.fd == ex->gw->listen_fd && ex->gw->fd >= 0) {
		p = tw_gw_pollfd(ex->gw);
		if (poll(&p, 1, 0) > 0)
			tw_gw_step(ex->gw, p.revents);
	}
}

bool
simx_exchange_in_sync(const struct simx_exchange *ex, uint64_t client_sent,
		      uint64_t client_received)
{
	return ex->gw->app_received == client_sent && ex->gw->app_sent == client_received &&
	       ex->gw->out_length == ex->gw->out_sent;
}

uint64_t
simx_exchange_next_ns(const struct simx_exchange *ex)
{
	return simx_next_ns(ex->core);
}

int
simx_exchange_step(struct simx_exchange *ex, uint64_t until_ns)
{
	const uint64_t next = simx_next_ns(ex->core);

	if (next >= until_ns)
		return 0;
	simx_exchange_set_now(ex, next);
	simx_run_until(ex->core, next + 1, 1);
	tw_gw_flush(ex->gw);
	return 1;
}

void
simx_exchange_market(struct simx_exchange *ex, uint64_t now_ns)
{
	simx_market(ex->core, now_ns);
}

void
simx_exchange_order_frame(struct simx_exchange *ex, const uint8_t *frame, uint32_t length)
{
	const uint8_t *p = frame + 14 + 20 + 8;
	struct frame_seen *f;

	if (length < 14 + 20 + 8 + TW_ORDER_WIRE_SIZE ||
	    memcmp(p, TW_ORDER_WIRE_MAGIC, 4) != 0)
		return;
	if (ex->f_n == FRAMES) {
		ex->mismatches++;
		return;
	}
	f = &ex->frames[(ex->f_head + ex->f_n++) % FRAMES];
	f->client_order_id = (uint32_t)p[4] | (uint32_t)p[5] << 8 | (uint32_t)p[6] << 16 |
			     (uint32_t)p[7] << 24;
	f->security_id = (int32_t)((uint32_t)p[8] | (uint32_t)p[9] << 8 |
				   (uint32_t)p[10] << 16 | (uint32_t)p[11] << 24);
	f->side = p[12];
	f->qty = (uint32_t)p[16] | (uint32_t)p[17] << 8 | (uint32_t)p[18] << 16 |
		 (uint32_t)p[19] << 24;
	f->price = 0;
	for (int i = 7; i >= 0; i--)
		f->price = (int64_t)((uint64_t)f->price << 8 | p[24 + i]);
}

void
simx_exchange_set_log(struct simx_exchange *ex, FILE *log)
{
	ex->log = log;
}

struct simx *
simx_exchange_core(struct simx_exchange *ex)
{
	return ex->core;
}

uint32_t
simx_exchange_fills(const struct simx_exchange *ex, const struct simx_exchange_fill **fills)
{
	*fills = ex->fills;
	return ex->n_fills;
}

const struct simx_exchange_latency *
simx_exchange_latency(const struct simx_exchange *ex)
{
	return &ex->latency;
}

uint64_t
simx_exchange_mismatches(const struct simx_exchange *ex)
{
	return ex->mismatches;
}
