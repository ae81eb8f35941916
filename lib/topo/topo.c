/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * Loading a topology with hwloc and judging a core map against it. Every
 * check is a handful of set operations per role (five roles), so nothing
 * here needs to be fast; sysfs reads are bounded to one page each.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hwloc.h>

#include "topo_pvt.h"

static void from_hwloc(struct tw_cfg_cpuset *set, hwloc_const_bitmap_t bitmap)
{
	int i;

	tw_cfg_cpuset_zero(set);
	if (bitmap == NULL)
		return;
	for (i = hwloc_bitmap_first(bitmap); i >= 0; i = hwloc_bitmap_next(bitmap, i))
		tw_cfg_cpuset_set(set, (unsigned int)i);
}

struct tw_topo *tw_topo_open(const struct tw_topo_opts *opts)
{
	const char *root;
	struct tw_topo *topo;
	hwloc_obj_t pu = NULL;
	int rc = 0, err;

	if (opts == NULL || (opts->source != TW_TOPO_SOURCE_SYSTEM && opts->arg == NULL) ||
	    (unsigned int)opts->source > TW_TOPO_SOURCE_SYNTHETIC) {
		errno = EINVAL;
		return NULL;
	}
	root = opts->sysfs_root != NULL ? opts->sysfs_root : "/sys";
	topo = calloc(1, sizeof(*topo));
	if (topo == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	if (strlen(root) >= sizeof(topo->sysfs)) {
		free(topo);
		errno = ENAMETOOLONG;
		return NULL;
	}
	memcpy(topo->sysfs, root, strlen(root) + 1);
	topo->source = opts->source;
	switch (opts->source) {
	case TW_TOPO_SOURCE_SYSTEM:
		snprintf(topo->description, sizeof(topo->description), "this machine");
		break;
	case TW_TOPO_SOURCE_XML:
		snprintf(topo->description, sizeof(topo->description), "topology file %.200s",
			 opts->arg);
		break;
	case TW_TOPO_SOURCE_SYNTHETIC:
		snprintf(topo->description, sizeof(topo->description),
			 "synthetic topology \"%.200s\"", opts->arg);
		break;
	}
	if (hwloc_topology_init(&topo->topology) != 0) {
		err = errno != 0 ? errno : ENOMEM;
		free(topo);
		errno = err;
		return NULL;
	}
	if (opts->source == TW_TOPO_SOURCE_XML) {
		/* the PCI devices of the file, for the NUMA node of each NIC. On this
		 * machine sysfs answers that directly, and hwloc's PCI discovery
		 * (libpciaccess) is slow and leaks its device-name database. */
		FILE *fp;

		hwloc_topology_set_io_types_filter(topo->topology,
						   HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
		fp = fopen(opts->arg, "r");
		if (fp == NULL) {
			rc = -1;
		} else {
			fclose(fp);
			rc = hwloc_topology_set_xml(topo->topology, opts->arg);
			if (rc != 0)
				errno = EINVAL;
		}
	} else if (opts->source == TW_TOPO_SOURCE_SYNTHETIC) {
		rc = hwloc_topology_set_synthetic(topo->topology, opts->arg);
		if (rc != 0)
			errno = EINVAL;
	}
	if (rc == 0)
		rc = hwloc_topology_load(topo->topology);
	if (rc != 0) {
		err = errno != 0 ? errno : EINVAL;
		hwloc_topology_destroy(topo->topology);
		free(topo);
		errno = err;
		return NULL;
	}
	tw_cfg_cpuset_zero(&topo->cpus);
	while ((pu = hwloc_get_next_obj_by_type(topo->topology, HWLOC_OBJ_PU, pu)) != NULL)
		tw_cfg_cpuset_set(&topo->cpus, pu->os_index);
	topo->numa_nodes = (unsigned int)hwloc_get_nbobjs_by_type(topo->topology,
								  HWLOC_OBJ_NUMANODE);
	if (topo->numa_nodes == 0)
		topo->numa_nodes = 1;
	return topo;
}

void tw_topo_close(struct tw_topo *topo)
{
	if (topo == NULL)
		return;
	hwloc_topology_destroy(topo->topology);
	free(topo);
}

const char *tw_topo_describe(const struct tw_topo *topo)
{
	return topo != NULL ? topo->description : "?";
}

void tw_topo_cpus(const struct tw_topo *topo, struct tw_cfg_cpuset *cpus)
{
	*cpus = topo->cpus;
}

unsigned int tw_topo_numa_nodes(const struct tw_topo *topo)
{
	return topo->numa_nodes;
}

void tw_topo__core_cpus(const struct tw_topo *topo, const struct tw_cfg_cpuset *cpus,
			struct tw_cfg_cpuset *out)
{
	struct tw_cfg_cpuset one;
	int cpu;

	tw_cfg_cpuset_zero(out);
	for (cpu = tw_cfg_cpuset_next(cpus, 0); cpu >= 0;
	     cpu = tw_cfg_cpuset_next(cpus, (unsigned int)cpu + 1)) {
		hwloc_obj_t pu = hwloc_get_pu_obj_by_os_index(topo->topology, (unsigned int)cpu);
		hwloc_obj_t core;

		if (pu == NULL)
			continue;
		core = hwloc_get_ancestor_obj_by_type(topo->topology, HWLOC_OBJ_CORE, pu);
		from_hwloc(&one, core != NULL ? core->cpuset : pu->cpuset);
		tw_cfg_cpuset_or(out, &one);
	}
}

int tw_topo__node_cpus(const struct tw_topo *topo, int node, struct tw_cfg_cpuset *out)
{
	hwloc_obj_t obj;

	tw_cfg_cpuset_zero(out);
	if (node < 0)
		return -EINVAL;
	obj = hwloc_get_numanode_obj_by_os_index(topo->topology, (unsigned int)node);
	if (obj == NULL)
		return -ENOENT;
	from_hwloc(out, obj->cpuset);
	return 0;
}

/* The NUMA nodes @cpus touch, as a list ("0", "0-1"). */
static void nodes_of(const struct tw_topo *topo, const struct tw_cfg_cpuset *cpus, char *buf,
		     size_t size)
{
	struct tw_cfg_cpuset nodes, node_cpus;
	hwloc_obj_t obj = NULL;

	tw_cfg_cpuset_zero(&nodes);
	while ((obj = hwloc_get_next_obj_by_type(topo->topology, HWLOC_OBJ_NUMANODE, obj)) !=
	       NULL) {
		from_hwloc(&node_cpus, obj->cpuset);
		if (tw_cfg_cpuset_intersects(&node_cpus, cpus))
			tw_cfg_cpuset_set(&nodes, obj->os_index);
	}
	tw_cfg_cpuset_format(&nodes, buf, size);
}

int tw_topo__read_sysfs(const struct tw_topo *topo, const char *rel, char *buf, size_t size)
{
	char path[TW_CFG_PATH_MAX + 128];
	size_t n;
	FILE *fp;
	int err;

	if (size == 0)
		return -EINVAL;
	snprintf(path, sizeof(path), "%s/%s", topo->sysfs, rel);
	fp = fopen(path, "r");
	if (fp == NULL)
		return -errno;
	n = fread(buf, 1, size - 1, fp);
	err = ferror(fp) ? -EIO : 0;
	fclose(fp);
	buf[n] = '\0';
	return err;
}

int tw_topo_pci_numa_node(const struct tw_topo *topo, const struct tw_cfg_pci_addr *addr)
{
	char rel[96], text[32], *end;
	hwloc_obj_t dev, anc;
	long node;

	if (topo == NULL || addr == NULL)
		return -EINVAL;
	dev = hwloc_get_pcidev_by_busid(topo->topology, addr->domain, addr->bus, addr->device,
					addr->function);
	if (dev != NULL) {
		anc = hwloc_get_non_io_ancestor_obj(topo->topology, dev);
		if (topo->numa_nodes > 1 && anc != NULL && anc->nodeset != NULL &&
		    hwloc_bitmap_weight(anc->nodeset) == 1)
			return hwloc_bitmap_first(anc->nodeset);
		return -1;
	}
	snprintf(rel, sizeof(rel), "bus/pci/devices/%04x:%02x:%02x.%x/numa_node", addr->domain,
		 addr->bus, addr->device, addr->function);
	if (tw_topo__read_sysfs(topo, rel, text, sizeof(text)) != 0)
		return -ENODEV;
	node = strtol(text, &end, 10);
	if (end == text || node < 0 || node > 1023 || topo->numa_nodes <= 1)
		return -1;
	return (int)node;
}

/* ------------------------------------------------------------------------ */
/* Checks                                                                   */
/* ------------------------------------------------------------------------ */

struct check_ctx {
	const struct tw_topo *topo;
	const struct tw_cfg *cfg;
	struct tw_cfg_findings *findings;
	bool valid[TW_CFG_ROLE_COUNT];           /* used, and every cpu exists */
	struct tw_cfg_cpuset cpus[TW_CFG_ROLE_COUNT];
	int port_node[TW_CFG_MAX_PORTS];         /* >= 0 node, -1 unknown, -ENODEV missing */
	bool port_noted[TW_CFG_MAX_PORTS];
};

static struct tw_cfg_finding *at_role(struct check_ctx *cx, enum tw_cfg_severity severity,
				      enum tw_cfg_role role, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static struct tw_cfg_finding *at_role(struct check_ctx *cx, enum tw_cfg_severity severity,
				      enum tw_cfg_role role, const char *fmt, ...)
{
	struct tw_cfg_finding *f;
	va_list ap;

	va_start(ap, fmt);
	f = tw_cfg_findings_addv(cx->findings, severity, cx->cfg->config_path,
				 cx->cfg->lcores[role].line, fmt, ap);
	va_end(ap);
	return f;
}

/* "lcores.decode = 3 (cpu 4)" and the like, for messages. */
static void describe_role(struct check_ctx *cx, enum tw_cfg_role role, char *buf, size_t size)
{
	const struct tw_cfg_lcore *lc = &cx->cfg->lcores[role];
	char list[128];

	tw_cfg_cpuset_format(&cx->cpus[role], list, sizeof(list));
	if (tw_cfg_cpuset_count(&cx->cpus[role]) == 1 &&
	    tw_cfg_cpuset_isset(&cx->cpus[role], (unsigned int)lc->id))
		snprintf(buf, size, "lcores.%s = %d", tw_cfg_role_name(role), lc->id);
	else
		snprintf(buf, size, "lcores.%s = %d (cpu%s %s)", tw_cfg_role_name(role), lc->id,
			 tw_cfg_cpuset_count(&cx->cpus[role]) == 1 ? "" : "s", list);
}

static void check_exists(struct check_ctx *cx)
{
	const struct tw_cfg *cfg = cx->cfg;
	struct tw_cfg_cpuset missing;
	struct tw_cfg_finding *f;
	char have[128], gone[128];
	int r;

	tw_cfg_cpuset_format(&cx->topo->cpus, have, sizeof(have));
	for (r = 0; r < TW_CFG_ROLE_COUNT; r++) {
		const struct tw_cfg_lcore *lc = &cfg->lcores[r];

		cx->valid[r] = false;
		if (!tw_cfg_role_used(cfg, (enum tw_cfg_role)r) || lc->id < 0)
			continue;
		cx->cpus[r] = cfg->eal.lcore_cpus[lc->id];
		missing = cx->cpus[r];
		tw_cfg_cpuset_andnot(&missing, &cx->topo->cpus);
		if (tw_cfg_cpuset_count(&missing) == 0) {
			cx->valid[r] = true;
			continue;
		}
		tw_cfg_cpuset_format(&missing, gone, sizeof(gone));
		if (tw_cfg_cpuset_count(&cx->cpus[r]) == 1 &&
		    tw_cfg_cpuset_isset(&cx->cpus[r], (unsigned int)lc->id))
			f = at_role(cx, TW_CFG_ERROR, (enum tw_cfg_role)r,
				    "lcores.%s = %d: no such cpu on %s (cpus %s)",
				    tw_cfg_role_name((enum tw_cfg_role)r), lc->id,
				    tw_topo_describe(cx->topo), have);
		else
			f = at_role(cx, TW_CFG_ERROR, (enum tw_cfg_role)r,
				    "lcores.%s = %d: eal.lcores (%s:%u) maps it to cpu %s, not on "
				    "%s (cpus %s)", tw_cfg_role_name((enum tw_cfg_role)r), lc->id,
				    cfg->ports_path, cfg->eal.lcores_line, gone,
				    tw_topo_describe(cx->topo), have);
		tw_cfg_finding_hint(f, "choose cpus in %s (edit eal.lcores in %s, e.g. "
				    "\"%d@CPU\")", have, cfg->ports_path, lc->id);
	}
}

static void check_dedicated(struct check_ctx *cx)
{
	const struct tw_cfg *cfg = cx->cfg;
	enum tw_cfg_severity sev = cfg->checks.require_dedicated_cores ? TW_CFG_ERROR :
				   TW_CFG_WARNING;
	struct tw_cfg_cpuset core;
	struct tw_cfg_finding *f;
	char who[160], what[512], list[128];
	int r, q;

	for (r = 0; r < TW_CFG_ROLE_COUNT; r++) {
		bool floats, shares = false;
		size_t len = 0;

		if (!cx->valid[r] || !tw_cfg_role_is_hot((enum tw_cfg_role)r))
			continue;
		floats = tw_cfg_cpuset_count(&cx->cpus[r]) > 1;
		tw_topo__core_cpus(cx->topo, &cx->cpus[r], &core);
		what[0] = '\0';
		for (q = 0; q < TW_CFG_ROLE_COUNT; q++) {
			if (q == r || !cx->valid[q] ||
			    !tw_cfg_cpuset_intersects(&core, &cx->cpus[q]))
				continue;
			/* a pair of hot roles is reported once, at the later of the two */
			if (q > r && tw_cfg_role_is_hot((enum tw_cfg_role)q))
				continue;
			len += (size_t)snprintf(what + len,
						len < sizeof(what) ? sizeof(what) - len : 0,
						"%slcores.%s", shares ? ", " : "",
						tw_cfg_role_name((enum tw_cfg_role)q));
			shares = true;
		}
		if (!floats && !shares)
			continue;
		describe_role(cx, (enum tw_cfg_role)r, who, sizeof(who));
		if (floats)
			snprintf(who, sizeof(who), "lcores.%s = %d",
				 tw_cfg_role_name((enum tw_cfg_role)r), cfg->lcores[r].id);
		tw_cfg_cpuset_format(&cx->cpus[r], list, sizeof(list));
		if (floats && shares)
			f = at_role(cx, sev, (enum tw_cfg_role)r, "%s floats over cpus %s and "
				    "shares a physical core with %s", who, list, what);
		else if (floats)
			f = at_role(cx, sev, (enum tw_cfg_role)r, "%s floats over cpus %s", who,
				    list);
		else
			f = at_role(cx, sev, (enum tw_cfg_role)r, "%s shares a physical core with "
				    "%s (hyperthread siblings count)", who, what);
		tw_cfg_finding_hint(f, "pin each hot lcore to a physical core of its own in "
				    "eal.lcores (%s:%u), e.g. \"%d@CPU\"", cfg->ports_path,
				    cfg->eal.lcores_line, cfg->lcores[r].id);
	}
}

/* Whether hot role @r handles the packets of port @p. */
static bool role_touches_port(const struct tw_cfg *cfg, enum tw_cfg_role r, uint32_t p)
{
	uint32_t i;

	if (r == TW_CFG_ROLE_ORDER_OUT)
		return cfg->session.tx_port == (int32_t)p;
	for (i = 0; i < cfg->n_feeds; i++) {
		const struct tw_cfg_feed *feed = &cfg->feeds[i];

		if (feed->kind != TW_CFG_FEED_INCREMENTAL || feed->port != p)
			continue;
		if (r == TW_CFG_ROLE_DECODE)
			return true;
		if (r == TW_CFG_ROLE_CAPTURE_A && feed->side == TW_CFG_SIDE_A)
			return true;
		if (r == TW_CFG_ROLE_CAPTURE_B && feed->side == TW_CFG_SIDE_B)
			return true;
	}
	return false;
}

static void note_port(struct check_ctx *cx, uint32_t p)
{
	const struct tw_cfg_port *port = &cx->cfg->ports[p];
	struct tw_cfg_finding *f;

	if (cx->port_noted[p])
		return;
	cx->port_noted[p] = true;
	if (port->kind == TW_CFG_PORT_VDEV) {
		f = tw_cfg_findings_add(cx->findings, TW_CFG_INFO, cx->cfg->ports_path,
					port->device_line, "[port.%s] is the vdev %s: no NUMA "
					"node to check", port->name, port->devname);
		tw_cfg_finding_hint(f, "NUMA placement is checked for PCI ports only");
		cx->port_node[p] = -1;
		return;
	}
	cx->port_node[p] = tw_topo_pci_numa_node(cx->topo, &port->pci);
	if (cx->port_node[p] == -ENODEV) {
		f = tw_cfg_findings_add(cx->findings, TW_CFG_ERROR, cx->cfg->ports_path,
					port->device_line, "[port.%s] pci = %s: no such PCI "
					"device on %s", port->name, port->device,
					tw_topo_describe(cx->topo));
		tw_cfg_finding_hint(f, "lspci -D lists this machine's devices; "
				    "dpdk-devbind.py --status shows which DPDK can use");
	}
}

static void check_numa(struct check_ctx *cx)
{
	const struct tw_cfg *cfg = cx->cfg;
	enum tw_cfg_severity sev = cfg->checks.require_numa_local ? TW_CFG_ERROR : TW_CFG_WARNING;
	struct tw_cfg_cpuset node_cpus;
	struct tw_cfg_finding *f;
	char who[160], on[64], list[128];
	uint32_t p;
	int r;

	for (p = 0; p < cfg->n_ports; p++)
		for (r = 0; r < TW_CFG_ROLE_COUNT; r++)
			if (tw_cfg_role_used(cfg, (enum tw_cfg_role)r) &&
			    tw_cfg_role_is_hot((enum tw_cfg_role)r) &&
			    role_touches_port(cfg, (enum tw_cfg_role)r, p))
				note_port(cx, p);
	/* one finding per role: the first port it touches that is on another node */
	for (r = 0; r < TW_CFG_ROLE_COUNT; r++) {
		for (p = 0; p < cfg->n_ports; p++) {
			const struct tw_cfg_port *port = &cfg->ports[p];

			if (!cx->valid[r] || !tw_cfg_role_is_hot((enum tw_cfg_role)r) ||
			    !role_touches_port(cfg, (enum tw_cfg_role)r, p) ||
			    cx->port_node[p] < 0)
				continue;
			if (tw_topo__node_cpus(cx->topo, cx->port_node[p], &node_cpus) != 0)
				continue;
			if (tw_cfg_cpuset_subset(&cx->cpus[r], &node_cpus))
				continue;
			describe_role(cx, (enum tw_cfg_role)r, who, sizeof(who));
			nodes_of(cx->topo, &cx->cpus[r], on, sizeof(on));
			tw_cfg_cpuset_format(&node_cpus, list, sizeof(list));
			f = at_role(cx, sev, (enum tw_cfg_role)r, "%s runs on NUMA node %s, but "
				    "[port.%s] (%s, %s:%u) is on node %d", who, on, port->name,
				    port->device, cfg->ports_path, port->device_line,
				    cx->port_node[p]);
			tw_cfg_finding_hint(f, "move lcore %d to a cpu of node %d (%s); every "
					    "packet would otherwise cross the interconnect",
					    cfg->lcores[r].id, cx->port_node[p], list);
			break;
		}
	}
}

/* A sysfs cpu list; absent files read as empty (kernels without NO_HZ_FULL). */
static void read_cpu_list(struct check_ctx *cx, const char *rel, struct tw_cfg_cpuset *set,
			  bool *unreadable)
{
	char text[4096];
	int rc;

	tw_cfg_cpuset_zero(set);
	rc = tw_topo__read_sysfs(cx->topo, rel, text, sizeof(text));
	if (rc == -ENOENT)
		return;
	if (rc != 0 || tw_cfg_cpuset_parse(text, set) != 0)
		*unreadable = true;
}

static const char *plural(const struct tw_cfg_cpuset *set)
{
	return tw_cfg_cpuset_count(set) == 1 ? "cpu" : "cpus";
}

static void check_isolation(struct check_ctx *cx)
{
	const struct tw_cfg *cfg = cx->cfg;
	enum tw_cfg_severity sev = cfg->checks.require_isolation ? TW_CFG_ERROR : TW_CFG_WARNING;
	struct tw_cfg_cpuset isolated, nohz, missing_iso, missing_nohz, siblings;
	char who[160], a[128], b[128], iso_text[128], nohz_text[128];
	struct tw_cfg_finding *f;
	bool unreadable = false;
	int r;

	read_cpu_list(cx, "devices/system/cpu/isolated", &isolated, &unreadable);
	read_cpu_list(cx, "devices/system/cpu/nohz_full", &nohz, &unreadable);
	if (unreadable) {
		f = tw_cfg_findings_add(cx->findings, TW_CFG_WARNING, NULL, 0, "cannot read "
					"%s/devices/system/cpu/isolated or nohz_full: treating no "
					"cpu as isolated", cx->topo->sysfs);
		tw_cfg_finding_hint(f, "point --sysfs at the sysfs of the target machine");
	}
	tw_cfg_cpuset_format(&isolated, iso_text, sizeof(iso_text));
	tw_cfg_cpuset_format(&nohz, nohz_text, sizeof(nohz_text));
	for (r = 0; r < TW_CFG_ROLE_COUNT; r++) {
		if (!cx->valid[r] || !tw_cfg_role_is_hot((enum tw_cfg_role)r))
			continue;
		describe_role(cx, (enum tw_cfg_role)r, who, sizeof(who));
		missing_iso = cx->cpus[r];
		tw_cfg_cpuset_andnot(&missing_iso, &isolated);
		missing_nohz = cx->cpus[r];
		tw_cfg_cpuset_andnot(&missing_nohz, &nohz);
		if (tw_cfg_cpuset_count(&missing_iso) != 0 ||
		    tw_cfg_cpuset_count(&missing_nohz) != 0) {
			tw_cfg_cpuset_format(&missing_iso, a, sizeof(a));
			tw_cfg_cpuset_format(&missing_nohz, b, sizeof(b));
			if (tw_cfg_cpuset_count(&missing_iso) != 0 && strcmp(a, b) != 0 &&
			    tw_cfg_cpuset_count(&missing_nohz) != 0)
				f = at_role(cx, sev, (enum tw_cfg_role)r, "%s: %s %s not isolated "
					    "(isolated: %s) and %s %s not nohz_full "
					    "(nohz_full: %s)",
					    who, plural(&missing_iso), a,
					    iso_text[0] != '\0' ? iso_text : "none",
					    plural(&missing_nohz), b,
					    nohz_text[0] != '\0' ? nohz_text : "none");
			else if (tw_cfg_cpuset_count(&missing_iso) != 0 &&
				 tw_cfg_cpuset_count(&missing_nohz) != 0)
				f = at_role(cx, sev, (enum tw_cfg_role)r, "%s: %s %s not isolated "
					    "(isolated: %s) and not nohz_full (nohz_full: %s)",
					    who,
					    plural(&missing_iso), a,
					    iso_text[0] != '\0' ? iso_text : "none",
					    nohz_text[0] != '\0' ? nohz_text : "none");
			else if (tw_cfg_cpuset_count(&missing_iso) != 0)
				f = at_role(cx, sev, (enum tw_cfg_role)r, "%s: %s %s not isolated "
					    "(isolated: %s)", who, plural(&missing_iso), a,
					    iso_text[0] != '\0' ? iso_text : "none");
			else
				f = at_role(cx, sev, (enum tw_cfg_role)r,
					    "%s: %s %s not nohz_full (nohz_full: %s)", who,
					    plural(&missing_nohz), b,
					    nohz_text[0] != '\0' ? nohz_text : "none");
			tw_cfg_finding_hint(f, "boot with the kernel command line tickwire-check "
					    "prints (isolcpus=, nohz_full=)");
			continue;
		}
		tw_topo__core_cpus(cx->topo, &cx->cpus[r], &siblings);
		tw_cfg_cpuset_andnot(&siblings, &cx->cpus[r]);
		tw_cfg_cpuset_andnot(&siblings, &isolated);
		if (tw_cfg_cpuset_count(&siblings) != 0) {
			tw_cfg_cpuset_format(&siblings, a, sizeof(a));
			f = at_role(cx, TW_CFG_WARNING, (enum tw_cfg_role)r, "%s: hyperthread "
				    "sibling cpu %s is not isolated, so the kernel may run work "
				    "on the same core", who, a);
			tw_cfg_finding_hint(f, "isolate the siblings too (the derived isolcpus= "
					    "includes them)");
		}
	}
}

int tw_topo_check(const struct tw_topo *topo, const struct tw_cfg *cfg,
		  struct tw_cfg_findings *findings)
{
	struct check_ctx *cx;

	if (topo == NULL || cfg == NULL || findings == NULL)
		return -EINVAL;
	cx = calloc(1, sizeof(*cx));
	if (cx == NULL)
		return -ENOMEM;
	cx->topo = topo;
	cx->cfg = cfg;
	cx->findings = findings;
	check_exists(cx);
	check_dedicated(cx);
	check_numa(cx);
	check_isolation(cx);
	free(cx);
	return 0;
}
