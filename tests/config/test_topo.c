/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * lib/topo: the core-map checks against synthetic hwloc topologies, an hwloc
 * XML with a NIC on NUMA node 1, and a fake sysfs; the derived kernel command
 * line and tuned variables.
 */
#include "cfg_fixture.h"
#include "tw_topo.h"

#define CFG "tickwire.cfg"
#define PORTS "ports.ini"

/* The colo-example machine: 2 sockets x 8 cores x 2 threads, cpu N and N+16 siblings. */
#define COLO_TOPOLOGY "pack:2 numa:1 core:8 pu:2(indexes=2*8:16*2:1*2)"

struct sysfs {
	char root[64];
};

static void mkdirs(const char *path)
{
	char buf[256];
	char *p;

	snprintf(buf, sizeof(buf), "%s", path);
	for (p = buf + 1; *p != '\0'; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		mkdir(buf, 0755);
		*p = '/';
	}
	mkdir(buf, 0755);
}

/* A fake sysfs: cpu/isolated, cpu/nohz_full (NULL = absent), and PCI numa_node files
 * given as "0000:3b:00.0=1,0000:3b:00.1=1". */
static struct sysfs *sysfs_new(const char *isolated, const char *nohz, const char *pci)
{
	struct sysfs *s = calloc(1, sizeof(*s));
	char path[256], dev[64];
	const char *p;

	assert_non_null(s);
	snprintf(s->root, sizeof(s->root), "/tmp/tw-sysfs-test-XXXXXX");
	assert_non_null(mkdtemp(s->root));
	snprintf(path, sizeof(path), "%s/devices/system/cpu", s->root);
	mkdirs(path);
	if (isolated != NULL) {
		snprintf(path, sizeof(path), "%s/devices/system/cpu/isolated", s->root);
		fx_write(path, isolated);
	}
	if (nohz != NULL) {
		snprintf(path, sizeof(path), "%s/devices/system/cpu/nohz_full", s->root);
		fx_write(path, nohz);
	}
	for (p = pci; p != NULL && *p != '\0';) {
		size_t n = strcspn(p, "=");
		int node = atoi(p + n + 1);

		snprintf(dev, sizeof(dev), "%.*s", (int)n, p);
		snprintf(path, sizeof(path), "%s/bus/pci/devices/%s", s->root, dev);
		mkdirs(path);
		snprintf(path, sizeof(path), "%s/bus/pci/devices/%s/numa_node", s->root, dev);
		{
			char text[16];

			snprintf(text, sizeof(text), "%d\n", node);
			fx_write(path, text);
		}
		p = strchr(p, ',');
		if (p != NULL)
			p++;
	}
	return s;
}

static void sysfs_free(struct sysfs *s)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", s->root);
	assert_int_equal(system(cmd), 0);
	free(s);
}

static struct tw_topo *open_synthetic(const char *desc, const struct sysfs *s)
{
	struct tw_topo_opts opts = {
		.source = TW_TOPO_SOURCE_SYNTHETIC,
		.arg = desc,
		.sysfs_root = s != NULL ? s->root : "/nonexistent-sysfs",
	};
	struct tw_topo *topo = tw_topo_open(&opts);

	assert_non_null(topo);
	return topo;
}

static struct tw_topo *open_xml(const char *name, const struct sysfs *s)
{
	char path[512];
	const char *data = getenv("TW_TEST_DATA");
	struct tw_topo_opts opts = {
		.source = TW_TOPO_SOURCE_XML,
		.arg = path,
		.sysfs_root = s != NULL ? s->root : "/nonexistent-sysfs",
	};
	struct tw_topo *topo;

	snprintf(path, sizeof(path), "%s/%s", data != NULL ? data : "tests/config/data", name);
	topo = tw_topo_open(&opts);
	assert_non_null(topo);
	return topo;
}

/* Load the fixture profile, then run the topology checks into its findings. */
static void check(struct fx *fx, const struct tw_topo *topo)
{
	fx_expect_ok(fx);
	tw_cfg_findings_init(&fx->findings);
	assert_int_equal(tw_topo_check(topo, fx->cfg, &fx->findings), 0);
}

static void expect(struct fx *fx, enum tw_cfg_severity severity, const char *file,
		   unsigned int line, const char *text)
{
	if (fx_find(fx, severity, file, line, text) == NULL) {
		fx_dump(fx);
		fail_msg("no finding %s:%u: %s: ...%s...", file, line,
			 tw_cfg_severity_name(severity), text);
	}
}

static void expect_none(struct fx *fx, const char *text)
{
	uint32_t i;

	for (i = 0; i < fx->findings.count; i++) {
		if (strstr(fx->findings.item[i].message, text) != NULL) {
			fx_dump(fx);
			fail_msg("unexpected finding: ...%s...", text);
		}
	}
}

/* The fixture with lcores pinned as @lcores (eal.lcores syntax). */
static struct fx *fx_pinned(const char *lcores)
{
	struct fx *fx = fx_new();
	char line[128];

	snprintf(line, sizeof(line), "lcores = %s", lcores);
	fx_replace(&fx->ports_text, "lcores = (0-4)@(0,1)", line);
	return fx;
}

/* The fixture with both ports on PCI devices 0000:3b:00.0 and .1. */
static void use_pci(struct fx *fx)
{
	fx_replace(&fx->ports_text, "no_pci = true", "no_pci = false");
	fx_replace(&fx->ports_text, "vdev = net_null0", "pci = 0000:3b:00.0");
	fx_replace(&fx->ports_text, "vdev = net_null1", "pci = 0000:3b:00.1");
}

static void open_synthetic_topology(void **state)
{
	struct tw_topo *topo = open_synthetic("pack:2 core:4 pu:2", NULL);
	struct tw_cfg_cpuset cpus;
	char list[64];

	(void)state;
	tw_topo_cpus(topo, &cpus);
	tw_cfg_cpuset_format(&cpus, list, sizeof(list));
	assert_string_equal(list, "0-15");
	assert_int_equal(tw_topo_numa_nodes(topo), 1);
	assert_non_null(strstr(tw_topo_describe(topo), "synthetic topology"));
	tw_topo_close(topo);
	topo = open_synthetic(COLO_TOPOLOGY, NULL);
	assert_int_equal(tw_topo_numa_nodes(topo), 2);
	tw_topo_close(topo);
}

static void open_errors(void **state)
{
	struct tw_topo_opts opts = { .source = TW_TOPO_SOURCE_SYNTHETIC, .arg = "pack:2 bogus:3" };

	(void)state;
	assert_null(tw_topo_open(&opts));
	assert_int_equal(errno, EINVAL);
	opts.source = TW_TOPO_SOURCE_XML;
	opts.arg = "/nonexistent/topology.xml";
	assert_null(tw_topo_open(&opts));
	assert_int_equal(errno, ENOENT);
	assert_null(tw_topo_open(NULL));
	assert_int_equal(errno, EINVAL);
	opts.arg = NULL;
	assert_null(tw_topo_open(&opts));
	assert_int_equal(errno, EINVAL);
}

static void lcore_on_missing_cpu(void **state)
{
	struct fx *fx = fx_pinned("0-4");
	struct tw_topo *topo = open_synthetic("pack:1 core:2 pu:1", NULL);

	(void)state;
	check(fx, topo);
	expect(fx, TW_CFG_ERROR, CFG, fx_line_of(fx->config_text, "decode = 3"),
	       "lcores.decode = 3: no such cpu on synthetic topology \"pack:1 core:2 pu:1\" "
	       "(cpus 0-1)");
	expect(fx, TW_CFG_ERROR, CFG, fx_line_of(fx->config_text, "capture_b = 2"),
	       "no such cpu");
	expect_none(fx, "lcores.capture_a = 1: no such cpu");
	tw_topo_close(topo);
	fx_free(fx);
}

static void lcore_mapped_to_missing_cpu(void **state)
{
	struct fx *fx = fx_pinned("0@0,1@1,2@0,3@9,4@1");
	struct tw_topo *topo = open_synthetic("pack:1 core:2 pu:1", NULL);

	(void)state;
	check(fx, topo);
	expect(fx, TW_CFG_ERROR, CFG, fx_line_of(fx->config_text, "decode = 3"),
	       "lcores.decode = 3: eal.lcores");
	expect(fx, TW_CFG_ERROR, CFG, fx_line_of(fx->config_text, "decode = 3"),
	       "maps it to cpu 9, not on");
	tw_topo_close(topo);
	fx_free(fx);
}

static void hyperthread_siblings(void **state)
{
	/* cpus 2k and 2k+1 are siblings: main/capture_a and capture_b/decode share cores */
	struct fx *fx = fx_pinned("0-4");
	struct tw_topo *topo = open_synthetic("pack:1 core:4 pu:2", NULL);

	(void)state;
	fx_replace(&fx->config_text, "require_dedicated_cores = false",
		   "require_dedicated_cores = true");
	check(fx, topo);
	expect(fx, TW_CFG_ERROR, CFG, fx_line_of(fx->config_text, "capture_a = 1"),
	       "lcores.capture_a = 1 shares a physical core with lcores.main");
	expect(fx, TW_CFG_ERROR, CFG, fx_line_of(fx->config_text, "decode = 3"),
	       "lcores.decode = 3 shares a physical core with lcores.capture_b");
	assert_int_equal(fx->findings.errors, 2);
	/* without the requirement they are warnings */
	fx_replace(&fx->config_text, "require_dedicated_cores = true",
		   "require_dedicated_cores = false");
	check(fx, topo);
	expect(fx, TW_CFG_WARNING, CFG, fx_line_of(fx->config_text, "decode = 3"),
	       "shares a physical core with lcores.capture_b");
	assert_int_equal(fx->findings.errors, 0);
	tw_topo_close(topo);
	fx_free(fx);
}

static void distinct_cores_pass(void **state)
{
	struct fx *fx = fx_pinned("0@0,1@2,2@4,3@6,4@8");
	struct tw_topo *topo = open_synthetic("pack:1 core:8 pu:2", NULL);

	(void)state;
	fx_replace(&fx->config_text, "require_dedicated_cores = false",
		   "require_dedicated_cores = true");
	check(fx, topo);
	expect_none(fx, "physical core");
	expect_none(fx, "floats");
	assert_int_equal(fx->findings.errors, 0);
	tw_topo_close(topo);
	fx_free(fx);
}

static void floating_lcore(void **state)
{
	struct fx *fx = fx_new();      /* (0-4)@(0,1) */
	struct tw_topo *topo = open_synthetic("pack:1 core:2 pu:1", NULL);

	(void)state;
	check(fx, topo);
	expect(fx, TW_CFG_WARNING, CFG, fx_line_of(fx->config_text, "order_out = 4"),
	       "lcores.order_out = 4 floats over cpus 0-1 and shares a physical core with "
	       "lcores.main, lcores.capture_a, lcores.capture_b, lcores.decode");
	assert_int_equal(fx->findings.errors, 0);
	tw_topo_close(topo);
	fx_free(fx);
}

static void nic_on_other_numa_node(void **state)
{
	/* numa2-nic.xml: cpus 0-3 on node 0, 4-7 on node 1, the NIC on node 1 */
	struct fx *fx = fx_pinned("0-4");
	struct tw_topo *topo = open_xml("numa2-nic.xml", NULL);
	const struct tw_cfg_finding *f;

	(void)state;
	use_pci(fx);
	assert_int_equal(tw_topo_numa_nodes(topo), 2);
	check(fx, topo);
	expect(fx, TW_CFG_ERROR, CFG, fx_line_of(fx->config_text, "capture_a = 1"),
	       "lcores.capture_a = 1 runs on NUMA node 0, but [port.a] (0000:3b:00.0");
	expect(fx, TW_CFG_ERROR, CFG, fx_line_of(fx->config_text, "capture_b = 2"),
	       "[port.b] (0000:3b:00.1");
	expect(fx, TW_CFG_ERROR, CFG, fx_line_of(fx->config_text, "decode = 3"), "is on node 1");
	f = fx_find(fx, TW_CFG_ERROR, CFG, fx_line_of(fx->config_text, "capture_a = 1"), "NUMA");
	assert_non_null(strstr(f->hint, "node 1 (4-7)"));
	/* order_out (lcore 4, cpu 4) writes to port a: it is on node 1 */
	expect_none(fx, "lcores.order_out = 4 runs on NUMA");
	tw_topo_close(topo);
	fx_free(fx);
}

static void nic_on_local_numa_node(void **state)
{
	struct fx *fx = fx_pinned("0@0,1@4,2@5,3@6,4@7");
	struct tw_topo *topo = open_xml("numa2-nic.xml", NULL);

	(void)state;
	use_pci(fx);
	fx_replace(&fx->config_text, "require_dedicated_cores = false",
		   "require_dedicated_cores = true");
	check(fx, topo);
	expect_none(fx, "NUMA");
	expect_none(fx, "physical core");
	assert_int_equal(fx->findings.errors, 0);
	assert_int_equal(tw_topo_pci_numa_node(topo, &fx->cfg->ports[1].pci), 1);
	tw_topo_close(topo);
	fx_free(fx);
}

static void numa_warning_when_not_required(void **state)
{
	struct fx *fx = fx_pinned("0-4");
	struct tw_topo *topo = open_xml("numa2-nic.xml", NULL);

	(void)state;
	use_pci(fx);
	fx_replace(&fx->config_text, "require_numa_local = true", "require_numa_local = false");
	check(fx, topo);
	expect(fx, TW_CFG_WARNING, CFG, fx_line_of(fx->config_text, "capture_a = 1"),
	       "runs on NUMA node 0");
	assert_int_equal(fx->findings.errors, 0);
	tw_topo_close(topo);
	fx_free(fx);
}

static void pci_device_missing(void **state)
{
	struct fx *fx = fx_pinned("0-4");
	struct tw_topo *topo = open_synthetic("pack:2 numa:1 core:4 pu:1", NULL);

	(void)state;
	use_pci(fx);
	check(fx, topo);
	expect(fx, TW_CFG_ERROR, PORTS, fx_line_of(fx->ports_text, "pci = 0000:3b:00.0"),
	       "[port.a] pci = 0000:3b:00.0: no such PCI device");
	tw_topo_close(topo);
	fx_free(fx);
}

static void pci_numa_node_from_sysfs(void **state)
{
	/* synthetic topologies have no PCI objects: the node comes from the fake sysfs */
	struct sysfs *s = sysfs_new("", NULL, "0000:3b:00.0=1,0000:3b:00.1=0");
	struct fx *fx = fx_pinned("0-4");
	struct tw_topo *topo = open_synthetic("pack:2 numa:1 core:4 pu:1", s);

	(void)state;
	use_pci(fx);
	check(fx, topo);
	expect(fx, TW_CFG_ERROR, CFG, fx_line_of(fx->config_text, "capture_a = 1"),
	       "runs on NUMA node 0, but [port.a] (0000:3b:00.0");
	expect_none(fx, "lcores.capture_b = 2 runs on NUMA");
	tw_topo_close(topo);
	sysfs_free(s);
	fx_free(fx);
}

static void vdev_has_no_numa_node(void **state)
{
	struct fx *fx = fx_pinned("0-4");
	struct tw_topo *topo = open_synthetic("pack:2 numa:1 core:4 pu:1", NULL);

	(void)state;
	check(fx, topo);
	expect(fx, TW_CFG_INFO, PORTS, fx_line_of(fx->ports_text, "vdev = net_null0"),
	       "[port.a] is the vdev net_null0: no NUMA node to check");
	tw_topo_close(topo);
	fx_free(fx);
}

static void not_isolated(void **state)
{
	struct sysfs *s = sysfs_new("", "", NULL);
	struct fx *fx = fx_pinned("0-4");
	struct tw_topo *topo = open_synthetic("pack:1 core:8 pu:1", s);

	(void)state;
	check(fx, topo);
	expect(fx, TW_CFG_WARNING, CFG, fx_line_of(fx->config_text, "decode = 3"),
	       "lcores.decode = 3: cpu 3 not isolated (isolated: none) and not nohz_full");
	expect_none(fx, "lcores.main = 0:");   /* main is housekeeping: no isolation needed */
	assert_int_equal(fx->findings.errors, 0);
	fx_replace(&fx->config_text, "require_isolation = false", "require_isolation = true");
	check(fx, topo);
	expect(fx, TW_CFG_ERROR, CFG, fx_line_of(fx->config_text, "decode = 3"),
	       "not isolated");
	assert_int_equal(fx->findings.errors, 4);
	tw_topo_close(topo);
	sysfs_free(s);
	fx_free(fx);
}

static void isolated_but_not_nohz(void **state)
{
	struct sysfs *s = sysfs_new("1-4\n", NULL, NULL);   /* a kernel without nohz_full */
	struct fx *fx = fx_pinned("0-4");
	struct tw_topo *topo = open_synthetic("pack:1 core:8 pu:1", s);

	(void)state;
	check(fx, topo);
	expect(fx, TW_CFG_WARNING, CFG, fx_line_of(fx->config_text, "capture_a = 1"),
	       "lcores.capture_a = 1: cpu 1 not nohz_full (nohz_full: none)");
	tw_topo_close(topo);
	sysfs_free(s);
	fx_free(fx);
}

static void isolated_passes(void **state)
{
	struct sysfs *s = sysfs_new("1-4\n", "1-4\n", NULL);
	struct fx *fx = fx_pinned("0-4");
	struct tw_topo *topo = open_synthetic("pack:1 core:8 pu:1", s);

	(void)state;
	fx_replace(&fx->config_text, "require_isolation = false", "require_isolation = true");
	check(fx, topo);
	expect_none(fx, "isolated");
	expect_none(fx, "nohz_full");
	assert_int_equal(fx->findings.errors, 0);
	tw_topo_close(topo);
	sysfs_free(s);
	fx_free(fx);
}

static void sibling_not_isolated(void **state)
{
	struct sysfs *s = sysfs_new("2,4,6,8", "2,4,6,8", NULL);
	struct fx *fx = fx_pinned("0@0,1@2,2@4,3@6,4@8");
	struct tw_topo *topo = open_synthetic("pack:1 core:6 pu:2", s);

	(void)state;
	check(fx, topo);
	expect(fx, TW_CFG_WARNING, CFG, fx_line_of(fx->config_text, "decode = 3"),
	       "lcores.decode = 3 (cpu 6): hyperthread sibling cpu 7 is not isolated");
	tw_topo_close(topo);
	sysfs_free(s);
	fx_free(fx);
}

/* The shipped colo-example profile. */
static struct tw_cfg *load_colo(struct tw_cfg_findings *findings)
{
	char ports[512], config[512];
	struct tw_cfg *cfg;

	fx_source_path(ports, sizeof(ports), "dpdk-config/colo-example/ports.ini");
	fx_source_path(config, sizeof(config), "dpdk-config/colo-example/tickwire.cfg");
	cfg = tw_cfg_load(ports, config, findings);
	assert_non_null(cfg);
	tw_cfg_findings_init(findings);
	return cfg;
}

static void colo_example_passes_on_its_machine(void **state)
{
	struct sysfs *s = sysfs_new("2-5,18-21\n", "2-5,18-21\n",
				    "0000:3b:00.0=0,0000:3b:00.1=0");
	struct tw_cfg_findings *findings = calloc(1, sizeof(*findings));
	struct tw_topo *topo = open_synthetic(COLO_TOPOLOGY, s);
	struct tw_cfg *cfg;

	(void)state;
	assert_non_null(findings);
	cfg = load_colo(findings);
	assert_int_equal(tw_topo_check(topo, cfg, findings), 0);
	assert_int_equal(findings->errors, 0);
	assert_int_equal(findings->warnings, 0);
	tw_cfg_free(cfg);
	tw_topo_close(topo);
	sysfs_free(s);
	free(findings);
}

static void colo_example_fails_elsewhere(void **state)
{
	/* not isolated, and NIC on the wrong node: every hot lcore is refused */
	struct sysfs *s = sysfs_new("", "", "0000:3b:00.0=1,0000:3b:00.1=1");
	struct tw_cfg_findings *findings = calloc(1, sizeof(*findings));
	struct tw_topo *topo = open_synthetic(COLO_TOPOLOGY, s);
	struct tw_cfg *cfg;

	(void)state;
	assert_non_null(findings);
	cfg = load_colo(findings);
	assert_int_equal(tw_topo_check(topo, cfg, findings), 0);
	/* 4 hot lcores not isolated; capture A, capture B and decode off the NIC's node */
	assert_int_equal(findings->errors, 4 + 3);
	tw_cfg_free(cfg);
	tw_topo_close(topo);
	sysfs_free(s);
	free(findings);
}

static void colo_example_kernel_command_line(void **state)
{
	struct tw_cfg_findings *findings = calloc(1, sizeof(*findings));
	struct tw_topo *topo = open_synthetic(COLO_TOPOLOGY, NULL);
	struct tw_topo_tuning tuning;
	char shell[2048];
	struct tw_cfg *cfg;

	(void)state;
	assert_non_null(findings);
	cfg = load_colo(findings);
	assert_int_equal(tw_topo_tuning(topo, cfg, &tuning, findings), 0);
	/* hot lcores on cpus 2-5; their siblings 18-21 are isolated with them; main's
	 * cpu 0, cpu 1 and socket 1 stay with the kernel; ~278 MiB -> one 1G page per
	 * node, two nodes */
	assert_string_equal(tuning.cmdline,
			    "isolcpus=managed_irq,domain,2-5,18-21 nohz_full=2-5,18-21 "
			    "rcu_nocbs=2-5,18-21 irqaffinity=0-1,6-17,22-31 "
			    "default_hugepagesz=1G hugepagesz=1G hugepages=2 "
			    "processor.max_cstate=1 intel_idle.max_cstate=0");
	assert_true(tw_topo_tuning_format(&tuning, TW_TOPO_FORMAT_SHELL, shell,
					  sizeof(shell)) < (int)sizeof(shell));
	assert_string_equal(shell,
			    "TW_KERNEL_CMDLINE='isolcpus=managed_irq,domain,2-5,18-21 "
			    "nohz_full=2-5,18-21 rcu_nocbs=2-5,18-21 irqaffinity=0-1,6-17,22-31 "
			    "default_hugepagesz=1G hugepagesz=1G hugepages=2 "
			    "processor.max_cstate=1 intel_idle.max_cstate=0'\n"
			    "TW_ISOLATED_CPUS='2-5,18-21'\n"
			    "TW_HOUSEKEEPING_CPUS='0-1,6-17,22-31'\n"
			    "TW_LCORE_CPUS='0,2-5'\n"
			    "TW_HUGEPAGE_SIZE='1G'\n"
			    "TW_HUGEPAGES='2'\n"
			    "TW_MAX_CSTATE='1'\n"
			    "TUNED_ISOLATED_CORES='2-5,18-21'\n"
			    "TUNED_NO_BALANCE_CORES='2-5,18-21'\n");
	assert_int_equal(findings->errors, 0);
	tw_cfg_free(cfg);
	tw_topo_close(topo);
	free(findings);
}

static void demo_isolates_nothing(void **state)
{
	char ports[512], config[512];
	struct tw_cfg_findings *findings = calloc(1, sizeof(*findings));
	struct tw_topo *topo = open_synthetic("pack:1 core:2 pu:1", NULL);
	struct tw_topo_tuning tuning;
	struct tw_cfg *cfg;

	(void)state;
	assert_non_null(findings);
	fx_source_path(ports, sizeof(ports), "dpdk-config/demo/ports.ini");
	fx_source_path(config, sizeof(config), "dpdk-config/demo/tickwire.cfg");
	cfg = tw_cfg_load(ports, config, findings);
	assert_non_null(cfg);
	assert_int_equal(tw_topo_tuning(topo, cfg, &tuning, findings), 0);
	/* every lcore floats over cpus 0-1 with main: nothing can be isolated */
	assert_string_equal(tuning.cmdline, "default_hugepagesz=2M hugepagesz=2M hugepages=102 "
			    "processor.max_cstate=1 intel_idle.max_cstate=0");
	assert_int_equal(tw_cfg_cpuset_count(&tuning.isolated), 0);
	assert_int_equal(tw_topo_check(topo, cfg, findings), 0);
	assert_int_equal(findings->errors, 0);
	tw_cfg_free(cfg);
	tw_topo_close(topo);
	free(findings);
}

static void one_thread_checks_decode_only(void **state)
{
	struct fx *fx = fx_pinned("0-4");
	struct tw_topo *topo = open_xml("numa2-nic.xml", NULL);

	(void)state;
	use_pci(fx);
	fx_replace(&fx->config_text, "topology = \"two-stage\";", "topology = \"one-thread\";");
	check(fx, topo);
	/* the captures do not run: only decode (lcore 3, node 0) is off the NIC's node */
	expect(fx, TW_CFG_ERROR, CFG, fx_line_of(fx->config_text, "decode = 3"), "NUMA node 0");
	assert_int_equal(fx->findings.errors, 1);
	tw_topo_close(topo);
	fx_free(fx);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(open_synthetic_topology),
		cmocka_unit_test(open_errors),
		cmocka_unit_test(lcore_on_missing_cpu),
		cmocka_unit_test(lcore_mapped_to_missing_cpu),
		cmocka_unit_test(hyperthread_siblings),
		cmocka_unit_test(distinct_cores_pass),
		cmocka_unit_test(floating_lcore),
		cmocka_unit_test(nic_on_other_numa_node),
		cmocka_unit_test(nic_on_local_numa_node),
		cmocka_unit_test(numa_warning_when_not_required),
		cmocka_unit_test(pci_device_missing),
		cmocka_unit_test(pci_numa_node_from_sysfs),
		cmocka_unit_test(vdev_has_no_numa_node),
		cmocka_unit_test(not_isolated),
		cmocka_unit_test(isolated_but_not_nohz),
		cmocka_unit_test(isolated_passes),
		cmocka_unit_test(sibling_not_isolated),
		cmocka_unit_test(colo_example_passes_on_its_machine),
		cmocka_unit_test(colo_example_fails_elsewhere),
		cmocka_unit_test(colo_example_kernel_command_line),
		cmocka_unit_test(demo_isolates_nothing),
		cmocka_unit_test(one_thread_checks_decode_only),
	};

	TW_RUN_TESTS(argc, argv, tests);
}
