/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The state file: what a backend keeps that the kernel does not (sim: the
 * whole hierarchy; emulated: the bypass state). Plain text, one record per
 * line, so an administrator can read it:
 *
 *   format 1
 *   backend sim
 *   root /srv/sim
 *   controllers cpuset,cpu,io,memory
 *   cgroup threaded=0 subtree_control=cpu subtree_bypass=io enable_ss_mask= max_depth=max max_descendants=max path=A/B
 *   value file=cpu.max shown=50000\s100000\n path=A/B
 *
 * A "value" record (sim) belongs to the cgroup record before it: what a
 * controller file shows, escaped onto one line (cgroup_value_escape()).
 * "root" and "path" take the rest of the line (names may hold spaces; the
 * model refuses newlines in names). Records are in pre-order.
 */
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>

#include "backend-internal.h"
#include "cgbypass/fileio.h"
#include "cgbypass/strbuf.h"

#define STATE_FORMAT 1

void state_done(BackendState *s) {
        for (size_t i = 0; i < s->n; i++) {
                free(s->cgroups[i].path);
                strv_freep(&s->cgroups[i].values);
        }
        free(s->cgroups);
        free(s->backend);
        free(s->root);
        *s = (BackendState) {};
}

static int parse_limit(const char *v, int *ret) {
        char *end;
        long l;

        if (streq(v, "max")) {
                *ret = INT_MAX;
                return 0;
        }
        errno = 0;
        l = strtol(v, &end, 10);
        if (errno || end == v || *end || l < 0 || l >= INT_MAX)
                return -EINVAL;
        *ret = (int) l;
        return 0;
}

static int parse_cgroup(char *line, BackendStateCgroup *c) {
        char *path = strstr(line, " path=");
        char *save = NULL;
        int r;

        if (!path)
                return -EINVAL;
        *path = '\0';
        path += strlen(" path=");
        *c = (BackendStateCgroup) { .max_depth = INT_MAX, .max_descendants = INT_MAX };

        for (char *tok = strtok_r(line, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
                char *eq = strchr(tok, '=');
                CgMask *mask = NULL;

                if (!eq)
                        return -EINVAL;
                *eq++ = '\0';
                if (streq(tok, "threaded")) {
                        if (!streq(eq, "0") && !streq(eq, "1"))
                                return -EINVAL;
                        c->threaded = streq(eq, "1");
                } else if (streq(tok, "subtree_control"))
                        mask = &c->subtree_control;
                else if (streq(tok, "subtree_bypass"))
                        mask = &c->subtree_bypass;
                else if (streq(tok, "enable_ss_mask"))
                        mask = &c->enable_ss_mask;
                else if (streq(tok, "max_depth")) {
                        if (parse_limit(eq, &c->max_depth) < 0)
                                return -EINVAL;
                } else if (streq(tok, "max_descendants")) {
                        if (parse_limit(eq, &c->max_descendants) < 0)
                                return -EINVAL;
                } else
                        return -EINVAL;
                if (mask) {
                        r = controller_mask_from_list(eq, mask, NULL);
                        if (r < 0)
                                return r;
                }
        }
        c->path = strdup(path);
        return c->path ? 0 : -ENOMEM;
}

/* "file=F shown=ESCAPED path=P" for the cgroup record @c */
static int parse_value(char *line, BackendStateCgroup *c) {
        _cleanup_free_ char *shown = NULL;
        char *path = strstr(line, " path="), *sp;

        if (!path || !startswith(line, "file="))
                return -EINVAL;
        *path = '\0';
        if (!streq(path + strlen(" path="), c->path))
                return -EINVAL;
        line += strlen("file=");
        sp = strstr(line, " shown=");
        if (!sp)
                return -EINVAL;
        *sp = '\0';
        if (cgroup_value_unescape(sp + strlen(" shown="), &shown) < 0)
                return -EINVAL;
        char **v = reallocarray(c->values, 2 * c->n_values + 3, sizeof(char *));
        if (!v)
                return -ENOMEM;
        c->values = v;
        v[2 * c->n_values] = strdup(line);
        v[2 * c->n_values + 1] = TAKE_PTR(shown);
        v[2 * c->n_values + 2] = NULL;
        if (!v[2 * c->n_values])
                return -ENOMEM;
        c->n_values++;
        return 0;
}

/* a stream to read @name in @state_fd, opened with @flags */
static int open_stream(int state_fd, const char *name, int flags, FILE **ret) {
        int fd = openat(state_fd, name, flags | O_NOFOLLOW | O_CLOEXEC), r;

        if (fd < 0)
                return -errno;
        *ret = fdopen(fd, "r");
        if (*ret)
                return 0;
        r = -errno;
        (void) close(fd);
        return r;
}

/* a record that does not parse: -ENOMEM as it is, else -EUCLEAN with where */
static int bad_record(int r, char **reterr_msg, const char *state_dir, const char *name, unsigned lineno,
                      const char *what) {
        if (r == -ENOMEM)
                return r;
        return backend_msg(reterr_msg, -EUCLEAN, "%s/%s:%u: bad %s record", state_dir, name, lineno, what);
}

int state_load(int state_fd, const char *state_dir, const char *name, BackendState *ret, char **reterr_msg) {
        _cleanup_fclose_ FILE *f = NULL;
        _cleanup_free_ char *line = NULL;
        BackendState s = {};
        size_t cap = 0;
        unsigned lineno = 0;
        bool have_format = false;
        int r = 0;

        if (state_fd < 0)
                return -ENOENT; /* a read-only backend without a state directory yet */
        r = open_stream(state_fd, name, O_RDONLY, &f);
        if (r < 0)
                return r;

        for (;;) {
                ssize_t n = getline(&line, &cap, f);
                if (n < 0)
                        break;
                lineno++;
                if (n > 0 && line[n - 1] == '\n')
                        line[--n] = '\0';
                if (line[0] == '#' || line[0] == '\0')
                        continue;

                if (startswith(line, "format ")) {
                        if (atoi(line + 7) != STATE_FORMAT) {
                                r = backend_msg(reterr_msg, -EUCLEAN, "%s/%s:%u: unsupported format '%s'",
                                                state_dir, name, lineno, line + 7);
                                goto fail;
                        }
                        have_format = true;
                } else if (startswith(line, "backend ")) {
                        free(s.backend);
                        s.backend = strdup(line + 8);
                        if (!s.backend)
                                goto oom;
                } else if (startswith(line, "root ")) {
                        free(s.root);
                        s.root = strdup(line + 5);
                        if (!s.root)
                                goto oom;
                } else if (startswith(line, "controllers ")) {
                        r = controller_mask_from_list(line + 12, &s.controllers, NULL);
                        if (r < 0) {
                                r = backend_msg(reterr_msg, -EUCLEAN, "%s/%s:%u: bad controller list",
                                                state_dir, name, lineno);
                                goto fail;
                        }
                } else if (startswith(line, "value ")) {
                        r = s.n > 0 ? parse_value(line + 6, &s.cgroups[s.n - 1]) : -EINVAL;
                        if (r < 0) {
                                r = bad_record(r, reterr_msg, state_dir, name, lineno, "value");
                                goto fail;
                        }
                } else if (startswith(line, "cgroup ")) {
                        BackendStateCgroup *v = reallocarray(s.cgroups, s.n + 1, sizeof(BackendStateCgroup));
                        if (!v)
                                goto oom;
                        s.cgroups = v;
                        r = parse_cgroup(line + 7, &v[s.n]);
                        if (r < 0) {
                                r = bad_record(r, reterr_msg, state_dir, name, lineno, "cgroup");
                                goto fail;
                        }
                        s.n++;
                } else {
                        r = backend_msg(reterr_msg, -EUCLEAN, "%s/%s:%u: unknown record", state_dir, name, lineno);
                        goto fail;
                }
        }
        if (ferror(f)) {
                r = -EIO;
                goto fail;
        }
        if (!have_format || !s.backend || !s.root) {
                r = backend_msg(reterr_msg, -EUCLEAN, "%s/%s: incomplete (no format, backend or root line)",
                                state_dir, name);
                goto fail;
        }
        *ret = s;
        return 0;

oom:
        r = -ENOMEM;
fail:
        state_done(&s);
        return r;
}

static void print_limit(StrBuf *b, const char *key, int v) {
        if (v == INT_MAX)
                strbuf_printf(b, " %s=max", key);
        else
                strbuf_printf(b, " %s=%d", key, v);
}

static int format_cgroups(StrBuf *b, const BackendState *s) {
        for (size_t i = 0; i < s->n; i++) {
                const BackendStateCgroup *c = &s->cgroups[i];
                _cleanup_free_ char *sc = controller_mask_to_string(c->subtree_control, ",");
                _cleanup_free_ char *sb = controller_mask_to_string(c->subtree_bypass, ",");
                _cleanup_free_ char *en = controller_mask_to_string(c->enable_ss_mask, ",");

                if (!sc || !sb || !en)
                        return -ENOMEM;
                strbuf_printf(b, "cgroup threaded=%d subtree_control=%s subtree_bypass=%s enable_ss_mask=%s",
                              c->threaded, sc, sb, en);
                print_limit(b, "max_depth", c->max_depth);
                print_limit(b, "max_descendants", c->max_descendants);
                strbuf_printf(b, " path=%s\n", c->path);
                for (size_t j = 0; j < c->n_values; j++) {
                        _cleanup_free_ char *q = NULL;
                        if (cgroup_value_escape(c->values[2 * j + 1], &q) < 0)
                                return -ENOMEM;
                        strbuf_printf(b, "value file=%s shown=%s path=%s\n", c->values[2 * j], q, c->path);
                }
        }
        return 0;
}

static int state_format(const BackendState *s, char **ret) {
        _cleanup_free_ char *ctl = controller_mask_to_string(s->controllers, ",");
        StrBuf b = STRBUF_INIT;

        if (!ctl)
                return -ENOMEM;
        strbuf_printf(&b, "# cgbypassd backend state: rewritten as a whole by the backend; do not edit\n"
                      "format %d\nbackend %s\nroot %s\ncontrollers %s\n",
                      STATE_FORMAT, s->backend, s->root, ctl);
        if (format_cgroups(&b, s) < 0) {
                strbuf_done(&b);
                return -ENOMEM;
        }
        return strbuf_steal(&b, ret);
}

int state_save(int state_fd, const char *name, const BackendState *s, bool durable) {
        _cleanup_free_ char *text = NULL;
        int r;

        r = state_format(s, &text);
        if (r < 0)
                return r;
        /* we hold the state directory's lock: nobody else writes the temporary name */
        return durable ? file_write_atomic_changed_at(state_fd, name, text) : file_replace_at(state_fd, name, text);
}

static int limit_of(const Hierarchy *h, const Cgroup *c, const char *file, int *ret) {
        _cleanup_free_ char *s = NULL;
        int r;

        r = cgroup_read(h, c, file, &s);
        if (r < 0)
                return r;
        *ret = startswith(s, "max") ? INT_MAX : atoi(s);
        return 0;
}

int state_from_model(const Hierarchy *h, bool only_bypass, BackendState *ret) {
        return state_from_region(h, hierarchy_root(h), true, only_bypass, ret);
}

int state_from_region(const Hierarchy *h, const Cgroup *top, bool subtree, bool only_bypass, BackendState *ret) {
        BackendState s = { .controllers = hierarchy_builtin(h) };
        int r;

        for (const Cgroup *c = top; c; c = subtree ? cgroup_next_descendant_pre(c, top) : NULL) {
                CgMask sb = cgroup_get_subtree_bypass(c), en = cgroup_get_enable_ss_mask(c);
                BackendStateCgroup *v;

                if (only_bypass && !sb && !en)
                        continue;
                v = reallocarray(s.cgroups, s.n + 1, sizeof(BackendStateCgroup));
                if (!v) {
                        state_done(&s);
                        return -ENOMEM;
                }
                s.cgroups = v;
                v[s.n] = (BackendStateCgroup) {
                        .threaded = cgroup_get_type(h, c) == CGROUP_TYPE_THREADED,
                        .subtree_control = cgroup_get_subtree_control(c),
                        .subtree_bypass = sb,
                        .enable_ss_mask = en,
                };
                r = backend_cgroup_relpath(c, &v[s.n].path);
                if (r >= 0)
                        r = limit_of(h, c, "cgroup.max.depth", &v[s.n].max_depth);
                if (r >= 0)
                        r = limit_of(h, c, "cgroup.max.descendants", &v[s.n].max_descendants);
                s.n++;
                const char *file, *shown;
                for (size_t j = 0; r >= 0 && !only_bypass && cgroup_value_get(h, c, j, &file, &shown) >= 0; j++) {
                        BackendStateCgroup *sc = &v[s.n - 1];
                        char **nv = reallocarray(sc->values, 2 * j + 3, sizeof(char *));
                        if (!nv) {
                                r = -ENOMEM;
                                break;
                        }
                        sc->values = nv;
                        nv[2 * j] = strdup(file);
                        nv[2 * j + 1] = strdup(shown);
                        nv[2 * j + 2] = NULL;
                        sc->n_values = j + 1;
                        if (!nv[2 * j] || !nv[2 * j + 1])
                                r = -ENOMEM;
                }
                if (r < 0) {
                        state_done(&s);
                        return r;
                }
        }
        *ret = s;
        return 0;
}

int state_apply_limits(Hierarchy *h, Cgroup *c, int max_depth, int max_descendants) {
        char buf[32];
        int r;

        if (max_depth != INT_MAX) {
                (void) snprintf(buf, sizeof(buf), "%d", max_depth);
                r = cgroup_write(h, c, "cgroup.max.depth", buf, NULL);
                if (r < 0)
                        return r;
        }
        if (max_descendants != INT_MAX) {
                (void) snprintf(buf, sizeof(buf), "%d", max_descendants);
                r = cgroup_write(h, c, "cgroup.max.descendants", buf, NULL);
                if (r < 0)
                        return r;
        }
        return 0;
}

/*
 * The journal beside a state file (sim): what changed since the file was
 * written, as regions, each the records of one cgroup or of a subtree as
 * they were when the region was appended:
 *
 *   region subtree=1 path=A/B
 *   cgroup ... path=A/B
 *   value ... path=A/B
 *   end
 *
 * No records: the cgroup (subtree) is gone. A region replaces what it
 * covers, so replaying the journal over the state file it belongs to, or
 * over one written later (a crash between writing the compacted state and
 * removing the journal), gives the same result. A region without its "end"
 * (torn by a crash while appending) is ignored.
 *
 * The regions of one save go in one write(2): each holds its cgroups as they
 * are now, so a child's region may need its parent's (a controller the
 * parent enables only now), and a process killed between two appends left a
 * journal the model could not load.
 */
int state_journal_append(int state_fd, const char *name, const StateRegion *regions, size_t n, size_t *ret_bytes) {
        _cleanup_free_ char *text = NULL;
        _cleanup_close_ int fd = -1;
        StrBuf b = STRBUF_INIT;
        int r;

        for (size_t i = 0; i < n; i++) {
                strbuf_printf(&b, "region subtree=%d path=%s\n", regions[i].subtree, regions[i].path);
                if (regions[i].records && format_cgroups(&b, regions[i].records) < 0) {
                        strbuf_done(&b);
                        return -ENOMEM;
                }
                strbuf_append(&b, "end\n");
        }
        r = strbuf_steal(&b, &text);
        if (r < 0)
                return r;
        fd = openat(state_fd, name, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd < 0)
                return -errno;
        off_t end = lseek(fd, 0, SEEK_END);
        if (end < 0)
                return -errno;
        size_t len = strlen(text);
        ssize_t k = write(fd, text, len);
        if (k < 0 || (size_t) k != len) {
                r = k < 0 ? -errno : -ENOSPC;
                /* a region cut short (a full disk) goes, or the next one would be read as its rest */
                (void) ftruncate(fd, end);
                return r;
        }
        if (ret_bytes)
                *ret_bytes = len;
        return 0;
}

static bool covers(const char *top, bool subtree, const char *path) {
        size_t n = strlen(top);

        if (streq(top, path))
                return true;
        if (!subtree)
                return false;
        if (streq(top, "."))
                return true;
        return strncmp(path, top, n) == 0 && path[n] == '/';
}

static void cgroup_record_done(BackendStateCgroup *c) {
        free(c->path);
        strv_freep(&c->values);
}

/* @s with what @region covers replaced by @region's records (taken), where the first covered record was */
static int apply_region(BackendState *s, const char *top, bool subtree, BackendState *region) {
        size_t at = SIZE_MAX, k = 0;
        BackendStateCgroup *v;

        for (size_t i = 0; i < s->n; i++) {
                if (covers(top, subtree, s->cgroups[i].path)) {
                        if (at == SIZE_MAX)
                                at = k;
                        cgroup_record_done(&s->cgroups[i]);
                        continue;
                }
                s->cgroups[k++] = s->cgroups[i];
        }
        s->n = k;
        if (at == SIZE_MAX)
                at = s->n;      /* new: after everything, so after its parent */
        if (region->n == 0)
                return 0;
        v = reallocarray(s->cgroups, s->n + region->n, sizeof(BackendStateCgroup));
        if (!v)
                return -ENOMEM;
        s->cgroups = v;
        memmove(v + at + region->n, v + at, (s->n - at) * sizeof(BackendStateCgroup));
        memcpy(v + at, region->cgroups, region->n * sizeof(BackendStateCgroup));
        s->n += region->n;
        free(region->cgroups);
        region->cgroups = NULL;
        region->n = 0;
        return 0;
}

int state_journal_replay(int state_fd, const char *state_dir, const char *name, BackendState *s, size_t *ret_bytes,
                         char **reterr_msg) {
        _cleanup_fclose_ FILE *f = NULL;
        _cleanup_free_ char *line = NULL, *top = NULL;
        BackendState region = {};
        size_t cap = 0, bytes = 0, good = 0;
        unsigned lineno = 0;
        bool subtree = false;
        int r = 0;

        if (ret_bytes)
                *ret_bytes = 0;
        if (state_fd < 0)
                return 0;
        r = open_stream(state_fd, name, O_RDWR, &f);
        if (r == -EACCES || r == -EROFS)
                r = open_stream(state_fd, name, O_RDONLY, &f);
        if (r < 0)
                return r == -ENOENT ? 0 : r;
        for (;;) {
                ssize_t n = getline(&line, &cap, f);
                if (n < 0)
                        break;
                bytes += (size_t) n;
                lineno++;
                if (n == 0 || line[n - 1] != '\n')
                        break;          /* torn: the region it belongs to has no end */
                line[--n] = '\0';
                if (startswith(line, "region ")) {
                        const char *p = strstr(line, " path=");
                        if (top) {
                                /* the one before has no end: its append failed (and could not be cut
                                 * off), so it was never saved */
                                state_done(&region);
                                region = (BackendState) {};
                                free(top);
                                top = NULL;
                        }
                        if (!p || !(startswith(line + 7, "subtree=0 ") || startswith(line + 7, "subtree=1 "))) {
                                r = -EINVAL;
                                break;
                        }
                        subtree = line[15] == '1';
                        top = strdup(p + 6);
                        if (!top) {
                                r = -ENOMEM;
                                break;
                        }
                } else if (streq(line, "end")) {
                        if (!top) {
                                r = -EINVAL;
                                break;
                        }
                        r = apply_region(s, top, subtree, &region);
                        if (r < 0)
                                break;
                        good = bytes;
                        free(top);
                        top = NULL;
                } else if (top && startswith(line, "cgroup ")) {
                        BackendStateCgroup *v = reallocarray(region.cgroups, region.n + 1, sizeof(BackendStateCgroup));
                        if (!v) {
                                r = -ENOMEM;
                                break;
                        }
                        region.cgroups = v;
                        v[region.n] = (BackendStateCgroup) {};
                        r = parse_cgroup(line + 7, &v[region.n]);
                        if (r < 0)
                                break;
                        region.n++;
                } else if (top && startswith(line, "value ")) {
                        r = region.n > 0 ? parse_value(line + 6, &region.cgroups[region.n - 1]) : -EINVAL;
                        if (r < 0)
                                break;
                } else {
                        r = -EINVAL;
                        break;
                }
        }
        state_done(&region);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return backend_msg(reterr_msg, -EUCLEAN, "%s/%s:%u: bad journal record", state_dir, name, lineno);
        /* cut a torn region off, or the next one appended would be read as its rest */
        if (good < bytes && ftruncate(fileno(f), (off_t) good) < 0 && errno != EBADF && errno != EINVAL)
                return -errno;
        if (ret_bytes)
                *ret_bytes = good;
        return 0;
}
