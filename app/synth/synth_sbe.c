/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Table-driven SBE encoder and the manifest printer (see synth_sbe.h).
 * Values are printed from the bytes the encoder puts on the wire (truncated
 * to the field's size), so the manifest shows what a decoder must read.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <string.h>

#include "synth_layout_gen.h"
#include "synth_sbe.h"

static void
store_le(uint8_t *p, uint64_t v, unsigned int size)
{
	unsigned int i;

	for (i = 0; i < size; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static bool
prim_signed(uint8_t prim)
{
	return prim == SYNTH_PRIM_INT8 || prim == SYNTH_PRIM_INT16 ||
		prim == SYNTH_PRIM_INT32 || prim == SYNTH_PRIM_INT64;
}

/* The value a decoder loads: truncated to size bytes, sign-extended if signed. */
static uint64_t
wire_value(uint64_t raw, uint8_t prim, unsigned int size)
{
	unsigned int bits = size * 8;
	uint64_t v;

	if (bits == 0)
		return 0; /* a constant: nothing on the wire */
	if (bits >= 64)
		return raw;
	v = raw & ((UINT64_C(1) << bits) - 1);
	if (prim_signed(prim) && (v >> (bits - 1)) != 0)
		v |= ~((UINT64_C(1) << bits) - 1);
	return v;
}

static bool
is_null(const struct synth_type *t, uint64_t raw)
{
	return t->optional && wire_value(raw, t->prim, t->size) == t->null_raw;
}

static void
default_value(const struct synth_type *t, struct synth_value *v)
{
	unsigned int i;

	memset(v, 0, sizeof(*v));
	if (t->kind == SYNTH_KIND_DECIMAL || t->kind == SYNTH_KIND_COMPOSITE) {
		for (i = 0; i < t->member_count && i < SYNTH_MAX_MEMBERS; i++)
			if (t->members[i].type->optional)
				v->raw[i] = t->members[i].type->null_raw;
		return;
	}
	if (t->optional)
		v->raw[0] = t->null_raw;
}

static void
default_block(const struct synth_block *b, struct synth_value *values)
{
	unsigned int i;

	for (i = 0; i < b->field_count; i++)
		default_value(b->fields[i].type, &values[b->fields[i].index]);
}

int
synth_msg_init(struct synth_msg *msg, uint16_t template_id, uint16_t version)
{
	const struct synth_message *layout = synth_layout_find(template_id, version);

	if (layout == NULL)
		return -ENOENT;
	msg->layout = layout;
	memset(msg->count, 0, sizeof(msg->count));
	default_block(&layout->root, msg->root);
	return 0;
}

static const struct synth_block *
find_group(const struct synth_msg *msg, unsigned int group)
{
	unsigned int i;

	for (i = 0; i < msg->layout->root.group_count; i++)
		if (msg->layout->root.groups[i].index == group)
			return &msg->layout->root.groups[i];
	return NULL;
}

struct synth_value *
synth_msg_add_entry(struct synth_msg *msg, unsigned int group)
{
	const struct synth_block *g;
	struct synth_value *values;

	if (group >= SYNTH_MAX_GROUPS || (g = find_group(msg, group)) == NULL) {
		errno = ENOENT;
		return NULL;
	}
	if (msg->count[group] >= SYNTH_MAX_ENTRIES) {
		errno = ENOSPC;
		return NULL;
	}
	values = msg->entry[group][msg->count[group]++];
	default_block(g, values);
	return values;
}

void
synth_set_text(struct synth_value *value, const char *text)
{
	size_t n = strlen(text);

	if (n > SYNTH_MAX_STRING)
		n = SYNTH_MAX_STRING;
	memset(value->text, 0, sizeof(value->text));
	memcpy(value->text, text, n);
}

size_t
synth_msg_size(const struct synth_msg *msg)
{
	const struct synth_block *root = &msg->layout->root;
	size_t size = SYNTH_MESSAGE_HEADER_SIZE + root->block_length;
	unsigned int i;

	for (i = 0; i < root->group_count; i++)
		size += root->groups[i].dim_size + (size_t)root->groups[i].block_length *
			msg->count[root->groups[i].index];
	return size;
}

static void
encode_block(const struct synth_block *b, const struct synth_value *values, uint8_t *p)
{
	const struct synth_field *f;
	const struct synth_type *t;
	const struct synth_value *v;
	unsigned int i, m;
	size_t n;

	memset(p, 0, b->block_length);
	for (i = 0; i < b->field_count; i++) {
		f = &b->fields[i];
		t = f->type;
		v = &values[f->index];
		if (t->constant)
			continue;
		switch (t->kind) {
		case SYNTH_KIND_STRING:
			n = t->length < SYNTH_MAX_STRING ? t->length : SYNTH_MAX_STRING;
			memcpy(p + f->offset, v->text, n);
			break;
		case SYNTH_KIND_DECIMAL:
		case SYNTH_KIND_COMPOSITE:
			for (m = 0; m < t->member_count; m++)
				if (!t->members[m].type->constant)
					store_le(p + f->offset + t->members[m].offset, v->raw[m],
							t->members[m].type->size);
			break;
		default:
			store_le(p + f->offset, v->raw[0], t->size);
			break;
		}
	}
}

int
synth_msg_encode(const struct synth_msg *msg, uint8_t *buf, size_t capacity)
{
	const struct synth_message *layout = msg->layout;
	const struct synth_block *root = &layout->root;
	const struct synth_block *g;
	size_t size = synth_msg_size(msg);
	unsigned int i, e, count;
	uint8_t *p;

	if (size > UINT16_MAX)
		return -ERANGE;
	if (size > capacity)
		return -ENOSPC;
	store_le(buf, size, 2);
	store_le(buf + 2, root->block_length, 2);
	store_le(buf + 4, layout->template_id, 2);
	store_le(buf + 6, layout->schema_id, 2);
	store_le(buf + 8, layout->version, 2);
	p = buf + SYNTH_MESSAGE_HEADER_SIZE;
	encode_block(root, msg->root, p);
	p += root->block_length;
	for (i = 0; i < root->group_count; i++) {
		g = &root->groups[i];
		count = msg->count[g->index];
		if (count >= (1U << (8 * g->dim_num_in_group_size)))
			return -ERANGE;
		memset(p, 0, g->dim_size);
		store_le(p + g->dim_block_length_offset, g->block_length,
				g->dim_block_length_size);
		store_le(p + g->dim_num_in_group_offset, count, g->dim_num_in_group_size);
		p += g->dim_size;
		for (e = 0; e < count; e++) {
			encode_block(g, msg->entry[g->index][e], p);
			p += g->block_length;
		}
	}
	return (int)size;
}

/* ---- JSON, formatted exactly as tickwire-decode prints it ---- */

static void
print_string(FILE *f, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t i;

	fputc('"', f);
	for (i = 0; i < n; i++) {
		uint8_t c = (uint8_t)s[i];

		if (c == '"' || c == '\\') {
			fputc('\\', f);
			fputc(c, f);
		} else if (c < 0x20 || c >= 0x7f) {
			fprintf(f, "\\u00%c%c", hex[c >> 4], hex[c & 15]);
		} else {
			fputc(c, f);
		}
	}
	fputc('"', f);
}

static void
print_scalar(FILE *f, uint8_t prim, uint64_t wire)
{
	char c = (char)wire;

	if (prim == SYNTH_PRIM_CHAR)
		print_string(f, &c, c == '\0' ? 0 : 1);
	else if (prim_signed(prim))
		fprintf(f, "%" PRId64, (int64_t)wire);
	else
		fprintf(f, "%" PRIu64, wire);
}

static void
print_constant(FILE *f, const struct synth_type *t)
{
	if (t->kind == SYNTH_KIND_STRING || t->prim == SYNTH_PRIM_CHAR)
		print_string(f, t->const_text, strlen(t->const_text));
	else
		fprintf(f, "%" PRId64, t->const_value);
}

static void
print_enum(FILE *f, const struct synth_type *t, uint64_t wire)
{
	const char *name = NULL;
	unsigned int i;

	for (i = 0; i < t->value_count; i++) {
		if (wire_value((uint64_t)t->values[i].value, t->prim, t->size) == wire) {
			name = t->values[i].name;
			break;
		}
	}
	fputs("{\"value\":", f);
	print_scalar(f, t->prim, wire);
	fputs(",\"name\":", f);
	if (name != NULL)
		print_string(f, name, strlen(name));
	else
		fputs("null", f);
	fputc('}', f);
}

static void
print_set(FILE *f, const struct synth_type *t, uint64_t wire)
{
	bool first = true;
	unsigned int i;

	fprintf(f, "{\"value\":%" PRIu64 ",\"choices\":[", wire);
	for (i = 0; i < t->value_count; i++) {
		if (t->values[i].value >= 64 || ((wire >> t->values[i].value) & 1) == 0)
			continue;
		if (!first)
			fputc(',', f);
		first = false;
		print_string(f, t->values[i].name, strlen(t->values[i].name));
	}
	fputs("]}", f);
}

/* A composite member is printed from slot member of the field's value. */
static void
print_member(FILE *f, const struct synth_type *t, uint64_t raw)
{
	if (t->constant) {
		print_constant(f, t);
		return;
	}
	if (is_null(t, raw)) {
		fputs("null", f);
		return;
	}
	print_scalar(f, t->prim, wire_value(raw, t->prim, t->size));
}

static void
print_value(FILE *f, const struct synth_type *t, const struct synth_value *v)
{
	const struct synth_type *mant, *expo;
	uint64_t wire;
	unsigned int i;
	size_t n;

	if (t->constant) {
		print_constant(f, t);
		return;
	}
	switch (t->kind) {
	case SYNTH_KIND_STRING:
		n = 0;
		while (n < t->length && n < SYNTH_MAX_STRING && v->text[n] != '\0')
			n++;
		while (n > 0 && v->text[n - 1] == ' ')
			n--;
		print_string(f, v->text, n);
		return;
	case SYNTH_KIND_DECIMAL:
		mant = t->members[0].type;
		expo = t->members[1].type;
		if (is_null(mant, v->raw[0])) {
			fputs("null", f);
			return;
		}
		fputs("{\"mantissa\":", f);
		print_member(f, mant, v->raw[0]);
		fputs(",\"exponent\":", f);
		print_member(f, expo, v->raw[1]);
		fputc('}', f);
		return;
	case SYNTH_KIND_COMPOSITE:
		fputc('{', f);
		for (i = 0; i < t->member_count; i++) {
			fprintf(f, "%s\"%s\":", i > 0 ? "," : "", t->members[i].name);
			print_member(f, t->members[i].type, v->raw[i]);
		}
		fputc('}', f);
		return;
	default:
		break;
	}
	wire = wire_value(v->raw[0], t->prim, t->size);
	if (is_null(t, v->raw[0])) {
		fputs("null", f);
		return;
	}
	if (t->kind == SYNTH_KIND_ENUM)
		print_enum(f, t, wire);
	else if (t->kind == SYNTH_KIND_SET)
		print_set(f, t, wire);
	else
		print_scalar(f, t->prim, wire);
}

static void
print_block_fields(FILE *f, const struct synth_block *b, const struct synth_value *values,
		bool *first)
{
	unsigned int i;

	for (i = 0; i < b->field_count; i++) {
		fprintf(f, "%s\"%s\":", *first ? "" : ",", b->fields[i].name);
		*first = false;
		print_value(f, b->fields[i].type, &values[b->fields[i].index]);
	}
}

void
synth_msg_print_fields(FILE *f, const struct synth_msg *msg)
{
	const struct synth_block *root = &msg->layout->root;
	const struct synth_block *g;
	bool first = true, first_entry_field;
	unsigned int i, e;

	fputc('{', f);
	print_block_fields(f, root, msg->root, &first);
	for (i = 0; i < root->group_count; i++) {
		g = &root->groups[i];
		fprintf(f, "%s\"%s\":[", first ? "" : ",", g->name);
		first = false;
		for (e = 0; e < msg->count[g->index]; e++) {
			fputs(e > 0 ? ",{" : "{", f);
			first_entry_field = true;
			print_block_fields(f, g, msg->entry[g->index][e], &first_entry_field);
			fputc('}', f);
		}
		fputc(']', f);
	}
	fputc('}', f);
}
