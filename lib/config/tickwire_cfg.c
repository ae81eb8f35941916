/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * tickwire.cfg, read with libconfig. Before libconfig sees the file, a small
 * lexer checks what libconfig 1.5 gets silently wrong: an integer literal
 * outside 32 bits without the L suffix wraps around (4294967297 reads as 1),
 * an unterminated block comment swallows the rest of the file, and @include
 * would spread one profile over several files. Then the setting tree is
 * walked against the schema (unknown settings and inline credentials are
 * errors) and each value is loaded and range-checked.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <arpa/inet.h>
#include <libconfig.h>

#include "config_pvt.h"

#define CFG_MAX_BYTES (1u << 20)
#define CFG_MAX_DEPTH 4

struct cfg_ctx {
	struct tw_cfg__load *ld;
	struct tw_cfg *cfg;
	const char *path;
	config_t lc;
	uint32_t errors;
};

static struct tw_cfg_finding *error_at(struct cfg_ctx *cc, uint32_t line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static struct tw_cfg_finding *error_at(struct cfg_ctx *cc, uint32_t line, const char *fmt, ...)
{
	struct tw_cfg_finding *f;
	va_list ap;

	cc->errors++;
	va_start(ap, fmt);
	f = tw_cfg_findings_addv(cc->ld->findings, TW_CFG_ERROR, cc->path, line, fmt, ap);
	va_end(ap);
	return f;
}

static struct tw_cfg_finding *note_at(struct cfg_ctx *cc, enum tw_cfg_severity severity,
				      uint32_t line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static struct tw_cfg_finding *note_at(struct cfg_ctx *cc, enum tw_cfg_severity severity,
				      uint32_t line, const char *fmt, ...)
{
	struct tw_cfg_finding *f;
	va_list ap;

	va_start(ap, fmt);
	f = tw_cfg_findings_addv(cc->ld->findings, severity, cc->path, line, fmt, ap);
	va_end(ap);
	return f;
}

/* ------------------------------------------------------------------------ */
/* The lexical pre-check                                                    */
/* ------------------------------------------------------------------------ */

struct lex {
	struct cfg_ctx *cc;
	const char *p, *end;
	uint32_t line;
};

static void lex_number(struct lex *lx)
{
	const char *start = lx->p, *digits;
	bool negative = false, hex = false;
	unsigned long long v = 0;
	bool overflow = false;
	struct tw_cfg_finding *f;

	if (*lx->p == '-' || *lx->p == '+')
		negative = *lx->p++ == '-';
	if (lx->p + 1 < lx->end && lx->p[0] == '0' && (lx->p[1] == 'x' || lx->p[1] == 'X')) {
		hex = true;
		lx->p += 2;
	}
	digits = lx->p;
	while (lx->p < lx->end &&
	       (hex ? isxdigit((unsigned char)*lx->p) : isdigit((unsigned char)*lx->p))) {
		unsigned int d = isdigit((unsigned char)*lx->p) ?
				 (unsigned int)(*lx->p - '0') :
				 (unsigned int)(tolower((unsigned char)*lx->p) - 'a' + 10);

		if (v > (ULLONG_MAX - d) / (hex ? 16u : 10u))
			overflow = true;
		else
			v = v * (hex ? 16u : 10u) + d;
		lx->p++;
	}
	if (lx->p == digits)
		return;
	if (!hex && lx->p < lx->end && (*lx->p == '.' || *lx->p == 'e' || *lx->p == 'E')) {
		/* a float: libconfig handles those, the loader rejects them by type */
		while (lx->p < lx->end && (isalnum((unsigned char)*lx->p) || *lx->p == '.' ||
					   *lx->p == '-' || *lx->p == '+'))
			lx->p++;
		return;
	}
	if (lx->p < lx->end && *lx->p == 'L') {
		while (lx->p < lx->end && *lx->p == 'L')
			lx->p++;
		if (overflow || v > (unsigned long long)INT64_MAX + (negative ? 1u : 0u)) {
			f = error_at(lx->cc, lx->line, "integer %.*s does not fit in 64 bits",
				     (int)(lx->p - start), start);
			tw_cfg_finding_hint(f, "see dpdk-config/README.md for the key's range");
		}
		return;
	}
	if (overflow || (!hex && v > (unsigned long long)INT32_MAX + (negative ? 1u : 0u)) ||
	    (hex && v > UINT32_MAX)) {
		f = error_at(lx->cc, lx->line, "integer %.*s does not fit in libconfig's 32-bit "
			     "int, and libconfig would silently wrap it", (int)(lx->p - start),
			     start);
		tw_cfg_finding_hint(f, "append L for a 64-bit integer: %.*sL",
				    (int)(lx->p - start), start);
	}
}

/* Returns false when the file must not be given to libconfig. */
static bool lex_check(struct cfg_ctx *cc, const char *text, size_t size)
{
	struct lex lx = { .cc = cc, .p = text, .end = text + size, .line = 1 };
	uint32_t errors = cc->errors;
	struct tw_cfg_finding *f;
	bool line_start = true;

	while (lx.p < lx.end) {
		char c = *lx.p;

		if (c == '\n') {
			lx.line++;
			lx.p++;
			line_start = true;
			continue;
		}
		if (isspace((unsigned char)c)) {
			lx.p++;
			continue;
		}
		if (c == '@' && line_start) {
			f = error_at(cc, lx.line, "directive %.*s is not supported",
				     (int)strcspn(lx.p, " \t\r\n"), lx.p);
			tw_cfg_finding_hint(f, "keep a profile in one file");
			while (lx.p < lx.end && *lx.p != '\n')
				lx.p++;
			continue;
		}
		line_start = false;
		if (c == '#' || (c == '/' && lx.p + 1 < lx.end && lx.p[1] == '/')) {
			while (lx.p < lx.end && *lx.p != '\n')
				lx.p++;
		} else if (c == '/' && lx.p + 1 < lx.end && lx.p[1] == '*') {
			uint32_t start = lx.line;

			for (lx.p += 2; lx.p + 1 < lx.end && !(lx.p[0] == '*' && lx.p[1] == '/');
			     lx.p++)
				if (*lx.p == '\n')
					lx.line++;
			if (lx.p + 1 >= lx.end) {
				f = error_at(cc, start, "syntax error: unterminated /* comment");
				tw_cfg_finding_hint(f, "close it with */ (libconfig would "
						    "silently ignore the rest of the file)");
				return false;
			}
			lx.p += 2;
		} else if (c == '"') {
			uint32_t start = lx.line;

			for (lx.p++; lx.p < lx.end && *lx.p != '"'; lx.p++) {
				if (*lx.p == '\\' && lx.p + 1 < lx.end)
					lx.p++;
				if (*lx.p == '\n')
					lx.line++;
			}
			if (lx.p >= lx.end) {
				f = error_at(cc, start, "syntax error: unterminated string");
				tw_cfg_finding_hint(f, "close the string with \"");
				return false;
			}
			lx.p++;
		} else if (isalpha((unsigned char)c) || c == '*' || c == '_') {
			while (lx.p < lx.end && (isalnum((unsigned char)*lx.p) || *lx.p == '_' ||
						 *lx.p == '-' || *lx.p == '*'))
				lx.p++;
		} else if (isdigit((unsigned char)c) ||
			   ((c == '-' || c == '+') && lx.p + 1 < lx.end &&
			    isdigit((unsigned char)lx.p[1]))) {
			lex_number(&lx);
		} else {
			lx.p++;
		}
	}
	return cc->errors == errors;
}

/* ------------------------------------------------------------------------ */
/* Typed access                                                             */
/* ------------------------------------------------------------------------ */

static const char *type_name(int type)
{
	switch (type) {
	case CONFIG_TYPE_GROUP:
		return "a group";
	case CONFIG_TYPE_INT:
	case CONFIG_TYPE_INT64:
		return "an integer";
	case CONFIG_TYPE_FLOAT:
		return "a floating-point number";
	case CONFIG_TYPE_STRING:
		return "a string";
	case CONFIG_TYPE_BOOL:
		return "a boolean";
	case CONFIG_TYPE_ARRAY:
		return "an array";
	case CONFIG_TYPE_LIST:
		return "a list";
	}
	return "something";
}

static uint32_t line_of(const config_setting_t *s)
{
	return s != NULL ? (uint32_t)config_setting_source_line(s) : 0;
}

static config_setting_t *group_of(struct cfg_ctx *cc, const char *group)
{
	config_setting_t *g;

	if (group[0] == '\0')
		return config_root_setting(&cc->lc);
	g = config_lookup(&cc->lc, group);
	return g != NULL && config_setting_type(g) == CONFIG_TYPE_GROUP ? g : NULL;
}

static uint32_t group_line(struct cfg_ctx *cc, const char *group)
{
	return group[0] == '\0' ? 0 : line_of(group_of(cc, group));
}

static void full_name(char *buf, size_t size, const char *group, const char *name)
{
	if (group[0] == '\0')
		snprintf(buf, size, "%s", name);
	else
		snprintf(buf, size, "%s.%s", group, name);
}

/* The setting group.name, or NULL (a required one missing is reported). */
static config_setting_t *setting_of(struct cfg_ctx *cc, const char *group, const char *name,
				    const struct tw_cfg_key **spec_out)
{
	const struct tw_cfg_key *spec = tw_cfg__key_find(TW_CFG_FILE_CONFIG, group, name);
	config_setting_t *g = group_of(cc, group), *s;
	struct tw_cfg_finding *f;
	char full[96];

	*spec_out = spec;
	s = g != NULL ? config_setting_get_member(g, name) : NULL;
	if (s == NULL && spec->required) {
		full_name(full, sizeof(full), group, name);
		if (g == NULL) {
			f = error_at(cc, 0, "missing required setting %s (no group %s)", full,
				     group);
			tw_cfg_finding_hint(f, "add %s = { %s = ...; };", group, name);
		} else {
			f = error_at(cc, line_of(g), "missing required setting %s", full);
			tw_cfg_finding_hint(f, "add %s = ...; to %s { } (dpdk-config/README.md)",
					    name, group);
		}
	}
	return s;
}

static void wrong_type(struct cfg_ctx *cc, const config_setting_t *s, const char *group,
		       const char *name, const char *want)
{
	struct tw_cfg_finding *f;
	char full[96];

	full_name(full, sizeof(full), group, name);
	if (config_setting_type(s) == CONFIG_TYPE_STRING)
		f = error_at(cc, line_of(s), "%s = \"%.40s\": expected %s, found a string", full,
			     config_setting_get_string(s), want);
	else
		f = error_at(cc, line_of(s), "%s: expected %s, found %s", full, want,
			     type_name(config_setting_type(s)));
	tw_cfg_finding_hint(f, "see %s in dpdk-config/README.md", full);
}

static bool is_int(const config_setting_t *s)
{
	return config_setting_type(s) == CONFIG_TYPE_INT ||
	       config_setting_type(s) == CONFIG_TYPE_INT64;
}

static bool range_ok(struct cfg_ctx *cc, const struct tw_cfg_key *spec, uint32_t line,
		     const char *group, const char *name, int64_t v)
{
	struct tw_cfg_finding *f;
	char full[96];

	if (v >= spec->min && v <= spec->max)
		return true;
	full_name(full, sizeof(full), group, name);
	f = error_at(cc, line, "%s = %" PRId64 ": out of range %" PRId64 "..%" PRId64, full, v,
		     spec->min, spec->max);
	tw_cfg_finding_hint(f, "see %s in dpdk-config/README.md", full);
	return false;
}

/* Integer setting. *line gets its line (0 if absent). Absent -> default. */
static bool get_int(struct cfg_ctx *cc, const char *group, const char *name, int64_t *out,
		    uint32_t *line)
{
	const struct tw_cfg_key *spec;
	config_setting_t *s = setting_of(cc, group, name, &spec);
	int64_t v;

	if (line != NULL)
		*line = line_of(s);
	if (s == NULL) {
		if (spec->required)
			return false;
		if (spec->default_text != NULL)
			*out = strtoll(spec->default_text, NULL, 10);
		return true;
	}
	if (!is_int(s)) {
		wrong_type(cc, s, group, name, "an integer");
		return false;
	}
	v = config_setting_get_int64(s);
	if (!range_ok(cc, spec, line_of(s), group, name, v))
		return false;
	*out = v;
	return true;
}

static bool get_bool(struct cfg_ctx *cc, const char *group, const char *name, bool *out,
		     uint32_t *line)
{
	const struct tw_cfg_key *spec;
	config_setting_t *s = setting_of(cc, group, name, &spec);

	if (line != NULL)
		*line = line_of(s);
	if (s == NULL) {
		*out = strcmp(spec->default_text, "true") == 0;
		return true;
	}
	if (config_setting_type(s) != CONFIG_TYPE_BOOL) {
		wrong_type(cc, s, group, name, "true or false");
		return false;
	}
	*out = config_setting_get_bool(s) != 0;
	return true;
}

/* String setting; absent -> its default (without the quotes) or "". */
static bool get_string(struct cfg_ctx *cc, const char *group, const char *name, char *buf,
		       size_t size, uint32_t *line)
{
	const struct tw_cfg_key *spec;
	config_setting_t *s = setting_of(cc, group, name, &spec);
	struct tw_cfg_finding *f;
	const char *text;
	char full[96];
	size_t len;

	if (line != NULL)
		*line = line_of(s);
	if (s == NULL) {
		if (spec->required)
			return false;
		text = spec->default_text != NULL ? spec->default_text : "";
		len = strlen(text);
		if (len >= 2 && text[0] == '"') {
			text++;
			len -= 2;
		}
		if (len >= size)
			return false;
		memcpy(buf, text, len);
		buf[len] = '\0';
		return true;
	}
	if (config_setting_type(s) != CONFIG_TYPE_STRING) {
		wrong_type(cc, s, group, name, "a string");
		return false;
	}
	text = config_setting_get_string(s);
	len = strlen(text);
	if ((int64_t)len < spec->min || (int64_t)len > spec->max || len >= size) {
		full_name(full, sizeof(full), group, name);
		if (len == 0)
			f = error_at(cc, line_of(s), "%s is empty", full);
		else
			f = error_at(cc, line_of(s), "%s = \"%.40s%s\": length %zu not in %" PRId64
				     "..%" PRId64, full, text, len > 40 ? "..." : "", len,
				     spec->min, spec->max);
		tw_cfg_finding_hint(f, "see %s in dpdk-config/README.md", full);
		return false;
	}
	memcpy(buf, text, len + 1);
	return true;
}

/* An enumerated string: index into @names, or -1 (reported). */
static int get_enum(struct cfg_ctx *cc, const char *group, const char *name,
		    const char *const *names, size_t n, uint32_t *line_out)
{
	char text[TW_CFG_NAME_MAX], full[96], list[160] = "";
	struct tw_cfg_finding *f;
	uint32_t line;
	size_t i;

	if (!get_string(cc, group, name, text, sizeof(text), &line))
		return -1;
	if (line_out != NULL)
		*line_out = line;
	for (i = 0; i < n; i++)
		if (strcmp(text, names[i]) == 0)
			return (int)i;
	for (i = 0; i < n; i++) {
		strcat(list, i == 0 ? "\"" : (i + 1 == n ? "\" or \"" : "\", \""));
		strcat(list, names[i]);
	}
	strcat(list, "\"");
	full_name(full, sizeof(full), group, name);
	f = error_at(cc, line, "%s = \"%s\": not a known value", full, text);
	tw_cfg_finding_hint(f, "one of %s", list);
	return -1;
}

/* ------------------------------------------------------------------------ */
/* Structure                                                                */
/* ------------------------------------------------------------------------ */

static void walk(struct cfg_ctx *cc, config_setting_t *group, const char *path, int depth)
{
	int i, n = config_setting_length(group);

	for (i = 0; i < n; i++) {
		config_setting_t *s = config_setting_get_elem(group, (unsigned int)i);
		const char *name = config_setting_name(s);
		bool is_group = config_setting_type(s) == CONFIG_TYPE_GROUP;
		const char *suggestion;
		struct tw_cfg_finding *f;
		char child[96];

		if (name == NULL)
			continue;
		full_name(child, sizeof(child), path, name);
		if (tw_cfg__key_find(TW_CFG_FILE_CONFIG, path, name) != NULL)
			continue; /* types are checked when the value is loaded */
		if (tw_cfg__group_known(TW_CFG_FILE_CONFIG, child)) {
			if (!is_group) {
				f = error_at(cc, line_of(s), "%s: expected a group { ... }, "
					     "found %s", child, type_name(config_setting_type(s)));
				tw_cfg_finding_hint(f, "write %s = { ... };", name);
			} else if (depth < CFG_MAX_DEPTH) {
				walk(cc, s, child, depth + 1);
			}
			continue;
		}
		if (tw_cfg__looks_secret(name)) {
			f = error_at(cc, line_of(s), "%s: inline credentials are refused", child);
			tw_cfg_finding_hint(f, "put the key in the file named by "
					    "session.credentials_file (mode 0600, from Ansible "
					    "Vault) and delete this line");
			continue;
		}
		suggestion = tw_cfg__suggest(TW_CFG_FILE_CONFIG, path, name, is_group);
		if (suggestion == NULL && !is_group)
			suggestion = tw_cfg__suggest(TW_CFG_FILE_CONFIG, path, name, true);
		f = error_at(cc, line_of(s), "unknown setting %s", child);
		if (suggestion != NULL)
			tw_cfg_finding_hint(f, "did you mean %s%s%s?", path,
					    path[0] != '\0' ? "." : "", suggestion);
		else
			tw_cfg_finding_hint(f, "the settings are listed in dpdk-config/README.md");
	}
}

/* ------------------------------------------------------------------------ */
/* Sections                                                                 */
/* ------------------------------------------------------------------------ */

static const char *const topology_names[] = { "two-stage", "one-thread" };
static const char *const queue_names[] = { "bqueue", "batched", "sharded", "lockfree",
					   "rte_ring" };

static void load_lcores(struct cfg_ctx *cc)
{
	struct tw_cfg *cfg = cc->cfg;
	const struct tw_cfg_eal *eal = &cfg->eal;
	struct tw_cfg_finding *f;
	bool ok = true;
	int64_t v;
	int r, q;

	cfg->lcores_line = group_line(cc, "lcores");
	for (r = 0; r < TW_CFG_ROLE_COUNT; r++) {
		struct tw_cfg_lcore *lc = &cfg->lcores[r];
		const char *name = tw_cfg_role_name((enum tw_cfg_role)r);

		lc->id = -1;
		if (!get_int(cc, "lcores", name, &v, &lc->line)) {
			ok = false;
			continue;
		}
		if (lc->line == 0)
			continue;
		lc->id = (int32_t)v;
	}
	for (r = TW_CFG_ROLE_CAPTURE_A; r <= TW_CFG_ROLE_CAPTURE_B; r++) {
		const char *name = tw_cfg_role_name((enum tw_cfg_role)r);

		if (cfg->topology == TW_CFG_TOPOLOGY_TWO_STAGE && cfg->lcores[r].line == 0 &&
		    cfg->lcores_line != 0) {
			f = error_at(cc, cfg->lcores_line, "missing lcores.%s, required by "
				     "topology \"two-stage\"", name);
			tw_cfg_finding_hint(f, "add %s = N; or set topology = \"one-thread\"",
					    name);
			ok = false;
		} else if (cfg->topology == TW_CFG_TOPOLOGY_ONE_THREAD && cfg->lcores[r].id >= 0) {
			f = note_at(cc, TW_CFG_INFO, cfg->lcores[r].line, "lcores.%s = %d: not "
				    "used by topology \"one-thread\"", name, cfg->lcores[r].id);
			tw_cfg_finding_hint(f, "the decode lcore polls the rx queues itself");
		}
	}
	for (r = 0; r < TW_CFG_ROLE_COUNT; r++) {
		const struct tw_cfg_lcore *lc = &cfg->lcores[r];

		if (lc->id < 0 || !tw_cfg_role_used(cfg, (enum tw_cfg_role)r))
			continue;
		for (q = 0; q < r; q++) {
			const struct tw_cfg_lcore *other = &cfg->lcores[q];

			if (other->id != lc->id || !tw_cfg_role_used(cfg, (enum tw_cfg_role)q))
				continue;
			/* one capture lcore may drain both feeds */
			if (r == TW_CFG_ROLE_CAPTURE_B && q == TW_CFG_ROLE_CAPTURE_A)
				continue;
			f = error_at(cc, lc->line, "lcores.%s = %d: lcore %d already runs %s "
				     "(line %u)", tw_cfg_role_name((enum tw_cfg_role)r), lc->id,
				     lc->id, tw_cfg_role_name((enum tw_cfg_role)q), other->line);
			tw_cfg_finding_hint(f, "give every role its own lcore (eal.lcores in %s "
					    "can map several lcores onto one cpu)",
					    cfg->ports_path);
			ok = false;
			break;
		}
		if (cc->ld->lcores_ok && !tw_cfg_lcore_defined(cfg, (unsigned int)lc->id)) {
			f = error_at(cc, lc->line, "lcores.%s = %d: not an lcore of eal.lcores "
				     "\"%s\" (%s:%u)", tw_cfg_role_name((enum tw_cfg_role)r),
				     lc->id, eal->lcores, cfg->ports_path, eal->lcores_line);
			tw_cfg_finding_hint(f, "add lcore %d to eal.lcores, or use one it defines",
					    lc->id);
			ok = false;
		}
	}
	cc->ld->lcore_ids_ok = ok;
}

static bool is_pow2(uint64_t v)
{
	return v != 0 && (v & (v - 1)) == 0;
}

static uint64_t next_pow2(uint64_t v)
{
	uint64_t p = 1;

	while (p < v)
		p <<= 1;
	return p;
}

static void load_handoff(struct cfg_ctx *cc, const char *group, struct tw_cfg_handoff *h,
			 bool capture)
{
	static const char *const overflow_names[] = { "drop", "fail", "block" };
	struct tw_cfg_finding *f;
	uint32_t line, shards_line, type_line = 0;
	int64_t v;
	int i;

	h->line = group_line(cc, group);
	i = get_enum(cc, group, "type", queue_names, 5, &type_line);
	if (i >= 0)
		h->type = (enum tw_cfg_queue_type)i;
	if (h->type == TW_CFG_QUEUE_RTE_RING && !capture) {
		f = error_at(cc, type_line, "%s.type = \"rte_ring\": only the capture -> decode "
			     "hand-off can be an rte_ring", group);
		tw_cfg_finding_hint(f, "the signal -> order-out hand-off is an actor mailbox: "
				    "bqueue, batched, sharded or lockfree");
	}
	if (get_int(cc, group, "capacity", &v, &line)) {
		h->capacity = (uint32_t)v;
		if (!is_pow2((uint64_t)v)) {
			f = error_at(cc, line, "%s.capacity = %" PRId64 ": not a power of two",
				     group, v);
			tw_cfg_finding_hint(f, "use %" PRIu64 " (rings index with a mask)",
					    next_pow2((uint64_t)v));
		}
	}
	if (get_int(cc, group, "shards", &v, &shards_line)) {
		h->shards = (uint32_t)v;
		if (!is_pow2((uint64_t)v)) {
			f = error_at(cc, shards_line, "%s.shards = %" PRId64 ": not a power of "
				     "two", group, v);
			tw_cfg_finding_hint(f, "use %" PRIu64, next_pow2((uint64_t)v));
		} else if (h->type == TW_CFG_QUEUE_SHARDED && h->capacity != 0 &&
			   h->shards > h->capacity) {
			f = error_at(cc, shards_line, "%s.shards = %u: more lanes than capacity "
				     "(%u)", group, h->shards, h->capacity);
			tw_cfg_finding_hint(f, "lower shards or raise capacity");
		}
	}
	i = get_enum(cc, group, "overflow", overflow_names, 3, &line);
	if (i == 2) {
		f = error_at(cc, line, "%s.overflow = \"block\": the sender would stall", group);
		tw_cfg_finding_hint(f, "%s", capture ?
				    "capture lcores never block (DESIGN.md 1); use \"drop\"" :
				    "a blocked signal would stall the book; use \"fail\"");
	} else if (i >= 0) {
		h->overflow = (enum tw_cfg_overflow)i;
	}
}

/* What an integer list holds, for get_id_list()'s messages. */
struct id_list_spec {
	const char *noun;          /* "security id" */
	unsigned int min_entries;
	unsigned int max_entries;  /* at most the capacity of out */
	const char *hint_count;    /* hint of a count out of range */
	const char *hint_range;    /* hint of a value out of range */
};

/*
 * A list [ ... ] of distinct integers in the key's range. Absent: *n = 0.
 * @return false after an error (reported; *n is the entries taken before it).
 */
static bool get_id_list(struct cfg_ctx *cc, const char *group, const char *name,
			const struct id_list_spec *ls, int64_t *out, uint32_t *n,
			uint32_t *line_out)
{
	const struct tw_cfg_key *spec;
	config_setting_t *s = setting_of(cc, group, name, &spec);
	struct tw_cfg_finding *f;
	uint32_t line = line_of(s);
	int i, j, count;
	int64_t v;

	*n = 0;
	if (line_out != NULL)
		*line_out = line;
	if (s == NULL)
		return true;
	if (config_setting_type(s) != CONFIG_TYPE_ARRAY &&
	    config_setting_type(s) != CONFIG_TYPE_LIST) {
		char want[64];

		snprintf(want, sizeof(want), "an array [ ... ] of %ss", ls->noun);
		wrong_type(cc, s, group, name, want);
		return false;
	}
	count = config_setting_length(s);
	if (count < (int)ls->min_entries || count > (int)ls->max_entries) {
		f = error_at(cc, line, "%s.%s: %d entries, want %u..%u", group, name, count,
			     ls->min_entries, ls->max_entries);
		tw_cfg_finding_hint(f, "%s", ls->hint_count);
		return false;
	}
	for (i = 0; i < count; i++) {
		config_setting_t *e = config_setting_get_elem(s, (unsigned int)i);

		if (!is_int(e)) {
			f = error_at(cc, line, "%s.%s[%d]: expected an integer %s, found %s",
				     group, name, i, ls->noun, type_name(config_setting_type(e)));
			tw_cfg_finding_hint(f, "write [ 1234, 5678 ]");
			return false;
		}
		v = config_setting_get_int64(e);
		if (v < spec->min || v > spec->max) {
			f = error_at(cc, line, "%s.%s[%d] = %" PRId64 ": not a %s (%" PRId64
				     "..%" PRId64 ")", group, name, i, v, ls->noun, spec->min,
				     spec->max);
			tw_cfg_finding_hint(f, "%s", ls->hint_range);
			return false;
		}
		for (j = 0; j < i && out[j] != v; j++)
			;
		if (j < i) {
			f = error_at(cc, line, "%s.%s: %" PRId64 " is listed twice", group, name, v);
			tw_cfg_finding_hint(f, "list each %s once", ls->noun);
			return false;
		}
		out[i] = v;
		*n = (uint32_t)i + 1;
	}
	return true;
}

static void load_strategy(struct cfg_ctx *cc)
{
	static const struct id_list_spec ids = {
		.noun = "security id", .min_entries = 1, .max_entries = TW_CFG_MAX_INSTRUMENTS,
		.hint_count = "list the security ids the strategy trades",
		.hint_range = "security ids are positive 32-bit integers (SecurityID)",
	};
	struct tw_cfg_strategy *st = &cc->cfg->strategy;
	int64_t list[TW_CFG_MAX_INSTRUMENTS];
	struct tw_cfg_finding *f;
	uint32_t line, num_line;
	int64_t v;

	get_bool(cc, "strategy", "enabled", &st->enabled, NULL);
	get_id_list(cc, "strategy", "instruments", &ids, list, &st->n_instruments, NULL);
	for (uint32_t i = 0; i < st->n_instruments; i++)
		st->instruments[i] = (int32_t)list[i];
	if (get_int(cc, "strategy", "imbalance_numerator", &v, &num_line))
		st->imbalance_numerator = (uint32_t)v;
	if (get_int(cc, "strategy", "imbalance_denominator", &v, &line))
		st->imbalance_denominator = (uint32_t)v;
	if (st->imbalance_denominator != 0 &&
	    st->imbalance_numerator <= st->imbalance_denominator) {
		f = error_at(cc, num_line != 0 ? num_line : line,
			     "strategy.imbalance_numerator / imbalance_denominator = %u/%u: the "
			     "ratio must exceed 1", st->imbalance_numerator,
			     st->imbalance_denominator);
		tw_cfg_finding_hint(f, "at a ratio of 1 or less the rule fires on both sides at "
				    "once; e.g. 3/2");
	}
	if (get_int(cc, "strategy", "order_qty", &v, NULL))
		st->order_qty = (uint32_t)v;
	if (get_int(cc, "strategy", "max_orders", &v, NULL))
		st->max_orders = (uint32_t)v;
	if (get_int(cc, "strategy", "queue_max_ahead", &v, NULL))
		st->queue_max_ahead = (uint32_t)v;
}

static void load_mbo(struct cfg_ctx *cc)
{
	static const struct id_list_spec ids = {
		.noun = "channel id", .min_entries = 0, .max_entries = TW_CFG_MAX_FEEDS,
		.hint_count = "list the channels whose market-by-order books are kept",
		.hint_range = "the CME channel ids of ports.ini's [feed.NAME] channel",
	};
	struct tw_cfg_mbo *m = &cc->cfg->book.mbo;
	int64_t list[TW_CFG_MAX_FEEDS];
	int64_t v;

	get_id_list(cc, "book.mbo", "channels", &ids, list, &m->n_channels, &m->channels_line);
	for (uint32_t i = 0; i < m->n_channels; i++)
		m->channels[i] = (uint32_t)list[i];
	if (get_int(cc, "book.mbo", "instruments", &v, NULL))
		m->instruments = (uint32_t)v;
	if (get_int(cc, "book.mbo", "orders", &v, NULL))
		m->orders = (uint32_t)v;
	if (get_int(cc, "book.mbo", "levels", &v, NULL))
		m->levels = (uint32_t)v;
	if (get_int(cc, "book.mbo", "diffs", &v, NULL))
		m->diffs = (uint32_t)v;
	get_bool(cc, "book.mbo", "presize", &m->presize, NULL);
}

static void load_risk(struct cfg_ctx *cc)
{
	struct tw_cfg_risk *r = &cc->cfg->risk;
	const struct tw_cfg_strategy *st = &cc->cfg->strategy;
	struct tw_cfg_finding *f;
	uint32_t qty_line, pos_line;
	int64_t v;

	if (get_int(cc, "risk", "max_order_qty", &v, &qty_line))
		r->max_order_qty = (uint32_t)v;
	if (get_int(cc, "risk", "price_band_ticks", &v, NULL))
		r->price_band_ticks = (uint32_t)v;
	if (get_int(cc, "risk", "max_position", &v, &pos_line))
		r->max_position = (uint32_t)v;
	if (get_int(cc, "risk", "max_open_orders", &v, NULL))
		r->max_open_orders = (uint32_t)v;
	if (get_int(cc, "risk", "max_messages_per_second", &v, NULL))
		r->max_messages_per_second = (uint32_t)v;
	if (!st->enabled)
		return;
	if (r->max_order_qty != 0 && st->order_qty > r->max_order_qty) {
		f = error_at(cc, qty_line, "risk.max_order_qty = %u: below strategy.order_qty = "
			     "%u, so risk would refuse every order", r->max_order_qty,
			     st->order_qty);
		tw_cfg_finding_hint(f, "lower strategy.order_qty or raise risk.max_order_qty");
	}
	if (r->max_position != 0 && st->order_qty > r->max_position) {
		f = error_at(cc, pos_line, "risk.max_position = %u: below strategy.order_qty = "
			     "%u, so risk would refuse every order", r->max_position,
			     st->order_qty);
		tw_cfg_finding_hint(f, "lower strategy.order_qty or raise risk.max_position");
	}
}

/* Warn when the directory a file will be written into does not exist. */
static void check_parent_dir(struct cfg_ctx *cc, const char *key, const char *path, uint32_t line)
{
	char dir[TW_CFG_PATH_MAX];
	struct tw_cfg_finding *f;
	struct stat st;
	char *slash;

	tw_cfg__copy(dir, sizeof(dir), path);
	slash = strrchr(dir, '/');
	if (slash == NULL)
		return; /* the working directory */
	if (slash == dir)
		slash[1] = '\0';
	else
		*slash = '\0';
	if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
		return;
	f = note_at(cc, TW_CFG_WARNING, line, "%s = \"%s\": directory %s does not exist", key,
		    path, dir);
	tw_cfg_finding_hint(f, "create it before starting tickwire (mkdir -p %s)", dir);
}

static void check_credentials(struct cfg_ctx *cc, const char *path, uint32_t line)
{
	struct tw_cfg_finding *f;
	struct stat st;

	if (stat(path, &st) != 0) {
		f = note_at(cc, TW_CFG_WARNING, line, "session.credentials_file = \"%s\": %s",
			    path, strerror(errno));
		tw_cfg_finding_hint(f, "install it (mode 0600) before starting tickwire; "
				    "ansible's secrets role does");
		return;
	}
	if (!S_ISREG(st.st_mode)) {
		f = error_at(cc, line, "session.credentials_file = \"%s\": not a regular file",
			     path);
		tw_cfg_finding_hint(f, "name the file holding the iLink 3 keys");
		return;
	}
	if ((st.st_mode & 077) != 0) {
		f = error_at(cc, line, "session.credentials_file = \"%s\": mode %04o lets other "
			     "users read the keys", path, (unsigned int)(st.st_mode & 07777));
		tw_cfg_finding_hint(f, "chmod 600 %s", path);
	}
}

/* The iLink 3 gateway and session identity. Whether a live session has all
 * it needs is the program's check (a profile may name credentials for
 * another tool, as colo-example does); only the forms are checked here. */
static void load_gateway(struct cfg_ctx *cc)
{
	struct tw_cfg_session *se = &cc->cfg->session;
	struct tw_cfg_finding *f;
	struct in_addr addr;
	uint32_t line;
	int64_t v;

	if (get_string(cc, "session", "gateway_host", se->gateway_host,
		       sizeof(se->gateway_host), &line) && se->gateway_host[0] != '\0' &&
	    inet_pton(AF_INET, se->gateway_host, &addr) != 1) {
		f = error_at(cc, line, "session.gateway_host = \"%s\": not an IPv4 address",
			     se->gateway_host);
		tw_cfg_finding_hint(f, "write the gateway's address as a dotted quad, "
				    "e.g. \"127.0.0.1\"");
	}
	se->gateway_line = line;
	if (get_int(cc, "session", "gateway_port", &v, NULL))
		se->gateway_port = (uint16_t)v;
	if (get_int(cc, "session", "keep_alive_ms", &v, NULL))
		se->keep_alive_ms = (uint16_t)v;
	get_string(cc, "session", "session_id", se->session_id, sizeof(se->session_id), NULL);
	get_string(cc, "session", "firm_id", se->firm_id, sizeof(se->firm_id), NULL);
}

static void load_session(struct cfg_ctx *cc)
{
	struct tw_cfg *cfg = cc->cfg;
	struct tw_cfg_session *se = &cfg->session;
	char port_name[TW_CFG_NAME_MAX];
	struct tw_cfg_finding *f;
	uint32_t line, cred_line, port_line;
	int index;

	se->tx_port = -1;
	if (get_string(cc, "session", "file", se->file, sizeof(se->file), &line))
		check_parent_dir(cc, "session.file", se->file, line);
	if (get_string(cc, "session", "credentials_file", se->credentials_file,
		       sizeof(se->credentials_file), &cred_line) &&
	    se->credentials_file[0] != '\0')
		check_credentials(cc, se->credentials_file, cred_line);
	se->credentials_line = cred_line;
	load_gateway(cc);
	if (!get_string(cc, "session", "tx_port", port_name, sizeof(port_name), &port_line))
		return;
	if (port_name[0] != '\0' && cc->ld->ports_read) {
		index = tw_cfg__port_index(cfg, port_name);
		if (index < 0) {
			if (cc->ld->port_list_ok) {
				f = error_at(cc, port_line, "session.tx_port = \"%s\": no "
					     "[port.%s] in %s", port_name, port_name,
					     cfg->ports_path);
				tw_cfg_finding_hint(f, "name a port of ports.ini, or set \"\"");
			}
		} else if (cfg->ports[index].tx_queues == 0) {
			f = error_at(cc, port_line, "session.tx_port = \"%s\": the port has no tx "
				     "queue (%s:%u)", port_name, cfg->ports_path,
				     cfg->ports[index].section_line);
			tw_cfg_finding_hint(f, "set tx_queues = 1 in [port.%s]", port_name);
		} else {
			se->tx_port = index;
		}
	}
	if (cfg->strategy.enabled && port_name[0] == '\0' && se->credentials_file[0] == '\0') {
		f = error_at(cc, group_line(cc, "session"), "session: neither credentials_file "
			     "nor tx_port is set, so the strategy's orders have nowhere to go");
		tw_cfg_finding_hint(f, "set credentials_file (live session) or tx_port (write "
				    "orders to a port), or strategy.enabled = false");
	}
}

static void load_rest(struct cfg_ctx *cc)
{
	struct tw_cfg *cfg = cc->cfg;
	static const char *const recovery_names[] = { "none", "snapshot" };
	static const char *const join_names[] = { "auto", "trust", "recover" };
	static const char *const on_loss_names[] = { "rpt_seq", "stale_all" };
	static const char *const publish_names[] = { "end_of_event", "packet" };
	struct tw_cfg_finding *f;
	uint32_t line;
	int64_t v;
	int i;

	if (get_int(cc, "arbitration", "gap_wait_packets", &v, NULL))
		cfg->arbitration.gap_wait_packets = (uint32_t)v;
	if (get_int(cc, "arbitration", "gap_wait_us", &v, &line))
		cfg->arbitration.gap_wait_us = (uint32_t)v;
	if (cfg->arbitration.gap_wait_packets == 0 && cfg->arbitration.gap_wait_us == 0) {
		f = error_at(cc, group_line(cc, "arbitration"), "arbitration: gap_wait_packets "
			     "and gap_wait_us are both 0, so a gap would wait forever");
		tw_cfg_finding_hint(f, "bound the wait, e.g. gap_wait_us = 500;");
	}
	i = get_enum(cc, "recovery", "mode", recovery_names, 2, &cfg->recovery.mode_line);
	if (i >= 0)
		cfg->recovery.mode = (enum tw_cfg_recovery_mode)i;
	if (get_int(cc, "recovery", "max_wait_ms", &v, NULL))
		cfg->recovery.max_wait_ms = (uint32_t)v;
	get_bool(cc, "recovery", "cancel_on_stale", &cfg->recovery.cancel_on_stale, NULL);
	get_bool(cc, "recovery", "resume", &cfg->recovery.resume, NULL);
	get_bool(cc, "recovery", "kill_on_alarm", &cfg->recovery.kill_on_alarm, NULL);
	if (get_int(cc, "recovery", "silence_ms", &v, NULL))
		cfg->recovery.silence_ms = (uint32_t)v;
	i = get_enum(cc, "recovery", "join", join_names, 3, &cfg->recovery.join_line);
	if (i == 0)
		cfg->recovery.join = cfg->recovery.mode == TW_CFG_RECOVERY_SNAPSHOT ?
				     TW_CFG_JOIN_RECOVER : TW_CFG_JOIN_TRUST;
	else if (i > 0)
		cfg->recovery.join = (enum tw_cfg_join)(i - 1);
	if (i == 2 && cfg->recovery.mode != TW_CFG_RECOVERY_SNAPSHOT) {
		f = note_at(cc, TW_CFG_WARNING, cfg->recovery.join_line, "recovery.join = "
			    "\"recover\" without recovery.mode = \"snapshot\": an instrument "
			    "first seen mid-stream stays stale until a ChannelReset");
		tw_cfg_finding_hint(f, "set recovery.mode = \"snapshot\" (with snapshot feeds), "
				    "or join = \"trust\" to take books as they come");
	}
	i = get_enum(cc, "recovery", "on_loss", on_loss_names, 2, NULL);
	if (i >= 0)
		cfg->recovery.on_loss = (enum tw_cfg_on_loss)i;
	if (get_int(cc, "recovery", "buffer_packets", &v, NULL))
		cfg->recovery.buffer_packets = (uint32_t)v;
	i = get_enum(cc, "book", "publish", publish_names, 2, NULL);
	if (i >= 0)
		cfg->book.publish = (enum tw_cfg_publish)i;
	if (get_int(cc, "book", "max_instruments", &v, NULL))
		cfg->book.max_instruments = (uint32_t)v;
	load_mbo(cc);
	load_strategy(cc);
	load_risk(cc);
	load_session(cc);
	if (get_int(cc, "replay", "stop_after_packets", &v, NULL))
		cfg->replay.stop_after_packets = (uint64_t)v;
	if (get_int(cc, "replay", "stop_idle_ms", &v, NULL))
		cfg->replay.stop_idle_ms = (uint32_t)v;
	if (get_int(cc, "poll", "idle_sleep_us", &v, &cfg->poll.idle_sleep_us_line))
		cfg->poll.idle_sleep_us = (uint32_t)v;
	if (get_int(cc, "poll", "idle_polls", &v, NULL))
		cfg->poll.idle_polls = (uint32_t)v;
	if (get_int(cc, "poll", "order_out_idle_sleep_us", &v, NULL))
		cfg->poll.order_out_idle_sleep_us = (int32_t)v;
	if (get_int(cc, "poll", "order_out_nice", &v, NULL))
		cfg->poll.order_out_nice = (int32_t)v;
	if (cfg->poll.idle_sleep_us != 0) {
		f = note_at(cc, TW_CFG_INFO, cfg->poll.idle_sleep_us_line,
			    "poll.idle_sleep_us = %u: hot lcores sleep after %u empty polls; "
			    "the first packet after a quiet spell waits up to %u us",
			    cfg->poll.idle_sleep_us, cfg->poll.idle_polls,
			    cfg->poll.idle_sleep_us);
		tw_cfg_finding_hint(f, "for lab hosts that share their cpus; set "
				    "idle_sleep_us = 0 on a production core map");
	}
	if (get_string(cc, "latency", "file", cfg->latency_file, sizeof(cfg->latency_file),
		       &line) && cfg->latency_file[0] != '\0')
		check_parent_dir(cc, "latency.file", cfg->latency_file, line);
	if (get_int(cc, "stats", "interval_ms", &v, NULL))
		cfg->stats_interval_ms = (uint32_t)v;
	get_bool(cc, "checks", "require_isolation", &cfg->checks.require_isolation,
		 &cfg->checks.require_isolation_line);
	get_bool(cc, "checks", "require_dedicated_cores", &cfg->checks.require_dedicated_cores,
		 &cfg->checks.require_dedicated_cores_line);
	get_bool(cc, "checks", "require_numa_local", &cfg->checks.require_numa_local,
		 &cfg->checks.require_numa_local_line);
}

static char *read_text(struct cfg_ctx *cc, size_t *size)
{
	struct tw_cfg_finding *f;
	char *text;
	FILE *fp;
	int err;

	fp = fopen(cc->path, "rb");
	if (fp == NULL) {
		err = errno;
		f = error_at(cc, 0, "cannot open: %s", strerror(err));
		tw_cfg_finding_hint(f, "check the path given to --config");
		return NULL;
	}
	text = malloc(CFG_MAX_BYTES + 1);
	if (text == NULL) {
		fclose(fp);
		error_at(cc, 0, "out of memory");
		return NULL;
	}
	*size = fread(text, 1, CFG_MAX_BYTES + 1, fp);
	err = ferror(fp);
	fclose(fp);
	if (err != 0 || *size > CFG_MAX_BYTES || memchr(text, '\0', *size) != NULL) {
		error_at(cc, 0, "%s", err != 0 ? "read error" :
			 *size > CFG_MAX_BYTES ? "larger than 1 MiB" :
			 "contains a NUL byte: not a text file");
		free(text);
		return NULL;
	}
	text[*size] = '\0';
	return text;
}

void tw_cfg__load_config(struct tw_cfg__load *ld)
{
	struct cfg_ctx cc = { .ld = ld, .cfg = ld->cfg, .path = ld->cfg->config_path };
	struct tw_cfg *cfg = ld->cfg;
	struct tw_cfg_finding *f;
	size_t size;
	char *text;
	int i;

	text = read_text(&cc, &size);
	if (text == NULL)
		return;
	if (!lex_check(&cc, text, size)) {
		free(text);
		return;
	}
	config_init(&cc.lc);
	if (config_read_string(&cc.lc, text) != CONFIG_TRUE) {
		f = error_at(&cc, (uint32_t)config_error_line(&cc.lc), "syntax error: %s",
			     config_error_text(&cc.lc));
		tw_cfg_finding_hint(f, "libconfig syntax: name = value; groups name = { ... }; "
				    "strings in double quotes");
		config_destroy(&cc.lc);
		free(text);
		return;
	}
	free(text);
	ld->config_read = true;
	walk(&cc, config_root_setting(&cc.lc), "", 0);
	i = get_enum(&cc, "", "topology", topology_names, 2, &cfg->topology_line);
	if (i >= 0)
		cfg->topology = (enum tw_cfg_topology)i;
	load_lcores(&cc);
	cfg->capture_to_decode.type = TW_CFG_QUEUE_BATCHED;
	load_handoff(&cc, "handoff.capture_to_decode", &cfg->capture_to_decode, true);
	if (cfg->topology == TW_CFG_TOPOLOGY_ONE_THREAD && cfg->capture_to_decode.line != 0) {
		f = note_at(&cc, TW_CFG_INFO, cfg->capture_to_decode.line,
			    "handoff.capture_to_decode: not used by topology \"one-thread\"");
		tw_cfg_finding_hint(f, "kept so the same file runs both topologies");
	}
	cfg->signal_to_order_out.type = TW_CFG_QUEUE_BQUEUE;
	load_handoff(&cc, "handoff.signal_to_order_out", &cfg->signal_to_order_out, false);
	load_rest(&cc);
	config_destroy(&cc.lc);
}

const char *tw_cfg_topology_name(enum tw_cfg_topology topology)
{
	return (unsigned int)topology < 2 ? topology_names[topology] : "?";
}

const char *tw_cfg_queue_type_name(enum tw_cfg_queue_type type)
{
	return (unsigned int)type < 5 ? queue_names[type] : "?";
}
