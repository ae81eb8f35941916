/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * Internals of lib/config shared between its .c files. Not installed.
 */
#ifndef TICKWIRE_CONFIG_PVT_H
#define TICKWIRE_CONFIG_PVT_H

#include "tw_config.h"

/* ports.ini is read twice: once by our own line scanner, which knows where
 * every section and key is (iniparser keeps no line numbers) and rejects what
 * iniparser would silently accept or mangle; then by iniparser for the
 * values. Bounds of the scan: */
#define TW_CFG__INI_MAX_BYTES (1u << 20)   /* file size */
#define TW_CFG__INI_MAX_LINE 1000          /* iniparser's own limit is 1024 with the newline */
#define TW_CFG__INI_MAX_SECTIONS 40
#define TW_CFG__INI_MAX_ENTRIES 320
#define TW_CFG__SECTION_MAX 48             /* "port." or "feed." + a name, with the NUL */

struct tw_cfg__ini_section {
	char name[TW_CFG__SECTION_MAX];
	uint32_t line;
};

struct tw_cfg__ini_entry {
	uint32_t section;                   /* index into sections */
	char key[TW_CFG_NAME_MAX];
	uint32_t line;
};

struct tw_cfg__ini {
	uint32_t n_sections;
	uint32_t n_entries;
	struct tw_cfg__ini_section sections[TW_CFG__INI_MAX_SECTIONS];
	struct tw_cfg__ini_entry entries[TW_CFG__INI_MAX_ENTRIES];
};

/*
 * Scan @path; every syntax problem becomes an error finding. Returns 0 when
 * the file is well formed, -EINVAL when it is not (findings added), -errno
 * when it cannot be read (a finding added as well).
 */
int tw_cfg__ini_scan(const char *path, struct tw_cfg__ini *ini, struct tw_cfg_findings *findings);

/* Line of [section] key, or of [section] when @key is NULL; 0 if absent. */
uint32_t tw_cfg__ini_line(const struct tw_cfg__ini *ini, const char *section, const char *key);

/* Schema lookups (keys.c). @section is a concrete name ("port.nic_a"); the
 * table's "port.*" matches it. */
const struct tw_cfg_key *tw_cfg__key_find(enum tw_cfg_file file, const char *section,
					  const char *name);
bool tw_cfg__group_known(enum tw_cfg_file file, const char *section);
/* The known key (or group, when @want_group) nearest to @name within
 * edit distance 2, or NULL. */
const char *tw_cfg__suggest(enum tw_cfg_file file, const char *section, const char *name,
			    bool want_group);
/* Whether a key name looks like an inline credential ("secret", "password"...). */
bool tw_cfg__looks_secret(const char *name);

/* Parse DPDK's --lcores syntax into @eal's lcore_defined / lcore_cpus.
 * Returns 0, or -EINVAL with a reason in @why. */
int tw_cfg__parse_lcores(const char *text, struct tw_cfg_eal *eal, char *why, size_t why_len);

/* Loader state shared by ports.c, tickwire_cfg.c and config.c. */
struct tw_cfg__load {
	struct tw_cfg *cfg;
	struct tw_cfg_findings *findings;
	uint32_t errors_at_start;
	bool ports_read;        /* ports.ini scanned and parsed by iniparser */
	bool lcores_ok;         /* eal.lcores parsed */
	bool port_list_ok;      /* every [port.*] loaded without error */
	bool config_read;       /* tickwire.cfg parsed by libconfig */
	bool lcore_ids_ok;      /* every lcores.* value loaded */
};

void tw_cfg__load_ports(struct tw_cfg__load *ld);
void tw_cfg__load_config(struct tw_cfg__load *ld);

/* Index of the port named @name, or -1. */
int tw_cfg__port_index(const struct tw_cfg *cfg, const char *name);

/* Copy @src into @dst of @size bytes; returns false (and copies nothing)
 * when it does not fit. */
bool tw_cfg__copy(char *dst, size_t size, const char *src);

#endif /* TICKWIRE_CONFIG_PVT_H */
