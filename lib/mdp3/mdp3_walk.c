/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MDP 3.0 packet walker.
 *
 * A packet is checked whole before any message is delivered: a malformed
 * message must not leave the book with half a packet applied.  The checking
 * pass keeps the views it built (up to WALK_BATCH messages, on the stack) and
 * delivers them afterwards, so a message is parsed once; the rare longer
 * packet parses the messages past the batch a second time.  A packet whose
 * first MsgSize covers exactly the rest (one message: most packets of a quiet
 * channel) is parsed and delivered without the batch loops.  The template is
 * found through a cached dispatch row (one compare per message), and a flat
 * group (no nested groups: every incremental template) is checked inline by
 * its dimension alone: numInGroup x blockLength against the bytes left.
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

/*
 * Template lookup for the walk: the dispatch row of the last (schemaId,
 * version) seen is kept, so a message costs one compare of the key, one
 * range check and a load (packets carry one schema version).  An unknown
 * schema is cached too, with a span no template is in.
 */
static inline uint64_t
cache_key(uint16_t schema_id, uint16_t version)
{
	return UINT64_C(1) << 32 | (uint32_t)schema_id << 16 | version;
}

static void
cache_fill(const struct mdp3_dictionary *dict, struct mdp3__lookup_cache *cache,
		uint16_t schema_id, uint16_t version)
{
	const struct mdp3_schema_dispatch *s;
	uint32_t width;
	uint16_t row;

	cache->key = cache_key(schema_id, version);
	cache->row = NULL;
	cache->span = -1;
	cache->min_template = 0;
	for (s = dict->schemas; s < dict->schemas + dict->schema_count; s++) {
		if (s->schema_id != schema_id)
			continue;
		width = (uint32_t)s->max_template - s->min_template + 1;
		row = version > s->max_version ? s->max_version : version;
		cache->row = s->table + (size_t)row * width;
		cache->min_template = s->min_template;
		cache->span = (int32_t)(width - 1);
		return;
	}
}

/* The metadata, or NULL with *reason = unknown schema / unknown template. */
static inline const struct mdp3_message_info *
cached_lookup(const struct mdp3_dictionary *dict, struct mdp3__lookup_cache *cache,
		uint16_t schema_id, uint16_t version, uint16_t template_id,
		enum mdp3_reason *reason)
{
	const struct mdp3_message_info *info;
	int32_t index;

	if (__builtin_expect(cache->key != cache_key(schema_id, version), 0))
		cache_fill(dict, cache, schema_id, version);
	index = (uint16_t)(template_id - cache->min_template);
	if (__builtin_expect(index > cache->span, 0)) {
		*reason = cache->row == NULL ? MDP3_REASON_UNKNOWN_SCHEMA :
			MDP3_REASON_UNKNOWN_TEMPLATE;
		return NULL;
	}
	info = cache->row[index];
	if (__builtin_expect(info == NULL, 0))
		*reason = MDP3_REASON_UNKNOWN_TEMPLATE;
	return info;
}

/* A message parsed by the checking walk, kept for delivery. */
struct parsed {
	struct mdp3_msg msg;   /* msg.info NULL: skipped (unknown), see skip_reason */
	uint8_t skip_reason;
	uint8_t rare;          /* RARE_* bits: counted on delivery */
};

#define RARE_TRAILING 1u   /* bytes after the last known group */
#define RARE_FALLBACK 2u   /* decoded with another version's metadata */

/* Messages whose views the walk keeps; a packet with more re-parses the rest
 * when delivering (a 1500-byte packet rarely holds more). */
#define WALK_BATCH 32

/*
 * Check the message at data[0..left) and fill *p.  Returns 0 and sets
 * *consumed (MsgSize), or the drop reason with *fault (offset within the
 * message) and p->msg.template_id when it was read.
 */
static inline __attribute__((always_inline)) enum mdp3_reason
parse_message(const struct mdp3_dictionary *dict, struct mdp3__lookup_cache *cache,
		const uint8_t *data, size_t left, struct parsed *p, uint32_t *consumed,
		uint32_t *fault)
{
	const struct mdp3_message_info *info;
	const struct mdp3_block_info *g, *groups;
	uint32_t size, block_length, pos, count, entry;
	uint16_t template_id, schema_id, version;
	unsigned int i, group_count;
	enum mdp3_reason r;

	*fault = 0;
	if (__builtin_expect(left < MDP3_MESSAGE_HEADER_SIZE, 0))
		return MDP3_REASON_SHORT_MESSAGE_HEADER;
	size = mdp3__load_uint16(data);
	block_length = mdp3__load_uint16(data + 2);
	template_id = mdp3__load_uint16(data + 4);
	schema_id = mdp3__load_uint16(data + 6);
	version = mdp3__load_uint16(data + 8);
	p->msg.template_id = template_id;
	if (__builtin_expect(size < MDP3_MESSAGE_HEADER_SIZE, 0))
		return MDP3_REASON_MSG_SIZE_TOO_SMALL;
	if (__builtin_expect(size > left, 0))
		return MDP3_REASON_MSG_SIZE_TOO_LARGE;
	*consumed = size;
	p->msg.start = data;
	p->msg.root = data + MDP3_MESSAGE_HEADER_SIZE;
	p->msg.size = (uint16_t)size;
	p->msg.block_length = (uint16_t)block_length;
	p->msg.schema_id = schema_id;
	p->msg.version = version;
	info = cached_lookup(dict, cache, schema_id, version, template_id, &r);
	p->msg.info = info;
	if (__builtin_expect(info == NULL, 0)) {
		p->skip_reason = (uint8_t)r;
		return MDP3_REASON_NONE;
	}
	*fault = 2;
	if (__builtin_expect(block_length < info->root.min_block_length, 0))
		return MDP3_REASON_BLOCK_TOO_SHORT;
	if (__builtin_expect(block_length > size - MDP3_MESSAGE_HEADER_SIZE, 0))
		return MDP3_REASON_BLOCK_PAST_END;
	pos = MDP3_MESSAGE_HEADER_SIZE + block_length;
	p->rare = info->schema_version != version ? RARE_FALLBACK : 0;
	memset(p->msg.group_offset, 0, sizeof(p->msg.group_offset));
	group_count = info->root.group_count;
	groups = info->root.groups;
	for (i = 0; i < group_count; i++) {
		g = &groups[i];
		if (g->since_version > version)
			continue;
		p->msg.group_offset[i] = (uint16_t)(pos - MDP3_MESSAGE_HEADER_SIZE);
		*fault = pos;
		if (__builtin_expect(g->group_count != 0, 0)) {
			uint32_t q = pos; /* pos itself stays in a register */

			r = check_group(g, data, size, &q, version);
			if (r != MDP3_REASON_NONE)
				return r;
			pos = q;
			continue;
		}
		/* A flat group (every MDP3 incremental): dimension, then entries. */
		if (__builtin_expect(g->dim_size > size - pos, 0))
			return MDP3_REASON_GROUP_HEADER_PAST_END;
		entry = mdp3__load_dim(data + pos + g->dim_block_length_offset,
				g->dim_block_length_size);
		count = mdp3__load_dim(data + pos + g->dim_num_in_group_offset,
				g->dim_num_in_group_size);
		pos += g->dim_size;
		/* An empty group's blockLength describes nothing: do not judge it. */
		if (count == 0)
			continue;
		if (__builtin_expect(entry < g->min_block_length, 0))
			return MDP3_REASON_GROUP_BLOCK_TOO_SHORT;
		/* 65535 x 65535 fits 32 bits */
		if (__builtin_expect(count * entry > size - pos, 0))
			return MDP3_REASON_GROUP_PAST_END;
		pos += count * entry;
	}
	/* Bytes after the last known group: a newer version's extension. */
	if (__builtin_expect(pos < size, 0))
		p->rare |= RARE_TRAILING;
	return MDP3_REASON_NONE;
}

/*
 * Check the messages of data[first..length); stop at the first malformed one
 * (-EBADMSG, *err filled).  The first WALK_BATCH parsed messages are kept in
 * batch when batch is not NULL; *count gets the number of messages, *resume
 * the offset of message WALK_BATCH (when there are more).
 */
static inline __attribute__((always_inline)) int
check_messages(const struct mdp3_dictionary *dict, struct mdp3__lookup_cache *cache,
		const uint8_t *data, size_t length, size_t first, struct parsed *batch,
		struct mdp3_error *err, uint16_t *count, size_t *resume)
{
	struct parsed scratch, *p;
	enum mdp3_reason reason;
	uint32_t consumed = 0, fault;
	size_t off = first;
	uint32_t index = 0;

	*resume = length;
	while (off < length) {
		p = &scratch;
		if (batch != NULL && __builtin_expect(index < WALK_BATCH, 1))
			p = &batch[index];
		else if (index == WALK_BATCH)
			*resume = off;
		p->msg.template_id = 0;
		reason = parse_message(dict, cache, data + off, length - off, p, &consumed,
				&fault);
		if (__builtin_expect(reason != MDP3_REASON_NONE, 0)) {
			if (err != NULL) {
				err->reason = reason;
				err->offset = (uint32_t)(off + fault);
				err->msg_index = (uint16_t)index;
				err->template_id = p->msg.template_id;
			}
			return -EBADMSG;
		}
		off += consumed;
		index++;
	}
	*count = (uint16_t)index;
	return 0;
}

/* Deliver one checked message (or skip) to the handler. */
static inline __attribute__((always_inline)) int
deliver(struct mdp3_walker *w, const struct mdp3_packet *pkt, struct parsed *p, uint16_t index)
{
	if (__builtin_expect(p->msg.info == NULL, 0)) {
		w->counters.messages_skipped++;
		w->counters.reason[p->skip_reason]++;
		if (w->handler.on_skip != NULL) {
			struct mdp3_skip skip = {
				.reason = (enum mdp3_reason)p->skip_reason,
				.offset = (uint32_t)(p->msg.start - pkt->data),
				.size = p->msg.size,
				.block_length = p->msg.block_length,
				.template_id = p->msg.template_id,
				.schema_id = p->msg.schema_id,
				.version = p->msg.version,
				.index = index,
			};

			w->handler.on_skip(w->handler.ctx, pkt, &skip);
		}
		return 0;
	}
	p->msg.index = index;
	w->counters.messages++;
	if (__builtin_expect(p->rare != 0, 0)) {
		w->counters.trailing_bytes += p->rare & RARE_TRAILING;
		w->counters.version_fallbacks += (p->rare & RARE_FALLBACK) != 0;
	}
	if (w->handler.on_message != NULL)
		return w->handler.on_message(w->handler.ctx, pkt, &p->msg);
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
	struct mdp3__lookup_cache cache = { .key = 0 };
	uint16_t count;
	size_t resume;

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
	return check_messages(dict, &cache, data, length, MDP3_PACKET_HEADER_SIZE, NULL, error,
			&count, &resume);
}

static int
drop(struct mdp3_walker *w)
{
	w->counters.packets_dropped++;
	w->counters.reason[w->last_error.reason]++;
	return -EBADMSG;
}

/*
 * One packet: header at data[0], messages from data[header_size].  One
 * checking pass keeps the views of the first WALK_BATCH messages; only then
 * are they delivered, so a malformed packet delivers nothing.
 */
static inline __attribute__((always_inline)) int
walk_one(struct mdp3_walker *w, const uint8_t *data, size_t length, size_t header_size,
		enum mdp3_framing framing)
{
	struct mdp3__lookup_cache *cache = &w->cache;
	struct parsed batch[WALK_BATCH], scratch;
	struct mdp3_packet pkt;
	size_t seq_at = framing == MDP3_FRAMING_TCP ? 2 : 0;
	size_t off, resume;
	uint32_t consumed, fault;
	uint16_t i, n;
	int rc;

	w->counters.packets++;
	pkt.data = data;
	pkt.length = (uint32_t)length;
	pkt.msg_seq_num = mdp3__load_uint32(data + seq_at);
	pkt.sending_time = mdp3__load_uint64(data + seq_at + 4);
	pkt.framing = framing;
	pkt.message_count = 0;
	/*
	 * One message filling the packet (most packets of a quiet channel): no
	 * batch to keep, no second loop.  The same parse and the same checks;
	 * a fault is reported as check_messages() reports it.
	 */
	if (length - header_size >= MDP3_MESSAGE_HEADER_SIZE &&
			mdp3__load_uint16(data + header_size) == length - header_size) {
		enum mdp3_reason reason;

		batch[0].msg.template_id = 0;
		reason = parse_message(w->dict, cache, data + header_size, length - header_size,
				&batch[0], &consumed, &fault);
		if (__builtin_expect(reason != MDP3_REASON_NONE, 0)) {
			w->last_error.reason = reason;
			w->last_error.offset = (uint32_t)(header_size + fault);
			w->last_error.msg_index = 0;
			w->last_error.template_id = batch[0].msg.template_id;
			return drop(w);
		}
		pkt.message_count = 1;
		return deliver(w, &pkt, &batch[0], 0);
	}
	rc = check_messages(w->dict, cache, data, length, header_size, batch, &w->last_error,
			&pkt.message_count, &resume);
	if (__builtin_expect(rc < 0, 0))
		return drop(w);
	n = pkt.message_count < WALK_BATCH ? pkt.message_count : WALK_BATCH;
	for (i = 0; i < n; i++) {
		rc = deliver(w, &pkt, &batch[i], i);
		if (__builtin_expect(rc < 0, 0))
			return rc;
	}
	/* More than WALK_BATCH messages: the rest, checked already, parsed again. */
	for (off = resume; i < pkt.message_count; i++) {
		if (parse_message(w->dict, cache, data + off, length - off, &scratch, &consumed,
					&fault) != MDP3_REASON_NONE)
			return -EBADMSG; /* cannot happen: checked above */
		rc = deliver(w, &pkt, &scratch, i);
		if (rc < 0)
			return rc;
		off += consumed;
	}
	return 0;
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
