/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * Latency records: a preallocated array filled by one thread, and the file
 * format of tw_latency.h (encoded byte by byte, so the file is
 * little-endian on any host).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tw_latency.h"

int
tw_lat_init(struct tw_lat_recorder *r, uint64_t capacity)
{
	memset(r, 0, sizeof(*r));
	if (capacity == 0)
		return 0;
	r->records = calloc(capacity, sizeof(*r->records));
	if (r->records == NULL)
		return -ENOMEM;
	r->capacity = capacity;
	return 0;
}

void
tw_lat_fini(struct tw_lat_recorder *r)
{
	free(r->records);
	r->records = NULL;
}

struct tw_lat_record *
tw_lat_add(struct tw_lat_recorder *r, const struct tw_lat_record *rec)
{
	uint64_t end = rec->stream == TW_LAT_ORDER ? rec->t3 : rec->t1;
	uint64_t d = end > rec->t0 ? end - rec->t0 : 0;
	unsigned int b = d == 0 ? 0 : 63 - (unsigned int)__builtin_clzll(d);

	if (b >= TW_LAT_BUCKETS)
		b = TW_LAT_BUCKETS - 1;
	/* Single writer; relaxed stores pair with the relaxed loads of
	 * tw_lat_hist_percentile() on the telemetry thread (no ordering needed
	 * between buckets, each value is individually consistent). */
	__atomic_store_n(&r->hist[b], r->hist[b] + 1, __ATOMIC_RELAXED);
	if (d > r->max)
		__atomic_store_n(&r->max, d, __ATOMIC_RELAXED);
	if (r->count < r->capacity) {
		r->records[r->count] = *rec;
		return &r->records[r->count++];
	}
	r->dropped++;
	return NULL;
}

uint64_t
tw_lat_hist_percentile(const struct tw_lat_recorder *r, uint32_t per_10000)
{
	uint64_t total = 0, seen = 0, want;

	for (unsigned int i = 0; i < TW_LAT_BUCKETS; i++)
		total += __atomic_load_n(&r->hist[i], __ATOMIC_RELAXED);
	if (total == 0)
		return 0;
	want = (total * per_10000 + 9999) / 10000;
	for (unsigned int i = 0; i < TW_LAT_BUCKETS; i++) {
		seen += __atomic_load_n(&r->hist[i], __ATOMIC_RELAXED);
		if (seen >= want)
			return (UINT64_C(2) << i) - 1;
	}
	return __atomic_load_n(&r->max, __ATOMIC_RELAXED);
}

static void
put_le(uint8_t *p, uint64_t v, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t
get_le(const uint8_t *p, unsigned int n)
{
	uint64_t v = 0;

	for (unsigned int i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static void
encode_record(uint8_t *p, const struct tw_lat_record *x)
{
	memset(p, 0, TW_LAT_RECORD_SIZE);
	put_le(p, x->t0, 8);
	put_le(p + 8, x->t1, 8);
	put_le(p + 16, x->t2, 8);
	put_le(p + 24, x->t3, 8);
	put_le(p + 32, (uint32_t)x->instrument, 4);
	p[36] = x->stream;
	p[37] = x->burst_idx;
	put_le(p + 38, x->idx, 2);
	put_le(p + 40, x->n_msgs, 2);
	put_le(p + 42, x->event, 2);
	put_le(p + 44, x->qlen, 4);
	put_le(p + 48, x->rxq, 4);
	put_le(p + 52, x->msg_seq_num, 4);
	put_le(p + 56, x->stream == TW_LAT_ORDER ? x->order_id : x->wait, 4);
	put_le(p + 60, x->flags, 4);
}

static void
decode_record(const uint8_t *p, struct tw_lat_record *x)
{
	x->t0 = get_le(p, 8);
	x->t1 = get_le(p + 8, 8);
	x->t2 = get_le(p + 16, 8);
	x->t3 = get_le(p + 24, 8);
	x->instrument = (int32_t)(uint32_t)get_le(p + 32, 4);
	x->stream = p[36];
	x->burst_idx = p[37];
	x->idx = (uint16_t)get_le(p + 38, 2);
	x->n_msgs = (uint16_t)get_le(p + 40, 2);
	x->event = (uint16_t)get_le(p + 42, 2);
	x->qlen = (uint32_t)get_le(p + 44, 4);
	x->rxq = (uint32_t)get_le(p + 48, 4);
	x->msg_seq_num = (uint32_t)get_le(p + 52, 4);
	if (x->stream == TW_LAT_ORDER)
		x->order_id = (uint32_t)get_le(p + 56, 4);
	else
		x->wait = (uint32_t)get_le(p + 56, 4);
	x->flags = (uint32_t)get_le(p + 60, 4);
}

int
tw_lat_write(const struct tw_lat_recorder *const *r, unsigned int n, const char *path,
	     const struct tw_lat_header *header)
{
	uint8_t h[TW_LAT_HEADER_SIZE] = {0};
	uint8_t rec[TW_LAT_RECORD_SIZE];
	uint64_t count = 0, dropped = 0;
	FILE *f;
	int rc = 0;

	for (unsigned int i = 0; i < n; i++) {
		count += r[i]->count;
		dropped += r[i]->dropped;
	}
	f = fopen(path, "wb");
	if (f == NULL)
		return -errno;
	memcpy(h, TW_LAT_MAGIC, 8);
	put_le(h + 8, TW_LAT_VERSION, 4);
	put_le(h + 12, TW_LAT_HEADER_SIZE, 4);
	put_le(h + 16, TW_LAT_RECORD_SIZE, 4);
	put_le(h + 20, header->flags, 4);
	put_le(h + 24, header->tsc_hz, 8);
	put_le(h + 32, count, 8);
	put_le(h + 40, dropped, 8);
	memcpy(h + 48, header->label, strnlen(header->label, 15));
	put_le(h + 64, header->speed_milli, 8);
	put_le(h + 72, header->start_tsc, 8);
	for (unsigned int i = 0; i < 4; i++)
		put_le(h + 80 + 8 * i, header->player_err_ns[i], 8);
	put_le(h + 112, header->player_packets, 8);
	put_le(h + 120, header->rx_drops, 8);
	if (fwrite(h, sizeof(h), 1, f) != 1)
		rc = -EIO;
	for (unsigned int k = 0; k < n; k++) {
		for (uint64_t i = 0; rc == 0 && i < r[k]->count; i++) {
			encode_record(rec, &r[k]->records[i]);
			if (fwrite(rec, sizeof(rec), 1, f) != 1)
				rc = -EIO;
		}
	}
	if (fclose(f) != 0 && rc == 0)
		rc = -errno;
	return rc;
}

int
tw_lat_read(const char *path, struct tw_lat_header *header, struct tw_lat_record **records)
{
	uint8_t h[TW_LAT_HEADER_SIZE];
	uint8_t rec[TW_LAT_RECORD_SIZE];
	struct tw_lat_record *out = NULL;
	FILE *f = fopen(path, "rb");
	uint32_t header_size, record_size;

	*records = NULL;
	if (f == NULL)
		return -errno;
	if (fread(h, sizeof(h), 1, f) != 1 || memcmp(h, TW_LAT_MAGIC, 8) != 0)
		goto proto;
	memset(header, 0, sizeof(*header));
	header->version = (uint32_t)get_le(h + 8, 4);
	header_size = (uint32_t)get_le(h + 12, 4);
	record_size = (uint32_t)get_le(h + 16, 4);
	if (header->version != TW_LAT_VERSION || header_size != TW_LAT_HEADER_SIZE ||
	    record_size != TW_LAT_RECORD_SIZE)
		goto proto;
	header->flags = (uint32_t)get_le(h + 20, 4);
	header->tsc_hz = get_le(h + 24, 8);
	header->count = get_le(h + 32, 8);
	header->dropped = get_le(h + 40, 8);
	memcpy(header->label, h + 48, 16);
	header->label[15] = '\0';
	header->speed_milli = get_le(h + 64, 8);
	header->start_tsc = get_le(h + 72, 8);
	for (unsigned int i = 0; i < 4; i++)
		header->player_err_ns[i] = get_le(h + 80 + 8 * i, 8);
	header->player_packets = get_le(h + 112, 8);
	header->rx_drops = get_le(h + 120, 8);
	if (header->count > (UINT64_C(1) << 32))
		goto proto;
	out = calloc(header->count ? header->count : 1, sizeof(*out));
	if (out == NULL) {
		fclose(f);
		return -ENOMEM;
	}
	for (uint64_t i = 0; i < header->count; i++) {
		if (fread(rec, sizeof(rec), 1, f) != 1)
			goto proto;
		decode_record(rec, &out[i]);
	}
	fclose(f);
	*records = out;
	return 0;
proto:
	free(out);
	fclose(f);
	return -EPROTO;
}

int
tw_lat_parse_speed(const char *s, uint64_t *milli)
{
	char *end;
	double v;

	if (strcmp(s, "max") == 0) {
		*milli = 0;
		return 0;
	}
	v = strtod(s, &end);
	if (end == s || *end != '\0' || !(v >= 0.001 && v <= 1e9))
		return -EINVAL;
	*milli = (uint64_t)(v * 1000.0 + 0.5);
	return 0;
}

static int
cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

void
tw_lat_percentiles_u32(uint32_t *values, uint64_t n, const uint32_t *per_10000,
		       unsigned int k_count, uint64_t *out)
{
	if (n == 0) {
		memset(out, 0, k_count * sizeof(*out));
		return;
	}
	qsort(values, n, sizeof(*values), cmp_u32);
	for (unsigned int k = 0; k < k_count; k++) {
		uint64_t rank = (n * per_10000[k] + 9999) / 10000;

		out[k] = values[(rank == 0 ? 1 : rank) - 1];
	}
}
