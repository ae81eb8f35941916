/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 */
#ifndef TICKWIRE_TW_PREFLIGHT_H
#define TICKWIRE_TW_PREFLIGHT_H

/**
 * @file
 * Preflight: the known reasons DPDK's EAL cannot start (no hugepages,
 * hugetlbfs not mounted, a PCI port bound to its kernel driver, not enough
 * privilege) and the command that fixes each. No DPDK here: the checks read
 * sysfs and /proc (under a root that tests may point elsewhere).
 */

#include <stdio.h>

#include "tw_config.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Print every problem found and its fix to @p out, one "preflight: ..."
 * line each plus an indented "fix: COMMAND" line.
 * @param root  "" for the real system; else a directory holding sys/ and proc/
 * @param euid  effective uid to judge privilege with
 * @return the number of problems found.
 */
int tw_preflight(const struct tw_cfg *cfg, const char *root, unsigned int euid, FILE *out);

#ifdef __cplusplus
}
#endif

#endif /* TICKWIRE_TW_PREFLIGHT_H */
