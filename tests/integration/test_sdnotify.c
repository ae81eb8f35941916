/* SPDX-License-Identifier: BSD-3-Clause
 * tw_sdnotify against a datagram socket standing in for systemd: READY=1,
 * WATCHDOG=1 at most every WATCHDOG_USEC/4, STOPPING=1; nothing without
 * NOTIFY_SOCKET; a foreign WATCHDOG_PID turns the watchdog off.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "tw_check.h"
#include "tw_sdnotify.h"

static int sock = -1;

/* Next datagram within 100 ms, or "" when none came. */
static const char *
next_msg(void)
{
	static char buf[256];
	struct timeval tv = { .tv_sec = 0, .tv_usec = 100000 };
	ssize_t n;

	setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	n = recv(sock, buf, sizeof(buf) - 1, 0);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

static void
sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

int
main(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char pid[32];

	/* no NOTIFY_SOCKET: a no-op that succeeds */
	unsetenv("NOTIFY_SOCKET");
	CHECK(tw_sd_notify("READY=1") == 0);

	/* abstract socket, as systemd passes it */
	snprintf(sa.sun_path + 1, sizeof(sa.sun_path) - 1, "tw-sdnotify-test-%d", (int)getpid());
	sock = socket(AF_UNIX, SOCK_DGRAM, 0);
	CHECK(sock >= 0);
	CHECK(bind(sock, (struct sockaddr *)&sa,
		(socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(sa.sun_path + 1))) == 0);
	{
		char env[sizeof(sa.sun_path) + 1];

		snprintf(env, sizeof(env), "@%s", sa.sun_path + 1);
		setenv("NOTIFY_SOCKET", env, 1);
	}
	setenv("WATCHDOG_USEC", "200000", 1);  /* pings every 50 ms at most */
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	setenv("WATCHDOG_PID", pid, 1);

	tw_sd_ready();
	CHECK(strncmp(next_msg(), "READY=1", 7) == 0);
	CHECK(strcmp(next_msg(), "WATCHDOG=1") == 0);  /* the first ping at once */
	tw_sd_watchdog();                               /* too early: nothing */
	CHECK(strcmp(next_msg(), "") == 0);
	sleep_ms(60);
	tw_sd_watchdog();
	CHECK(strcmp(next_msg(), "WATCHDOG=1") == 0);
	tw_sd_stopping();
	CHECK(strcmp(next_msg(), "STOPPING=1") == 0);

	/* the watchdog is meant for another process: no pings */
	setenv("WATCHDOG_PID", "1", 1);
	tw_sd_ready();
	CHECK(strncmp(next_msg(), "READY=1", 7) == 0);
	sleep_ms(60);
	tw_sd_watchdog();
	CHECK(strcmp(next_msg(), "") == 0);

	/* a relative path is refused */
	setenv("NOTIFY_SOCKET", "relative/path", 1);
	CHECK(tw_sd_notify("READY=1") == -EINVAL);

	close(sock);
	printf("%s: %d failure(s)\n", failures ? "FAIL" : "ok", failures);
	return failures != 0;
}
