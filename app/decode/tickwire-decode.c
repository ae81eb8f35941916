/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tickwire-decode: print every MDP 3.0 message of pcap / pcapng captures,
 * one line per message, as JSON (default) or readable text.
 *
 * Messages are printed from the generated schema metadata (names, types,
 * enum values, groups) by one generic printer: there is no per-message code.
 * Frames that are not MDP3 are reported as {"frame":N,"not_mdp3":"reason"}.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mdp3.h"
#include "tw_pcap.h"

#define EXIT_USAGE 2

enum out_mode {
	OUT_JSON,
	OUT_TEXT,
};

struct options {
	enum out_mode mode;
	bool tcp;
	bool stats;
	bool quiet;
	bool show_file;
};

struct file_stats {
	uint64_t frames;
	uint64_t not_mdp3;
	uint64_t templates[65536];
};

struct decode {
	const struct options *opt;
	const char *path;
	const struct tw_pcap_frame *frame;
	const struct tw_pcap_l4 *l4;
	struct mdp3_walker walker;
	struct file_stats *stats;
	FILE *out;
};

/* ---- output writer: JSON or text, with separators per nesting level ---- */

struct writer {
	FILE *f;
	enum out_mode mode;
	int depth;
	bool first[16];
};

static void
w_sep(struct writer *w)
{
	if (!w->first[w->depth])
		fputs(w->mode == OUT_JSON ? "," : " ", w->f);
	w->first[w->depth] = false;
}

static void
w_open(struct writer *w, char c)
{
	fputc(c, w->f);
	if (w->depth < 15)
		w->depth++;
	w->first[w->depth] = true;
}

static void
w_close(struct writer *w, char c)
{
	fputc(c, w->f);
	if (w->depth > 0)
		w->depth--;
}

static void
w_key(struct writer *w, const char *key)
{
	w_sep(w);
	if (w->mode == OUT_JSON)
		fprintf(w->f, "\"%s\":", key);
	else
		fprintf(w->f, "%s=", key);
}

static void
w_string_bytes(struct writer *w, const uint8_t *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	bool quote = w->mode == OUT_JSON || n == 0;
	size_t i;

	for (i = 0; i < n && !quote; i++)
		if (s[i] <= ' ' || s[i] == '"' || s[i] >= 0x7f || s[i] == '{' || s[i] == '}' ||
				s[i] == '[' || s[i] == ']')
			quote = true;
	if (quote)
		fputc('"', w->f);
	for (i = 0; i < n; i++) {
		uint8_t c = s[i];

		if (c == '"' || c == '\\') {
			fputc('\\', w->f);
			fputc(c, w->f);
		} else if (c < 0x20 || c >= 0x7f) {
			fprintf(w->f, "\\u00%c%c", hex[c >> 4], hex[c & 15]);
		} else {
			fputc(c, w->f);
		}
	}
	if (quote)
		fputc('"', w->f);
}

static void
w_string(struct writer *w, const char *s)
{
	w_string_bytes(w, (const uint8_t *)s, strlen(s));
}

/* Exact decimal text of mantissa * 10^exponent, integers only. */
static void
format_decimal(char *buf, size_t size, int64_t mantissa, int exponent)
{
	uint64_t mag = mantissa < 0 ? (uint64_t)0 - (uint64_t)mantissa : (uint64_t)mantissa;
	char digits[32];
	int n, point, i, last;
	size_t o = 0;

	n = snprintf(digits, sizeof(digits), "%" PRIu64, mag);
	if (mantissa < 0 && o + 1 < size)
		buf[o++] = '-';
	if (exponent >= 0) {
		o += (size_t)snprintf(buf + o, size - o, "%s", digits);
		for (i = 0; i < exponent && mag != 0 && o + 1 < size; i++)
			buf[o++] = '0';
		buf[o] = '\0';
		return;
	}
	point = n + exponent; /* digits before the decimal point */
	last = n - 1;
	while (last >= 0 && last >= point && digits[last] == '0')
		last--;
	if (point <= 0) {
		o += (size_t)snprintf(buf + o, size - o, "0");
		if (last >= 0) {
			o += (size_t)snprintf(buf + o, size - o, ".");
			for (i = point; i < 0 && o + 1 < size; i++)
				buf[o++] = '0';
			for (i = 0; i <= last && o + 1 < size; i++)
				buf[o++] = digits[i];
		}
		buf[o] = '\0';
		return;
	}
	for (i = 0; i < point && o + 1 < size; i++)
		buf[o++] = digits[i];
	if (last >= point) {
		buf[o++] = '.';
		for (i = point; i <= last && o + 1 < size; i++)
			buf[o++] = digits[i];
	}
	buf[o] = '\0';
}

/* ---- generic, metadata-driven value printer ---- */

static void
print_integer(struct writer *w, const struct mdp3_type_info *t, uint64_t raw)
{
	char c;

	if (t->primitive == MDP3_PRIM_CHAR) {
		c = (char)raw;
		w_string_bytes(w, (const uint8_t *)&c, c == '\0' ? 0 : 1);
	} else if (mdp3_primitive_signed(t->primitive)) {
		fprintf(w->f, "%" PRId64, (int64_t)raw);
	} else {
		fprintf(w->f, "%" PRIu64, raw);
	}
}

static void
print_value(struct writer *w, const struct mdp3_type_info *t, const uint8_t *p);

static void
print_enum(struct writer *w, const struct mdp3_type_info *t, uint64_t raw)
{
	const char *name = mdp3_enum_name(t, raw);

	if (w->mode == OUT_JSON) {
		w_open(w, '{');
		w_key(w, "value");
		print_integer(w, t, raw);
		w_key(w, "name");
		if (name != NULL)
			w_string(w, name);
		else
			fputs("null", w->f);
		w_close(w, '}');
		return;
	}
	fprintf(w->f, "%s(", name != NULL ? name : "?");
	print_integer(w, t, raw);
	fputc(')', w->f);
}

static void
print_set(struct writer *w, const struct mdp3_type_info *t, uint64_t raw)
{
	unsigned int i;
	bool any = false;

	if (w->mode == OUT_JSON) {
		w_open(w, '{');
		w_key(w, "value");
		fprintf(w->f, "%" PRIu64, raw);
		w_key(w, "choices");
		w_open(w, '[');
		for (i = 0; i < t->value_count; i++) {
			if ((raw >> t->values[i].value) & 1) {
				w_sep(w);
				w_string(w, t->values[i].name);
			}
		}
		w_close(w, ']');
		w_close(w, '}');
		return;
	}
	for (i = 0; i < t->value_count; i++) {
		if ((raw >> t->values[i].value) & 1) {
			fprintf(w->f, "%s%s", any ? "|" : "", t->values[i].name);
			any = true;
		}
	}
	fprintf(w->f, "(0x%" PRIx64 ")", raw);
}

static uint64_t
member_raw(const struct mdp3_member_info *m, const uint8_t *p)
{
	if (m->type->presence == MDP3_PRESENCE_CONSTANT)
		return (uint64_t)m->type->constant_value;
	return mdp3_load(p + m->offset, m->type->primitive);
}

static void
print_composite(struct writer *w, const struct mdp3_type_info *t, const uint8_t *p)
{
	const struct mdp3_member_info *mant, *expo;
	unsigned int i;
	uint64_t m;
	char buf[64];

	if (t->is_decimal) {
		mant = &t->members[0];
		expo = &t->members[1];
		m = member_raw(mant, p);
		if (mdp3_type_is_null(mant->type, m)) {
			fputs("null", w->f);
			return;
		}
		if (w->mode == OUT_JSON) {
			w_open(w, '{');
			w_key(w, "mantissa");
			fprintf(w->f, "%" PRId64, (int64_t)m);
			w_key(w, "exponent");
			fprintf(w->f, "%" PRId64, (int64_t)member_raw(expo, p));
			w_close(w, '}');
		} else {
			format_decimal(buf, sizeof(buf), (int64_t)m,
					(int)(int64_t)member_raw(expo, p));
			fputs(buf, w->f);
		}
		return;
	}
	w_open(w, '{');
	for (i = 0; i < t->member_count; i++) {
		w_key(w, t->members[i].name);
		print_value(w, t->members[i].type, p + t->members[i].offset);
	}
	w_close(w, '}');
}

static void
print_value(struct writer *w, const struct mdp3_type_info *t, const uint8_t *p)
{
	const uint8_t *s;
	size_t n;
	uint64_t raw;

	if (t->presence == MDP3_PRESENCE_CONSTANT) {
		if (t->kind == MDP3_KIND_STRING || t->primitive == MDP3_PRIM_CHAR)
			w_string(w, t->constant);
		else
			fprintf(w->f, "%" PRId64, t->constant_value);
		return;
	}
	switch (t->kind) {
	case MDP3_KIND_STRING:
		s = p;
		n = 0;
		while (n < t->length && s[n] != '\0')
			n++;
		while (n > 0 && s[n - 1] == ' ')
			n--;
		w_string_bytes(w, s, n);
		return;
	case MDP3_KIND_COMPOSITE:
		print_composite(w, t, p);
		return;
	case MDP3_KIND_INTEGER:
	case MDP3_KIND_ENUM:
	case MDP3_KIND_SET:
		break;
	}
	raw = mdp3_load(p, t->primitive);
	if (mdp3_type_is_null(t, raw)) {
		fputs("null", w->f);
		return;
	}
	if (t->kind == MDP3_KIND_ENUM)
		print_enum(w, t, raw);
	else if (t->kind == MDP3_KIND_SET)
		print_set(w, t, raw);
	else
		print_integer(w, t, raw);
}

static void print_group(struct writer *w, struct mdp3_group *g);

static void
print_fields(struct writer *w, const struct mdp3_block_info *b, const uint8_t *base,
		uint16_t block_length, uint16_t version)
{
	const struct mdp3_field_info *f;
	unsigned int i;

	for (i = 0; i < b->field_count; i++) {
		f = &b->fields[i];
		if (!mdp3_field_present(f, block_length, version))
			continue;
		w_key(w, f->name);
		print_value(w, f->type, base + f->offset);
	}
}

static void
print_group(struct writer *w, struct mdp3_group *g)
{
	struct mdp3_group nested;
	unsigned int j;

	w_open(w, '[');
	while (mdp3_group_next(g)) {
		w_sep(w);
		w_open(w, '{');
		print_fields(w, g->info, g->entry, g->block_length, g->version);
		for (j = 0; j < g->info->group_count; j++) {
			if (mdp3_group_nested(g, j, &nested) < 0)
				continue;
			w_key(w, g->info->groups[j].name);
			print_group(w, &nested);
		}
		w_close(w, '}');
	}
	w_close(w, ']');
}

/* ---- frame context ---- */

static void
format_ip(char *buf, size_t size, uint32_t ip)
{
	snprintf(buf, size, "%u.%u.%u.%u", ip >> 24, (ip >> 16) & 255, (ip >> 8) & 255, ip & 255);
}

static void
print_frame_head(struct decode *d, struct writer *w)
{
	char src[16], dst[16];

	if (d->opt->show_file) {
		w_key(w, "file");
		w_string(w, d->path);
	}
	if (w->mode == OUT_JSON) {
		w_key(w, "frame");
		fprintf(w->f, "%" PRIu64, d->frame->number);
		w_key(w, "time_ns");
		fprintf(w->f, "%" PRIu64, d->frame->time_ns);
	} else {
		w_key(w, "frame");
		fprintf(w->f, "%" PRIu64, d->frame->number);
		w_key(w, "t");
		fprintf(w->f, "%" PRIu64 ".%09" PRIu64, d->frame->time_ns / 1000000000u,
				d->frame->time_ns % 1000000000u);
	}
	if (d->l4 == NULL)
		return;
	format_ip(src, sizeof(src), d->l4->src_ip);
	format_ip(dst, sizeof(dst), d->l4->dst_ip);
	if (w->mode == OUT_JSON) {
		w_key(w, "src_ip");
		w_string(w, src);
		w_key(w, "src_port");
		fprintf(w->f, "%u", d->l4->src_port);
		w_key(w, "dst_ip");
		w_string(w, dst);
		w_key(w, "dst_port");
		fprintf(w->f, "%u", d->l4->dst_port);
		w_key(w, "transport");
		w_string(w, d->l4->protocol == 6 ? "tcp" : "udp");
	} else {
		w_sep(w);
		fprintf(w->f, "%s:%u>%s:%u/%s", src, d->l4->src_port, dst, d->l4->dst_port,
				d->l4->protocol == 6 ? "tcp" : "udp");
	}
}

static void
report_not_mdp3(struct decode *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
report_not_mdp3(struct decode *d, const char *fmt, ...)
{
	struct writer w = { .f = d->out, .mode = d->opt->mode, .depth = 0 };
	char reason[256];
	va_list ap;

	d->stats->not_mdp3++;
	if (d->opt->quiet)
		return;
	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	w.first[0] = true;
	if (w.mode == OUT_JSON)
		w_open(&w, '{');
	print_frame_head(d, &w);
	w_key(&w, "not_mdp3");
	w_string(&w, reason);
	if (w.mode == OUT_JSON)
		w_close(&w, '}');
	fputc('\n', d->out);
}

static int
on_message(void *ctx, const struct mdp3_packet *pkt, const struct mdp3_msg *msg)
{
	struct decode *d = ctx;
	struct writer w = { .f = d->out, .mode = d->opt->mode, .depth = 0 };
	struct mdp3_group g;
	unsigned int i;

	d->stats->templates[msg->template_id]++;
	if (d->opt->quiet)
		return 0;
	w.first[0] = true;
	if (w.mode == OUT_JSON)
		w_open(&w, '{');
	print_frame_head(d, &w);
	if (w.mode == OUT_JSON) {
		w_key(&w, "seq");
		fprintf(w.f, "%" PRIu32, pkt->msg_seq_num);
		w_key(&w, "sending_time");
		fprintf(w.f, "%" PRIu64, pkt->sending_time);
		w_key(&w, "msg");
		fprintf(w.f, "%u", msg->index);
		w_key(&w, "size");
		fprintf(w.f, "%u", msg->size);
		w_key(&w, "block_length");
		fprintf(w.f, "%u", msg->block_length);
		w_key(&w, "template_id");
		fprintf(w.f, "%u", msg->template_id);
		w_key(&w, "schema_id");
		fprintf(w.f, "%u", msg->schema_id);
		w_key(&w, "version");
		fprintf(w.f, "%u", msg->version);
		if (msg->info->schema_version != msg->version) {
			w_key(&w, "decoded_with_version");
			fprintf(w.f, "%u", msg->info->schema_version);
		}
		w_key(&w, "name");
		w_string(&w, msg->info->name);
		w_key(&w, "fields");
		w_open(&w, '{');
	} else {
		w_key(&w, "seq");
		fprintf(w.f, "%" PRIu32, pkt->msg_seq_num);
		w_key(&w, "sent");
		fprintf(w.f, "%" PRIu64, pkt->sending_time);
		w_sep(&w);
		fprintf(w.f, "#%u %s s%uv%u", msg->index, msg->info->name, msg->schema_id,
				msg->version);
		if (msg->info->schema_version != msg->version)
			fprintf(w.f, "(as v%u)", msg->info->schema_version);
	}
	print_fields(&w, &msg->info->root, msg->root, msg->block_length, msg->version);
	for (i = 0; i < msg->info->root.group_count; i++) {
		if (mdp3_msg_group(msg, i, &g) < 0)
			continue;
		w_key(&w, msg->info->root.groups[i].name);
		print_group(&w, &g);
	}
	if (w.mode == OUT_JSON) {
		w_close(&w, '}');
		w_close(&w, '}');
	}
	fputc('\n', d->out);
	return 0;
}

static void
on_skip(void *ctx, const struct mdp3_packet *pkt, const struct mdp3_skip *skip)
{
	struct decode *d = ctx;
	struct writer w = { .f = d->out, .mode = d->opt->mode, .depth = 0 };

	if (d->opt->quiet)
		return;
	w.first[0] = true;
	if (w.mode == OUT_JSON)
		w_open(&w, '{');
	print_frame_head(d, &w);
	w_key(&w, "seq");
	fprintf(w.f, "%" PRIu32, pkt->msg_seq_num);
	w_key(&w, "msg");
	fprintf(w.f, "%u", skip->index);
	w_key(&w, "skipped");
	w_string(&w, mdp3_reason_name(skip->reason));
	w_key(&w, "template_id");
	fprintf(w.f, "%u", skip->template_id);
	w_key(&w, "schema_id");
	fprintf(w.f, "%u", skip->schema_id);
	w_key(&w, "version");
	fprintf(w.f, "%u", skip->version);
	w_key(&w, "size");
	fprintf(w.f, "%u", skip->size);
	if (w.mode == OUT_JSON)
		w_close(&w, '}');
	fputc('\n', d->out);
}

static void
report_walk_error(struct decode *d, const char *what)
{
	const struct mdp3_error *e = &d->walker.last_error;

	report_not_mdp3(d, "%s: %s at byte %" PRIu32 " of the payload (message %u)", what,
			mdp3_reason_name(e->reason), e->offset, e->msg_index);
}

static void
decode_frame(struct decode *d, const struct tw_pcap_frame *frame,
		struct tw_pcap_l4_counters *l4c)
{
	struct tw_pcap_l4 l4;
	int rc;

	d->frame = frame;
	d->l4 = NULL;
	rc = tw_pcap_parse_frame(frame->data, frame->caplen, frame->linktype, &l4, l4c);
	if (rc < 0) {
		if (l4.reason == TW_PCAP_L4_NOT_UDP_OR_TCP)
			report_not_mdp3(d, "IPv4 protocol %u is neither UDP nor TCP", l4.protocol);
		else if (l4.reason == TW_PCAP_L4_UNSUPPORTED_LINKTYPE)
			report_not_mdp3(d, "unsupported link type %u", frame->linktype);
		else
			report_not_mdp3(d, "%s", tw_pcap_l4_reason_name(l4.reason));
		return;
	}
	d->l4 = &l4;
	if (l4.protocol == 6) {
		if (!d->opt->tcp) {
			report_not_mdp3(d, "TCP segment (use --tcp for MDP conflated TCP)");
			return;
		}
		if (l4.payload_length == 0) {
			report_not_mdp3(d, "TCP segment without payload");
			return;
		}
		rc = mdp3_walk_tcp(&d->walker, l4.payload, l4.payload_length);
		if (rc == -EBADMSG)
			report_walk_error(d, "conflated TCP");
		d->l4 = NULL;
		return;
	}
	rc = mdp3_walk_packet(&d->walker, l4.payload, l4.payload_length);
	if (rc == -EBADMSG)
		report_walk_error(d, "UDP");
	d->l4 = NULL;
}

static void
print_stats(struct decode *d, const struct tw_pcap_l4_counters *l4c)
{
	const struct mdp3_counters *c = &d->walker.counters;
	FILE *f = stderr;
	unsigned int i;
	bool first = true;

	fprintf(f, "{\"stats\":{\"file\":");
	{
		struct writer w = { .f = f, .mode = OUT_JSON };

		w.first[0] = true;
		w_string(&w, d->path);
	}
	fprintf(f, ",\"frames\":%" PRIu64 ",\"not_mdp3\":%" PRIu64 ",\"packets\":%" PRIu64
			",\"packets_dropped\":%" PRIu64 ",\"messages\":%" PRIu64
			",\"messages_skipped\":%" PRIu64 ",\"version_fallbacks\":%" PRIu64
			",\"trailing_bytes\":%" PRIu64 ",\"reasons\":{",
			d->stats->frames, d->stats->not_mdp3, c->packets, c->packets_dropped,
			c->messages, c->messages_skipped, c->version_fallbacks, c->trailing_bytes);
	for (i = 1; i < MDP3_REASON_COUNT; i++)
		fprintf(f, "%s\"%s\":%" PRIu64, i > 1 ? "," : "",
				mdp3_reason_name((enum mdp3_reason)i), c->reason[i]);
	fprintf(f, "},\"l4\":{");
	for (i = 0; i < TW_PCAP_L4_REASON_COUNT; i++)
		fprintf(f, "%s\"%s\":%" PRIu64, i > 0 ? "," : "",
				tw_pcap_l4_reason_name((enum tw_pcap_l4_reason)i), l4c->reason[i]);
	fprintf(f, "},\"templates\":{");
	for (i = 0; i < 65536; i++) {
		if (d->stats->templates[i] == 0)
			continue;
		fprintf(f, "%s\"%u\":%" PRIu64, first ? "" : ",", i, d->stats->templates[i]);
		first = false;
	}
	fprintf(f, "}}}\n");
}

static int
decode_file(const struct options *opt, const char *path, struct file_stats *stats)
{
	struct tw_pcap_l4_counters l4c;
	struct mdp3_handler handler;
	struct tw_pcap_frame frame;
	struct tw_pcap *pcap;
	struct decode d;
	int rc;

	pcap = tw_pcap_open(path);
	if (pcap == NULL) {
		if (errno == EPROTO)
			fprintf(stderr, "tickwire-decode: %s: not a pcap or pcapng capture "
					"(unknown magic or header cut short); hint: check the "
					"file with 'capinfos %s'\n", path, path);
		else
			fprintf(stderr, "tickwire-decode: %s: cannot open: %s; hint: check "
					"the path and permissions\n", path, strerror(errno));
		return 1;
	}
	memset(stats, 0, sizeof(*stats));
	memset(&l4c, 0, sizeof(l4c));
	memset(&d, 0, sizeof(d));
	d.opt = opt;
	d.path = path;
	d.stats = stats;
	d.out = stdout;
	handler.on_message = on_message;
	handler.on_skip = on_skip;
	handler.ctx = &d;
	mdp3_walker_init(&d.walker, NULL, &handler);
	while ((rc = tw_pcap_next(pcap, &frame)) == 1) {
		stats->frames++;
		decode_frame(&d, &frame, &l4c);
	}
	if (rc < 0)
		fprintf(stderr, "tickwire-decode: %s: frame %" PRIu64 ": %s; hint: the capture "
				"is truncated or corrupt (frames before it were decoded; "
				"'editcap' can rewrite the readable part)\n", path,
				stats->frames + 1, tw_pcap_error(pcap));
	if (opt->stats)
		print_stats(&d, &l4c);
	tw_pcap_close(pcap);
	if (fflush(stdout) != 0) {
		fprintf(stderr, "tickwire-decode: %s: writing the output failed: %s\n", path,
				strerror(errno));
		return 1;
	}
	return rc < 0 ? 1 : 0;
}

static void
usage(FILE *f)
{
	fprintf(f,
		"usage: tickwire-decode [--json|--text] [--tcp] [--stats] [--quiet] FILE...\n"
		"Print every CME MDP 3.0 message of pcap/pcapng captures, one per line.\n"
		"  --json    one JSON object per message (default)\n"
		"  --text    one readable line per message\n"
		"  --tcp     also decode MDP conflated-TCP framing (0xCAFE technical header)\n"
		"  --stats   print counters and the template histogram to stderr per file\n"
		"  --quiet   print no messages (use with --stats)\n"
		"Exit: 0 all files read; 1 a file could not be opened or is corrupt; 2 usage.\n");
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "text", no_argument, NULL, 't' },
		{ "tcp", no_argument, NULL, 'T' },
		{ "stats", no_argument, NULL, 's' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct options opt = { .mode = OUT_JSON };
	struct file_stats *stats;
	int c, i, status = 0;

	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			opt.mode = OUT_JSON;
			break;
		case 't':
			opt.mode = OUT_TEXT;
			break;
		case 'T':
			opt.tcp = true;
			break;
		case 's':
			opt.stats = true;
			break;
		case 'q':
			opt.quiet = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "tickwire-decode: no capture file given\n");
		usage(stderr);
		return EXIT_USAGE;
	}
	opt.show_file = argc - optind > 1;
	stats = malloc(sizeof(*stats));
	if (stats == NULL) {
		fprintf(stderr, "tickwire-decode: out of memory\n");
		return 1;
	}
	for (i = optind; i < argc; i++)
		if (decode_file(&opt, argv[i], stats) != 0)
			status = 1;
	free(stats);
	return status;
}
