/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * Helpers for the lib/config and lib/topo tests: a known-good profile as
 * text, line edits of it, loading it from a temporary directory, and finding
 * lookups by severity, file, line and message.
 */
#ifndef TW_CFG_FIXTURE_H
#define TW_CFG_FIXTURE_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tw_test.h"
#include "tw_config.h"

/* A small valid profile: two net_null vdevs, lcores 0-4 floating on cpus 0-1. */
static const char fx_ports_base[] =
	"; test profile\n"
	"[eal]\n"
	"lcores = (0-4)@(0,1)\n"
	"file_prefix = tw-test\n"
	"no_huge = true\n"
	"no_pci = true\n"
	"\n"
	"[mempool]\n"
	"mbufs = 16383\n"
	"cache = 128\n"
	"data_room = 2176\n"
	"\n"
	"[port.a]\n"
	"vdev = net_null0\n"
	"rx_queues = 1\n"
	"tx_queues = 1\n"
	"\n"
	"[port.b]\n"
	"vdev = net_null1\n"
	"rx_queues = 1\n"
	"tx_queues = 1\n"
	"\n"
	"[feed.incr_a]\n"
	"channel = 310\n"
	"side = a\n"
	"group = 224.0.31.1\n"
	"udp_port = 14310\n"
	"port = a\n"
	"rx_queue = 0\n"
	"\n"
	"[feed.incr_b]\n"
	"channel = 310\n"
	"side = b\n"
	"group = 224.0.32.1\n"
	"udp_port = 15310\n"
	"port = b\n"
	"rx_queue = 0\n";

static const char fx_config_base[] =
	"# test profile\n"
	"lcores = {\n"
	"  main = 0;\n"
	"  capture_a = 1;\n"
	"  capture_b = 2;\n"
	"  decode = 3;\n"
	"  order_out = 4;\n"
	"};\n"
	"topology = \"two-stage\";\n"
	"handoff = {\n"
	"  capture_to_decode = {\n"
	"    type = \"batched\";\n"
	"    capacity = 4096;\n"
	"    overflow = \"drop\";\n"
	"  };\n"
	"  signal_to_order_out = {\n"
	"    type = \"bqueue\";\n"
	"    capacity = 1024;\n"
	"    overflow = \"fail\";\n"
	"  };\n"
	"};\n"
	"arbitration = {\n"
	"  gap_wait_packets = 64;\n"
	"  gap_wait_us = 500;\n"
	"};\n"
	"recovery = {\n"
	"  mode = \"none\";\n"
	"};\n"
	"strategy = {\n"
	"  instruments = [ 13950, 2615 ];\n"
	"  imbalance_numerator = 3;\n"
	"  imbalance_denominator = 2;\n"
	"  order_qty = 1;\n"
	"  max_orders = 10;\n"
	"};\n"
	"risk = {\n"
	"  max_order_qty = 5;\n"
	"  price_band_ticks = 10;\n"
	"  max_position = 10;\n"
	"  max_open_orders = 5;\n"
	"  max_messages_per_second = 50;\n"
	"};\n"
	"session = {\n"
	"  file = \"tw-test.session\";\n"
	"  tx_port = \"a\";\n"
	"};\n"
	"replay = {\n"
	"  stop_idle_ms = 100;\n"
	"};\n"
	"checks = {\n"
	"  require_isolation = false;\n"
	"  require_dedicated_cores = false;\n"
	"  require_numa_local = true;\n"
	"};\n";

struct fx {
	char dir[64];
	char ports[128];
	char config[128];
	char *ports_text;
	char *config_text;
	struct tw_cfg_findings findings;
	struct tw_cfg *cfg;
};

static inline char *fx_strdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = malloc(n);

	assert_non_null(d);
	memcpy(d, s, n);
	return d;
}

/* @base with the first line that contains @from replaced by @to (which may
 * hold several lines, or be "" to delete the line). */
static inline char *fx_edit(const char *base, const char *from, const char *to)
{
	const char *hit = strstr(base, from), *start, *end;
	size_t head, tail, n;
	char *out;

	if (hit == NULL)
		fail_msg("fixture: \"%s\" not in the text", from);
	start = hit;
	while (start > base && start[-1] != '\n')
		start--;
	end = strchr(hit, '\n');
	end = end != NULL ? end + 1 : hit + strlen(hit);
	head = (size_t)(start - base);
	tail = strlen(end);
	n = head + strlen(to) + 1 + tail + 1;
	out = malloc(n);
	assert_non_null(out);
	memcpy(out, base, head);
	out[head] = '\0';
	if (to[0] != '\0') {
		strcat(out, to);
		strcat(out, "\n");
	}
	strcat(out, end);
	return out;
}

/* Apply fx_edit and free the previous text. */
static inline void fx_replace(char **text, const char *from, const char *to)
{
	char *next = fx_edit(*text, from, to);

	free(*text);
	*text = next;
}

/* 1-based line of the first occurrence of @needle in @text. */
static inline unsigned int fx_line_of(const char *text, const char *needle)
{
	const char *hit = strstr(text, needle), *p;
	unsigned int line = 1;

	if (hit == NULL)
		fail_msg("fixture: \"%s\" not in the text", needle);
	for (p = text; p < hit; p++)
		if (*p == '\n')
			line++;
	return line;
}

static inline void fx_write(const char *path, const char *text)
{
	FILE *fp = fopen(path, "w");

	assert_non_null(fp);
	assert_int_equal(fputs(text, fp) >= 0, 1);
	assert_int_equal(fclose(fp), 0);
}

static inline struct fx *fx_new(void)
{
	struct fx *fx = calloc(1, sizeof(*fx));

	assert_non_null(fx);
	snprintf(fx->dir, sizeof(fx->dir), "/tmp/tw-cfg-test-XXXXXX");
	assert_non_null(mkdtemp(fx->dir));
	snprintf(fx->ports, sizeof(fx->ports), "%s/ports.ini", fx->dir);
	snprintf(fx->config, sizeof(fx->config), "%s/tickwire.cfg", fx->dir);
	fx->ports_text = fx_strdup(fx_ports_base);
	fx->config_text = fx_strdup(fx_config_base);
	tw_cfg_findings_init(&fx->findings);
	return fx;
}

/* Print the findings: shown by cmocka when a test fails. */
static inline void fx_dump(const struct fx *fx)
{
	char line[1024];
	uint32_t i;

	for (i = 0; i < fx->findings.count; i++) {
		tw_cfg_finding_format(&fx->findings.item[i], line, sizeof(line));
		print_message("  %s\n", line);
	}
}

static inline struct tw_cfg *fx_load(struct fx *fx)
{
	fx_write(fx->ports, fx->ports_text);
	fx_write(fx->config, fx->config_text);
	tw_cfg_free(fx->cfg);
	tw_cfg_findings_init(&fx->findings);
	fx->cfg = tw_cfg_load(fx->ports, fx->config, &fx->findings);
	return fx->cfg;
}

static inline void fx_free(struct fx *fx)
{
	char path[192];

	tw_cfg_free(fx->cfg);
	unlink(fx->ports);
	unlink(fx->config);
	snprintf(path, sizeof(path), "%s/credentials", fx->dir);
	unlink(path);
	rmdir(fx->dir);
	free(fx->ports_text);
	free(fx->config_text);
	free(fx);
}

/* The finding of @severity in the file ending in @file_suffix at @line whose
 * message contains @text, or NULL. */
static inline const struct tw_cfg_finding *fx_find(const struct fx *fx,
						   enum tw_cfg_severity severity,
						   const char *file_suffix, unsigned int line,
						   const char *text)
{
	uint32_t i;

	for (i = 0; i < fx->findings.count; i++) {
		const struct tw_cfg_finding *f = &fx->findings.item[i];
		size_t fl = strlen(f->file), sl = strlen(file_suffix);

		if (f->severity != severity || f->line != line || fl < sl ||
		    strcmp(f->file + fl - sl, file_suffix) != 0)
			continue;
		if (strstr(f->message, text) != NULL)
			return f;
	}
	return NULL;
}

/* Assert the profile is refused with an error at file:line whose message
 * contains @text; returns the finding. */
static inline const struct tw_cfg_finding *fx_expect_error(struct fx *fx, const char *file_suffix,
							   unsigned int line, const char *text)
{
	const struct tw_cfg_finding *f;

	if (fx_load(fx) != NULL) {
		fx_dump(fx);
		fail_msg("the profile loaded; expected %s:%u: error: ...%s...", file_suffix, line,
			 text);
	}
	assert_int_equal(errno, EINVAL);
	f = fx_find(fx, TW_CFG_ERROR, file_suffix, line, text);
	if (f == NULL) {
		fx_dump(fx);
		fail_msg("no finding %s:%u: error: ...%s...", file_suffix, line, text);
	}
	return f;
}

/* Assert the profile loads, with no error. */
static inline struct tw_cfg *fx_expect_ok(struct fx *fx)
{
	if (fx_load(fx) == NULL) {
		fx_dump(fx);
		fail_msg("the profile was refused (%u errors)", fx->findings.errors);
	}
	assert_int_equal(fx->findings.errors, 0);
	return fx->cfg;
}

/* $TW_SOURCE_ROOT/@rel: the source tree, set by meson. */
static inline void fx_source_path(char *buf, size_t size, const char *rel)
{
	const char *root = getenv("TW_SOURCE_ROOT");

	snprintf(buf, size, "%s/%s", root != NULL ? root : ".", rel);
}

#endif /* TW_CFG_FIXTURE_H */
