/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * The schema: every key of ports.ini and tickwire.cfg with its type, range
 * and default. The loaders take ranges and defaults from here, and the
 * documentation test checks dpdk-config/README.md against it, so the three
 * cannot drift apart. Checks a range cannot express (powers of two, cross
 * references) live in the loaders.
 */
#include <ctype.h>
#include <string.h>

#include "config_pvt.h"

#define P TW_CFG_FILE_PORTS
#define C TW_CFG_FILE_CONFIG
#define I TW_CFG_KEY_INT
#define B TW_CFG_KEY_BOOL
#define S TW_CFG_KEY_STRING
#define L TW_CFG_KEY_INT_LIST
#define REQ true
#define OPT false

static const struct tw_cfg_key keys[] = {
	/* ports.ini */
	{ P, "eal", "lcores", S, REQ, 1, TW_CFG_STRING_MAX - 1, NULL },
	{ P, "eal", "file_prefix", S, REQ, 1, TW_CFG_NAME_MAX - 1, NULL },
	{ P, "eal", "no_huge", B, OPT, 0, 1, "false" },
	{ P, "eal", "no_pci", B, OPT, 0, 1, "false" },
	{ P, "eal", "memory_mb", I, OPT, 0, 1048576, "0" },
	{ P, "eal", "hugepage_size", S, OPT, 1, 7, "2M" },
	{ P, "eal", "hugepages", I, OPT, 0, 65536, "0" },
	{ P, "eal", "huge_dir", S, OPT, 0, TW_CFG_PATH_MAX - 1, "" },
	{ P, "eal", "args", S, OPT, 0, TW_CFG_STRING_MAX - 1, "" },
	{ P, "mempool", "mbufs", I, OPT, 255, 16777215, "8191" },
	{ P, "mempool", "cache", I, OPT, 0, 512, "256" },
	{ P, "mempool", "data_room", I, OPT, 1646, 65535, "2176" },
	{ P, "port.*", "pci", S, OPT, 1, 15, NULL },
	{ P, "port.*", "vdev", S, OPT, 1, TW_CFG_STRING_MAX - 1, NULL },
	{ P, "port.*", "rx_queues", I, OPT, 0, 16, "1" },
	{ P, "port.*", "tx_queues", I, OPT, 0, 16, "1" },
	{ P, "port.*", "rx_desc", I, OPT, 64, 16384, "1024" },
	{ P, "port.*", "tx_desc", I, OPT, 64, 16384, "1024" },
	{ P, "feed.*", "channel", I, REQ, 1, 65535, NULL },
	{ P, "feed.*", "kind", S, OPT, 1, 15, "incremental" },
	{ P, "feed.*", "side", S, REQ, 1, 15, NULL },
	{ P, "feed.*", "group", S, REQ, 1, 15, NULL },
	{ P, "feed.*", "udp_port", I, REQ, 1, 65535, NULL },
	{ P, "feed.*", "port", S, REQ, 1, TW_CFG_NAME_MAX - 1, NULL },
	{ P, "feed.*", "rx_queue", I, OPT, 0, 15, "0" },
	{ P, "feed.*", "fault.drop_ppm", I, OPT, 0, 1000000, "0" },
	{ P, "feed.*", "fault.dup_ppm", I, OPT, 0, 1000000, "0" },
	{ P, "feed.*", "fault.reorder_ppm", I, OPT, 0, 1000000, "0" },
	{ P, "feed.*", "fault.reorder_window", I, OPT, 1, TW_CFG_FAULT_REORDER_MAX, "4" },
	{ P, "feed.*", "fault.delay_ppm", I, OPT, 0, 1000000, "0" },
	{ P, "feed.*", "fault.delay_packets", I, OPT, 1, TW_CFG_FAULT_DELAY_MAX, "16" },
	{ P, "feed.*", "fault.delay_us", I, OPT, 0, 1000000, "0" },
	{ P, "feed.*", "fault.first_seq", I, OPT, 0, UINT32_MAX, "0" },
	{ P, "feed.*", "fault.last_seq", I, OPT, 0, UINT32_MAX, "0" },
	{ P, "feed.*", "fault.seed", I, OPT, 0, INT64_C(1) << 53, "0" },
	{ P, "feed.*", "fault.die_after", I, OPT, 0, INT64_C(1) << 53, "0" },

	/* tickwire.cfg */
	{ C, "lcores", "main", I, REQ, 0, TW_CFG_MAX_LCORES - 1, NULL },
	{ C, "lcores", "capture_a", I, OPT, 0, TW_CFG_MAX_LCORES - 1, NULL },
	{ C, "lcores", "capture_b", I, OPT, 0, TW_CFG_MAX_LCORES - 1, NULL },
	{ C, "lcores", "decode", I, REQ, 0, TW_CFG_MAX_LCORES - 1, NULL },
	{ C, "lcores", "order_out", I, REQ, 0, TW_CFG_MAX_LCORES - 1, NULL },
	{ C, "", "topology", S, OPT, 1, 31, "\"two-stage\"" },
	{ C, "handoff.capture_to_decode", "type", S, OPT, 1, 31, "\"batched\"" },
	{ C, "handoff.capture_to_decode", "capacity", I, OPT, 16, 1048576, "4096" },
	{ C, "handoff.capture_to_decode", "shards", I, OPT, 1, 64, "4" },
	{ C, "handoff.capture_to_decode", "overflow", S, OPT, 1, 31, "\"drop\"" },
	{ C, "handoff.signal_to_order_out", "type", S, OPT, 1, 31, "\"bqueue\"" },
	{ C, "handoff.signal_to_order_out", "capacity", I, OPT, 16, 1048576, "1024" },
	{ C, "handoff.signal_to_order_out", "shards", I, OPT, 1, 64, "4" },
	{ C, "handoff.signal_to_order_out", "overflow", S, OPT, 1, 31, "\"fail\"" },
	{ C, "arbitration", "gap_wait_packets", I, OPT, 0, 1000000, "64" },
	{ C, "arbitration", "gap_wait_us", I, OPT, 0, 1000000, "500" },
	{ C, "recovery", "mode", S, OPT, 1, 31, "\"none\"" },
	{ C, "recovery", "max_wait_ms", I, OPT, 1, 600000, "10000" },
	{ C, "recovery", "cancel_on_stale", B, OPT, 0, 1, "true" },
	{ C, "recovery", "resume", B, OPT, 0, 1, "true" },
	{ C, "recovery", "kill_on_alarm", B, OPT, 0, 1, "false" },
	{ C, "recovery", "silence_ms", I, OPT, 0, 600000, "30000" },
	{ C, "recovery", "join", S, OPT, 1, 31, "\"auto\"" },
	{ C, "recovery", "on_loss", S, OPT, 1, 31, "\"rpt_seq\"" },
	{ C, "recovery", "buffer_packets", I, OPT, 16, 1048576, "1024" },
	{ C, "book", "publish", S, OPT, 1, 31, "\"end_of_event\"" },
	{ C, "book", "max_instruments", I, OPT, 16, 1048576, "1024" },
	{ C, "book.mbo", "channels", L, OPT, 0, 65535, "[]" },
	{ C, "book.mbo", "instruments", I, OPT, 1, 65536, "64" },
	{ C, "book.mbo", "orders", I, OPT, 16, 16777216, "4096" },
	{ C, "book.mbo", "levels", I, OPT, 4, 1048576, "1024" },
	{ C, "book.mbo", "diffs", I, OPT, 0, 4096, "16" },
	{ C, "book.mbo", "presize", B, OPT, 0, 1, "false" },
	{ C, "strategy", "enabled", B, OPT, 0, 1, "true" },
	{ C, "strategy", "instruments", L, REQ, 1, 2147483647, NULL },
	{ C, "strategy", "imbalance_numerator", I, OPT, 1, 1000000, "3" },
	{ C, "strategy", "imbalance_denominator", I, OPT, 1, 1000000, "1" },
	{ C, "strategy", "order_qty", I, OPT, 1, 1000000, "1" },
	{ C, "strategy", "max_orders", I, OPT, 1, 100000000, "100" },
	{ C, "strategy", "queue_max_ahead", I, OPT, 0, 1000000000, "0" },
	{ C, "risk", "max_order_qty", I, REQ, 1, 1000000, NULL },
	{ C, "risk", "price_band_ticks", I, REQ, 1, 100000, NULL },
	{ C, "risk", "max_position", I, REQ, 1, 10000000, NULL },
	{ C, "risk", "max_open_orders", I, REQ, 1, 100000, NULL },
	{ C, "risk", "max_messages_per_second", I, REQ, 1, 100000, NULL },
	{ C, "session", "file", S, REQ, 1, TW_CFG_PATH_MAX - 1, NULL },
	{ C, "session", "credentials_file", S, OPT, 0, TW_CFG_PATH_MAX - 1, "\"\"" },
	{ C, "session", "tx_port", S, OPT, 0, TW_CFG_NAME_MAX - 1, "\"\"" },
	{ C, "session", "gateway_host", S, OPT, 0, 15, "\"\"" },
	{ C, "session", "gateway_port", I, OPT, 0, 65535, "0" },
	{ C, "session", "session_id", S, OPT, 0, 3, "\"\"" },
	{ C, "session", "firm_id", S, OPT, 0, 5, "\"\"" },
	{ C, "session", "keep_alive_ms", I, OPT, 100, 60000, "5000" },
	{ C, "replay", "stop_after_packets", I, OPT, 0, INT64_C(1) << 53, "0" },
	{ C, "replay", "stop_idle_ms", I, OPT, 0, 3600000, "0" },
	{ C, "poll", "idle_sleep_us", I, OPT, 0, 100000, "0" },
	{ C, "poll", "idle_polls", I, OPT, 1, 1000000000, "100000" },
	{ C, "poll", "order_out_idle_sleep_us", I, OPT, -1, 100000, "-1" },
	{ C, "poll", "order_out_nice", I, OPT, -20, 19, "0" },
	{ C, "latency", "file", S, OPT, 0, TW_CFG_PATH_MAX - 1, "\"\"" },
	{ C, "stats", "interval_ms", I, OPT, 0, 3600000, "1000" },
	{ C, "checks", "require_isolation", B, OPT, 0, 1, "false" },
	{ C, "checks", "require_dedicated_cores", B, OPT, 0, 1, "true" },
	{ C, "checks", "require_numa_local", B, OPT, 0, 1, "true" },
};

const struct tw_cfg_key *tw_cfg_keys(size_t *count)
{
	if (count != NULL)
		*count = sizeof(keys) / sizeof(keys[0]);
	return keys;
}

/* "port.*" matches "port.NAME" with a non-empty NAME. */
static bool section_matches(const char *pattern, const char *section)
{
	size_t len = strlen(pattern);

	if (len >= 2 && strcmp(pattern + len - 2, ".*") == 0)
		return strncmp(pattern, section, len - 1) == 0 && section[len - 1] != '\0';
	return strcmp(pattern, section) == 0;
}

const struct tw_cfg_key *tw_cfg__key_find(enum tw_cfg_file file, const char *section,
					  const char *name)
{
	size_t i;

	/* the name first: it rules out nearly every entry in one compare */
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (keys[i].file == file && strcmp(keys[i].name, name) == 0 &&
		    section_matches(keys[i].section, section))
			return &keys[i];
	return NULL;
}

bool tw_cfg__group_known(enum tw_cfg_file file, const char *section)
{
	size_t i, len = strlen(section);

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		if (keys[i].file != file)
			continue;
		if (section_matches(keys[i].section, section))
			return true;
		/* a parent of a known group ("handoff" of "handoff.capture_to_decode") */
		if (len > 0 && strncmp(keys[i].section, section, len) == 0 &&
		    keys[i].section[len] == '.')
			return true;
	}
	return false;
}

/* Levenshtein distance, capped: returns 3 for anything above 2. */
static unsigned int distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j;
	unsigned int row[TW_CFG_NAME_MAX + 1], prev_diag, tmp;

	if (la > TW_CFG_NAME_MAX || lb > TW_CFG_NAME_MAX)
		return 3;
	if ((la > lb ? la - lb : lb - la) > 2)
		return 3;
	for (j = 0; j <= lb; j++)
		row[j] = (unsigned int)j;
	for (i = 1; i <= la; i++) {
		prev_diag = row[0];
		row[0] = (unsigned int)i;
		for (j = 1; j <= lb; j++) {
			unsigned int best = prev_diag + (a[i - 1] == b[j - 1] ? 0u : 1u);

			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			tmp = row[j];
			row[j] = best;
			prev_diag = tmp;
		}
	}
	return row[lb] > 2 ? 3 : row[lb];
}

/* The last component of a group path: "capture_to_decode" of "handoff.capture_to_decode". */
static const char *group_leaf(const char *group, const char *parent, char *buf, size_t size)
{
	size_t plen = strlen(parent);
	const char *rest;
	const char *dot;

	if (plen > 0) {
		if (strncmp(group, parent, plen) != 0 || group[plen] != '.')
			return NULL;
		rest = group + plen + 1;
	} else {
		rest = group;
	}
	if (*rest == '\0')
		return NULL;
	dot = strchr(rest, '.');
	if (dot == NULL)
		return rest;
	if ((size_t)(dot - rest) >= size)
		return NULL;
	memcpy(buf, rest, (size_t)(dot - rest));
	buf[dot - rest] = '\0';
	return buf;
}

const char *tw_cfg__suggest(enum tw_cfg_file file, const char *section, const char *name,
			    bool want_group)
{
	static _Thread_local char leaf_buf[TW_CFG__SECTION_MAX];
	const char *best = NULL;
	unsigned int best_d = 3, d;
	size_t i;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		const char *candidate;

		if (keys[i].file != file)
			continue;
		if (want_group) {
			char buf[TW_CFG__SECTION_MAX];

			candidate = group_leaf(keys[i].section, section, buf, sizeof(buf));
			if (candidate == NULL || strchr(candidate, '*') != NULL)
				continue;
			d = distance(name, candidate);
			if (d < best_d) {
				tw_cfg__copy(leaf_buf, sizeof(leaf_buf), candidate);
				best = leaf_buf;
				best_d = d;
			}
			continue;
		}
		if (!section_matches(keys[i].section, section))
			continue;
		candidate = keys[i].name;
		d = distance(name, candidate);
		/* a key cut short ("fault.drop" for "fault.drop_ppm") */
		if (d > 2 && strlen(name) >= 4 && strncmp(candidate, name, strlen(name)) == 0)
			d = 2;
		if (d < best_d) {
			best = candidate;
			best_d = d;
		}
	}
	return best;
}

bool tw_cfg__looks_secret(const char *name)
{
	static const char *const words[] = {
		"secret", "password", "passwd", "token", "private", "hmac", "apikey",
		"api_key", "access_key", "credential",
	};
	char lower[TW_CFG_NAME_MAX * 2];
	size_t i;

	for (i = 0; name[i] != '\0' && i < sizeof(lower) - 1; i++)
		lower[i] = (char)tolower((unsigned char)name[i]);
	lower[i] = '\0';
	if (strcmp(lower, "credentials_file") == 0)
		return false;
	if (strcmp(lower, "key") == 0)
		return true;
	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strstr(lower, words[i]) != NULL)
			return true;
	return false;
}
