/* SPDX-License-Identifier: BSD-3-Clause
 * A small SBE encoder for feed tests, driven by the generated schema
 * metadata: fields are set by their schema names, optional fields start as
 * their null values, groups get the dimension encoding of the schema.
 *
 *   struct tp p;
 *   tp_packet(&p, 100, 0);                        binary packet header
 *   tp_msg(&p, 46, 9);                            template 46, version 9
 *   tp_set(&p, "TransactTime", 1);                root field
 *   tp_set(&p, "MatchEventIndicator", 0x80);
 *   tp_group(&p, "NoMDEntries");
 *   tp_entry(&p);                                 one entry of that group
 *   tp_set(&p, "MDEntryPx", 1234500000000);       mantissa of a decimal
 *   ...
 *   tp_end(&p);                                   p.buf[0 .. p.len)
 *
 * Test-only: aborts (through cmocka's fail()) on misuse.
 */
#ifndef BOOK_TEST_PACKETS_H
#define BOOK_TEST_PACKETS_H

#include <stdint.h>
#include <string.h>

#include "mdp3.h"

#define TP_SIZE 1500

struct tp {
	uint8_t buf[TP_SIZE];
	size_t len;
	size_t msg;           /* offset of the current message, or SIZE_MAX */
	size_t root;
	const struct mdp3_message_info *info;
	uint16_t version;
	unsigned int next_group;              /* index of the next group to write */
	const struct mdp3_block_info *group;  /* group being written, or NULL */
	size_t group_header;
	size_t entry;                         /* current entry, or SIZE_MAX */
	uint16_t entries;
};

static inline void
tp_put(struct tp *p, size_t off, uint64_t v, unsigned int size)
{
	unsigned int i;

	if (off + size > TP_SIZE)
		fail_msg("test packet overflow");
	for (i = 0; i < size; i++)
		p->buf[off + i] = (uint8_t)(v >> (8 * i));
}

static inline unsigned int
tp_prim_size(enum mdp3_primitive prim)
{
	switch (prim) {
	case MDP3_PRIM_CHAR:
	case MDP3_PRIM_INT8:
	case MDP3_PRIM_UINT8:
		return 1;
	case MDP3_PRIM_INT16:
	case MDP3_PRIM_UINT16:
		return 2;
	case MDP3_PRIM_INT32:
	case MDP3_PRIM_UINT32:
		return 4;
	case MDP3_PRIM_INT64:
	case MDP3_PRIM_UINT64:
		return 8;
	case MDP3_PRIM_NONE:
		break;
	}
	return 0;
}

/* Fill a type at off with its null (optional) or zero. */
static inline void
tp_null_type(struct tp *p, size_t off, const struct mdp3_type_info *t)
{
	unsigned int i;

	if (t->presence == MDP3_PRESENCE_CONSTANT)
		return;
	if (t->kind == MDP3_KIND_COMPOSITE) {
		for (i = 0; i < t->member_count; i++)
			tp_null_type(p, off + t->members[i].offset, t->members[i].type);
		return;
	}
	if (t->kind == MDP3_KIND_STRING) {
		memset(p->buf + off, 0, t->size);
		return;
	}
	if (t->presence == MDP3_PRESENCE_OPTIONAL)
		tp_put(p, off, t->null_value, tp_prim_size(t->primitive));
	else
		tp_put(p, off, 0, tp_prim_size(t->primitive));
}

static inline void
tp_null_block(struct tp *p, size_t off, const struct mdp3_block_info *b)
{
	unsigned int i;

	memset(p->buf + off, 0, b->block_length);
	for (i = 0; i < b->field_count; i++)
		if (b->fields[i].since_version <= p->version)
			tp_null_type(p, off + b->fields[i].offset, b->fields[i].type);
}

static inline void
tp_packet(struct tp *p, uint32_t seq, uint64_t sending_time)
{
	memset(p, 0, sizeof(*p));
	tp_put(p, 0, seq, 4);
	tp_put(p, 4, sending_time, 8);
	p->len = MDP3_PACKET_HEADER_SIZE;
	p->msg = SIZE_MAX;
	p->entry = SIZE_MAX;
}

static inline void
tp_close_group(struct tp *p)
{
	const struct mdp3_block_info *g = p->group;

	if (g == NULL)
		return;
	tp_put(p, p->group_header + g->dim_num_in_group_offset, p->entries,
			g->dim_num_in_group_size);
	p->group = NULL;
	p->entry = SIZE_MAX;
}

/* Write empty groups up to (not including) group index `upto`. */
static inline void
tp_empty_groups(struct tp *p, unsigned int upto)
{
	const struct mdp3_block_info *root = &p->info->root;

	for (; p->next_group < upto && p->next_group < root->group_count; p->next_group++) {
		const struct mdp3_block_info *g = &root->groups[p->next_group];

		if (g->since_version > p->version)
			continue;
		tp_put(p, p->len, 0, g->dim_size);
		tp_put(p, p->len + g->dim_block_length_offset, g->block_length,
				g->dim_block_length_size);
		p->len += g->dim_size;
	}
}

static inline void
tp_end_msg(struct tp *p)
{
	if (p->msg == SIZE_MAX)
		return;
	tp_close_group(p);
	tp_empty_groups(p, p->info->root.group_count);
	tp_put(p, p->msg, p->len - p->msg, 2);
	p->msg = SIZE_MAX;
}

static inline void
tp_msg(struct tp *p, uint16_t template_id, uint16_t version)
{
	const struct mdp3_message_info *info;

	tp_end_msg(p);
	info = mdp3_lookup(NULL, 1, version, template_id);
	if (info == NULL)
		fail_msg("no template %u version %u", template_id, version);
	p->info = info;
	p->version = version;
	p->msg = p->len;
	tp_put(p, p->len + 2, info->root.block_length, 2);
	tp_put(p, p->len + 4, template_id, 2);
	tp_put(p, p->len + 6, 1, 2);
	tp_put(p, p->len + 8, version, 2);
	p->root = p->len + MDP3_MESSAGE_HEADER_SIZE;
	if (p->root + info->root.block_length > TP_SIZE)
		fail_msg("test packet overflow");
	tp_null_block(p, p->root, &info->root);
	p->len = p->root + info->root.block_length;
	p->next_group = 0;
	p->group = NULL;
	p->entry = SIZE_MAX;
}

static inline void
tp_group(struct tp *p, const char *name)
{
	const struct mdp3_block_info *root = &p->info->root;
	unsigned int i;

	tp_close_group(p);
	for (i = p->next_group; i < root->group_count; i++)
		if (strcmp(root->groups[i].name, name) == 0)
			break;
	if (i == root->group_count)
		fail_msg("no group %s after the current one in %s", name, p->info->name);
	tp_empty_groups(p, i);
	p->group = &root->groups[i];
	p->next_group = i + 1;
	p->group_header = p->len;
	tp_put(p, p->len, 0, p->group->dim_size);
	tp_put(p, p->len + p->group->dim_block_length_offset, p->group->block_length,
			p->group->dim_block_length_size);
	p->len += p->group->dim_size;
	p->entries = 0;
}

static inline void
tp_entry(struct tp *p)
{
	if (p->group == NULL)
		fail_msg("tp_entry outside a group");
	p->entry = p->len;
	if (p->entry + p->group->block_length > TP_SIZE)
		fail_msg("test packet overflow");
	tp_null_block(p, p->entry, p->group);
	p->len += p->group->block_length;
	p->entries++;
}

/* The field of the current block (entry if one is open, else root). */
static inline const struct mdp3_field_info *
tp_field(struct tp *p, const char *name, size_t *base)
{
	const struct mdp3_block_info *b = p->entry != SIZE_MAX ? p->group : &p->info->root;
	unsigned int i;

	*base = p->entry != SIZE_MAX ? p->entry : p->root;
	for (i = 0; i < b->field_count; i++)
		if (strcmp(b->fields[i].name, name) == 0)
			return &b->fields[i];
	fail_msg("no field %s in %s", name, b->name);
	return NULL;
}

/* Integer, char, enum, set, or the mantissa of a decimal. */
static inline void
tp_set(struct tp *p, const char *name, int64_t value)
{
	size_t base;
	const struct mdp3_field_info *f = tp_field(p, name, &base);
	const struct mdp3_type_info *t = f->type;
	unsigned int i;

	if (t->presence == MDP3_PRESENCE_CONSTANT)
		return;
	if (t->kind == MDP3_KIND_COMPOSITE) {
		for (i = 0; i < t->member_count; i++)
			if (strcmp(t->members[i].name, "mantissa") == 0)
				break;
		if (i == t->member_count)
			fail_msg("%s is not a decimal", name);
		tp_put(p, base + f->offset + t->members[i].offset, (uint64_t)value,
				tp_prim_size(t->members[i].type->primitive));
		return;
	}
	tp_put(p, base + f->offset, (uint64_t)value, tp_prim_size(t->primitive));
}

static inline void
tp_set_null(struct tp *p, const char *name)
{
	size_t base;
	const struct mdp3_field_info *f = tp_field(p, name, &base);

	tp_null_type(p, base + f->offset, f->type);
}

static inline void
tp_set_str(struct tp *p, const char *name, const char *s)
{
	size_t base;
	const struct mdp3_field_info *f = tp_field(p, name, &base);
	size_t n = strlen(s);

	if (f->type->kind != MDP3_KIND_STRING || n > f->type->size)
		fail_msg("%s: not a string of %zu chars", name, n);
	memset(p->buf + base + f->offset, 0, f->type->size);
	memcpy(p->buf + base + f->offset, s, n);
}

/* Finish the packet; returns its length. */
static inline size_t
tp_end(struct tp *p)
{
	tp_end_msg(p);
	return p->len;
}

#endif /* BOOK_TEST_PACKETS_H */
