#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# The crash tests' configurations: TOP x CHILDREN x LEAVES cgroups in three
# levels with every kind of bypass state, and a delegation. "a" is applied
# to a fresh hierarchy; "b" changes settings of "a" (re-enables, bypasses,
# disables).
#
# usage: gen-config.py a|b [TOP CHILDREN LEAVES]   (default 3 4 2: 39 cgroups)
import sys

variant = sys.argv[1]
top, children, leaves = (int(x) for x in sys.argv[2:5]) if len(sys.argv) >= 5 else (3, 4, 2)
print("[cgroup]\npath = /\nsubtree-control = +cpu +io +memory +pids\n")
for i in range(top):
    if variant == "a":
        sc = "#cpu #io +memory +pids"
    else:
        sc = "#cpu #io +memory +pids" if i % 2 else "#cpu #io +memory #pids"
    print(f"[cgroup]\npath = /s{i}\ncreate = yes\nsubtree-control = {sc}\n")
    for j in range(children):
        p = f"/s{i}/c{j}"
        if variant == "a":
            sc2 = "#cpu" if j % 2 else "+memory"
            ctl = "+cpu" if j % 3 == 0 else ""
        elif i % 2:
            sc2 = "+pids -memory" if j % 2 else "#pids #memory"
            ctl = ""
        else:
            sc2 = "#memory" if j % 2 else "+memory"
            ctl = "+io" if j % 2 else ""
        print(f"[cgroup]\npath = {p}\ncreate = yes\nsubtree-control = {sc2}")
        if ctl:
            print(f"controllers = {ctl}")
        print()
        for k in range(leaves):
            print(f"[cgroup]\npath = {p}/l{k}\ncreate = yes\n")
print("[delegate]\npath = /s0/c1/l0\nuser = 65534\ncontrollers = cpu io\n")
