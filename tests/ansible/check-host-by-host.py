#!/usr/bin/python3
"""Every play of ansible/*.yml that flashes, tunes or restarts the appliance
runs host by host and stops at the first failure: serial 1,
max_fail_percentage 0, any_errors_fatal true (rollout.yml's rule; issue 19
item 3). A play that reboots or restarts hosts all at once could take a
whole cage down.
  check-host-by-host.py SOURCE_ROOT"""
import glob
import os
import sys

import yaml

DISRUPTIVE = ('tickwire_flash', 'tickwire_tuning', 'tickwire_service')


def roles_of(play):
    """Roles a play runs: roles:, and import_role / include_role tasks (blocks too)."""
    names = [r['role'] if isinstance(r, dict) else r for r in play.get('roles', []) or []]

    def walk(tasks):
        for t in tasks or []:
            for key in ('ansible.builtin.import_role', 'ansible.builtin.include_role',
                        'import_role', 'include_role'):
                if key in t:
                    names.append(t[key]['name'])
            for key in ('block', 'rescue', 'always'):
                walk(t.get(key))
    for key in ('pre_tasks', 'tasks', 'post_tasks'):
        walk(play.get(key))
    return names


def main():
    src = sys.argv[1]
    bad, checked = [], 0
    for path in sorted(glob.glob(os.path.join(src, 'ansible', '*.yml'))):
        with open(path) as f:
            doc = yaml.safe_load(f)
        if not isinstance(doc, list):
            continue
        for play in doc:
            if not isinstance(play, dict) or 'hosts' not in play:
                continue
            roles = [r for r in roles_of(play) if r in DISRUPTIVE]
            if not roles:
                continue
            checked += 1
            where = '%s: play "%s" (%s)' % (os.path.basename(path), play.get('name'),
                                           ', '.join(sorted(set(roles))))
            if str(play.get('serial')) != '1':
                bad.append('%s: serial is %s, not 1' % (where, play.get('serial')))
            if str(play.get('max_fail_percentage')) != '0':
                bad.append('%s: max_fail_percentage is %s, not 0' %
                           (where, play.get('max_fail_percentage')))
            if play.get('any_errors_fatal') is not True:
                bad.append('%s: any_errors_fatal is not true' % where)
    for b in bad:
        print('FAIL: ' + b)
    if checked == 0:
        print('FAIL: no play flashes, tunes or restarts: nothing checked')
        return 1
    if bad:
        return 1
    print('ok: %d plays that flash, tune or restart run host by host and stop at the '
          'first failure' % checked)
    return 0


sys.exit(main())
