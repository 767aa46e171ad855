/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sim: a plain directory that looks like a cgroup2 mount of the modeled
 * kernel. The model is the kernel here: it answers every operation, and the
 * directory is its rendering, one directory per cgroup holding exactly the
 * files cgroup_list_files() names, with the contents cgroup_read() gives.
 *
 * An operation renders the part of the tree it can change before and after
 * (its cgroup, or its subtree for control files), in memory, and writes only
 * the difference; so its cost follows the subtree it affects, not the tree.
 * The model is saved in STATE_DIR/sim.state by backend_save(); at open the
 * directory is rendered again from it.
 */
#include <fcntl.h>
#include <sys/stat.h>

#include "backend-internal.h"
#include "cgbypass/cftype.h"
#include "cgbypass/cfvalue.h"
#include "cgbypass/cgpath.h"
#include "cgroupfs.h"

#define SIM_STATE "sim.state"
#define SIM_JOURNAL "sim.state.journal"
/* the journal is folded into the state file once it is larger than this, or than the state file */
#define SIM_JOURNAL_MIN_COMPACT (64u * 1024)
#define SIM_DIRTY_MERGE 32

/* what changed since the last save: a region per operation, saved as a journal region */
typedef struct SimDirty {
        char *path;
        bool subtree;
} SimDirty;

typedef struct Sim {
        SimDirty *dirty;
        size_t n_dirty;
        bool all;               /* a whole save is due (fresh, or the list could not grow) */
        size_t state_bytes, journal_bytes;
        bool writes_by_dir_owner;       /* backend_set_writes_by_dir_owner() */
} Sim;

static Sim *sim(Backend *b) {
        return b->data;
}

static void sim_forget_dirty(Sim *s) {
        for (size_t i = 0; i < s->n_dirty; i++)
                free(s->dirty[i].path);
        free(s->dirty);
        s->dirty = NULL;
        s->n_dirty = 0;
        s->all = false;
}

/* after a successful operation on @path (its subtree too with @subtree) */
static void sim_mark(Backend *b, const char *path, bool subtree) {
        Sim *s = sim(b);
        SimDirty *v;

        if (!s || s->all)
                return;
        /* a region is saved as the model is at the save: one record for the recent operations on it (the
         * last few only: a burst of adoptions marks thousands of paths) */
        for (size_t i = s->n_dirty > SIM_DIRTY_MERGE ? s->n_dirty - SIM_DIRTY_MERGE : 0; i < s->n_dirty; i++)
                if (streq(s->dirty[i].path, path)) {
                        s->dirty[i].subtree |= subtree;
                        return;
                }
        v = reallocarray(s->dirty, s->n_dirty + 1, sizeof(SimDirty));
        if (v)
                s->dirty = v;
        if (!v || !(v[s->n_dirty].path = strdup(path))) {
                s->all = true;  /* cannot say what changed: the next save writes everything */
                return;
        }
        v[s->n_dirty++].subtree = subtree;
}

typedef struct RFile {
        const char *name;       /* cftype_table[]'s (cgroup_list_file_names()) */
        char *content;
        mode_t mode;
} RFile;

typedef struct RDir {
        char *path;             /* trace-relative */
        RFile *files;           /* sorted by name */
        size_t n;
} RDir;

typedef struct Render {
        RDir *dirs;             /* pre-order */
        size_t n;
} Render;

static void rdir_done(RDir *d) {
        for (size_t j = 0; j < d->n; j++) {
                free(d->files[j].content);
        }
        free(d->files);
        free(d->path);
        *d = (RDir) {};
}

static void render_done(Render *r) {
        for (size_t i = 0; i < r->n; i++)
                rdir_done(&r->dirs[i]);
        free(r->dirs);
        *r = (Render) {};
}

/*
 * What unmodeled files hold: the kernel's value for a fresh cgroup where
 * that is a constant, else nothing (statistics, usage, events).
 */
/* What an unmodeled file shows in a new cgroup: a controller file's default (cfvalue.h), or empty. */
static const char *default_content(const char *name) {
        if (streq(name, "cgroup.freeze"))
                return "0\n";
        return cfvalue_default(name) ?: "";
}

static int render_cgroup(const Hierarchy *h, const Cgroup *c, RDir *ret) {
        _cleanup_free_ const char **names = NULL;
        RDir d = {};
        size_t n = 0;
        int r;

        r = backend_cgroup_relpath(c, &d.path);
        if (r < 0)
                return r;
        r = cgroup_list_file_names(h, c, &names);
        if (r < 0)
                goto fail;
        while (names[n])
                n++;
        d.files = calloc(n ? n : 1, sizeof(RFile));
        if (!d.files) {
                r = -ENOMEM;
                goto fail;
        }
        for (size_t i = 0; i < n; i++)
                d.files[i].name = names[i];
        d.n = n;
        for (size_t i = 0; i < n; i++) {
                RFile *f = &d.files[i];
                bool writable;
                mode_t mode;

                r = cgroup_read_file(h, c, f->name, &writable, &f->content);
                mode = writable ? 0644 : 0444;
                if (r == -ENOSYS && cfvalue_known(f->name))
                        r = cgroup_value_read(h, c, f->name, &f->content);
                if (r == -EINVAL)
                        mode = 0200;    /* no read handler (cgroup.kill) */
                if (r == -EINVAL || r == -ENOSYS || r == -EOPNOTSUPP) {
                        f->content = strdup(default_content(f->name));
                        r = f->content ? 0 : -ENOMEM;
                }
                if (r < 0)
                        goto fail;
                f->mode = mode;
        }
        *ret = d;
        return 0;
fail:
        rdir_done(&d);
        return r;
}

/* @top alone, or with its whole subtree in pre-order */
static int render_region(const Hierarchy *h, const Cgroup *top, bool subtree, Render *ret) {
        Render rr = {};
        size_t cap = 0;
        int r;

        for (const Cgroup *c = top; c; c = subtree ? cgroup_next_descendant_pre(c, top) : NULL) {
                if (rr.n == cap) {
                        cap = cap ? cap * 2 : 4;
                        RDir *v = reallocarray(rr.dirs, cap, sizeof(RDir));
                        if (!v) {
                                render_done(&rr);
                                return -ENOMEM;
                        }
                        rr.dirs = v;
                }
                r = render_cgroup(h, c, &rr.dirs[rr.n]);
                if (r < 0) {
                        render_done(&rr);
                        return r;
                }
                rr.n++;
        }
        *ret = rr;
        return 0;
}

/*
 * The directory of an apply_dir(), opened at its first write or unlink and
 * kept for the others: one resolution beneath the root per directory, not
 * per file. Until it opens, each operation tries again and fails as it
 * would alone (an unlink in a directory that is gone is no error).
 */
typedef struct SimDir {
        const char *path;
        int fd;
        struct stat st;
} SimDir;

static void sim_dir_done(SimDir *d) {
        closep(&d->fd);
}

static int sim_dir_open(Backend *b, SimDir *d) {
        int r;

        if (d->fd >= 0)
                return 0;
        r = cgfs_open_dir(b->root_fd, d->path, O_PATH, &d->fd);
        if (r < 0)
                return r;
        if (fstat(d->fd, &d->st) < 0) {
                r = -errno;
                closep(&d->fd);
                d->fd = -1;
                return r;
        }
        return 0;
}

static int sim_dir_unlink(Backend *b, SimDir *d, const char *file) {
        int r = cgfs_name_is_valid(file) ? sim_dir_open(b, d) : -EINVAL;
        return r < 0 ? r : cgfs_unlink_at(d->fd, file);
}

static int sim_dir_put(Backend *b, SimDir *d, const RFile *f, bool existing) {
        unsigned flags = (existing ? CGFS_PUT_EXISTING : 0) | (sim(b)->writes_by_dir_owner ? CGFS_PUT_DIR_OWNER : 0);
        int r = cgfs_name_is_valid(f->name) ? sim_dir_open(b, d) : -EINVAL;
        return r < 0 ? r : cgfs_put_file_at(d->fd, &d->st, f->name, f->content, f->mode, flags);
}

/* Make directory @path hold @new's files where it held @old's (NULL: nothing). */
static int apply_dir(Backend *b, const RDir *old, const RDir *new) {
        size_t i = 0, j = 0, no = old ? old->n : 0, nn = new ? new->n : 0;
        _cleanup_(sim_dir_done) SimDir d = { .path = new ? new->path : old->path, .fd = -1 };
        int r;

        while (i < no || j < nn) {
                int cmp = i == no ? 1 : j == nn ? -1 : strcmp(old->files[i].name, new->files[j].name);

                if (cmp < 0) {
                        r = sim_dir_unlink(b, &d, old->files[i].name);
                        if (r < 0 && r != -ENOENT)
                                return r;
                        i++;
                        continue;
                }
                if (cmp > 0 || !streq(old->files[i].content, new->files[j].content) ||
                    old->files[i].mode != new->files[j].mode) {
                        r = sim_dir_put(b, &d, &new->files[j], cmp == 0);
                        if (r < 0)
                                return r;
                }
                if (cmp == 0)
                        i++;
                j++;
        }
        return 0;
}

static char *join_path(const char *path, const char *name) {
        char *s;

        return cgpath_join(path, name, &s) < 0 ? NULL : s;
}

/* Removes @path's files and the directory; with @subdirs its subdirectories first, else they must be gone. */
static int remove_dir(Backend *b, const char *path, bool subdirs) {
        _cleanup_close_ int fd = -1;
        CgfsEntry *e;
        size_t n;
        int r;

        /* listed and emptied through one fd, as apply_dir() writes; one more per level below (as check_removable()) */
        r = cgfs_open_dir(b->root_fd, path, O_RDONLY, &fd);
        if (r >= 0)
                r = cgfs_list_at(fd, &e, &n);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n && r >= 0; i++)
                if (e[i].type != CGFS_ENTRY_DIR)
                        r = cgfs_unlink_at(fd, e[i].name);
                else if (subdirs) {
                        _cleanup_free_ char *sub = join_path(path, e[i].name);
                        r = sub ? remove_dir(b, sub, true) : -ENOMEM;
                }
        cgfs_entries_free(e, n);
        if (r < 0)
                return r;
        return cgfs_rmdir(b->root_fd, path);
}

static int rdir_path_cmp(const void *a, const void *b) {
        return strcmp((*(RDir *const *) a)->path, (*(RDir *const *) b)->path);
}

/*
 * Turn the directory from rendering @old into rendering @new (both in
 * pre-order): directories in both are patched, new ones created parents
 * first, gone ones removed children first.
 */
static int apply_render(Backend *b, const Render *old, const Render *new) {
        _cleanup_free_ RDir **os = calloc(old->n + 1, sizeof(RDir *)), **ns = calloc(new->n + 1, sizeof(RDir *));
        _cleanup_free_ const RDir **match_new = calloc(new->n + 1, sizeof(RDir *));
        _cleanup_free_ bool *kept = calloc(old->n + 1, sizeof(bool));
        size_t i = 0, j = 0;
        int r;

        if (!os || !ns || !match_new || !kept)
                return -ENOMEM;
        for (size_t k = 0; k < old->n; k++)
                os[k] = &old->dirs[k];
        for (size_t k = 0; k < new->n; k++)
                ns[k] = &new->dirs[k];
        qsort(os, old->n, sizeof(RDir *), rdir_path_cmp);
        qsort(ns, new->n, sizeof(RDir *), rdir_path_cmp);
        while (i < old->n && j < new->n) {
                int cmp = strcmp(os[i]->path, ns[j]->path);
                if (cmp == 0) {
                        match_new[ns[j] - new->dirs] = os[i];
                        kept[os[i] - old->dirs] = true;
                }
                if (cmp <= 0)
                        i++;
                if (cmp >= 0)
                        j++;
        }

        for (size_t k = 0; k < new->n; k++) {
                if (!match_new[k]) {
                        r = cgfs_mkdir(b->root_fd, new->dirs[k].path, 0755);
                        if (r < 0 && r != -EEXIST)
                                return r;
                }
                r = apply_dir(b, match_new[k], &new->dirs[k]);
                if (r < 0)
                        return r;
        }
        for (size_t k = old->n; k > 0; k--) {
                if (kept[k - 1])
                        continue;
                r = remove_dir(b, old->dirs[k - 1].path, false);
                if (r < 0 && r != -ENOENT)
                        return r;
        }
        return 0;
}

/* ---- rendering the whole tree at open and refresh ---- */

static bool is_cgroup_file_name(const char *name) {
        return cgfs_is_tmp_name(name) || cftype_lookup(name);
}

/* Only what a sim could have left behind is removed: cgroup-like files and directories of them. */
static int check_removable(Backend *b, const char *path, unsigned depth, char **reterr_msg) {
        _cleanup_close_ int fd = -1;
        struct stat st;
        CgfsEntry *e;
        size_t n;
        int r;

        if (depth > KERNEL_SCAN_MAX_DEPTH)
                return backend_msg(reterr_msg, -E2BIG, "'%s/%s' is too deep", b->root, path);
        /* the sim makes its directories as itself; another owner's (one not adopted) is not ours */
        r = cgfs_open_dir(b->root_fd, path, O_PATH, &fd);
        if (r >= 0 && fstat(fd, &st) < 0)
                r = -errno;
        if (r >= 0 && st.st_uid != geteuid())
                return backend_msg(reterr_msg, -ENOTEMPTY, "'%s/%s' belongs to uid %u, not to the simulated "
                                   "hierarchy; refusing to remove it", b->root, path, (unsigned) st.st_uid);
        if (r < 0)
                return backend_msg(reterr_msg, r, "Failed to open '%s/%s': %s", b->root, path, strerror(-r));
        r = cgfs_list(b->root_fd, path, &e, &n);
        if (r < 0)
                return backend_msg(reterr_msg, r, "Failed to list '%s/%s': %s", b->root, path, strerror(-r));
        for (size_t i = 0; i < n && r >= 0; i++) {
                _cleanup_free_ char *sub = join_path(path, e[i].name);

                if (!sub)
                        r = -ENOMEM;
                else if (e[i].type == CGFS_ENTRY_DIR)
                        r = check_removable(b, sub, depth + 1, reterr_msg);
                else if (!is_cgroup_file_name(e[i].name))
                        r = backend_msg(reterr_msg, -ENOTEMPTY, "'%s/%s' is not part of a simulated hierarchy; "
                                        "refusing to remove it", b->root, sub);
        }
        cgfs_entries_free(e, n);
        return r;
}

static int rfile_cmp(const void *key, const void *elem) {
        return strcmp(key, ((const RFile *) elem)->name);
}

static int strp_cmp(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

/* The directory of @path, opened (after making it, if it is not there: *@ret_made), its stat and entries. */
static int open_listed(Backend *b, const char *path, int *ret_fd, struct stat *ret_st, bool *ret_made,
                       CgfsEntry **ret_e, size_t *ret_n) {
        _cleanup_close_ int fd = -1;
        int r;

        *ret_made = false;
        r = cgfs_open_dir(b->root_fd, path, O_RDONLY, &fd);
        if (r == -ENOENT) {
                r = cgfs_mkdir(b->root_fd, path, 0755);
                if (r >= 0)
                        r = cgfs_open_dir(b->root_fd, path, O_RDONLY, &fd);
                *ret_made = r >= 0;
        }
        if (r >= 0 && fstat(fd, ret_st) < 0)
                r = -errno;
        if (r >= 0)
                r = cgfs_list_at(fd, ret_e, ret_n);
        if (r >= 0)
                *ret_fd = TAKE_FD(fd);
        return r;
}

/*
 * Make @want's directory hold its files, and no others of ours. Through one fd of the directory:
 * a sim of 10,000 cgroups has about 240,000 files, and each opened by its path from the root
 * cost two more resolutions (a reload took ~4 s).
 */
static int sync_dir(Backend *b, const Cgroup *c, const RDir *want, bool fresh, DriftList *drift, char **reterr_msg) {
        _cleanup_free_ const char **children = NULL;
        _cleanup_free_ bool *seen = NULL, *foreign = NULL;
        _cleanup_close_ int dfd = -1;
        struct stat st_dir;
        CgfsEntry *e = NULL;
        size_t n = 0, nchildren = 0;
        bool made;
        int r;

        for (const Cgroup *k = cgroup_first_child(c); k; k = cgroup_next_sibling(k))
                nchildren++;
        children = calloc(nchildren ? nchildren : 1, sizeof(char *));
        seen = calloc(want->n ? want->n : 1, sizeof(bool));
        if (!children || !seen)
                return -ENOMEM;
        nchildren = 0;
        for (const Cgroup *k = cgroup_first_child(c); k; k = cgroup_next_sibling(k))
                children[nchildren++] = cgroup_name(k);
        qsort(children, nchildren, sizeof(char *), strp_cmp);

        r = open_listed(b, want->path, &dfd, &st_dir, &made, &e, &n);
        if (r < 0)
                return backend_msg(reterr_msg, r, "Failed to render '%s/%s': %s", b->root, want->path, strerror(-r));

        /*
         * First look, then touch. In a directory that is not ours yet (@fresh), foreign content
         * stops us before anything changes. In our sim, it is an owner's (a delegated cgroup's
         * directory is its owner's): reported and left alone, never fatal, so that no owner can
         * stop the daemon's start or reload.
         */
        foreign = calloc(n ? n : 1, sizeof(bool));
        if (!foreign)
                r = -ENOMEM;
        for (size_t i = 0; i < n && r >= 0; i++) {
                _cleanup_free_ char *sub = join_path(want->path, e[i].name);
                if (!sub)
                        r = -ENOMEM;
                else if (e[i].type == CGFS_ENTRY_DIR) {
                        if (!bsearch(&e[i].name, children, nchildren, sizeof(char *), strp_cmp)) {
                                _cleanup_free_ char *why = NULL;
                                r = check_removable(b, sub, 1, fresh ? reterr_msg : &why);
                                if (r == -ENOTEMPTY && !fresh) {
                                        foreign[i] = true;
                                        r = 0;
                                }
                        }
                } else if (!is_cgroup_file_name(e[i].name)) {
                        if (fresh)
                                r = backend_msg(reterr_msg, -ENOTEMPTY, "'%s/%s' is not part of a simulated "
                                                "hierarchy; refusing to touch it", b->root, sub);
                        else
                                foreign[i] = true;
                }
        }

        for (size_t i = 0; i < n && r >= 0; i++) {
                _cleanup_free_ char *sub = join_path(want->path, e[i].name);
                const RFile *f;

                if (!sub) {
                        r = -ENOMEM;
                        break;
                }
                if (foreign[i]) {
                        r = drift_list_add(drift, want->path,
                                           e[i].type == CGFS_ENTRY_DIR ? "directory" :
                                           e[i].type == CGFS_ENTRY_FILE ? "file" :
                                           "special file (FIFO, socket, device or symlink)", "", e[i].name);
                        if (r >= 0)
                                drift->v[drift->n - 1].left_alone = true;
                        continue;
                }
                if (e[i].type == CGFS_ENTRY_DIR) {
                        if (bsearch(&e[i].name, children, nchildren, sizeof(char *), strp_cmp))
                                continue;
                        r = remove_dir(b, sub, true);
                        if (r >= 0)
                                r = drift_list_add(drift, want->path, "stray directory", "", e[i].name);
                        continue;
                }
                f = bsearch(e[i].name, want->files, want->n, sizeof(RFile), rfile_cmp);
                if (!f) {
                        r = cgfs_unlink_at(dfd, e[i].name);
                        if (r >= 0 && !cgfs_is_tmp_name(e[i].name))
                                r = drift_list_add(drift, want->path, "stray file", "", e[i].name);
                        continue;
                }
                seen[f - want->files] = true;

                _cleanup_free_ char *content = NULL;
                struct stat st;
                bool same = false;

                if (e[i].type == CGFS_ENTRY_FILE && cgfs_file_stat_at(dfd, f->name, &st) >= 0 &&
                    (st.st_mode & 07777) == f->mode) {
                        /* a write-only file may be unreadable for us: its rendering is empty */
                        if (f->mode == 0200)
                                same = st.st_size == 0 && !*f->content;
                        else
                                same = cgfs_read_at(dfd, f->name, &content) >= 0 && streq(content, f->content);
                }
                if (same)
                        continue;
                if (e[i].type != CGFS_ENTRY_FILE)
                        r = cgfs_unlink_at(dfd, f->name);
                if (r >= 0)
                        r = cgfs_put_file_at(dfd, &st_dir, f->name, f->content, f->mode, 0);
                if (r >= 0)
                        r = drift_list_add(drift, want->path, f->name, f->content,
                                           content ? content : e[i].type == CGFS_ENTRY_FILE ? "(other mode)" : "(not a file)");
        }
        for (size_t i = 0; i < want->n && r >= 0; i++) {
                if (seen[i])
                        continue;
                r = cgfs_put_file_at(dfd, &st_dir, want->files[i].name, want->files[i].content,
                                     want->files[i].mode, 0);
                if (r >= 0 && !made && !fresh)
                        r = drift_list_add(drift, want->path, want->files[i].name, want->files[i].content, "(missing)");
        }
        cgfs_entries_free(e, n);
        if (r < 0)
                return backend_msg(reterr_msg, r, "Failed to render '%s/%s': %s", b->root, want->path, strerror(-r));
        return 0;
}

static int sync_all(Backend *b, bool fresh, DriftList *drift, char **reterr_msg) {
        Cgroup *root = hierarchy_root(b->model);
        int r;

        for (Cgroup *c = root; c; c = cgroup_next_descendant_pre(c, root)) {
                Render one = {};

                r = render_region(b->model, c, false, &one);
                if (r < 0)
                        return r;
                r = sync_dir(b, c, &one.dirs[0], fresh, drift, reterr_msg);
                render_done(&one);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* ---- the backend ---- */

static int model_from_state(const BackendState *st, const char *where, Hierarchy **ret, char **reterr_msg) {
        _cleanup_(hierarchy_freep) Hierarchy *h = NULL;
        _cleanup_free_ char *msg = NULL;
        int r;

        r = hierarchy_new(&h, RULES_BYPASS, st->controllers);
        if (r < 0)
                return backend_msg(reterr_msg, r == -EINVAL ? -EUCLEAN : r, "%s: bad controller set", where);
        for (size_t i = 0; i < st->n; i++) {
                const BackendStateCgroup *sc = &st->cgroups[i];
                Cgroup *c;

                r = hierarchy_import(h, sc->path, sc->threaded, sc->subtree_control, sc->subtree_bypass,
                                     sc->enable_ss_mask, 0, NULL);
                if (r >= 0)
                        r = hierarchy_lookup(h, sc->path, &c);
                if (r >= 0)
                        r = state_apply_limits(h, c, sc->max_depth, sc->max_descendants);
                for (size_t j = 0; r >= 0 && j < sc->n_values; j++)
                        r = cgroup_value_restore(h, c, sc->values[2 * j], sc->values[2 * j + 1]);
                if (r < 0)
                        return backend_msg(reterr_msg, r == -ENOMEM ? r : -EUCLEAN,
                                           "%s: the cgroup '%s' cannot be loaded into the model: %s",
                                           where, sc->path, strerror(-r));
        }
        r = hierarchy_check(h, &msg);
        if (r < 0)
                return backend_msg(reterr_msg, r, "%s: %s", where, strempty(msg));
        *ret = TAKE_PTR(h);
        return 0;
}

static size_t file_size_at(int dir_fd, const char *name) {
        struct stat st;
        return fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) >= 0 ? (size_t) st.st_size : 0;
}

/* the whole model into the state file, then the journal it replaces goes */
static int sim_save_all(Backend *b) {
        BackendState st = {};
        int r;

        r = state_from_model(b->model, false, &st);
        if (r < 0)
                return r;
        st.backend = strdup("sim");
        st.root = strdup(b->root_real);
        /* the simulated kernel's memory: whole after a crash of ours, but, like a
         * kernel's cgroups, not kept through a power loss; no fsync on every change */
        r = st.backend && st.root ? state_save(b->state_fd, SIM_STATE, &st, false) : -ENOMEM;
        state_done(&st);
        if (r < 0)
                return r;
        /* a crash before this unlink replays the journal over the newer state: the same result */
        if (unlinkat(b->state_fd, SIM_JOURNAL, 0) < 0 && errno != ENOENT)
                return -errno;
        sim(b)->state_bytes = file_size_at(b->state_fd, SIM_STATE);
        sim(b)->journal_bytes = 0;
        sim_forget_dirty(sim(b));
        return 0;
}

/*
 * What changed since the last save, appended to the journal: a save costs
 * the regions the operations touched (a leaf's write, one record), not the
 * tree. The journal is folded into the state file when it outgrows it.
 */
static int sim_save(Backend *b) {
        Sim *s = sim(b);
        int r = 0;

        if (s->all || s->state_bytes == 0)
                return sim_save_all(b);
        /* every region in one append (state_journal_append()) */
        BackendState *states = calloc(s->n_dirty ?: 1, sizeof(BackendState));
        StateRegion *regions = calloc(s->n_dirty ?: 1, sizeof(StateRegion));
        size_t bytes = 0;

        if (!states || !regions)
                r = -ENOMEM;
        for (size_t i = 0; i < s->n_dirty && r >= 0; i++) {
                Cgroup *c;

                if (hierarchy_lookup(b->model, s->dirty[i].path, &c) >= 0)
                        r = state_from_region(b->model, c, s->dirty[i].subtree, false, &states[i]);
                regions[i] = (StateRegion) { .path = s->dirty[i].path, .subtree = s->dirty[i].subtree,
                                             .records = &states[i] };
        }
        if (r >= 0 && s->n_dirty > 0)
                r = state_journal_append(b->state_fd, SIM_JOURNAL, regions, s->n_dirty, &bytes);
        s->journal_bytes += bytes;
        for (size_t i = 0; states && i < s->n_dirty; i++)
                state_done(&states[i]);
        free(states);
        free(regions);
        if (r < 0)
                return sim_save_all(b); /* a torn region is ignored at load; the whole state replaces it */
        sim_forget_dirty(s);
        if (s->journal_bytes > s->state_bytes && s->journal_bytes > SIM_JOURNAL_MIN_COMPACT)
                return sim_save_all(b);
        return 0;
}

static int sim_open(Backend *b, const BackendOptions *opts, char **reterr_msg) {
        _cleanup_free_ char *where = NULL;
        DriftList drift = {};
        BackendState st = {};
        bool fresh;
        int r;

        if (asprintf(&where, "%s/%s", b->state_dir, SIM_STATE) < 0)
                return -ENOMEM;
        b->data = calloc(1, sizeof(Sim));
        if (!b->data)
                return -ENOMEM;
        r = state_load(b->state_fd, b->state_dir, SIM_STATE, &st, reterr_msg);
        fresh = r == -ENOENT;
        if (r >= 0) {
                sim(b)->state_bytes = file_size_at(b->state_fd, SIM_STATE);
                r = state_journal_replay(b->state_fd, b->state_dir, SIM_JOURNAL, &st, &sim(b)->journal_bytes,
                                         reterr_msg);
        }
        if (fresh) {
                /* like a booted system whose init has written the root's subtree_control once */
                r = hierarchy_new(&b->model, RULES_BYPASS, opts->sim_controllers ?: CGMASK_VM_KERNEL);
                if (r >= 0)
                        hierarchy_settle_root(b->model);
        }
        else if (r >= 0) {
                if (!streq(st.backend, "sim"))
                        r = backend_msg(reterr_msg, -EUCLEAN, "%s belongs to the %s backend", where, st.backend);
                else if (!streq(st.root, b->root_real))
                        r = backend_msg(reterr_msg, -EUCLEAN, "%s describes '%s', not '%s'",
                                        where, st.root, b->root_real);
                else
                        r = model_from_state(&st, where, &b->model, reterr_msg);
        }
        state_done(&st);
        if (r < 0)
                return r;
        /* the model is what the directory shows: syncing only repairs the files */
        if (b->read_only)
                return 0;

        r = sync_all(b, fresh, &drift, reterr_msg);
        if (r < 0) {
                drift_list_done(&drift);
                return r;
        }
        backend_set_drift(b, &drift);
        /* from now on the directory has a state that says it is ours */
        if (fresh)
                return sim_save_all(b);
        return 0;
}

static void sim_done(Backend *b) {
        if (b->data)
                sim_forget_dirty(sim(b));
        free(b->data);
        b->data = NULL;
}

/*
 * Whether the directory we render is still the sim root: removed (and maybe
 * made again under that name), nothing we write below it reaches anyone.
 */
static int check_root(Backend *b, char **reterr_msg) {
        struct stat st_fd, st_path;

        if (fstat(b->root_fd, &st_fd) < 0)
                return -errno;
        if (st_fd.st_nlink > 0 && stat(b->root_real, &st_path) >= 0 &&
            st_path.st_dev == st_fd.st_dev && st_path.st_ino == st_fd.st_ino)
                return 0;
        return backend_msg(reterr_msg, -ENOENT, "The sim root '%s' was deleted%s while cgbypassd ran; restart "
                           "cgbypassd to make it again from the saved state", b->root,
                           st_fd.st_nlink > 0 ? " or replaced" : "");
}

static int sim_refresh(Backend *b, char **reterr_msg) {
        DriftList drift = {};
        int r;

        r = check_root(b, reterr_msg);
        if (r < 0)
                return r;
        r = sync_all(b, false, &drift, reterr_msg);
        if (r < 0) {
                drift_list_done(&drift);
                return r;
        }
        backend_set_drift(b, &drift);
        return 0;
}

/* Unless @r already failed, brings the directory from @before to @after; on failure back again. */
static int apply_or_undo(Backend *b, int r, const Render *before, const Render *after) {
        if (r < 0)
                return r;
        r = apply_render(b, before, after);
        if (r < 0)
                (void) apply_render(b, after, before);
        return r;
}

/* The end of a structural change: the model keeps the transaction only if @r succeeded, which marks @mark dirty. */
static int txn_end(Backend *b, ModelTxn *txn, int r, Render *before, Render *after, const char *mark, bool subtree) {
        (void) model_txn_finish(txn, &b->model, r);
        render_done(before);
        render_done(after);
        if (r >= 0)
                sim_mark(b, mark, subtree);
        return r;
}

/* The fault injection's say on the operation @verb, then @path's cgroup. */
static int sim_lookup(Backend *b, const char *verb, const char *path, const char *file, const char *value,
                      Cgroup **ret, Reason *reterr_reason) {
        int r = backend_fault_check(b, verb, path, file, value);
        return r < 0 ? r : model_lookup(b->model, path, ret, reterr_reason);
}

static int sim_mkdir(Backend *b, const char *path, Reason *reterr_reason) {
        Render none = {}, after = {};
        ModelTxn txn;
        Cgroup *c;
        int r;

        r = backend_fault_check(b, "mkdir", path, NULL, NULL);
        if (r >= 0)
                r = model_txn_mkdir(b->model, path, &txn, reterr_reason);
        if (r < 0)
                return r;
        r = hierarchy_lookup(b->model, path, &c);
        if (r >= 0)
                r = render_region(b->model, c, false, &after);
        r = apply_or_undo(b, r, &none, &after);
        return txn_end(b, &txn, r, &none, &after, path, false);
}

static int sim_rmdir(Backend *b, const char *path, Reason *reterr_reason) {
        _cleanup_free_ char *top_path = NULL;
        Render before = {}, after = {};
        const Cgroup *top;
        ModelTxn txn;
        bool threaded;
        Cgroup *c;
        int r;

        r = sim_lookup(b, "rmdir", path, NULL, NULL, &c, reterr_reason);
        if (r < 0)
                return r;
        /* a threaded child gone can turn its parent from thread root back to domain, and its siblings valid */
        threaded = cgroup_parent(c) && cgroup_get_type(b->model, c) == CGROUP_TYPE_THREADED;
        top = threaded ? cgroup_parent(c) : c;
        r = backend_cgroup_relpath(top, &top_path);
        if (r >= 0)
                r = render_region(b->model, top, threaded, &before);
        if (r < 0)
                return r;
        r = model_txn_rmdir(b->model, path, &txn, reterr_reason);
        if (r < 0) {
                render_done(&before);
                return r;
        }
        if (threaded) {
                r = hierarchy_lookup(b->model, top_path, &c);
                if (r >= 0)
                        r = render_region(b->model, c, true, &after);
        }
        r = apply_or_undo(b, r, &before, &after);
        return txn_end(b, &txn, r, &before, &after, threaded ? top_path : path, true);
}

/* The cgroups whose files a write can change: control files reach the subtree, cgroup.type the siblings'. */
static const Cgroup *write_region(const Cgroup *c, const char *file, bool *ret_subtree) {
        *ret_subtree = true;
        if (streq(file, "cgroup.subtree_control") || streq(file, "cgroup.controllers"))
                return c;
        if (streq(file, "cgroup.type"))
                return cgroup_parent(c) ?: c;
        *ret_subtree = false;
        return c;
}

/* A controller file's value: only @path's own directory changes. */
static int sim_write_value(Backend *b, Cgroup *c, const char *file, const char *value, Reason *reterr_reason) {
        _cleanup_free_ char *old = NULL, *old_linked = NULL;
        const char *linked = cfvalue_linked(file);
        Render before = {}, after = {};
        int r;

        r = cgroup_value_read(b->model, c, file, &old);
        if (r >= 0 && linked)
                r = cgroup_value_read(b->model, c, linked, &old_linked);
        if (r >= 0)
                r = render_region(b->model, c, false, &before);
        if (r == -ENOENT && reterr_reason)
                *reterr_reason = REASON_NO_SUCH_FILE;
        if (r < 0)
                return r;
        r = cgroup_value_write(b->model, c, file, value, reterr_reason);
        if (r < 0) {
                render_done(&before);
                return r;
        }
        r = render_region(b->model, c, false, &after);
        r = apply_or_undo(b, r, &before, &after);
        if (r < 0) {
                (void) cgroup_value_restore(b->model, c, file, old);
                if (linked)
                        (void) cgroup_value_restore(b->model, c, linked, old_linked);
        } else {
                _cleanup_free_ char *path = NULL;
                if (backend_cgroup_relpath(c, &path) >= 0)
                        sim_mark(b, path, false);
                else
                        sim(b)->all = true;
        }
        render_done(&before);
        render_done(&after);
        return r;
}

static int sim_write(Backend *b, const char *path, const char *file, const char *value, Reason *reterr_reason) {
        _cleanup_free_ char *top_path = NULL;
        Render before = {}, after = {};
        const Cgroup *top;
        Cgroup *c, *top_after;
        ModelTxn txn;
        bool subtree;
        int r;

        r = sim_lookup(b, "write", path, file, value, &c, reterr_reason);
        if (r < 0)
                return r;
        if (cfvalue_known(file))
                return sim_write_value(b, c, file, value, reterr_reason);
        top = write_region(c, file, &subtree);
        r = backend_cgroup_relpath(top, &top_path);
        if (r >= 0)
                r = render_region(b->model, top, subtree, &before);
        if (r < 0)
                return r;

        r = model_txn_write(b->model, path, file, value, &txn, reterr_reason);
        if (r < 0) {
                render_done(&before);
                return r;
        }
        Hierarchy *h = model_txn_result(&txn, b->model);
        r = hierarchy_lookup(h, top_path, &top_after);
        if (r >= 0)
                r = render_region(h, top_after, subtree, &after);
        r = apply_or_undo(b, r, &before, &after);
        return txn_end(b, &txn, r, &before, &after, top_path, subtree);
}

static int sim_read(Backend *b, const char *path, const char *file, char **ret) {
        Cgroup *c;
        int r;

        r = hierarchy_lookup(b->model, path, &c);
        if (r < 0)
                return r;
        r = cgroup_read(b->model, c, file, ret);
        if (r == -ENOSYS && cfvalue_known(file))
                r = cgroup_value_read(b->model, c, file, ret);
        if (r == -ENOSYS) {
                *ret = strdup(default_content(file));
                return *ret ? 0 : -ENOMEM;
        }
        return r;
}

static int sim_chown(Backend *b, const char *path, uid_t uid, gid_t gid, char *const *files) {
        Cgroup *c;
        int r;

        /* only root changes owners; an unprivileged sim says so rather than pretending */
        if (!cgfs_running_as_root())
                return -EPERM;
        r = hierarchy_lookup(b->model, path, &c);
        if (r < 0)
                return r;
        for (char *const *f = files; f && *f; f++)
                if (!cgroup_has_file(b->model, c, *f))
                        return -ENOENT;
        return cgfs_chown(b->root_fd, path, files, uid, gid);
}

static int sim_set_writes_by_dir_owner(Backend *b, bool on) {
        if (on && !cgfs_running_as_root())
                return -EPERM;
        sim(b)->writes_by_dir_owner = on;
        return 0;
}

const BackendVTable backend_sim_vtable = {
        .open = sim_open,
        .done = sim_done,
        .refresh = sim_refresh,
        .mkdir = sim_mkdir,
        .rmdir = sim_rmdir,
        .write = sim_write,
        .read = sim_read,
        .chown = sim_chown,
        .set_writes_by_dir_owner = sim_set_writes_by_dir_owner,
        .save = sim_save,
};
