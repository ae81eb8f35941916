/* SPDX-License-Identifier: BSD-3-Clause
 * The checks both iLink 3 harnesses run on every message the decoder
 * delivers (see fuzz_il3.h): an exact-size copy of the frame, parsed again,
 * then every leaf, group entry, data field and typed accessor read, with the
 * promises of ilink3.h checked on the way.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_il3.h"

void
fuzz_il3_read(int rc, size_t end, uint16_t block_length)
{
	FUZZ_CHECK(rc == 0 || rc == -ENODATA || rc == -ENOENT);
	if (rc != -ENOENT)
		FUZZ_CHECK(end <= block_length);
	fuzz_sink += (uint64_t)rc;
}

bool
fuzz_il3_group_open(const struct il3_msg *msg, unsigned int index, uint32_t tag,
		struct il3_group *group)
{
	int rc = il3_msg_group(msg, index, group);

	FUZZ_CHECK(rc == 0 || rc == -ENOENT);
	if (rc != 0)
		return false;
	FUZZ_CHECK(group->info == &msg->info->groups[index] && group->info->id == tag);
	return true;
}

/* Every present leaf of a block, through the metadata. */
static void
touch_leaves(const struct il3_field_info *fields, unsigned int count, const uint8_t *block,
		uint16_t version, uint16_t block_length)
{
	unsigned int i;

	for (i = 0; i < count; i++) {
		const struct il3_field_info *f = &fields[i];

		if (!il3_field_present(f, version, block_length))
			continue;
		if (f->presence == IL3_PRESENCE_CONSTANT) {
			FUZZ_CHECK(f->constant != NULL);
			fuzz_sink += (uint8_t)f->constant[0];
			continue;
		}
		FUZZ_CHECK(f->size >= 1 && (size_t)f->offset + f->size <= block_length);
		fuzz_sink += il3_load(block, f);
		if (f->kind == IL3_KIND_STRING)
			fuzz_sink += block[f->offset + f->size - 1];
	}
}

/* Every group and the data of a message whose frame ends at @p end. */
static void
touch_groups_and_data(const struct il3_msg *msg, const uint8_t *end)
{
	const uint8_t *next = msg->root + msg->block_length, *data;
	struct il3_group g;
	unsigned int i, entries;
	size_t length;
	int rc;

	for (i = 0; i < msg->info->group_count; i++) {
		if (!fuzz_il3_group_open(msg, i, msg->info->groups[i].id, &g))
			continue;
		/* groups follow the root block and each other */
		FUZZ_CHECK(msg->root + msg->group_offset[i] >= next);
		FUZZ_CHECK(g.next == msg->root + msg->group_offset[i] + g.info->dim_size);
		FUZZ_CHECK(g.count == 0 || g.block_length >= g.info->min_block_length);
		entries = 0;
		while (il3_group_next(&g)) {
			entries++;
			FUZZ_CHECK(g.entry >= msg->root + msg->block_length);
			FUZZ_CHECK(g.block_length <= end - g.entry);
			touch_leaves(g.info->fields, g.info->field_count, g.entry, g.version,
					g.block_length);
		}
		FUZZ_CHECK(entries == g.count && g.index == g.count);
		FUZZ_CHECK(g.next <= end);
		next = g.next;
	}
	rc = il3_msg_data(msg, &data, &length);
	FUZZ_CHECK(rc == (msg->info->data_count > 0 ? 0 : -ENOENT));
	if (rc == 0) {
		FUZZ_CHECK(data >= next && length <= (size_t)(end - data));
		if (length > 0)
			fuzz_sink += data[0] + data[length - 1];
	}
}

void
fuzz_il3_check_msg(const struct il3_msg *msg)
{
	enum il3_parse_error why = IL3_PARSE_ERROR_COUNT;
	struct il3_msg again;
	uint8_t *copy;

	FUZZ_CHECK(msg->info != NULL && msg->info->template_id == msg->template_id);
	FUZZ_CHECK(msg->info == il3_lookup(msg->version, msg->template_id));
	FUZZ_CHECK(msg->schema_id == IL3_SCHEMA_ID);
	FUZZ_CHECK(msg->frame_length >= IL3_SOFH_SIZE + IL3_SBE_HEADER_SIZE);
	FUZZ_CHECK(msg->frame_length == il3__load_uint16(msg->frame));
	FUZZ_CHECK(msg->root == msg->frame + IL3_SOFH_SIZE + IL3_SBE_HEADER_SIZE);
	copy = malloc(msg->frame_length);
	FUZZ_CHECK(copy != NULL);
	memcpy(copy, msg->frame, msg->frame_length);
	FUZZ_CHECK(il3_msg_parse(copy, msg->frame_length, &again, &why) == 0);
	FUZZ_CHECK(why == IL3_PARSE_OK && again.info == msg->info);
	FUZZ_CHECK(memcmp(again.group_offset, msg->group_offset, sizeof(again.group_offset)) == 0 &&
			again.data_offset == msg->data_offset);
	FUZZ_CHECK(again.block_length >= again.info->min_block_length);
	FUZZ_CHECK(again.block_length <= again.frame_length - IL3_SOFH_SIZE - IL3_SBE_HEADER_SIZE);
	touch_leaves(again.info->fields, again.info->field_count, again.root, again.version,
			again.block_length);
	touch_groups_and_data(&again, copy + again.frame_length);
	FUZZ_CHECK(fuzz_il3_touch_typed(&again) == 1);
	free(copy);
}
