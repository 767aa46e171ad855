/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Client changes: the overlay of bus requests over the configuration, and its file. */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <sys/stat.h>

#include "cgbypass/cgpath.h"
#include "cgbypass/log.h"
#include "cgbypass/strbuf.h"
#include "cgbypass/fileio.h"
#include "client-changes.h"

const char client_change_origin[] = "client change";

#define CHANGES_HEADER "# cgbypassd client changes v1; written by cgbypassd, do not edit"

bool cgroup_path_is_at_or_below(const char *path, const char *top) {
        return cgpath_is_at_or_below(path, top);
}

/* Component order: '/' sorts before every other byte, so that a subtree is one run of the index. */
static int path_cmp(const char *a, const char *b) {
        for (;; a++, b++) {
                int x = *a == '/' ? 1 : (unsigned char) *a, y = *b == '/' ? 1 : (unsigned char) *b;

                if (x != y || x == 0)
                        return x - y;
        }
}

/* The first entry of @c not before @path (c->n if none): the entries are kept in path_cmp() order. */
static size_t lower_bound(const ClientChanges *c, const char *path) {
        size_t lo = 0, hi = c->n;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;

                if (path_cmp(c->items[mid].path, path) < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo;
}

void client_changes_done(ClientChanges *c) {
        for (size_t i = 0; i < c->n; i++)
                free(c->items[i].path);
        free(c->items);
        *c = (ClientChanges) {};
}

int client_changes_copy(const ClientChanges *c, ClientChanges *ret) {
        ClientChanges n = {};

        n.items = calloc(c->n ? c->n : 1, sizeof(ClientChange));
        if (!n.items)
                return -ENOMEM;
        for (; n.n < c->n; n.n++) {
                n.items[n.n] = c->items[n.n];
                n.items[n.n].path = strdup(c->items[n.n].path);
                if (!n.items[n.n].path) {
                        client_changes_done(&n);
                        return -ENOMEM;
                }
        }
        *ret = n;
        return 0;
}

ClientChange *client_changes_find(const ClientChanges *c, const char *path) {
        size_t i = lower_bound(c, path);
        return i < c->n && streq(c->items[i].path, path) ? &c->items[i] : NULL;
}

void client_changes_remove(ClientChanges *c, size_t index) {
        free(c->items[index].path);
        memmove(&c->items[index], &c->items[index + 1], (c->n - index - 1) * sizeof(ClientChange));
        c->n--;
}

CgMask client_change_mask(const ClientChange *ch) {
        return ch->sc_enable | ch->sc_bypass | ch->sc_disable | ch->ctl_enable | ch->ctl_bypass;
}

/* A new entry for @path, in its place (a file written in order loads by appends) */
static ClientChange *client_changes_add(ClientChanges *c, const char *path) {
        size_t i = lower_bound(c, path);
        char *copy = strdup(path);
        ClientChange *n;

        if (!copy)
                return NULL;
        n = reallocarray(c->items, c->n + 1, sizeof(ClientChange));
        if (!n) {
                free(copy);
                return NULL;
        }
        c->items = n;
        memmove(&n[i + 1], &n[i], (c->n - i) * sizeof(ClientChange));
        n[i] = (ClientChange) { .path = copy, .owner = (uid_t) -1 };
        c->n++;
        return &n[i];
}

int client_changes_set(ClientChanges *c, const char *path, bool subtree, const ControllerChange *ch,
                       bool admin, uid_t owner) {
        ClientChange *x = client_changes_find(c, path);
        CgMask mask;

        if (!x) {
                x = client_changes_add(c, path);
                if (!x)
                        return -ENOMEM;
        }
        if (subtree) {
                mask = ch->enable | ch->bypass | ch->disable;
                x->sc_enable = (x->sc_enable & ~mask) | ch->enable;
                x->sc_bypass = (x->sc_bypass & ~mask) | ch->bypass;
                x->sc_disable = (x->sc_disable & ~mask) | ch->disable;
        } else {
                mask = ch->enable | ch->bypass;
                x->ctl_enable = (x->ctl_enable & ~mask) | ch->enable;
                x->ctl_bypass = (x->ctl_bypass & ~mask) | ch->bypass;
        }
        if (admin)
                x->admin |= mask;
        else {
                x->admin &= ~mask;
                x->owner = owner;
        }
        return 0;
}

static void strip(ClientChange *x, CgMask m) {
        x->sc_enable &= ~m;
        x->sc_bypass &= ~m;
        x->sc_disable &= ~m;
        x->ctl_enable &= ~m;
        x->ctl_bypass &= ~m;
        x->admin &= ~m;
}

size_t client_changes_prune(ClientChanges *c, const Config *config) {
        size_t n = 0;

        for (size_t i = c->n; i-- > 0;) {
                ClientChange *x = &c->items[i];
                const DelegateSpec *d = config_find_delegation(config, x->path);
                bool managed = config_find_cgroup(config, x->path) || (d && streq(d->path, x->path));

                if (!managed && !d) {
                        log_notice("Dropping the client change of %s: the configuration neither manages nor "
                                   "delegates it any more.", x->path);
                        client_changes_remove(c, i);
                        n++;
                        continue;
                }
                CgMask by_owner = client_change_mask(x) & ~x->admin;
                CgMask allowed = d && d->uid == x->owner ? d->controllers : 0;
                if (by_owner & ~allowed) {
                        _cleanup_free_ char *names = controller_mask_to_string(by_owner & ~allowed, " ");
                        log_notice("Dropping the client change of %s for %s: its owner (uid %u) no longer has "
                                   "them delegated.", x->path, strempty(names), (unsigned) x->owner);
                        strip(x, by_owner & ~allowed);
                        n++;
                }
                if (!client_change_mask(x))
                        client_changes_remove(c, i);
        }
        return n;
}

static void overlay(DesiredCgroup *d, const ClientChange *x, Origin origin) {
        CgMask sc = x->sc_enable | x->sc_bypass | x->sc_disable, ctl = x->ctl_enable | x->ctl_bypass;

        if (sc) {
                d->sc_enable = (d->sc_enable & ~sc) | x->sc_enable;
                d->sc_bypass = (d->sc_bypass & ~sc) | x->sc_bypass;
                d->sc_disable = (d->sc_disable & ~sc) | x->sc_disable;
                d->sc_origin = origin;
        }
        if (ctl) {
                d->ctl_enable = (d->ctl_enable & ~ctl) | x->ctl_enable;
                d->ctl_bypass = (d->ctl_bypass & ~ctl) | x->ctl_bypass;
                d->ctl_origin = origin;
        }
}

/* Indexes into DesiredCgroup @items by path_cmp(), then by index (the desired index, and a merge's) */
static int item_cmp(const void *a, const void *b, void *items) {
        const DesiredCgroup *v = items;
        size_t x = *(const size_t *) a, y = *(const size_t *) b;
        int r = path_cmp(v[x].path, v[y].path);

        return r ?: (x > y) - (x < y);
}

/* The last of @items[@order[0..n)] (sorted by item_cmp()) whose path is @path, or NULL. */
static DesiredCgroup *item_find(DesiredCgroup *items, const size_t *order, size_t n, const char *path) {
        size_t lo = 0, hi = n;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;

                if (path_cmp(items[order[mid]].path, path) <= 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo > 0 && streq(items[order[lo - 1]].path, path) ? &items[order[lo - 1]] : NULL;
}

/* The same by a walk: the last of @items[0..n) whose path is @path, or NULL. */
static DesiredCgroup *item_walk(DesiredCgroup *items, size_t n, const char *path) {
        for (size_t j = n; j-- > 0;)
                if (streq(items[j].path, path))
                        return &items[j];
        return NULL;
}

#define MERGE_WALK_MAX 8

int client_changes_merge(const DesiredSet *config, const ClientChanges *c, const Hierarchy *h, const char *below,
                         DesiredSet *ret, size_t **ret_gone, size_t *ret_n_gone) {
        _cleanup_free_ size_t *gone = NULL, *order = NULL;
        DesiredSet s = {};
        size_t n_gone = 0, n_config, first = 0, end = c->n;
        bool sorted;

        /* the changes are in path order: @below's subtree is the run from its first */
        if (below) {
                first = end = lower_bound(c, below);
                while (end < c->n && cgroup_path_is_at_or_below(c->items[end].path, below))
                        end++;
        }
        s.items = calloc(config->n + (end - first) + 1, sizeof(DesiredCgroup));
        gone = calloc(end - first + 1, sizeof(size_t));
        if (!s.items || !gone) {
                free(s.items);
                return -ENOMEM;
        }
        for (size_t i = 0; i < config->n; i++)
                if (!below || cgroup_path_is_at_or_below(config->items[i].path, below))
                        s.items[s.n++] = config->items[i];
        /* the configuration's entries by path, for more than a few changes: each finds its own without a
         * walk of all (a few walk them: a sort would cost an apply with none more than they do) */
        n_config = s.n;
        sorted = end - first > MERGE_WALK_MAX;
        if (sorted) {
                order = malloc((n_config + 1) * sizeof(size_t));
                if (!order) {
                        free(s.items);
                        return -ENOMEM;
                }
                for (size_t i = 0; i < n_config; i++)
                        order[i] = i;
                qsort_r(order, n_config, sizeof(size_t), item_cmp, s.items);
        }

        for (size_t i = first; i < end; i++) {
                const ClientChange *x = &c->items[i];
                Origin origin = { .file = client_change_origin, .line = (unsigned) i + 1 };
                DesiredCgroup *d;
                Cgroup *cg;

                /* (a change's path is unique among the changes: only the configuration's can match) */
                d = sorted ? item_find(s.items, order, n_config, x->path) : item_walk(s.items, n_config, x->path);
                if (!d) {
                        /* a client change never creates a cgroup: it was made for one that existed */
                        if (h && hierarchy_lookup(h, x->path, &cg) < 0) {
                                gone[n_gone++] = i;
                                continue;
                        }
                        d = &s.items[s.n++];
                        *d = (DesiredCgroup) { .path = x->path, .origin = origin,
                                               .sc_origin = origin, .ctl_origin = origin };
                }
                overlay(d, x, origin);
        }
        *ret = s;
        if (ret_gone) {
                *ret_gone = TAKE_PTR(gone);
                *ret_n_gone = n_gone;
        }
        return 0;
}

char *client_change_to_string(const ClientChange *x) {
        StrBuf b = STRBUF_INIT;
        char *s;

        desired_tokens_append(&b, "subtree_control", x->sc_enable, x->sc_bypass, x->sc_disable);
        desired_tokens_append(&b, "controllers", x->ctl_enable, x->ctl_bypass, 0);
        if (strbuf_steal(&b, &s) < 0)
                return NULL;
        memmove(s, s + 1, strlen(s));   /* the leading space */
        return s;
}

void client_change_format(StrBuf *b, const ClientChange *x) {
        _cleanup_free_ char *admin = controller_mask_to_string(x->admin, ",");

        strbuf_printf(b, "change %s", x->path);
        desired_tokens_append(b, "sc", x->sc_enable, x->sc_bypass, x->sc_disable);
        desired_tokens_append(b, "ctl", x->ctl_enable, x->ctl_bypass, 0);
        if (!admin)
                b->oom = true;
        strbuf_printf(b, " admin=%s", strempty(admin));
        if (x->owner == (uid_t) -1)
                strbuf_append(b, " owner=-");
        else
                strbuf_printf(b, " owner=%u", (unsigned) x->owner);
}

int client_changes_save_seq(const char *dir, const ClientChanges *c, uint64_t seq) {
        _cleanup_free_ char *text = NULL;
        StrBuf b = STRBUF_INIT;

        /* nothing to say, and no file: its absence says the same to the loader, so a first apply without
         * client changes writes and syncs none (two fsync()s of a cold --apply-once) */
        if (seq == 0 && c->n == 0 && file_absent(dir, CLIENT_CHANGES_FILE_NAME) > 0)
                return 0;
        strbuf_append(&b, CHANGES_HEADER "\n");
        if (seq > 0)
                strbuf_printf(&b, "seq %" PRIu64 "\n", seq);
        for (size_t i = 0; i < c->n; i++) {
                client_change_format(&b, &c->items[i]);
                strbuf_putc(&b, '\n');
        }
        if (strbuf_steal(&b, &text) < 0)
                return -ENOMEM;
        /* the same text (same seq: every journal record is dead either way) is not flushed again: an apply
         * that changed nothing saves after every run */
        return file_write_atomic_changed(dir, CLIENT_CHANGES_FILE_NAME, text);
}

int client_changes_save(const char *dir, const ClientChanges *c) {
        return client_changes_save_seq(dir, c, 0);
}

/* @replace: a line of the journal, which replaces what the snapshot (or an earlier record) said */
static int parse_line(char *line, ClientChanges *c, bool replace) {
        char *save = NULL, *word;
        ClientChange *x;
        int r = 0;

        word = strtok_r(line, " ", &save);
        if (!word || !streq(word, "change"))
                return -EBADMSG;
        word = strtok_r(NULL, " ", &save);
        if (!word || cgpath_verify(word, CGPATH_MANAGED, NULL) < 0)
                return -EBADMSG;
        x = client_changes_find(c, word);
        if (x && !replace)
                return -EBADMSG;
        if (x)
                *x = (ClientChange) { .path = x->path, .owner = (uid_t) -1 };
        else {
                x = client_changes_add(c, word);
                if (!x)
                        return -ENOMEM;
        }
        while (r >= 0 && (word = strtok_r(NULL, " ", &save))) {
                CgMask unused = 0;
                char *end;

                if (startswith(word, "sc="))
                        r = desired_tokens_parse(word + 3, true, &x->sc_enable, &x->sc_bypass, &x->sc_disable);
                else if (startswith(word, "ctl="))
                        r = desired_tokens_parse(word + 4, false, &x->ctl_enable, &x->ctl_bypass, &unused);
                else if (startswith(word, "admin="))
                        r = controller_mask_from_list(word + 6, &x->admin, NULL) < 0 ? -EBADMSG : 0;
                else if (streq(word, "owner=-"))
                        x->owner = (uid_t) -1;
                else if (startswith(word, "owner=")) {
                        errno = 0;
                        unsigned long u = strtoul(word + 6, &end, 10);
                        if (errno || *end || end == word + 6 || u >= (uid_t) -1)
                                r = -EBADMSG;
                        else
                                x->owner = (uid_t) u;
                } else
                        r = -EBADMSG;
        }
        if (r >= 0 && replace && !client_change_mask(x))
                client_changes_remove(c, (size_t) (x - c->items));
        return r;
}

int client_changes_parse_record(char *line, ClientChanges *c) {
        return parse_line(line, c, true);
}

int client_changes_load_seq(const char *dir, ClientChanges *ret, uint64_t *ret_seq) {
        _cleanup_free_ char *path = NULL, *line = NULL;
        _cleanup_fclose_ FILE *f = NULL;
        ClientChanges c = {};
        uint64_t seq = 0;
        size_t cap = 0;
        unsigned lineno = 0;
        int r = 0;

        *ret_seq = 0;
        if (asprintf(&path, "%s/%s", dir, CLIENT_CHANGES_FILE_NAME) < 0)
                return -ENOMEM;
        f = fopen(path, "re");
        if (!f) {
                if (errno != ENOENT)
                        return -errno;
                *ret = c;
                return 0;       /* *ret_seq: 0 */
        }
        while (getline(&line, &cap, f) > 0) {
                lineno++;
                line[strcspn(line, "\n")] = '\0';
                if (lineno == 1) {
                        if (!streq(line, CHANGES_HEADER)) {
                                r = -EBADMSG;
                                break;
                        }
                        continue;
                }
                if (lineno == 2 && startswith(line, "seq ")) {
                        char *end;

                        errno = 0;
                        seq = strtoull(line + 4, &end, 10);
                        if (errno || *end || end == line + 4) {
                                r = -EBADMSG;
                                break;
                        }
                        continue;
                }
                r = parse_line(line, &c, false);
                if (r < 0)
                        break;
        }
        if (r >= 0 && lineno == 0)
                r = -EBADMSG;
        if (r < 0) {
                client_changes_done(&c);
                return r;
        }
        *ret = c;
        *ret_seq = seq;
        return 0;
}

int client_changes_load(const char *dir, ClientChanges *ret) {
        uint64_t seq;
        return client_changes_load_seq(dir, ret, &seq);
}


static int size_cmp(const void *a, const void *b) {
        size_t x = *(const size_t *) a, y = *(const size_t *) b;
        return x < y ? -1 : x > y;
}

void desired_index_done(DesiredIndex *idx) {
        free(idx->order);
        *idx = (DesiredIndex) {};
}

static int desired_index_update(DesiredIndex *idx, const DesiredSet *config) {
        size_t *order;

        if (idx->order && idx->key == config->items && idx->n == config->n)
                return 0;
        order = malloc((config->n + 1) * sizeof(size_t));
        if (!order)
                return -ENOMEM;
        for (size_t i = 0; i < config->n; i++)
                order[i] = i;
        qsort_r(order, config->n, sizeof(size_t), item_cmp, config->items);
        free(idx->order);
        *idx = (DesiredIndex) { .key = config->items, .n = config->n, .order = order };
        return 0;
}

int client_changes_merge_below(const DesiredSet *config, DesiredIndex *idx, const ClientChanges *c,
                               const Hierarchy *h, const char *below, DesiredSet *ret, size_t **ret_gone,
                               size_t *ret_n_gone) {
        _cleanup_free_ DesiredCgroup *view = NULL;
        _cleanup_free_ size_t *pos = NULL;
        size_t lo = 0, hi, n = 0;
        int r;

        r = desired_index_update(idx, config);
        if (r < 0)
                return r;
        /* the first entry not before @below, then the run of its subtree */
        hi = config->n;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;

                if (path_cmp(config->items[idx->order[mid]].path, below) < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        for (hi = lo; hi < config->n && cgroup_path_is_at_or_below(config->items[idx->order[hi]].path, below); hi++)
                ;
        view = calloc(hi - lo + 1, sizeof(DesiredCgroup));
        pos = malloc((hi - lo + 1) * sizeof(size_t));
        if (!view || !pos)
                return -ENOMEM;
        /* in the configuration's order, as the planner sees them unindexed */
        for (size_t i = lo; i < hi; i++)
                pos[n++] = idx->order[i];
        qsort(pos, n, sizeof(size_t), size_cmp);
        for (size_t i = 0; i < n; i++)
                view[i] = config->items[pos[i]];
        return client_changes_merge(&(DesiredSet) { .items = view, .n = n }, c, h, below, ret, ret_gone,
                                    ret_n_gone);
}
