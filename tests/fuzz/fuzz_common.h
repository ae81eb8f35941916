/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shared by every fuzz harness of tests/fuzz: the broken-promise check, the
 * sink that keeps reads from being optimised away, and (fuzz_common.c) a
 * scratch directory of the process for harnesses whose library reads files.
 */
#ifndef FUZZ_COMMON_H
#define FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/** Values read are folded in here so that no read is optimised away. */
extern volatile uint64_t fuzz_sink;

/** Abort (a libFuzzer crash, saved as an artifact) when @p cond is false. */
#define FUZZ_CHECK(cond)                                                               \
	do {                                                                           \
		if (!(cond)) {                                                         \
			fprintf(stderr, "%s:%d: broken promise: %s\n", __FILE__,       \
					__LINE__, #cond);                              \
			abort();                                                       \
		}                                                                      \
	} while (0)

/**
 * The process's scratch directory, created on the first call (on tmpfs:
 * /dev/shm/fuzz-scratch-PID-START-XXXXXX, else under $TMPDIR or /tmp) and
 * removed with its files at exit; those a crash left behind are removed by
 * the next harness process (of the same PID namespace).  Aborts when it
 * cannot be created.
 */
const char *fuzz_tmpdir(void);

/** Write @p size bytes to @p path with @p mode (replacing it); aborts on failure. */
void fuzz_write_file(const char *path, const void *data, size_t size, unsigned int mode);

#endif /* FUZZ_COMMON_H */
