/* SPDX-License-Identifier: BSD-3-Clause
 * libFuzzer harness of the MDP 3.0 packet walker and decoder (lib/mdp3).
 *
 * Each input is walked twice: as one UDP payload (binary packet header, then
 * messages) and as one conflated-TCP segment (0xCAFE frames).  For every
 * message delivered, every field of the root block and of every entry of
 * every group (nested groups too) is read through the generated metadata
 * (mdp3_field_present, mdp3_load, mdp3_type_is_null, mdp3_enum_name, set
 * choices, composite members, char arrays byte by byte), and again through
 * each typed accessor of its template (fuzz_accessors_gen.c).  Built with
 * -fsanitize=fuzzer,address,undefined, any read past the input is a crash;
 * the harness also aborts when the walker breaks a promise of mdp3.h:
 *   - mdp3_packet_validate() and mdp3_walk_packet() agree on every input;
 *   - a malformed packet delivers nothing, counts one drop and says why;
 *   - every view (packet, message, root block, group entry) lies inside the
 *     input, and message indexes stay below the packet's message count.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "fuzz_mdp3.h"
#include "mdp3.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Deepest group nesting followed (CME has none; the walker allows more). */
#define MAX_NESTING 8

struct fuzz_input {
	const uint8_t *data;
	size_t size;
	unsigned int delivered;
};

static bool
inside(const struct fuzz_input *in, const uint8_t *p, size_t n)
{
	return p >= in->data && (size_t)(p - in->data) <= in->size &&
		n <= in->size - (size_t)(p - in->data);
}

static void
touch_value(const struct fuzz_input *in, const struct mdp3_type_info *t, const uint8_t *p)
{
	const char *name;
	uint64_t raw;
	unsigned int i;

	if (t->presence == MDP3_PRESENCE_CONSTANT) {
		fuzz_sink += (uint64_t)t->constant_value;
		return;
	}
	FUZZ_CHECK(inside(in, p, t->size));
	switch (t->kind) {
	case MDP3_KIND_STRING:
		for (i = 0; i < t->length; i++)
			fuzz_sink += p[i];
		return;
	case MDP3_KIND_COMPOSITE:
		for (i = 0; i < t->member_count; i++)
			touch_value(in, t->members[i].type, p + t->members[i].offset);
		return;
	case MDP3_KIND_INTEGER:
	case MDP3_KIND_ENUM:
	case MDP3_KIND_SET:
		break;
	}
	raw = mdp3_load(p, t->primitive);
	fuzz_sink += raw + mdp3_type_is_null(t, raw);
	if (t->kind == MDP3_KIND_ENUM) {
		name = mdp3_enum_name(t, raw);
		if (name != NULL)
			fuzz_sink += (uint8_t)name[0];
	} else if (t->kind == MDP3_KIND_SET) {
		for (i = 0; i < t->value_count; i++)
			if (t->values[i].value < 64)
				fuzz_sink += (raw >> t->values[i].value) & 1;
	}
}

static void
touch_fields(const struct fuzz_input *in, const struct mdp3_block_info *b, const uint8_t *base,
		uint16_t block_length, uint16_t version)
{
	unsigned int i;

	for (i = 0; i < b->field_count; i++)
		if (mdp3_field_present(&b->fields[i], block_length, version))
			touch_value(in, b->fields[i].type, base + b->fields[i].offset);
}

static void
touch_group(const struct fuzz_input *in, const struct mdp3_msg *msg, struct mdp3_group *g,
		unsigned int depth)
{
	struct mdp3_group nested;
	unsigned int j, entries = 0;

	FUZZ_CHECK(g->end == msg->start + msg->size);
	while (mdp3_group_next(g)) {
		entries++;
		FUZZ_CHECK(g->entry >= msg->root && inside(in, g->entry, g->block_length));
		FUZZ_CHECK(g->entry + g->block_length <= g->end);
		touch_fields(in, g->info, g->entry, g->block_length, g->version);
		for (j = 0; j < g->info->group_count && depth < MAX_NESTING; j++)
			if (mdp3_group_nested(g, j, &nested) == 0)
				touch_group(in, msg, &nested, depth + 1);
	}
	FUZZ_CHECK(entries == g->count);
}

static int
on_message(void *ctx, const struct mdp3_packet *pkt, const struct mdp3_msg *msg)
{
	struct fuzz_input *in = ctx;
	struct mdp3_group g;
	unsigned int i;

	FUZZ_CHECK(inside(in, pkt->data, pkt->length));
	FUZZ_CHECK(msg->info != NULL && msg->info->template_id == msg->template_id);
	FUZZ_CHECK(msg->size >= MDP3_MESSAGE_HEADER_SIZE && inside(in, msg->start, msg->size));
	FUZZ_CHECK(msg->start >= pkt->data && msg->start + msg->size <= pkt->data + pkt->length);
	FUZZ_CHECK(msg->root + msg->block_length <= msg->start + msg->size);
	FUZZ_CHECK(msg->index < pkt->message_count);
	FUZZ_CHECK(mdp3_lookup(NULL, msg->schema_id, msg->version, msg->template_id) == msg->info);
	touch_fields(in, &msg->info->root, msg->root, msg->block_length, msg->version);
	for (i = 0; i < msg->info->root.group_count; i++)
		if (mdp3_msg_group(msg, i, &g) == 0)
			touch_group(in, msg, &g, 1);
	fuzz_sink += (uint64_t)fuzz_touch_typed(msg);
	in->delivered++;
	return 0;
}

static void
on_skip(void *ctx, const struct mdp3_packet *pkt, const struct mdp3_skip *skip)
{
	struct fuzz_input *in = ctx;

	FUZZ_CHECK(inside(in, pkt->data, pkt->length));
	FUZZ_CHECK(skip->offset + (size_t)skip->size <= pkt->length);
	FUZZ_CHECK(skip->reason == MDP3_REASON_UNKNOWN_SCHEMA ||
			skip->reason == MDP3_REASON_UNKNOWN_TEMPLATE);
	FUZZ_CHECK(skip->index < pkt->message_count);
}

static void
walk_udp(const uint8_t *data, size_t size)
{
	struct fuzz_input in = { .data = data, .size = size };
	struct mdp3_handler handler = { .on_message = on_message, .on_skip = on_skip, .ctx = &in };
	struct mdp3_walker w;
	struct mdp3_error error;
	int valid, rc;

	memset(&error, 0, sizeof(error));
	valid = mdp3_packet_validate(NULL, data, size, &error);
	FUZZ_CHECK(valid == 0 || valid == -EBADMSG);
	FUZZ_CHECK(mdp3_walker_init(&w, NULL, &handler) == 0);
	rc = mdp3_walk_packet(&w, data, size);
	FUZZ_CHECK(rc == valid);
	FUZZ_CHECK(w.counters.packets == 1);
	if (rc == 0) {
		FUZZ_CHECK(w.counters.packets_dropped == 0);
		FUZZ_CHECK(w.counters.messages == in.delivered);
	} else {
		FUZZ_CHECK(in.delivered == 0 && w.counters.messages == 0);
		FUZZ_CHECK(w.counters.packets_dropped == 1);
		FUZZ_CHECK(w.last_error.reason == error.reason);
		FUZZ_CHECK(w.last_error.reason > MDP3_REASON_NONE &&
				w.last_error.reason < MDP3_REASON_UNKNOWN_SCHEMA);
		FUZZ_CHECK(w.counters.reason[w.last_error.reason] == 1);
		FUZZ_CHECK(w.last_error.offset <= size);
		fuzz_sink += (uint8_t)mdp3_reason_name(w.last_error.reason)[0];
	}
}

static void
walk_tcp(const uint8_t *data, size_t size)
{
	struct fuzz_input in = { .data = data, .size = size };
	struct mdp3_handler handler = { .on_message = on_message, .on_skip = on_skip, .ctx = &in };
	struct mdp3_walker w;
	int rc;

	FUZZ_CHECK(mdp3_walker_init(&w, NULL, &handler) == 0);
	rc = mdp3_walk_tcp(&w, data, size);
	FUZZ_CHECK(rc == 0 || rc == -EBADMSG);
	FUZZ_CHECK(w.counters.messages == in.delivered);
	if (rc == -EBADMSG) {
		FUZZ_CHECK(w.counters.packets_dropped >= 1);
		FUZZ_CHECK(w.last_error.offset <= size);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (data == NULL)
		return 0;
	walk_udp(data, size);
	walk_tcp(data, size);
	return 0;
}
