#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write a C function that calls every typed accessor of a generated MDP3
header (lib/mdp3/generated/mdp3_cme_gen.h) on a message, for the fuzz
harness: fuzz_touch_typed(msg) switches on (schemaId, templateId), reads
every root field, opens every group, walks every entry and reads every
field of it (strings byte by byte), and folds the values into fuzz_sink so
nothing is optimised away.

The header's accessors have a fixed shape (see mdp3_gen.py):
  int NAME(const struct mdp3_msg *msg, T *value)        root field
  int NAME(const struct mdp3_msg *msg, struct mdp3_group *group)  group
  int NAME(const struct mdp3_group *group, T *value)    group field
  int NAME(..., const char **chars, size_t *length)     char array
each body starting with MDP3__CHECK_TEMPLATE(msg, ID) or
MDP3__CHECK_GROUP(group, TAG); a group opener calls mdp3_msg_group(msg, I,
...) and is documented "Repeating group NAME (tag TAG)".  Anything else is
refused, so a change of the generator shows up here instead of silently
leaving accessors out.

usage: gen_fuzz_accessors.py --header mdp3_cme_gen.h --out fuzz_accessors_gen.c
"""
import argparse
import re
import sys

SECTION = re.compile(r'^/\* (\w+): schema (\d+), template (\d+), versions [\d,]+ \*/$', re.M)
FUNC = re.compile(r'(/\*\*(?:(?!\*/).)*\*/)\s*static inline int\s*\n'
                  r'(mdp3_\w+)\(([^)]*)\)\s*\{(.*?)\n\}', re.S)


class Refused(Exception):
    pass


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
        elif rest == 'const char **chars, size_t *length':
            a['kind'] = 'chars'
        else:
            vm = re.match(r'^(struct mdp3_decimal|u?int(8|16|32|64)_t|char) \*value$', rest)
            if vm is None:
                raise Refused('%s: unexpected value parameter %r' % (name, rest))
            a['kind'] = 'value'
            a['type'] = vm.group(1)
        key = sec
        if key not in out:
            out[key] = []
            order.append(key)
        out[key].append(a)
    return [(k[0], k[1], k[2], out[k]) for k in order]


def call(a, view, indent):
    t = '\t' * indent
    if a['kind'] == 'chars':
        return [t + '{', t + '\tconst char *chars = NULL;', t + '\tsize_t length = 0, i;', '',
                t + '\tfuzz_sink += (uint64_t)%s(%s, &chars, &length);' % (a['name'], view),
                t + '\tfor (i = 0; chars != NULL && i < length; i++)',
                t + '\t\tfuzz_sink += (uint8_t)chars[i];', t + '}']
    if a['type'] == 'struct mdp3_decimal':
        return [t + '{', t + '\tstruct mdp3_decimal value = { 0, 0 };', '',
                t + '\tfuzz_sink += (uint64_t)%s(%s, &value);' % (a['name'], view),
                t + '\tfuzz_sink += (uint64_t)value.mantissa + (uint64_t)value.exponent;',
                t + '}']
    return [t + '{', t + '\t%s value = 0;' % a['type'], '',
            t + '\tfuzz_sink += (uint64_t)%s(%s, &value);' % (a['name'], view),
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--header', required=True)
    ap.add_argument('--out', required=True)
    args = ap.parse_args()
    with open(args.header) as f:
        text = f.read()
    try:
        messages = parse(text)
        total = sum(len(m[3]) for m in messages)
        declared = len(re.findall(r'static inline int\s*\nmdp3_\w+\(', text))
        if total != declared:
            raise Refused('%d accessors parsed, the header declares %d' % (total, declared))
        out = ['/* SPDX-License-Identifier: BSD-3-Clause */',
               '/* GENERATED by tests/fuzz/gen_fuzz_accessors.py from mdp3_cme_gen.h: calls',
               ' * each of its %d typed accessors.  Do not edit. */' % total,
               '#include <stddef.h>', '#include <stdint.h>', '',
               '#include "fuzz_mdp3.h"', '']
        cases = []
        for schema, template, mname, accessors in messages:
            fname, lines = touch_function(schema, template, mname, accessors)
            out += lines + ['']
            cases.append((schema, template, fname))
        out += ['int', 'fuzz_touch_typed(const struct mdp3_msg *msg)', '{',
                '\tswitch ((uint32_t)msg->schema_id << 16 | msg->template_id) {']
        for schema, template, fname in cases:
            out += ['\tcase UINT32_C(%d) << 16 | %d:' % (schema, template),
                    '\t\t%s(msg);' % fname, '\t\treturn 1;']
        out += ['\tdefault:', '\t\treturn 0;', '\t}', '}']
    except Refused as e:
        print('gen_fuzz_accessors.py: %s: %s' % (args.header, e), file=sys.stderr)
        return 1
    with open(args.out, 'w') as f:
        f.write('\n'.join(out) + '\n')
    return 0


if __name__ == '__main__':
    sys.exit(main())
