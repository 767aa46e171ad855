/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A controller's effective hierarchy as GetEffectiveTree returns it (one
 * line per css: two spaces per depth, then the member cgroups joined by
 * '|'), parsed into nodes, drawn for people and turned into JSON.
 */

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#include "cgbypass/macro.h"

typedef struct EffectiveNode {
        char **members;                         /* absolute cgroup paths, pre-order; NULL-terminated */
        size_t n_members;
        struct EffectiveNode **children;
        size_t n_children;
} EffectiveNode;

/* Deepest node accepted from the daemon (the kernel allows fewer levels of cgroups). */
#define EFFECTIVE_TREE_DEPTH_MAX 4096u

EffectiveNode *effective_node_free(EffectiveNode *n);
DEFINE_POINTER_CLEANUP(EffectiveNode, effective_node_free);

/* Builds the tree from GetEffectiveNodes' (depth, members) pairs, in their order. */
typedef struct EffectiveTreeBuilder {
        EffectiveNode *top;             /* a node without members; the depth-0 nodes are its children */
        EffectiveNode **stack;          /* stack[d]: the last node at depth d - 1 */
        size_t depth_max;               /* the deepest depth allowed for the next node */
} EffectiveTreeBuilder;

/* Return: 0, -ENOMEM. */
int effective_tree_builder_init(EffectiveTreeBuilder *b);
void effective_tree_builder_done(EffectiveTreeBuilder *b);

/**
 * effective_tree_builder_add() - the next node
 * @members: its member cgroups, NULL-terminated; taken in every case
 *
 * Return: 0; -EBADMSG for a depth that skips a level or exceeds
 * EFFECTIVE_TREE_DEPTH_MAX, no member, or a member that is not an absolute
 * path; -ENOMEM.
 */
int effective_tree_builder_add(EffectiveTreeBuilder *b, unsigned depth, char **members);

/* The tree built (the builder is left empty). */
EffectiveNode *effective_tree_builder_steal(EffectiveTreeBuilder *b);

/**
 * effective_tree_parse() - parse GetEffectiveTree's text
 * @text: the text (a final newline is optional)
 * @ret: a node without members whose children are the depth-0 lines
 * @reterr_line: on -EBADMSG, the 1-based number of the offending line
 *
 * Return: 0; -EBADMSG for text not in the format (odd indentation, a
 * depth that skips a level, an empty line or member, a member that is not
 * an absolute path, deeper than EFFECTIVE_TREE_DEPTH_MAX); -ENOMEM.
 */
int effective_tree_parse(const char *text, EffectiveNode **ret, unsigned *reterr_line);

/* The number of member cgroups in @n and below it. */
size_t effective_tree_count_members(const EffectiveNode *n);

/* More siblings in a row than this are folded by effective_tree_format() */
#define EFFECTIVE_TREE_FOLD_MIN 5u

/**
 * effective_tree_format() - draw the tree for people
 * @top: as effective_tree_parse() returns it
 * @utf8: draw with box-drawing characters ("├─", "└─", "│ ") and "…", else
 *        with ASCII ("|-", "`-", "| ") and "..."
 * @full: list every member; else a run of more than EFFECTIVE_TREE_FOLD_MIN
 *        consecutive members that are siblings is folded to its first and
 *        last and their count ("/c/s1 … /c/s300 (300 cgroups)")
 * @ret: one line per node, its members joined by ", " in the daemon's order;
 *       the depth-0 nodes start their lines, deeper ones hang from them as in
 *       systemd-cgls
 *
 * Return: 0, -ENOMEM.
 */
int effective_tree_format(const EffectiveNode *top, bool utf8, bool full, char **ret);

/**
 * effective_tree_to_json() - the tree as nested {"members": [...], "children": [...]}
 * @top: as effective_tree_parse() returns it
 *
 * Return: the root node's object (the single depth-0 node, or @top itself
 * when there are several or none), or NULL on OOM.
 */
json_object *effective_tree_to_json(const EffectiveNode *top);
