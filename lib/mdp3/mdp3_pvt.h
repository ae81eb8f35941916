/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Inline internals of mdp3.h: little-endian loads and the group iterator.
 * Included by mdp3.h only; not an interface of its own.
 */
#ifndef MDP3_PVT_H
#define MDP3_PVT_H

#ifndef MDP3_H
#error "include mdp3.h, not mdp3_pvt.h"
#endif

#include <assert.h>
#include <string.h>

/* Loads read through memcpy: the wire has no alignment, and memcpy of a
 * constant size compiles to one move. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define MDP3__LE16(x) __builtin_bswap16(x)
#define MDP3__LE32(x) __builtin_bswap32(x)
#define MDP3__LE64(x) __builtin_bswap64(x)
#else
#define MDP3__LE16(x) (x)
#define MDP3__LE32(x) (x)
#define MDP3__LE64(x) (x)
#endif

static inline uint8_t
mdp3__load_uint8(const uint8_t *p)
{
	return p[0];
}

static inline int8_t
mdp3__load_int8(const uint8_t *p)
{
	return (int8_t)p[0];
}

static inline uint16_t
mdp3__load_uint16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return MDP3__LE16(v);
}

static inline int16_t
mdp3__load_int16(const uint8_t *p)
{
	return (int16_t)mdp3__load_uint16(p);
}

static inline uint32_t
mdp3__load_uint32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return MDP3__LE32(v);
}

static inline int32_t
mdp3__load_int32(const uint8_t *p)
{
	return (int32_t)mdp3__load_uint32(p);
}

static inline uint64_t
mdp3__load_uint64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return MDP3__LE64(v);
}

static inline int64_t
mdp3__load_int64(const uint8_t *p)
{
	return (int64_t)mdp3__load_uint64(p);
}

static inline size_t
mdp3__strnlen(const char *s, size_t max)
{
	const char *nul = memchr(s, '\0', max);

	return nul == NULL ? max : (size_t)(nul - s);
}

/* A view (message or group entry) carries block_length and version. */
#define mdp3__present(view, since, offset, size) \
	((view)->version >= (since) && (view)->block_length >= (offset) + (size))

/* Debug builds check that an accessor is applied to the right view. */
#ifdef NDEBUG
#define MDP3__CHECK_TEMPLATE(msg, id) ((void)(msg))
#define MDP3__CHECK_GROUP(group, tag) ((void)(group))
#else
#define MDP3__CHECK_TEMPLATE(msg, id) assert((msg)->template_id == (id))
#define MDP3__CHECK_GROUP(group, tag) \
	assert((group)->entry != NULL && (group)->info->id == (tag))
#endif

/* Computes nested group offsets of the current entry; returns the next entry. */
const uint8_t *mdp3__group_entry_end(struct mdp3_group *group);

static inline uint64_t
mdp3_load(const uint8_t *p, enum mdp3_primitive primitive)
{
	switch (primitive) {
	case MDP3_PRIM_CHAR:
	case MDP3_PRIM_UINT8:
		return mdp3__load_uint8(p);
	case MDP3_PRIM_INT8:
		return (uint64_t)(int64_t)mdp3__load_int8(p);
	case MDP3_PRIM_UINT16:
		return mdp3__load_uint16(p);
	case MDP3_PRIM_INT16:
		return (uint64_t)(int64_t)mdp3__load_int16(p);
	case MDP3_PRIM_UINT32:
		return mdp3__load_uint32(p);
	case MDP3_PRIM_INT32:
		return (uint64_t)(int64_t)mdp3__load_int32(p);
	case MDP3_PRIM_UINT64:
	case MDP3_PRIM_INT64:
		return mdp3__load_uint64(p);
	case MDP3_PRIM_NONE:
		break;
	}
	return 0;
}

static inline bool
mdp3_field_present(const struct mdp3_field_info *field, uint16_t block_length,
		uint16_t version)
{
	if (field->type->presence == MDP3_PRESENCE_CONSTANT)
		return true;
	return version >= field->since_version &&
		block_length >= (uint32_t)field->offset + field->type->size;
}

static inline uint16_t
mdp3__load_dim(const uint8_t *p, uint8_t size)
{
	return size == 1 ? mdp3__load_uint8(p) : mdp3__load_uint16(p);
}

static inline void
mdp3__group_open(struct mdp3_group *group, const struct mdp3_block_info *info,
		const uint8_t *header, const uint8_t *end, uint16_t version)
{
	group->entry = NULL;
	group->end = end;
	group->info = info;
	group->block_length = mdp3__load_dim(header + info->dim_block_length_offset,
			info->dim_block_length_size);
	group->count = mdp3__load_dim(header + info->dim_num_in_group_offset,
			info->dim_num_in_group_size);
	group->index = 0;
	group->version = version;
	group->next = header + info->dim_size;
}

static inline int
mdp3_msg_group(const struct mdp3_msg *msg, unsigned int index, struct mdp3_group *group)
{
	if (index >= msg->info->root.group_count || msg->group_offset[index] == 0)
		return -ENOENT;
	mdp3__group_open(group, &msg->info->root.groups[index],
			msg->root + msg->group_offset[index], msg->start + msg->size,
			msg->version);
	return 0;
}

static inline bool
mdp3_group_next(struct mdp3_group *group)
{
	if (group->index >= group->count)
		return false;
	group->entry = group->next;
	group->index++;
	if (group->info->group_count == 0) {
		group->next = group->entry + group->block_length;
	} else {
		group->next = mdp3__group_entry_end(group);
		if (group->next == NULL) {
			/* Cannot happen on a walker-validated message; stop safely. */
			group->entry = NULL;
			group->index = group->count;
			return false;
		}
	}
	return true;
}

static inline bool
mdp3_group_next_flat(struct mdp3_group *group)
{
	assert(group->info->group_count == 0);
	if (group->index >= group->count)
		return false;
	group->entry = group->next;
	group->index++;
	group->next = group->entry + group->block_length;
	return true;
}

#endif /* MDP3_PVT_H */
