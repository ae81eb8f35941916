/* SPDX-License-Identifier: BSD-3-Clause
 * libFuzzer harness of the profile parsers (lib/config), built twice:
 *   fuzz_config_ini (-DFUZZ_CONFIG_PORTS=1): the input is ports.ini (the
 *     strict line scanner, then iniparser), tickwire.cfg is the partner;
 *   fuzz_config_cfg (-DFUZZ_CONFIG_PORTS=0): the input is tickwire.cfg (the
 *     lexical pre-check, then libconfig), ports.ini is the partner.
 * The partner is the other file of dpdk-config/colo-example, so an input
 * runs everything tickwire-check runs: tw_cfg_load() (both files, then the
 * checks across them), tw_topo_check() and tw_topo_tuning() against the
 * hwloc XML tests/config/data/numa2-nic.xml (the colo NICs on node 1) with a
 * sysfs that isolates cpus 2-5, the tuning formatted as text and shell,
 * the findings sorted and formatted, and the EAL argv of the profile.  The
 * library reads files only, so the input is written to a file in the
 * process's scratch directory (tmpfs) first; the two 1 MiB read buffers are
 * recycled (see __wrap_malloc below).  A finding found by the
 * harness replays with
 *   tickwire-check --ports FILE --config dpdk-config/colo-example/tickwire.cfg
 *                  --topology tests/config/data/numa2-nic.xml
 * (or the other way round).  Besides ASan/UBSan findings (the library and
 * lib/topo are compiled into the harness) it aborts when a promise of
 * tw_config.h / tw_topo.h is broken:
 *   - tw_cfg_load() returns a profile exactly when it reported no error, and
 *     NULL with errno EINVAL otherwise; the finding counters add up;
 *   - every finding names the input, the partner or no file, a line that
 *     exists in it, a non-empty message; all its strings are terminated;
 *     formatting is snprintf-like (a short buffer truncates, the length is
 *     the same); sorting orders by file, then line, file-less ones last;
 *   - a loaded profile keeps the rules the header states (ports, feeds and
 *     their queues, lcores defined in eal.lcores and not shared, hand-off
 *     capacities and shards powers of two, instruments distinct, the
 *     imbalance ratio above 1, memory and hugepages enough, ...);
 *   - the topology calls return what their contract lists; the shell
 *     tuning is KEY='VALUE' lines without a quote in a value; the EAL argv
 *     ends with NULL and points into its storage.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "config_pvt.h"
#include "fuzz_common.h"
#include "tw_config.h"
#include "tw_topo.h"

#ifndef FUZZ_CONFIG_PORTS
#error "build with -DFUZZ_CONFIG_PORTS=1 (input is ports.ini) or 0 (tickwire.cfg)"
#endif
#ifndef FUZZ_SOURCE_ROOT
#error "build with -DFUZZ_SOURCE_ROOT=\"...\" (the profile and topology are read there)"
#endif

#define MIB (UINT64_C(1) << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
void *__real_malloc(size_t size);
void __real_free(void *block);
void *__wrap_malloc(size_t size);
void __wrap_free(void *block);

/*
 * Both parsers read their file into a fresh malloc(1 MiB + 1) block
 * (TW_CFG__INI_MAX_BYTES, CFG_MAX_BYTES).  Under ASan a block that large is
 * mapped, its shadow poisoned, quarantined and unmapped on every call: a
 * third of an execution.  Linked with -Wl,--wrap=malloc,--wrap=free, the
 * harness hands the same two blocks out again instead; they are ordinary
 * ASan heap blocks of that size, so a read past one is still caught.
 */
#define READ_BLOCK_SIZE ((size_t)TW_CFG__INI_MAX_BYTES + 1)

static void *read_blocks[2];
static bool read_block_used[2];

void *
__wrap_malloc(size_t size)
{
	size_t i;

	for (i = 0; size == READ_BLOCK_SIZE && i < 2; i++) {
		if (read_blocks[i] != NULL && !read_block_used[i]) {
			read_block_used[i] = true;
			return read_blocks[i];
		}
	}
	return __real_malloc(size);
}

void
__wrap_free(void *block)
{
	size_t i;

	for (i = 0; block != NULL && i < 2; i++) {
		if (block == read_blocks[i]) {
			read_block_used[i] = false;
			return;
		}
	}
	__real_free(block);
}

static struct {
	char input[300];               /* where the input is written */
	char partner[300];             /* the other file of the profile */
	uint32_t input_lines, partner_lines;
	struct tw_topo *topo;
} fz;

static struct tw_cfg_findings findings;
static struct tw_topo_tuning tuning;
static struct tw_cfg_argv argv_out;
static char text[16384];

static uint32_t
count_lines(const void *data, size_t size)
{
	const char *p = data, *end = p + size;
	uint32_t lines = 1;

	while ((p = memchr(p, '\n', (size_t)(end - p))) != NULL) {
		lines++;
		p++;
	}
	return lines;
}

static void
setup(void)
{
	const char *root = getenv("TW_SOURCE_ROOT") != NULL ? getenv("TW_SOURCE_ROOT") :
		FUZZ_SOURCE_ROOT;
	const char *dir = fuzz_tmpdir();
	static const char *const sysfs_dirs[] = {
		"", "/devices", "/devices/system", "/devices/system/cpu",
	};
	struct tw_topo_opts opts = { .source = TW_TOPO_SOURCE_XML };
	char path[320], topology[300], sysfs[256];
	FILE *f;
	size_t n, i;

	snprintf(fz.input, sizeof(fz.input), "%s/%s", dir,
			FUZZ_CONFIG_PORTS ? "ports.ini" : "tickwire.cfg");
	snprintf(fz.partner, sizeof(fz.partner), "%s/dpdk-config/colo-example/%s", root,
			FUZZ_CONFIG_PORTS ? "tickwire.cfg" : "ports.ini");
	f = fopen(fz.partner, "rb");
	FUZZ_CHECK(f != NULL);
	n = fread(text, 1, sizeof(text), f);
	fclose(f);
	fz.partner_lines = count_lines(text, n);
	/* a sysfs in which the colo profile's hot cpus 2-5 are isolated */
	snprintf(sysfs, sizeof(sysfs), "%s/sys", dir);
	for (i = 0; i < sizeof(sysfs_dirs) / sizeof(sysfs_dirs[0]); i++) {
		snprintf(path, sizeof(path), "%s%s", sysfs, sysfs_dirs[i]);
		FUZZ_CHECK(mkdir(path, 0755) == 0 || errno == EEXIST);
	}
	snprintf(path, sizeof(path), "%s/devices/system/cpu/isolated", sysfs);
	fuzz_write_file(path, "2-5\n", 4, 0644);
	snprintf(path, sizeof(path), "%s/devices/system/cpu/nohz_full", sysfs);
	fuzz_write_file(path, "2-5\n", 4, 0644);
	snprintf(topology, sizeof(topology), "%s/tests/config/data/numa2-nic.xml", root);
	opts.arg = topology;
	opts.sysfs_root = sysfs;
	fz.topo = tw_topo_open(&opts);
	FUZZ_CHECK(fz.topo != NULL);
	for (i = 0; i < 2; i++) {
		read_blocks[i] = __real_malloc(READ_BLOCK_SIZE);
		FUZZ_CHECK(read_blocks[i] != NULL);
	}
}

static bool
terminated(const char *s, size_t size)
{
	return memchr(s, '\0', size) != NULL;
}

static void
check_findings(void)
{
	char small[16];
	uint32_t i;
	int length;

	FUZZ_CHECK(findings.count <= TW_CFG_MAX_FINDINGS);
	FUZZ_CHECK(findings.errors + findings.warnings + findings.infos ==
			findings.count + findings.dropped);
	FUZZ_CHECK(findings.dropped == 0 || findings.count == TW_CFG_MAX_FINDINGS);
	tw_cfg_findings_sort(&findings);
	for (i = 0; i < findings.count; i++) {
		const struct tw_cfg_finding *f = &findings.item[i];

		FUZZ_CHECK(f->severity <= TW_CFG_ERROR);
		FUZZ_CHECK(terminated(f->file, sizeof(f->file)) &&
				terminated(f->message, sizeof(f->message)) &&
				terminated(f->hint, sizeof(f->hint)));
		FUZZ_CHECK(f->message[0] != '\0');
		if (strcmp(f->file, fz.input) == 0)
			FUZZ_CHECK(f->line <= fz.input_lines);
		else if (strcmp(f->file, fz.partner) == 0)
			FUZZ_CHECK(f->line <= fz.partner_lines);
		else
			FUZZ_CHECK(f->file[0] == '\0' && f->line == 0);
		/* sorted: by file name, then line; findings without a file last */
		if (i > 0 && f->file[0] != '\0')
			FUZZ_CHECK(strcmp(findings.item[i - 1].file, f->file) < 0 ||
					(strcmp(findings.item[i - 1].file, f->file) == 0 &&
					 findings.item[i - 1].line <= f->line));
		length = tw_cfg_finding_format(f, text, sizeof(text));
		FUZZ_CHECK(length > 0 && (size_t)length < sizeof(text) &&
				strlen(text) == (size_t)length);
		FUZZ_CHECK(tw_cfg_finding_format(f, small, sizeof(small)) == length);
		FUZZ_CHECK(strncmp(small, text, sizeof(small) - 1) == 0 &&
				strlen(small) == sizeof(small) - 1);
		FUZZ_CHECK(strcmp(tw_cfg_severity_name(f->severity), "?") != 0);
	}
}

static bool
is_pow2(uint64_t v)
{
	return v != 0 && (v & (v - 1)) == 0;
}

static void
check_ports(const struct tw_cfg *cfg)
{
	uint64_t rx = 0;
	char pcap[TW_CFG_PATH_MAX];
	uint32_t i, j;

	FUZZ_CHECK(cfg->n_ports >= 1 && cfg->n_ports <= TW_CFG_MAX_PORTS);
	FUZZ_CHECK(cfg->n_feeds >= 1 && cfg->n_feeds <= TW_CFG_MAX_FEEDS);
	FUZZ_CHECK(terminated(cfg->eal.lcores, sizeof(cfg->eal.lcores)) &&
			terminated(cfg->eal.file_prefix, sizeof(cfg->eal.file_prefix)) &&
			terminated(cfg->eal.huge_dir, sizeof(cfg->eal.huge_dir)) &&
			terminated(cfg->eal.args, sizeof(cfg->eal.args)));
	FUZZ_CHECK(cfg->eal.hugepage_size == 2 * MIB || cfg->eal.hugepage_size == 1024 * MIB);
	FUZZ_CHECK((uint64_t)cfg->mempool.cache * 3 <= (uint64_t)cfg->mempool.mbufs * 2);
	for (i = 0; i < cfg->n_ports; i++) {
		const struct tw_cfg_port *p = &cfg->ports[i];

		FUZZ_CHECK(terminated(p->name, sizeof(p->name)) && p->name[0] != '\0' &&
				terminated(p->device, sizeof(p->device)) &&
				terminated(p->devname, sizeof(p->devname)) &&
				p->devname[0] != '\0');
		FUZZ_CHECK(p->rx_queues + p->tx_queues > 0);
		FUZZ_CHECK(p->kind == TW_CFG_PORT_VDEV || !cfg->eal.no_pci);
		FUZZ_CHECK(tw_cfg_port_rx_pcap(p, pcap, sizeof(pcap)) == strlen(pcap));
		for (j = 0; j < i; j++)
			FUZZ_CHECK(strcmp(cfg->ports[j].name, p->name) != 0 &&
					strcmp(cfg->ports[j].devname, p->devname) != 0);
		rx += (uint64_t)p->rx_queues * p->rx_desc;
	}
	FUZZ_CHECK(cfg->mempool.mbufs >= rx);
	for (i = 0; i < cfg->n_feeds; i++) {
		const struct tw_cfg_feed *f = &cfg->feeds[i];
		struct in_addr group;

		FUZZ_CHECK(f->port < cfg->n_ports && f->rx_queue < cfg->ports[f->port].rx_queues);
		FUZZ_CHECK(inet_pton(AF_INET, f->group_text, &group) == 1 &&
				group.s_addr == f->group && ntohl(f->group) >> 28 == 0xe);
		for (j = 0; j < i; j++)
			FUZZ_CHECK(cfg->feeds[j].group != f->group ||
					cfg->feeds[j].udp_port != f->udp_port);
	}
}

static void
check_config(const struct tw_cfg *cfg)
{
	const struct tw_cfg_handoff *handoffs[] = {
		&cfg->capture_to_decode, &cfg->signal_to_order_out,
	};
	struct in_addr gateway;
	uint64_t need = tw_cfg_memory_bytes(cfg);
	uint32_t i, j;

	for (i = 0; i < TW_CFG_ROLE_COUNT; i++) {
		if (!tw_cfg_role_used(cfg, (enum tw_cfg_role)i))
			continue;
		FUZZ_CHECK(cfg->lcores[i].id >= 0 &&
				tw_cfg_lcore_defined(cfg, (unsigned int)cfg->lcores[i].id));
		for (j = 0; j < i; j++)
			FUZZ_CHECK(!tw_cfg_role_used(cfg, (enum tw_cfg_role)j) ||
					cfg->lcores[j].id != cfg->lcores[i].id ||
					(i == TW_CFG_ROLE_CAPTURE_B && j == TW_CFG_ROLE_CAPTURE_A));
	}
	for (i = 0; i < 2; i++)
		FUZZ_CHECK(is_pow2(handoffs[i]->capacity) && is_pow2(handoffs[i]->shards) &&
				handoffs[i]->overflow <= TW_CFG_OVERFLOW_FAIL &&
				strcmp(tw_cfg_queue_type_name(handoffs[i]->type), "?") != 0);
	FUZZ_CHECK(cfg->signal_to_order_out.type != TW_CFG_QUEUE_RTE_RING);
	FUZZ_CHECK(strcmp(tw_cfg_topology_name(cfg->topology), "?") != 0);
	FUZZ_CHECK(cfg->arbitration.gap_wait_packets != 0 || cfg->arbitration.gap_wait_us != 0);
	FUZZ_CHECK(cfg->strategy.n_instruments <= TW_CFG_MAX_INSTRUMENTS);
	for (i = 0; i < cfg->strategy.n_instruments; i++) {
		FUZZ_CHECK(cfg->strategy.instruments[i] > 0);
		for (j = 0; j < i; j++)
			FUZZ_CHECK(cfg->strategy.instruments[j] != cfg->strategy.instruments[i]);
	}
	FUZZ_CHECK(cfg->strategy.imbalance_denominator == 0 ||
			cfg->strategy.imbalance_numerator > cfg->strategy.imbalance_denominator);
	FUZZ_CHECK(cfg->session.tx_port == -1 || (cfg->session.tx_port >= 0 &&
			(uint32_t)cfg->session.tx_port < cfg->n_ports &&
			cfg->ports[cfg->session.tx_port].tx_queues > 0));
	FUZZ_CHECK(terminated(cfg->session.gateway_host, sizeof(cfg->session.gateway_host)) &&
			terminated(cfg->session.session_id, sizeof(cfg->session.session_id)) &&
			terminated(cfg->session.firm_id, sizeof(cfg->session.firm_id)) &&
			terminated(cfg->session.file, sizeof(cfg->session.file)) &&
			terminated(cfg->latency_file, sizeof(cfg->latency_file)));
	FUZZ_CHECK(cfg->session.gateway_host[0] == '\0' ||
			inet_pton(AF_INET, cfg->session.gateway_host, &gateway) == 1);
	FUZZ_CHECK(cfg->poll.order_out_idle_sleep_us >= -1);
	FUZZ_CHECK(cfg->poll.order_out_nice >= -20 && cfg->poll.order_out_nice <= 19);
	FUZZ_CHECK(!cfg->eal.no_huge || cfg->eal.memory_mb == 0 ||
			(uint64_t)cfg->eal.memory_mb * MIB >= need);
	FUZZ_CHECK(cfg->eal.no_huge || cfg->eal.hugepages == 0 ||
			(uint64_t)cfg->eal.hugepages * cfg->eal.hugepage_size >= need);
}

/* What tickwire-check and the appliance run on a loaded profile. */
static void
use_profile(const struct tw_cfg *cfg)
{
	char *line, *quote, *end;
	int i, rc;

	check_ports(cfg);
	check_config(cfg);
	rc = tw_cfg_eal_argv(cfg, "tickwire", &argv_out);
	FUZZ_CHECK(rc == 0 || rc == -E2BIG);
	FUZZ_CHECK(argv_out.argc >= 1 && argv_out.argc <= TW_CFG_MAX_ARGV &&
			argv_out.argv[argv_out.argc] == NULL);
	for (i = 0; i < argv_out.argc; i++)
		FUZZ_CHECK(argv_out.argv[i] >= argv_out.storage &&
				argv_out.argv[i] + strlen(argv_out.argv[i]) <
				argv_out.storage + sizeof(argv_out.storage));
	FUZZ_CHECK(tw_topo_check(fz.topo, cfg, &findings) == 0);
	rc = tw_topo_tuning(fz.topo, cfg, &tuning, &findings);
	FUZZ_CHECK(rc == 0 || rc == -E2BIG);
	if (rc != 0)
		return;
	FUZZ_CHECK(terminated(tuning.cmdline, sizeof(tuning.cmdline)));
	rc = tw_topo_tuning_format(&tuning, TW_TOPO_FORMAT_TEXT, text, sizeof(text));
	FUZZ_CHECK(rc > 0 && (size_t)rc < sizeof(text));
	rc = tw_topo_tuning_format(&tuning, TW_TOPO_FORMAT_SHELL, text, sizeof(text));
	FUZZ_CHECK(rc > 0 && (size_t)rc < sizeof(text));
	for (line = text; *line != '\0'; line = end + 1) {
		end = strchr(line, '\n');
		FUZZ_CHECK(end != NULL);
		quote = strchr(line, '\'');
		FUZZ_CHECK(quote != NULL && quote > line && quote[-1] == '=' && end[-1] == '\'');
		FUZZ_CHECK(memchr(quote + 1, '\'', (size_t)(end - quote - 1)) == end - 1);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tw_cfg *cfg;
	uint32_t errors;

	if (data == NULL)
		return 0;
	if (fz.topo == NULL)
		setup();
	fuzz_write_file(fz.input, data, size, 0644);
	fz.input_lines = count_lines(data, size);
	tw_cfg_findings_init(&findings);
	errno = 0;
	cfg = FUZZ_CONFIG_PORTS ? tw_cfg_load(fz.input, fz.partner, &findings) :
		tw_cfg_load(fz.partner, fz.input, &findings);
	errors = findings.errors;
	FUZZ_CHECK((cfg == NULL) == (errors > 0));
	FUZZ_CHECK(cfg != NULL || errno == EINVAL);
	if (cfg != NULL)
		use_profile(cfg);
	check_findings();
	tw_cfg_free(cfg);
	return 0;
}
