#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 tickwire
"""tickwire-check end to end: output and exit codes for good and bad inputs.

usage: test_check.py TICKWIRE_CHECK SOURCE_ROOT
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

CHECK, ROOT = sys.argv[1], sys.argv[2]
DEMO = ['--ports', f'{ROOT}/dpdk-config/demo/ports.ini',
        '--config', f'{ROOT}/dpdk-config/demo/tickwire.cfg']
COLO = ['--ports', f'{ROOT}/dpdk-config/colo-example/ports.ini',
        '--config', f'{ROOT}/dpdk-config/colo-example/tickwire.cfg']
COLO_TOPOLOGY = 'pack:2 numa:1 core:8 pu:2(indexes=2*8:16*2:1*2)'
COLO_CMDLINE = ('isolcpus=managed_irq,domain,2-5,18-21 nohz_full=2-5,18-21 '
                'rcu_nocbs=2-5,18-21 irqaffinity=0-1,6-17,22-31 '
                'default_hugepagesz=1G hugepagesz=1G hugepages=2 '
                'processor.max_cstate=1 intel_idle.max_cstate=0 intel_iommu=on iommu=pt')
FINDING = re.compile(r'^(?P<file>[^:\s]+)(:(?P<line>\d+))?: (?P<sev>info|warning|error): '
                     r'(?P<msg>.+?)(; hint: (?P<hint>.+))?$')

failures = []


def run(*args):
    p = subprocess.run([CHECK, *args], capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


def check(name, cond, detail=''):
    print(('ok   ' if cond else 'FAIL ') + name)
    if not cond:
        failures.append(name)
        if detail:
            print('     ' + detail.replace('\n', '\n     '))


def findings(text):
    return [m.groupdict() for m in map(FINDING.match, text.splitlines()) if m]


def fake_sysfs(base, isolated, nohz, pci_nodes):
    cpu = os.path.join(base, 'devices/system/cpu')
    os.makedirs(cpu)
    with open(os.path.join(cpu, 'isolated'), 'w') as f:
        f.write(isolated + '\n')
    with open(os.path.join(cpu, 'nohz_full'), 'w') as f:
        f.write(nohz + '\n')
    for addr, node in pci_nodes.items():
        d = os.path.join(base, 'bus/pci/devices', addr)
        os.makedirs(d)
        with open(os.path.join(d, 'numa_node'), 'w') as f:
            f.write(f'{node}\n')


tmp = tempfile.mkdtemp(prefix='tw-check-test-')
try:
    # The demo profile on a 2-cpu machine: warnings only, exit 0.
    rc, out, err = run(*DEMO, '--synthetic', 'pack:1 core:2 pu:1')
    check('demo: exit 0', rc == 0, out + err)
    fs = findings(out)
    check('demo: no errors', not any(f['sev'] == 'error' for f in fs), out)
    check('demo: warnings name tickwire.cfg lines',
          any(f['sev'] == 'warning' and f['file'].endswith('demo/tickwire.cfg') and f['line']
              for f in fs), out)
    check('demo: every finding line is well formed',
          all(FINDING.match(l) for l in out.split('\n\n')[0].splitlines()), out)
    check('demo: summary', 'tickwire-check: 0 errors,' in out, out)
    check('demo: kernel command line printed',
          'kernel command line:\n  default_hugepagesz=2M hugepagesz=2M hugepages=102 '
          'processor.max_cstate=1 intel_idle.max_cstate=0\n' in out, out)

    # colo-example on its machine (synthetic topology + fake sysfs): clean, exact cmdline.
    sysfs = os.path.join(tmp, 'sys-good')
    fake_sysfs(sysfs, '2-5,18-21', '2-5,18-21', {'0000:3b:00.0': 0, '0000:3b:00.1': 0})
    rc, out, err = run(*COLO, '--synthetic', COLO_TOPOLOGY, '--sysfs', sysfs)
    check('colo-example: exit 0', rc == 0, out + err)
    check('colo-example: no topology findings but the sibling note',
          not any(f['sev'] == 'error' for f in findings(out)), out)
    check('colo-example: exact kernel command line',
          f'kernel command line:\n  {COLO_CMDLINE}\n' in out, out)
    check('colo-example: tuned variables',
          '  isolated_cores=2-5,18-21\n  no_balance_cores=2-5,18-21\n' in out, out)

    # --format shell: stdout is only KEY='VALUE' lines, and sh can source it.
    rc, out, err = run(*COLO, '--synthetic', COLO_TOPOLOGY, '--sysfs', sysfs,
                       '--format', 'shell')
    check('shell: exit 0', rc == 0, out + err)
    pairs = dict(re.fullmatch(r"([A-Z_]+)='([^']*)'", l).groups() for l in out.splitlines())
    check('shell: only KEY=VALUE lines', len(pairs) == len(out.splitlines()), out)
    check('shell: TW_KERNEL_CMDLINE', pairs.get('TW_KERNEL_CMDLINE') == COLO_CMDLINE, out)
    check('shell: variables', pairs.get('TUNED_ISOLATED_CORES') == '2-5,18-21' and
          pairs.get('TUNED_NO_BALANCE_CORES') == '2-5,18-21' and
          pairs.get('TW_HOUSEKEEPING_CPUS') == '0-1,6-17,22-31' and
          pairs.get('TW_HUGEPAGE_SIZE') == '1G' and pairs.get('TW_HUGEPAGES') == '2' and
          pairs.get('TW_ERRORS') == '0', out)
    check('shell: findings on stderr', 'tickwire-check: 0 errors' in err, err)
    script = os.path.join(tmp, 'vars.sh')
    with open(script, 'w') as f:
        f.write(out)
    sourced = subprocess.run(
        ['sh', '-c', f'. "{script}" && echo "$TW_HUGEPAGES $TW_ISOLATED_CPUS"'],
        capture_output=True, text=True)
    check('shell: sourceable by sh', sourced.stdout.strip() == '2 2-5,18-21',
          sourced.stdout + sourced.stderr)

    # colo-example where the machine is not tuned: refused, exit 1, each finding names a line.
    sysfs_bad = os.path.join(tmp, 'sys-bad')
    fake_sysfs(sysfs_bad, '', '', {'0000:3b:00.0': 1, '0000:3b:00.1': 1})
    rc, out, err = run(*COLO, '--synthetic', COLO_TOPOLOGY, '--sysfs', sysfs_bad)
    check('colo-example untuned: exit 1', rc == 1, out + err)
    errors = [f for f in findings(out) if f['sev'] == 'error']
    check('colo-example untuned: 7 errors with lines and hints',
          len(errors) == 7 and all(f['line'] and f['hint'] for f in errors), out)
    check('colo-example untuned: isolation error at lcores.decode',
          any('lcores.decode = 4: cpu 4 not isolated' in f['msg'] for f in errors), out)

    # A broken profile: the error names file, line and reason; exit 1.
    bad = os.path.join(tmp, 'bad')
    os.makedirs(bad)
    shutil.copy(f'{ROOT}/dpdk-config/demo/ports.ini', bad)
    with open(f'{ROOT}/dpdk-config/demo/tickwire.cfg') as f:
        text = f.read()
    line = text[:text.index('  decode = 3;')].count('\n') + 1
    with open(os.path.join(bad, 'tickwire.cfg'), 'w') as f:
        f.write(text.replace('  decode = 3;', '  decode = 9;'))
    rc, out, err = run('--ports', f'{bad}/ports.ini', '--config', f'{bad}/tickwire.cfg')
    check('bad profile: exit 1', rc == 1, out + err)
    check('bad profile: file, line and reason',
          f'{bad}/tickwire.cfg:{line}: error: lcores.decode = 9: not an lcore of eal.lcores'
          in out, out)
    check('bad profile: no tuning printed', 'kernel command line' not in out, out)
    rc, out, err = run('--ports', f'{bad}/ports.ini', '--config', f'{bad}/tickwire.cfg',
                       '--format', 'shell')
    check('bad profile, shell: exit 1, only the counters on stdout',
          rc == 1 and out.startswith("TW_ERRORS='1'") and 'decode = 9' in err, out + err)

    # PCI ports need the IOMMU: the words follow the CPU vendor (issue 19, item 8).
    def shell_pairs(out):
        return dict(re.fullmatch(r"([A-Z_]+)='([^']*)'", l).groups() for l in out.splitlines())

    base = [*COLO, '--synthetic', COLO_TOPOLOGY, '--sysfs', sysfs, '--format', 'shell']
    for vendor, words in [('intel', 'intel_iommu=on iommu=pt'), ('amd', 'iommu=pt')]:
        rc, out, err = run(*base, '--cpu-vendor', vendor)
        pairs = shell_pairs(out)
        check(f'iommu: --cpu-vendor {vendor}: TW_IOMMU_CMDLINE={words}',
              rc == 0 and pairs.get('TW_IOMMU_CMDLINE') == words, out + err)
        check(f'iommu: --cpu-vendor {vendor}: the words end TW_KERNEL_CMDLINE, once',
              pairs.get('TW_KERNEL_CMDLINE', '').endswith(' intel_idle.max_cstate=0 ' + words)
              and pairs['TW_KERNEL_CMDLINE'].count('iommu=pt') == 1, out)
        check(f'iommu: --cpu-vendor {vendor}: no vendor note',
              'vendor being unknown' not in err, err)
    rc, out, err = run(*base)
    check('iommu: synthetic topology, no vendor: Intel words and an info finding at the pci line',
          shell_pairs(out).get('TW_IOMMU_CMDLINE') == 'intel_iommu=on iommu=pt' and
          any(f['sev'] == 'info' and f['file'].endswith('colo-example/ports.ini') and f['line']
              and 'vendor being unknown' in f['msg'] for f in findings(err)), out + err)
    check('iommu: PCI ports listed, canonical',
          shell_pairs(out).get('TW_PCI_PORTS') == '0000:3b:00.0 0000:3b:00.1', out)
    xml = os.path.join(tmp, 'amd.xml')
    with open(os.path.join(ROOT, 'tests/config/data/numa2-nic.xml')) as f:
        text = f.read()
    at = text.index('>', text.index('<object type="Package"')) + 1
    with open(xml, 'w') as f:
        f.write(text[:at] + '<info name="CPUVendor" value="AuthenticAMD"/>' + text[at:])
    rc, out, err = run(*COLO, '--topology', xml, '--format', 'shell')
    check("iommu: the XML topology's CPUVendor (AMD): iommu=pt",
          shell_pairs(out).get('TW_IOMMU_CMDLINE') == 'iommu=pt' and
          'vendor being unknown' not in err, out + err)
    rc, out, err = run(*DEMO, '--synthetic', 'pack:1 core:2 pu:1', '--format', 'shell')
    pairs = shell_pairs(out)
    check('iommu: a vdev-only profile: no IOMMU words, no PCI ports',
          pairs.get('TW_IOMMU_CMDLINE') == '' and pairs.get('TW_PCI_PORTS') == '' and
          'iommu' not in pairs.get('TW_KERNEL_CMDLINE', 'iommu'), out + err)
    # TW_SESSION_FILE: session.file, read back by sh even with a quote in it
    rc, out, err = run(*base, '--cpu-vendor', 'intel')
    check('session: TW_SESSION_FILE is session.file',
          shell_pairs(out).get('TW_SESSION_FILE') == '/var/lib/tickwire/ilink3.session', out)
    qcfg = os.path.join(tmp, 'quote.cfg')
    with open(COLO[3]) as f:
        text = f.read()
    with open(qcfg, 'w') as f:
        f.write(text.replace('/var/lib/tickwire/ilink3.session', "/var/lib/tick'wire/ilink3.session"))
    rc, out, err = run(COLO[0], COLO[1], '--config', qcfg, '--synthetic', COLO_TOPOLOGY,
                       '--sysfs', sysfs, '--format', 'shell')
    sh = subprocess.run(['sh', '-c', 'eval "$1"; printf %s "$TW_SESSION_FILE"', 'sh', out],
                        capture_output=True, text=True)
    check("session: a quote in session.file survives sh", sh.stdout == "/var/lib/tick'wire/ilink3.session",
          out + sh.stderr)
    rc, out, err = run(*COLO, '--synthetic', COLO_TOPOLOGY, '--sysfs', sysfs, '--cpu-vendor', 'amd')
    check('iommu: text format names the PCI ports and the words',
          'PCI ports (vfio-pci, IOMMU: iommu=pt): 0000:3b:00.0 0000:3b:00.1\n' in out, out)

    # A quoted pci = "ADDR" (iniparser unquotes every value): accepted, and
    # TW_PCI_PORTS carries the bare address the binding script uses.
    quoted = os.path.join(tmp, 'quoted')
    os.makedirs(quoted)
    with open(f'{ROOT}/dpdk-config/colo-example/ports.ini') as f:
        text = f.read()
    text = re.sub(r'(?m)^pci = (\S+)$', r'pci = "\1"', text)
    text = text.replace('pci = "0000:3b:00.1"', 'pci = "3B:00.1"')
    check('quoted: the fixture has quoted pci keys', text.count('pci = "') == 2, text)
    with open(os.path.join(quoted, 'ports.ini'), 'w') as f:
        f.write(text)
    rc, out, err = run('--ports', f'{quoted}/ports.ini', '--config',
                       f'{ROOT}/dpdk-config/colo-example/tickwire.cfg', '--synthetic',
                       COLO_TOPOLOGY, '--sysfs', sysfs, '--format', 'shell')
    check('quoted: exit 0, TW_PCI_PORTS bare and canonical',
          rc == 0 and shell_pairs(out).get('TW_PCI_PORTS') == '0000:3b:00.0 0000:3b:00.1',
          out + err)

    # Usage errors: exit 2.
    for name, args in [
            ('no arguments', []),
            ('missing --config', ['--ports', 'x']),
            ('unknown option', [*DEMO, '--frobnicate']),
            ('stray argument', [*DEMO, 'extra']),
            ('bad format', [*DEMO, '--format', 'xml']),
            ('bad cpu vendor', [*DEMO, '--cpu-vendor', 'via']),
            ('two topologies', [*DEMO, '--synthetic', 'pu:2', '--topology', 'x.xml']),
            ('bad synthetic', [*DEMO, '--synthetic', 'pack:2 bogus:3']),
            ('missing XML', [*DEMO, '--topology', os.path.join(tmp, 'none.xml')])]:
        rc, out, err = run(*args)
        check(f'usage: {name}: exit 2', rc == 2 and err, f'rc={rc}\n{out}{err}')
    rc, out, err = run('--help')
    check('--help: exit 0, usage on stdout', rc == 0 and out.startswith('usage:'), out + err)
finally:
    shutil.rmtree(tmp)

print(f'{len(failures)} failed' if failures else 'all passed')
sys.exit(1 if failures else 0)
