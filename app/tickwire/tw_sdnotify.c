/* SPDX-License-Identifier: BSD-3-Clause */
/* tw_sdnotify: see tw_sdnotify.h. */
#include "tw_sdnotify.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

int
tw_sd_notify(const char *state)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa;
	size_t len;
	socklen_t salen;
	ssize_t n;
	int fd, err = 0;

	if (path == NULL || path[0] == '\0')
		return 0;
	len = strlen(path);
	if ((path[0] != '/' && path[0] != '@') || len >= sizeof(sa.sun_path))
		return -EINVAL;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, path, len);
	if (path[0] == '@')
		sa.sun_path[0] = '\0';  /* abstract namespace: no terminating NUL */
	salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len + (path[0] == '/'));
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	n = sendto(fd, state, strlen(state), MSG_NOSIGNAL, (const struct sockaddr *)&sa, salen);
	if (n < 0)
		err = -errno;
	close(fd);
	return err;
}

static uint64_t
mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static uint64_t watchdog_period_us;  /* 0: no watchdog */
static uint64_t watchdog_next_us;

void
tw_sd_ready(void)
{
	const char *usec = getenv("WATCHDOG_USEC");
	const char *pid = getenv("WATCHDOG_PID");

	watchdog_period_us = 0;
	/* WATCHDOG_PID, when set, names the process the watchdog is meant for. */
	if (usec != NULL && (pid == NULL || strtol(pid, NULL, 10) == (long)getpid())) {
		unsigned long long v = strtoull(usec, NULL, 10);

		watchdog_period_us = v / 4 > 0 ? v / 4 : 1;
	}
	watchdog_next_us = mono_us();
	tw_sd_notify("READY=1\nSTATUS=lcores launched");
	tw_sd_watchdog();
}

void
tw_sd_watchdog(void)
{
	uint64_t now;

	if (watchdog_period_us == 0)
		return;
	now = mono_us();
	if (now < watchdog_next_us)
		return;
	watchdog_next_us = now + watchdog_period_us;
	tw_sd_notify("WATCHDOG=1");
}

void
tw_sd_stopping(void)
{
	tw_sd_notify("STOPPING=1");
}
