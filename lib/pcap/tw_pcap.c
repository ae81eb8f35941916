/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Capture-file reader: classic pcap and pcapng, from a read-only mapping.
 *
 * Every header is read only after checking that its bytes are inside the
 * file; a record or block that claims more bytes than remain is an error
 * (-EPROTO) with a message naming the frame and the file offset.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tw_pcap.h"

#define CLASSIC_HEADER 24
#define CLASSIC_RECORD 16
#define NG_SHB 0x0A0D0D0Au
#define NG_IDB 0x00000001u
#define NG_PB 0x00000002u
#define NG_SPB 0x00000003u
#define NG_EPB 0x00000006u
#define NG_BYTE_ORDER_MAGIC 0x1A2B3C4Du
#define NG_MAX_INTERFACES 64
#define NG_OPT_END 0
#define NG_OPT_IF_TSRESOL 9
#define NG_OPT_IF_TSOFFSET 14

struct ng_interface {
	uint32_t linktype;
	uint32_t snaplen;
	uint8_t tsresol;      /* as in if_tsresol: bit 7 set = power of 2 */
	int64_t tsoffset_s;   /* if_tsoffset, seconds */
};

struct tw_pcap {
	const uint8_t *base;
	size_t length;
	size_t pos;
	bool mapped;
	bool swapped;
	enum tw_pcap_format format;
	uint32_t linktype;    /* classic */
	uint64_t frames;
	int error;
	unsigned int interface_count;
	struct ng_interface interfaces[NG_MAX_INTERFACES];
	char message[200];
};

static uint16_t
rd16(const struct tw_pcap *p, const uint8_t *q)
{
	uint16_t v = (uint16_t)(q[0] | (q[1] << 8));

	return p->swapped ? __builtin_bswap16(v) : v;
}

static uint32_t
rd32(const struct tw_pcap *p, const uint8_t *q)
{
	uint32_t v = (uint32_t)q[0] | (uint32_t)q[1] << 8 | (uint32_t)q[2] << 16 |
		(uint32_t)q[3] << 24;

	return p->swapped ? __builtin_bswap32(v) : v;
}

static uint32_t
le32(const uint8_t *q)
{
	return (uint32_t)q[0] | (uint32_t)q[1] << 8 | (uint32_t)q[2] << 16 |
		(uint32_t)q[3] << 24;
}

static int
fail(struct tw_pcap *p, const char *what, uint64_t offset)
{
	p->error = -EPROTO;
	snprintf(p->message, sizeof(p->message), "%s at file offset %llu", what,
			(unsigned long long)offset);
	return p->error;
}

/* units (in 10^-resol or 2^-resol seconds) -> ns, integer only. */
static uint64_t
units_to_ns(uint64_t units, uint8_t tsresol)
{
	static const uint64_t pow10[] = {
		1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull,
		10000000ull, 100000000ull, 1000000000ull, 10000000000ull,
		100000000000ull, 1000000000000ull, 10000000000000ull,
		100000000000000ull, 1000000000000000ull, 10000000000000000ull,
		100000000000000000ull, 1000000000000000000ull,
	};
	unsigned int e = tsresol & 0x7f;

	if (tsresol & 0x80) {
		if (e >= 64)
			return 0;
		return (uint64_t)(((unsigned __int128)units * 1000000000u) >> e);
	}
	if (e <= 9)
		return units * pow10[9 - e];
	if (e - 9 < sizeof(pow10) / sizeof(pow10[0]))
		return units / pow10[e - 9];
	return 0;
}

static int
classic_header(struct tw_pcap *p)
{
	uint32_t magic;

	magic = le32(p->base);
	switch (magic) {
	case 0xa1b2c3d4u:
		p->format = TW_PCAP_FORMAT_CLASSIC_USEC;
		break;
	case 0xa1b23c4du:
		p->format = TW_PCAP_FORMAT_CLASSIC_NSEC;
		break;
	case 0xd4c3b2a1u:
		p->format = TW_PCAP_FORMAT_CLASSIC_USEC;
		p->swapped = true;
		break;
	case 0x4d3cb2a1u:
		p->format = TW_PCAP_FORMAT_CLASSIC_NSEC;
		p->swapped = true;
		break;
	default:
		return -EPROTO;
	}
	if (p->length < CLASSIC_HEADER)
		return -EPROTO;
	/* The upper bits of the link type field carry FCS information. */
	p->linktype = rd32(p, p->base + 20) & 0x0fffffffu;
	p->pos = CLASSIC_HEADER;
	return 0;
}

static int
classic_next(struct tw_pcap *p, struct tw_pcap_frame *f)
{
	const uint8_t *r;
	uint32_t sec, frac, caplen, origlen;
	size_t left = p->length - p->pos;

	if (left == 0)
		return 0;
	if (left < CLASSIC_RECORD)
		return fail(p, "record header cut short", p->pos);
	r = p->base + p->pos;
	sec = rd32(p, r);
	frac = rd32(p, r + 4);
	caplen = rd32(p, r + 8);
	origlen = rd32(p, r + 12);
	if (caplen > left - CLASSIC_RECORD)
		return fail(p, "record runs past the end of the file", p->pos);
	if (p->format == TW_PCAP_FORMAT_CLASSIC_USEC ? frac >= 1000000u : frac >= 1000000000u)
		return fail(p, "record timestamp fraction out of range", p->pos);
	f->number = ++p->frames;
	f->time_ns = (uint64_t)sec * 1000000000u +
		(p->format == TW_PCAP_FORMAT_CLASSIC_USEC ? (uint64_t)frac * 1000u : frac);
	f->data = r + CLASSIC_RECORD;
	f->caplen = caplen;
	f->origlen = origlen;
	f->linktype = p->linktype;
	f->interface_id = 0;
	f->file_offset = p->pos;
	p->pos += CLASSIC_RECORD + (size_t)caplen;
	return 1;
}

/* Parse the options of an IDB: body is the block body after the fixed part. */
static void
ng_interface_options(struct tw_pcap *p, struct ng_interface *ifc, const uint8_t *o,
		size_t len)
{
	uint16_t code, olen;
	size_t padded;

	while (len >= 4) {
		code = rd16(p, o);
		olen = rd16(p, o + 2);
		if (code == NG_OPT_END)
			break;
		padded = ((size_t)olen + 3) & ~(size_t)3;
		if (padded > len - 4)
			break;
		if (code == NG_OPT_IF_TSRESOL && olen >= 1)
			ifc->tsresol = o[4];
		if (code == NG_OPT_IF_TSOFFSET && olen >= 8)
			ifc->tsoffset_s = (int64_t)((uint64_t)rd32(p, o + 4) |
					(uint64_t)rd32(p, o + 8) << 32);
		o += 4 + padded;
		len -= 4 + padded;
	}
}

static int
ng_section(struct tw_pcap *p, size_t at)
{
	uint32_t bom;

	if (p->length - at < 28)
		return fail(p, "section header block cut short", at);
	bom = le32(p->base + at + 8);
	if (bom == NG_BYTE_ORDER_MAGIC)
		p->swapped = false;
	else if (bom == __builtin_bswap32(NG_BYTE_ORDER_MAGIC))
		p->swapped = true;
	else
		return fail(p, "section header block with a bad byte-order magic", at);
	p->interface_count = 0;
	return 0;
}

static int
ng_next(struct tw_pcap *p, struct tw_pcap_frame *f)
{
	const uint8_t *b;
	uint32_t type, total, ifid, caplen, origlen, hi, lo;
	struct ng_interface *ifc;
	size_t at, left;
	int rc;

	for (;;) {
		at = p->pos;
		left = p->length - at;
		if (left == 0)
			return 0;
		if (left < 12)
			return fail(p, "block header cut short", at);
		b = p->base + at;
		/* The SHB type reads the same in both byte orders; the others
		 * follow the byte order of their section. */
		type = le32(b);
		if (type != NG_SHB)
			type = rd32(p, b);
		if (type == NG_SHB) {
			rc = ng_section(p, at);
			if (rc < 0)
				return rc;
		}
		total = rd32(p, b + 4);
		if (total < 12 || (total & 3) != 0)
			return fail(p, "block with an invalid total length", at);
		if (total > left)
			return fail(p, "block runs past the end of the file", at);
		if (rd32(p, b + total - 4) != total)
			return fail(p, "block trailer length does not match its header", at);
		p->pos = at + total;
		switch (type) {
		case NG_IDB:
			if (total < 20)
				return fail(p, "interface description block too short", at);
			if (p->interface_count >= NG_MAX_INTERFACES)
				return fail(p, "too many interfaces", at);
			ifc = &p->interfaces[p->interface_count++];
			ifc->linktype = rd16(p, b + 8);
			ifc->snaplen = rd32(p, b + 12);
			ifc->tsresol = 6;
			ifc->tsoffset_s = 0;
			ng_interface_options(p, ifc, b + 16, total - 20);
			break;
		case NG_EPB:
		case NG_PB:
			if (total < 32)
				return fail(p, "packet block too short", at);
			if (type == NG_EPB) {
				ifid = rd32(p, b + 8);
			} else {
				ifid = rd16(p, b + 8);
			}
			hi = rd32(p, b + 12);
			lo = rd32(p, b + 16);
			caplen = rd32(p, b + 20);
			origlen = rd32(p, b + 24);
			if (caplen > total - 32)
				return fail(p, "packet data runs past its block", at);
			if (ifid >= p->interface_count)
				return fail(p, "packet of an undeclared interface", at);
			ifc = &p->interfaces[ifid];
			f->number = ++p->frames;
			f->time_ns = units_to_ns((uint64_t)hi << 32 | lo, ifc->tsresol) +
				(uint64_t)ifc->tsoffset_s * 1000000000u;
			f->data = b + 28;
			f->caplen = caplen;
			f->origlen = origlen;
			f->linktype = ifc->linktype;
			f->interface_id = ifid;
			f->file_offset = at;
			return 1;
		case NG_SPB:
			if (total < 16)
				return fail(p, "simple packet block too short", at);
			if (p->interface_count == 0)
				return fail(p, "simple packet block before any interface", at);
			ifc = &p->interfaces[0];
			origlen = rd32(p, b + 8);
			caplen = origlen;
			if (ifc->snaplen != 0 && caplen > ifc->snaplen)
				caplen = ifc->snaplen;
			if (caplen > total - 16)
				caplen = total - 16;
			f->number = ++p->frames;
			f->time_ns = 0; /* SPBs carry no timestamp */
			f->data = b + 12;
			f->caplen = caplen;
			f->origlen = origlen;
			f->linktype = ifc->linktype;
			f->interface_id = 0;
			f->file_offset = at;
			return 1;
		default:
			break; /* SHB handled above; NRB, ISB, DSB, custom: skipped */
		}
	}
}

static struct tw_pcap *
open_common(struct tw_pcap *p)
{
	if (p->length < 4) {
		errno = EPROTO;
		return NULL;
	}
	if (le32(p->base) == NG_SHB) {
		p->format = TW_PCAP_FORMAT_PCAPNG;
		if (ng_section(p, 0) < 0) {
			errno = EPROTO;
			return NULL;
		}
		p->pos = 0;
		p->message[0] = '\0';
		return p;
	}
	if (classic_header(p) < 0) {
		errno = EPROTO;
		return NULL;
	}
	return p;
}

struct tw_pcap *
tw_pcap_open_memory(const void *data, size_t length)
{
	struct tw_pcap *p;

	if (data == NULL) {
		errno = EINVAL;
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (p == NULL)
		return NULL;
	p->base = data;
	p->length = length;
	if (open_common(p) == NULL) {
		free(p);
		return NULL;
	}
	return p;
}

struct tw_pcap *
tw_pcap_open(const char *path)
{
	struct tw_pcap *p;
	struct stat st;
	void *map;
	int fd, saved;

	if (path == NULL) {
		errno = EINVAL;
		return NULL;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) < 0) {
		saved = errno;
		close(fd);
		errno = saved;
		return NULL;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		errno = EINVAL;
		return NULL;
	}
	if (st.st_size < 4) {
		close(fd);
		errno = EPROTO;
		return NULL;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	saved = errno;
	close(fd);
	if (map == MAP_FAILED) {
		errno = saved;
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (p == NULL) {
		munmap(map, (size_t)st.st_size);
		errno = ENOMEM;
		return NULL;
	}
	p->base = map;
	p->length = (size_t)st.st_size;
	p->mapped = true;
	if (open_common(p) == NULL) {
		munmap(map, (size_t)st.st_size);
		free(p);
		errno = EPROTO;
		return NULL;
	}
	return p;
}

int
tw_pcap_next(struct tw_pcap *p, struct tw_pcap_frame *f)
{
	if (p == NULL || f == NULL)
		return -EINVAL;
	if (p->error != 0)
		return p->error;
	if (p->format == TW_PCAP_FORMAT_PCAPNG)
		return ng_next(p, f);
	return classic_next(p, f);
}

enum tw_pcap_format
tw_pcap_format(const struct tw_pcap *p)
{
	return p->format;
}

const char *
tw_pcap_error(const struct tw_pcap *p)
{
	return p->error != 0 ? p->message : "";
}

void
tw_pcap_close(struct tw_pcap *p)
{
	if (p == NULL)
		return;
	if (p->mapped)
		munmap((void *)(uintptr_t)p->base, p->length);
	free(p);
}
