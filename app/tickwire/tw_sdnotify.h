/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tw_sdnotify: the systemd readiness and watchdog protocol without
 * libsystemd. Each call sends one datagram to $NOTIFY_SOCKET (a path, or an
 * abstract socket when it starts with '@'); without $NOTIFY_SOCKET every call
 * does nothing, so the appliance runs the same outside systemd.
 *
 *   tw_sd_ready()     READY=1, once the lcores are launched
 *   tw_sd_watchdog()  WATCHDOG=1, from the main lcore's loop; sends at most
 *                     every $WATCHDOG_USEC / 4 (nothing when it is unset)
 *   tw_sd_stopping()  STOPPING=1, when the loop ends
 *
 * Not thread-safe: call from the main lcore only.
 */
#ifndef TW_SDNOTIFY_H
#define TW_SDNOTIFY_H

/* Sends STATE ("READY=1", ...); 0 sent or no socket, -errno on failure. */
int tw_sd_notify(const char *state);

void tw_sd_ready(void);
void tw_sd_watchdog(void);
void tw_sd_stopping(void);

#endif
