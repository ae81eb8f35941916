/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MDP 3.0 packet walker.
 *
 * A packet is checked whole before any message is delivered (pass 1), then
 * walked again to deliver (pass 2): a malformed message must not leave the
 * book with half a packet applied.  Both passes run the same parser; pass 2
 * cannot fail on lengths.  The cost is reading each message header and group
 * dimension twice, a few loads per message.
 *
 * Every read is preceded by a check that the bytes are inside the message
 * (MsgSize), and MsgSize is checked against the bytes left in the packet, so
 * nothing past the buffer's end is read.  Offsets are computed in 32 bits
 * from 16-bit wire values and compared before being added to a pointer.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "mdp3.h"

static const char *const reason_names[MDP3_REASON_COUNT] = {
	[MDP3_REASON_NONE] = "none",
	[MDP3_REASON_SHORT_PACKET] = "short_packet",
	[MDP3_REASON_SHORT_MESSAGE_HEADER] = "short_message_header",
	[MDP3_REASON_MSG_SIZE_TOO_SMALL] = "msg_size_too_small",
	[MDP3_REASON_MSG_SIZE_TOO_LARGE] = "msg_size_too_large",
	[MDP3_REASON_BLOCK_TOO_SHORT] = "block_too_short",
	[MDP3_REASON_BLOCK_PAST_END] = "block_past_end",
	[MDP3_REASON_GROUP_HEADER_PAST_END] = "group_header_past_end",
	[MDP3_REASON_GROUP_BLOCK_TOO_SHORT] = "group_block_too_short",
	[MDP3_REASON_GROUP_PAST_END] = "group_past_end",
	[MDP3_REASON_BAD_ENCODING_TYPE] = "bad_encoding_type",
	[MDP3_REASON_UNKNOWN_SCHEMA] = "unknown_schema",
	[MDP3_REASON_UNKNOWN_TEMPLATE] = "unknown_template",
};

const char *
mdp3_reason_name(enum mdp3_reason reason)
{
	if ((unsigned int)reason >= MDP3_REASON_COUNT)
		return "unknown";
	return reason_names[reason];
}

const struct mdp3_message_info *
mdp3_lookup(const struct mdp3_dictionary *dict, uint16_t schema_id, uint16_t version,
		uint16_t template_id)
{
	const struct mdp3_schema_dispatch *s;
	const struct mdp3_message_info *info;
	uint32_t width;
	uint16_t row;

	if (dict == NULL)
		dict = &mdp3_dictionary_cme;
	for (s = dict->schemas; s < dict->schemas + dict->schema_count; s++) {
		if (s->schema_id != schema_id)
			continue;
		if (template_id < s->min_template || template_id > s->max_template) {
			errno = ENOENT;
			return NULL;
		}
		width = (uint32_t)s->max_template - s->min_template + 1;
		row = version > s->max_version ? s->max_version : version;
		info = s->table[row * width + (template_id - s->min_template)];
		if (info == NULL)
			errno = ENOENT;
		return info;
	}
	errno = EPROTONOSUPPORT;
	return NULL;
}

/* Check one repeating group starting at *pos (offset in the message) and
 * advance *pos past it.  On success, if group_offset is not NULL it gets the
 * dimension header offset relative to base_offset. */
static enum mdp3_reason
check_group(const struct mdp3_block_info *g, const uint8_t *msg, uint32_t size,
		uint32_t *pos, uint16_t version)
{
	uint32_t p = *pos;
	uint32_t block_length;
	uint32_t count;
	uint32_t i;
	unsigned int j;
	enum mdp3_reason r;

	if (g->dim_size > size - p)
		return MDP3_REASON_GROUP_HEADER_PAST_END;
	block_length = mdp3__load_dim(msg + p + g->dim_block_length_offset,
			g->dim_block_length_size);
	count = mdp3__load_dim(msg + p + g->dim_num_in_group_offset,
			g->dim_num_in_group_size);
	p += g->dim_size;
	/* An empty group's blockLength describes nothing: do not judge it. */
	if (count > 0 && block_length < g->min_block_length)
		return MDP3_REASON_GROUP_BLOCK_TOO_SHORT;
	if (g->group_count == 0) {
		if ((uint64_t)count * block_length > size - p)
			return MDP3_REASON_GROUP_PAST_END;
		p += count * block_length;
	} else {
		for (i = 0; i < count; i++) {
			if (block_length > size - p)
				return MDP3_REASON_GROUP_PAST_END;
			p += block_length;
			for (j = 0; j < g->group_count; j++) {
				if (g->groups[j].since_version > version)
					continue;
				r = check_group(&g->groups[j], msg, size, &p, version);
				if (r != MDP3_REASON_NONE)
					return r;
			}
		}
	}
	*pos = p;
	return MDP3_REASON_NONE;
}

enum parse_result {
	PARSE_OK,
	PARSE_SKIP,
	PARSE_BAD,
};

/* Parse the message at data[0..left).  On PARSE_OK fills *msg; on PARSE_SKIP
 * fills *skip; in both cases *consumed is MsgSize.  On PARSE_BAD *reason and
 * *fault (offset within the message) say why. */
static enum parse_result
parse_message(const struct mdp3_dictionary *dict, const uint8_t *data, size_t left,
		struct mdp3_msg *msg, struct mdp3_skip *skip, uint32_t *consumed,
		bool *trailing, enum mdp3_reason *reason, uint32_t *fault)
{
	const struct mdp3_message_info *info;
	uint32_t size, block_length, pos;
	uint16_t template_id, schema_id, version;
	unsigned int i;
	enum mdp3_reason r;

	*fault = 0;
	if (left < MDP3_MESSAGE_HEADER_SIZE) {
		*reason = MDP3_REASON_SHORT_MESSAGE_HEADER;
		return PARSE_BAD;
	}
	size = mdp3__load_uint16(data);
	block_length = mdp3__load_uint16(data + 2);
	template_id = mdp3__load_uint16(data + 4);
	schema_id = mdp3__load_uint16(data + 6);
	version = mdp3__load_uint16(data + 8);
	msg->template_id = template_id;
	if (size < MDP3_MESSAGE_HEADER_SIZE) {
		*reason = MDP3_REASON_MSG_SIZE_TOO_SMALL;
		return PARSE_BAD;
	}
	if (size > left) {
		*reason = MDP3_REASON_MSG_SIZE_TOO_LARGE;
		return PARSE_BAD;
	}
	*consumed = size;
	info = mdp3_lookup(dict, schema_id, version, template_id);
	if (info == NULL) {
		skip->reason = errno == EPROTONOSUPPORT ? MDP3_REASON_UNKNOWN_SCHEMA :
			MDP3_REASON_UNKNOWN_TEMPLATE;
		skip->size = (uint16_t)size;
		skip->block_length = (uint16_t)block_length;
		skip->template_id = template_id;
		skip->schema_id = schema_id;
		skip->version = version;
		return PARSE_SKIP;
	}
	if (block_length < info->root.min_block_length) {
		*reason = MDP3_REASON_BLOCK_TOO_SHORT;
		*fault = 2;
		return PARSE_BAD;
	}
	if (block_length > size - MDP3_MESSAGE_HEADER_SIZE) {
		*reason = MDP3_REASON_BLOCK_PAST_END;
		*fault = 2;
		return PARSE_BAD;
	}
	pos = MDP3_MESSAGE_HEADER_SIZE + block_length;
	memset(msg->group_offset, 0, sizeof(msg->group_offset));
	for (i = 0; i < info->root.group_count; i++) {
		if (info->root.groups[i].since_version > version)
			continue;
		msg->group_offset[i] = (uint16_t)(pos - MDP3_MESSAGE_HEADER_SIZE);
		*fault = pos;
		r = check_group(&info->root.groups[i], data, size, &pos, version);
		if (r != MDP3_REASON_NONE) {
			*reason = r;
			return PARSE_BAD;
		}
	}
	msg->start = data;
	msg->root = data + MDP3_MESSAGE_HEADER_SIZE;
	msg->info = info;
	msg->size = (uint16_t)size;
	msg->block_length = (uint16_t)block_length;
	msg->schema_id = schema_id;
	msg->version = version;
	/* Bytes after the last known group: a newer version's extension. */
	*trailing = pos < size;
	return PARSE_OK;
}

enum walk_mode {
	WALK_CHECK,
	WALK_DELIVER,
};

/* Walk the messages of data[0..length) that follow a packet header at
 * offset `first`.  In check mode, stops at the first malformed message. */
static int
walk_messages(const struct mdp3_dictionary *dict, struct mdp3_walker *w,
		struct mdp3_packet *pkt, const uint8_t *data, size_t length, size_t first,
		enum walk_mode mode, struct mdp3_error *err, uint16_t *count)
{
	struct mdp3_msg msg;
	struct mdp3_skip skip;
	enum mdp3_reason reason;
	enum parse_result res;
	uint32_t consumed = 0, fault;
	bool trailing = false;
	size_t off = first;
	uint16_t index = 0;
	int rc;

	while (off < length) {
		msg.template_id = 0;
		res = parse_message(dict, data + off, length - off, &msg, &skip, &consumed,
				&trailing, &reason, &fault);
		if (res == PARSE_BAD) {
			if (err != NULL) {
				err->reason = reason;
				err->offset = (uint32_t)(off + fault);
				err->msg_index = index;
				err->template_id = msg.template_id;
			}
			return -EBADMSG;
		}
		if (mode == WALK_DELIVER) {
			if (res == PARSE_SKIP) {
				w->counters.messages_skipped++;
				w->counters.reason[skip.reason]++;
				if (w->handler.on_skip != NULL) {
					skip.offset = (uint32_t)off;
					skip.index = index;
					w->handler.on_skip(w->handler.ctx, pkt, &skip);
				}
			} else {
				msg.index = index;
				w->counters.messages++;
				if (trailing)
					w->counters.trailing_bytes++;
				if (msg.info->schema_version != msg.version)
					w->counters.version_fallbacks++;
				if (w->handler.on_message != NULL) {
					rc = w->handler.on_message(w->handler.ctx, pkt, &msg);
					if (rc < 0)
						return rc;
				}
			}
		}
		off += consumed;
		index++;
	}
	*count = index;
	return 0;
}

int
mdp3_walker_init(struct mdp3_walker *walker, const struct mdp3_dictionary *dict,
		const struct mdp3_handler *handler)
{
	if (walker == NULL)
		return -EINVAL;
	memset(walker, 0, sizeof(*walker));
	walker->dict = dict != NULL ? dict : &mdp3_dictionary_cme;
	if (handler != NULL)
		walker->handler = *handler;
	return 0;
}

int
mdp3_packet_validate(const struct mdp3_dictionary *dict, const uint8_t *data, size_t length,
		struct mdp3_error *error)
{
	struct mdp3_packet pkt;
	uint16_t count;

	if (data == NULL && length > 0)
		return -EINVAL;
	if (dict == NULL)
		dict = &mdp3_dictionary_cme;
	if (error != NULL)
		memset(error, 0, sizeof(*error));
	if (length < MDP3_PACKET_HEADER_SIZE) {
		if (error != NULL)
			error->reason = MDP3_REASON_SHORT_PACKET;
		return -EBADMSG;
	}
	memset(&pkt, 0, sizeof(pkt));
	return walk_messages(dict, NULL, &pkt, data, length, MDP3_PACKET_HEADER_SIZE,
			WALK_CHECK, error, &count);
}

static int
drop(struct mdp3_walker *w)
{
	w->counters.packets_dropped++;
	w->counters.reason[w->last_error.reason]++;
	return -EBADMSG;
}

/* One packet: header at data[0], messages from data[header_size]. */
static int
walk_one(struct mdp3_walker *w, const uint8_t *data, size_t length, size_t header_size,
		enum mdp3_framing framing)
{
	struct mdp3_packet pkt;
	size_t seq_at = framing == MDP3_FRAMING_TCP ? 2 : 0;
	int rc;

	w->counters.packets++;
	pkt.data = data;
	pkt.length = (uint32_t)length;
	pkt.msg_seq_num = mdp3__load_uint32(data + seq_at);
	pkt.sending_time = mdp3__load_uint64(data + seq_at + 4);
	pkt.framing = framing;
	pkt.message_count = 0;
	rc = walk_messages(w->dict, w, &pkt, data, length, header_size, WALK_CHECK,
			&w->last_error, &pkt.message_count);
	if (rc < 0)
		return drop(w);
	return walk_messages(w->dict, w, &pkt, data, length, header_size, WALK_DELIVER,
			&w->last_error, &pkt.message_count);
}

int
mdp3_walk_packet(struct mdp3_walker *walker, const uint8_t *data, size_t length)
{
	if (walker == NULL || (data == NULL && length > 0))
		return -EINVAL;
	memset(&walker->last_error, 0, sizeof(walker->last_error));
	if (length < MDP3_PACKET_HEADER_SIZE) {
		walker->counters.packets++;
		walker->last_error.reason = MDP3_REASON_SHORT_PACKET;
		return drop(walker);
	}
	if (length > UINT32_MAX)
		length = UINT32_MAX;
	return walk_one(walker, data, length, MDP3_PACKET_HEADER_SIZE, MDP3_FRAMING_UDP);
}

int
mdp3_walk_tcp(struct mdp3_walker *walker, const uint8_t *data, size_t length)
{
	size_t off = 0, left, frame;
	uint32_t size;
	int rc;

	if (walker == NULL || (data == NULL && length > 0))
		return -EINVAL;
	memset(&walker->last_error, 0, sizeof(walker->last_error));
	while (off < length) {
		left = length - off;
		if (left < MDP3_TCP_HEADER_SIZE) {
			walker->counters.packets++;
			walker->last_error.reason = MDP3_REASON_SHORT_PACKET;
			walker->last_error.offset = (uint32_t)off;
			return drop(walker);
		}
		if (mdp3__load_uint16(data + off) != MDP3_TCP_ENCODING_TYPE) {
			walker->counters.packets++;
			walker->last_error.reason = MDP3_REASON_BAD_ENCODING_TYPE;
			walker->last_error.offset = (uint32_t)off;
			return drop(walker);
		}
		if (left < MDP3_TCP_HEADER_SIZE + MDP3_MESSAGE_HEADER_SIZE) {
			walker->counters.packets++;
			walker->last_error.reason = MDP3_REASON_SHORT_MESSAGE_HEADER;
			walker->last_error.offset = (uint32_t)(off + MDP3_TCP_HEADER_SIZE);
			return drop(walker);
		}
		/* The frame is the technical header and exactly one message; a bad
		 * MsgSize is reported by the parser on the whole rest. */
		frame = left;
		size = mdp3__load_uint16(data + off + MDP3_TCP_HEADER_SIZE);
		if (size >= MDP3_MESSAGE_HEADER_SIZE && MDP3_TCP_HEADER_SIZE + size <= left)
			frame = MDP3_TCP_HEADER_SIZE + size;
		rc = walk_one(walker, data + off, frame, MDP3_TCP_HEADER_SIZE, MDP3_FRAMING_TCP);
		if (rc == -EBADMSG)
			walker->last_error.offset += (uint32_t)off;
		if (rc < 0)
			return rc;
		off += frame;
	}
	return 0;
}

int
mdp3_group_nested(const struct mdp3_group *group, unsigned int index, struct mdp3_group *nested)
{
	if (group->entry == NULL)
		return -EINVAL;
	if (index >= group->info->group_count || group->group_offset[index] == 0)
		return -ENOENT;
	mdp3__group_open(nested, &group->info->groups[index],
			group->entry + group->group_offset[index], group->end, group->version);
	return 0;
}

const uint8_t *
mdp3__group_entry_end(struct mdp3_group *group)
{
	const struct mdp3_block_info *info = group->info;
	const uint8_t *msg = group->entry;
	uint32_t size, pos;
	unsigned int j;

	/* Offsets are relative to the entry; the walker validated them, this
	 * re-check only keeps a misused iterator inside the message. */
	if (group->end < msg || (size_t)(group->end - msg) > UINT32_MAX)
		return NULL;
	size = (uint32_t)(group->end - msg);
	if (group->block_length > size)
		return NULL;
	pos = group->block_length;
	memset(group->group_offset, 0, sizeof(group->group_offset));
	for (j = 0; j < info->group_count; j++) {
		if (info->groups[j].since_version > group->version)
			continue;
		group->group_offset[j] = (uint16_t)pos;
		if (check_group(&info->groups[j], msg, size, &pos, group->version) !=
				MDP3_REASON_NONE)
			return NULL;
	}
	return msg + pos;
}

bool
mdp3_type_is_null(const struct mdp3_type_info *type, uint64_t raw)
{
	return type->presence == MDP3_PRESENCE_OPTIONAL && raw == type->null_value;
}

bool
mdp3_primitive_signed(enum mdp3_primitive primitive)
{
	return primitive == MDP3_PRIM_INT8 || primitive == MDP3_PRIM_INT16 ||
		primitive == MDP3_PRIM_INT32 || primitive == MDP3_PRIM_INT64;
}

const char *
mdp3_enum_name(const struct mdp3_type_info *type, uint64_t raw)
{
	unsigned int i;

	if (type->kind != MDP3_KIND_ENUM) {
		errno = EINVAL;
		return NULL;
	}
	for (i = 0; i < type->value_count; i++)
		if ((uint64_t)type->values[i].value == raw)
			return type->values[i].name;
	errno = ENOENT;
	return NULL;
}
