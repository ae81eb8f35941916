/* SPDX-License-Identifier: BSD-3-Clause
 * libFuzzer harness of the iLink 3 inbound decoder (lib/ilink3 codec).
 *
 * Each input is a TCP byte stream from the gateway, decoded three ways:
 *   1. frame by frame with il3_msg_parse() on the input itself (SOFH, SBE
 *      header, root block, groups, data), the way a reader steps over a
 *      buffer: a frame of an unknown template or schema is skipped by its
 *      SOFH length, a malformed one ends the stream;
 *   2. through the stream reassembler, the whole input pushed at once;
 *   3. through the stream reassembler, pushed in chunks of 1 to 23 bytes.
 * Every message delivered by 1 goes through fuzz_il3_check_msg(): an
 * exact-size copy of its frame, every leaf through the metadata, every
 * group entry, the data and each of the 1,300 typed accessors.  Besides
 * ASan/UBSan findings the harness aborts when the decoder breaks a promise
 * of ilink3.h:
 *   - il3_msg_parse() returns 0, -EBADMSG or -ENOENT with the matching
 *     reason, and the same whether it is given the exact frame or more bytes;
 *   - the three ways deliver the same frames, in the same order, with the
 *     same skips and the same error; a broken stream stays broken; a view of
 *     the reassembler holds the bytes of the input at that place;
 *   - no view or accessor reads outside its frame, block or group entry.
 */
#include <errno.h>
#include <string.h>

#include "fuzz_il3.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* What a decoding of the stream delivered. */
struct trace {
	uint64_t hash;                  /* offsets and templates of the frames delivered */
	uint64_t frames, skipped;
	size_t consumed;                /* bytes of the frames delivered or skipped */
	enum il3_parse_error error;     /* why the stream broke; OK if it did not */
};

static void
trace_add(struct trace *t, size_t offset, uint16_t template_id)
{
	t->hash = (t->hash ^ ((uint64_t)offset << 16 | template_id)) * UINT64_C(0x100000001b3);
	t->frames++;
}

static void
parse_frames(const uint8_t *data, size_t size, struct trace *t)
{
	size_t pos = 0;

	while (size - pos >= IL3_SOFH_SIZE) {
		const uint8_t *p = data + pos;
		enum il3_parse_error why = IL3_PARSE_ERROR_COUNT, exact_why = IL3_PARSE_ERROR_COUNT;
		size_t frame_length = il3__load_uint16(p);
		struct il3_msg msg, exact;
		int rc, exact_rc;

		rc = il3_msg_parse(p, size - pos, &msg, &why);
		FUZZ_CHECK(why < IL3_PARSE_ERROR_COUNT && il3_parse_error_name(why) != NULL);
		if (il3__load_uint16(p + 2) != IL3_SOFH_ENCODING ||
				frame_length < IL3_SOFH_SIZE + IL3_SBE_HEADER_SIZE) {
			FUZZ_CHECK(rc == -EBADMSG && (why == IL3_PARSE_BAD_ENCODING ||
					why == IL3_PARSE_BAD_LENGTH));
			t->error = why;
			return;
		}
		if (frame_length > size - pos) {
			FUZZ_CHECK(rc == -EBADMSG && why == IL3_PARSE_SHORT_FRAME);
			return;         /* the rest of the frame has not arrived */
		}
		exact_rc = il3_msg_parse(p, frame_length, &exact, &exact_why);
		FUZZ_CHECK(exact_rc == rc && exact_why == why);
		FUZZ_CHECK((rc == 0 && why == IL3_PARSE_OK) ||
				(rc == -ENOENT && (why == IL3_PARSE_WRONG_SCHEMA ||
					why == IL3_PARSE_UNKNOWN_TEMPLATE)) ||
				(rc == -EBADMSG && why > IL3_PARSE_UNKNOWN_TEMPLATE));
		if (rc == -EBADMSG) {
			t->error = why;
			return;
		}
		if (rc == 0) {
			FUZZ_CHECK(msg.frame == p && msg.frame_length == frame_length);
			fuzz_il3_check_msg(&msg);
		}
		if (rc == 0)
			trace_add(t, pos, msg.template_id);
		else
			t->skipped++;
		pos += frame_length;
		t->consumed = pos;
	}
}

/* Take every frame the reassembler holds; false once it is broken. */
static bool
drain(struct il3_stream *stream, const uint8_t *data, struct trace *t)
{
	struct il3_msg msg;
	int rc;

	while ((rc = il3_stream_next(stream, &msg)) == 1) {
		size_t offset = stream->counters.bytes - il3_stream_pending(stream) -
			msg.frame_length;

		FUZZ_CHECK(msg.frame >= stream->buf &&
				msg.frame + msg.frame_length <= stream->buf + sizeof(stream->buf));
		FUZZ_CHECK(memcmp(msg.frame, data + offset, msg.frame_length) == 0);
		trace_add(t, offset, msg.template_id);
	}
	FUZZ_CHECK(rc == 0 || rc == -EBADMSG);
	if (rc == -EBADMSG) {
		FUZZ_CHECK(stream->last_error != IL3_PARSE_OK && stream->counters.malformed == 1);
		FUZZ_CHECK(il3_stream_next(stream, &msg) == -EBADMSG);
		t->error = stream->last_error;
		return false;
	}
	return true;
}

static void
reassemble(const uint8_t *data, size_t size, size_t (*chunk)(size_t k), struct trace *t)
{
	static struct il3_stream stream;
	size_t pos = 0, k = 0;

	memset(&stream.counters, 0, sizeof(stream.counters));
	il3_stream_reset(&stream);
	while (pos < size) {
		size_t want = chunk(k++), taken;

		if (want > size - pos)
			want = size - pos;
		taken = il3_stream_push(&stream, data + pos, want);
		FUZZ_CHECK(taken > 0 && taken <= want);
		pos += taken;
		if (!drain(&stream, data, t))
			break;
	}
	FUZZ_CHECK(stream.counters.bytes == pos && stream.counters.frames == t->frames);
	t->skipped = stream.counters.skipped_unknown;
	t->consumed = pos - il3_stream_pending(&stream);
	il3_stream_reset(&stream);
	FUZZ_CHECK(stream.last_error == IL3_PARSE_OK && il3_stream_pending(&stream) == 0);
}

static size_t whole(size_t k) { (void)k; return SIZE_MAX; }
static size_t small(size_t k) { return 1 + k * 7 % 23; }

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct trace direct = { 0 }, at_once = { 0 }, in_chunks = { 0 };

	if (data == NULL)
		return 0;
	parse_frames(data, size, &direct);
	reassemble(data, size, whole, &at_once);
	reassemble(data, size, small, &in_chunks);
	FUZZ_CHECK(at_once.frames == direct.frames && in_chunks.frames == direct.frames);
	FUZZ_CHECK(at_once.skipped == direct.skipped && in_chunks.skipped == direct.skipped);
	FUZZ_CHECK(at_once.error == direct.error && in_chunks.error == direct.error);
	FUZZ_CHECK(at_once.hash == direct.hash && in_chunks.hash == direct.hash);
	if (direct.error == IL3_PARSE_OK)
		FUZZ_CHECK(at_once.consumed == direct.consumed &&
				in_chunks.consumed == direct.consumed);
	return 0;
}
