/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * tw_cfg_load(): ports.ini, then tickwire.cfg, then the checks that need
 * both. Each stage reports everything it can; a later stage skips only what
 * an earlier failure makes meaningless (no lcore cross-check without a
 * parsed eal.lcores, and so on).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_pvt.h"

#define MIB (UINT64_C(1) << 20)
#define EAL_OVERHEAD (128 * MIB)
#define MBUF_OVERHEAD 192u      /* struct rte_mbuf (128) + mempool object header (64) */
#define DESC_BYTES 64u          /* hardware descriptor + software ring entry, generously */

static const char *const role_names[TW_CFG_ROLE_COUNT] = {
	"main", "capture_a", "capture_b", "decode", "order_out",
};

const char *tw_cfg_role_name(enum tw_cfg_role role)
{
	return (unsigned int)role < TW_CFG_ROLE_COUNT ? role_names[role] : "?";
}

bool tw_cfg_role_is_hot(enum tw_cfg_role role)
{
	return role != TW_CFG_ROLE_MAIN && (unsigned int)role < TW_CFG_ROLE_COUNT;
}

bool tw_cfg_role_used(const struct tw_cfg *cfg, enum tw_cfg_role role)
{
	if ((unsigned int)role >= TW_CFG_ROLE_COUNT)
		return false;
	if (role == TW_CFG_ROLE_CAPTURE_A || role == TW_CFG_ROLE_CAPTURE_B)
		return cfg->topology == TW_CFG_TOPOLOGY_TWO_STAGE;
	return true;
}

size_t tw_cfg_port_rx_pcap(const struct tw_cfg_port *port, char *out, size_t cap)
{
	const char *p = port->kind == TW_CFG_PORT_PCI ? NULL : strstr(port->device, "rx_pcap=");
	size_t n;

	if (cap == 0)
		return 0;
	out[0] = '\0';
	if (p == NULL)
		return 0;
	p += strlen("rx_pcap=");
	n = strcspn(p, ",");
	if (n >= cap)
		n = cap - 1;
	memcpy(out, p, n);
	out[n] = '\0';
	return n;
}

bool tw_cfg_lcore_defined(const struct tw_cfg *cfg, unsigned int lcore)
{
	return lcore < TW_CFG_MAX_LCORES &&
	       (cfg->eal.lcore_defined[lcore / 64] >> (lcore % 64) & 1) != 0;
}

uint64_t tw_cfg_memory_bytes(const struct tw_cfg *cfg)
{
	uint64_t bytes = EAL_OVERHEAD;
	uint32_t i;

	bytes += (uint64_t)cfg->mempool.mbufs * (cfg->mempool.data_room + MBUF_OVERHEAD);
	for (i = 0; i < cfg->n_ports; i++) {
		const struct tw_cfg_port *p = &cfg->ports[i];

		bytes += ((uint64_t)p->rx_queues * p->rx_desc +
			  (uint64_t)p->tx_queues * p->tx_desc) * DESC_BYTES;
	}
	if (cfg->topology == TW_CFG_TOPOLOGY_TWO_STAGE &&
	    cfg->capture_to_decode.type == TW_CFG_QUEUE_RTE_RING)
		bytes += (uint64_t)cfg->capture_to_decode.capacity * 8 + 128;
	return bytes;
}

static struct tw_cfg_finding *error_in(struct tw_cfg__load *ld, const char *file, uint32_t line,
				       const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static struct tw_cfg_finding *error_in(struct tw_cfg__load *ld, const char *file, uint32_t line,
				       const char *fmt, ...)
{
	struct tw_cfg_finding *f;
	va_list ap;

	va_start(ap, fmt);
	f = tw_cfg_findings_addv(ld->findings, TW_CFG_ERROR, file, line, fmt, ap);
	va_end(ap);
	return f;
}

/* Two-stage: capture A and capture B must not poll the same rx queue. */
static void check_capture_queues(struct tw_cfg__load *ld)
{
	const struct tw_cfg *cfg = ld->cfg;
	struct tw_cfg_finding *f;
	uint32_t i, j;

	if (cfg->topology != TW_CFG_TOPOLOGY_TWO_STAGE)
		return;
	for (i = 0; i < cfg->n_feeds; i++) {
		const struct tw_cfg_feed *b = &cfg->feeds[i];

		if (b->kind != TW_CFG_FEED_INCREMENTAL || b->side != TW_CFG_SIDE_B)
			continue;
		for (j = 0; j < cfg->n_feeds; j++) {
			const struct tw_cfg_feed *a = &cfg->feeds[j];

			if (a->kind != TW_CFG_FEED_INCREMENTAL || a->side != TW_CFG_SIDE_A ||
			    a->port != b->port || a->rx_queue != b->rx_queue)
				continue;
			f = error_in(ld, cfg->ports_path,
				     b->rx_queue_line != 0 ? b->rx_queue_line : b->section_line,
				     "[feed.%s] (B) arrives on port %s rx queue %u, which "
				     "capture A polls for [feed.%s] (line %u)", b->name,
				     cfg->ports[b->port].name, b->rx_queue, a->name,
				     a->section_line);
			tw_cfg_finding_hint(f, "topology \"two-stage\" (%s:%u) needs feed B on "
					    "its own rx queue or port; or use \"one-thread\"",
					    cfg->config_path, cfg->topology_line);
			break;
		}
	}
}

static void check_recovery(struct tw_cfg__load *ld)
{
	const struct tw_cfg *cfg = ld->cfg;
	struct tw_cfg_finding *f;
	uint32_t i, j;

	if (cfg->recovery.mode != TW_CFG_RECOVERY_SNAPSHOT)
		return;
	for (i = 0; i < cfg->n_feeds; i++) {
		const struct tw_cfg_feed *inc = &cfg->feeds[i];
		bool seen = false;

		if (inc->kind != TW_CFG_FEED_INCREMENTAL)
			continue;
		for (j = 0; j < i; j++)
			if (cfg->feeds[j].kind == TW_CFG_FEED_INCREMENTAL &&
			    cfg->feeds[j].channel == inc->channel)
				seen = true;
		for (j = 0; j < cfg->n_feeds && !seen; j++)
			if (cfg->feeds[j].kind == TW_CFG_FEED_SNAPSHOT &&
			    cfg->feeds[j].channel == inc->channel)
				seen = true;
		if (seen)
			continue;
		f = error_in(ld, cfg->config_path, cfg->recovery.mode_line,
			     "recovery.mode = \"snapshot\": channel %u has no snapshot feed in %s",
			     inc->channel, cfg->ports_path);
		tw_cfg_finding_hint(f, "add a [feed.NAME] with kind = snapshot for channel %u, or "
				    "set recovery.mode = \"none\"", inc->channel);
	}
}

/* book.mbo.channels: each one a channel of an incremental feed. */
static void check_mbo(struct tw_cfg__load *ld)
{
	const struct tw_cfg *cfg = ld->cfg;
	const struct tw_cfg_mbo *m = &cfg->book.mbo;
	struct tw_cfg_finding *f;
	uint32_t i, j;

	for (i = 0; i < m->n_channels; i++) {
		for (j = 0; j < cfg->n_feeds; j++)
			if (cfg->feeds[j].kind == TW_CFG_FEED_INCREMENTAL &&
			    cfg->feeds[j].channel == m->channels[i])
				break;
		if (j < cfg->n_feeds)
			continue;
		f = error_in(ld, cfg->config_path, m->channels_line,
			     "book.mbo.channels: channel %u has no incremental feed in %s",
			     m->channels[i], cfg->ports_path);
		tw_cfg_finding_hint(f, "list channels of ports.ini's [feed.NAME] sections with "
				    "kind = incremental, or remove %u", m->channels[i]);
	}
}

static void check_memory(struct tw_cfg__load *ld)
{
	const struct tw_cfg *cfg = ld->cfg;
	const struct tw_cfg_eal *eal = &cfg->eal;
	uint64_t need = tw_cfg_memory_bytes(cfg), rx = 0, all = 0;
	uint32_t i, hot = 0;
	struct tw_cfg_finding *f;

	if (eal->no_huge && eal->memory_mb != 0 && (uint64_t)eal->memory_mb * MIB < need) {
		f = error_in(ld, cfg->ports_path, eal->memory_mb_line,
			     "[eal] memory_mb = %u: the mempool and rings need %" PRIu64 " MiB",
			     eal->memory_mb, (need + MIB - 1) / MIB);
		tw_cfg_finding_hint(f, "raise memory_mb, set 0 to use the estimate, or shrink "
				    "[mempool] mbufs");
	}
	if (!eal->no_huge && eal->hugepages != 0 &&
	    (uint64_t)eal->hugepages * eal->hugepage_size < need) {
		f = error_in(ld, cfg->ports_path, eal->hugepages_line,
			     "[eal] hugepages = %u: %u x %s is less than the %" PRIu64 " MiB "
			     "needed", eal->hugepages, eal->hugepages,
			     eal->hugepage_size >= (UINT64_C(1) << 30) ? "1G" : "2M",
			     (need + MIB - 1) / MIB);
		tw_cfg_finding_hint(f, "set hugepages = 0 to derive the count");
	}
	for (i = 0; i < cfg->n_ports; i++) {
		const struct tw_cfg_port *p = &cfg->ports[i];

		rx += (uint64_t)p->rx_queues * p->rx_desc;
		all += (uint64_t)p->rx_queues * p->rx_desc + (uint64_t)p->tx_queues * p->tx_desc;
	}
	for (i = 0; i < TW_CFG_ROLE_COUNT; i++)
		if (tw_cfg_role_used(cfg, (enum tw_cfg_role)i))
			hot++;
	all += (uint64_t)hot * cfg->mempool.cache;
	if (cfg->topology == TW_CFG_TOPOLOGY_TWO_STAGE)
		all += cfg->capture_to_decode.capacity;
	if (cfg->mempool.mbufs < rx) {
		f = error_in(ld, cfg->ports_path, cfg->mempool.mbufs_line != 0 ?
			     cfg->mempool.mbufs_line : cfg->mempool.section_line,
			     "[mempool] mbufs = %u: the rx rings alone hold %" PRIu64,
			     cfg->mempool.mbufs, rx);
		tw_cfg_finding_hint(f, "rx queue setup would fail; raise mbufs to at least "
				    "%" PRIu64 " (2^n - 1 is best)", all);
	} else if (cfg->mempool.mbufs < all) {
		f = tw_cfg_findings_add(ld->findings, TW_CFG_WARNING, cfg->ports_path,
					cfg->mempool.mbufs_line != 0 ? cfg->mempool.mbufs_line :
					cfg->mempool.section_line,
					"[mempool] mbufs = %u: rings, lcore caches and the "
					"hand-off can hold %" PRIu64, cfg->mempool.mbufs, all);
		tw_cfg_finding_hint(f, "the pool may run dry under load; raise mbufs");
	}
}

struct tw_cfg *tw_cfg_load(const char *ports_path, const char *config_path,
			   struct tw_cfg_findings *findings)
{
	struct tw_cfg__load ld = { .findings = findings };
	struct tw_cfg *cfg;

	if (ports_path == NULL || config_path == NULL || findings == NULL) {
		errno = EINVAL;
		return NULL;
	}
	cfg = calloc(1, sizeof(*cfg));
	if (cfg == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	ld.cfg = cfg;
	ld.errors_at_start = findings->errors;
	if (!tw_cfg__copy(cfg->ports_path, sizeof(cfg->ports_path), ports_path) ||
	    !tw_cfg__copy(cfg->config_path, sizeof(cfg->config_path), config_path)) {
		tw_cfg_findings_add(findings, TW_CFG_ERROR, NULL, 0, "path longer than %u bytes",
				    TW_CFG_PATH_MAX - 1);
		free(cfg);
		errno = EINVAL;
		return NULL;
	}
	tw_cfg__load_ports(&ld);
	tw_cfg__load_config(&ld);
	if (ld.ports_read && ld.config_read) {
		if (ld.port_list_ok) {
			check_capture_queues(&ld);
			check_recovery(&ld);
			check_mbo(&ld);
		}
		if (ld.port_list_ok && findings->errors == ld.errors_at_start)
			check_memory(&ld);
	}
	if (findings->errors != ld.errors_at_start) {
		free(cfg);
		errno = EINVAL;
		return NULL;
	}
	return cfg;
}

void tw_cfg_free(struct tw_cfg *cfg)
{
	free(cfg);
}

struct argv_builder {
	struct tw_cfg_argv *out;
	size_t used;
	bool overflow;
};

static void push(struct argv_builder *b, const char *arg, size_t len)
{
	struct tw_cfg_argv *out = b->out;

	if (b->overflow || out->argc >= TW_CFG_MAX_ARGV ||
	    b->used + len + 1 > sizeof(out->storage)) {
		b->overflow = true;
		return;
	}
	memcpy(out->storage + b->used, arg, len);
	out->storage[b->used + len] = '\0';
	out->argv[out->argc++] = out->storage + b->used;
	out->argv[out->argc] = NULL;
	b->used += len + 1;
}

static void push_str(struct argv_builder *b, const char *arg)
{
	push(b, arg, strlen(arg));
}

int tw_cfg_eal_argv(const struct tw_cfg *cfg, const char *prog, struct tw_cfg_argv *out)
{
	struct argv_builder b = { .out = out };
	char number[24];
	const char *p;
	uint32_t i;

	if (cfg == NULL || prog == NULL || out == NULL)
		return -EINVAL;
	out->argc = 0;
	out->argv[0] = NULL;
	push_str(&b, prog);
	push_str(&b, "--lcores");
	push_str(&b, cfg->eal.lcores);
	push_str(&b, "--main-lcore");
	snprintf(number, sizeof(number), "%d", cfg->lcores[TW_CFG_ROLE_MAIN].id);
	push_str(&b, number);
	push_str(&b, "--file-prefix");
	push_str(&b, cfg->eal.file_prefix);
	if (cfg->eal.no_huge) {
		uint64_t mb = cfg->eal.memory_mb != 0 ? cfg->eal.memory_mb :
			      (tw_cfg_memory_bytes(cfg) + MIB - 1) / MIB;

		push_str(&b, "--no-huge");
		push_str(&b, "-m");
		snprintf(number, sizeof(number), "%" PRIu64, mb);
		push_str(&b, number);
	} else if (cfg->eal.memory_mb != 0) {
		push_str(&b, "-m");
		snprintf(number, sizeof(number), "%u", cfg->eal.memory_mb);
		push_str(&b, number);
	}
	if (cfg->eal.no_pci)
		push_str(&b, "--no-pci");
	if (cfg->eal.huge_dir[0] != '\0') {
		push_str(&b, "--huge-dir");
		push_str(&b, cfg->eal.huge_dir);
	}
	for (i = 0; i < cfg->n_ports; i++) {
		push_str(&b, cfg->ports[i].kind == TW_CFG_PORT_PCI ? "-a" : "--vdev");
		push_str(&b, cfg->ports[i].device);
	}
	for (p = cfg->eal.args; *p != '\0';) {
		size_t len;

		p += strspn(p, " \t\r\n\v\f");
		len = strcspn(p, " \t\r\n\v\f");
		if (len == 0)
			break;
		push(&b, p, len);
		p += len;
	}
	return b.overflow ? -E2BIG : 0;
}
