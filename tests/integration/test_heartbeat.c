/* SPDX-License-Identifier: BSD-3-Clause
 * tw_heartbeat: a hot lcore that stops beating is stalled after stall_ns,
 * logged once per episode, alive again at its next beat; the watchdog is
 * pinged only while no lcore is stalled (the appliance's main loop: check,
 * then tw_sd_watchdog()), checked with a real beating thread and a datagram
 * socket standing in for systemd.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "tw_check.h"
#include "tw_heartbeat.h"
#include "tw_sdnotify.h"

#define MS UINT64_C(1000000)

static void
logic(void)
{
	struct tw_heartbeat hb;
	uint32_t mask;
	int a, b;

	tw_hb_init(&hb, 100 * MS);
	a = tw_hb_add(&hb, "a", 0);
	b = tw_hb_add(&hb, "b", 0);
	CHECK(a == 0 && b == 1);

	/* both beat: alive however long it has been */
	tw_hb_beat(&hb, a);
	tw_hb_beat(&hb, b);
	CHECK(tw_hb_check(&hb, 500 * MS, &mask) == 0 && mask == 0);

	/* b stops: alive until stall_ns has passed since its last beat */
	tw_hb_beat(&hb, a);
	CHECK(tw_hb_check(&hb, 599 * MS, &mask) == 0 && mask == 0);
	tw_hb_beat(&hb, a);
	CHECK(tw_hb_check(&hb, 600 * MS, &mask) == 1 && mask == 2u);
	CHECK(hb.stalls == 1);
	/* still stalled, reported once */
	tw_hb_beat(&hb, a);
	CHECK(tw_hb_check(&hb, 700 * MS, &mask) == 1 && mask == 0);
	CHECK(hb.stalls == 1);
	/* b beats again: alive; a second silence is a second episode */
	tw_hb_beat(&hb, a);
	tw_hb_beat(&hb, b);
	CHECK(tw_hb_check(&hb, 710 * MS, &mask) == 0 && mask == 0);
	CHECK(tw_hb_check(&hb, 900 * MS, &mask) == 2 && mask == 3u);
	CHECK(hb.stalls == 3);

	/* a lcore registered late starts its clock at registration */
	CHECK(tw_hb_add(&hb, "c", 900 * MS) == 2);
	CHECK(tw_hb_check(&hb, 950 * MS, &mask) == 2 && mask == 0);

	/* bounded */
	while (hb.n < TW_HB_MAX)
		CHECK(tw_hb_add(&hb, "x", 0) >= 0);
	CHECK(tw_hb_add(&hb, "full", 0) == -1);
}

/* -- with a thread and the watchdog --------------------------------------------- */

static struct tw_heartbeat g_hb;
static atomic_bool g_beat = true, g_quit;
static int sock = -1;

static void *
lcore(void *arg)
{
	(void)arg;
	while (!atomic_load(&g_quit)) {
		if (atomic_load(&g_beat))
			tw_hb_beat(&g_hb, 0);
		usleep(100);
	}
	return NULL;
}

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The appliance's main loop for @p ms: @return the watchdog pings sent. */
static int
main_loop(int ms, uint32_t *stalled_mask)
{
	const uint64_t end = now_ns() + (uint64_t)ms * MS;
	char buf[64];
	int pings = 0;

	*stalled_mask = 0;
	while (now_ns() < end) {
		uint32_t mask;

		usleep(2000);
		if (tw_hb_check(&g_hb, now_ns(), &mask) == 0)
			tw_sd_watchdog();
		*stalled_mask |= mask;
		while (recv(sock, buf, sizeof(buf), MSG_DONTWAIT) > 0)
			pings += strncmp(buf, "WATCHDOG=1", 10) == 0;
	}
	return pings;
}

static void
with_watchdog(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char env[sizeof(sa.sun_path) + 1], pid[32], buf[64];
	pthread_t t;
	uint32_t mask;
	int pings;

	snprintf(sa.sun_path + 1, sizeof(sa.sun_path) - 1, "tw-hb-test-%d", (int)getpid());
	sock = socket(AF_UNIX, SOCK_DGRAM, 0);
	CHECK(sock >= 0);
	CHECK(bind(sock, (struct sockaddr *)&sa,
		   (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
			       strlen(sa.sun_path + 1))) == 0);
	snprintf(env, sizeof(env), "@%s", sa.sun_path + 1);
	setenv("NOTIFY_SOCKET", env, 1);
	setenv("WATCHDOG_USEC", "80000", 1);   /* a ping every 20 ms at most */
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	setenv("WATCHDOG_PID", pid, 1);
	tw_sd_ready();
	while (recv(sock, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		;

	tw_hb_init(&g_hb, 200 * MS);
	CHECK(tw_hb_add(&g_hb, "decode", now_ns()) == 0);
	CHECK(pthread_create(&t, NULL, lcore, NULL) == 0);

	/* beating: pinged (every 20 ms over 500 ms; a loaded machine sends fewer) */
	pings = main_loop(500, &mask);
	CHECK(pings >= 5 && mask == 0);

	/* the lcore stops: pings end once it is stalled (200 ms), nothing after */
	atomic_store(&g_beat, false);
	main_loop(400, &mask);
	CHECK(mask == 1u);
	pings = main_loop(500, &mask);
	CHECK(pings == 0);
	CHECK(g_hb.stalls == 1);

	/* it beats again: pings again */
	atomic_store(&g_beat, true);
	pings = main_loop(500, &mask);
	CHECK(pings >= 5 && mask == 0);

	atomic_store(&g_quit, true);
	pthread_join(t, NULL);
	close(sock);
	if (failures != 0)
		fprintf(stderr, "heartbeat with watchdog: %d failure(s)\n", failures);
}

int
main(void)
{
	logic();
	with_watchdog();
	return failures != 0;
}
