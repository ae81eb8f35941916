/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * A line scanner for ports.ini. iniparser keeps no line numbers and quietly
 * accepts things that are mistakes in a profile (a repeated key overwrites
 * the first, a repeated section merges, keys are lower-cased, a line ending
 * in a backslash swallows the next, a comment after a section header makes
 * the line an error it only prints). This scanner accepts a strict subset of
 * what iniparser 4.1 accepts, parsing each line the way iniparser does, and
 * records where every section and key is.
 *
 * Bounds: TW_CFG__INI_MAX_BYTES per file, TW_CFG__INI_MAX_LINE per line,
 * TW_CFG__INI_MAX_SECTIONS sections, TW_CFG__INI_MAX_ENTRIES keys.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_pvt.h"

static bool is_name_char(char c, bool allow_dot)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
	       (allow_dot && (c == '.' || c == '-'));
}

/* Trim whitespace at both ends of [*start, *end). */
static void trim(const char **start, const char **end)
{
	while (*start < *end && isspace((unsigned char)**start))
		(*start)++;
	while (*end > *start && isspace((unsigned char)(*end)[-1]))
		(*end)--;
}

static struct tw_cfg_finding *syntax(struct tw_cfg_findings *findings, const char *path,
				     uint32_t line, const char *what)
{
	return tw_cfg_findings_add(findings, TW_CFG_ERROR, path, line, "syntax error: %s", what);
}

static int scan_section(const char *path, struct tw_cfg__ini *ini,
			struct tw_cfg_findings *findings, uint32_t line, const char *s,
			const char *e, uint32_t *current)
{
	struct tw_cfg_finding *f;
	const char *p;
	size_t len;
	uint32_t i;

	if (e[-1] != ']') {
		f = syntax(findings, path, line, "a section header must end with ']'");
		tw_cfg_finding_hint(f, "put comments on a line of their own (iniparser "
				    "rejects \"[section] ; comment\")");
		return -EINVAL;
	}
	s++;
	e--;
	trim(&s, &e);
	len = (size_t)(e - s);
	if (len == 0) {
		syntax(findings, path, line, "empty section name");
		return -EINVAL;
	}
	for (p = s; p < e; p++) {
		if (!is_name_char(*p, true)) {
			f = tw_cfg_findings_add(findings, TW_CFG_ERROR, path, line,
						"section [%.*s]: '%c' is not allowed in a name",
						(int)len, s, *p);
			tw_cfg_finding_hint(f, "section names are lower-case letters, digits, "
					    "'_', '-' and '.' (iniparser lower-cases them)");
			return -EINVAL;
		}
	}
	if (len >= TW_CFG__SECTION_MAX) {
		tw_cfg_findings_add(findings, TW_CFG_ERROR, path, line,
				    "section [%.*s]: name longer than %u characters", (int)len, s,
				    TW_CFG__SECTION_MAX - 1);
		return -EINVAL;
	}
	for (i = 0; i < ini->n_sections; i++) {
		if (strlen(ini->sections[i].name) == len &&
		    memcmp(ini->sections[i].name, s, len) == 0) {
			f = tw_cfg_findings_add(findings, TW_CFG_ERROR, path, line,
						"section [%.*s] appears twice", (int)len, s);
			tw_cfg_finding_hint(f, "merge it with the one at line %u",
					    ini->sections[i].line);
			return -EINVAL;
		}
	}
	if (ini->n_sections >= TW_CFG__INI_MAX_SECTIONS) {
		tw_cfg_findings_add(findings, TW_CFG_ERROR, path, line,
				    "more than %u sections", TW_CFG__INI_MAX_SECTIONS);
		return -EINVAL;
	}
	memcpy(ini->sections[ini->n_sections].name, s, len);
	ini->sections[ini->n_sections].name[len] = '\0';
	ini->sections[ini->n_sections].line = line;
	*current = ini->n_sections++;
	return 0;
}

static int scan_value(const char *path, struct tw_cfg_findings *findings, uint32_t line,
		      const char *v, const char *e)
{
	struct tw_cfg_finding *f;
	const char *close;

	if (v == e || (*v != '"' && *v != '\''))
		return 0; /* unquoted: ends at the first ';' or '#', like iniparser */
	close = memchr(v + 1, *v, (size_t)(e - v - 1));
	if (close == NULL) {
		syntax(findings, path, line, "unterminated quote");
		return -EINVAL;
	}
	for (close++; close < e && isspace((unsigned char)*close); close++)
		;
	if (close < e && *close != ';' && *close != '#') {
		f = syntax(findings, path, line, "text after the closing quote");
		tw_cfg_finding_hint(f, "quote the whole value, or start a comment with ';'");
		return -EINVAL;
	}
	return 0;
}

static int scan_entry(const char *path, struct tw_cfg__ini *ini,
		      struct tw_cfg_findings *findings, uint32_t line, const char *s,
		      const char *e, uint32_t current)
{
	struct tw_cfg_finding *f;
	const char *eq = memchr(s, '=', (size_t)(e - s));
	const char *ks = s, *ke, *p;
	size_t len;
	uint32_t i;

	if (eq == NULL) {
		f = syntax(findings, path, line, "expected \"key = value\", \"[section]\" or a "
			   "comment");
		tw_cfg_finding_hint(f, "comments start with ';' or '#'");
		return -EINVAL;
	}
	ke = eq;
	trim(&ks, &ke);
	len = (size_t)(ke - ks);
	if (len == 0) {
		syntax(findings, path, line, "no key before '='");
		return -EINVAL;
	}
	for (p = ks; p < ke; p++) {
		/* '.' groups keys of a section (fault.drop_ppm) */
		if (!is_name_char(*p, false) && *p != '.') {
			f = tw_cfg_findings_add(findings, TW_CFG_ERROR, path, line,
						"key \"%.*s\": '%c' is not allowed in a key name",
						(int)len, ks, *p);
			tw_cfg_finding_hint(f, "key names are lower-case letters, digits, '_' "
					    "and '.'");
			return -EINVAL;
		}
	}
	if (len >= TW_CFG_NAME_MAX) {
		tw_cfg_findings_add(findings, TW_CFG_ERROR, path, line,
				    "key %.*s: longer than %u characters", (int)len, ks,
				    TW_CFG_NAME_MAX - 1);
		return -EINVAL;
	}
	if (current == UINT32_MAX) {
		f = tw_cfg_findings_add(findings, TW_CFG_ERROR, path, line,
					"key %.*s is outside any section", (int)len, ks);
		tw_cfg_finding_hint(f, "put it under its section, e.g. [eal]");
		return -EINVAL;
	}
	{
		const char *vs = eq + 1, *ve = e;

		trim(&vs, &ve);
		if (scan_value(path, findings, line, vs, ve) < 0)
			return -EINVAL;
	}
	for (i = 0; i < ini->n_entries; i++) {
		const struct tw_cfg__ini_entry *en = &ini->entries[i];

		if (en->section == current && strlen(en->key) == len &&
		    memcmp(en->key, ks, len) == 0) {
			f = tw_cfg_findings_add(findings, TW_CFG_ERROR, path, line,
						"[%s] %.*s is set twice",
						ini->sections[current].name, (int)len, ks);
			tw_cfg_finding_hint(f, "keep one of this line and line %u "
					    "(iniparser would silently keep the last)", en->line);
			return -EINVAL;
		}
	}
	if (ini->n_entries >= TW_CFG__INI_MAX_ENTRIES) {
		tw_cfg_findings_add(findings, TW_CFG_ERROR, path, line, "more than %u keys",
				    TW_CFG__INI_MAX_ENTRIES);
		return -EINVAL;
	}
	ini->entries[ini->n_entries].section = current;
	memcpy(ini->entries[ini->n_entries].key, ks, len);
	ini->entries[ini->n_entries].key[len] = '\0';
	ini->entries[ini->n_entries].line = line;
	ini->n_entries++;
	return 0;
}

static int scan_line(const char *path, struct tw_cfg__ini *ini, struct tw_cfg_findings *findings,
		     uint32_t line, const char *s, const char *e, uint32_t *current)
{
	struct tw_cfg_finding *f;

	if ((size_t)(e - s) > TW_CFG__INI_MAX_LINE) {
		f = syntax(findings, path, line, "line longer than 1000 characters");
		tw_cfg_finding_hint(f, "iniparser reads at most 1024 bytes per line");
		return -EINVAL;
	}
	trim(&s, &e);
	if (s == e)
		return 0;
	if (e[-1] == '\\') {
		f = syntax(findings, path, line, "line ends in a backslash");
		tw_cfg_finding_hint(f, "iniparser would join the next line to this one; "
				    "remove the backslash");
		return -EINVAL;
	}
	if (*s == '#' || *s == ';')
		return 0;
	if (*s == '[')
		return scan_section(path, ini, findings, line, s, e, current);
	return scan_entry(path, ini, findings, line, s, e, *current);
}

int tw_cfg__ini_scan(const char *path, struct tw_cfg__ini *ini, struct tw_cfg_findings *findings)
{
	uint32_t line = 0, current = UINT32_MAX;
	const char *s, *end, *nl;
	struct tw_cfg_finding *f;
	size_t size;
	char *text;
	FILE *fp;
	int rc = 0, err;

	ini->n_sections = 0;
	ini->n_entries = 0;
	fp = fopen(path, "rb");
	if (fp == NULL) {
		err = errno;
		f = tw_cfg_findings_add(findings, TW_CFG_ERROR, path, 0, "cannot open: %s",
					strerror(err));
		tw_cfg_finding_hint(f, "check the path given to --ports");
		return -err;
	}
	text = malloc(TW_CFG__INI_MAX_BYTES + 1);
	if (text == NULL) {
		fclose(fp);
		return -ENOMEM;
	}
	size = fread(text, 1, TW_CFG__INI_MAX_BYTES + 1, fp);
	err = ferror(fp) ? EIO : 0;
	fclose(fp);
	if (err != 0 || size > TW_CFG__INI_MAX_BYTES) {
		tw_cfg_findings_add(findings, TW_CFG_ERROR, path, 0, "%s",
				    err != 0 ? "read error" : "larger than 1 MiB");
		free(text);
		return err != 0 ? -err : -EFBIG;
	}
	if (memchr(text, '\0', size) != NULL) {
		tw_cfg_findings_add(findings, TW_CFG_ERROR, path, 0,
				    "contains a NUL byte: not a text file");
		free(text);
		return -EINVAL;
	}
	for (s = text, end = text + size; s < end; s = nl + 1) {
		nl = memchr(s, '\n', (size_t)(end - s));
		if (nl == NULL)
			nl = end;
		line++;
		if (scan_line(path, ini, findings, line, s, nl, &current) < 0)
			rc = -EINVAL;
	}
	free(text);
	return rc;
}

uint32_t tw_cfg__ini_line(const struct tw_cfg__ini *ini, const char *section, const char *key)
{
	uint32_t i, sec = UINT32_MAX;

	for (i = 0; i < ini->n_sections; i++) {
		if (strcmp(ini->sections[i].name, section) == 0) {
			sec = i;
			break;
		}
	}
	if (sec == UINT32_MAX)
		return 0;
	if (key == NULL)
		return ini->sections[sec].line;
	for (i = 0; i < ini->n_entries; i++)
		if (ini->entries[i].section == sec && strcmp(ini->entries[i].key, key) == 0)
			return ini->entries[i].line;
	return 0;
}
