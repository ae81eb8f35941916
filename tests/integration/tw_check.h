/* SPDX-License-Identifier: BSD-3-Clause
 * CHECK() for the plain (non-cmocka) appliance unit programs: a failed
 * condition is printed with its place and counted in `failures`; the
 * program returns failures != 0 at the end.
 */
#ifndef TW_CHECK_H
#define TW_CHECK_H

#include <stdio.h>

static int failures;

#define CHECK(cond)                                                              \
	do {                                                                         \
		if (!(cond)) {                                                           \
			fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
			failures++;                                                          \
		}                                                                        \
	} while (0)

#endif
