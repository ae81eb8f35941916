#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Agreement of tickwire-decode with an independent decoder.

The references under <cme_data>/reference/omi-wireshark-lua were produced by
the Open-Markets-Initiative Lua dissectors run by TShark (SOURCES.md):

  *.json        tshark -T json -x: the full dissection tree of every frame
  *.fields.tsv  tshark -T fields, occurrence=a: per-frame lists of some fields

For every reference, this test decodes the capture it was made from with
tickwire-decode --json and compares field by field:

  * JSON trees: messages are aligned by order within the frame; groups by
    their (explicitly mapped) container names, entries by index; a leaf is
    matched to the schema field of the same block by its normalised name
    (lower case, alphanumerics), or through ALIASES, the reviewed table of the
    dissector's type-suffixed names (mdentrypxoptionalex = MDEntryPx of type
    PRICENULL9 ...), which also checks the schema type.  Every reference leaf
    is either compared or classified as non-field metadata (METADATA: padding,
    group blockLength, container nodes); anything else fails the test.
  * TSV files: per frame, each column's multiset of values must equal the
    multiset of the mapped fields of every message in the frame (TSV_COLUMNS,
    with schema types, since the dissector names optional and required
    variants differently; SOURCES.md advises multisets because columns of
    different fields are not aligned entry by entry).

Values: integers exactly; prices as exact decimals (the dissector prints
mantissa * 10^exponent as a number; Decimal comparison, no tolerance); a null
of ours must be the schema nullValue in the reference (prices: the
dissector's '-nan'); enums by wire value; sets by their choice names and by
every bit under the dissector's bit mask.

The schemas are read from <cme_data>/schemas/mdp3 by this script's own small
parser (not the generator's), for field types, null values and set choices.

iLink 3 references (schema 8) are out of scope: tickwire-decode must report
every one of their frames as not MDP3, and their fields are not compared.

Exit: 0 all agree; 1 any unmatched or mismatched field; 77 when the data
directory does not exist.
"""
import argparse
import collections
import decimal
import glob
import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

# -- reviewed mapping -------------------------------------------------------

# Dissector leaf name -> (schema field name, schema types it may have).
# Used only when the normalised name matches no field of the block.
ALIASES = {
    'mdentrypxoptional': ('MDEntryPx', {'PRICENULL'}),
    'mdentrypxex': ('MDEntryPx', {'PRICE9'}),
    'mdentrypxoptionalex': ('MDEntryPx', {'PRICENULL9'}),
    'mdentrysizeoptional': ('MDEntrySize', {'Int32NULL', 'uInt64NULL'}),
    'mdentrysizeshort': ('MDEntrySize', {'Int32'}),
    'mdentrysizeshortoptional': ('MDEntrySize', {'Int32NULL'}),
    'numberofordersoptional': ('NumberOfOrders', {'Int32NULL'}),
    'mdpricelevelunsignedoptional': ('MDPriceLevel', {'uInt8NULL'}),
    'mdentrytypebook': ('MDEntryType', {'MDEntryTypeBook'}),
    'mdentrytypestatistics': ('MDEntryType', {'MDEntryTypeStatistics'}),
    'mddisplayqtyoptional': ('MDDisplayQty', {'Int32NULL'}),
    'orderidoptional': ('OrderID', {'uInt64NULL'}),
    'totnumreportsoptional': ('TotNumReports', {'uInt32NULL'}),
    'underlyingproductoptional': ('UnderlyingProduct', {'uInt8NULL'}),
    'mdtradeentry': ('MDTradeEntryID', {'uInt32'}),
}

# Dissector group container -> schema group name.
GROUPS = {
    'incrementalrefreshbookgroups': 'NoMDEntries',
    'incrementalrefreshbookorderidgroups': 'NoOrderIDEntries',
    'incrementalrefreshbooklonggroups': 'NoMDEntries',
    'incrementalrefreshbooklongorderidgroups': 'NoOrderIDEntries',
    'incrementalrefreshorderbookgroups': 'NoMDEntries',
    'incrementalrefreshsessionstatisticsgroups': 'NoMDEntries',
    'incrementalrefreshtradesummarygroups': 'NoMDEntries',
    'incrementalrefreshtradesummaryorderidgroups': 'NoOrderIDEntries',
    'incrementalrefreshtradesummarylonggroups': 'NoMDEntries',
    'incrementalrefreshtradesummarylongorderidgroups': 'NoOrderIDEntries',
    'incrementalrefreshvolumegroups': 'NoMDEntries',
    'snapshotfullrefreshtcplonggroups': 'NoMDEntries',
    'eventsgroups': 'NoEvents',
    'feedtypesgroups': 'NoMDFeedTypes',
    'instattribgroups': 'NoInstAttrib',
    'lottyperulesgroups': 'NoLotTypeRules',
    'legsgroups': 'NoLegs',
}

# Non-field leaves: what they are.
METADATA = [
    (re.compile(r'^padding\d*$'), 'padding'),
    (re.compile(r'^blocklength$'), 'group blockLength (a length)'),
]

# TSV columns: frame/packet/header columns, then field columns mapped to
# (schema field name, schema types) per dissector version.
TSV_HEADER = {'frame.number', 'frame.time_epoch', 'ip.dst', 'udp.dstport',
              'packetsequencenumber', 'sendingtime', 'messagesize', 'templateid', 'version'}
TSV_COLUMNS = {
    '1.8': {
        'securityid': ('SecurityID', {'Int32'}),
        'rptseq': ('RptSeq', {'uInt32'}),
        'mdupdateaction': ('MDUpdateAction', {'MDUpdateAction'}),
        'mdentrypx': ('MDEntryPx', {'PRICE'}),
        'mdentrypxoptional': ('MDEntryPx', {'PRICENULL'}),
        'mdentrysize': ('MDEntrySize', {'Int32'}),
        'mdentrysizeoptional': ('MDEntrySize', {'Int32NULL'}),
        'mdentrytypebook': ('MDEntryType', {'MDEntryTypeBook'}),
        'mdpricelevel': ('MDPriceLevel', {'uInt8'}),
        'numberoforders': ('NumberOfOrders', {'Int32NULL'}),
    },
    '1.9': {
        'securityid': ('SecurityID', {'Int32'}),
        'rptseq': ('RptSeq', {'uInt32'}),
        'mdupdateaction': ('MDUpdateAction', {'MDUpdateAction'}),
        'mdentrypxex': ('MDEntryPx', {'PRICE9'}),
        'mdentrypxoptionalex': ('MDEntryPx', {'PRICENULL9'}),
        'mdentrysizeshort': ('MDEntrySize', {'Int32'}),
        'mdentrysizeshortoptional': ('MDEntrySize', {'Int32NULL'}),
        'mdentrytypebook': ('MDEntryType', {'MDEntryTypeBook'}),
        'mdpricelevel': ('MDPriceLevel', {'uInt8'}),
        'numberoforders': ('NumberOfOrders', {'Int32'}),
    },
}

NULL_PRICE = '-nan'   # how the dissector shows a null price
TCP_ENCODING_TYPE = 51966


def norm(name):
    return re.sub(r'[^a-z0-9]', '', name.lower())


# -- schemas (own minimal parser) -------------------------------------------

class Type:
    def __init__(self, name, kind):
        self.name = name
        self.kind = kind          # int, char, string, enum, set, composite
        self.null = None          # null value (int) of an optional scalar / enum
        self.members = []         # composite: [(name, Type)]
        self.choices = {}         # set: name -> bit

    @property
    def decimal(self):
        names = [m for m, _ in self.members]
        return self.kind == 'composite' and names == ['mantissa', 'exponent']


def local(tag):
    return tag.rsplit('}', 1)[-1].rsplit(':', 1)[-1]


def load_schema(path):
    root = ET.parse(path).getroot()
    els = {}
    for types in root:
        if local(types.tag) == 'types':
            for el in types:
                els[el.get('name')] = el
    cache = {}

    def scalar(el, name):
        prim = el.get('primitiveType')
        length = int(el.get('length', '1'))
        t = Type(name, 'string' if prim == 'char' and length > 1 else
                 ('char' if prim == 'char' else 'int'))
        if el.get('presence') == 'optional':
            t.null = int(el.get('nullValue'))
        if el.get('presence') == 'constant':
            t.kind = 'constant'
        return t

    def resolve(name):
        if name in cache:
            return cache[name]
        el = els[name]
        tag = local(el.tag)
        if tag == 'type':
            t = scalar(el, name)
        elif tag == 'enum':
            enc = resolve(el.get('encodingType')) if el.get('encodingType') in els else None
            t = Type(name, 'enum')
            t.null = enc.null if enc is not None else None
        elif tag == 'set':
            t = Type(name, 'set')
            t.choices = {c.get('name'): int(c.text) for c in el if local(c.tag) == 'choice'}
        else:
            t = Type(name, 'composite')
            for c in el:
                t.members.append((c.get('name'), scalar(c, c.get('name'))))
        cache[name] = t
        return t

    def block(el):
        fields = collections.OrderedDict()
        groups = collections.OrderedDict()
        for c in el:
            if local(c.tag) == 'field':
                fields[c.get('name')] = resolve(c.get('type'))
            elif local(c.tag) == 'group':
                groups[c.get('name')] = block(c)
        return {'fields': fields, 'groups': groups}

    msgs = {}
    for m in root:
        if local(m.tag) == 'message':
            msgs[int(m.get('id'))] = (m.get('name'), block(m))
    return int(root.get('id')), int(root.get('version')), msgs


# -- reference trees --------------------------------------------------------

class Node:
    def __init__(self, name, value, raw):
        self.name = name
        self.value = value
        self.raw = raw
        self.children = []

    def __repr__(self):
        return 'Node(%s=%r, %d children)' % (self.name, self.value, len(self.children))


def pairs_hook(p):
    return ('OBJ', p)


def nodes_of(obj, prefix_re):
    """Convert an ('OBJ', pairs) into a list of Nodes (k, k_raw, k_tree merged)."""
    out = []
    raws = {}
    trees = {}
    order = []
    for k, v in obj[1]:
        if k.endswith('_raw'):
            raws.setdefault(k[:-4], []).append(v)
        elif k.endswith('_tree'):
            trees.setdefault(k[:-5], []).append(v)
        else:
            order.append((k, v))
    seen = collections.Counter()
    for k, v in order:
        i = seen[k]
        seen[k] += 1
        short = prefix_re.sub('', k)
        raw = raws.get(k, [None] * (i + 1))
        raw = raw[i] if i < len(raw) else None
        n = Node(short, v, raw)
        tr = trees.get(k, [])
        if i < len(tr) and not isinstance(v, tuple):
            n.children = nodes_of(tr[i], prefix_re)
        elif isinstance(v, tuple):
            n.value = ''
            n.children = nodes_of(v, prefix_re)
        out.append(n)
    return out


def load_json_reference(path):
    with open(path) as f:
        data = json.load(f, object_pairs_hook=pairs_hook)
    frames = []
    for pkt in data:
        src = dict(pkt[1])['_source']
        layers = dict(src[1])['layers']
        info = {}
        proto = []
        for k, v in layers[1]:
            if k in ('frame', 'ip', 'udp', 'tcp'):
                for a, b in v[1]:
                    if isinstance(b, str):
                        info.setdefault(a, b)
            m = re.match(r'^omi\.cme\.globex\.mdp3\.sbe\.v(\d+\.\d+)$', k)
            if m:
                prefix = re.compile(r'^cme\.globex\.mdp3\.sbe\.v%s\.' % re.escape(m.group(1)))
                proto.extend(nodes_of(v, prefix))
                info['dissector'] = m.group(1)
        frames.append((info, proto))
    return frames


# -- comparison -------------------------------------------------------------

class Result:
    def __init__(self, name):
        self.name = name
        self.compared = collections.Counter()
        self.metadata = collections.Counter()
        self.ours_only = collections.Counter()
        self.failures = []

    def ok(self, what):
        self.compared[what] += 1

    def fail(self, where, msg):
        self.failures.append('%s: %s' % (where, msg))


def dec(text):
    return decimal.Decimal(text)


def price_matches(ref, ours):
    if ours is None:
        return ref == NULL_PRICE
    if ref == NULL_PRICE:
        return False
    return dec(ref) == decimal.Decimal(ours['mantissa']).scaleb(ours['exponent'])


def scalar_matches(t, ref, ours):
    """Integer / char / string / enum leaf."""
    if ours is None:
        return t.null is not None and ref == str(t.null)
    if t.kind == 'enum':
        ours = ours['value']
    if isinstance(ours, str):
        return ref == ours
    return ref == str(ours)


def compare_set(res, where, t, node, ours):
    value = ours['value']
    names = {norm(c) for c in ours['choices']}
    shown = {norm(x) for x in node.value.split('|') if x.strip()} if node.value else set()
    if shown != names:
        res.fail(where, 'set shows %r, ours %r' % (node.value, ours['choices']))
    else:
        res.ok('set summary')
    by_norm = {norm(n): b for n, b in t.choices.items()}
    for bit in node.children:
        # raw = [hex, offset, length, bitmask, type]: the dissector's mask.
        mask = int(bit.raw[3]) if bit.raw else 0
        if mask == 0:
            res.fail(where + '.' + bit.name, 'no bit mask in %r' % (bit.raw,))
            continue
        if bit.name in by_norm and (1 << by_norm[bit.name]) != mask:
            res.fail(where + '.' + bit.name, 'dissector bit mask %d, schema bit %d' %
                     (mask, by_norm[bit.name]))
            continue
        if bit.name not in by_norm and mask & (mask - 1) == 0 and \
                (mask.bit_length() - 1) in t.choices.values():
            res.fail(where + '.' + bit.name, 'reserved bit %d is a schema choice' % mask)
            continue
        shift = (mask & -mask).bit_length() - 1
        want = str((value & mask) >> shift)
        if bit.value != want:
            res.fail(where + '.' + bit.name, 'bit %s: reference %s, ours %s (value %d)' %
                     (bit.name, bit.value, want, value))
        else:
            res.ok('set bit')


def compare_field(res, where, t, node, ours):
    if t.kind == 'set':
        compare_set(res, where, t, node, ours)
    elif t.decimal:
        if price_matches(node.value, ours):
            res.ok('decimal')
        else:
            res.fail(where, 'reference %r, ours %r' % (node.value, ours))
    elif t.kind == 'composite':
        members = dict(t.members)
        for c in node.children:
            m = [n for n in members if norm(n) == c.name]
            if len(m) != 1:
                res.fail(where + '.' + c.name, 'no such member of %s' % t.name)
                continue
            if ours is None or m[0] not in ours:
                res.fail(where + '.' + c.name, 'missing in ours')
            elif scalar_matches(members[m[0]], c.value, ours[m[0]]):
                res.ok('composite member')
            else:
                res.fail(where + '.' + c.name, 'reference %r, ours %r' % (c.value, ours[m[0]]))
    else:
        if scalar_matches(t, node.value, ours):
            res.ok(t.kind)
        else:
            res.fail(where, 'reference %r, ours %r (type %s)' % (node.value, ours, t.name))


def resolve_field(block, leaf):
    """Schema field name for a reference leaf, or None."""
    names = [n for n in block['fields'] if norm(n) == leaf]
    if len(names) == 1:
        return names[0]
    alias = ALIASES.get(leaf)
    if alias is not None and alias[0] in block['fields'] and \
            block['fields'][alias[0]].name in alias[1]:
        return alias[0]
    return None


def metadata_kind(name):
    for rx, what in METADATA:
        if rx.match(name):
            return what
    return None


def compare_block(res, where, block, nodes, ours, entry_index=None, entry_name=None):
    covered = set()
    for n in nodes:
        w = '%s.%s' % (where, n.name)
        if entry_name is not None and n.name == entry_name + 'index':
            if n.value == str(entry_index):
                res.ok('group entry index')
            else:
                res.fail(w, 'entry index %s, ours %d' % (n.value, entry_index))
            continue
        if n.name in GROUPS:
            gname = GROUPS[n.name]
            if gname not in block['groups']:
                res.fail(w, 'maps to group %s, not in the schema block' % gname)
                continue
            covered.add(gname)
            res.metadata['group container'] += 1
            compare_group(res, w, block['groups'][gname], n, ours.get(gname))
            continue
        kind = metadata_kind(n.name)
        if kind is not None:
            res.metadata[kind] += 1
            continue
        fname = resolve_field(block, n.name)
        if fname is None:
            res.fail(w, 'UNMATCHED reference field (value %r)' % n.value)
            continue
        covered.add(fname)
        if fname not in ours:
            res.fail(w, 'field %s absent in ours' % fname)
            continue
        compare_field(res, w, block['fields'][fname], n, ours[fname])
    for k in ours:
        if k not in covered:
            t = block['fields'].get(k)
            res.ours_only['constant' if t is not None and t.kind == 'constant'
                          else 'not shown by the dissector'] += 1
            if t is None or t.kind != 'constant':
                res.fail(where + '.' + k, 'ours has %s, the reference none' % k)


def compare_group(res, where, gblock, node, ours):
    if ours is None:
        res.fail(where, 'group absent in ours')
        return
    entry = node.name[:-1]
    entries = [c for c in node.children if c.name == entry]
    for c in node.children:
        if c.name in ('groupsize', 'groupsize8byte'):
            res.metadata['group dimension node'] += 1
            for d in c.children:
                if d.name == 'numingroup':
                    if d.value == str(len(ours)):
                        res.ok('numInGroup')
                    else:
                        res.fail(where + '.numingroup', 'reference %s, ours %d entries' %
                                 (d.value, len(ours)))
                else:
                    kind = metadata_kind(d.name)
                    if kind is None:
                        res.fail(where + '.' + d.name, 'UNMATCHED dimension leaf')
                    else:
                        res.metadata[kind] += 1
        elif c.name != entry:
            res.fail(where + '.' + c.name, 'UNMATCHED group child')
    if len(entries) != len(ours):
        res.fail(where, '%d reference entries, ours %d' % (len(entries), len(ours)))
        return
    for i, (e, o) in enumerate(zip(entries, ours)):
        res.metadata['group entry node'] += 1
        compare_block(res, '%s[%d]' % (where, i + 1), gblock, e.children, o,
                      entry_index=i + 1, entry_name=entry)


def compare_header(res, where, nodes, ours, packet):
    """messagesize / messageheader / packet header leaves against ours."""
    want = {'messagesize': ours['size'], 'tcpmessagesize': ours['size'],
            'blocklength': ours['block_length'], 'templateid': ours['template_id'],
            'schemaid': ours['schema_id'], 'version': ours['version']}
    for n in nodes:
        if n.name == 'messageheader':
            res.metadata['message header node'] += 1
            compare_header(res, where, n.children, ours, packet)
        elif n.name in want:
            if n.value == str(want[n.name]):
                res.ok('message header')
            else:
                res.fail(where + '.' + n.name, 'reference %s, ours %s' % (n.value, want[n.name]))


def compare_packet_header(res, where, node, ours):
    want = {'packetsequencenumber': ours['seq'], 'sendingtime': ours['sending_time'],
            'messagesequencenumber': ours['seq'], 'tcpsendingtime': ours['sending_time'],
            'encodingtype': TCP_ENCODING_TYPE if ours['transport'] == 'tcp' else None}
    for n in node.children:
        if n.name not in want:
            res.fail(where + '.' + n.name, 'UNMATCHED packet header leaf')
        elif n.value == str(want[n.name]):
            res.ok('packet header')
        else:
            res.fail(where + '.' + n.name, 'reference %s, ours %s' % (n.value, want[n.name]))


def compare_frame_info(res, where, info, first):
    checks = [('frame.time_epoch', lambda v: int(dec(v) * 10 ** 9) == first['time_ns']),
              ('ip.src', lambda v: v == first['src_ip']),
              ('ip.dst', lambda v: v == first['dst_ip']),
              ('udp.srcport', lambda v: int(v) == first['src_port']),
              ('udp.dstport', lambda v: int(v) == first['dst_port']),
              ('tcp.srcport', lambda v: int(v) == first['src_port']),
              ('tcp.dstport', lambda v: int(v) == first['dst_port'])]
    for key, fn in checks:
        if key in info:
            if fn(info[key]):
                res.ok('frame/IP/port')
            else:
                res.fail(where + '.' + key, 'reference %s, ours %r' % (info[key], first))


def compare_json(res, ref_path, decoded, schemas):
    frames = load_json_reference(ref_path)
    for info, proto in frames:
        fno = int(info['frame.number'])
        where = 'frame %d' % fno
        ours = decoded.get(fno, [])
        bad = [o for o in ours if 'name' not in o]
        if bad:
            res.fail(where, 'ours did not decode: %r' % bad)
            continue
        refs = []  # (packet header node, message node)
        header = None
        for n in proto:
            if n.name in ('binarypacketheader', 'technicalheader'):
                header = n
                res.metadata['packet header node'] += 1
            elif n.name in ('message', 'tcpmessage'):
                refs.append((header, n))
                res.metadata['message node'] += 1
            else:
                res.fail(where + '.' + n.name, 'UNMATCHED top-level node')
        if len(refs) != len(ours):
            res.fail(where, '%d reference messages, ours %d' % (len(refs), len(ours)))
            continue
        if ours:
            compare_frame_info(res, where, info, ours[0])
        for i, ((hdr, mnode), o) in enumerate(zip(refs, ours)):
            w = '%s msg %d (%s)' % (where, i, o['name'])
            if hdr is not None and (i == 0 or hdr is not refs[i - 1][0]):
                compare_packet_header(res, w + ' packet header', hdr, o)
            key = (o['schema_id'], o['version'])
            if key not in schemas or o['template_id'] not in schemas[key]:
                res.fail(w, 'no schema %r template %d for the comparison' %
                         (key, o['template_id']))
                continue
            sname, block = schemas[key][o['template_id']]
            body_name = norm(re.sub(r'\d+$', '', sname))
            header_nodes = [c for c in mnode.children if c.name != body_name]
            bodies = [c for c in mnode.children if c.name == body_name]
            compare_header(res, w, header_nodes, o, hdr)
            for c in header_nodes:
                if c.name not in ('messagesize', 'tcpmessagesize', 'messageheader'):
                    res.fail(w + '.' + c.name, 'UNMATCHED message child')
            if len(bodies) != 1:
                res.fail(w, 'no message body node %s in the reference' % body_name)
                continue
            res.metadata['message body node'] += 1
            compare_block(res, w, block, bodies[0].children, o['fields'])


def collect(block, fields, want_name, want_types, out):
    """Values of want_name fields with a type in want_types, recursively."""
    for name, value in fields.items():
        if name in block['groups']:
            for entry in value:
                collect(block['groups'][name], entry, want_name, want_types, out)
        elif name == want_name and block['fields'][name].name in want_types:
            out.append((block['fields'][name], value))


def tsv_value(t, value):
    """Our value as a comparable key, the dissector's way (null -> nullValue)."""
    if t.decimal:
        if value is None:
            return NULL_PRICE
        return decimal.Decimal(value['mantissa']).scaleb(value['exponent']).normalize()
    if value is None:
        return str(t.null)
    if t.kind == 'enum':
        value = value['value']
    return str(value)


def tsv_ref_value(t, text):
    if t.decimal and text != NULL_PRICE:
        return dec(text).normalize()
    return text


def compare_tsv(res, ref_path, decoded, schemas):
    with open(ref_path) as f:
        lines = [l.rstrip('\n').split('\t') for l in f]
    header = lines[0]
    m = re.match(r'^cme\.globex\.mdp3\.sbe\.v(\d+\.\d+)\.', header[4])
    version = m.group(1)
    cols = [re.sub(r'^cme\.globex\.mdp3\.sbe\.v\d+\.\d+\.', '', h) for h in header]
    mapping = TSV_COLUMNS[version]
    for c in cols:
        if c not in TSV_HEADER and c not in mapping:
            res.fail(ref_path, 'UNMATCHED TSV column %s' % c)
    for row in lines[1:]:
        rec = dict(zip(cols, row))
        fno = int(rec['frame.number'])
        where = 'frame %d' % fno
        ours = decoded.get(fno, [])
        if not any('name' in o for o in ours):
            if rec.get('packetsequencenumber', ''):
                res.fail(where, 'reference decoded an MDP3 packet, ours %r' % ours)
            else:
                res.metadata['frame not MDP3 in both'] += 1
                if not any('not_mdp3' in o for o in ours):
                    res.fail(where, 'ours did not report the frame as not MDP3')
            continue
        msgs = [o for o in ours if 'name' in o]
        first = msgs[0]

        def check(col, ref_items, our_items, what):
            if collections.Counter(ref_items) == collections.Counter(our_items):
                res.compared[what] += len(ref_items)
            else:
                res.fail('%s %s' % (where, col), 'reference %s, ours %s' %
                         (sorted(map(str, ref_items)), sorted(map(str, our_items))))

        def split(col):
            return [x for x in rec[col].split(',')] if rec[col] != '' else []

        check('frame.time_epoch', [int(dec(rec['frame.time_epoch']) * 10 ** 9)],
              [first['time_ns']], 'frame/IP/port')
        check('ip.dst', [rec['ip.dst']], [first['dst_ip']], 'frame/IP/port')
        check('udp.dstport', [rec['udp.dstport']], [str(first['dst_port'])], 'frame/IP/port')
        check('packetsequencenumber', split('packetsequencenumber'), [str(first['seq'])],
              'packet header')
        check('sendingtime', split('sendingtime'), [str(first['sending_time'])], 'packet header')
        check('messagesize', split('messagesize'), [str(o['size']) for o in msgs],
              'message header')
        check('templateid', split('templateid'), [str(o['template_id']) for o in msgs],
              'message header')
        check('version', split('version'), [str(o['version']) for o in msgs], 'message header')
        for col, (fname, types) in mapping.items():
            if col not in rec:
                continue
            items = []
            for o in msgs:
                _, block = schemas[(o['schema_id'], o['version'])][o['template_id']]
                collect(block, o['fields'], fname, types, items)
            ours_vals = [tsv_value(t, v) for t, v in items]
            ref_vals = []
            for text in split(col):
                t = items[0][0] if items else None
                ref_vals.append(tsv_ref_value(t, text) if t is not None else text)
            check(col, ref_vals, ours_vals, 'field (TSV)')


def decode(decoder, pcap, tcp):
    cmd = [decoder, '--json'] + (['--tcp'] if tcp else []) + [pcap]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        raise RuntimeError('%s: exit %d: %s' % (' '.join(cmd), proc.returncode, proc.stderr))
    out = collections.defaultdict(list)
    for line in proc.stdout.splitlines():
        o = json.loads(line)
        out[o['frame']].append(o)
    return out


def main():
    ap = argparse.ArgumentParser(description='compare tickwire-decode with the OMI dissector')
    ap.add_argument('--decoder', required=True)
    ap.add_argument('--data', required=True)
    ap.add_argument('-v', '--verbose', action='store_true')
    args = ap.parse_args()
    if not os.path.isdir(args.data):
        print('SKIP: data directory %s does not exist' % args.data)
        return 77
    schemas = {}
    for path in glob.glob(os.path.join(args.data, 'schemas', 'mdp3', 'Cme.Futures.*.xml')):
        sid, ver, msgs = load_schema(path)
        schemas[(sid, ver)] = msgs
    refdir = os.path.join(args.data, 'reference', 'omi-wireshark-lua')
    refs = sorted(glob.glob(os.path.join(refdir, '*', '*.json')) +
                  glob.glob(os.path.join(refdir, '*', '*.fields.tsv')))
    if not refs:
        print('FAIL: no reference files under %s' % refdir)
        return 1
    print('alias table (dissector name -> schema field, types):')
    for k, (f, t) in sorted(ALIASES.items()):
        print('  %-28s -> %s %s' % (k, f, sorted(t)))
    total = collections.Counter()
    failed_files = passed_files = 0
    for ref in refs:
        rel = os.path.relpath(ref, refdir)
        subdir, base = os.path.split(rel)
        stem = base[:-len('.fields.tsv')] if base.endswith('.fields.tsv') else base[:-len('.json')]
        pcap = os.path.join(args.data, 'pcap', 'omi-data-packets', 'Cme', subdir, stem + '.pcap')
        res = Result(rel)
        if subdir.startswith('iLink3'):
            decoded = decode(args.decoder, pcap, True)
            frames = len(load_json_reference(ref)) if ref.endswith('.json') else 0
            not_mdp3 = sum(1 for f in decoded.values() for o in f if 'not_mdp3' in o)
            decoded_msgs = sum(1 for f in decoded.values() for o in f if 'name' in o)
            if decoded_msgs or not_mdp3 != frames:
                res.fail(rel, 'iLink 3 capture: %d messages decoded, %d of %d frames '
                         'reported not MDP3' % (decoded_msgs, not_mdp3, frames))
            print('%s %-62s out of scope (iLink 3, schema 8): %d/%d frames reported not_mdp3' %
                  ('ok  ' if not res.failures else 'FAIL', rel, not_mdp3, frames))
        else:
            decoded = decode(args.decoder, pcap, subdir.endswith('1.12'))
            try:
                if ref.endswith('.json'):
                    compare_json(res, ref, decoded, schemas)
                else:
                    compare_tsv(res, ref, decoded, schemas)
            except Exception as e:  # a crash of the comparison is a failure
                res.fail(rel, 'comparison raised %r' % e)
            n = sum(res.compared.values())
            print('%s %-62s compared %5d fields, %d mismatched/unmatched; metadata %d; '
                  'ours only %d' % ('ok  ' if not res.failures else 'FAIL', rel, n,
                                    len(res.failures), sum(res.metadata.values()),
                                    sum(res.ours_only.values())))
            if args.verbose or res.failures:
                print('     compared: %s' % dict(res.compared))
                print('     metadata: %s' % dict(res.metadata))
                print('     ours only: %s' % dict(res.ours_only))
            total.update(res.compared)
            if n == 0:
                res.fail(rel, 'nothing compared')
        for f in res.failures[:40]:
            print('     MISMATCH %s' % f)
        if len(res.failures) > 40:
            print('     ... %d more' % (len(res.failures) - 40))
        if res.failures:
            failed_files += 1
        else:
            passed_files += 1
    print('total compared fields: %d (%s)' % (sum(total.values()), dict(total)))
    print('%d passed, %d failed' % (passed_files, failed_files))
    return 1 if failed_files else 0


if __name__ == '__main__':
    sys.exit(main())
