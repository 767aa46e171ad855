#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""One file opener for the hierarchy: src/lib/backend/cgroupfs.c.

cgroupfs.c resolves every path beneath the root without following symlinks
or crossing mounts, with a fallback where openat2(2) is missing. A second
opener of the hierarchy would not, so this check fails when
  - any file under src/ other than cgroupfs.c uses openat2(2) (the syscall
    number or <linux/openat2.h>): nothing but cgroupfs.c needs it;
  - any file under src/ other than cgroupfs.c calls open(2), openat(2),
    opendir(3), fopen(3), ... in a way that ALLOWED below does not list
    (file, function, first argument), each with the reason it is not the
    hierarchy;
  - an ALLOWED entry matches nothing any more (keep the list exact).
Comments and string literals are not code: a mention of open(2) there is
no call.

Usage: check-one-opener.py SRCDIR        (TAP on stdout)
"""
import os
import re
import sys

OPENER = 'src/lib/backend/cgroupfs.c'

# (file, function, first argument as written): why it is not the managed hierarchy
ALLOWED = {
    ('src/lib/backend/backend.c', 'open', 'state_dir'): 'the state directory',
    ('src/lib/backend/backend.c', 'openat', 'b->state_fd'): 'the state directory\'s lock file',
    ('src/lib/backend/backend-state.c', 'openat', 'state_fd'): 'a file of the state directory',
    ('src/lib/util/fileio.c', 'open', 'dir'): 'atomic writes of state files (backend-state.c, desired.c, client-changes.c)',
    ('src/lib/util/fileio.c', 'openat', 'dir_fd'): 'atomic writes of state files, and the fsync of their directory',
    ('src/lib/policy/desired.c', 'open', 'path'): 'the applied state, in the state directory',
    ('src/daemon/client-changes.c', 'fopen', 'path'): 'the client changes, in the state directory',
    ('src/daemon/change-journal.c', 'fopen', 'path'): 'the journal of client changes, in the state directory',
    ('src/daemon/change-journal.c', 'open', 'path'): 'a commit to the journal of client changes, by name',
    ('src/daemon/change-journal.c', 'open', 'j->dir'): 'the fsync of the state directory after the journal is made',
    ('src/daemon/runtime-delegations.c', 'fopen', 'where'): 'the run-time delegations, in the state directory',
    ('src/lib/config/config.c', 'fopen', 'path'): 'a configuration file',
    ('src/lib/config/config.c', 'opendir', 'dir'): 'a configuration directory (conf.d)',
    ('src/lib/backend/kernel-scan.c', 'fopen', 'FEATURES_PATH'): '/sys/kernel/cgroup/features, not a cgroup',
    ('src/lib/backend/kernel-scan.c', 'fopen', '"/proc/cmdline"'): 'the kernel command line',
    ('src/lib/backend/kernel-scan.c', 'fopen', '"/proc/cgroups"'): 'the kernel\'s list of controllers',
    ('src/lib/backend/mountinfo.c', 'fopen', 'mountinfo'): 'a mount table (/proc/self/mountinfo)',
    ('src/lib/trace/trace-parse.c', 'open', 'path'): 'a trace file',
    ('src/trace/cgbypass-tracegen.c', 'fopen', 'path'): 'the trace file it writes',
    ('src/oci-hook/cgbypass-oci-hook.c', 'fopen', 'path'): 'the bundle\'s config.json, and /proc/PID/cgroup',
    # The conformance runner (cgbypass-trace --kernel, cgbypass-conform) replays a
    # trace on a scratch cgroup2 directory of its own, never a managed hierarchy,
    # with exactly one open(2) per trace line, as the trace format promises.
    ('src/lib/trace/trace-run-kernel.c', 'open', 'dir'): 'the conformance runner\'s scratch cgroup',
    ('src/lib/trace/trace-run-kernel.c', 'openat', 'dirfd'): 'the conformance runner\'s scratch cgroup',
}

CALL = re.compile(r'(?<![\w>.*&])(open|openat|openat2|opendir|fopen|freopen|creat|open_tree|'
                  r'open_by_handle_at|name_to_handle_at)\s*\(')
OPENAT2 = re.compile(r'\b(SYS_openat2|__NR_openat2)\b|#\s*include\s*<linux/openat2\.h>')


def blank(text):
    """@text with comments and string/char literals blanked, offsets kept."""
    out, i, n = [], 0, len(text)
    while i < n:
        if text.startswith('/*', i):
            j = text.find('*/', i + 2)
            j = n if j < 0 else j + 2
        elif text.startswith('//', i):
            j = text.find('\n', i)
            j = n if j < 0 else j
        elif text[i] in '"\'':
            j = i + 1
            while j < n and text[j] != text[i] and text[j] != '\n':
                j += 2 if text[j] == '\\' else 1
            out.append(text[i] + re.sub(r'[^\n]', ' ', text[i + 1:j]) + text[j:j + 1])
            i = j + 1
            continue
        else:
            out.append(text[i])
            i += 1
            continue
        out.append(re.sub(r'[^\n]', ' ', text[i:j]))
        i = j
    return ''.join(out)


def first_argument(text, code, start):
    """The first argument of the call whose '(' is at @start, as written."""
    depth, i = 0, start
    while i < len(code):
        c = code[i]
        if c in '([{':
            depth += 1
        elif c in ')]}':
            depth -= 1
            if depth == 0:
                break
        elif c == ',' and depth == 1:
            break
        i += 1
    return ' '.join(text[start + 1:i].split())


def scan(name, text):
    """(calls, openat2 uses): [(line, function, first argument)], [line]"""
    code = blank(text)
    calls = [(code.count('\n', 0, m.start()) + 1, m.group(1), first_argument(text, code, m.end() - 1))
             for m in CALL.finditer(code)]
    uses = [code.count('\n', 0, m.start()) + 1 for m in OPENAT2.finditer(code)]
    return calls, sorted(set(uses))


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    top = sys.argv[1]
    tests = []

    sample = ('/* open(2) in a comment */ const char *s = "openat(fd, x)";\n'
              'int f(int d) { return syscall(SYS_openat2, d, "x", &how, sizeof how) + openat(d, "x", 0) +\n'
              '        b->vtable->open(b); }\n')
    calls, uses = scan('sample', sample)
    tests.append(('the check finds openat2(2) and openat(2) in a sample, not a comment, a string or ->open()',
                  calls == [(2, 'openat', 'd')] and uses == [2], ['found %r, %r' % (calls, uses)]))

    found, bad_openat2, used, openat2_in_opener = {}, [], set(), []
    for root, dirs, files in os.walk(os.path.join(top, 'src')):
        dirs.sort()
        for f in sorted(files):
            if not f.endswith(('.c', '.h')):
                continue
            path = os.path.join(root, f)
            rel = os.path.relpath(path, top)
            with open(path, encoding='utf-8') as fh:
                calls, uses = scan(rel, fh.read())
            found[rel] = calls
            if rel == OPENER:
                openat2_in_opener = uses
            else:
                bad_openat2 += ['%s:%d' % (rel, line) for line in uses]

    tests.append(('cgroupfs.c, the one opener, is where openat2(2) is called',
                  bool(openat2_in_opener),
                  ['%s has no openat2(2): is the check looking at the right tree?' % OPENER]))
    tests.append(('no file but cgroupfs.c uses openat2(2)', not bad_openat2,
                  ['%s: openat2(2) outside the one opener; use cgfs_open_dir() and friends (cgroupfs.h)' % b
                   for b in bad_openat2]))

    unlisted = []
    for rel, calls in sorted(found.items()):
        if rel == OPENER:
            continue
        for line, fn, arg in calls:
            key = (rel, fn, arg)
            if key in ALLOWED:
                used.add(key)
            else:
                unlisted.append('%s:%d: %s(%s, ...): open the hierarchy through cgroupfs.h; anything else goes '
                                'in ALLOWED of %s with the reason it is not the hierarchy'
                                % (rel, line, fn, arg, os.path.basename(__file__)))
    tests.append(('every other open(2), openat(2), opendir(3), fopen(3) under src/ is a listed non-hierarchy one',
                  not unlisted, unlisted))
    stale = ['%s: %s(%s, ...) is listed but not there any more; remove it from ALLOWED' % k
             for k in sorted(set(ALLOWED) - used)]
    tests.append(('every listed exception is still there', not stale, stale))

    print('1..%d' % len(tests))
    failed = 0
    for i, (name, ok, why) in enumerate(tests, 1):
        print('%s %d - %s' % ('ok' if ok else 'not ok', i, name))
        if not ok:
            failed += 1
            for w in why:
                print('# ' + w)
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
