/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * Findings: a fixed array of TW_CFG_MAX_FINDINGS entries. Past that, findings
 * are only counted (dropped), so a badly broken file cannot make the loader
 * allocate without bound.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "config_pvt.h"

void tw_cfg_findings_init(struct tw_cfg_findings *findings)
{
	if (findings == NULL)
		return;
	findings->count = 0;
	findings->errors = 0;
	findings->warnings = 0;
	findings->infos = 0;
	findings->dropped = 0;
}

const char *tw_cfg_severity_name(enum tw_cfg_severity severity)
{
	switch (severity) {
	case TW_CFG_INFO:
		return "info";
	case TW_CFG_WARNING:
		return "warning";
	case TW_CFG_ERROR:
		return "error";
	}
	return "?";
}

bool tw_cfg__copy(char *dst, size_t size, const char *src)
{
	size_t len = strlen(src);

	if (len >= size)
		return false;
	memcpy(dst, src, len + 1);
	return true;
}

struct tw_cfg_finding *tw_cfg_findings_addv(struct tw_cfg_findings *findings,
					    enum tw_cfg_severity severity, const char *file,
					    uint32_t line, const char *fmt, va_list ap)
{
	struct tw_cfg_finding *f;

	if (findings == NULL || fmt == NULL)
		return NULL;
	switch (severity) {
	case TW_CFG_ERROR:
		findings->errors++;
		break;
	case TW_CFG_WARNING:
		findings->warnings++;
		break;
	default:
		findings->infos++;
		break;
	}
	if (findings->count >= TW_CFG_MAX_FINDINGS) {
		findings->dropped++;
		return NULL;
	}
	f = &findings->item[findings->count++];
	f->severity = severity;
	/* a path too long to keep whole is kept by its tail, the informative end */
	if (file == NULL) {
		f->file[0] = '\0';
	} else {
		size_t len = strlen(file);
		const char *tail = len < sizeof(f->file) ? file :
				   file + len - (sizeof(f->file) - 1);

		memcpy(f->file, tail, strlen(tail) + 1);
	}
	f->line = line;
	vsnprintf(f->message, sizeof(f->message), fmt, ap);
	f->hint[0] = '\0';
	return f;
}

struct tw_cfg_finding *tw_cfg_findings_add(struct tw_cfg_findings *findings,
					   enum tw_cfg_severity severity, const char *file,
					   uint32_t line, const char *fmt, ...)
{
	struct tw_cfg_finding *f;
	va_list ap;

	va_start(ap, fmt);
	f = tw_cfg_findings_addv(findings, severity, file, line, fmt, ap);
	va_end(ap);
	return f;
}

void tw_cfg_finding_hint(struct tw_cfg_finding *finding, const char *fmt, ...)
{
	va_list ap;

	if (finding == NULL || fmt == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(finding->hint, sizeof(finding->hint), fmt, ap);
	va_end(ap);
}

/* Order: by file name (no file last), then by line. */
static int compare(const struct tw_cfg_finding *a, const struct tw_cfg_finding *b)
{
	int c;

	if ((a->file[0] == '\0') != (b->file[0] == '\0'))
		return a->file[0] == '\0' ? 1 : -1;
	c = strcmp(a->file, b->file);
	if (c != 0)
		return c;
	return a->line < b->line ? -1 : a->line > b->line ? 1 : 0;
}

void tw_cfg_findings_sort(struct tw_cfg_findings *findings)
{
	uint32_t i, j;

	if (findings == NULL)
		return;
	/* insertion sort: stable, and n <= TW_CFG_MAX_FINDINGS */
	for (i = 1; i < findings->count; i++) {
		struct tw_cfg_finding tmp = findings->item[i];

		for (j = i; j > 0 && compare(&findings->item[j - 1], &tmp) > 0; j--)
			findings->item[j] = findings->item[j - 1];
		findings->item[j] = tmp;
	}
}

int tw_cfg_finding_format(const struct tw_cfg_finding *finding, char *buf, size_t size)
{
	char where[TW_CFG_PATH_MAX + 16];

	if (finding == NULL || (buf == NULL && size > 0))
		return -EINVAL;
	if (finding->file[0] == '\0')
		where[0] = '\0';
	else if (finding->line == 0)
		snprintf(where, sizeof(where), "%s: ", finding->file);
	else
		snprintf(where, sizeof(where), "%s:%u: ", finding->file, finding->line);
	if (finding->hint[0] == '\0')
		return snprintf(buf, size, "%s%s: %s", where,
				tw_cfg_severity_name(finding->severity), finding->message);
	return snprintf(buf, size, "%s%s: %s; hint: %s", where,
			tw_cfg_severity_name(finding->severity), finding->message, finding->hint);
}
