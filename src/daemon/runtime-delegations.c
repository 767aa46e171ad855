/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Delegations made at run time: their record in the state directory, and adding and ending them. */
#include <stdarg.h>

#include "cgbypass/fileio.h"
#include "cgbypass/log.h"
#include "cgbypass/strbuf.h"
#include "ownership.h"
#include "delegation-limits.h"
#include "runtime-delegations.h"
#include "systemd-managed.h"

#define HEADER "# cgbypassd run-time delegations v1; written by cgbypassd, do not edit"

static char *record_path(const char *dir) {
        char *s;
        return asprintf(&s, "%s/%s", dir, RUNTIME_DELEGATIONS_FILE_NAME) < 0 ? NULL : s;
}

static int parse_record(char *line, Config *c, const char *where, unsigned lineno) {
        char *save = NULL, *path, *tok;
        CgMask controllers = 0;
        bool create = false, persistent = false, have_uid = false, have_life = false;
        unsigned long uid = 0;

        tok = strtok_r(line, " ", &save);
        path = strtok_r(NULL, " ", &save);
        if (!tok || !streq(tok, "delegate") || !path || config_cgroup_path_verify(path, NULL) < 0 ||
            streq(path, "/"))
                return -EBADMSG;
        while ((tok = strtok_r(NULL, " ", &save))) {
                char *v = strchr(tok, '=');
                if (!v)
                        return -EBADMSG;
                *v++ = '\0';
                if (streq(tok, "uid")) {
                        char *end;
                        errno = 0;
                        uid = strtoul(v, &end, 10);
                        if (errno || *end || !*v || uid == 0 || uid >= UINT32_MAX)
                                return -EBADMSG;
                        have_uid = true;
                } else if (streq(tok, "controllers")) {
                        for (char *s2 = NULL, *n = strtok_r(v, ",", &s2); n; n = strtok_r(NULL, ",", &s2)) {
                                Controller x = controller_from_string(n);
                                if (x < 0)
                                        return -EBADMSG;
                                controllers |= CGMASK(x);
                        }
                } else if (streq(tok, "lifetime")) {
                        if (!streq(v, "cgroup") && !streq(v, "persistent"))
                                return -EBADMSG;
                        persistent = streq(v, "persistent");
                        have_life = true;
                } else if (streq(tok, "create")) {
                        if (!streq(v, "yes") && !streq(v, "no"))
                                return -EBADMSG;
                        create = streq(v, "yes");
                } else
                        return -EBADMSG;
        }
        if (!have_uid || !have_life)
                return -EBADMSG;
        return config_add_runtime_delegation(c, where, lineno, path, (uid_t) uid, controllers,
                                             create && persistent, persistent);
}

int runtime_delegations_merge(Config *c, ConfigErrors *errs) {
        _cleanup_free_ char *where = record_path(c->daemon.state_directory), *line = NULL;
        _cleanup_fclose_ FILE *f = NULL;
        size_t cap = 0, before = c->n_delegates;
        unsigned lineno = 0;
        int r = 0;

        if (!where)
                return -ENOMEM;
        f = fopen(where, "re");
        if (!f)
                return errno == ENOENT ? 0 : -errno;
        while (getline(&line, &cap, f) > 0) {
                lineno++;
                line[strcspn(line, "\n")] = '\0';
                if (lineno == 1 && streq(line, HEADER))
                        continue;
                r = lineno == 1 ? -EBADMSG : parse_record(line, c, where, lineno);
                if (r == -ENOMEM)
                        return r;
                if (r < 0) {
                        ConfigLocation loc = { .file = where, .line = lineno };
                        if (config_errors_add(errs, &loc, "not a run-time delegation record that cgbypassd "
                                              "wrote; remove the line (or the file) to drop it") < 0)
                                return -ENOMEM;
                        r = -EINVAL;
                }
        }
        if (r < 0)
                return r;
        /* the same rules as for [delegate] sections, checked together with them */
        return c->n_delegates > before ? config_validate_delegations(c, errs) : 0;
}

static int save(Manager *m, const Config *c) {
        _cleanup_free_ char *text = NULL;
        StrBuf b = STRBUF_INIT;
        int r;

        strbuf_printf(&b, "%s\n", HEADER);
        for (size_t i = 0; i < c->n_delegates; i++) {
                const DelegateSpec *d = &c->delegates[i];
                bool first = true;

                if (!d->runtime)
                        continue;
                strbuf_printf(&b, "delegate %s uid=%u controllers=", d->path, (unsigned) d->uid);
                FOREACH_CONTROLLER_IN(x, d->controllers) {
                        strbuf_printf(&b, "%s%s", first ? "" : ",", controller_to_string(x));
                        first = false;
                }
                strbuf_printf(&b, " lifetime=%s create=%s\n", d->persistent ? "persistent" : "cgroup",
                              d->create ? "yes" : "no");
        }
        r = strbuf_steal(&b, &text);
        if (r < 0)
                return r;
        return file_write_atomic(manager_state_dir(m), RUNTIME_DELEGATIONS_FILE_NAME, text);
}

/*
 * The desired state from the delegations as they are now; with @record also
 * as the applied one, when a delegation ended: its cgroup (or one made for a
 * delegation that ends with it) is then no longer wanted, and its removal is
 * no drift. (A new delegation's apply has just recorded what it applied.)
 */
static int rebuild_desired(Manager *m, bool record) {
        DesiredSet d = {};
        int r = desired_from_config(m->config, &d);

        if (r < 0)
                return r;
        desired_set_done(&m->desired);
        m->desired = d;
        manager_gone_look_again(m);
        if (!record || m->options.read_only)
                return 0;
        r = state_file_save(manager_state_dir(m), &m->desired);
        if (r < 0)
                log_warning_errno(r, "Failed to record the applied state in '%s', ignoring (a cgroup the ended "
                                  "delegation made may be reported as drift): %m", manager_state_dir(m));
        return 0;
}

void runtime_delegations_forget_gone(Manager *m) {
        bool dropped = false;
        int r;

        for (size_t i = m->config->n_delegates; i-- > 0;) {
                const DelegateSpec *d = &m->config->delegates[i];

                if (!d->runtime || d->persistent || manager_has_cgroup(m, d->path))
                        continue;
                log_info("The delegation of %s to uid %u ended: the cgroup is gone.", d->path, (unsigned) d->uid);
                config_remove_delegation(m->config, i);
                dropped = true;
        }
        if (!dropped)
                return;
        if (rebuild_desired(m, true) < 0)
                log_oom();
        if (m->options.read_only)
                return;
        r = save(m, m->config);
        if (r < 0)
                log_warning_errno(r, "Failed to record the ended delegations in '%s', ignoring (the next refresh "
                                  "ends them again): %m", manager_state_dir(m));
}

/* @f gets @reason and the words; the return is @r, the errno the header documents */
static int msg(Refusal *f, Reason reason, int r, const char *fmt, ...) _printf_(4, 5);
static int msg(Refusal *f, Reason reason, int r, const char *fmt, ...) {
        _cleanup_free_ char *text = NULL;
        va_list ap;
        int q;

        va_start(ap, fmt);
        q = vasprintf(&text, fmt, ap);
        va_end(ap);
        if (q < 0) {
                text = NULL;
                return -ENOMEM;
        }
        q = refusal_set_request(f, reason, "%s", text);
        return q == -ENOMEM ? q : r;
}

/* The rule's words, with the request's own place ("WHERE:0") said as such. */
static int conflict(Refusal *f, const char *path, const char *where, const char *e) {
        _cleanup_free_ char *self = NULL;
        StrBuf b = STRBUF_INIT;
        const char *p;

        if (asprintf(&self, "%s:0", where) < 0)
                return -ENOMEM;
        if (startswith(e, self) && startswith(e + strlen(self), ": "))
                e += strlen(self) + 2;
        strbuf_printf(&b, "Cannot delegate %s: ", path);
        while ((p = strstr(e, self))) {
                strbuf_append_n(&b, e, (size_t) (p - e));
                strbuf_printf(&b, "this request");
                e = p + strlen(self);
        }
        strbuf_printf(&b, "%s", e);
        _cleanup_free_ char *text = NULL;
        if (strbuf_steal(&b, &text) < 0)
                return -ENOMEM;
        return msg(f, REASON_DELEGATION_CONFLICT, -EEXIST, "%s", text);
}

static char *parent_of(const char *path) {
        const char *slash = strrchr(path, '/');
        return slash == path ? strdup("/") : strndup(path, (size_t) (slash - path));
}

int manager_add_delegation(Manager *m, const char *path, uid_t uid, CgMask controllers, bool create,
                           bool persistent, Refusal *reterr) {
        _cleanup_free_ char *parent = parent_of(path), *where = record_path(manager_state_dir(m));
        ConfigErrors errs = CONFIG_ERRORS_INIT;
        ClientChanges next = {};
        DesiredSet d = {};
        Snapshot before;
        size_t writes = 0, idx;
        ApplyOutcome outcome = APPLY_REFUSED;
        int r;

        if (!parent || !where)
                return -ENOMEM;
        manager_snapshot_for_signals(m, NULL, &before);
        (void) manager_refresh_quiet(m, backend_get_type(m->backend) != BACKEND_SIM, path, NULL);
        if (!manager_has_cgroup(m, path) && !create) {
                r = msg(reterr, REASON_NO_SUCH_CGROUP, -ENOENT, "%s does not exist (and the option create is false)", path);
                goto finish;
        }
        if (!manager_has_cgroup(m, path) && !manager_has_cgroup(m, parent)) {
                r = msg(reterr, REASON_NO_SUCH_CGROUP, -ENOENT, "%s does not exist: make the cgroups above %s first", parent, path);
                goto finish;
        }
        /* as a [delegate] section: only a subtree systemd delegates (systemd-managed.h) */
        {
                _cleanup_free_ char *why = NULL;

                r = manager_check_systemd_delegation(m, path, uid, &why);
                if (r == -EINVAL)
                        r = msg(reterr, REASON_NOT_MANAGED, -EPERM, "%s", why);
                if (r < 0)
                        goto finish;
        }
        FOREACH_CONTROLLER_IN(x, controllers & ~hierarchy_builtin(backend_get_model(m->backend))) {
                r = msg(reterr, REASON_UNKNOWN_CONTROLLER, -EINVAL, "This hierarchy has no controller %s to delegate",
                        controller_to_string(x));
                goto finish;
        }
        /* what it holds already, or the one cgroup it makes */
        {
                _cleanup_free_ char *why = NULL;

                r = delegation_limits_check(m, path, delegated_cgroups(m), manager_has_cgroup(m, path) ? 0 : 1, &why);
                if (r == -EDQUOT)
                        r = msg(reterr, REASON_TOO_MANY_CGROUPS, r, "Cannot delegate %s: %s", path, why ? why : "a limit");
                if (r < 0)
                        goto finish;
        }

        /* as a [delegate] section would be: the same checks, together with the others */
        idx = m->config->n_delegates;
        r = config_add_runtime_delegation(m->config, where, 0, path, uid, controllers, create, persistent);
        if (r < 0)
                goto finish;
        r = config_validate_delegations(m->config, &errs);
        if (r == -EINVAL)
                r = conflict(reterr, path, where, config_errors_count(&errs) > 0 ? config_errors_get(&errs, 0) : "?");
        if (r < 0) {
                config_remove_delegation(m->config, idx);
                goto finish;
        }

        /* recorded first: a crash from here on finds it and applies it */
        r = save(m, m->config);
        if (r < 0) {
                config_remove_delegation(m->config, idx);
                r = msg(reterr, REASON_FAILED, r, "Failed to record the delegation in '%s': %s; nothing was changed",
                        manager_state_dir(m), strerror(-r));
                goto finish;
        }
        r = desired_from_config(m->config, &d);
        if (r >= 0)
                r = client_changes_copy(&m->changes, &next);
        if (r >= 0)
                r = manager_apply_with(m, &d, &next, &errs, &writes, &outcome);
        if (r < 0) {
                int q;

                config_remove_delegation(m->config, idx);
                q = save(m, m->config);
                if (q < 0)
                        log_error_errno(q, "Failed to take the record of the delegation of %s back; the next start "
                                        "applies it: %m", path);
                if (r == -EINVAL && config_errors_count(&errs) > 0)
                        r = msg(reterr, REASON_PARSE, r, "Cannot delegate %s: %s", path,
                                config_errors_get(&errs, config_errors_count(&errs) - 1));
                else
                        r = msg(reterr, r == -EINVAL ? REASON_PARSE : r == -ENOENT ? REASON_NO_SUCH_CGROUP : REASON_FAILED, r,
                                "Failed to apply the delegation of %s: %s; %s", path, strerror(-r),
                                outcome == APPLY_LEFT_BETWEEN ?
                                "taking it back failed too: the hierarchy is between the two until the next reload" :
                                "nothing was changed");
                goto finish;
        }
        /* made now; later, a delegation of lifetime "cgroup" ends with its cgroup */
        m->config->delegates[idx].create = create && persistent;
        desired_set_done(&d);
        r = rebuild_desired(m, false);
        if (r < 0)
                goto finish;
        client_changes_done(&m->changes);
        m->changes = next;
        next = (ClientChanges) {};
        (void) ownership_sync(m, path, NULL);
        log_info("Delegated %s to uid %u (%s; %zu operation(s)).", path, (unsigned) uid,
                 persistent ? "until RemoveDelegation" : "until the cgroup is removed", writes);
        r = 0;
finish:
        manager_emit_changes(m, &before);
        snapshot_done(&before);
        client_changes_done(&next);
        desired_set_done(&d);
        config_errors_done(&errs);
        return r;
}

int manager_remove_delegation(Manager *m, const char *path, uid_t *ret_uid, Refusal *reterr) {
        DelegateSpec *d = NULL;
        size_t idx = 0;
        uid_t uid;
        int r;

        for (size_t i = 0; i < m->config->n_delegates; i++)
                if (streq(m->config->delegates[i].path, path)) {
                        d = &m->config->delegates[i];
                        idx = i;
                }
        if (!d)
                return msg(reterr, REASON_NO_SUCH_DELEGATION, -ESRCH, "%s is not delegated", path);
        if (!d->runtime)
                return msg(reterr, REASON_NOT_RUNTIME_DELEGATION, -EPERM, "The delegation of %s is configured at %s:%u; remove that [delegate] "
                           "section and reload", path, d->section_loc.file, d->section_loc.line);
        uid = d->uid;
        d->runtime = false;     /* left out of the record */
        r = save(m, m->config);
        d->runtime = true;
        if (r < 0)
                return msg(reterr, REASON_FAILED, r, "Failed to record the end of the delegation in '%s': %s; nothing was "
                           "changed", manager_state_dir(m), strerror(-r));
        /* the desired state without it first: it may point to its path */
        d->create = false;
        r = rebuild_desired(m, true);
        if (r < 0)
                return r;
        config_remove_delegation(m->config, idx);
        /* the owner's switches are history; the cgroups keep their controllers */
        if (client_changes_prune(&m->changes, m->config) > 0) {
                r = manager_save_changes(m, &m->changes);
                if (r < 0)
                        log_warning_errno(r, "Failed to save the client changes in '%s', ignoring: %m",
                                          manager_state_dir(m));
        }
        (void) ownership_take_back(m, path, uid);
        log_info("Ended the delegation of %s to uid %u.", path, (unsigned) uid);
        if (ret_uid)
                *ret_uid = uid;
        return 0;
}
