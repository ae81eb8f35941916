#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Generate the SBE *encoder* layout tables of tickwire-synth from CME's schema
XML (python3 standard library only).

tickwire-synth encodes a handful of MDP 3.0 templates; this script reads their
layout from the schema files (offsets, sizes, null values, constants, enum
values, set choices, composites, group dimensions) and writes

  synth_layout_gen.h   field / group indexes, enum values and set bits
  synth_layout_gen.c   per (template, schema version) layout tables

It is deliberately independent of lib/mdp3/gen/mdp3_gen.py: the synthetic
captures are used to test the decoder, so the encoder must not share the
decoder's view of the schema.

Field indexes are the union of a template's fields over every schema given
(CME only appends fields): an index names the same field in every version,
and a version's table lists the fields its XML has, each with its index.

Usage (from the source root; the output is committed):
  /usr/bin/python3 app/synth/synth_layout_gen.py --out-dir app/synth/generated \\
      ../shared/data/cme/schemas/mdp3/Cme.Futures.Mdp3.Sbe.v1.9.xml \\
      ../shared/data/cme/schemas/mdp3/Cme.Futures.Mdp3.Sbe.v1.13.xml
"""
import argparse
import os
import re
import sys
import xml.etree.ElementTree as ET

# Templates tickwire-synth emits, with the short C name of each.
TEMPLATES = {
    4: 'CHANNEL_RESET4',
    12: 'HEARTBEAT12',
    30: 'SECURITY_STATUS30',
    46: 'BOOK46',
    47: 'ORDER_BOOK47',
    48: 'TRADE48',
    52: 'SNAPSHOT52',
    53: 'SNAPSHOT53',
    54: 'FUTURE54',
}

# Enums / sets whose values the generator program names in C.
NAMED_ENUMS = ['MDUpdateAction', 'MDEntryTypeBook', 'MDEntryType', 'AggressorSide',
               'SecurityTradingStatus', 'HaltReason', 'SecurityTradingEvent',
               'SecurityUpdateAction', 'EventType', 'OrderUpdateAction']
NAMED_SETS = ['MatchEventIndicator', 'SettlPriceType']

# Limits of the value arrays in synth_sbe.h (checked here, asserted in C).
MAX_ROOT_FIELDS = 64
MAX_GROUPS = 4
MAX_ENTRY_FIELDS = 16
MAX_MEMBERS = 4
MAX_STRING = 31

# name: (size, signed, C enum, SBE default null)
PRIMS = {
    'char': (1, False, 'SYNTH_PRIM_CHAR', 0),
    'int8': (1, True, 'SYNTH_PRIM_INT8', -(1 << 7)),
    'uint8': (1, False, 'SYNTH_PRIM_UINT8', (1 << 8) - 1),
    'int16': (2, True, 'SYNTH_PRIM_INT16', -(1 << 15)),
    'uint16': (2, False, 'SYNTH_PRIM_UINT16', (1 << 16) - 1),
    'int32': (4, True, 'SYNTH_PRIM_INT32', -(1 << 31)),
    'uint32': (4, False, 'SYNTH_PRIM_UINT32', (1 << 32) - 1),
    'int64': (8, True, 'SYNTH_PRIM_INT64', -(1 << 63)),
    'uint64': (8, False, 'SYNTH_PRIM_UINT64', (1 << 64) - 1),
}


class SchemaError(Exception):
    pass


def local(tag):
    return tag.rsplit('}', 1)[-1]


def snake(name):
    s = re.sub(r'([A-Z]+)([A-Z][a-z])', r'\1_\2', name)
    s = re.sub(r'([a-z0-9])([A-Z])', r'\1_\2', s)
    return re.sub(r'[^A-Za-z0-9]+', '_', s).upper().strip('_')


def raw_bits(value, prim):
    """Two's complement bits of value, sign-extended to 64 bits."""
    return value & ((1 << 64) - 1)


class Type:
    """kind: int, char, string, enum, set, decimal, composite."""

    def __init__(self, name):
        self.name = name
        self.kind = None
        self.prim = None
        self.optional = False
        self.constant = False
        self.length = 1
        self.null = 0
        self.const_text = None
        self.const_value = 0
        self.values = []     # (value, name)
        self.members = []    # (name, offset, Type)

    @property
    def size(self):
        if self.constant:
            return 0
        if self.kind in ('composite', 'decimal'):
            end = 0
            for _, off, t in self.members:
                end = max(end, off + t.size)
            return end
        return PRIMS[self.prim][0] * self.length


class Schema:
    def __init__(self, path):
        self.path = path
        root = ET.parse(path).getroot()
        if local(root.tag) != 'messageSchema':
            raise SchemaError('%s: not an SBE messageSchema' % path)
        if root.get('byteOrder', 'littleEndian') != 'littleEndian':
            raise SchemaError('%s: only littleEndian schemas are supported' % path)
        self.schema_id = int(root.get('id'))
        self.version = int(root.get('version'))
        self.description = root.get('description', '')
        self.types = {}
        self.messages = {}
        for types in root.iter():
            if local(types.tag) != 'types':
                continue
            for el in types:
                t = self.parse_type(el)
                self.types[t.name] = t
        for el in root:
            if local(el.tag) == 'message':
                self.messages[int(el.get('id'))] = el
        hdr = self.types.get('messageHeader')
        if hdr is None or [(n, o, t.prim) for n, o, t in hdr.members] != [
                ('blockLength', 0, 'uint16'), ('templateId', 2, 'uint16'),
                ('schemaId', 4, 'uint16'), ('version', 6, 'uint16')]:
            raise SchemaError('%s: non-standard messageHeader' % path)

    def number(self, text, prim, what):
        text = text.strip()
        if prim == 'char':
            if len(text) != 1:
                raise SchemaError('%s: %s: char value %r' % (self.path, what, text))
            return ord(text)
        return int(text, 0)

    def parse_scalar(self, el, name):
        t = Type(name)
        prim = el.get('primitiveType')
        if prim not in PRIMS:
            raise SchemaError('%s: type %s: unsupported primitive %r' % (self.path, name, prim))
        t.prim = prim
        t.length = int(el.get('length', '1'))
        presence = el.get('presence', 'required')
        if el.get('valueRef') is not None:
            raise SchemaError('%s: type %s: valueRef is not supported' % (self.path, name))
        if prim == 'char' and t.length > 1:
            t.kind = 'string'
        elif prim == 'char':
            t.kind = 'char'
        else:
            if t.length != 1:
                raise SchemaError('%s: type %s: integer arrays unsupported' % (self.path, name))
            t.kind = 'int'
        if presence == 'constant':
            t.constant = True
            t.const_text = (el.text or '').strip()
            if t.kind == 'int':
                t.const_value = int(t.const_text, 0)
            elif len(t.const_text) == 1:
                t.const_value = ord(t.const_text)
        elif presence == 'optional':
            t.optional = True
            nv = el.get('nullValue')
            t.null = self.number(nv, prim, name + ' nullValue') if nv is not None \
                else PRIMS[prim][3]
        return t

    def parse_type(self, el):
        tag = local(el.tag)
        name = el.get('name')
        if tag == 'type':
            return self.parse_scalar(el, name)
        if tag == 'composite':
            t = Type(name)
            off = 0
            for m in el:
                if local(m.tag) != 'type':
                    raise SchemaError('%s: composite %s: member <%s> unsupported'
                                      % (self.path, name, local(m.tag)))
                mt = self.parse_scalar(m, m.get('name'))
                if m.get('offset') is not None:
                    off = int(m.get('offset'))
                t.members.append((mt.name, off if not mt.constant else 0, mt))
                off += mt.size
            names = [n for n, _, _ in t.members]
            t.kind = 'decimal' if names == ['mantissa', 'exponent'] else 'composite'
            if len(t.members) > MAX_MEMBERS:
                raise SchemaError('%s: composite %s: too many members' % (self.path, name))
            return t
        if tag in ('enum', 'set'):
            t = Type(name)
            enc = el.get('encodingType')
            if enc in PRIMS:
                t.prim = enc
                t.null = PRIMS[enc][3]
            else:
                base = self.types.get(enc)
                if base is None or base.kind not in ('int', 'char'):
                    raise SchemaError('%s: %s %s: encoding %r unknown'
                                      % (self.path, tag, name, enc))
                t.prim = base.prim
                t.optional = base.optional
                t.null = base.null
            t.kind = tag
            for v in el:
                if tag == 'enum':
                    t.values.append((self.number(v.text, t.prim, name), v.get('name')))
                else:
                    t.values.append((int(v.text.strip()), v.get('name')))
            return t
        raise SchemaError('%s: <%s> in <types> unsupported' % (self.path, tag))

    def block(self, el, is_group):
        """Fields (name, offset, Type) and groups of a message or group element."""
        fields, groups = [], []
        off = 0
        for c in el:
            tag = local(c.tag)
            if tag == 'field':
                if groups:
                    raise SchemaError('%s: %s: field after a group' % (self.path, el.get('name')))
                t = self.types.get(c.get('type'))
                if t is None:
                    raise SchemaError('%s: field %s: type %s unknown'
                                      % (self.path, c.get('name'), c.get('type')))
                if c.get('presence') == 'constant' or c.get('valueRef') is not None:
                    raise SchemaError('%s: field %s: field-level constants unsupported'
                                      % (self.path, c.get('name')))
                if t.constant:
                    fields.append((c.get('name'), 0, t))
                    continue
                if c.get('offset') is not None:
                    off = int(c.get('offset'))
                fields.append((c.get('name'), off, t))
                off += t.size
            elif tag == 'group':
                if is_group:
                    raise SchemaError('%s: nested group %s unsupported'
                                      % (self.path, c.get('name')))
                dim = self.types.get(c.get('dimensionType', 'groupSize'))
                members = {n: (o, mt) for n, o, mt in dim.members}
                if set(members) != {'blockLength', 'numInGroup'}:
                    raise SchemaError('%s: dimension %s unsupported' % (self.path, dim.name))
                gfields, _ = self.block(c, True)
                groups.append({'name': c.get('name'), 'id': int(c.get('id')),
                               'block_length': int(c.get('blockLength')),
                               'dim': dim, 'dim_members': members, 'fields': gfields})
            elif tag == 'data':
                raise SchemaError('%s: variable-length data unsupported' % self.path)
        return fields, groups


def check_block(path, name, block_length, fields):
    end = 0
    spans = []
    for fname, off, t in fields:
        if t.constant:
            continue
        for s, e, n in spans:
            if off < e and s < off + t.size:
                raise SchemaError('%s: %s: fields %s and %s overlap' % (path, name, n, fname))
        spans.append((off, off + t.size, fname))
        end = max(end, off + t.size)
    if end > block_length:
        raise SchemaError('%s: %s: fields end at %d past blockLength %d'
                          % (path, name, end, block_length))


def union(names_per_version, what):
    """Union of ordered name lists where every list is a subsequence of the result."""
    out = []
    for names in names_per_version:
        pos = -1
        for n in names:
            if n in out:
                i = out.index(n)
                if i < pos:
                    raise SchemaError('%s: field %s moved between versions' % (what, n))
                pos = i
            else:
                pos += 1
                out.insert(pos, n)
    return out


class Writer:
    def __init__(self):
        self.lines = []

    def __call__(self, s=''):
        self.lines.append(s)

    def text(self):
        return '\n'.join(self.lines) + '\n'


def c_str(s):
    return '"' + s.replace('\\', '\\\\').replace('"', '\\"') + '"'


def c_char_value(v, prim):
    if prim == 'char' and 32 <= v < 127 and chr(v) not in '\\\'':
        return "'%s'" % chr(v)
    return str(v)


def generate(schemas):
    schemas = sorted(schemas, key=lambda s: s.version)
    hdr = Writer()
    src = Writer()
    inputs = ['%s (schema id %d, version %d, %s)' % (os.path.basename(s.path), s.schema_id,
                                                      s.version, s.description)
              for s in schemas]
    banner = ['/* SPDX-License-Identifier: BSD-3-Clause */', '/*',
              ' * GENERATED by app/synth/synth_layout_gen.py from:'] + \
        [' *   ' + i for i in inputs] + \
        [' * Do not edit: regenerate (see app/synth/README.md).', ' */']
    for line in banner:
        hdr(line)
        src(line)
    hdr('#ifndef SYNTH_LAYOUT_GEN_H')
    hdr('#define SYNTH_LAYOUT_GEN_H')
    hdr()
    hdr('#include "synth_sbe.h"')
    hdr()
    hdr('/** Schema versions with layout tables. */')
    hdr('#define SYNTH_LAYOUT_VERSIONS { %s }' % ', '.join(str(s.version) for s in schemas))
    hdr('#define SYNTH_LAYOUT_VERSION_COUNT %d' % len(schemas))
    hdr()
    hdr('/** Template ids. */')
    hdr('enum synth_template {')
    for tid, short in sorted(TEMPLATES.items()):
        hdr('\tSYNTH_T_%s = %d,' % (short, tid))
    hdr('};')
    hdr()

    # ---- indexes: union over versions ----
    layouts = {}  # (tid, version) -> (name, block_length, fields, groups)
    for s in schemas:
        for tid in TEMPLATES:
            el = s.messages.get(tid)
            if el is None:
                raise SchemaError('%s: template %d missing' % (s.path, tid))
            fields, groups = s.block(el, False)
            bl = int(el.get('blockLength'))
            check_block(s.path, el.get('name'), bl, fields)
            for g in groups:
                check_block(s.path, g['name'], g['block_length'], g['fields'])
            layouts[(tid, s.version)] = (el.get('name'), bl, fields, groups)
    root_index = {}
    group_index = {}
    entry_index = {}
    for tid, short in sorted(TEMPLATES.items()):
        per = [layouts[(tid, s.version)] for s in schemas]
        names = union([[f[0] for f in p[2]] for p in per], short)
        gnames = union([[g['name'] for g in p[3]] for p in per], short)
        if len(names) > MAX_ROOT_FIELDS or len(gnames) > MAX_GROUPS:
            raise SchemaError('%s: too many fields or groups for synth_sbe.h' % short)
        root_index[tid] = {n: i for i, n in enumerate(names)}
        group_index[tid] = {n: i for i, n in enumerate(gnames)}
        hdr('/* %s (template %d) */' % (per[-1][0], tid))
        hdr('enum {')
        for i, n in enumerate(names):
            hdr('\tSYNTH_F_%s_%s = %d,' % (short, snake(n), i))
        hdr('\tSYNTH_F_%s_COUNT = %d,' % (short, len(names)))
        hdr('};')
        if gnames:
            hdr('enum {')
            for i, n in enumerate(gnames):
                hdr('\tSYNTH_G_%s_%s = %d,' % (short, snake(n), i))
            hdr('};')
        for gn in gnames:
            flists = []
            for p in per:
                for g in p[3]:
                    if g['name'] == gn:
                        flists.append([f[0] for f in g['fields']])
            en = union(flists, short + '.' + gn)
            if len(en) > MAX_ENTRY_FIELDS:
                raise SchemaError('%s.%s: too many fields for synth_sbe.h' % (short, gn))
            entry_index[(tid, gn)] = {n: i for i, n in enumerate(en)}
            hdr('enum {')
            for i, n in enumerate(en):
                hdr('\tSYNTH_F_%s_%s_%s = %d,' % (short, snake(gn), snake(n), i))
            hdr('\tSYNTH_F_%s_%s_COUNT = %d,' % (short, snake(gn), len(en)))
            hdr('};')
        hdr()

    # ---- consistency of offsets across versions ----
    for tid in TEMPLATES:
        seen = {}
        for s in schemas:
            _, _, fields, groups = layouts[(tid, s.version)]
            for n, off, t in fields:
                key = ('root', n)
                if key in seen and seen[key] != (off, t.size, t.prim, t.kind):
                    raise SchemaError('template %d field %s changes layout' % (tid, n))
                seen[key] = (off, t.size, t.prim, t.kind)
            for g in groups:
                for n, off, t in g['fields']:
                    key = (g['name'], n)
                    if key in seen and seen[key] != (off, t.size, t.prim, t.kind):
                        raise SchemaError('template %d %s.%s changes layout'
                                          % (tid, g['name'], n))
                    seen[key] = (off, t.size, t.prim, t.kind)

    # ---- named enum values and set bits (newest schema) ----
    newest = schemas[-1]
    hdr('/* Enum values and set choice bits (schema version %d). */' % newest.version)
    for en in NAMED_ENUMS:
        t = newest.types[en]
        for v, n in t.values:
            hdr('#define SYNTH_V_%s_%s %s' % (snake(en), snake(n), c_char_value(v, t.prim)))
    for sn in NAMED_SETS:
        t = newest.types[sn]
        done = set()
        for v, n in t.values:
            macro = 'SYNTH_B_%s_%s' % (snake(sn), snake(n))
            if macro in done:
                continue
            done.add(macro)
            hdr('#define %s (1U << %d)' % (macro, v))
    hdr()
    hdr('/**')
    hdr(' * Layout of a template in a schema version.')
    hdr(' * @return the table, or NULL with errno = ENOENT when not generated.')
    hdr(' */')
    hdr('const struct synth_message *synth_layout_find(uint16_t template_id, uint16_t version);')
    hdr()
    hdr('#endif /* SYNTH_LAYOUT_GEN_H */')

    # ---- tables ----
    src('#include <errno.h>')
    src('#include <stddef.h>')
    src()
    src('#include "synth_layout_gen.h"')
    src()
    src('_Static_assert(SYNTH_MAX_ROOT_FIELDS >= %d, "root fields");' % MAX_ROOT_FIELDS)
    src('_Static_assert(SYNTH_MAX_GROUPS >= %d, "groups");' % MAX_GROUPS)
    src('_Static_assert(SYNTH_MAX_ENTRY_FIELDS >= %d, "entry fields");' % MAX_ENTRY_FIELDS)
    src('_Static_assert(SYNTH_MAX_MEMBERS >= %d, "composite members");' % MAX_MEMBERS)
    src('_Static_assert(SYNTH_MAX_STRING >= %d, "string length");' % MAX_STRING)
    src()
    emitted = {}

    def type_ref(s, t, key_name=None):
        key_name = key_name or t.name
        key = (s.version, key_name)
        if key in emitted:
            return emitted[key]
        cname = 'type_v%d_%s' % (s.version, re.sub(r'\W', '_', key_name))
        emitted[key] = cname
        member_refs = []
        for mn, moff, mt in t.members:
            member_refs.append((mn, moff, type_ref(s, mt, '%s__%s' % (t.name, mn))))
        if t.kind in ('string',) and t.length > MAX_STRING:
            raise SchemaError('type %s longer than %d' % (t.name, MAX_STRING))
        if t.values:
            src('static const struct synth_name_value %s_values[] = {' % cname)
            for v, n in t.values:
                src('\t{ %d, %s },' % (v, c_str(n)))
            src('};')
        if member_refs:
            src('static const struct synth_member %s_members[] = {' % cname)
            for mn, moff, ref in member_refs:
                src('\t{ %s, %d, &%s },' % (c_str(mn), moff, ref))
            src('};')
        src('static const struct synth_type %s = {' % cname)
        src('\t.name = %s,' % c_str(t.name))
        src('\t.kind = SYNTH_KIND_%s,' % t.kind.upper())
        if t.prim is not None:
            src('\t.prim = %s,' % PRIMS[t.prim][2])
        src('\t.optional = %d,' % (1 if t.optional else 0))
        src('\t.constant = %d,' % (1 if t.constant else 0))
        src('\t.size = %d,' % t.size)
        src('\t.length = %d,' % t.length)
        src('\t.null_raw = UINT64_C(%d),' % raw_bits(t.null, t.prim))
        if t.constant:
            src('\t.const_text = %s,' % c_str(t.const_text))
            src('\t.const_value = %d,' % t.const_value)
        if t.values:
            src('\t.values = %s_values,' % cname)
            src('\t.value_count = %d,' % len(t.values))
        if member_refs:
            src('\t.members = %s_members,' % cname)
            src('\t.member_count = %d,' % len(member_refs))
        src('};')
        return cname

    messages = []
    for s in schemas:
        for tid, short in sorted(TEMPLATES.items()):
            name, bl, fields, groups = layouts[(tid, s.version)]
            base = 'v%d_%s' % (s.version, short.lower())
            refs = [(n, off, type_ref(s, t)) for n, off, t in fields]
            grefs = []
            for g in groups:
                grefs.append((g, [(n, off, type_ref(s, t)) for n, off, t in g['fields']]))
            for g, gf in grefs:
                if gf:
                    src('static const struct synth_field %s_%s_fields[] = {' % (base, g['name']))
                    for n, off, ref in gf:
                        src('\t{ %s, %d, %d, &%s },' % (c_str(n), entry_index[(tid, g['name'])][n],
                                                       off, ref))
                    src('};')
            if grefs:
                src('static const struct synth_block %s_groups[] = {' % base)
                for g, gf in grefs:
                    bo, bt = g['dim_members']['blockLength']
                    no, nt = g['dim_members']['numInGroup']
                    src('\t{')
                    src('\t\t.name = %s,' % c_str(g['name']))
                    src('\t\t.id = %d,' % g['id'])
                    src('\t\t.index = %d,' % group_index[tid][g['name']])
                    src('\t\t.block_length = %d,' % g['block_length'])
                    if gf:
                        src('\t\t.fields = %s_%s_fields,' % (base, g['name']))
                    src('\t\t.field_count = %d,' % len(gf))
                    src('\t\t.dim_size = %d,' % g['dim'].size)
                    src('\t\t.dim_block_length_offset = %d,' % bo)
                    src('\t\t.dim_block_length_size = %d,' % bt.size)
                    src('\t\t.dim_num_in_group_offset = %d,' % no)
                    src('\t\t.dim_num_in_group_size = %d,' % nt.size)
                    src('\t},')
                src('};')
            if refs:
                src('static const struct synth_field %s_fields[] = {' % base)
                for n, off, ref in refs:
                    src('\t{ %s, %d, %d, &%s },' % (c_str(n), root_index[tid][n], off, ref))
                src('};')
            src('static const struct synth_message %s = {' % base)
            src('\t.name = %s,' % c_str(name))
            src('\t.template_id = %d,' % tid)
            src('\t.schema_id = %d,' % s.schema_id)
            src('\t.version = %d,' % s.version)
            src('\t.root = {')
            src('\t\t.name = %s,' % c_str(name))
            src('\t\t.id = %d,' % tid)
            src('\t\t.block_length = %d,' % bl)
            if refs:
                src('\t\t.fields = %s_fields,' % base)
            src('\t\t.field_count = %d,' % len(refs))
            if grefs:
                src('\t\t.groups = %s_groups,' % base)
            src('\t\t.group_count = %d,' % len(grefs))
            src('\t},')
            src('};')
            src()
            messages.append(base)
    src('static const struct synth_message *const all_messages[] = {')
    for m in messages:
        src('\t&%s,' % m)
    src('};')
    src()
    src('const struct synth_message *')
    src('synth_layout_find(uint16_t template_id, uint16_t version)')
    src('{')
    src('\tsize_t i;')
    src()
    src('\tfor (i = 0; i < sizeof(all_messages) / sizeof(all_messages[0]); i++)')
    src('\t\tif (all_messages[i]->template_id == template_id &&')
    src('\t\t\t\tall_messages[i]->version == version)')
    src('\t\t\treturn all_messages[i];')
    src('\terrno = ENOENT;')
    src('\treturn NULL;')
    src('}')
    return hdr.text(), src.text()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--out-dir', required=True)
    ap.add_argument('schemas', nargs='+')
    args = ap.parse_args()
    try:
        schemas = [Schema(p) for p in args.schemas]
        h, c = generate(schemas)
    except (SchemaError, OSError, ET.ParseError) as e:
        print('synth_layout_gen.py: %s' % e, file=sys.stderr)
        return 1
    os.makedirs(args.out_dir, exist_ok=True)
    for name, text in (('synth_layout_gen.h', h), ('synth_layout_gen.c', c)):
        with open(os.path.join(args.out_dir, name), 'w') as f:
            f.write(text)
    return 0


if __name__ == '__main__':
    sys.exit(main())
