/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * il3_dump: decode the iLink 3 TCP stream of a capture with lib/ilink3 and
 * print one JSON object per message (every leaf: name, offset in the
 * captured frame, size, raw value), for compare_reference.py.  Segments of
 * one direction are concatenated in capture order and reassembled, so a
 * message split across segments is decoded once complete; bytes left at
 * the end are reported as {"incomplete": n}.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ilink3.h"
#include "tw_pcap.h"

#define MAX_SEGMENTS 4096

struct segment {
	uint64_t stream_offset;   /* stream position of the payload's first byte */
	uint64_t frame_number;
	uint32_t frame_offset;    /* payload offset inside the captured frame */
	uint32_t length;
};

static struct segment segments[MAX_SEGMENTS];
static unsigned int segment_count;
static struct il3_stream stream;

static void
locate(uint64_t pos, uint64_t *frame, long *offset)
{
	unsigned int i;

	for (i = 0; i < segment_count; i++) {
		if (pos >= segments[i].stream_offset &&
				pos < segments[i].stream_offset + segments[i].length) {
			*frame = segments[i].frame_number;
			*offset = (long)(segments[i].frame_offset + (pos - segments[i].stream_offset));
			return;
		}
	}
	*frame = 0;
	*offset = -1;
}

static void
print_leaves(const uint8_t *block, uint64_t block_pos, const struct il3_field_info *fields,
		unsigned int count, uint16_t version, uint16_t block_length)
{
	unsigned int i;

	for (i = 0; i < count; i++) {
		const struct il3_field_info *f = &fields[i];
		uint64_t frame;
		long off;

		if (!il3_field_present(f, version, block_length))
			continue;
		printf("%s{\"name\":\"%s\",\"type\":\"%s\"", i ? "," : "", f->name, f->type_name);
		if (f->presence == IL3_PRESENCE_CONSTANT) {
			printf(",\"constant\":\"%s\"}", f->constant);
			continue;
		}
		locate(block_pos + f->offset, &frame, &off);
		printf(",\"offset\":%ld,\"size\":%u", off, f->size);
		if (f->kind == IL3_KIND_STRING) {
			size_t n = il3__strnlen((const char *)block + f->offset, f->size), k;

			printf(",\"value\":\"");
			for (k = 0; k < n; k++) {
				unsigned char c = block[f->offset + k];

				if (c == '"' || c == '\\')
					printf("\\%c", c);
				else if (c >= 32 && c < 127)
					putchar(c);
				else
					printf("\\u%04x", c);
			}
			printf("\"");
		} else {
			uint64_t raw = il3_load(block, f);
			bool is_signed = f->primitive == IL3_PRIM_INT8 ||
				f->primitive == IL3_PRIM_INT16 || f->primitive == IL3_PRIM_INT32 ||
				f->primitive == IL3_PRIM_INT64;

			if (is_signed)
				printf(",\"value\":%" PRId64, (int64_t)raw);
			else
				printf(",\"value\":%" PRIu64, raw);
			if (f->primitive == IL3_PRIM_CHAR)
				printf(",\"char\":\"%c\"", raw >= 32 && raw < 127 &&
						raw != '"' && raw != '\\' ? (char)raw : '?');
			if (f->presence == IL3_PRESENCE_OPTIONAL)
				printf(",\"null\":%s", raw == f->null_value ? "true" : "false");
			if (f->decimal)
				printf(",\"exponent\":%d", f->decimal_exponent);
		}
		printf("}");
	}
}

static uint64_t consumed; /* stream position of stream.buf[stream.start] */

static void
drain(void)
{
	struct il3_msg msg;
	int rc;

	for (;;) {
		size_t before = stream.start;
		uint64_t base = consumed - 0;
		uint64_t msg_pos, frame;
		long off;
		unsigned int g;

		(void)before;
		rc = il3_stream_next(&stream, &msg);
		if (rc <= 0)
			break;
		msg_pos = base + (uint64_t)(msg.frame - (stream.buf + before));
		consumed = base + (uint64_t)(stream.start - before);
		locate(msg_pos, &frame, &off);
		printf("{\"frame\":%" PRIu64 ",\"offset\":%ld,\"message_length\":%u,"
			"\"encoding_type\":%u,\"block_length\":%u,\"template_id\":%u,"
			"\"schema_id\":%u,\"version\":%u,\"name\":\"%s\",\"fields\":[",
			frame, off, msg.frame_length, il3__load_uint16(msg.frame + 2),
			msg.block_length, msg.template_id, msg.schema_id, msg.version,
			msg.info->name);
		print_leaves(msg.root, msg_pos + 12, msg.info->fields, msg.info->field_count,
			msg.version, msg.block_length);
		printf("],\"groups\":[");
		for (g = 0; g < msg.info->group_count; g++) {
			struct il3_group grp;
			bool first = true;

			if (il3_msg_group(&msg, g, &grp) < 0)
				continue;
			locate(msg_pos + 12 + msg.group_offset[g], &frame, &off);
			printf("%s{\"name\":\"%s\",\"offset\":%ld,\"block_length\":%u,"
				"\"num_in_group\":%u,\"entries\":[", g ? "," : "",
				grp.info->name, off, grp.block_length, grp.count);
			while (il3_group_next(&grp)) {
				printf("%s[", first ? "" : ",");
				first = false;
				print_leaves(grp.entry, msg_pos + (uint64_t)(grp.entry - msg.frame),
					grp.info->fields, grp.info->field_count, msg.version,
					grp.block_length);
				printf("]");
			}
			printf("]}");
		}
		printf("]}\n");
	}
	if (rc < 0)
		printf("{\"error\":\"%s\"}\n", il3_parse_error_name(stream.last_error));
}

int
main(int argc, char **argv)
{
	struct tw_pcap_frame frame;
	struct tw_pcap *pcap;
	uint64_t stream_pos = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: %s FILE.pcap\n", argv[0]);
		return 2;
	}
	pcap = tw_pcap_open(argv[1]);
	if (pcap == NULL) {
		perror(argv[1]);
		return 1;
	}
	il3_stream_reset(&stream);
	while (tw_pcap_next(pcap, &frame) == 1) {
		struct tw_pcap_l4 l4;
		size_t done = 0;

		if (tw_pcap_parse_frame(frame.data, frame.caplen, frame.linktype, &l4, NULL) < 0 ||
				l4.protocol != 6 || l4.payload_length == 0)
			continue;
		if (segment_count == MAX_SEGMENTS) {
			fprintf(stderr, "too many segments\n");
			return 1;
		}
		segments[segment_count++] = (struct segment){
			.stream_offset = stream_pos, .frame_number = frame.number,
			.frame_offset = (uint32_t)(l4.payload - frame.data),
			.length = l4.payload_length };
		stream_pos += l4.payload_length;
		while (done < l4.payload_length) {
			uint64_t start_before;
			size_t kept;

			start_before = consumed;
			kept = il3_stream_pending(&stream);
			/* compaction moves bytes; the stream position of start is 'consumed' */
			done += il3_stream_push(&stream, l4.payload + done, l4.payload_length - done);
			(void)start_before;
			(void)kept;
			drain();
		}
	}
	printf("{\"incomplete\":%zu}\n", il3_stream_pending(&stream));
	tw_pcap_close(pcap);
	return 0;
}
