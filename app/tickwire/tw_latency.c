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

void
tw_lat_add(struct tw_lat_recorder *r, const struct tw_lat_record *rec)
{
	uint64_t d = rec->t1 > rec->t0 ? rec->t1 - rec->t0 : 0;
	unsigned int b = d == 0 ? 0 : 63 - (unsigned int)__builtin_clzll(d);

	if (b >= TW_LAT_BUCKETS)
		b = TW_LAT_BUCKETS - 1;
	/* Single writer; relaxed stores pair with the relaxed loads of
	 * tw_lat_hist_percentile() on the telemetry thread (no ordering needed
	 * between buckets, each value is individually consistent). */
	__atomic_store_n(&r->hist[b], r->hist[b] + 1, __ATOMIC_RELAXED);
	if (d > r->max)
		__atomic_store_n(&r->max, d, __ATOMIC_RELAXED);
	if (r->count < r->capacity)
		r->records[r->count++] = *rec;
	else
		r->dropped++;
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

int
tw_lat_write(const struct tw_lat_recorder *r, const char *path,
	     const struct tw_lat_header *header)
{
	uint8_t h[TW_LAT_HEADER_SIZE] = {0};
	uint8_t rec[TW_LAT_RECORD_SIZE];
	FILE *f = fopen(path, "wb");
	int rc = 0;

	if (f == NULL)
		return -errno;
	memcpy(h, TW_LAT_MAGIC, 8);
	put_le(h + 8, TW_LAT_VERSION, 4);
	put_le(h + 12, TW_LAT_HEADER_SIZE, 4);
	put_le(h + 16, TW_LAT_RECORD_SIZE, 4);
	put_le(h + 20, header->flags, 4);
	put_le(h + 24, header->tsc_hz, 8);
	put_le(h + 32, r->count, 8);
	put_le(h + 40, r->dropped, 8);
	memcpy(h + 48, header->label, strnlen(header->label, 15));
	if (fwrite(h, sizeof(h), 1, f) != 1)
		rc = -EIO;
	for (uint64_t i = 0; rc == 0 && i < r->count; i++) {
		const struct tw_lat_record *x = &r->records[i];

		memset(rec, 0, sizeof(rec));
		put_le(rec, x->t0, 8);
		put_le(rec + 8, x->t1, 8);
		put_le(rec + 16, (uint32_t)x->instrument, 4);
		rec[20] = x->stream;
		put_le(rec + 22, x->idx, 2);
		put_le(rec + 24, x->qlen, 4);
		put_le(rec + 28, x->msg_seq_num, 4);
		if (fwrite(rec, sizeof(rec), 1, f) != 1)
			rc = -EIO;
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
		out[i].t0 = get_le(rec, 8);
		out[i].t1 = get_le(rec + 8, 8);
		out[i].instrument = (int32_t)(uint32_t)get_le(rec + 16, 4);
		out[i].stream = rec[20];
		out[i].idx = (uint16_t)get_le(rec + 22, 2);
		out[i].qlen = (uint32_t)get_le(rec + 24, 4);
		out[i].msg_seq_num = (uint32_t)get_le(rec + 28, 4);
	}
	fclose(f);
	*records = out;
	return 0;
proto:
	free(out);
	fclose(f);
	return -EPROTO;
}
