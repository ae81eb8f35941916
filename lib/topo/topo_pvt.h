/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * Internals of lib/topo shared between its .c files. Not installed.
 */
#ifndef TICKWIRE_TOPO_PVT_H
#define TICKWIRE_TOPO_PVT_H

#include <hwloc.h>

#include "tw_config.h"
#include "tw_topo.h"

struct tw_topo {
	hwloc_topology_t topology;
	enum tw_topo_source source;
	char description[256];
	char sysfs[TW_CFG_PATH_MAX];
	struct tw_cfg_cpuset cpus;      /* every PU, by os index */
	unsigned int numa_nodes;        /* at least 1 */
};

/* Every cpu of the physical cores @cpus touch (hyperthread siblings included). */
void tw_topo__core_cpus(const struct tw_topo *topo, const struct tw_cfg_cpuset *cpus,
			struct tw_cfg_cpuset *out);

/* The cpus of NUMA node @node: 0, -EINVAL, -ENOENT. */
int tw_topo__node_cpus(const struct tw_topo *topo, int node, struct tw_cfg_cpuset *out);

/* Read at most @size - 1 bytes of SYSFS/@rel into @buf (NUL-terminated): 0 or -errno. */
int tw_topo__read_sysfs(const struct tw_topo *topo, const char *rel, char *buf, size_t size);

#endif /* TICKWIRE_TOPO_PVT_H */
