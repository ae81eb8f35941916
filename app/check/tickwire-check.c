/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * tickwire-check: run every configuration and topology check of a profile
 * without starting anything, print the findings, then the kernel command
 * line and tuned variables the core map needs.
 *
 *   tickwire-check --ports FILE --config FILE [--topology XML | --synthetic STRING]
 *                  [--sysfs DIR] [--format text|shell]
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

static void usage(FILE *out)
{
	fprintf(out,
		"usage: tickwire-check --ports FILE --config FILE\n"
		"                      [--topology XML | --synthetic STRING] [--sysfs DIR]\n"
		"                      [--format text|shell]\n"
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
		"  --format text|shell text for people (default); shell prints KEY='VALUE'\n"
		"                      lines on stdout and the findings on stderr\n"
		"\n"
		"Exit status: 0 no errors, 1 errors found, 2 usage error.\n");
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
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static struct tw_cfg_findings findings;
	static struct tw_topo_tuning tuning;
	static char text[8192];
	struct tw_topo_opts topo_opts = { .source = TW_TOPO_SOURCE_SYSTEM };
	const char *ports = NULL, *config = NULL, *format = "text";
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
	tw_cfg_findings_init(&findings);
	cfg = tw_cfg_load(ports, config, &findings);
	if (cfg != NULL) {
		if (tw_topo_check(topo, cfg, &findings) != 0 ||
		    tw_topo_tuning(topo, cfg, &tuning, &findings) != 0)
			tw_cfg_findings_add(&findings, TW_CFG_ERROR, NULL, 0,
					    "internal error deriving the tuning");
		else
			have_tuning = true;
	}
	print_findings(report, &findings);
	if (have_tuning) {
		tw_topo_tuning_format(&tuning, shell ? TW_TOPO_FORMAT_SHELL : TW_TOPO_FORMAT_TEXT,
				      text, sizeof(text));
		if (!shell && findings.count != 0)
			fputc('\n', stdout);
		fputs(text, stdout);
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
