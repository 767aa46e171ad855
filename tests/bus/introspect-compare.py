#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Compare an interface element of a documented introspection file with what
a running object introspects (read from stdin), leaving out documentation:
org.gtk.GDBus.DocString* annotations and comments.
Usage: introspect-compare.py FILE.xml INTERFACE < introspection.xml"""
import sys
import xml.etree.ElementTree as ET


def strip_doctype(text):
    # ElementTree does not fetch DTDs, but keep it simple: drop the DOCTYPE
    start = text.find('<!DOCTYPE')
    if start >= 0:
        end = text.find('>', start)
        text = text[:start] + text[end + 1:]
    return text


def canon(elem):
    children = [canon(c) for c in elem
                if not (c.tag == 'annotation' and c.get('name', '').startswith('org.gtk.GDBus.DocString'))]
    return (elem.tag, tuple(sorted(elem.attrib.items())), tuple(children))


def render(c, depth=0):
    tag, attrs, children = c
    line = '  ' * depth + '<' + tag + ''.join(' %s="%s"' % a for a in attrs) + '>'
    return '\n'.join([line] + [render(k, depth + 1) for k in children])


def find(text, name):
    root = ET.fromstring(strip_doctype(text))
    for i in root.iter('interface'):
        if i.get('name') == name:
            return canon(i)
    return None


def main():
    path, name = sys.argv[1], sys.argv[2]
    with open(path) as f:
        want = find(f.read(), name)
    got = find(sys.stdin.read(), name)
    if want is None or got is None:
        print('interface %s missing: file %s, daemon %s' % (name, want is not None, got is not None))
        return 1
    if want != got:
        import difflib
        print('\n'.join(difflib.unified_diff(render(want).splitlines(), render(got).splitlines(),
                                             'file', 'daemon', lineterm='')))
        return 1
    return 0


sys.exit(main())
