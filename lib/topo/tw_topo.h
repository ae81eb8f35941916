/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 */
#ifndef TICKWIRE_TW_TOPO_H
#define TICKWIRE_TW_TOPO_H

/**
 * @file
 * tickwire start-up validation of a core map against the machine (hwloc),
 * and the kernel tuning the core map needs. DESIGN.md section 5.
 *
 * tw_topo_check() judges a loaded profile (lib/config) against a topology:
 *  - every lcore's cpus exist (error);
 *  - hot lcores (captures, decode, order-out) each own a physical core, not
 *    shared with another role nor with a hyperthread sibling of one, and are
 *    pinned to one cpu (error when checks.require_dedicated_cores, else
 *    warning);
 *  - hot lcores that touch a PCI port's packets run on the port's NUMA node
 *    (error when checks.require_numa_local, else warning; a vdev has no node:
 *    info; a PCI device found nowhere: error);
 *  - hot lcores are isolated (in /sys/devices/system/cpu/isolated and
 *    nohz_full) (error when checks.require_isolation, else warning).
 * Every finding names the tickwire.cfg (or ports.ini) line at fault and the
 * fix.
 *
 * tw_topo_tuning() derives the kernel command line (isolcpus, nohz_full,
 * rcu_nocbs, irqaffinity, hugepages, C-state limits) and the variables of
 * tuned's cpu-partitioning profile that the core map needs; image/ and
 * ansible/ apply them (tickwire-check --format shell).
 *
 * Threads: any thread; a struct tw_topo is read-only after tw_topo_open()
 * and may be shared. The library never prints and never exits.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tw_config.h"

#ifdef __cplusplus
extern "C" {
#endif

struct tw_topo;

/** Where the topology comes from. */
enum tw_topo_source {
	TW_TOPO_SOURCE_SYSTEM = 0,   /**< this machine (hwloc's discovery) */
	TW_TOPO_SOURCE_XML,          /**< an hwloc XML file (lstopo --of xml) */
	TW_TOPO_SOURCE_SYNTHETIC,    /**< an hwloc synthetic description, "pack:2 core:4 pu:2" */
};

/** Arguments of tw_topo_open(). */
struct tw_topo_opts {
	enum tw_topo_source source;
	const char *arg;             /**< XML path or synthetic description; NULL for SYSTEM */
	/** root of sysfs for isolation and PCI NUMA; NULL = "/sys" */
	const char *sysfs_root;
};

/**
 * Load a topology.
 *
 * @return the topology (free with tw_topo_close()), or NULL with errno:
 *         EINVAL (bad @p opts, unparsable synthetic description or XML),
 *         ENOENT (XML file missing), ENAMETOOLONG, ENOMEM, or the errno hwloc
 *         reported.
 */
struct tw_topo *tw_topo_open(const struct tw_topo_opts *opts);

/** Free a topology; NULL is ignored. */
void tw_topo_close(struct tw_topo *topo);

/** "this machine", "synthetic topology \"...\"" or "topology file ...": for messages. */
const char *tw_topo_describe(const struct tw_topo *topo);

/** The cpus (hwloc PUs, by Linux cpu id) of @p topo into @p cpus. */
void tw_topo_cpus(const struct tw_topo *topo, struct tw_cfg_cpuset *cpus);

/** Number of NUMA nodes of @p topo (at least 1). */
unsigned int tw_topo_numa_nodes(const struct tw_topo *topo);

/**
 * NUMA node of a PCI device: hwloc's I/O objects first, then
 * SYSFS/bus/pci/devices/ADDR/numa_node.
 *
 * @return the node (>= 0), -1 when the device exists but its node is unknown
 *         (or the machine has one node), -ENODEV when the device is found
 *         nowhere, -EINVAL.
 */
int tw_topo_pci_numa_node(const struct tw_topo *topo, const struct tw_cfg_pci_addr *addr);

/**
 * Check @p cfg's core map against @p topo; findings are appended to
 * @p findings (see the file comment for what is an error).
 *
 * @return 0 (look at @p findings->errors), -EINVAL (NULL argument), -ENOMEM.
 */
int tw_topo_check(const struct tw_topo *topo, const struct tw_cfg *cfg,
		  struct tw_cfg_findings *findings);

/** The kernel and tuned settings a core map needs. */
struct tw_topo_tuning {
	/** isolcpus, nohz_full, rcu_nocbs; tuned isolated_cores and no_balance_cores */
	struct tw_cfg_cpuset isolated;
	struct tw_cfg_cpuset housekeeping;  /**< irqaffinity: every other cpu */
	/** cpus any used lcore may run on: the appliance's CPU affinity must include them */
	struct tw_cfg_cpuset lcore_cpus;
	uint64_t memory_bytes;              /**< tw_cfg_memory_bytes() */
	uint64_t hugepage_size;             /**< bytes */
	uint32_t hugepages;                 /**< pages reserved at boot, all nodes together */
	uint32_t numa_nodes;                /**< boot-time pages are spread over this many nodes */
	unsigned int max_cstate;            /**< processor.max_cstate (intel_idle.max_cstate=0) */
	char cmdline[1024];                 /**< the kernel command line fragment */
};

/**
 * Derive the tuning @p cfg needs on @p topo: isolate every physical core a
 * hot lcore runs on (hyperthread siblings included) except cpus the main
 * lcore also runs on; leave the rest to the kernel (irqaffinity); reserve
 * hugepages of eal.hugepage_size for tw_cfg_memory_bytes() on each NUMA node
 * (boot-time pages are spread over the nodes) unless eal.hugepages fixes the
 * count; limit C-states to C1. Notes about the derivation are appended to
 * @p findings as info (may be NULL).
 *
 * @return 0, -EINVAL (NULL argument), -E2BIG (command line too long).
 */
int tw_topo_tuning(const struct tw_topo *topo, const struct tw_cfg *cfg,
		   struct tw_topo_tuning *tuning, struct tw_cfg_findings *findings);

/** Output formats of tw_topo_tuning_format(). */
enum tw_topo_format {
	TW_TOPO_FORMAT_TEXT = 0,     /**< for people */
	TW_TOPO_FORMAT_SHELL,        /**< KEY='VALUE' lines, for sh, ansible and image/ */
};

/**
 * Format @p tuning. TEXT: the command line and the tuned variables, indented
 * under headings. SHELL: one KEY='VALUE' line each of TW_KERNEL_CMDLINE,
 * TW_ISOLATED_CPUS, TW_HOUSEKEEPING_CPUS, TW_LCORE_CPUS, TW_HUGEPAGE_SIZE
 * (2M or 1G), TW_HUGEPAGES, TW_MAX_CSTATE, TUNED_ISOLATED_CORES,
 * TUNED_NO_BALANCE_CORES (values never contain a quote).
 *
 * @return the length of the text (>= @p size means truncated), or -EINVAL.
 */
int tw_topo_tuning_format(const struct tw_topo_tuning *tuning, enum tw_topo_format format,
			  char *buf, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* TICKWIRE_TW_TOPO_H */
