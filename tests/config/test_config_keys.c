/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * dpdk-config/README.md documents every key of the schema with the loader's
 * default; the schema's ranges are sane; cpu lists and DPDK's --lcores syntax
 * parse as documented; findings format as "file:line: severity: message; hint".
 */
#include "cfg_fixture.h"

static char *read_readme(void)
{
	char path[512];
	FILE *fp;
	char *text;
	size_t n;

	fx_source_path(path, sizeof(path), "dpdk-config/README.md");
	fp = fopen(path, "r");
	assert_non_null(fp);
	text = calloc(1, 1 << 20);
	assert_non_null(text);
	n = fread(text, 1, (1 << 20) - 1, fp);
	fclose(fp);
	text[n] = '\0';
	return text;
}

/* The README row of a key: "| `[eal] lcores` | required | ..." or "| `lcores.main` | ...". */
static void key_cell(const struct tw_cfg_key *k, char *buf, size_t size)
{
	char section[64];
	size_t len;

	snprintf(section, sizeof(section), "%s", k->section);
	len = strlen(section);
	if (len >= 2 && strcmp(section + len - 2, ".*") == 0)
		snprintf(section + len - 1, sizeof(section) - len + 1, "NAME");
	if (k->file == TW_CFG_FILE_PORTS)
		snprintf(buf, size, "| `[%s] %s` |", section, k->name);
	else if (section[0] == '\0')
		snprintf(buf, size, "| `%s` |", k->name);
	else
		snprintf(buf, size, "| `%s.%s` |", section, k->name);
}

static void readme_documents_every_key(void **state)
{
	char *readme = read_readme();
	const struct tw_cfg_key *keys;
	char cell[160], want[400];
	size_t n, i;

	(void)state;
	keys = tw_cfg_keys(&n);
	assert_true(n > 50);
	for (i = 0; i < n; i++) {
		const char *row, *eol;

		key_cell(&keys[i], cell, sizeof(cell));
		row = strstr(readme, cell);
		if (row == NULL)
			fail_msg("dpdk-config/README.md has no row %s", cell);
		eol = strchr(row, '\n');
		if (keys[i].required)
			snprintf(want, sizeof(want), "%s required |", cell);
		else if (keys[i].default_text == NULL)
			snprintf(want, sizeof(want), "%s none |", cell);
		else if (keys[i].default_text[0] == '\0')
			snprintf(want, sizeof(want), "%s empty |", cell);
		else
			snprintf(want, sizeof(want), "%s `%s` |", cell, keys[i].default_text);
		if (strncmp(row, want, strlen(want)) != 0)
			fail_msg("README row for %s: expected \"%s...\", found \"%.*s\"",
				 cell, want,
				 (int)(eol != NULL ? eol - row : 80), row);
		assert_true(keys[i].min <= keys[i].max);
	}
	free(readme);
}

static void cpu_lists(void **state)
{
	struct tw_cfg_cpuset set;
	char text[64];

	(void)state;
	assert_int_equal(tw_cfg_cpuset_parse(" 0-3,8,10-11\n", &set), 0);
	assert_int_equal(tw_cfg_cpuset_count(&set), 7);
	assert_int_equal(tw_cfg_cpuset_format(&set, text, sizeof(text)), 11);
	assert_string_equal(text, "0-3,8,10-11");
	assert_int_equal(tw_cfg_cpuset_parse("", &set), 0);
	assert_int_equal(tw_cfg_cpuset_count(&set), 0);
	assert_int_equal(tw_cfg_cpuset_format(&set, text, sizeof(text)), 0);
	assert_string_equal(text, "");
	assert_int_equal(tw_cfg_cpuset_parse("1023", &set), 0);
	assert_int_equal(tw_cfg_cpuset_next(&set, 0), 1023);
	assert_int_equal(tw_cfg_cpuset_parse("1024", &set), -ERANGE);
	assert_int_equal(tw_cfg_cpuset_parse("3-1", &set), -EINVAL);
	assert_int_equal(tw_cfg_cpuset_parse("1,,2", &set), -EINVAL);
	assert_int_equal(tw_cfg_cpuset_parse("0-200", &set), 0);
	/* truncation reports the full length, like snprintf */
	assert_int_equal(tw_cfg_cpuset_parse("0,2,4,6,8,10", &set), 0);
	assert_int_equal(tw_cfg_cpuset_format(&set, text, 5), 12);
	assert_string_equal(text, "0,2,");
}

/* The example of DPDK's EAL documentation for --lcores. */
static void dpdk_lcores_syntax(void **state)
{
	struct fx *fx = fx_new();
	const struct tw_cfg_eal *eal;
	char text[64];

	(void)state;
	fx_replace(&fx->ports_text, "lcores = (0-4)@(0,1)",
		   "lcores = 1,2@(5-7),(3-5)@(0,2),(0,6),7-8");
	eal = &fx_expect_ok(fx)->eal;
	tw_cfg_cpuset_format(&eal->lcore_cpus[1], text, sizeof(text));
	assert_string_equal(text, "1");
	tw_cfg_cpuset_format(&eal->lcore_cpus[2], text, sizeof(text));
	assert_string_equal(text, "5-7");
	tw_cfg_cpuset_format(&eal->lcore_cpus[4], text, sizeof(text));
	assert_string_equal(text, "0,2");
	tw_cfg_cpuset_format(&eal->lcore_cpus[6], text, sizeof(text));
	assert_string_equal(text, "0,6");
	tw_cfg_cpuset_format(&eal->lcore_cpus[8], text, sizeof(text));
	assert_string_equal(text, "8");
	assert_false(tw_cfg_lcore_defined(fx->cfg, 9));
	fx_free(fx);
}

static void finding_format(void **state)
{
	struct tw_cfg_findings *findings = calloc(1, sizeof(*findings));
	struct tw_cfg_finding *f;
	char line[512];

	(void)state;
	assert_non_null(findings);
	tw_cfg_findings_init(findings);
	f = tw_cfg_findings_add(findings, TW_CFG_ERROR, "p/tickwire.cfg", 14,
				"lcores.decode = %d: no such cpu", 9);
	tw_cfg_finding_hint(f, "pick one of %s", "0-1");
	tw_cfg_findings_add(findings, TW_CFG_WARNING, "p/ports.ini", 3, "w");
	tw_cfg_findings_add(findings, TW_CFG_INFO, NULL, 0, "no file");
	tw_cfg_findings_add(findings, TW_CFG_INFO, "p/ports.ini", 0, "whole file");
	tw_cfg_findings_sort(findings);
	tw_cfg_finding_format(&findings->item[0], line, sizeof(line));
	assert_string_equal(line, "p/ports.ini: info: whole file");
	tw_cfg_finding_format(&findings->item[1], line, sizeof(line));
	assert_string_equal(line, "p/ports.ini:3: warning: w");
	tw_cfg_finding_format(&findings->item[2], line, sizeof(line));
	assert_string_equal(line, "p/tickwire.cfg:14: error: lcores.decode = 9: no such cpu; "
			    "hint: pick one of 0-1");
	tw_cfg_finding_format(&findings->item[3], line, sizeof(line));
	assert_string_equal(line, "info: no file");
	assert_int_equal(findings->errors, 1);
	assert_int_equal(findings->warnings, 1);
	assert_int_equal(findings->infos, 2);
	free(findings);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(readme_documents_every_key),
		cmocka_unit_test(cpu_lists),
		cmocka_unit_test(dpdk_lcores_syntax),
		cmocka_unit_test(finding_format),
	};

	TW_RUN_TESTS(argc, argv, tests);
}
