/* SPDX-License-Identifier: BSD-3-Clause
 * Frames the iLink 3 session harness plays as the gateway and the seed
 * writer puts in the corpus, written with the lib/ilink3 encoder: root
 * leaves are set by their schema name through the metadata, so that one
 * function writes any template.
 */
#include <errno.h>
#include <string.h>

#include "fuzz_il3.h"

static void
set_leaf(uint8_t *block, const struct il3_field_info *fields, unsigned int count,
		const char *name, uint64_t value)
{
	unsigned int i;

	for (i = 0; i < count; i++) {
		const struct il3_field_info *f = &fields[i];
		uint8_t *p = block + f->offset;

		if (f->presence == IL3_PRESENCE_CONSTANT || strcmp(f->name, name) != 0)
			continue;
		if (f->kind == IL3_KIND_STRING) {
			memset(p, 0, f->size);
			memcpy(p, &value, f->size < sizeof(value) ? f->size : sizeof(value));
		} else if (f->size == 1) {
			il3__store_uint8(p, (uint8_t)value);
		} else if (f->size == 2) {
			il3__store_uint16(p, (uint16_t)value);
		} else if (f->size == 4) {
			il3__store_uint32(p, (uint32_t)value);
		} else {
			il3__store_uint64(p, value);
		}
	}
}

int
fuzz_il3_encode(uint8_t *buf, size_t capacity, uint16_t template_id,
		const struct fuzz_il3_leaf *leaves, unsigned int count, unsigned int entries)
{
	static const char data[] = "fuzz-data";
	const struct il3_message_info *info = il3_lookup_encode(template_id);
	struct il3_encoder enc;
	uint8_t *root, *entry;
	unsigned int i, j, k;

	root = il3_encode_begin(&enc, buf, capacity, template_id);
	if (root == NULL)
		return -errno;
	for (i = 0; i < count; i++)
		set_leaf(root, info->fields, info->field_count, leaves[i].name, leaves[i].value);
	for (i = 0; i < info->group_count; i++) {
		const struct il3_group_info *g = &info->groups[i];

		entry = il3_encode_group(&enc, i, entries);
		if (entry == NULL)
			return -errno;
		for (j = 0; j < entries; j++, entry += g->block_length)
			for (k = 0; k < count; k++)
				set_leaf(entry, g->fields, g->field_count, leaves[k].name,
						leaves[k].value + j);
	}
	if (info->data_count > 0 && il3_encode_data(&enc, data, entries > 0 ?
			sizeof(data) - 1 : 0) < 0)
		return -ENOBUFS;
	return il3_encode_end(&enc);
}
