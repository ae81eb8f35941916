/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * iLink 3 framing, validation, encoding and stream reassembly.
 * Every length is checked against the bytes of the frame before a view is
 * handed out; the reassembler holds at most one partial frame plus one read.
 */
#include <errno.h>
#include <string.h>

#include "ilink3.h"

static const char *const parse_error_names[IL3_PARSE_ERROR_COUNT] = {
	[IL3_PARSE_OK] = "ok",
	[IL3_PARSE_SHORT_FRAME] = "short_frame",
	[IL3_PARSE_BAD_LENGTH] = "bad_length",
	[IL3_PARSE_BAD_ENCODING] = "bad_encoding",
	[IL3_PARSE_WRONG_SCHEMA] = "wrong_schema",
	[IL3_PARSE_UNKNOWN_TEMPLATE] = "unknown_template",
	[IL3_PARSE_BLOCK_TOO_SHORT] = "block_too_short",
	[IL3_PARSE_BLOCK_PAST_END] = "block_past_end",
	[IL3_PARSE_GROUP_PAST_END] = "group_past_end",
	[IL3_PARSE_GROUP_BLOCK_TOO_SHORT] = "group_block_too_short",
	[IL3_PARSE_DATA_PAST_END] = "data_past_end",
};

const char *
il3_parse_error_name(enum il3_parse_error error)
{
	if ((unsigned int)error >= IL3_PARSE_ERROR_COUNT)
		return "unknown";
	return parse_error_names[error];
}

uint16_t
il3__group_id(const struct il3_group *group)
{
	return (uint16_t)group->info->id;
}

static int
fail(enum il3_parse_error *error, enum il3_parse_error why, int ret)
{
	if (error != NULL)
		*error = why;
	return ret;
}

int
il3_msg_parse(const uint8_t *frame, size_t length, struct il3_msg *msg,
		enum il3_parse_error *error)
{
	const struct il3_message_info *info;
	size_t frame_length, pos, end;
	unsigned int i;

	if (frame == NULL || msg == NULL)
		return -EINVAL;
	if (length < IL3_SOFH_SIZE)
		return fail(error, IL3_PARSE_SHORT_FRAME, -EBADMSG);
	frame_length = il3__load_uint16(frame);
	if (il3__load_uint16(frame + 2) != IL3_SOFH_ENCODING)
		return fail(error, IL3_PARSE_BAD_ENCODING, -EBADMSG);
	if (frame_length < IL3_SOFH_SIZE + IL3_SBE_HEADER_SIZE)
		return fail(error, IL3_PARSE_BAD_LENGTH, -EBADMSG);
	if (frame_length > length)
		return fail(error, IL3_PARSE_SHORT_FRAME, -EBADMSG);
	memset(msg, 0, sizeof(*msg));
	msg->frame = frame;
	msg->frame_length = (uint16_t)frame_length;
	msg->block_length = il3__load_uint16(frame + 4);
	msg->template_id = il3__load_uint16(frame + 6);
	msg->schema_id = il3__load_uint16(frame + 8);
	msg->version = il3__load_uint16(frame + 10);
	msg->root = frame + IL3_SOFH_SIZE + IL3_SBE_HEADER_SIZE;
	if (msg->schema_id != IL3_SCHEMA_ID)
		return fail(error, IL3_PARSE_WRONG_SCHEMA, -ENOENT);
	info = il3_lookup(msg->version, msg->template_id);
	if (info == NULL)
		return fail(error, IL3_PARSE_UNKNOWN_TEMPLATE, -ENOENT);
	msg->info = info;
	if (msg->block_length < info->min_block_length)
		return fail(error, IL3_PARSE_BLOCK_TOO_SHORT, -EBADMSG);
	end = frame_length;
	pos = IL3_SOFH_SIZE + IL3_SBE_HEADER_SIZE + (size_t)msg->block_length;
	if (pos > end)
		return fail(error, IL3_PARSE_BLOCK_PAST_END, -EBADMSG);
	for (i = 0; i < info->group_count; i++) {
		const struct il3_group_info *g = &info->groups[i];
		size_t entry_length, count;

		if (msg->version < g->since_version)
			continue;
		if (pos + g->dim_size > end)
			return fail(error, IL3_PARSE_GROUP_PAST_END, -EBADMSG);
		entry_length = il3__load_uint16(frame + pos);
		count = g->num_in_group_size == 1 ? frame[pos + 2] :
			il3__load_uint16(frame + pos + 2);
		if (count > 0 && entry_length < g->min_block_length)
			return fail(error, IL3_PARSE_GROUP_BLOCK_TOO_SHORT, -EBADMSG);
		msg->group_offset[i] = (uint16_t)(pos - IL3_SOFH_SIZE - IL3_SBE_HEADER_SIZE);
		pos += g->dim_size;
		if (entry_length * count > end - pos)
			return fail(error, IL3_PARSE_GROUP_PAST_END, -EBADMSG);
		pos += entry_length * count;
	}
	if (info->data_count > 0) {
		size_t data_length;

		if (pos + info->data_length_size > end)
			return fail(error, IL3_PARSE_DATA_PAST_END, -EBADMSG);
		data_length = info->data_length_size == 1 ? frame[pos] :
			il3__load_uint16(frame + pos);
		msg->data_offset = (uint16_t)(pos - IL3_SOFH_SIZE - IL3_SBE_HEADER_SIZE);
		if (data_length > end - pos - info->data_length_size)
			return fail(error, IL3_PARSE_DATA_PAST_END, -EBADMSG);
	}
	return fail(error, IL3_PARSE_OK, 0);
}

int
il3_msg_group(const struct il3_msg *msg, unsigned int index, struct il3_group *group)
{
	const struct il3_group_info *g;
	const uint8_t *dim;

	if (msg == NULL || group == NULL || msg->info == NULL)
		return -EINVAL;
	if (index >= msg->info->group_count)
		return -ENOENT;  /* a group added after the layout of this wire version */
	g = &msg->info->groups[index];
	if (msg->version < g->since_version)
		return -ENOENT;
	dim = msg->root + msg->group_offset[index];
	group->info = g;
	group->block_length = il3__load_uint16(dim);
	group->count = g->num_in_group_size == 1 ? dim[2] : il3__load_uint16(dim + 2);
	group->index = 0;
	group->entry = NULL;
	group->next = dim + g->dim_size;
	group->version = msg->version;
	return 0;
}

bool
il3_group_next(struct il3_group *group)
{
	if (group->index >= group->count)
		return false;
	group->entry = group->next;
	group->next += group->block_length;
	group->index++;
	return true;
}

int
il3_msg_data(const struct il3_msg *msg, const uint8_t **data, size_t *length)
{
	const uint8_t *p;

	if (msg == NULL || data == NULL || length == NULL)
		return -EINVAL;
	if (msg->info == NULL || msg->info->data_count == 0)
		return -ENOENT;
	p = msg->root + msg->data_offset;
	*length = msg->info->data_length_size == 1 ? p[0] : il3__load_uint16(p);
	*data = p + msg->info->data_length_size;
	return 0;
}

uint64_t
il3_load(const uint8_t *block, const struct il3_field_info *field)
{
	const uint8_t *p = block + field->offset;

	switch (field->primitive) {
	case IL3_PRIM_CHAR:
	case IL3_PRIM_UINT8:
		return p[0];
	case IL3_PRIM_INT8:
		return (uint64_t)(int64_t)il3__load_int8(p);
	case IL3_PRIM_UINT16:
		return il3__load_uint16(p);
	case IL3_PRIM_INT16:
		return (uint64_t)(int64_t)il3__load_int16(p);
	case IL3_PRIM_UINT32:
		return il3__load_uint32(p);
	case IL3_PRIM_INT32:
		return (uint64_t)(int64_t)il3__load_int32(p);
	default:
		return il3__load_uint64(p);
	}
}

bool
il3_field_present(const struct il3_field_info *field, uint16_t version, uint16_t block_length)
{
	if (field->presence == IL3_PRESENCE_CONSTANT)
		return version >= field->since_version;
	return version >= field->since_version &&
		(size_t)field->offset + field->size <= block_length;
}

/* ---- encoder ---- */

static uint8_t *
enc_fail(struct il3_encoder *enc, int err)
{
	enc->failed = true;
	errno = err;
	return NULL;
}

uint8_t *
il3_encode_begin(struct il3_encoder *enc, uint8_t *buf, size_t capacity, uint16_t template_id)
{
	const struct il3_message_info *info;
	size_t need;

	if (enc == NULL || buf == NULL) {
		errno = EINVAL;
		return NULL;
	}
	memset(enc, 0, sizeof(*enc));
	enc->buf = buf;
	enc->capacity = capacity < IL3_MAX_FRAME ? capacity : IL3_MAX_FRAME;
	info = il3_lookup_encode(template_id);
	if (info == NULL)
		return enc_fail(enc, ENOENT);
	enc->info = info;
	need = IL3_SOFH_SIZE + IL3_SBE_HEADER_SIZE + (size_t)info->block_length;
	if (need > enc->capacity)
		return enc_fail(enc, ENOBUFS);
	il3__store_uint16(buf, 0);
	il3__store_uint16(buf + 2, IL3_SOFH_ENCODING);
	il3__store_uint16(buf + 4, info->block_length);
	il3__store_uint16(buf + 6, template_id);
	il3__store_uint16(buf + 8, IL3_SCHEMA_ID);
	il3__store_uint16(buf + 10, IL3_SCHEMA_VERSION);
	if (info->null_image != NULL)
		memcpy(buf + 12, info->null_image, info->block_length);
	else
		memset(buf + 12, 0, info->block_length);
	enc->length = need;
	return buf + 12;
}

static int
put_group(struct il3_encoder *enc, const struct il3_group_info *g, unsigned int count,
		uint8_t **first)
{
	size_t need = g->dim_size + (size_t)g->block_length * count;
	uint8_t *p = enc->buf + enc->length;
	unsigned int i;

	if (count > (g->num_in_group_size == 1 ? 255u : 65535u))
		return -EINVAL;
	if (need > enc->capacity - enc->length)
		return -ENOBUFS;
	il3__store_uint16(p, g->block_length);
	if (g->num_in_group_size == 1)
		p[2] = (uint8_t)count;
	else
		il3__store_uint16(p + 2, (uint16_t)count);
	memset(p + 3, 0, g->dim_size - 3);
	p += g->dim_size;
	*first = p;
	for (i = 0; i < count; i++, p += g->block_length) {
		if (g->null_image != NULL)
			memcpy(p, g->null_image, g->block_length);
		else
			memset(p, 0, g->block_length);
	}
	enc->length += need;
	return 0;
}

uint8_t *
il3_encode_group(struct il3_encoder *enc, unsigned int index, unsigned int count)
{
	uint8_t *first = NULL;
	int rc;

	if (enc == NULL || enc->failed || enc->info == NULL || index >= enc->info->group_count ||
			index < enc->next_group)
		return enc == NULL ? (errno = EINVAL, NULL) : enc_fail(enc, EINVAL);
	while (enc->next_group < index) {
		rc = put_group(enc, &enc->info->groups[enc->next_group], 0, &first);
		if (rc < 0)
			return enc_fail(enc, -rc);
		enc->next_group++;
	}
	rc = put_group(enc, &enc->info->groups[index], count, &first);
	if (rc < 0)
		return enc_fail(enc, -rc);
	enc->next_group = index + 1;
	return first;
}

int
il3_encode_data(struct il3_encoder *enc, const void *data, size_t length)
{
	uint8_t *first;
	uint8_t *p;

	if (enc == NULL || enc->failed || enc->info == NULL || enc->info->data_count == 0 ||
			enc->next_group > enc->info->group_count || length > 65535)
		return -EINVAL;
	while (enc->next_group < enc->info->group_count) {
		if (put_group(enc, &enc->info->groups[enc->next_group], 0, &first) < 0) {
			enc->failed = true;
			return -ENOBUFS;
		}
		enc->next_group++;
	}
	if (enc->info->data_length_size + length > enc->capacity - enc->length) {
		enc->failed = true;
		return -ENOBUFS;
	}
	p = enc->buf + enc->length;
	if (enc->info->data_length_size == 1)
		p[0] = (uint8_t)length;
	else
		il3__store_uint16(p, (uint16_t)length);
	if (length > 0)
		memcpy(p + enc->info->data_length_size, data, length);
	enc->length += enc->info->data_length_size + length;
	enc->next_group = enc->info->group_count + 1;
	return 0;
}

int
il3_encode_end(struct il3_encoder *enc)
{
	uint8_t *first;

	if (enc == NULL || enc->info == NULL)
		return -EINVAL;
	if (enc->failed)
		return -ENOBUFS;
	while (enc->next_group < enc->info->group_count) {
		if (put_group(enc, &enc->info->groups[enc->next_group], 0, &first) < 0)
			return -ENOBUFS;
		enc->next_group++;
	}
	if (enc->info->data_count > 0 && enc->next_group == enc->info->group_count) {
		if (il3_encode_data(enc, NULL, 0) < 0)
			return -ENOBUFS;
	}
	il3__store_uint16(enc->buf, (uint16_t)enc->length);
	return (int)enc->length;
}

/* ---- stream reassembly ---- */

void
il3_stream_reset(struct il3_stream *stream)
{
	stream->start = 0;
	stream->end = 0;
	stream->last_error = IL3_PARSE_OK;
}

size_t
il3_stream_space(struct il3_stream *stream, uint8_t **space)
{
	if (stream->start > 0) {
		memmove(stream->buf, stream->buf + stream->start, stream->end - stream->start);
		stream->end -= stream->start;
		stream->start = 0;
	}
	*space = stream->buf + stream->end;
	return sizeof(stream->buf) - stream->end;
}

void
il3_stream_commit(struct il3_stream *stream, size_t length)
{
	if (length > sizeof(stream->buf) - stream->end)
		length = sizeof(stream->buf) - stream->end;
	stream->end += length;
	stream->counters.bytes += length;
}

size_t
il3_stream_push(struct il3_stream *stream, const void *data, size_t length)
{
	uint8_t *space;
	size_t room = il3_stream_space(stream, &space);

	if (length > room)
		length = room;
	memcpy(space, data, length);
	il3_stream_commit(stream, length);
	return length;
}

size_t
il3_stream_pending(const struct il3_stream *stream)
{
	return stream->end - stream->start;
}

int
il3_stream_next(struct il3_stream *stream, struct il3_msg *msg)
{
	for (;;) {
		const uint8_t *p = stream->buf + stream->start;
		size_t have = stream->end - stream->start;
		enum il3_parse_error why = IL3_PARSE_OK;
		size_t frame_length;
		int rc;

		if (stream->last_error != IL3_PARSE_OK)
			return -EBADMSG;
		if (have < IL3_SOFH_SIZE)
			return 0;
		frame_length = il3__load_uint16(p);
		if (il3__load_uint16(p + 2) != IL3_SOFH_ENCODING ||
				frame_length < IL3_SOFH_SIZE + IL3_SBE_HEADER_SIZE) {
			stream->last_error = il3__load_uint16(p + 2) != IL3_SOFH_ENCODING ?
				IL3_PARSE_BAD_ENCODING : IL3_PARSE_BAD_LENGTH;
			stream->counters.malformed++;
			return -EBADMSG;
		}
		if (have < frame_length)
			return 0;
		rc = il3_msg_parse(p, frame_length, msg, &why);
		stream->start += frame_length;
		if (rc == 0) {
			stream->counters.frames++;
			return 1;
		}
		if (rc == -ENOENT) {
			stream->counters.skipped_unknown++;
			continue;
		}
		stream->last_error = why;
		stream->counters.malformed++;
		return -EBADMSG;
	}
}
