/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Inline internals of lib/ilink3 that the generated accessors need: the view
 * types, little-endian loads and stores.  Included by ilink3.h; not a public
 * header of its own.
 */
#ifndef IL3_PVT_H
#define IL3_PVT_H

#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Most repeating groups in one iLink 3 message (the generator checks it). */
#define IL3_MAX_GROUPS 4

struct il3_message_info;
struct il3_group_info;

/** A decimal: value = mantissa * 10^exponent. */
struct il3_decimal {
	int64_t mantissa;
	int8_t exponent;
};

/** A validated message (from il3_msg_parse()); points into the caller's bytes. */
struct il3_msg {
	const uint8_t *frame;           /**< first byte of the framing header */
	const uint8_t *root;            /**< first byte of the root block */
	const struct il3_message_info *info; /**< metadata used to decode it */
	uint16_t frame_length;          /**< SOFH message length (incl. 4-byte header) */
	uint16_t block_length;          /**< root blockLength on the wire */
	uint16_t template_id;
	uint16_t schema_id;
	uint16_t version;               /**< wire version */
	/** Offset from root of each group's dimension header; 0: absent. */
	uint16_t group_offset[IL3_MAX_GROUPS];
	uint16_t data_offset;           /**< offset from root of the data length; 0: none */
};

/** Iterator over the entries of a repeating group. */
struct il3_group {
	const uint8_t *entry;           /**< current entry, after il3_group_next() */
	const uint8_t *next;
	const struct il3_group_info *info;
	uint16_t block_length;          /**< entry blockLength on the wire */
	uint16_t count;                 /**< numInGroup */
	uint16_t index;                 /**< entries returned so far */
	uint16_t version;
};

static inline uint8_t il3__load_uint8(const uint8_t *p) { return p[0]; }
static inline int8_t il3__load_int8(const uint8_t *p) { return (int8_t)p[0]; }
static inline uint16_t il3__load_uint16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (p[1] << 8));
}
static inline int16_t il3__load_int16(const uint8_t *p) { return (int16_t)il3__load_uint16(p); }
static inline uint32_t il3__load_uint32(const uint8_t *p)
{
	return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
		((uint32_t)p[3] << 24);
}
static inline int32_t il3__load_int32(const uint8_t *p) { return (int32_t)il3__load_uint32(p); }
static inline uint64_t il3__load_uint64(const uint8_t *p)
{
	return (uint64_t)il3__load_uint32(p) | ((uint64_t)il3__load_uint32(p + 4) << 32);
}
static inline int64_t il3__load_int64(const uint8_t *p) { return (int64_t)il3__load_uint64(p); }

static inline void il3__store_uint8(uint8_t *p, uint8_t v) { p[0] = v; }
static inline void il3__store_int8(uint8_t *p, int8_t v) { p[0] = (uint8_t)v; }
static inline void il3__store_uint16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}
static inline void il3__store_int16(uint8_t *p, int16_t v) { il3__store_uint16(p, (uint16_t)v); }
static inline void il3__store_uint32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}
static inline void il3__store_int32(uint8_t *p, int32_t v) { il3__store_uint32(p, (uint32_t)v); }
static inline void il3__store_uint64(uint8_t *p, uint64_t v)
{
	il3__store_uint32(p, (uint32_t)v);
	il3__store_uint32(p + 4, (uint32_t)(v >> 32));
}
static inline void il3__store_int64(uint8_t *p, int64_t v) { il3__store_uint64(p, (uint64_t)v); }

static inline size_t il3__strnlen(const char *s, size_t max)
{
	const char *nul = memchr(s, 0, max);

	return nul == NULL ? max : (size_t)(nul - s);
}

static inline void il3__store_chars(uint8_t *p, size_t width, const char *s, size_t length)
{
	if (length > width)
		length = width;
	if (length > 0)
		memcpy(p, s, length);
	memset(p + length, 0, width - length);
}

#define il3__present(view, since, offset, size) \
	((view)->version >= (since) && (view)->block_length >= (offset) + (size))

#ifdef NDEBUG
#define IL3__CHECK_TEMPLATE(msg, id) ((void)(msg))
#define IL3__CHECK_GROUP(group, tag) ((void)(group))
#else
#define IL3__CHECK_TEMPLATE(msg, id) assert((msg)->template_id == (id))
#define IL3__CHECK_GROUP(group, tag) \
	assert((group)->entry != NULL && il3__group_id(group) == (tag))
#endif

uint16_t il3__group_id(const struct il3_group *group);

#ifdef __cplusplus
}
#endif

#endif /* IL3_PVT_H */
