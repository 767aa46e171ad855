/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The journal of client changes: what a restart needs of each request, made
 * durable at the price of one fdatasync() shared by every request that
 * arrived meanwhile (group commit), instead of a rewrite of the whole file.
 *
 * STATE_DIR/client-changes (the snapshot, client_changes_save_seq()) says
 * which record it includes last ("seq N"); STATE_DIR/client-changes.journal
 * holds the records after it, each a line
 *
 *     SEQ HASH change PATH sc=... ctl=... admin=... owner=...
 *
 * (HASH: FNV-1a 64 of "SEQ change ...", in hex), the entry's whole new state.
 * A commit appends its records and pads them with a '#' line to the next
 * 4 KiB boundary, then fdatasync()s: a commit writes only blocks no earlier
 * commit wrote, so a torn write cannot damage an acknowledged record.
 *
 * The file is kept longer than its commits by blocks of zeros, written
 * (CHANGE_JOURNAL_PREALLOC at a time, by the commit that needs them, which
 * pays once what an append pays): a commit into them changes no file size,
 * so its fdatasync() writes its blocks and not the file system's journal,
 * about half the time of an append on ext4 (bench/README.md). Without room
 * for them the commit appends. Recovery stops at the zeros as at a torn
 * tail (no complete line). Past the commits there are only zeros, or the
 * file ends: anything else (a crash during a commit) is cut off by the next
 * commit, which then writes new zeros. A full file system therefore refuses
 * a commit only once the zeros are used up.
 *
 * Recovery: the snapshot, then the records with a greater SEQ of every
 * complete commit (one that ends with its padding on a block boundary); the
 * first incomplete or damaged commit and all after it are ignored (never
 * acknowledged), and the next commit cuts the file back to where they begin.
 * Compaction writes the snapshot with the last SEQ (atomically, with fsync of
 * file and directory), then removes the journal; a crash between the two
 * leaves records the snapshot already has, which recovery skips.
 */

#include <stdbool.h>
#include <stdint.h>

#include "client-changes.h"
#include "cgbypass/strbuf.h"

#define CHANGE_JOURNAL_FILE_NAME        "client-changes.journal"
#define CHANGE_JOURNAL_BLOCK            4096
#define CHANGE_JOURNAL_COMPACT_SIZE     (1024 * 1024)   /* 256 commits at least */
/* zeros ahead of the commits: one commit in 64 pays for the next 64 */
#define CHANGE_JOURNAL_PREALLOC         (64 * CHANGE_JOURNAL_BLOCK)

typedef struct ChangeJournal {
        char *dir;
        uint64_t seq;           /* the last record's number, committed or in @batch */
        uint64_t size;          /* the journal file's committed length: whole commits */
        uint64_t end;           /* its length: @size, then zeros; any other length is cut back to @size */
        bool dir_synced;        /* the journal's directory entry is durable */
        StrBuf batch;           /* records for the next commit */
        size_t n_batch;
} ChangeJournal;

void change_journal_done(ChangeJournal *j);

/**
 * change_journal_load() - the snapshot and the journal's complete commits after it
 * @dir: the state directory (kept in @j)
 * @ret: the client changes
 *
 * Writes nothing. Return: 0; -EBADMSG for a malformed snapshot; -errno.
 */
int change_journal_load(ChangeJournal *j, const char *dir, ClientChanges *ret);

/* Queue a record of @x's new state for the next commit. Return: 0 or -ENOMEM. */
int change_journal_add(ChangeJournal *j, const ClientChange *x);

/**
 * change_journal_commit() - append the queued records, fdatasync()
 *
 * On failure the queued records are dropped and the file is cut back to its
 * committed length. Return: 0 or -errno.
 */
int change_journal_commit(ChangeJournal *j);

/**
 * change_journal_snapshot() - @c as the new snapshot, the journal emptied
 *
 * Nothing may be queued. Return: 0 or -errno (the journal is as before then).
 */
int change_journal_snapshot(ChangeJournal *j, const ClientChanges *c);

static inline bool change_journal_wants_compaction(const ChangeJournal *j) {
        return j->size >= CHANGE_JOURNAL_COMPACT_SIZE;
}
