/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * tickwire-check: run every configuration and topology check of a profile
 * without starting anything, print the findings, then the kernel command
 * line and tuned variables the core map needs.
 *
 *   tickwire-check --ports FILE --config FILE [--topology XML | --synthetic STRING]
 *                  [--sysfs DIR] [--cpu-vendor intel|amd] [--format text|shell]
 *
 * A profile with PCI ports needs the IOMMU (vfio-pci): its command line gets
 * the IOMMU words of the target's CPU vendor, which is this machine's
 * (/proc/cpuinfo) when the check judges this machine, the XML's CPUVendor
 * with --topology, or --cpu-vendor. intel_iommu=on turns Intel's VT-d on
 * (off by default); the AMD IOMMU is on whenever the firmware describes it
 * (amd_iommu= has no "on"), so AMD gets iommu=pt alone. iommu=pt (identity
 * mapping for the devices the kernel keeps) is for both. A vendor nobody
 * names (a synthetic topology) gets the Intel words, which an AMD kernel
 * ignores (no DMAR table), and an info finding says so. The PCI ports are
 * printed too (TW_PCI_PORTS, canonical addresses): the image's binding
 * script takes them from here, so nothing else parses ports.ini; and the
 * session journal (TW_SESSION_FILE, session.file of tickwire.cfg), which the
 * image's boot check reads with tickwire-session.
 *
 * Exit status: 0 no errors, 1 errors, 2 usage errors (including a topology
 * that cannot be loaded). With --format shell, stdout carries only
 * KEY='VALUE' lines (for sh, ansible and image/) and the findings go to
 * stderr.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tw_config.h"
#include "tw_topo.h"

#define EXIT_USAGE 2

enum cpu_vendor {
	CPU_VENDOR_UNKNOWN = 0,
	CPU_VENDOR_INTEL,
	CPU_VENDOR_AMD,
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: tickwire-check --ports FILE --config FILE\n"
		"                      [--topology XML | --synthetic STRING] [--sysfs DIR]\n"
		"                      [--cpu-vendor intel|amd] [--format text|shell]\n"
		"\n"
		"Checks a profile (ports.ini and tickwire.cfg) and its core map against a\n"
		"machine's topology, then prints the kernel command line and the tuned\n"
		"cpu-partitioning variables the core map needs.\n"
		"\n"
		"  --ports FILE        ports.ini of the profile\n"
		"  --config FILE       tickwire.cfg of the profile\n"
		"  --topology XML      judge against an hwloc XML topology (lstopo --of xml)\n"
		"                      instead of this machine\n"
		"  --synthetic STRING  judge against an hwloc synthetic topology,\n"
		"                      e.g. \"pack:2 numa:1 core:8 pu:2\"\n"
		"  --sysfs DIR         read isolated, nohz_full and PCI NUMA nodes under DIR\n"
		"                      instead of /sys\n"
		"  --cpu-vendor V      intel or amd: the target's CPU, for the IOMMU words of a\n"
		"                      profile with PCI ports (default: this machine's, or the\n"
		"                      XML topology's CPUVendor)\n"
		"  --format text|shell text for people (default); shell prints KEY='VALUE'\n"
		"                      lines on stdout and the findings on stderr\n"
		"\n"
		"Exit status: 0 no errors, 1 errors found, 2 usage error.\n");
}

/* The vendor_id of /proc/cpuinfo, or hwloc's CPUVendor info in an XML topology. */
static enum cpu_vendor vendor_in(const char *path, const char *intel, const char *amd)
{
	char line[512];
	enum cpu_vendor v = CPU_VENDOR_UNKNOWN;
	FILE *f = fopen(path, "r");

	if (f == NULL)
		return CPU_VENDOR_UNKNOWN;
	while (v == CPU_VENDOR_UNKNOWN && fgets(line, sizeof(line), f) != NULL) {
		if (strstr(line, intel) != NULL)
			v = CPU_VENDOR_INTEL;
		else if (strstr(line, amd) != NULL)
			v = CPU_VENDOR_AMD;
	}
	fclose(f);
	return v;
}

static enum cpu_vendor detect_vendor(const struct tw_topo_opts *opts)
{
	switch (opts->source) {
	case TW_TOPO_SOURCE_SYSTEM:
		return vendor_in("/proc/cpuinfo", "GenuineIntel", "AuthenticAMD");
	case TW_TOPO_SOURCE_XML:
		return vendor_in(opts->arg, "name=\"CPUVendor\" value=\"GenuineIntel\"",
				 "name=\"CPUVendor\" value=\"AuthenticAMD\"");
	default:
		return CPU_VENDOR_UNKNOWN;
	}
}

/* The canonical addresses of the PCI ports, space-separated; the first one's
 * index in *first (-1 when there is none). */
static void pci_ports(const struct tw_cfg *cfg, char *out, size_t size, int *first)
{
	size_t len = 0;
	uint32_t i;

	out[0] = '\0';
	*first = -1;
	for (i = 0; i < cfg->n_ports; i++) {
		if (cfg->ports[i].kind != TW_CFG_PORT_PCI)
			continue;
		if (*first < 0)
			*first = (int)i;
		len += (size_t)snprintf(out + len, len < size ? size - len : 0, "%s%s",
					len == 0 ? "" : " ", cfg->ports[i].device);
	}
}

/* The IOMMU words a profile with PCI ports needs, appended to the tuning's
 * command line; an info finding when the vendor is a guess. */
static const char *iommu_words(struct tw_topo_tuning *tuning, const struct tw_cfg *cfg,
			       const struct tw_cfg_port *port, enum cpu_vendor vendor,
			       const char *vendor_source, struct tw_cfg_findings *findings)
{
	const char *words = vendor == CPU_VENDOR_AMD ? "iommu=pt" : "intel_iommu=on iommu=pt";
	struct tw_cfg_finding *f;
	size_t len = strlen(tuning->cmdline);

	if (vendor == CPU_VENDOR_UNKNOWN) {
		f = tw_cfg_findings_add(findings, TW_CFG_INFO, cfg->ports_path, port->device_line,
					"[port.%s] pci = %s: the IOMMU words are Intel's (%s), "
					"the target's CPU vendor being unknown (%s); an AMD "
					"kernel ignores intel_iommu=", port->name, port->device,
					words, vendor_source);
		tw_cfg_finding_hint(f, "--cpu-vendor intel|amd names it");
	}
	snprintf(tuning->cmdline + len, sizeof(tuning->cmdline) - len, "%s%s",
		 len == 0 ? "" : " ", words);
	return words;
}

static void print_findings(FILE *out, struct tw_cfg_findings *findings)
{
	char line[2 * TW_CFG_TEXT_MAX + TW_CFG_PATH_MAX + 64];
	uint32_t i;

	tw_cfg_findings_sort(findings);
	for (i = 0; i < findings->count; i++) {
		tw_cfg_finding_format(&findings->item[i], line, sizeof(line));
		fprintf(out, "%s\n", line);
	}
	if (findings->dropped != 0)
		fprintf(out, "tickwire-check: %u more findings not shown\n", findings->dropped);
}

int main(int argc, char **argv)
{
	static const struct option options[] = {
		{ "ports", required_argument, NULL, 'p' },
		{ "config", required_argument, NULL, 'c' },
		{ "topology", required_argument, NULL, 't' },
		{ "synthetic", required_argument, NULL, 's' },
		{ "sysfs", required_argument, NULL, 'y' },
		{ "format", required_argument, NULL, 'f' },
		{ "cpu-vendor", required_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static struct tw_cfg_findings findings;
	static struct tw_topo_tuning tuning;
	static char text[8192], pci[TW_CFG_MAX_PORTS * 16 + 1];
	struct tw_topo_opts topo_opts = { .source = TW_TOPO_SOURCE_SYSTEM };
	const char *ports = NULL, *config = NULL, *format = "text", *iommu = "";
	const char *vendor_source = NULL;
	enum cpu_vendor vendor = CPU_VENDOR_UNKNOWN;
	int first_pci = -1;
	struct tw_topo *topo;
	struct tw_cfg *cfg;
	bool shell, have_tuning = false;
	FILE *report;
	int opt;

	while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
		switch (opt) {
		case 'p':
			ports = optarg;
			break;
		case 'c':
			config = optarg;
			break;
		case 't':
		case 's':
			if (topo_opts.source != TW_TOPO_SOURCE_SYSTEM) {
				fprintf(stderr, "tickwire-check: give at most one of --topology "
					"and --synthetic\n");
				return EXIT_USAGE;
			}
			topo_opts.source = opt == 't' ? TW_TOPO_SOURCE_XML :
					   TW_TOPO_SOURCE_SYNTHETIC;
			topo_opts.arg = optarg;
			break;
		case 'y':
			topo_opts.sysfs_root = optarg;
			break;
		case 'f':
			format = optarg;
			break;
		case 'v':
			if (strcmp(optarg, "intel") == 0) {
				vendor = CPU_VENDOR_INTEL;
			} else if (strcmp(optarg, "amd") == 0) {
				vendor = CPU_VENDOR_AMD;
			} else {
				fprintf(stderr, "tickwire-check: --cpu-vendor %s: expected intel "
					"or amd\n", optarg);
				return EXIT_USAGE;
			}
			vendor_source = "--cpu-vendor";
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "tickwire-check: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return EXIT_USAGE;
	}
	if (ports == NULL || config == NULL) {
		fprintf(stderr, "tickwire-check: --ports and --config are required\n");
		usage(stderr);
		return EXIT_USAGE;
	}
	if (strcmp(format, "text") != 0 && strcmp(format, "shell") != 0) {
		fprintf(stderr, "tickwire-check: --format %s: expected text or shell\n", format);
		return EXIT_USAGE;
	}
	shell = strcmp(format, "shell") == 0;
	report = shell ? stderr : stdout;

	topo = tw_topo_open(&topo_opts);
	if (topo == NULL) {
		fprintf(stderr, "tickwire-check: cannot load the topology%s%s: %s\n",
			topo_opts.arg != NULL ? " " : "",
			topo_opts.arg != NULL ? topo_opts.arg : "", strerror(errno));
		return EXIT_USAGE;
	}
	if (vendor_source == NULL) {
		vendor = detect_vendor(&topo_opts);
		vendor_source = topo_opts.source == TW_TOPO_SOURCE_SYSTEM ? "/proc/cpuinfo" :
				topo_opts.source == TW_TOPO_SOURCE_XML ? "the XML's CPUVendor" :
				"a synthetic topology names none";
	}
	tw_cfg_findings_init(&findings);
	cfg = tw_cfg_load(ports, config, &findings);
	if (cfg != NULL) {
		pci_ports(cfg, pci, sizeof(pci), &first_pci);
		if (tw_topo_check(topo, cfg, &findings) != 0 ||
		    tw_topo_tuning(topo, cfg, &tuning, &findings) != 0)
			tw_cfg_findings_add(&findings, TW_CFG_ERROR, NULL, 0,
					    "internal error deriving the tuning");
		else
			have_tuning = true;
		if (have_tuning && first_pci >= 0)
			iommu = iommu_words(&tuning, cfg, &cfg->ports[first_pci], vendor,
					    vendor_source, &findings);
	}
	print_findings(report, &findings);
	if (have_tuning) {
		tw_topo_tuning_format(&tuning, shell ? TW_TOPO_FORMAT_SHELL : TW_TOPO_FORMAT_TEXT,
				      text, sizeof(text));
		if (!shell && findings.count != 0)
			fputc('\n', stdout);
		fputs(text, stdout);
		if (shell)
			printf("TW_IOMMU_CMDLINE='%s'\n", iommu);
		else if (first_pci >= 0)
			printf("PCI ports (vfio-pci, IOMMU: %s): %s\n", iommu, pci);
	}
	if (shell && cfg != NULL) {
		printf("TW_PCI_PORTS='%s'\n", pci);
		/* where the session journal lives (backups, tickwire-session) */
		fputs("TW_SESSION_FILE='", stdout);
		for (const char *c = cfg->session.file; *c != '\0'; c++) {
			if (*c == '\'')
				fputs("'\\''", stdout);
			else
				putchar(*c);
		}
		fputs("'\n", stdout);
	}
	if (shell)
		printf("TW_ERRORS='%u'\nTW_WARNINGS='%u'\n", findings.errors, findings.warnings);
	fprintf(report, "%stickwire-check: %u error%s, %u warning%s (topology: %s)\n",
		shell ? "" : "\n", findings.errors, findings.errors == 1 ? "" : "s",
		findings.warnings, findings.warnings == 1 ? "" : "s", tw_topo_describe(topo));
	tw_cfg_free(cfg);
	tw_topo_close(topo);
	return findings.errors != 0 ? 1 : 0;
}
