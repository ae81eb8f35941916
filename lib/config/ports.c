/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * ports.ini: [eal], [mempool], [port.NAME] x 1..TW_CFG_MAX_PORTS,
 * [feed.NAME] x 1..TW_CFG_MAX_FEEDS. The structure (sections, keys, lines)
 * comes from ini_scan.c, the values from iniparser.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <iniparser/iniparser.h>

#include "config_pvt.h"

struct ports_ctx {
	struct tw_cfg__load *ld;
	struct tw_cfg *cfg;
	const char *path;
	struct tw_cfg__ini *ini;
	dictionary *dict;
	uint32_t errors;
};

/* iniparser prints its complaints through this; a library must not print,
 * and every problem iniparser reports, the scanner has already reported. */
static int silent_errback(const char *fmt, ...)
{
	(void)fmt;
	return 0;
}

static struct tw_cfg_finding *error_at(struct ports_ctx *pc, uint32_t line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static struct tw_cfg_finding *error_at(struct ports_ctx *pc, uint32_t line, const char *fmt, ...)
{
	struct tw_cfg_finding *f;
	va_list ap;

	pc->errors++;
	va_start(ap, fmt);
	f = tw_cfg_findings_addv(pc->ld->findings, TW_CFG_ERROR, pc->path, line, fmt, ap);
	va_end(ap);
	return f;
}

/* The value of [section] key, or NULL; *line gets its line (section's when absent). */
static const char *value_of(struct ports_ctx *pc, const char *section, const char *key,
			    uint32_t *line)
{
	char full[TW_CFG__SECTION_MAX + TW_CFG_NAME_MAX + 2];

	*line = tw_cfg__ini_line(pc->ini, section, key);
	if (*line == 0) {
		*line = tw_cfg__ini_line(pc->ini, section, NULL);
		return NULL;
	}
	snprintf(full, sizeof(full), "%s:%s", section, key);
	return iniparser_getstring(pc->dict, full, NULL);
}

static const struct tw_cfg_key *spec_of(const char *section, const char *key)
{
	const struct tw_cfg_key *spec = tw_cfg__key_find(TW_CFG_FILE_PORTS, section, key);

	/* every key the loader asks for is in the table: keys.c and this file agree */
	return spec;
}

/* A required key that is absent: reported at its section. */
static void missing(struct ports_ctx *pc, const char *section, const char *key, uint32_t line)
{
	struct tw_cfg_finding *f;

	f = error_at(pc, line, "[%s] is missing the required key %s", section, key);
	tw_cfg_finding_hint(f, "add \"%s = ...\" to [%s] (dpdk-config/README.md)", key, section);
}

static bool parse_int(const char *text, int64_t *out)
{
	char *end;
	long long v;

	if (text[0] == '\0' || (!isdigit((unsigned char)text[0]) && text[0] != '-'))
		return false;
	errno = 0;
	v = strtoll(text, &end, 10);
	if (errno != 0 || *end != '\0')
		return false;
	*out = v;
	return true;
}

/* Integer key: absent -> default (or missing error); checked against the schema range. */
static bool get_int(struct ports_ctx *pc, const char *section, const char *key, int64_t *out,
		    uint32_t *line_out)
{
	const struct tw_cfg_key *spec = spec_of(section, key);
	struct tw_cfg_finding *f;
	const char *text;
	uint32_t line;
	int64_t v;

	text = value_of(pc, section, key, &line);
	if (line_out != NULL)
		*line_out = text != NULL ? line : 0;
	if (text == NULL) {
		if (spec->required) {
			missing(pc, section, key, line);
			return false;
		}
		parse_int(spec->default_text, out);
		return true;
	}
	if (!parse_int(text, &v)) {
		f = error_at(pc, line, "[%s] %s = %s: not a decimal integer", section, key, text);
		tw_cfg_finding_hint(f, "write a plain number in %" PRId64 "..%" PRId64,
				    spec->min, spec->max);
		return false;
	}
	if (v < spec->min || v > spec->max) {
		f = error_at(pc, line, "[%s] %s = %s: out of range %" PRId64 "..%" PRId64,
			     section, key, text, spec->min, spec->max);
		tw_cfg_finding_hint(f, "see [%s] %s in dpdk-config/README.md", spec->section,
				    key);
		return false;
	}
	*out = v;
	return true;
}

static bool get_bool(struct ports_ctx *pc, const char *section, const char *key, bool *out,
		     uint32_t *line_out)
{
	const struct tw_cfg_key *spec = spec_of(section, key);
	struct tw_cfg_finding *f;
	const char *text;
	uint32_t line;

	text = value_of(pc, section, key, &line);
	if (line_out != NULL)
		*line_out = text != NULL ? line : 0;
	if (text == NULL)
		text = spec->default_text;
	if (strcmp(text, "true") == 0) {
		*out = true;
		return true;
	}
	if (strcmp(text, "false") == 0) {
		*out = false;
		return true;
	}
	f = error_at(pc, line, "[%s] %s = %s: not a boolean", section, key, text);
	tw_cfg_finding_hint(f, "write true or false");
	return false;
}

/* String key: absent -> default ("" if none); length checked against the schema. */
static bool get_string(struct ports_ctx *pc, const char *section, const char *key, char *buf,
		       size_t size, uint32_t *line_out)
{
	const struct tw_cfg_key *spec = spec_of(section, key);
	struct tw_cfg_finding *f;
	const char *text;
	uint32_t line;
	size_t len;

	text = value_of(pc, section, key, &line);
	if (line_out != NULL)
		*line_out = text != NULL ? line : 0;
	if (text == NULL) {
		if (spec->required) {
			missing(pc, section, key, line);
			return false;
		}
		text = spec->default_text != NULL ? spec->default_text : "";
		tw_cfg__copy(buf, size, text);
		return true;
	}
	len = strlen(text);
	if ((int64_t)len < spec->min || (int64_t)len > spec->max || len >= size) {
		if (len == 0)
			f = error_at(pc, line, "[%s] %s is empty", section, key);
		else
			f = error_at(pc, line, "[%s] %s = %.40s%s: length %zu not in %" PRId64
				     "..%" PRId64, section, key, text, len > 40 ? "..." : "",
				     len, spec->min, spec->max);
		tw_cfg_finding_hint(f, "see [%s] %s in dpdk-config/README.md", spec->section,
				    key);
		return false;
	}
	memcpy(buf, text, len + 1);
	return true;
}

/* Options eal.args must not carry, because a key of [eal] sets them. */
static const struct {
	const char *option;
	const char *key;
} managed_options[] = {
	{ "--lcores", "lcores" }, { "-l", "lcores" }, { "-c", "lcores" },
	{ "--main-lcore", "lcores.main in tickwire.cfg" },
	{ "--master-lcore", "lcores.main in tickwire.cfg" },
	{ "--file-prefix", "file_prefix" }, { "--no-huge", "no_huge" }, { "--no-pci", "no_pci" },
	{ "-m", "memory_mb" }, { "--huge-dir", "huge_dir" },
	{ "-a", "a [port.NAME] pci key" }, { "--allow", "a [port.NAME] pci key" },
	{ "-w", "a [port.NAME] pci key" }, { "--pci-whitelist", "a [port.NAME] pci key" },
	{ "--vdev", "a [port.NAME] vdev key" },
};

static void check_eal_args(struct ports_ctx *pc, uint32_t line)
{
	const char *p = pc->cfg->eal.args;
	struct tw_cfg_finding *f;
	unsigned int words = 0;
	size_t i;

	while (*p != '\0') {
		const char *w = p;
		size_t len;

		while (*w != '\0' && isspace((unsigned char)*w))
			w++;
		if (*w == '\0')
			break;
		for (p = w; *p != '\0' && !isspace((unsigned char)*p); p++)
			;
		len = (size_t)(p - w);
		words++;
		for (i = 0; i < sizeof(managed_options) / sizeof(managed_options[0]); i++) {
			const char *opt = managed_options[i].option;
			size_t olen = strlen(opt);
			bool hit;

			if (olen == 2) /* short option, maybe with its value glued on */
				hit = len >= 2 && strncmp(w, opt, 2) == 0;
			else
				hit = (len == olen || (len > olen && w[olen] == '=')) &&
				      strncmp(w, opt, olen) == 0;
			if (hit) {
				f = error_at(pc, line, "[eal] args: %.*s is set by its own key",
					     (int)len, w);
				tw_cfg_finding_hint(f, "use %s instead", managed_options[i].key);
			}
		}
	}
	if (words > TW_CFG_MAX_EAL_ARGS) {
		f = error_at(pc, line, "[eal] args: %u words, at most %u", words,
			     TW_CFG_MAX_EAL_ARGS);
		tw_cfg_finding_hint(f, "pass rarely used EAL options on the command line "
				    "before --");
	}
}

static void load_eal(struct ports_ctx *pc)
{
	struct tw_cfg_eal *eal = &pc->cfg->eal;
	struct tw_cfg_finding *f;
	char text[8], why[128];
	uint32_t line;
	int64_t v;
	size_t i;

	eal->section_line = tw_cfg__ini_line(pc->ini, "eal", NULL);
	if (eal->section_line == 0) {
		f = error_at(pc, 0, "missing section [eal]");
		tw_cfg_finding_hint(f, "add [eal] with at least lcores and file_prefix");
		return;
	}
	if (get_string(pc, "eal", "lcores", eal->lcores, sizeof(eal->lcores),
		       &eal->lcores_line)) {
		if (tw_cfg__parse_lcores(eal->lcores, eal, why, sizeof(why)) == 0) {
			pc->ld->lcores_ok = true;
		} else {
			f = error_at(pc, eal->lcores_line, "[eal] lcores = %s: %s", eal->lcores,
				     why);
			tw_cfg_finding_hint(f, "DPDK --lcores syntax: \"0-4\" (lcore N on cpu N), "
					    "\"0@0,1@2\", or \"(0-4)@(0,1)\"");
		}
	}
	if (get_string(pc, "eal", "file_prefix", eal->file_prefix, sizeof(eal->file_prefix),
		       &line)) {
		for (i = 0; eal->file_prefix[i] != '\0'; i++) {
			char c = eal->file_prefix[i];

			if (!isalnum((unsigned char)c) && c != '_' && c != '-') {
				f = error_at(pc, line, "[eal] file_prefix = %s: '%c' not allowed",
					     eal->file_prefix, c);
				tw_cfg_finding_hint(f, "letters, digits, '_' and '-': it names "
						    "files under /run/dpdk and hugetlbfs");
				break;
			}
		}
	}
	get_bool(pc, "eal", "no_huge", &eal->no_huge, &eal->no_huge_line);
	get_bool(pc, "eal", "no_pci", &eal->no_pci, NULL);
	if (get_int(pc, "eal", "memory_mb", &v, &eal->memory_mb_line))
		eal->memory_mb = (uint32_t)v;
	eal->hugepage_size = UINT64_C(2) << 20;
	if (get_string(pc, "eal", "hugepage_size", text, sizeof(text), &eal->hugepage_size_line)) {
		if (strcmp(text, "1G") == 0) {
			eal->hugepage_size = UINT64_C(1) << 30;
		} else if (strcmp(text, "2M") != 0) {
			f = error_at(pc, eal->hugepage_size_line,
				     "[eal] hugepage_size = %s: not a hugepage size", text);
			tw_cfg_finding_hint(f, "2M or 1G (x86-64)");
		}
	}
	if (get_int(pc, "eal", "hugepages", &v, &eal->hugepages_line))
		eal->hugepages = (uint32_t)v;
	get_string(pc, "eal", "huge_dir", eal->huge_dir, sizeof(eal->huge_dir), NULL);
	if (get_string(pc, "eal", "args", eal->args, sizeof(eal->args), &line))
		check_eal_args(pc, line);
}

static void load_mempool(struct ports_ctx *pc)
{
	struct tw_cfg_mempool *mp = &pc->cfg->mempool;
	struct tw_cfg_finding *f;
	uint32_t cache_line;
	int64_t v;

	mp->section_line = tw_cfg__ini_line(pc->ini, "mempool", NULL);
	if (get_int(pc, "mempool", "mbufs", &v, &mp->mbufs_line))
		mp->mbufs = (uint32_t)v;
	if (get_int(pc, "mempool", "cache", &v, &cache_line))
		mp->cache = (uint32_t)v;
	if (get_int(pc, "mempool", "data_room", &v, NULL))
		mp->data_room = (uint32_t)v;
	if (mp->mbufs > 0 && (uint64_t)mp->cache * 3 > (uint64_t)mp->mbufs * 2) {
		f = error_at(pc, cache_line != 0 ? cache_line : mp->section_line,
			     "[mempool] cache = %u: more than mbufs / 1.5 (%u)", mp->cache,
			     mp->mbufs * 2 / 3);
		tw_cfg_finding_hint(f, "DPDK refuses such a pool; lower cache or raise mbufs");
	}
}

static bool parse_pci(const char *text, struct tw_cfg_pci_addr *addr)
{
	unsigned int domain = 0, bus, dev, fn;
	int n = 0;

	if (sscanf(text, "%x:%x:%x.%x%n", &domain, &bus, &dev, &fn, &n) == 4 &&
	    (size_t)n == strlen(text)) {
		/* full form */
	} else if (domain = 0, n = 0, sscanf(text, "%x:%x.%x%n", &bus, &dev, &fn, &n) == 3 &&
		   (size_t)n == strlen(text)) {
		/* short form, domain 0 */
	} else {
		return false;
	}
	for (n = 0; text[n] != '\0'; n++)
		if (!isxdigit((unsigned char)text[n]) && text[n] != ':' && text[n] != '.')
			return false;
	if (domain > 0xffff || bus > 0xff || dev > 0x1f || fn > 7)
		return false;
	addr->domain = domain;
	addr->bus = (uint8_t)bus;
	addr->device = (uint8_t)dev;
	addr->function = (uint8_t)fn;
	return true;
}

static bool is_name_char_vdev(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

static bool check_vdev(struct ports_ctx *pc, struct tw_cfg_port *port, const char *section)
{
	const char *v = port->device, *comma = strchr(v, ',');
	size_t name_len = comma != NULL ? (size_t)(comma - v) : strlen(v);
	struct tw_cfg_finding *f;
	size_t i;

	for (i = 0; i < name_len; i++)
		if (!is_name_char_vdev(v[i]))
			break;
	if (name_len == 0 || i < name_len || strncmp(v, "net_", 4) != 0 ||
	    name_len >= sizeof(port->devname)) {
		f = error_at(pc, port->device_line, "[%s] vdev = %.60s: bad device name \"%.*s\"",
			     section, v, (int)(name_len < 40 ? name_len : 40), v);
		tw_cfg_finding_hint(f, "an ethdev vdev is net_DRIVERn[,key=value...], "
				    "e.g. net_pcap0,rx_pcap=feed-a.pcap");
		return false;
	}
	memcpy(port->devname, v, name_len);
	port->devname[name_len] = '\0';
	while (comma != NULL) {
		const char *arg = comma + 1, *next = strchr(arg, ',');
		size_t len = next != NULL ? (size_t)(next - arg) : strlen(arg);

		if (len == 0 || memchr(arg, '=', len) == NULL || arg[0] == '=') {
			f = error_at(pc, port->device_line,
				     "[%s] vdev = %.60s: argument \"%.*s\" is not key=value",
				     section, v, (int)(len < 40 ? len : 40), arg);
			tw_cfg_finding_hint(f, "arguments follow the device name as "
					    ",key=value with no spaces");
			return false;
		}
		comma = next;
	}
	return true;
}

static void load_port(struct ports_ctx *pc, const char *section, const char *name)
{
	struct tw_cfg *cfg = pc->cfg;
	struct tw_cfg_port *port = &cfg->ports[cfg->n_ports];
	uint32_t errors = pc->errors, pci_line, vdev_line, line;
	struct tw_cfg_finding *f;
	char pci[16];
	int64_t v;
	uint32_t i;

	memset(port, 0, sizeof(*port));
	tw_cfg__copy(port->name, sizeof(port->name), name);
	port->section_line = tw_cfg__ini_line(pc->ini, section, NULL);
	pci_line = tw_cfg__ini_line(pc->ini, section, "pci");
	vdev_line = tw_cfg__ini_line(pc->ini, section, "vdev");
	if (pci_line != 0 && vdev_line != 0) {
		f = error_at(pc, vdev_line, "[%s] has both pci (line %u) and vdev", section,
			     pci_line);
		tw_cfg_finding_hint(f, "a port is either a PCI device or a vdev: keep one");
	} else if (pci_line == 0 && vdev_line == 0) {
		f = error_at(pc, port->section_line, "[%s] has neither pci nor vdev", section);
		tw_cfg_finding_hint(f, "add pci = 0000:3b:00.0 (lspci -D) or "
				    "vdev = net_pcap0,rx_pcap=FILE");
	} else if (pci_line != 0) {
		port->kind = TW_CFG_PORT_PCI;
		port->device_line = pci_line;
		if (get_string(pc, section, "pci", pci, sizeof(pci), NULL)) {
			if (parse_pci(pci, &port->pci)) {
				snprintf(port->device, sizeof(port->device), "%04x:%02x:%02x.%x",
					 port->pci.domain, port->pci.bus, port->pci.device,
					 port->pci.function);
				tw_cfg__copy(port->devname, sizeof(port->devname), port->device);
			} else {
				/* quoted: iniparser took the quotes off, spaces show */
				f = error_at(pc, pci_line, "[%s] pci = \"%s\": not a PCI address",
					     section, pci);
				tw_cfg_finding_hint(f, "domain:bus:device.function in hex, e.g. "
						    "0000:3b:00.0 (lspci -D), quoted or not");
			}
		}
	} else {
		port->kind = TW_CFG_PORT_VDEV;
		port->device_line = vdev_line;
		if (get_string(pc, section, "vdev", port->device, sizeof(port->device), NULL))
			check_vdev(pc, port, section);
	}
	if (get_int(pc, section, "rx_queues", &v, NULL))
		port->rx_queues = (uint16_t)v;
	if (get_int(pc, section, "tx_queues", &v, NULL))
		port->tx_queues = (uint16_t)v;
	if (port->rx_queues == 0 && port->tx_queues == 0) {
		f = error_at(pc, port->section_line, "[%s] has neither rx nor tx queues", section);
		tw_cfg_finding_hint(f, "set rx_queues (a feed port) or tx_queues (an output "
				    "port) to 1 or more");
	}
	if (get_int(pc, section, "rx_desc", &v, &line)) {
		port->rx_desc = (uint16_t)v;
		if (v % 32 != 0) {
			f = error_at(pc, line, "[%s] rx_desc = %" PRId64 ": not a multiple of 32",
				     section, v);
			tw_cfg_finding_hint(f, "many PMDs need multiples of 32; try %" PRId64,
					    (v + 31) / 32 * 32);
		}
	}
	if (get_int(pc, section, "tx_desc", &v, &line)) {
		port->tx_desc = (uint16_t)v;
		if (v % 32 != 0) {
			f = error_at(pc, line, "[%s] tx_desc = %" PRId64 ": not a multiple of 32",
				     section, v);
			tw_cfg_finding_hint(f, "many PMDs need multiples of 32; try %" PRId64,
					    (v + 31) / 32 * 32);
		}
	}
	for (i = 0; i < cfg->n_ports && port->devname[0] != '\0'; i++) {
		if (strcmp(cfg->ports[i].devname, port->devname) == 0) {
			f = error_at(pc, port->device_line,
				     "[%s] uses device %s, already used by [port.%s] (line %u)",
				     section, port->devname, cfg->ports[i].name,
				     cfg->ports[i].device_line);
			tw_cfg_finding_hint(f, "each port needs its own device (vdevs: "
					    "net_pcap0, net_pcap1, ...)");
		}
	}
	if (pc->errors != errors)
		pc->ld->port_list_ok = false;
	cfg->n_ports++;
}

static bool parse_multicast(const char *text, uint32_t *group_be)
{
	struct in_addr addr;
	uint32_t host;

	if (inet_pton(AF_INET, text, &addr) != 1)
		return false;
	host = ntohl(addr.s_addr);
	if ((host >> 28) != 0xe)
		return false;
	*group_be = addr.s_addr;
	return true;
}

/* "0.01" for a rate per million: the value it meant, or -1 (not a fraction of 0..1). */
static int64_t fraction_ppm(const char *text)
{
	int64_t whole = 0, ppm = 0, scale = 100000;
	const char *p = text;

	if (!isdigit((unsigned char)*p))
		return -1;
	for (; isdigit((unsigned char)*p); p++)
		whole = whole * 10 + (*p - '0');
	if (*p++ != '.' || whole > 1 || !isdigit((unsigned char)*p))
		return -1;
	for (; isdigit((unsigned char)*p); p++, scale /= 10)
		ppm += (*p - '0') * scale;
	if (*p != '\0' || whole * 1000000 + ppm > 1000000)
		return -1;
	return whole * 1000000 + ppm;
}

/* A fault.*_ppm key: as get_int(), with a hint for a rate written as a fraction. */
static bool get_ppm(struct ports_ctx *pc, const char *section, const char *key, uint32_t *out,
		    uint32_t *line_out)
{
	struct tw_cfg_finding *f;
	const char *text;
	uint32_t line;
	int64_t v;

	text = value_of(pc, section, key, &line);
	if (text != NULL && (v = fraction_ppm(text)) >= 0) {
		f = error_at(pc, line, "[%s] %s = %s: not an integer per million", section, key,
			     text);
		tw_cfg_finding_hint(f, "rates are integers per million (0..1000000): %s is "
				    "%s = %" PRId64, text, key, v);
		return false;
	}
	if (!get_int(pc, section, key, &v, line_out))
		return false;
	*out = (uint32_t)v;
	return true;
}

/* [feed.NAME] fault.*: fault injection for tests (tw_config.h struct tw_cfg_fault). */
static void load_fault(struct ports_ctx *pc, const char *section, struct tw_cfg_feed *feed)
{
	struct tw_cfg_fault *ft = &feed->fault;
	const struct {
		const char *key;
		uint32_t *value;
		bool rate;
	} u32[] = {
		{ "fault.drop_ppm", &ft->drop_ppm, true },
		{ "fault.dup_ppm", &ft->dup_ppm, true },
		{ "fault.reorder_ppm", &ft->reorder_ppm, true },
		{ "fault.delay_ppm", &ft->delay_ppm, true },
		{ "fault.reorder_window", &ft->reorder_window, false },
		{ "fault.delay_packets", &ft->delay_packets, false },
		{ "fault.delay_us", &ft->delay_us, false },
		{ "fault.first_seq", &ft->first_seq, false },
		{ "fault.last_seq", &ft->last_seq, false },
	};
	struct tw_cfg_finding *f;
	uint32_t line, last_line = 0, i;
	int64_t v;

	for (i = 0; i < sizeof(u32) / sizeof(u32[0]); i++) {
		if (u32[i].rate) {
			get_ppm(pc, section, u32[i].key, u32[i].value, &line);
		} else if (get_int(pc, section, u32[i].key, &v, &line)) {
			*u32[i].value = (uint32_t)v;
		}
		if (line != 0 && (ft->line == 0 || line < ft->line))
			ft->line = line;
		if (u32[i].value == &ft->last_seq)
			last_line = line;
	}
	if (get_int(pc, section, "fault.seed", &v, &line))
		ft->seed = (uint64_t)v;
	if (line != 0 && (ft->line == 0 || line < ft->line))
		ft->line = line;
	if (get_int(pc, section, "fault.die_after", &v, &line))
		ft->die_after = (uint64_t)v;
	if (line != 0 && (ft->line == 0 || line < ft->line))
		ft->line = line;
	if (ft->last_seq != 0 && ft->last_seq < ft->first_seq) {
		f = error_at(pc, last_line, "[%s] fault.last_seq = %u: below fault.first_seq = %u",
			     section, ft->last_seq, ft->first_seq);
		tw_cfg_finding_hint(f, "the rates apply to MsgSeqNums first_seq..last_seq "
				    "(last_seq 0: no end)");
	}
	ft->enabled = ft->drop_ppm != 0 || ft->dup_ppm != 0 || ft->reorder_ppm != 0 ||
		      ft->delay_ppm != 0 || ft->die_after != 0;
	if (!ft->enabled)
		return;
	f = tw_cfg_findings_add(pc->ld->findings, TW_CFG_WARNING, pc->path, ft->line,
				"[%s]: fault injection on: per million %u dropped, %u duplicated, "
				"%u reordered, %u delayed; dies after %" PRIu64 " packets%s",
				section, ft->drop_ppm, ft->dup_ppm, ft->reorder_ppm, ft->delay_ppm,
				ft->die_after, ft->die_after == 0 ? " (never)" : "");
	tw_cfg_finding_hint(f, "for tests only: the appliance's rx path loses these packets "
			    "on purpose; remove the fault.* keys in production");
}

static void load_feed(struct ports_ctx *pc, const char *section, const char *name)
{
	struct tw_cfg *cfg = pc->cfg;
	struct tw_cfg_feed *feed = &cfg->feeds[cfg->n_feeds];
	char text[TW_CFG_NAME_MAX], port_name[TW_CFG_NAME_MAX];
	struct tw_cfg_finding *f;
	uint32_t line, i;
	bool have_port = false;
	int64_t v;
	int index;

	memset(feed, 0, sizeof(*feed));
	tw_cfg__copy(feed->name, sizeof(feed->name), name);
	feed->section_line = tw_cfg__ini_line(pc->ini, section, NULL);
	if (get_int(pc, section, "channel", &v, NULL))
		feed->channel = (uint32_t)v;
	if (get_string(pc, section, "kind", text, sizeof(text), &line)) {
		if (strcmp(text, "incremental") == 0) {
			feed->kind = TW_CFG_FEED_INCREMENTAL;
		} else if (strcmp(text, "snapshot") == 0) {
			feed->kind = TW_CFG_FEED_SNAPSHOT;
		} else if (strcmp(text, "definition") == 0) {
			feed->kind = TW_CFG_FEED_DEFINITION;
		} else {
			f = error_at(pc, line, "[%s] kind = %s: unknown feed kind", section, text);
			tw_cfg_finding_hint(f, "incremental, snapshot or definition");
		}
	}
	if (get_string(pc, section, "side", text, sizeof(text), &line)) {
		if (strcmp(text, "a") == 0 || strcmp(text, "A") == 0) {
			feed->side = TW_CFG_SIDE_A;
		} else if (strcmp(text, "b") == 0 || strcmp(text, "B") == 0) {
			feed->side = TW_CFG_SIDE_B;
		} else {
			f = error_at(pc, line, "[%s] side = %s: not a feed side", section, text);
			tw_cfg_finding_hint(f, "a or b: which copy of the channel this is");
		}
	}
	if (get_string(pc, section, "group", feed->group_text, sizeof(feed->group_text),
		       &line) &&
	    !parse_multicast(feed->group_text, &feed->group)) {
		f = error_at(pc, line, "[%s] group = %s: not an IPv4 multicast address", section,
			     feed->group_text);
		tw_cfg_finding_hint(f, "224.0.0.0 to 239.255.255.255, dotted quad "
				    "(CME's config.xml lists each channel's groups)");
	}
	if (get_int(pc, section, "udp_port", &v, NULL))
		feed->udp_port = (uint16_t)v;
	if (get_string(pc, section, "port", port_name, sizeof(port_name), &feed->port_line)) {
		index = tw_cfg__port_index(cfg, port_name);
		if (index >= 0) {
			feed->port = (uint16_t)index;
			have_port = true;
		} else {
			char names[TW_CFG_MAX_PORTS * (TW_CFG_NAME_MAX + 2)] = "";

			for (i = 0; i < cfg->n_ports; i++) {
				strcat(names, i > 0 ? ", " : "");
				strcat(names, cfg->ports[i].name);
			}
			f = error_at(pc, feed->port_line, "[%s] port = %s: no section [port.%s]",
				     section, port_name, port_name);
			tw_cfg_finding_hint(f, "ports defined: %s", cfg->n_ports > 0 ? names :
					    "none");
		}
	}
	if (get_int(pc, section, "rx_queue", &v, &feed->rx_queue_line)) {
		feed->rx_queue = (uint16_t)v;
		if (have_port && feed->rx_queue >= cfg->ports[feed->port].rx_queues) {
			const struct tw_cfg_port *port = &cfg->ports[feed->port];

			f = error_at(pc, feed->rx_queue_line != 0 ? feed->rx_queue_line :
				     feed->section_line,
				     "[%s] rx_queue = %u: port %s has %u rx queue%s", section,
				     feed->rx_queue, port->name, port->rx_queues,
				     port->rx_queues == 1 ? "" : "s");
			tw_cfg_finding_hint(f, "use a queue below %u, or raise rx_queues of "
					    "[port.%s] (line %u)", port->rx_queues, port->name,
					    port->section_line);
		}
	}
	load_fault(pc, section, feed);
	cfg->n_feeds++;
}

/* Same stream twice, same role twice. */
static void check_feed_pairs(struct ports_ctx *pc)
{
	static const char *const kinds[] = { "incremental", "snapshot", "definition" };
	const struct tw_cfg *cfg = pc->cfg;
	struct tw_cfg_finding *f;
	uint32_t i, j;

	for (i = 0; i < cfg->n_feeds; i++) {
		const struct tw_cfg_feed *a = &cfg->feeds[i];
		bool partner = false;

		for (j = 0; j < i; j++) {
			const struct tw_cfg_feed *b = &cfg->feeds[j];

			if (a->group == b->group && a->udp_port == b->udp_port && a->group != 0) {
				f = error_at(pc, a->section_line,
					     "[feed.%s] receives %s:%u, as [feed.%s] (line %u) "
					     "does", a->name, a->group_text, a->udp_port,
					     b->name, b->section_line);
				tw_cfg_finding_hint(f, "each feed is one multicast group and "
						    "port");
			} else if (a->channel == b->channel && a->kind == b->kind &&
				   a->side == b->side) {
				f = error_at(pc, a->section_line,
					     "[feed.%s] is %s feed %c of channel %u, as [feed.%s] "
					     "(line %u) is", a->name, kinds[a->kind],
					     a->side == TW_CFG_SIDE_A ? 'A' : 'B', a->channel,
					     b->name, b->section_line);
				tw_cfg_finding_hint(f, "one feed per channel, kind and side; "
						    "check side and channel");
			}
		}
		for (j = 0; j < cfg->n_feeds; j++)
			if (j != i && cfg->feeds[j].channel == a->channel &&
			    cfg->feeds[j].kind == a->kind && cfg->feeds[j].side != a->side)
				partner = true;
		if (!partner && a->kind == TW_CFG_FEED_INCREMENTAL) {
			f = tw_cfg_findings_add(pc->ld->findings, TW_CFG_WARNING, pc->path,
						a->section_line, "[feed.%s]: channel %u has no "
						"incremental feed %c", a->name, a->channel,
						a->side == TW_CFG_SIDE_A ? 'B' : 'A');
			tw_cfg_finding_hint(f, "without both copies a lost packet is a gap "
					    "arbitration cannot fill");
		}
	}
}

static bool name_ok(const char *name)
{
	size_t i;

	if (name[0] == '\0' || strlen(name) >= TW_CFG_NAME_MAX)
		return false;
	for (i = 0; name[i] != '\0'; i++)
		if (!((name[i] >= 'a' && name[i] <= 'z') || (name[i] >= '0' && name[i] <= '9') ||
		      name[i] == '_'))
			return false;
	return true;
}

/* Unknown sections and keys; inline credentials. */
static void check_structure(struct ports_ctx *pc)
{
	const struct tw_cfg__ini *ini = pc->ini;
	struct tw_cfg_finding *f;
	uint32_t i;

	for (i = 0; i < ini->n_sections; i++) {
		const char *name = ini->sections[i].name;
		const char *suggestion;

		if (strcmp(name, "eal") == 0 || strcmp(name, "mempool") == 0)
			continue;
		if (strncmp(name, "port.", 5) == 0 || strncmp(name, "feed.", 5) == 0) {
			if (!name_ok(name + 5)) {
				f = error_at(pc, ini->sections[i].line,
					     "section [%s]: \"%s\" is not a valid name", name,
					     name + 5);
				tw_cfg_finding_hint(f, "names are 1-31 lower-case letters, digits "
						    "and '_'");
			}
			continue;
		}
		suggestion = tw_cfg__suggest(TW_CFG_FILE_PORTS, "", name, true);
		f = error_at(pc, ini->sections[i].line, "unknown section [%s]", name);
		if (suggestion != NULL)
			tw_cfg_finding_hint(f, "did you mean [%s]?", suggestion);
		else
			tw_cfg_finding_hint(f, "sections are [eal], [mempool], [port.NAME] and "
					    "[feed.NAME]");
	}
	for (i = 0; i < ini->n_entries; i++) {
		const struct tw_cfg__ini_entry *en = &ini->entries[i];
		const char *section = ini->sections[en->section].name;
		const char *suggestion;

		if (tw_cfg__key_find(TW_CFG_FILE_PORTS, section, en->key) != NULL)
			continue;
		if (!tw_cfg__group_known(TW_CFG_FILE_PORTS, section))
			continue; /* reported with its section */
		if (tw_cfg__looks_secret(en->key)) {
			f = error_at(pc, en->line, "[%s] %s: inline credentials are refused",
				     section, en->key);
			tw_cfg_finding_hint(f, "credentials live only in the file named by "
					    "session.credentials_file in tickwire.cfg "
					    "(mode 0600); delete this line");
			continue;
		}
		suggestion = tw_cfg__suggest(TW_CFG_FILE_PORTS, section, en->key, false);
		f = error_at(pc, en->line, "[%s] %s: unknown key", section, en->key);
		if (suggestion != NULL)
			tw_cfg_finding_hint(f, "did you mean %s?", suggestion);
		else
			tw_cfg_finding_hint(f, "the keys of each section are listed in "
					    "dpdk-config/README.md");
	}
}

int tw_cfg__port_index(const struct tw_cfg *cfg, const char *name)
{
	uint32_t i;

	for (i = 0; i < cfg->n_ports; i++)
		if (strcmp(cfg->ports[i].name, name) == 0)
			return (int)i;
	return -1;
}

void tw_cfg__load_ports(struct tw_cfg__load *ld)
{
	struct ports_ctx pc = { .ld = ld, .cfg = ld->cfg, .path = ld->cfg->ports_path };
	struct tw_cfg_finding *f;
	uint32_t i, line;

	pc.ini = calloc(1, sizeof(*pc.ini));
	if (pc.ini == NULL) {
		tw_cfg_findings_add(ld->findings, TW_CFG_ERROR, pc.path, 0, "out of memory");
		return;
	}
	if (tw_cfg__ini_scan(pc.path, pc.ini, ld->findings) < 0)
		goto out;
	iniparser_set_error_callback(silent_errback);
	pc.dict = iniparser_load(pc.path);
	iniparser_set_error_callback(NULL); /* back to iniparser's default */
	if (pc.dict == NULL) {
		f = error_at(&pc, 0, "iniparser could not load the file");
		tw_cfg_finding_hint(f, "check that it is readable plain text");
		goto out;
	}
	ld->ports_read = true;
	ld->port_list_ok = true;
	check_structure(&pc);
	load_eal(&pc);
	for (i = 0; i < pc.ini->n_sections; i++) {
		const char *section = pc.ini->sections[i].name;

		line = pc.ini->sections[i].line;
		if (strncmp(section, "port.", 5) == 0 && name_ok(section + 5)) {
			if (pc.cfg->n_ports == TW_CFG_MAX_PORTS) {
				error_at(&pc, line, "[%s]: more than %u ports", section,
					 TW_CFG_MAX_PORTS);
				ld->port_list_ok = false;
				continue;
			}
			load_port(&pc, section, section + 5);
		}
	}
	if (pc.cfg->n_ports == 0) {
		f = error_at(&pc, 0, "no [port.NAME] section");
		tw_cfg_finding_hint(f, "define at least the port feed A arrives on");
		ld->port_list_ok = false;
	}
	load_mempool(&pc);
	for (i = 0; i < pc.ini->n_sections; i++) {
		const char *section = pc.ini->sections[i].name;

		line = pc.ini->sections[i].line;
		if (strncmp(section, "feed.", 5) == 0 && name_ok(section + 5)) {
			if (pc.cfg->n_feeds == TW_CFG_MAX_FEEDS) {
				error_at(&pc, line, "[%s]: more than %u feeds", section,
					 TW_CFG_MAX_FEEDS);
				continue;
			}
			load_feed(&pc, section, section + 5);
		}
	}
	if (pc.cfg->n_feeds == 0) {
		f = error_at(&pc, 0, "no [feed.NAME] section");
		tw_cfg_finding_hint(f, "define the incremental feeds A and B of a channel");
	}
	check_feed_pairs(&pc);
	line = tw_cfg__ini_line(pc.ini, "eal", "no_pci");
	for (i = 0; pc.cfg->eal.no_pci && i < pc.cfg->n_ports; i++) {
		if (pc.cfg->ports[i].kind == TW_CFG_PORT_PCI) {
			f = error_at(&pc, line, "[eal] no_pci = true, but [port.%s] is the PCI "
				     "device %s (line %u)", pc.cfg->ports[i].name,
				     pc.cfg->ports[i].device, pc.cfg->ports[i].device_line);
			tw_cfg_finding_hint(f, "set no_pci = false, or make the port a vdev");
		}
	}
out:
	if (pc.dict != NULL)
		iniparser_freedict(pc.dict);
	free(pc.ini);
}
