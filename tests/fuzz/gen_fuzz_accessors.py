#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write a C function that calls every typed accessor of a generated
decoder header on a message, for the fuzz harnesses.

--flavour mdp3 (lib/mdp3/generated/mdp3_cme_gen.h): fuzz_touch_typed(msg)
switches on (schemaId, templateId), reads every root field, opens every
group, walks every entry and reads every field of it (strings byte by byte),
and folds the values into fuzz_sink so nothing is optimised away.  The
header's accessors have a fixed shape (see mdp3_gen.py):
  int NAME(const struct mdp3_msg *msg, T *value)        root field
  int NAME(const struct mdp3_msg *msg, struct mdp3_group *group)  group
  int NAME(const struct mdp3_group *group, T *value)    group field
  int NAME(..., const char **chars, size_t *length)     char array
each body starting with MDP3__CHECK_TEMPLATE(msg, ID) or
MDP3__CHECK_GROUP(group, TAG); a group opener calls mdp3_msg_group(msg, I,
...) and is documented "Repeating group NAME (tag TAG)".

--flavour il3 (lib/ilink3/generated/il3_cme_gen.h): fuzz_il3_touch_typed(msg)
switches on templateId the same way.  Root accessors take
(const struct il3_msg *msg, T *value) and start with IL3__CHECK_TEMPLATE;
group accessors take (const struct il3_group *group, T *value), start with
IL3__CHECK_GROUP(group, TAG) and are named after their group, whose index
the header defines (IL3_<MESSAGE>_<GROUP>_INDEX, for il3_msg_group()).  The
bytes each accessor reads are taken from its body (il3__load_*(root + N),
zero-copy strings of length L at N); every result goes through
fuzz_il3_read(rc, END, block_length), which checks the return code and that
a field the accessor did not call absent (-ENOENT) lies inside the block.

Anything else is refused, so a change of a code generator shows up here
instead of silently leaving accessors out.

usage: gen_fuzz_accessors.py [--flavour mdp3|il3] --header HEADER --out FILE.c
"""
import argparse
import os
import re
import sys

SECTION = re.compile(r'^/\* (\w+): schema (\d+), template (\d+), versions [\d,]+ \*/$', re.M)
FUNC = re.compile(r'(/\*\*(?:(?!\*/).)*\*/)\s*static inline int\s*\n'
                  r'(mdp3_\w+)\(([^)]*)\)\s*\{(.*?)\n\}', re.S)


class Refused(Exception):
    pass


def classify(a, rest, prefix):
    """Kind (and value type) of accessor a from its parameters after the view."""
    if rest == 'const char **chars, size_t *length':
        a['kind'] = 'chars'
        return
    vm = re.match(r'^(struct %s_decimal|u?int(8|16|32|64)_t|char) \*value$' % prefix, rest)
    if vm is None:
        raise Refused('%s: unexpected value parameter %r' % (a['name'], rest))
    a['kind'] = 'value'
    a['type'] = vm.group(1)


def parse(text):
    """[(schema, template, name, [accessor dicts])] in header order."""
    sections = [(m.start(), int(m.group(2)), int(m.group(3)), m.group(1))
                for m in SECTION.finditer(text)]
    out = {}
    order = []
    for m in FUNC.finditer(text):
        doc, name, params, body = m.group(1), m.group(2), m.group(3), m.group(4)
        sec = None
        for start, schema, template, mname in sections:
            if start < m.start():
                sec = (schema, template, mname)
        if sec is None:
            continue
        params = re.sub(r'\s+', ' ', params).strip()
        a = {'name': name, 'params': params}
        if params.startswith('const struct mdp3_msg *msg'):
            a['on'] = 'msg'
            chk = re.search(r'MDP3__CHECK_TEMPLATE\(msg, (\d+)\)', body)
            if chk is None or int(chk.group(1)) != sec[1]:
                raise Refused('%s: no template check for %d' % (name, sec[1]))
        elif params.startswith('const struct mdp3_group *group'):
            a['on'] = 'group'
            chk = re.search(r'MDP3__CHECK_GROUP\(group, (\d+)\)', body)
            if chk is None:
                raise Refused('%s: no group check' % name)
            a['tag'] = int(chk.group(1))
        else:
            raise Refused('%s: unexpected parameters %r' % (name, params))
        rest = params.split(',', 1)[1].strip()
        if rest == 'struct mdp3_group *group' or rest == 'struct mdp3_group *nested':
            tag = re.search(r'Repeating group \w+ \(tag (\d+)\)', doc)
            if tag is None:
                raise Refused('%s: group opener without its tag' % name)
            a['kind'] = 'opener'
            a['opens'] = int(tag.group(1))
        else:
            classify(a, rest, 'mdp3')
        key = sec
        if key not in out:
            out[key] = []
            order.append(key)
        out[key].append(a)
    return [(k[0], k[1], k[2], out[k]) for k in order]


def call(a, view, indent, check=None):
    """Lines calling accessor a on view; its return code goes to check (a
    format taking the call) or into fuzz_sink."""
    t = '\t' * indent
    use = check if check is not None else 'fuzz_sink += (uint64_t)%s;'
    if a['kind'] == 'chars':
        return [t + '{', t + '\tconst char *chars = NULL;', t + '\tsize_t length = 0, i;', '',
                t + '\t' + use % ('%s(%s, &chars, &length)' % (a['name'], view)),
                t + '\tfor (i = 0; chars != NULL && i < length; i++)',
                t + '\t\tfuzz_sink += (uint8_t)chars[i];', t + '}']
    if a['type'].endswith('_decimal'):
        return [t + '{', t + '\t%s value = { 0, 0 };' % a['type'], '',
                t + '\t' + use % ('%s(%s, &value)' % (a['name'], view)),
                t + '\tfuzz_sink += (uint64_t)value.mantissa + (uint64_t)value.exponent;',
                t + '}']
    return [t + '{', t + '\t%s value = 0;' % a['type'], '',
            t + '\t' + use % ('%s(%s, &value)' % (a['name'], view)),
            t + '\tfuzz_sink += (uint64_t)value;', t + '}']


def touch_function(schema, template, mname, accessors):
    fname = 'touch_s%d_t%d' % (schema, template)
    root = [a for a in accessors if a['on'] == 'msg']
    by_tag = {}
    for a in accessors:
        if a['on'] == 'group':
            by_tag.setdefault(a['tag'], []).append(a)
    lines = ['/* %s */' % mname, 'static void', '%s(const struct mdp3_msg *msg)' % fname, '{']
    groups = [a for a in root if a['kind'] == 'opener']
    if groups:
        lines.append('\tstruct mdp3_group g;')
        lines.append('')
    emitted = set()
    for a in root:
        if a['kind'] != 'opener':
            lines += call(a, 'msg', 1)
            continue
        lines.append('\tif (%s(msg, &g) == 0) {' % a['name'])
        lines.append('\t\twhile (mdp3_group_next(&g)) {')
        for ga in by_tag.get(a['opens'], []):
            if ga['kind'] == 'opener':
                raise Refused('%s: nested groups are not supported here' % ga['name'])
            lines += call(ga, '&g', 3)
            emitted.add(ga['name'])
        lines.append('\t\t}')
        lines.append('\t}')
    left = [ga['name'] for ga in accessors if ga['on'] == 'group' and ga['name'] not in emitted]
    if left:
        raise Refused('%s: group accessors not reached: %s' % (mname, left[:3]))
    lines.append('}')
    return fname, lines


IL3_SECTION = re.compile(r'^/\* (\w+): template (\d+), versions [\d,]+ \*/$', re.M)
IL3_FUNC = re.compile(r'static inline int\s*\n(il3_\w+)\(([^)]*)\)\s*\{(.*?)\n\}', re.S)
IL3_INDEX = re.compile(r'^#define IL3_(\w+)_INDEX (\d+)$', re.M)
IL3_LOAD = re.compile(r'il3__load_u?int(\d+)\((?:msg->root|group->entry) \+ (\d+)\)')
IL3_CHARS = re.compile(r'\(const char \*\)\((?:msg->root|group->entry) \+ (\d+)\);\s*'
                       r'\*length = il3__strnlen\(\*chars, (\d+)\);')


def il3_extent(name, body):
    """One past the last byte of the block the accessor body reads (0: none)."""
    spans = [int(o) + int(b) // 8 for b, o in IL3_LOAD.findall(body)]
    spans += [int(o) + int(n) for o, n in IL3_CHARS.findall(body)]
    if len(spans) != body.count('msg->root') + body.count('group->entry'):
        raise Refused('%s: a read of the block of unknown shape' % name)
    return max(spans, default=0)


def parse_il3(text):
    """[(template, name, root accessors, [(group index macro, tag, accessors)])]."""
    sections = [(m.start(), int(m.group(2)), m.group(1)) for m in IL3_SECTION.finditer(text)]
    bounds = [st for st, _, _ in sections] + [len(text)]
    messages = []
    for i, (start, template, mname) in enumerate(sections):
        part = text[start:bounds[i + 1]]
        groups = {'il3_%s_' % g.lower(): ['IL3_%s_INDEX' % g, None, [], int(index)]
                  for g, index in IL3_INDEX.findall(part)}
        root = []
        for m in IL3_FUNC.finditer(part):
            name, params, body = m.group(1), re.sub(r'\s+', ' ', m.group(2)), m.group(3)
            view, rest = [x.strip() for x in params.split(',', 1)]
            a = {'name': name, 'end': il3_extent(name, body)}
            classify(a, rest, 'il3')
            if view == 'const struct il3_msg *msg':
                chk = re.search(r'IL3__CHECK_TEMPLATE\(msg, (\d+)\)', body)
                if chk is None or int(chk.group(1)) != template:
                    raise Refused('%s: no template check for %d' % (name, template))
                root.append(a)
                continue
            if view != 'const struct il3_group *group':
                raise Refused('%s: unexpected parameters %r' % (name, params))
            chk = re.search(r'IL3__CHECK_GROUP\(group, (\d+)\)', body)
            owner = max((p for p in groups if name.startswith(p)), key=len, default=None)
            if chk is None or owner is None:
                raise Refused('%s: no group check or no group index' % name)
            g = groups[owner]
            if g[1] not in (None, int(chk.group(1))):
                raise Refused('%s: group tags differ' % name)
            g[1] = int(chk.group(1))
            g[2].append(a)
        if any(g[1] is None for g in groups.values()):
            raise Refused('%s: a group without accessors' % mname)
        in_order = sorted(groups.values(), key=lambda g: g[3])
        messages.append((template, mname, root, [tuple(g[:3]) for g in in_order]))
    return messages


def touch_il3(template, mname, root, groups):
    fname = 'touch_t%d' % template
    lines = ['/* %s */' % mname, 'static void', '%s(const struct il3_msg *msg)' % fname, '{']
    if groups:
        lines += ['\tstruct il3_group g;', '']
    for a in root:
        lines += call(a, 'msg', 1, 'fuzz_il3_read(%%s, %d, msg->block_length);' % a['end'])
    for index, tag, accessors in groups:
        lines.append('\tif (fuzz_il3_group_open(msg, %s, %d, &g)) {' % (index, tag))
        lines.append('\t\twhile (il3_group_next(&g)) {')
        for a in accessors:
            lines += call(a, '&g', 3, 'fuzz_il3_read(%%s, %d, g.block_length);' % a['end'])
        lines += ['\t\t}', '\t}']
    lines.append('}')
    return fname, lines


def dispatch(signature, key, cases):
    """A switch calling each case's touch function; returns 1 on a known case."""
    out = ['int', signature, '{', '\tswitch (%s) {' % key]
    for label, fname in cases:
        out += ['\tcase %s:' % label, '\t\t%s(msg);' % fname, '\t\treturn 1;']
    return out + ['\tdefault:', '\t\treturn 0;', '\t}', '}']


def generate(flavour, text):
    """The C file's lines and the number of accessors called."""
    out = []
    cases = []
    if flavour == 'mdp3':
        messages = parse(text)
        total = sum(len(m[3]) for m in messages)
        for schema, template, mname, accessors in messages:
            fname, lines = touch_function(schema, template, mname, accessors)
            out += lines + ['']
            cases.append(('UINT32_C(%d) << 16 | %d' % (schema, template), fname))
        out += dispatch('fuzz_touch_typed(const struct mdp3_msg *msg)',
                        '(uint32_t)msg->schema_id << 16 | msg->template_id', cases)
    else:
        messages = parse_il3(text)
        total = sum(len(m[2]) + sum(len(g[2]) for g in m[3]) for m in messages)
        for template, mname, root, groups in messages:
            fname, lines = touch_il3(template, mname, root, groups)
            out += lines + ['']
            cases.append(('%d' % template, fname))
        out += dispatch('fuzz_il3_touch_typed(const struct il3_msg *msg)', 'msg->template_id',
                        cases)
    declared = len(re.findall(r'static inline int\s*\n%s_\w+\(' % flavour, text))
    if total != declared:
        raise Refused('%d accessors parsed, the header declares %d' % (total, declared))
    return out, total


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--flavour', choices=('mdp3', 'il3'), default='mdp3')
    ap.add_argument('--header', required=True)
    ap.add_argument('--out', required=True)
    args = ap.parse_args()
    with open(args.header) as f:
        text = f.read()
    try:
        body, total = generate(args.flavour, text)
    except Refused as e:
        print('gen_fuzz_accessors.py: %s: %s' % (args.header, e), file=sys.stderr)
        return 1
    out = ['/* SPDX-License-Identifier: BSD-3-Clause */',
           '/* GENERATED by tests/fuzz/gen_fuzz_accessors.py from %s: calls' %
           os.path.basename(args.header),
           ' * each of its %d typed accessors.  Do not edit. */' % total,
           '#include <stddef.h>', '#include <stdint.h>', '',
           '#include "fuzz_%s.h"' % args.flavour, ''] + body
    with open(args.out, 'w') as f:
        f.write('\n'.join(out) + '\n')
    return 0

if __name__ == '__main__':
    sys.exit(main())
