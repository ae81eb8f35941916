/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * The session result of tickwire-replay as JSON. See tw_result.h; the schema
 * is in app/backtest/README.md.
 *
 * The counters are those tw_chain_print() writes, read back from its text
 * (open_memstream): the result then holds exactly what the replay prints,
 * in its order, and a counter added to the print is in the result too.
 * SHA-256 is OpenSSL's (libcrypto, already lib/ilink3's dependency).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "tw_chain.h"
#include "tw_msg.h"
#include "tw_pcap.h"
#include "tw_result.h"

struct file_facts {
	uint64_t bytes;
	char sha256[2 * 32 + 1];
};

static const char *
base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash != NULL ? slash + 1 : path;
}

static int
hash_file(const char *path, struct file_facts *facts)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char digest[EVP_MAX_MD_SIZE];
	unsigned int digest_length = 0;
	unsigned char buf[1 << 16];
	EVP_MD_CTX *md;
	ssize_t n;
	int fd, rc = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	md = EVP_MD_CTX_new();
	if (md == NULL || EVP_DigestInit_ex(md, EVP_sha256(), NULL) != 1) {
		rc = -ENOMEM;
		goto out;
	}
	facts->bytes = 0;
	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			rc = -errno;
			goto out;
		}
		facts->bytes += (uint64_t)n;
		if (EVP_DigestUpdate(md, buf, (size_t)n) != 1) {
			rc = -EIO;
			goto out;
		}
	}
	if (EVP_DigestFinal_ex(md, digest, &digest_length) != 1 || digest_length != 32) {
		rc = -EIO;
		goto out;
	}
	for (unsigned int i = 0; i < 32; i++) {
		facts->sha256[2 * i] = hex[digest[i] >> 4];
		facts->sha256[2 * i + 1] = hex[digest[i] & 15];
	}
	facts->sha256[64] = '\0';
out:
	EVP_MD_CTX_free(md);
	close(fd);
	return rc;
}

/* A JSON string: quotes, backslash and control characters escaped; bytes
 * above 0x7f are copied (file names are taken as UTF-8). */
static void
put_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s != '\0'; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			fprintf(out, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(out, "\\u%04x", ch);
		else
			fputc(ch, out);
	}
	fputc('"', out);
}

static void
put_hist(FILE *out, const char *name, const struct tw_result_hist *h, bool last)
{
	fprintf(out, "    \"%s\": [", name);
	for (unsigned int i = 0; i < TW_RESULT_HIST_BUCKETS; i++)
		fprintf(out, "%s%" PRIu64, i == 0 ? "" : ", ", h != NULL ? h->count[i] : 0);
	fprintf(out, "]%s\n", last ? "" : ",");
}

static const char *
side_name(uint8_t side)
{
	return side == TW_ORDER_BUY ? "buy" : side == TW_ORDER_SELL ? "sell" : "none";
}

/* A value of the counters block: an integer, or else a string. */
static bool
is_integer(const char *v)
{
	if (*v == '-')
		v++;
	if (*v == '\0')
		return false;
	for (; *v != '\0'; v++)
		if (*v < '0' || *v > '9')
			return false;
	return true;
}

/*
 * "counters": the "== counters" block of tw_chain_print() as name -> value;
 * a line that is not "name value" (mbo.diff ...) goes to "diagnostics".
 */
static int
put_counters(FILE *out, const struct tw_chain *chain)
{
	char *text = NULL, *line, *save = NULL;
	size_t size = 0;
	FILE *mem = open_memstream(&text, &size);
	bool in_block = false, first = true;
	char **diag = NULL;
	size_t n_diag = 0;

	if (mem == NULL)
		return -ENOMEM;
	tw_chain_print(chain, mem, 0);
	if (fclose(mem) != 0) {
		free(text);
		return -ENOMEM;
	}
	fprintf(out, "  \"counters\": {");
	for (line = strtok_r(text, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
		char *space = strchr(line, ' ');

		if (strncmp(line, "== ", 3) == 0) {
			in_block = strcmp(line, "== counters") == 0;
			continue;
		}
		if (!in_block)
			continue;
		if (space == NULL || strchr(space + 1, ' ') != NULL) {
			char **g = realloc(diag, (n_diag + 1) * sizeof(*diag));

			if (g == NULL) {
				free(diag);
				free(text);
				return -ENOMEM;
			}
			diag = g;
			diag[n_diag++] = line;
			continue;
		}
		*space = '\0';
		fprintf(out, "%s\n    ", first ? "" : ",");
		put_string(out, line);
		fprintf(out, ": ");
		if (is_integer(space + 1))
			fputs(space + 1, out);
		else
			put_string(out, space + 1);
		first = false;
	}
	fprintf(out, "\n  },\n  \"diagnostics\": [");
	for (size_t i = 0; i < n_diag; i++) {
		fprintf(out, "%s\n    ", i == 0 ? "" : ",");
		put_string(out, diag[i]);
	}
	fprintf(out, "%s],\n", n_diag != 0 ? "\n  " : "");
	free(diag);
	free(text);
	return 0;
}

static uint32_t
get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static uint64_t
get_le64(const uint8_t *p)
{
	return (uint64_t)get_le32(p) | (uint64_t)get_le32(p + 4) << 32;
}

/*
 * "orders" and "cancels": the order and cancel frames of the orders pcap
 * (tw_msg.h's 40-byte wire layout), in the order they were written.
 */
static int
put_orders(FILE *out, const char *orders_path)
{
	static const char *const keys[2] = {"orders", "cancels"};

	for (int pass = 0; pass < 2; pass++) {
		const char *magic = pass == 0 ? TW_ORDER_WIRE_MAGIC : TW_CANCEL_WIRE_MAGIC;
		struct tw_pcap *pcap = NULL;
		struct tw_pcap_frame frame;
		bool first = true;
		int rc = 0;

		fprintf(out, "  \"%s\": [", keys[pass]);
		if (orders_path != NULL && (pcap = tw_pcap_open(orders_path)) == NULL)
			return -errno;
		while (pcap != NULL && (rc = tw_pcap_next(pcap, &frame)) == 1) {
			struct tw_pcap_l4 l4;
			const uint8_t *p;

			if (tw_pcap_parse_frame(frame.data, frame.caplen, frame.linktype, &l4,
						NULL) != 0 || l4.protocol != 17 ||
			    l4.dst_port != TW_ORDER_UDP_PORT ||
			    l4.payload_length < TW_ORDER_WIRE_SIZE ||
			    memcmp(l4.payload, magic, 4) != 0)
				continue;
			p = l4.payload;
			fprintf(out, "%s\n    {\"client_order_id\": %" PRIu32 ", \"security_id\": %"
				PRId32 ", \"side\": \"%s\", \"qty\": %" PRIu32 ", \"price\": %"
				PRId64, first ? "" : ",", get_le32(p + 4), (int32_t)get_le32(p + 8),
				side_name(p[12]), get_le32(p + 16), (int64_t)get_le64(p + 24));
			if (pass == 0)
				fprintf(out, ", \"trigger_seq\": %" PRIu32 "}", get_le32(p + 20));
			else
				fprintf(out, ", \"why\": %u}", p[13]);
			first = false;
		}
		tw_pcap_close(pcap);
		if (rc < 0)
			return -EPROTO;
		fprintf(out, "%s],\n", first ? "" : "\n  ");
	}
	return 0;
}

static int
cmp_position(const void *a, const void *b)
{
	const struct tw_result_position *x = *(const struct tw_result_position *const *)a;
	const struct tw_result_position *y = *(const struct tw_result_position *const *)b;

	return (x->security_id > y->security_id) - (x->security_id < y->security_id);
}

static int
put_fills_positions(FILE *out, const struct tw_result_session *s)
{
	const struct tw_result_position **sorted;

	fprintf(out, "  \"fills\": [");
	for (uint32_t i = 0; i < s->n_fills; i++) {
		const struct tw_result_fill *f = &s->fills[i];

		fprintf(out, "%s\n    {\"client_order_id\": %" PRIu32 ", \"security_id\": %" PRId32
			", \"side\": \"%s\", \"qty\": %" PRIu32 ", \"leaves_qty\": %" PRIu32
			", \"price\": %" PRId64 ", \"time_ns\": %" PRIu64 "}", i == 0 ? "" : ",",
			f->client_order_id, f->security_id, side_name(f->side), f->qty,
			f->leaves_qty, f->price, f->time_ns);
	}
	fprintf(out, "%s],\n  \"positions\": {", s->n_fills != 0 ? "\n  " : "");
	sorted = calloc(s->n_positions != 0 ? s->n_positions : 1, sizeof(*sorted));
	if (sorted == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; i < s->n_positions; i++)
		sorted[i] = &s->positions[i];
	qsort(sorted, s->n_positions, sizeof(*sorted), cmp_position);
	for (uint32_t i = 0; i < s->n_positions; i++)
		fprintf(out, "%s\n    \"%" PRId32 "\": {\"position\": %" PRId64 ", \"realised\": %"
			PRId64 ", \"unrealised\": %" PRId64 "}", i == 0 ? "" : ",",
			sorted[i]->security_id, sorted[i]->position, sorted[i]->realised,
			sorted[i]->unrealised);
	fprintf(out, "%s},\n", s->n_positions != 0 ? "\n  " : "");
	free(sorted);
	return 0;
}

/* One capture: bytes and hash, and the frames it holds (read again). */
static int
put_capture(FILE *out, const char *path, bool last)
{
	struct file_facts facts;
	struct tw_pcap_frame frame;
	struct tw_pcap *pcap;
	uint64_t frames = 0;
	int rc = hash_file(path, &facts);

	if (rc != 0)
		return rc;
	pcap = tw_pcap_open(path);
	while (pcap != NULL && (rc = tw_pcap_next(pcap, &frame)) == 1)
		frames++;
	tw_pcap_close(pcap);
	fprintf(out, "      {\"file\": ");
	put_string(out, base_name(path));
	fprintf(out, ", \"bytes\": %" PRIu64 ", \"frames\": %" PRIu64 ", \"complete\": %s, "
		"\"sha256\": \"%s\"}%s\n", facts.bytes, frames,
		pcap != NULL && rc == 0 ? "true" : "false", facts.sha256, last ? "" : ",");
	return 0;
}

static int
put_profile_file(FILE *out, const char *key, const char *path, bool last)
{
	struct file_facts facts;
	int rc = hash_file(path, &facts);

	if (rc != 0)
		return rc;
	fprintf(out, "    \"%s\": {\"file\": ", key);
	put_string(out, base_name(path));
	fprintf(out, ", \"bytes\": %" PRIu64 ", \"sha256\": \"%s\"}%s\n", facts.bytes,
		facts.sha256, last ? "" : ",");
	return 0;
}

static int
put_result(FILE *out, const struct tw_result_session *s, const struct tw_chain *chain)
{
	const char *name = s->name;
	int rc;

	if (name == NULL || name[0] == '\0')
		name = s->n_inputs != 0 ? base_name(s->inputs[0]) : "";
	fprintf(out, "{\n  \"schema\": \"%s\",\n  \"session\": ", TW_RESULT_SCHEMA);
	put_string(out, name);
	fprintf(out, ",\n  \"inputs\": {\n    \"captures\": [\n");
	for (uint32_t i = 0; i < s->n_inputs; i++)
		if ((rc = put_capture(out, s->inputs[i], i + 1 == s->n_inputs)) != 0)
			return rc;
	fprintf(out, "    ],\n");
	if ((rc = put_profile_file(out, "ports", s->ports_path, false)) != 0 ||
	    (rc = put_profile_file(out, "config", s->config_path, true)) != 0)
		return rc;
	fprintf(out, "  },\n  \"replay\": {\"frames\": %" PRIu64 ", \"passed\": %" PRIu64
		", \"filtered\": %" PRIu64 "},\n", s->frames, s->passed, s->filtered);
	if ((rc = put_counters(out, chain)) != 0 || (rc = put_orders(out, s->orders_path)) != 0 ||
	    (rc = put_fills_positions(out, s)) != 0)
		return rc;
	fprintf(out, "  \"latency\": {\n    \"unit\": \"ns\",\n    \"buckets\": %d,\n",
		TW_RESULT_HIST_BUCKETS);
	put_hist(out, "order_to_ack_ns", s->order_to_ack, false);
	put_hist(out, "order_to_fill_ns", s->order_to_fill, true);
	fprintf(out, "  }\n}\n");
	return 0;
}

int
tw_result_write(const char *path, const struct tw_result_session *s,
		const struct tw_chain *chain)
{
	char tmp[PATH_MAX];
	FILE *out;
	int rc;

	if (path == NULL || s == NULL || chain == NULL || s->ports_path == NULL ||
	    s->config_path == NULL || (s->n_inputs != 0 && s->inputs == NULL) ||
	    (s->n_fills != 0 && s->fills == NULL) ||
	    (s->n_positions != 0 && s->positions == NULL))
		return -EINVAL;
	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	out = fopen(tmp, "w");
	if (out == NULL)
		return -errno;
	rc = put_result(out, s, chain);
	if (ferror(out) && rc == 0)
		rc = -EIO;
	if (fclose(out) != 0 && rc == 0)
		rc = -errno;
	if (rc == 0 && rename(tmp, path) != 0)
		rc = -errno;
	if (rc != 0)
		unlink(tmp);
	return rc;
}

const char *
tw_result_orders_path(const char *result_path)
{
	static char path[PATH_MAX];

	if (snprintf(path, sizeof(path), "%s.orders.pcap", result_path) >= (int)sizeof(path)) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	return path;
}
