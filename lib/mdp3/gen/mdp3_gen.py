#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Generate C accessors and metadata tables from SBE message schemas (CME MDP 3.0).

Usage:
    mdp3_gen.py --out-dir DIR [--name cme] [--prefix mdp3_] SCHEMA.xml...

Writes DIR/<prefix><name>_gen.h and DIR/<prefix><name>_gen.c:

  * the header holds, for every template of every schema id, *merged* zero-copy
    accessors: one inline function per field (and per repeating group) that is
    valid for every schema version given on the command line.  The generator
    checks that a field has the same offset and encoding in every version
    (CME only appends fields and groups, as SBE requires); a field that is not
    in every version's base block is checked at run time against the wire
    blockLength and the wire version (sinceVersion) and reports -ENOENT.
  * the source holds the metadata tables of every (schema id, version): types,
    enum value names, set choices, composites, fields in wire order, groups
    with their dimension encodings, and a dispatch table indexed by
    (version, templateId).  The walker validates messages and the decode tool
    prints them from these tables alone.

Only the Python standard library is used.  Facts (offsets, sizes, null values)
come from the schema files; nothing is hard-coded per message.
"""

import argparse
import os
import re
import sys
import xml.etree.ElementTree as ET

# primitive: (C type, size, signed, enum mdp3_primitive, default null value)
PRIMS = {
    'char': ('char', 1, False, 'MDP3_PRIM_CHAR', 0),
    'int8': ('int8_t', 1, True, 'MDP3_PRIM_INT8', -(1 << 7)),
    'uint8': ('uint8_t', 1, False, 'MDP3_PRIM_UINT8', (1 << 8) - 1),
    'int16': ('int16_t', 2, True, 'MDP3_PRIM_INT16', -(1 << 15)),
    'uint16': ('uint16_t', 2, False, 'MDP3_PRIM_UINT16', (1 << 16) - 1),
    'int32': ('int32_t', 4, True, 'MDP3_PRIM_INT32', -(1 << 31)),
    'uint32': ('uint32_t', 4, False, 'MDP3_PRIM_UINT32', (1 << 32) - 1),
    'int64': ('int64_t', 8, True, 'MDP3_PRIM_INT64', -(1 << 63)),
    'uint64': ('uint64_t', 8, False, 'MDP3_PRIM_UINT64', (1 << 64) - 1),
}

MAX_GROUPS = 8  # MDP3_MAX_GROUPS in mdp3.h


class GenError(Exception):
    pass


def local(tag):
    return tag.rsplit('}', 1)[-1].rsplit(':', 1)[-1]


def snake(name):
    s = re.sub(r'([A-Z]+)([A-Z][a-z])', r'\1_\2', name)
    s = re.sub(r'([a-z0-9])([A-Z])', r'\1_\2', s)
    s = re.sub(r'[^A-Za-z0-9_]', '_', s)
    return s.lower()


def c_int(value, prim):
    """C literal for an integer of the given primitive type."""
    if prim == 'char':
        return str(value)
    size = PRIMS[prim][1]
    signed = PRIMS[prim][2]
    if signed:
        if size == 8:
            if value == -(1 << 63):
                return '(-INT64_C(9223372036854775807) - 1)'
            return 'INT64_C(%d)' % value
        if size == 4 and value == -(1 << 31):
            return '(-INT32_C(2147483647) - 1)'
        return '%d' % value
    if size == 8:
        return 'UINT64_C(%d)' % value
    if size == 4:
        return 'UINT32_C(%d)' % value
    return '%d' % value


def raw_bits(value, prim):
    """The value as the walker loads it: sign-extended to 64 bits, as uint64."""
    return value & ((1 << 64) - 1)


def c_string(text):
    out = []
    for ch in text:
        o = ord(ch)
        if ch == '"' or ch == '\\':
            out.append('\\' + ch)
        elif 32 <= o < 127:
            out.append(ch)
        else:
            out.append('\\%03o' % (o & 0xff))
    return '"' + ''.join(out) + '"'


class SbeType:
    """A resolved SBE encoding: scalar, string, enum, set or composite."""

    def __init__(self, name, kind):
        self.name = name
        self.kind = kind
        self.prim = None
        self.length = 1
        self.presence = 'required'
        self.null = None
        self.const = None
        self.const_int = None
        self.values = []
        self.members = []
        self.since = 0
        self.size = 0
        self.offset = None
        self.cname = None

    def is_decimal(self):
        names = [m[0] for m in self.members]
        return self.kind == 'composite' and names == ['mantissa', 'exponent']

    def signature(self):
        """What an accessor depends on (layout, not enum value lists)."""
        if self.kind == 'composite':
            return ('composite', tuple((n, o, t.signature()) for n, o, t in self.members))
        return (self.kind, self.prim, self.length, self.presence, self.null,
                self.const if self.presence == 'constant' else None)


class Field:
    def __init__(self, name, fid, stype, offset, since):
        self.name = name
        self.id = fid
        self.type = stype
        self.offset = offset
        self.since = since

    @property
    def size(self):
        return 0 if self.type.presence == 'constant' else self.type.size


class Block:
    """A message root block or a repeating group."""

    def __init__(self, name, bid, is_group):
        self.name = name
        self.id = bid
        self.is_group = is_group
        self.block_length = 0
        self.min_block_length = 0
        self.since = 0
        self.dimension = None
        self.dim = None  # (size, bl_off, bl_prim, num_off, num_prim)
        self.fields = []
        self.groups = []
        self.semantic = ''


class Schema:
    def __init__(self, path):
        self.path = path
        try:
            tree = ET.parse(path)
        except (ET.ParseError, OSError) as e:
            raise GenError('%s: cannot parse: %s' % (path, e))
        root = tree.getroot()
        if local(root.tag) != 'messageSchema':
            raise GenError('%s: root element is not messageSchema' % path)
        self.id = int(root.get('id'))
        self.version = int(root.get('version', '0'))
        self.package = root.get('package', '')
        self.description = root.get('description', '')
        if root.get('byteOrder', 'littleEndian') != 'littleEndian':
            raise GenError('%s: only littleEndian schemas are supported' % path)
        self.header_type = root.get('headerType', 'messageHeader')
        self.elements = {}
        for types in root:
            if local(types.tag) != 'types':
                continue
            for el in types:
                name = el.get('name')
                if name in self.elements:
                    raise GenError('%s: type %s defined twice' % (path, name))
                self.elements[name] = el
        self.types = {}
        self.type_order = []
        self.messages = []
        for el in root:
            if local(el.tag) == 'message':
                self.messages.append(self.parse_message(el))
        ids = [m.id for m in self.messages]
        if len(ids) != len(set(ids)):
            raise GenError('%s: duplicate template id' % path)
        self.check_header()

    # -- types ---------------------------------------------------------
    def resolve(self, name):
        if name in self.types:
            return self.types[name]
        if name in self.elements:
            el = self.elements[name]
            tag = local(el.tag)
            if tag == 'type':
                t = self.parse_type(el)
            elif tag == 'enum':
                t = self.parse_enum(el)
            elif tag == 'set':
                t = self.parse_set(el)
            elif tag == 'composite':
                t = self.parse_composite(el)
            else:
                raise GenError('%s: unsupported type element <%s> %s' % (self.path, tag, name))
        elif name in PRIMS:
            t = SbeType(name, 'scalar')
            t.prim = name
            t.size = PRIMS[name][1]
        else:
            raise GenError('%s: unknown type %s' % (self.path, name))
        self.types[name] = t
        self.type_order.append(t)
        return t

    def parse_number(self, text, prim, what):
        text = (text or '').strip()
        if prim == 'char':
            if len(text) == 1:
                return ord(text)
            try:
                return int(text, 0)
            except ValueError:
                raise GenError('%s: bad char value %r for %s' % (self.path, text, what))
        try:
            value = int(text, 0)
        except ValueError:
            raise GenError('%s: bad integer %r for %s' % (self.path, text, what))
        size, signed = PRIMS[prim][1], PRIMS[prim][2]
        lo = -(1 << (8 * size - 1)) if signed else 0
        hi = (1 << (8 * size - 1)) - 1 if signed else (1 << (8 * size)) - 1
        if not lo <= value <= hi:
            raise GenError('%s: %s value %d out of range of %s' % (self.path, what, value, prim))
        return value

    def parse_type(self, el):
        name = el.get('name')
        prim = el.get('primitiveType')
        if prim in ('float', 'double'):
            raise GenError('%s: %s: floating point types are not supported' % (self.path, name))
        if prim not in PRIMS:
            raise GenError('%s: %s: unknown primitiveType %s' % (self.path, name, prim))
        t = SbeType(name, 'scalar')
        t.prim = prim
        t.length = int(el.get('length', '1'))
        if prim == 'char' and t.length > 1:
            t.kind = 'string'
        elif t.length != 1:
            raise GenError('%s: %s: arrays of %s are not supported' % (self.path, name, prim))
        t.presence = el.get('presence', 'required')
        t.since = int(el.get('sinceVersion', '0'))
        if el.get('offset') is not None:
            t.offset = int(el.get('offset'))
        if t.presence == 'constant':
            t.const = (el.text or '').strip()
            if t.kind == 'scalar':
                t.const_int = self.parse_number(t.const, prim, name)
            t.size = 0
        else:
            t.size = PRIMS[prim][1] * t.length
        if t.presence == 'optional':
            if el.get('nullValue') is not None:
                t.null = self.parse_number(el.get('nullValue'), prim, name + ' nullValue')
            else:
                t.null = PRIMS[prim][4]
        elif t.presence not in ('required', 'constant'):
            raise GenError('%s: %s: unknown presence %s' % (self.path, name, t.presence))
        return t

    def parse_enum(self, el):
        name = el.get('name')
        enc = self.resolve(el.get('encodingType'))
        if enc.kind != 'scalar' or enc.presence == 'constant':
            raise GenError('%s: enum %s: bad encodingType' % (self.path, name))
        t = SbeType(name, 'enum')
        t.prim = enc.prim
        t.size = enc.size
        t.presence = enc.presence
        t.null = enc.null
        t.since = int(el.get('sinceVersion', '0'))
        seen = set()
        for v in el:
            if local(v.tag) != 'validValue':
                continue
            vname = v.get('name')
            value = self.parse_number(v.text, t.prim, name + '.' + vname)
            if vname in seen:
                raise GenError('%s: enum %s: duplicate %s' % (self.path, name, vname))
            seen.add(vname)
            t.values.append((vname, value, int(v.get('sinceVersion', '0'))))
        return t

    def parse_set(self, el):
        name = el.get('name')
        enc = self.resolve(el.get('encodingType'))
        if enc.kind != 'scalar' or enc.prim not in ('uint8', 'uint16', 'uint32', 'uint64'):
            raise GenError('%s: set %s: encodingType must be an unsigned integer' %
                           (self.path, name))
        t = SbeType(name, 'set')
        t.prim = enc.prim
        t.size = enc.size
        t.since = int(el.get('sinceVersion', '0'))
        for c in el:
            if local(c.tag) != 'choice':
                continue
            bit = int((c.text or '').strip())
            if bit >= 8 * t.size:
                raise GenError('%s: set %s: bit %d too large' % (self.path, name, bit))
            t.values.append((c.get('name'), bit, int(c.get('sinceVersion', '0'))))
        return t

    def parse_composite(self, el):
        name = el.get('name')
        t = SbeType(name, 'composite')
        t.since = int(el.get('sinceVersion', '0'))
        offset = 0
        for c in el:
            tag = local(c.tag)
            if tag == 'type':
                m = self.parse_type(c)
            elif tag == 'enum':
                m = self.parse_enum(c)
            elif tag == 'set':
                m = self.parse_set(c)
            elif tag == 'composite':
                m = self.parse_composite(c)
            else:
                raise GenError('%s: composite %s: <%s> not supported' % (self.path, name, tag))
            if c.get('offset') is not None:
                moff = int(c.get('offset'))
                if moff < offset:
                    raise GenError('%s: composite %s: member %s overlaps' %
                                   (self.path, name, m.name))
                offset = moff
            m.cname = None
            t.members.append((m.name, offset, m))
            offset += m.size
        t.size = offset
        return t

    def check_header(self):
        h = self.resolve(self.header_type)
        layout = [(n, o, mt.prim) for n, o, mt in h.members]
        want = [('blockLength', 0, 'uint16'), ('templateId', 2, 'uint16'),
                ('schemaId', 4, 'uint16'), ('version', 6, 'uint16')]
        if layout != want:
            raise GenError('%s: message header %s is not the standard SBE header' %
                           (self.path, self.header_type))

    # -- blocks --------------------------------------------------------
    def parse_block(self, el, is_group, parent_since):
        bid = int(el.get('id'))
        b = Block(el.get('name'), bid, is_group)
        b.since = int(el.get('sinceVersion', '0'))
        b.semantic = el.get('semanticType', '') or ''
        eff_since = max(b.since, parent_since)
        b.eff_since = eff_since
        running = 0
        for c in el:
            tag = local(c.tag)
            if tag == 'field':
                if b.groups:
                    raise GenError('%s: %s: field %s after a group' %
                                   (self.path, b.name, c.get('name')))
                t = self.resolve(c.get('type'))
                if c.get('presence') not in (None, t.presence):
                    raise GenError('%s: %s.%s: field presence override not supported' %
                                   (self.path, b.name, c.get('name')))
                if c.get('valueRef') is not None:
                    raise GenError('%s: %s.%s: valueRef not supported' %
                                   (self.path, b.name, c.get('name')))
                since = int(c.get('sinceVersion', '0'))
                if t.presence == 'constant':
                    offset = 0
                else:
                    if c.get('offset') is not None:
                        offset = int(c.get('offset'))
                        if offset < running:
                            raise GenError('%s: %s.%s overlaps the previous field' %
                                           (self.path, b.name, c.get('name')))
                    else:
                        offset = running
                    running = offset + t.size
                b.fields.append(Field(c.get('name'), int(c.get('id')), t, offset, since))
            elif tag == 'group':
                b.groups.append(self.parse_block(c, True, eff_since))
            elif tag == 'data':
                raise GenError('%s: %s: variable-length data is not supported' %
                               (self.path, b.name))
        if el.get('blockLength') is not None:
            b.block_length = int(el.get('blockLength'))
        else:
            b.block_length = running
        if running > b.block_length:
            raise GenError('%s: %s: fields end at %d past blockLength %d' %
                           (self.path, b.name, running, b.block_length))
        b.min_block_length = max([f.offset + f.size for f in b.fields
                                  if f.size and f.since <= eff_since] + [0])
        if len(b.groups) > MAX_GROUPS:
            raise GenError('%s: %s has %d groups, MDP3_MAX_GROUPS is %d' %
                           (self.path, b.name, len(b.groups), MAX_GROUPS))
        if is_group:
            b.dimension = self.resolve(el.get('dimensionType', 'groupSize'))
            mem = {n: (o, mt) for n, o, mt in b.dimension.members}
            if 'blockLength' not in mem or 'numInGroup' not in mem:
                raise GenError('%s: dimension %s lacks blockLength/numInGroup' %
                               (self.path, b.dimension.name))
            blo, blt = mem['blockLength']
            nio, nit = mem['numInGroup']
            if blt.prim not in ('uint8', 'uint16') or nit.prim not in ('uint8', 'uint16'):
                raise GenError('%s: dimension %s: unsupported encodings' %
                               (self.path, b.dimension.name))
            b.dim = (b.dimension.size, blo, blt.prim, nio, nit.prim)
        return b

    def parse_message(self, el):
        b = self.parse_block(el, False, 0)
        return b


# ---------------------------------------------------------------------------
# Merging templates across versions (for the accessors)
# ---------------------------------------------------------------------------

class MergedField:
    def __init__(self, f):
        self.name = f.name
        self.id = f.id
        self.type = f.type
        self.offset = f.offset
        self.since = f.since
        self.guaranteed = True
        self.versions = []


class MergedBlock:
    def __init__(self, b):
        self.name = b.name
        self.id = b.id
        self.fields = []
        self.groups = []
        self.versions = []


def merge_block(mb, b, version, path):
    mb.versions.append(version)
    byname = {f.name: f for f in mb.fields}
    for f in b.fields:
        mf = byname.get(f.name)
        if mf is None:
            mf = MergedField(f)
            if mb.versions[:-1]:
                mf.guaranteed = False
            mb.fields.append(mf)
            byname[f.name] = mf
        else:
            if (mf.offset != f.offset or mf.type.signature() != f.type.signature() or
                    mf.type.name != f.type.name):
                raise GenError('%s: %s.%s changes layout between versions %s and %d; '
                               'the merged accessors cannot describe it' %
                               (path, b.name, f.name, mf.versions, version))
            mf.type = f.type  # newest definition (enum values grow)
            mf.since = max(mf.since, f.since)
        mf.versions.append(version)
        if f.size and (f.since > b.eff_since or f.offset + f.size > b.min_block_length):
            mf.guaranteed = False
    for mf in mb.fields:
        if version not in mf.versions:
            mf.guaranteed = False
    for i, g in enumerate(b.groups):
        if i < len(mb.groups):
            if mb.groups[i].name != g.name:
                raise GenError('%s: %s: group %d is %s in version %d but %s before' %
                               (path, b.name, i, g.name, version, mb.groups[i].name))
        else:
            mb.groups.append(MergedBlock(g))
        merge_block(mb.groups[i], g, version, path)


# ---------------------------------------------------------------------------
# C emission
# ---------------------------------------------------------------------------

class Emitter:
    def __init__(self, schemas, name, prefix):
        self.schemas = sorted(schemas, key=lambda s: (s.id, s.version))
        self.name = name
        self.prefix = prefix
        self.PREFIX = prefix.upper()
        self.internal = prefix.rstrip('_') + '__' + name + '_'
        seen = set()
        for s in self.schemas:
            if (s.id, s.version) in seen:
                raise GenError('schema id %d version %d given twice' % (s.id, s.version))
            seen.add((s.id, s.version))

    # -- header: enums, sets, templates, accessors ---------------------
    def merged_types(self):
        """Union of enum values / set choices by type name over all schemas."""
        out = {}
        order = []
        for s in self.schemas:
            for t in s.type_order:
                if t.kind not in ('enum', 'set'):
                    continue
                cur = out.get(t.name)
                if cur is None:
                    out[t.name] = (t.kind, t.prim, dict((n, v) for n, v, _ in t.values),
                                   [n for n, _, _ in t.values])
                    order.append(t.name)
                    continue
                kind, prim, vals, names = cur
                if kind != t.kind or prim != t.prim:
                    raise GenError('type %s changes kind or encoding between schemas' % t.name)
                for n, v, _ in t.values:
                    if n in vals and vals[n] != v:
                        raise GenError('%s.%s changes value between schemas' % (t.name, n))
                    if n not in vals:
                        vals[n] = v
                        names.append(n)
        return order, out

    def header(self):
        P, p = self.PREFIX, self.prefix
        guard = (P + self.name.upper() + '_GEN_H')
        L = []
        w = L.append
        w('/* SPDX-License-Identifier: BSD-3-Clause */')
        w('/*')
        w(' * GENERATED by lib/mdp3/gen/mdp3_gen.py from:')
        for s in self.schemas:
            w(' *   %s (schema id %d, version %d, %s)' %
              (os.path.basename(s.path), s.id, s.version, s.description))
        w(' * Do not edit: regenerate (see lib/mdp3/README.md).')
        w(' *')
        w(' * Accessor contract (every function below):')
        w(' *   - the message or group view comes from the walker (mdp3_walk_packet()),')
        w(' *     which checked every length: no accessor reads outside the message;')
        w(' *   - returns 0 and stores the value; -ENODATA when the field holds its')
        w(' *     schema null value (the raw value is still stored); -ENOENT when the')
        w(' *     field or group is absent on the wire (block shorter than the field or')
        w(' *     wire version older than its sinceVersion);')
        w(' *   - any thread may call them on a view it owns; they have no side effects.')
        w(' */')
        w('#ifndef %s' % guard)
        w('#define %s' % guard)
        w('')
        w('#include "mdp3.h"')
        w('')
        w('#ifdef __cplusplus')
        w('extern "C" {')
        w('#endif')
        w('')
        w('/** Metadata of every schema version listed above, for the walker. */')
        w('extern const struct mdp3_dictionary %sdictionary_%s;' % (p, self.name))
        w('')
        # template ids
        tmpl = {}
        for s in self.schemas:
            for m in s.messages:
                prev = tmpl.get(m.id)
                if prev is not None and prev[0] != m.name:
                    raise GenError('template %d is %s and %s' % (m.id, prev[0], m.name))
                tmpl[m.id] = (m.name, s.id)
        w('/** Template ids (SBE templateId) of every message in the schemas. */')
        w('enum %s%s_template {' % (p, self.name))
        for tid in sorted(tmpl):
            w('\t%sTEMPLATE_%s = %d,' % (P, snake(tmpl[tid][0]).upper(), tid))
        w('};')
        w('')
        order, merged = self.merged_types()
        for tname in order:
            kind, prim, vals, names = merged[tname]
            base = P + snake(tname).upper()
            if kind == 'enum':
                w('/** Values of enum %s (%s). */' % (tname, prim))
                w('enum %s%s {' % (p, snake(tname)))
                for n in names:
                    v = vals[n]
                    printable = prim == 'char' and 32 < v < 127 and chr(v) not in "'\\"
                    lit = ("'%s'" % chr(v)) if printable else str(v)
                    w('\t%s_%s = %s,' % (base, snake(n).upper(), lit))
                w('};')
            else:
                w('/* Choices of set %s (%s): bit masks. */' % (tname, prim))
                suffix = {'uint8': 'U', 'uint16': 'U', 'uint32': 'UL', 'uint64': 'ULL'}[prim]
                for n in names:
                    w('#define %s_%s (1%s << %d)' % (base, snake(n).upper(), suffix, vals[n]))
            w('')
        # accessors, merged per template
        by_tid = {}
        for s in self.schemas:
            for m in s.messages:
                key = (s.id, m.id)
                if key not in by_tid:
                    by_tid[key] = MergedBlock(m)
                merge_block(by_tid[key], m, s.version, s.path)
        for (sid, tid) in sorted(by_tid):
            mb = by_tid[(sid, tid)]
            w('/* %s: schema %d, template %d, versions %s */' %
              (mb.name, sid, tid, ','.join(str(v) for v in mb.versions)))
            w('')
            self.emit_block_accessors(w, mb, p + snake(mb.name), 'msg', tid, True)
        w('#ifdef __cplusplus')
        w('}')
        w('#endif')
        w('')
        w('#endif /* %s */' % guard)
        text = '\n'.join(L) + '\n'
        names = re.findall(r'^(?:static inline \w+\n(\w+)\(|#define (\w+)|\t(\w+) = )',
                           text, re.M)
        seen = set()
        for groups in names:
            ident = [g for g in groups if g][0]
            if ident in seen:
                raise GenError('generated identifier %s is defined twice' % ident)
            seen.add(ident)
        return text

    def emit_fn(self, w, doc, ret, name, args, body):
        words = doc.split()
        lines = []
        cur = '/**'
        for word in words:
            if len(cur) + 1 + len(word) > 92:
                lines.append(cur)
                cur = ' *'
            cur += ' ' + word
        if lines:
            lines.append(cur)
            lines.append(' */')
        else:
            lines.append(cur + ' */')
        for line in lines:
            w(line)
        w('static inline %s' % ret)
        one = '%s(%s)' % (name, ', '.join(args))
        if len(one) < 100:
            w(one)
        elif len(name) + len(args[0]) + 2 < 100:
            w('%s(%s,' % (name, args[0]))
            rest = ', '.join(args[1:]) + ')'
            w('\t\t' + rest)
        else:
            w('%s(' % name)
            w('\t\t' + ', '.join(args) + ')')
        w('{')
        for line in body:
            w('\t' + line if line else '')
        w('}')
        w('')

    @staticmethod
    def load_stmt(prim, where):
        if prim == 'char':
            return '*value = (char)mdp3__load_uint8(%s);' % where
        return '*value = mdp3__load_%s(%s);' % (prim, where)

    @staticmethod
    def null_lit(value, prim):
        if prim == 'char':
            return '(char)%d' % value
        if PRIMS[prim][1] < 4:
            return '(%s)%d' % (PRIMS[prim][0], value)
        return c_int(value, prim)

    def emit_block_accessors(self, w, mb, fname, view, tid, is_root):
        vtype = 'const struct mdp3_msg *' if is_root else 'const struct mdp3_group *'
        vname = view
        ptr = '%s->root' % vname if is_root else '%s->entry' % vname
        check = ('MDP3__CHECK_TEMPLATE(%s, %d);' % (vname, tid) if is_root
                 else 'MDP3__CHECK_GROUP(%s, %d);' % (vname, mb.id))
        for f in mb.fields:
            t = f.type
            base = '%s_%s' % (fname, snake(f.name))
            where = 'root' if is_root else mb.name
            presence = []
            if t.presence != 'constant' and not f.guaranteed:
                presence = ['if (!mdp3__present(%s, %d, %d, %d))' %
                            (vname, f.since, f.offset, t.size), '\treturn -ENOENT;']
            desc = '%s (tag %d), %s %s' % (f.name, f.id, t.name,
                                           'constant' if t.presence == 'constant'
                                           else 'at offset %d of %s' % (f.offset, where))
            if f.since:
                desc += ', since version %d' % f.since
            if t.kind in ('scalar', 'enum', 'set'):
                ctype = PRIMS[t.prim][0]
                body = [check] + presence
                if t.presence == 'constant':
                    body += ['*value = (%s)%s;' % (ctype, c_int(t.const_int, t.prim)),
                             'return 0;']
                    self.emit_fn(w, desc + '.', 'int', base,
                                 [vtype + vname, ctype + ' *value'], body)
                    continue
                body.append(self.load_stmt(t.prim, '%s + %d' % (ptr, f.offset)))
                if t.presence == 'optional':
                    body += ['if (*value == %s)' % self.null_lit(t.null, t.prim),
                             '\treturn -ENODATA;']
                body.append('return 0;')
                self.emit_fn(w, desc + '.', 'int', base, [vtype + vname, ctype + ' *value'], body)
            elif t.kind == 'string':
                body = [check] + presence
                if t.presence == 'constant':
                    body += ['*chars = %s;' % c_string(t.const),
                             '*length = %d;' % len(t.const), 'return 0;']
                else:
                    body += ['*chars = (const char *)(%s + %d);' % (ptr, f.offset),
                             '*length = mdp3__strnlen(*chars, %d);' % t.length, 'return 0;']
                self.emit_fn(w, desc + ' (zero-copy, length up to the first NUL).', 'int',
                             base, [vtype + vname, 'const char **chars', 'size_t *length'], body)
            elif t.kind == 'composite':
                if t.is_decimal():
                    mname, moff, mt = t.members[0]
                    ename, eoff, et = t.members[1]
                    body = [check] + presence
                    body.append('value->mantissa = mdp3__load_%s(%s + %d);' %
                                (mt.prim, ptr, f.offset + moff))
                    if et.presence == 'constant':
                        body.append('value->exponent = %d;' % et.const_int)
                    else:
                        body.append('value->exponent = (int8_t)mdp3__load_%s(%s + %d);' %
                                    (et.prim, ptr, f.offset + eoff))
                    if mt.presence == 'optional':
                        body += ['if (value->mantissa == %s)' % c_int(mt.null, 'int64'),
                                 '\treturn -ENODATA;']
                    body.append('return 0;')
                    self.emit_fn(w, desc + ': mantissa and exponent.', 'int', base,
                                 [vtype + vname, 'struct mdp3_decimal *value'], body)
                    continue
                for mname, moff, mt in t.members:
                    if mt.kind not in ('scalar', 'enum', 'set'):
                        continue
                    ctype = PRIMS[mt.prim][0]
                    body = [check] + presence
                    mdesc = '%s.%s' % (desc, mname)
                    if mt.presence == 'constant':
                        body += ['*value = (%s)%s;' % (ctype, c_int(mt.const_int, mt.prim)),
                                 'return 0;']
                    else:
                        body.append(self.load_stmt(mt.prim, '%s + %d' % (ptr, f.offset + moff)))
                        if mt.presence == 'optional':
                            body += ['if (*value == %s)' % self.null_lit(mt.null, mt.prim),
                                     '\treturn -ENODATA;']
                        body.append('return 0;')
                    self.emit_fn(w, mdesc + '.', 'int', '%s_%s' % (base, snake(mname)),
                                 [vtype + vname, ctype + ' *value'], body)
        for i, g in enumerate(mb.groups):
            gname = '%s_%s' % (fname, snake(g.name))
            out = 'group' if is_root else 'nested'
            body = ([check, 'return mdp3_msg_group(%s, %d, %s);' % (vname, i, out)] if is_root
                    else [check, 'return mdp3_group_nested(%s, %d, %s);' % (vname, i, out)])
            self.emit_fn(w, 'Repeating group %s (tag %d), versions %s: opens an iterator '
                         '(mdp3_group_next()); -ENOENT when absent.' %
                         (g.name, g.id, ','.join(str(v) for v in g.versions)),
                         'int', gname, [vtype + vname, 'struct mdp3_group *' + out], body)
            self.emit_block_accessors(w, g, gname, 'group', tid, False)

    # -- source: metadata tables ----------------------------------------
    def source(self):
        p, I = self.prefix, self.internal
        L = []
        w = L.append
        w('/* SPDX-License-Identifier: BSD-3-Clause */')
        w('/* GENERATED by lib/mdp3/gen/mdp3_gen.py; do not edit (see lib/mdp3/README.md). */')
        w('')
        w('#include <stddef.h>')
        w('#include <stdint.h>')
        w('')
        w('#include "%s%s_gen.h"' % (p, self.name))
        w('')
        dispatch = {}
        for s in self.schemas:
            sp = '%ss%dv%d_' % (I, s.id, s.version)
            self.sp = sp
            for m in s.messages:
                mp = '%smsg%d' % (sp, m.id)
                groups_sym = self.emit_groups(w, m, mp, sp)
                fields_sym = self.emit_fields(w, m, mp, sp)
                w('static const struct mdp3_message_info %s = {' % mp)
                w('\t.name = %s,' % c_string(m.name))
                w('\t.semantic_type = %s,' % c_string(m.semantic))
                w('\t.template_id = %d,' % m.id)
                w('\t.schema_id = %d,' % s.id)
                w('\t.schema_version = %d,' % s.version)
                w('\t.root = %s,' % self.block_init(m, fields_sym, groups_sym, sp))
                w('};')
                w('')
            dispatch.setdefault(s.id, []).append(s)
        # dispatch tables
        disp_entries = []
        all_msgs = []
        for sid in sorted(dispatch):
            vers = dispatch[sid]
            max_v = max(s.version for s in vers)
            tids = sorted(set(m.id for s in vers for m in s.messages))
            min_t, max_t = tids[0], tids[-1]
            width = max_t - min_t + 1
            sym = '%ss%d_dispatch' % (I, sid)
            w('/* Row v, column t: the metadata used for a message of wire version v')
            w(' * (versions above %d use row %d) and templateId min_template + t: the' %
              (max_v, max_v))
            w(' * same version if generated, else the oldest newer one that has the')
            w(' * template (its sinceVersion rules mark what the wire lacks), else the')
            w(' * newest older one (unknown extensions are skipped by blockLength). */')
            w('static const struct mdp3_message_info *const %s[%d] = {' %
              (sym, (max_v + 1) * width))
            for v in range(max_v + 1):
                for tid in tids:
                    choice = None
                    exact = [s for s in vers if s.version == v and
                             any(m.id == tid for m in s.messages)]
                    newer = [s for s in vers if s.version > v and
                             any(m.id == tid and m.since <= v for m in s.messages)]
                    older = [s for s in vers if s.version < v and
                             any(m.id == tid for m in s.messages)]
                    if exact:
                        choice = exact[0]
                    elif newer:
                        choice = min(newer, key=lambda s: s.version)
                    elif older:
                        choice = max(older, key=lambda s: s.version)
                    if choice is None:
                        continue
                    m = [m for m in choice.messages if m.id == tid][0]
                    if m.since > v:
                        continue
                    w('\t[%d * %d + %d] = &%ss%dv%d_msg%d,' %
                      (v, width, tid - min_t, I, sid, choice.version, tid))
            w('};')
            w('')
            disp_entries.append((sid, max_v, min_t, max_t, sym))
            for s in vers:
                for m in s.messages:
                    all_msgs.append('&%ss%dv%d_msg%d' % (I, sid, s.version, m.id))
        w('static const struct mdp3_schema_dispatch %sschemas[] = {' % I)
        for sid, max_v, min_t, max_t, sym in disp_entries:
            w('\t{ .schema_id = %d, .max_version = %d, .min_template = %d, '
              '.max_template = %d,' % (sid, max_v, min_t, max_t))
            w('\t  .table = %s },' % sym)
        w('};')
        w('')
        w('static const struct mdp3_message_info *const %sall[] = {' % I)
        for sym in all_msgs:
            w('\t%s,' % sym)
        w('};')
        w('')
        w('const struct mdp3_dictionary %sdictionary_%s = {' % (p, self.name))
        w('\t.name = %s,' % c_string(self.name))
        w('\t.schemas = %sschemas,' % I)
        w('\t.schema_count = %d,' % len(disp_entries))
        w('\t.messages = %sall,' % I)
        w('\t.message_count = %d,' % len(all_msgs))
        w('};')
        return '\n'.join(L) + '\n'

    def emit_type(self, w, t, sym):
        if t.cname is not None:
            return t.cname
        t.cname = sym
        values_sym = 'NULL'
        members_sym = 'NULL'
        if t.kind == 'composite':
            for mname, moff, mt in t.members:
                self.emit_type(w, mt, sym + '__' + re.sub(r'\W', '_', mname))
            members_sym = sym + '_members'
            w('static const struct mdp3_member_info %s[] = {' % members_sym)
            for mname, moff, mt in t.members:
                init_line(w, ['.name = %s' % c_string(mname), '.offset = %d' % moff,
                              '.type = &%s' % mt.cname])
            w('};')
        if t.kind in ('enum', 'set') and t.values:
            values_sym = sym + '_values'
            w('static const struct mdp3_value_name %s[] = {' % values_sym)
            for n, v, since in t.values:
                init_line(w, ['.value = %s' % (c_int(v, 'int64') if t.kind == 'enum' else str(v)),
                              '.name = %s' % c_string(n), '.since_version = %d' % since])
            w('};')
        kind = {'scalar': 'MDP3_KIND_INTEGER', 'string': 'MDP3_KIND_STRING',
                'enum': 'MDP3_KIND_ENUM', 'set': 'MDP3_KIND_SET',
                'composite': 'MDP3_KIND_COMPOSITE'}[t.kind]
        pres = {'required': 'MDP3_PRESENCE_REQUIRED', 'optional': 'MDP3_PRESENCE_OPTIONAL',
                'constant': 'MDP3_PRESENCE_CONSTANT'}[t.presence]
        w('static const struct mdp3_type_info %s = {' % sym)
        w('\t.name = %s,' % c_string(t.name))
        w('\t.kind = %s,' % kind)
        w('\t.primitive = %s,' % (PRIMS[t.prim][3] if t.prim else 'MDP3_PRIM_NONE'))
        w('\t.presence = %s,' % pres)
        w('\t.size = %d,' % t.size)
        w('\t.length = %d,' % t.length)
        if t.presence == 'optional':
            w('\t.null_value = UINT64_C(%d),' % raw_bits(t.null, t.prim))
        if t.presence == 'constant':
            w('\t.constant = %s,' % c_string(t.const))
            if t.const_int is not None:
                w('\t.constant_value = %s,' % c_int(t.const_int, 'int64'))
        w('\t.values = %s,' % values_sym)
        w('\t.value_count = %d,' % len(t.values))
        w('\t.members = %s,' % members_sym)
        w('\t.member_count = %d,' % len(t.members))
        w('\t.is_decimal = %d,' % (1 if t.is_decimal() else 0))
        w('};')
        return sym

    def emit_fields(self, w, b, bp, sp):
        if not b.fields:
            return 'NULL'
        for f in b.fields:
            if f.type.cname is None:
                self.emit_type(w, f.type, sp + 'type_' + re.sub(r'\W', '_', f.type.name))
        sym = bp + '_fields'
        w('static const struct mdp3_field_info %s[] = {' % sym)
        for f in b.fields:
            init_line(w, ['.name = %s' % c_string(f.name), '.id = %d' % f.id,
                          '.offset = %d' % f.offset, '.since_version = %d' % f.since,
                          '.type = &%s' % f.type.cname])
        w('};')
        return sym

    def emit_groups(self, w, b, bp, sp):
        if not b.groups:
            return 'NULL'
        inner = []
        for i, g in enumerate(b.groups):
            gp = '%s_g%d' % (bp, i)
            if g.dimension.cname is None:
                self.emit_type(w, g.dimension, sp + 'type_' + re.sub(r'\W', '_', g.dimension.name))
            inner.append((g, self.emit_groups(w, g, gp, sp), self.emit_fields(w, g, gp, sp)))
        sym = bp + '_groups'
        w('static const struct mdp3_block_info %s[] = {' % sym)
        for g, gsym, fsym in inner:
            w('\t%s,' % self.block_init(g, fsym, gsym, sp))
        w('};')
        return sym

    def block_init(self, b, fsym, gsym, sp):
        parts = ['.name = %s' % c_string(b.name), '.id = %d' % b.id,
                 '.block_length = %d' % b.block_length,
                 '.min_block_length = %d' % b.min_block_length,
                 '.since_version = %d' % b.since]
        if b.is_group:
            d = b.dimension
            if d.cname is None:
                self.emit_type_late(d, sp)
            size, blo, blp, nio, nip = b.dim
            parts += ['.dimension = &%s' % d.cname, '.dim_size = %d' % size,
                      '.dim_block_length_offset = %d' % blo,
                      '.dim_block_length_size = %d' % PRIMS[blp][1],
                      '.dim_num_in_group_offset = %d' % nio,
                      '.dim_num_in_group_size = %d' % PRIMS[nip][1]]
        parts += ['.fields = %s' % fsym, '.field_count = %d' % len(b.fields),
                  '.groups = %s' % gsym, '.group_count = %d' % len(b.groups)]
        return '{\n\t\t' + ',\n\t\t'.join(parts) + ',\n\t}'

    def emit_type_late(self, d, sp):
        raise GenError('dimension type %s was not emitted' % d.name)


def init_line(w, parts):
    """One array initializer, wrapped under 100 columns (tabs count 8)."""
    one = '\t{ %s },' % ', '.join(parts)
    if len(one.expandtabs(8)) < 100:
        w(one)
        return
    line = '\t{ ' + parts[0]
    for part in parts[1:]:
        if len((line + ', ' + part + ' },').expandtabs(8)) < 100:
            line += ', ' + part
        else:
            w(line + ',')
            line = '\t  ' + part
    w(line + ' },')


def write_if_changed(path, text):
    try:
        with open(path, 'r', encoding='utf-8') as f:
            if f.read() == text:
                return False
    except OSError:
        pass
    tmp = path + '.tmp'
    with open(tmp, 'w', encoding='utf-8') as f:
        f.write(text)
    os.replace(tmp, path)
    return True


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--out-dir', required=True, help='directory for the .h and .c files')
    ap.add_argument('--name', default='cme', help='dictionary name (default cme)')
    ap.add_argument('--prefix', default='mdp3_', help='prefix of public names (default mdp3_)')
    ap.add_argument('schemas', nargs='+', help='SBE schema XML files')
    args = ap.parse_args(argv)
    if not re.match(r'^[a-z][a-z0-9_]*_$', args.prefix):
        ap.error('--prefix must be lower case and end with _')
    if not re.match(r'^[a-z][a-z0-9]*$', args.name):
        ap.error('--name must be lower case letters and digits')
    try:
        schemas = [Schema(path) for path in args.schemas]
        em = Emitter(schemas, args.name, args.prefix)
        header = em.header()
        source = em.source()
    except GenError as e:
        print('mdp3_gen: error: %s' % e, file=sys.stderr)
        return 1
    os.makedirs(args.out_dir, exist_ok=True)
    base = os.path.join(args.out_dir, '%s%s_gen' % (args.prefix, args.name))
    for path, text in ((base + '.h', header), (base + '.c', source)):
        changed = write_if_changed(path, text)
        print('mdp3_gen: %s %s' % ('wrote' if changed else 'unchanged', path))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
