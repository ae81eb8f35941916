/* SPDX-License-Identifier: BSD-3-Clause
 * Shared helpers for tickwire's cmocka tests.
 */
#ifndef TW_TEST_H
#define TW_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include <cmocka.h>

/* Seconds a stress test may run: TW_STRESS_SECONDS, default 10. */
static inline double tw_stress_seconds(void)
{
	const char *s = getenv("TW_STRESS_SECONDS");
	double v = s != NULL ? atof(s) : 10.0;
	return v > 0 ? v : 10.0;
}

static inline double tw_now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Run the group; argv[1], when given, selects tests by cmocka filter pattern. */
#define TW_RUN_TESTS(argc, argv, tests)                                        \
	do {                                                                       \
		if ((argc) > 1)                                                        \
			cmocka_set_test_filter((argv)[1]);                                 \
		return cmocka_run_group_tests(tests, NULL, NULL);                      \
	} while (0)

#endif
