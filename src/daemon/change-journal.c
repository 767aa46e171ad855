/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The journal of client changes: group-committed records after the snapshot (see change-journal.h). */
#include <assert.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgbypass/hash.h"
#include "cgbypass/log.h"
#include "cgbypass/macro.h"
#include "change-journal.h"

void change_journal_done(ChangeJournal *j) {
        free(j->dir);
        strbuf_done(&j->batch);
        *j = (ChangeJournal) {};
}

static char *journal_path(const ChangeJournal *j) {
        char *p;
        return asprintf(&p, "%s/%s", j->dir, CHANGE_JOURNAL_FILE_NAME) < 0 ? NULL : p;
}

int change_journal_add(ChangeJournal *j, const ClientChange *x) {
        StrBuf line = STRBUF_INIT;
        uint64_t seq = j->seq + 1;

        strbuf_printf(&line, "%" PRIu64 " ", seq);
        client_change_format(&line, x);
        if (line.oom) {
                strbuf_done(&line);
                return -ENOMEM;
        }
        strbuf_printf(&j->batch, "%" PRIu64 " %016" PRIx64 "%s\n", seq, fnv1a64(line.s, line.len),
                      line.s + strcspn(line.s, " "));
        strbuf_done(&line);
        if (j->batch.oom)
                return -ENOMEM;
        j->seq = seq;
        j->n_batch++;
        return 0;
}

static int write_all_at(int fd, const char *s, size_t n, uint64_t off) {
        while (n > 0) {
                ssize_t k = pwrite(fd, s, n, (off_t) off);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (k == 0)
                        return -EIO;
                s += k, n -= (size_t) k, off += (uint64_t) k;
        }
        return 0;
}

/* zeros in [@from, @to) */
static int write_zeros(int fd, uint64_t from, uint64_t to) {
        static const char zeros[65536];

        while (from < to) {
                size_t n = to - from < sizeof(zeros) ? (size_t) (to - from) : sizeof(zeros);
                int r = write_all_at(fd, zeros, n, from);
                if (r < 0)
                        return r;
                from += n;
        }
        return 0;
}

int change_journal_commit(ChangeJournal *j) {
        _cleanup_free_ char *path = NULL;
        _cleanup_close_ int fd = -1;
        uint64_t new_size, new_end;
        size_t pad;
        struct stat st;
        int r;

        if (j->n_batch == 0)
                return 0;
        /* to the next block boundary: a '#', spaces, a newline */
        pad = CHANGE_JOURNAL_BLOCK - j->batch.len % CHANGE_JOURNAL_BLOCK;
        if (pad < 2)
                pad += CHANGE_JOURNAL_BLOCK;
        strbuf_putc(&j->batch, '#');
        /* one memset, not a call per byte: the padding is most of a commit's 4 KiB */
        strbuf_fill(&j->batch, ' ', pad - 2);
        strbuf_putc(&j->batch, '\n');
        path = journal_path(j);
        if (!path || j->batch.oom) {
                r = -ENOMEM;
                goto drop;
        }
        /* by name each time: a state directory made read-only since refuses here */
        fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd < 0) {
                r = -errno;
                goto drop;
        }
        /* what a crash or a failed commit left after the last complete commit goes */
        if (fstat(fd, &st) < 0) {
                r = -errno;
                goto drop;
        }
        if ((uint64_t) st.st_size != j->end) {
                if (ftruncate(fd, (off_t) j->size) < 0) {
                        r = -errno;
                        goto drop;
                }
                j->end = j->size;
        }
        new_size = j->size + j->batch.len;
        new_end = j->end;
        r = write_all_at(fd, j->batch.s, j->batch.len, j->size);
        if (r >= 0 && new_size > j->end) {
                /* in the same fdatasync(): the zeros the next commits write into */
                new_end = new_size + CHANGE_JOURNAL_PREALLOC;
                r = write_zeros(fd, new_size, new_end);
                if (r == -ENOSPC || r == -EDQUOT) {
                        /* no room for them: the commit is what counts, the next appends as this one */
                        new_end = new_size;
                        r = ftruncate(fd, (off_t) new_size) < 0 ? -errno : 0;
                }
        }
        if (r >= 0 && fdatasync(fd) < 0)
                r = -errno;
        if (r >= 0 && !j->dir_synced) {
                /* a journal made since the last snapshot: its name must survive a crash too */
                _cleanup_close_ int dfd = open(j->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (dfd < 0 || fsync(dfd) < 0)
                        r = -errno;
        }
        if (r < 0) {
                /* not zeros any more past the commits: none, until the next commit writes them again
                 * (if this fails, no length is right: the next commit cuts, or fails before writing) */
                j->end = ftruncate(fd, (off_t) j->size) >= 0 ? j->size : UINT64_MAX;
                goto drop;
        }
        j->dir_synced = true;
        j->size = new_size;
        j->end = new_end;
        r = 0;
drop:
        strbuf_truncate(&j->batch, 0);
        j->batch.oom = false;
        j->n_batch = 0;
        return r;
}

int change_journal_snapshot(ChangeJournal *j, const ClientChanges *c) {
        _cleanup_free_ char *path = journal_path(j);
        int r;

        assert(j->n_batch == 0);
        if (!path)
                return -ENOMEM;
        r = client_changes_save_seq(j->dir, c, j->seq);
        if (r < 0)
                return r;
        /* the snapshot has every record now; if the unlink fails, recovery skips them */
        if (unlink(path) < 0) {
                if (errno != ENOENT)
                        log_warning_errno(-errno, "Failed to remove '%s' after the snapshot, ignoring: %m", path);
                else
                        j->size = 0;
        } else
                j->size = 0;
        if (j->size == 0) {
                j->dir_synced = false;
                j->end = 0;
        }
        return 0;
}

/* One line of a record: "SEQ HASH change ...". Return: its SEQ, 0 when damaged. */
static uint64_t record_seq(char *line, char **ret_change) {
        uint64_t seq, hash;
        char *end, *h, *rest;
        StrBuf b = STRBUF_INIT;
        bool ok;

        errno = 0;
        seq = strtoull(line, &end, 10);
        if (errno || end == line || *end != ' ' || seq == 0)
                return 0;
        h = end + 1;
        hash = strtoull(h, &end, 16);
        if (errno || end != h + 16 || *end != ' ')
                return 0;
        rest = end;     /* " change ..." */
        strbuf_printf(&b, "%" PRIu64 "%s", seq, rest);
        ok = !b.oom && fnv1a64(b.s, b.len) == hash;
        strbuf_done(&b);
        *ret_change = rest + 1;
        return ok ? seq : 0;
}

int change_journal_load(ChangeJournal *j, const char *dir, ClientChanges *ret) {
        _cleanup_free_ char *path = NULL, *text = NULL;
        _cleanup_fclose_ FILE *f = NULL;
        ClientChanges c = {};
        uint64_t snap, last;
        size_t len = 0, pos = 0, committed = 0, batch_start = 0;
        int r;

        change_journal_done(j);
        j->dir = strdup(dir);
        if (!j->dir)
                return -ENOMEM;
        r = client_changes_load_seq(dir, &c, &snap);
        if (r < 0)
                return r;
        last = snap;
        path = journal_path(j);
        if (!path) {
                client_changes_done(&c);
                return -ENOMEM;
        }
        f = fopen(path, "re");
        if (!f && errno != ENOENT) {
                r = -errno;
                client_changes_done(&c);
                return r;
        }
        if (f) {
                FILE *m = open_memstream(&text, &len);
                char buf[65536];
                size_t k;

                if (!m) {
                        client_changes_done(&c);
                        return -ENOMEM;
                }
                while ((k = fread(buf, 1, sizeof(buf), f)) > 0)
                        (void) fwrite(buf, 1, k, m);
                if (ferror(f) || fclose(m) != 0) {
                        client_changes_done(&c);
                        return -EIO;
                }
        }
        /* commit by commit: its records are applied when its padding ends on a block boundary */
        while (text && pos < len) {
                char *nl = memchr(text + pos, '\n', len - pos), *line = text + pos, *change;
                size_t next;

                if (!nl || memchr(line, '\0', (size_t) (nl - line)))
                        break;  /* a torn tail */
                *nl = '\0';
                next = (size_t) (nl - text) + 1;
                if (line[0] == '#') {
                        if (next % CHANGE_JOURNAL_BLOCK != 0)
                                break;
                        /* complete: apply its records */
                        for (size_t p = batch_start; p < pos;) {
                                char *l = text + p;
                                size_t n = strlen(l) + 1;
                                uint64_t seq = record_seq(l, &change);

                                if (seq > last) {
                                        r = client_changes_parse_record(change, &c);
                                        if (r == -ENOMEM) {
                                                client_changes_done(&c);
                                                return r;
                                        }
                                        if (r < 0)
                                                log_warning("'%s': a malformed record at byte %zu, ignored.",
                                                            path, p);
                                        last = seq;
                                }
                                p += n;
                        }
                        committed = next;
                        batch_start = next;
                } else if (!record_seq(line, &change))
                        break;  /* damaged: this commit was never acknowledged */
                pos = next;
        }
        /* zeros written ahead are the file's usual end; anything else there was never acknowledged */
        bool zeros = true;
        for (size_t p = committed; text && p < len && zeros; p++)
                zeros = text[p] == '\0';
        if (!zeros)
                log_notice("'%s': %zu byte(s) after the last complete commit (a crash during a commit; never "
                           "acknowledged), ignored.", path, len - committed);
        j->seq = last;
        j->size = committed;
        j->end = zeros ? len : UINT64_MAX;
        j->dir_synced = f != NULL;
        *ret = c;
        return 0;
}
