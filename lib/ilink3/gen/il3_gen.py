#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Generate C encoders, decoders and metadata tables for CME iLink 3 (SBE schema id 8).

Usage:
    il3_gen.py --out-dir DIR SCHEMA.xml...

Writes DIR/il3_cme_gen.h and DIR/il3_cme_gen.c.  The schema parser, the type
resolution and the cross-version layout check are the MDP3 generator's
(lib/mdp3/gen/mdp3_gen.py, imported as a module, unchanged); this wrapper adds
what iLink 3 needs and MDP3 does not:

  * variable-length <data> elements (Credentials of Negotiate / Establish);
  * encoders: a setter per field, and per block an image of its null values
    that an encoder copies before it sets the fields it uses;
  * its own compact metadata tables (struct il3_message_info in ilink3.h),
    with composite members flattened into leaves, for validation and for
    generic printing.

Accessors are merged across the schema versions given (as for MDP3): a field
that is not in every version's base block is checked at run time against the
wire blockLength and version.  Only the Python standard library is used.
"""

import argparse
import os
import re
import sys
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                '..', '..', 'mdp3', 'gen'))
import mdp3_gen as g  # noqa: E402

PRIMS = g.PRIMS
snake = g.snake
c_string = g.c_string
GenError = g.GenError

MAX_GROUPS = 4   # IL3_MAX_GROUPS in ilink3.h
MAX_DATA = 1     # IL3_MAX_DATA in ilink3.h


class Il3Schema(g.Schema):
    """The MDP3 schema parser plus trailing <data> elements of a message."""

    def parse_block(self, el, is_group, parent_since):
        data = [c for c in el if g.local(c.tag) == 'data']
        if not data:
            return super().parse_block(el, is_group, parent_since)
        if is_group:
            raise GenError('%s: %s: <data> inside a group is not supported' %
                           (self.path, el.get('name')))
        kids = list(el)
        if kids[-len(data):] != data:
            raise GenError('%s: %s: <data> must come last' % (self.path, el.get('name')))
        stripped = ET.Element(el.tag, el.attrib)
        stripped.extend([c for c in kids if g.local(c.tag) != 'data'])
        b = super().parse_block(stripped, is_group, parent_since)
        b.data = []
        for d in data:
            el_t = self.elements.get(d.get('type'))
            mem = {}
            if el_t is not None and g.local(el_t.tag) == 'composite':
                mem = {c.get('name'): c.get('primitiveType') for c in el_t}
            first = list(el_t)[0].get('name') if mem else None
            if first != 'length' or mem.get('length') not in ('uint8', 'uint16') or \
                    'varData' not in mem:
                raise GenError('%s: %s.%s: unsupported data encoding %s' %
                               (self.path, el.get('name'), d.get('name'), d.get('type')))
            b.data.append((d.get('name'), int(d.get('id')), PRIMS[mem['length']][1]))
        if len(b.data) > MAX_DATA:
            raise GenError('%s: %s: more than %d data fields' % (self.path, b.name, MAX_DATA))
        return b


def layout(t):
    """What the wire layout of a type is (presence and null may change)."""
    if t.kind == 'composite':
        return ('composite', tuple((n, o, layout(mt)) for n, o, mt in t.members))
    return (t.prim, t.size, t.length)


def merge_block(mb, b, version, path):
    """mdp3_gen.merge_block, except that a field may turn from required to
    optional between versions (v8.9 made TimeInForce nullable): the newest
    definition wins, which only adds a null check."""
    saved = {}
    for f in b.fields:
        for mf in mb.fields:
            if mf.name == f.name and mf.offset == f.offset and \
                    layout(mf.type) == layout(f.type) and mf.type.signature() != f.type.signature():
                saved[f.name] = f.type
                mf.type = f.type
    g.merge_block(mb, b, version, path)


def leaves(f):
    """Flatten a field into scalar leaves: (suffix, offset, type, decimal_exp)."""
    t = f.type
    if t.kind != 'composite':
        return [('', f.offset, t, None)]
    out = []
    for mname, moff, mt in t.members:
        out.append(('.' + mname, f.offset + moff, mt, None))
    return out


KIND = {'scalar': 'IL3_KIND_INTEGER', 'string': 'IL3_KIND_STRING',
        'enum': 'IL3_KIND_ENUM', 'set': 'IL3_KIND_SET'}
PRES = {'required': 'IL3_PRESENCE_REQUIRED', 'optional': 'IL3_PRESENCE_OPTIONAL',
        'constant': 'IL3_PRESENCE_CONSTANT'}


class Emitter:
    def __init__(self, schemas):
        self.schemas = sorted(schemas, key=lambda s: s.version)
        ids = set(s.id for s in self.schemas)
        if len(ids) != 1:
            raise GenError('all schemas must have the same schema id, got %s' % sorted(ids))
        self.schema_id = ids.pop()
        vs = [s.version for s in self.schemas]
        if len(vs) != len(set(vs)):
            raise GenError('a schema version is given twice')
        self.newest = self.schemas[-1]
        for s in self.schemas:
            for m in s.messages:
                if not hasattr(m, 'data'):
                    m.data = []
                for gr in m.groups:
                    if gr.groups:
                        raise GenError('%s: %s: nested groups are not supported' %
                                       (s.path, m.name))
                if len(m.groups) > MAX_GROUPS:
                    raise GenError('%s: %s: more than %d groups' % (s.path, m.name, MAX_GROUPS))

    # -- header --------------------------------------------------------
    def header(self):
        L = []
        w = L.append
        w('/* SPDX-License-Identifier: BSD-3-Clause */')
        w('/*')
        w(' * GENERATED by lib/ilink3/gen/il3_gen.py from:')
        for s in self.schemas:
            w(' *   %s (schema id %d, version %d, %s)' %
              (os.path.basename(s.path), s.id, s.version, s.description))
        w(' * Do not edit: regenerate (see lib/ilink3/README.md).')
        w(' *')
        w(' * Decoder contract (il3_<message>_<field>(view, &value)):')
        w(' *   - the view comes from il3_msg_parse(), which checked every length;')
        w(' *   - returns 0 and stores the value; -ENODATA when the field holds its')
        w(' *     null value (the raw value is still stored); -ENOENT when the field')
        w(' *     is absent on the wire (block too short or wire version too old).')
        w(' * Encoder contract (il3_<message>_set_<field>(root, value)):')
        w(' *   - root is what il3_encode_begin() / il3_encode_group() returned; the')
        w(' *     block was pre-filled with null values, so unset optional fields are')
        w(' *     null on the wire; strings are copied and NUL-padded (truncated to')
        w(' *     the field length).')
        w(' * No function has side effects beyond its arguments; any thread may call')
        w(' * them on buffers it owns.')
        w(' */')
        w('#ifndef IL3_CME_GEN_H')
        w('#define IL3_CME_GEN_H')
        w('')
        w('#include "il3_pvt.h"')
        w('')
        w('#ifdef __cplusplus')
        w('extern "C" {')
        w('#endif')
        w('')
        w('/** SBE schema id of iLink 3. */')
        w('#define IL3_SCHEMA_ID %d' % self.schema_id)
        w('/** Schema version the encoders write (the newest generated). */')
        w('#define IL3_SCHEMA_VERSION %d' % self.newest.version)
        w('/** Oldest schema version generated. */')
        w('#define IL3_SCHEMA_VERSION_MIN %d' % self.schemas[0].version)
        w('')
        tmpl = {}
        for s in self.schemas:
            for m in s.messages:
                prev = tmpl.get(m.id)
                if prev is not None and prev != m.name:
                    raise GenError('template %d is %s and %s' % (m.id, prev, m.name))
                tmpl[m.id] = m.name
        self.tids = sorted(tmpl)
        w('/** Template ids of every message in the schemas. */')
        w('enum il3_template {')
        for tid in self.tids:
            w('\tIL3_TEMPLATE_%s = %d,' % (snake(tmpl[tid]).upper(), tid))
        w('};')
        w('#define IL3_TEMPLATE_MIN %d' % self.tids[0])
        w('#define IL3_TEMPLATE_MAX %d' % self.tids[-1])
        w('')
        order, merged = g.Emitter(self.schemas, 'x', 'il3_').merged_types()
        for tname in order:
            kind, prim, vals, names = merged[tname]
            base = 'IL3_' + snake(tname).upper()
            if kind == 'enum':
                w('/** Values of enum %s (%s). */' % (tname, prim))
                w('enum il3_%s {' % snake(tname))
                for n in names:
                    v = vals[n]
                    printable = prim == 'char' and 32 < v < 127 and chr(v) not in "'\\"
                    lit = ("'%s'" % chr(v)) if printable else str(v)
                    w('\t%s_%s = %s,' % (base, snake(n).upper(), lit))
                w('};')
            else:
                w('/* Choices of set %s (%s): bit masks. */' % (tname, prim))
                for n in names:
                    w('#define %s_%s (1U << %d)' % (base, snake(n).upper(), vals[n]))
            w('')
        by_tid = {}
        newest_block = {}
        for s in self.schemas:
            for m in s.messages:
                if m.id not in by_tid:
                    by_tid[m.id] = g.MergedBlock(m)
                merge_block(by_tid[m.id], m, s.version, s.path)
                newest_block[m.id] = m
        for tid in sorted(by_tid):
            mb = by_tid[tid]
            nb = newest_block[tid]
            base = 'il3_' + snake(mb.name)
            w('/* %s: template %d, versions %s */' %
              (mb.name, tid, ','.join(str(v) for v in mb.versions)))
            w('/** Root block length the encoder writes for %s. */' % mb.name)
            w('#define %s_BLOCK_LENGTH %d' % (base.upper(), nb.block_length))
            for i, gr in enumerate(nb.groups):
                w('/** Entry block length the encoder writes for group %s. */' % gr.name)
                w('#define %s_%s_BLOCK_LENGTH %d' % (base.upper(), snake(gr.name).upper(),
                                                     gr.block_length))
                w('/** Index of group %s for il3_msg_group() / il3_encode_group(). */' %
                  gr.name)
                w('#define %s_%s_INDEX %d' % (base.upper(), snake(gr.name).upper(), i))
            w('')
            self.emit_accessors(w, mb, base, tid, True)
            for gr in mb.groups:
                self.emit_accessors(w, gr, '%s_%s' % (base, snake(gr.name)), tid, False)
        w('#ifdef __cplusplus')
        w('}')
        w('#endif')
        w('')
        w('#endif /* IL3_CME_GEN_H */')
        text = '\n'.join(L) + '\n'
        seen = set()
        for groups in re.findall(r'^(?:static inline \w+\n(\w+)\(|#define (\w+)|\t(\w+) = )',
                                 text, re.M):
            ident = [x for x in groups if x][0]
            if ident in seen:
                raise GenError('generated identifier %s is defined twice' % ident)
            seen.add(ident)
        return text

    emit_fn = g.Emitter.emit_fn

    @staticmethod
    def load(prim, where):
        if prim == 'char':
            return '(char)il3__load_uint8(%s)' % where
        return 'il3__load_%s(%s)' % (prim, where)

    @staticmethod
    def store(prim, where, what):
        if prim == 'char':
            return 'il3__store_uint8(%s, (uint8_t)%s);' % (where, what)
        return 'il3__store_%s(%s, %s);' % (prim, where, what)

    def emit_accessors(self, w, mb, fname, tid, is_root):
        vtype = 'const struct il3_msg *' if is_root else 'const struct il3_group *'
        vname = 'msg' if is_root else 'group'
        ptr = 'msg->root' if is_root else 'group->entry'
        check = ('IL3__CHECK_TEMPLATE(msg, %d);' % tid if is_root
                 else 'IL3__CHECK_GROUP(group, %d);' % mb.id)
        for f in mb.fields:
            t = f.type
            base = '%s_%s' % (fname, snake(f.name))
            setname = '%s_set_%s' % (fname, snake(f.name))
            presence = []
            if t.presence != 'constant' and not f.guaranteed:
                presence = ['if (!il3__present(%s, %d, %d, %d))' %
                            (vname, f.since, f.offset, t.size), '\treturn -ENOENT;']
            desc = '%s (tag %d), %s%s' % (f.name, f.id, t.name,
                                          ' constant' if t.presence == 'constant'
                                          else ' at offset %d' % f.offset)
            if f.since:
                desc += ', since version %d' % f.since
            if t.kind in ('scalar', 'enum', 'set'):
                ctype = PRIMS[t.prim][0]
                body = [check] + presence
                if t.presence == 'constant':
                    body += ['*value = (%s)%s;' % (ctype, g.c_int(t.const_int, t.prim)),
                             'return 0;']
                    self.emit_fn(w, desc + '.', 'int', base,
                                 [vtype + vname, ctype + ' *value'], body)
                    continue
                body.append('*value = %s;' % self.load(t.prim, '%s + %d' % (ptr, f.offset)))
                if t.presence == 'optional':
                    body += ['if (*value == %s)' % g.Emitter.null_lit(t.null, t.prim),
                             '\treturn -ENODATA;']
                body.append('return 0;')
                self.emit_fn(w, desc + '.', 'int', base, [vtype + vname, ctype + ' *value'],
                             body)
                self.emit_fn(w, 'Encode ' + desc + '.', 'void', setname,
                             ['uint8_t *block', ctype + ' value'],
                             [self.store(t.prim, 'block + %d' % f.offset, 'value')])
            elif t.kind == 'string':
                body = [check] + presence
                if t.presence == 'constant':
                    body += ['*chars = %s;' % c_string(t.const),
                             '*length = %d;' % len(t.const), 'return 0;']
                else:
                    body += ['*chars = (const char *)(%s + %d);' % (ptr, f.offset),
                             '*length = il3__strnlen(*chars, %d);' % t.length, 'return 0;']
                self.emit_fn(w, desc + ' (zero-copy, length up to the first NUL).', 'int',
                             base, [vtype + vname, 'const char **chars', 'size_t *length'],
                             body)
                if t.presence != 'constant':
                    self.emit_fn(w, 'Encode ' + desc + ' (%d bytes, NUL-padded).' % t.length,
                                 'void', setname,
                                 ['uint8_t *block', 'const char *chars', 'size_t length'],
                                 ['il3__store_chars(block + %d, %d, chars, length);' %
                                  (f.offset, t.length)])
            elif t.kind == 'composite':
                if t.is_decimal():
                    mname, moff, mt = t.members[0]
                    ename, eoff, et = t.members[1]
                    body = [check] + presence
                    body.append('value->mantissa = %s;' %
                                self.load(mt.prim, '%s + %d' % (ptr, f.offset + moff)))
                    if et.presence == 'constant':
                        body.append('value->exponent = %d;' % et.const_int)
                    else:
                        body.append('value->exponent = %s;' %
                                    self.load(et.prim, '%s + %d' % (ptr, f.offset + eoff)))
                    if mt.presence == 'optional':
                        body += ['if (value->mantissa == %s)' %
                                 g.Emitter.null_lit(mt.null, mt.prim), '\treturn -ENODATA;']
                    body.append('return 0;')
                    self.emit_fn(w, desc + ': mantissa and exponent.', 'int', base,
                                 [vtype + vname, 'struct il3_decimal *value'], body)
                    sbody = [self.store(mt.prim, 'block + %d' % (f.offset + moff), 'mantissa')]
                    args = ['uint8_t *block', '%s mantissa' % PRIMS[mt.prim][0]]
                    doc = 'Encode %s: the mantissa' % desc
                    if et.presence != 'constant':
                        sbody.append(self.store(et.prim, 'block + %d' % (f.offset + eoff),
                                                'exponent'))
                        args.append('%s exponent' % PRIMS[et.prim][0])
                        doc += ' and exponent'
                    else:
                        doc += ' (exponent %d)' % et.const_int
                    self.emit_fn(w, doc + '.', 'void', setname, args, sbody)
                    continue
                for mname, moff, mt in t.members:
                    if mt.kind not in ('scalar', 'enum', 'set') or mt.presence == 'constant':
                        raise GenError('%s: composite member %s not supported' %
                                       (t.name, mname))
                    ctype = PRIMS[mt.prim][0]
                    body = [check] + presence
                    body.append('*value = %s;' %
                                self.load(mt.prim, '%s + %d' % (ptr, f.offset + moff)))
                    if mt.presence == 'optional':
                        body += ['if (*value == %s)' % g.Emitter.null_lit(mt.null, mt.prim),
                                 '\treturn -ENODATA;']
                    body.append('return 0;')
                    self.emit_fn(w, '%s.%s.' % (desc, mname), 'int',
                                 '%s_%s' % (base, snake(mname)),
                                 [vtype + vname, ctype + ' *value'], body)
                    self.emit_fn(w, 'Encode %s.%s.' % (desc, mname), 'void',
                                 '%s_%s' % (setname, snake(mname)),
                                 ['uint8_t *block', ctype + ' value'],
                                 [self.store(mt.prim, 'block + %d' % (f.offset + moff),
                                             'value')])

    # -- source ---------------------------------------------------------
    def null_image(self, b):
        img = bytearray(b.block_length)
        for f in b.fields:
            if f.type.presence == 'constant':
                continue
            for suffix, off, t, _ in leaves(f):
                if t.presence != 'optional' or t.kind == 'string':
                    continue
                size = PRIMS[t.prim][1]
                img[off:off + size] = (t.null & ((1 << (8 * size)) - 1)).to_bytes(size, 'little')
        return bytes(img)

    def emit_image(self, w, sym, img):
        if not any(img):
            return 'NULL'
        w('static const uint8_t %s[%d] = {' % (sym, len(img)))
        for i in range(0, len(img), 12):
            w('\t' + ', '.join('0x%02x' % x for x in img[i:i + 12]) + ',')
        w('};')
        return sym

    def emit_fields(self, w, b, sym):
        rows = []
        for f in b.fields:
            for suffix, off, t, _ in leaves(f):
                if t.kind == 'composite':
                    raise GenError('%s: nested composite in %s' % (b.name, f.name))
                parts = ['.name = %s' % c_string(f.name + suffix), '.id = %d' % f.id,
                         '.offset = %d' % (0 if t.presence == 'constant' else off),
                         '.size = %d' % (0 if t.presence == 'constant' else t.size),
                         '.since_version = %d' % f.since,
                         '.kind = %s' % KIND[t.kind],
                         '.primitive = IL3_PRIM_%s' % t.prim.upper(),
                         '.presence = %s' % PRES[t.presence],
                         '.type_name = %s' % c_string(f.type.name)]
                if t.presence == 'optional':
                    parts.append('.null_value = UINT64_C(%d)' % (t.null & ((1 << 64) - 1)))
                if t.presence == 'constant':
                    parts.append('.constant = %s' % c_string(t.const))
                if f.type.is_decimal() and suffix == '.mantissa':
                    et = f.type.members[1][2]
                    if et.presence == 'constant':
                        parts.append('.decimal_exponent = %d' % et.const_int)
                        parts.append('.decimal = 1')
                rows.append(parts)
        if not rows:
            return 'NULL', 0
        w('static const struct il3_field_info %s[] = {' % sym)
        for parts in rows:
            g.init_line(w, parts)
        w('};')
        return sym, len(rows)

    def source(self):
        L = []
        w = L.append
        w('/* SPDX-License-Identifier: BSD-3-Clause */')
        w('/* GENERATED by lib/ilink3/gen/il3_gen.py; do not edit (see lib/ilink3/README.md). */')
        w('')
        w('#include <stddef.h>')
        w('#include <stdint.h>')
        w('')
        w('#include "ilink3.h"')
        w('')
        infos = {}
        for s in self.schemas:
            for m in s.messages:
                mp = 'il3__v%d_msg%d' % (s.version, m.id)
                gsyms = []
                for i, gr in enumerate(m.groups):
                    fs, fc = self.emit_fields(w, gr, '%s_g%d_fields' % (mp, i))
                    img = self.emit_image(w, '%s_g%d_nulls' % (mp, i), self.null_image(gr))
                    d = gr.dim
                    gsyms.append('\t{ .name = %s, .id = %d, .block_length = %d,\n'
                                 '\t  .min_block_length = %d, .since_version = %d,\n'
                                 '\t  .dim_size = %d, .num_in_group_size = %d,\n'
                                 '\t  .fields = %s, .field_count = %d, .null_image = %s },' %
                                 (c_string(gr.name), gr.id, gr.block_length,
                                  gr.min_block_length, gr.since, d[0], PRIMS[d[4]][1],
                                  fs, fc, img))
                    if d[1] != 0 or d[2] != 'uint16' or d[3] != 2:
                        raise GenError('%s: group dimension layout not supported' % m.name)
                gsym = 'NULL'
                if gsyms:
                    gsym = mp + '_groups'
                    w('static const struct il3_group_info %s[] = {' % gsym)
                    L.extend(gsyms)
                    w('};')
                fs, fc = self.emit_fields(w, m, mp + '_fields')
                img = self.emit_image(w, mp + '_nulls', self.null_image(m))
                w('static const struct il3_message_info %s = {' % mp)
                w('\t.name = %s,' % c_string(m.name))
                w('\t.template_id = %d,' % m.id)
                w('\t.schema_version = %d,' % s.version)
                w('\t.since_version = %d,' % m.since)
                w('\t.block_length = %d,' % m.block_length)
                w('\t.min_block_length = %d,' % m.min_block_length)
                w('\t.fields = %s,' % fs)
                w('\t.field_count = %d,' % fc)
                w('\t.groups = %s,' % gsym)
                w('\t.group_count = %d,' % len(m.groups))
                if m.data:
                    dn, di, dl = m.data[0]
                    w('\t.data_name = %s,' % c_string(dn))
                    w('\t.data_id = %d,' % di)
                    w('\t.data_length_size = %d,' % dl)
                w('\t.data_count = %d,' % len(m.data))
                w('\t.null_image = %s,' % img)
                w('};')
                w('')
                infos[(s.version, m.id)] = mp
        vmax = self.newest.version
        tmin, tmax = self.tids[0], self.tids[-1]
        width = tmax - tmin + 1
        w('/* Row v, column t: metadata for wire version v (versions above %d use row' % vmax)
        w(' * %d) and templateId %d + t: the same version if generated, else the' %
          (vmax, tmin))
        w(' * oldest newer one that has the template (its sinceVersion rules mark what')
        w(' * the wire lacks), else the newest older one. */')
        w('static const struct il3_message_info *const il3__dispatch[%d] = {' %
          ((vmax + 1) * width))
        versions = [s.version for s in self.schemas]
        for v in range(vmax + 1):
            for tid in self.tids:
                exact = [x for x in versions if x == v and (x, tid) in infos]
                newer = [x for x in versions if x > v and (x, tid) in infos]
                older = [x for x in versions if x < v and (x, tid) in infos]
                if exact:
                    ch = exact[0]
                elif newer:
                    ch = min(newer)
                elif older:
                    ch = max(older)
                else:
                    continue
                m = [m for s in self.schemas if s.version == ch for m in s.messages
                     if m.id == tid][0]
                if m.since > v:
                    continue
                w('\t[%d * %d + %d] = &%s,' % (v, width, tid - tmin, infos[(ch, tid)]))
        w('};')
        w('')
        w('const struct il3_message_info *')
        w('il3_lookup(uint16_t version, uint16_t template_id)')
        w('{')
        w('\tif (template_id < %d || template_id > %d)' % (tmin, tmax))
        w('\t\treturn NULL;')
        w('\tif (version > %d)' % vmax)
        w('\t\tversion = %d;' % vmax)
        w('\treturn il3__dispatch[version * %d + (template_id - %d)];' % (width, tmin))
        w('}')
        w('')
        w('const struct il3_message_info *')
        w('il3_lookup_encode(uint16_t template_id)')
        w('{')
        w('\treturn il3_lookup(IL3_SCHEMA_VERSION, template_id);')
        w('}')
        return '\n'.join(L) + '\n'


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--out-dir', required=True)
    ap.add_argument('schemas', nargs='+')
    args = ap.parse_args(argv)
    try:
        schemas = [Il3Schema(p) for p in args.schemas]
        em = Emitter(schemas)
        header = em.header()
        source = em.source()
    except GenError as e:
        print('il3_gen: error: %s' % e, file=sys.stderr)
        return 1
    os.makedirs(args.out_dir, exist_ok=True)
    for name, text in (('il3_cme_gen.h', header), ('il3_cme_gen.c', source)):
        path = os.path.join(args.out_dir, name)
        changed = g.write_if_changed(path, text)
        print('il3_gen: %s %s' % ('wrote' if changed else 'unchanged', path))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
