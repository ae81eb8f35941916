/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * The kernel command line and tuned variables a core map needs.
 *
 *   hot      = cpus of the used hot lcores (captures, decode, order-out)
 *   isolated = every cpu of the physical cores in hot, minus the main
 *              lcore's cpus (a cpu main shares stays with the kernel)
 *   housekeeping = the topology's cpus - isolated  (irqaffinity)
 *   hugepages = eal.hugepages, or ceil(memory / page size) per NUMA node
 *              times the nodes (the kernel spreads boot-time pages evenly)
 *
 * isolcpus= carries managed_irq and domain so managed device interrupts and
 * the scheduler's load balancing both stay off the isolated cpus; nohz_full
 * and rcu_nocbs take the same list; C-states are held at C1
 * (processor.max_cstate=1, intel_idle.max_cstate=0 hands idle to acpi_idle).
 * tuned's cpu-partitioning adds isolcpus only when no_balance_cores is set,
 * so both of its variables get the isolated list.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "topo_pvt.h"

#define MAX_CSTATE 1u

static const char *page_name(uint64_t size)
{
	return size >= (UINT64_C(1) << 30) ? "1G" : "2M";
}

static struct tw_cfg_finding *note(struct tw_cfg_findings *findings, const struct tw_cfg *cfg,
				   uint32_t line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static struct tw_cfg_finding *note(struct tw_cfg_findings *findings, const struct tw_cfg *cfg,
				   uint32_t line, const char *fmt, ...)
{
	struct tw_cfg_finding *f;
	va_list ap;

	if (findings == NULL)
		return NULL;
	va_start(ap, fmt);
	f = tw_cfg_findings_addv(findings, TW_CFG_INFO, cfg->config_path, line, fmt, ap);
	va_end(ap);
	return f;
}

int tw_topo_tuning(const struct tw_topo *topo, const struct tw_cfg *cfg,
		   struct tw_topo_tuning *t, struct tw_cfg_findings *findings)
{
	struct tw_cfg_cpuset hot, main_cpus, shared, siblings;
	char iso[512], hk[512], list[256];
	size_t len;
	int r, n;

	if (topo == NULL || cfg == NULL || t == NULL)
		return -EINVAL;
	memset(t, 0, sizeof(*t));
	tw_cfg_cpuset_zero(&hot);
	tw_cfg_cpuset_zero(&main_cpus);
	for (r = 0; r < TW_CFG_ROLE_COUNT; r++) {
		int id = cfg->lcores[r].id;

		if (!tw_cfg_role_used(cfg, (enum tw_cfg_role)r) || id < 0)
			continue;
		tw_cfg_cpuset_or(&t->lcore_cpus, &cfg->eal.lcore_cpus[id]);
		if (tw_cfg_role_is_hot((enum tw_cfg_role)r))
			tw_cfg_cpuset_or(&hot, &cfg->eal.lcore_cpus[id]);
		else
			tw_cfg_cpuset_or(&main_cpus, &cfg->eal.lcore_cpus[id]);
	}
	tw_cfg_cpuset_and(&hot, &topo->cpus);
	tw_topo__core_cpus(topo, &hot, &t->isolated);
	siblings = t->isolated;
	tw_cfg_cpuset_andnot(&siblings, &hot);
	tw_cfg_cpuset_andnot(&siblings, &main_cpus);
	tw_cfg_cpuset_andnot(&t->isolated, &main_cpus);
	shared = hot;
	tw_cfg_cpuset_and(&shared, &main_cpus);
	t->housekeeping = topo->cpus;
	tw_cfg_cpuset_andnot(&t->housekeeping, &t->isolated);

	if (tw_cfg_cpuset_count(&shared) != 0) {
		tw_cfg_cpuset_format(&shared, list, sizeof(list));
		note(findings, cfg, cfg->lcores[TW_CFG_ROLE_MAIN].line, "%s %s %s lcores.main "
		     "and hot lcores: left to the kernel, not isolated",
		     tw_cfg_cpuset_count(&shared) == 1 ? "cpu" : "cpus", list,
		     tw_cfg_cpuset_count(&shared) == 1 ? "runs" : "run");
	}
	if (tw_cfg_cpuset_count(&siblings) != 0) {
		tw_cfg_cpuset_format(&siblings, list, sizeof(list));
		note(findings, cfg, cfg->lcores_line, "isolating hyperthread sibling%s %s of the "
		     "hot lcores as well, so no kernel work shares their cores",
		     tw_cfg_cpuset_count(&siblings) == 1 ? "" : "s", list);
	}
	if (tw_cfg_cpuset_count(&t->isolated) == 0)
		note(findings, cfg, cfg->lcores_line, "no cpu to isolate: the kernel command line "
		     "has no isolcpus, nohz_full, rcu_nocbs or irqaffinity");

	t->memory_bytes = tw_cfg_memory_bytes(cfg);
	t->hugepage_size = cfg->eal.hugepage_size;
	t->numa_nodes = topo->numa_nodes;
	if (cfg->eal.hugepages != 0)
		t->hugepages = cfg->eal.hugepages;
	else
		t->hugepages = (uint32_t)((t->memory_bytes + t->hugepage_size - 1) /
					  t->hugepage_size) * t->numa_nodes;
	if (cfg->eal.no_huge) {
		struct tw_cfg_finding *f;

		f = tw_cfg_findings_add(findings, TW_CFG_INFO, cfg->ports_path,
					cfg->eal.no_huge_line, "eal.no_huge = true: the "
					"appliance will not use the %u hugepages derived below",
					t->hugepages);
		tw_cfg_finding_hint(f, "they let the same image run the profile without "
				    "no_huge");
	}
	t->max_cstate = MAX_CSTATE;

	tw_cfg_cpuset_format(&t->isolated, iso, sizeof(iso));
	tw_cfg_cpuset_format(&t->housekeeping, hk, sizeof(hk));
	len = 0;
	if (iso[0] != '\0') {
		n = snprintf(t->cmdline, sizeof(t->cmdline),
			     "isolcpus=managed_irq,domain,%s nohz_full=%s rcu_nocbs=%s "
			     "irqaffinity=%s ", iso, iso, iso, hk);
		if (n < 0 || (size_t)n >= sizeof(t->cmdline))
			return -E2BIG;
		len = (size_t)n;
	}
	n = snprintf(t->cmdline + len, sizeof(t->cmdline) - len,
		     "default_hugepagesz=%s hugepagesz=%s hugepages=%u "
		     "processor.max_cstate=%u intel_idle.max_cstate=0",
		     page_name(t->hugepage_size), page_name(t->hugepage_size), t->hugepages,
		     t->max_cstate);
	if (n < 0 || (size_t)n >= sizeof(t->cmdline) - len)
		return -E2BIG;
	return 0;
}

int tw_topo_tuning_format(const struct tw_topo_tuning *t, enum tw_topo_format format,
			  char *buf, size_t size)
{
	char iso[512], hk[512], lc[512];

	if (t == NULL || (buf == NULL && size > 0))
		return -EINVAL;
	tw_cfg_cpuset_format(&t->isolated, iso, sizeof(iso));
	tw_cfg_cpuset_format(&t->housekeeping, hk, sizeof(hk));
	tw_cfg_cpuset_format(&t->lcore_cpus, lc, sizeof(lc));
	if (format == TW_TOPO_FORMAT_SHELL)
		return snprintf(buf, size,
				"TW_KERNEL_CMDLINE='%s'\n"
				"TW_ISOLATED_CPUS='%s'\n"
				"TW_HOUSEKEEPING_CPUS='%s'\n"
				"TW_LCORE_CPUS='%s'\n"
				"TW_HUGEPAGE_SIZE='%s'\n"
				"TW_HUGEPAGES='%u'\n"
				"TW_MAX_CSTATE='%u'\n"
				"TUNED_ISOLATED_CORES='%s'\n"
				"TUNED_NO_BALANCE_CORES='%s'\n",
				t->cmdline, iso, hk, lc, page_name(t->hugepage_size), t->hugepages,
				t->max_cstate, iso, iso);
	if (format != TW_TOPO_FORMAT_TEXT)
		return -EINVAL;
	return snprintf(buf, size,
			"kernel command line:\n"
			"  %s\n"
			"tuned cpu-partitioning variables:\n"
			"  isolated_cores=%s\n"
			"  no_balance_cores=%s\n"
			"housekeeping cpus (irqaffinity, services): %s\n"
			"lcore cpus (the appliance's CPU affinity must include them): %s\n"
			"hugepages: %u x %s (the profile needs %" PRIu64 " MiB; boot-time pages "
			"are spread over %u NUMA node%s)\n",
			t->cmdline, iso, iso, hk[0] != '\0' ? hk : "none", lc, t->hugepages,
			page_name(t->hugepage_size), (t->memory_bytes + (1u << 20) - 1) >> 20,
			t->numa_nodes, t->numa_nodes == 1 ? "" : "s");
}
