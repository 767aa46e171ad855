/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>

#include "cgbypass/trace.h"
#include "trace-internal.h"

/*
 * A table, not strerrorname_np(): glibc 2.36 has it, but the VM's initramfs
 * and other libcs may not, and the names are part of the output format.
 * Every errno that mkdir/rmdir/open/read/write on cgroupfs or a cgroup write
 * handler can return is here; anything else prints as E<number>.
 */
static const struct {
        int err;
        const char *name;
} errno_names[] = {
        { EPERM, "EPERM" },
        { ENOENT, "ENOENT" },
        { ESRCH, "ESRCH" },
        { EINTR, "EINTR" },
        { EIO, "EIO" },
        { ENXIO, "ENXIO" },
        { E2BIG, "E2BIG" },
        { EBADF, "EBADF" },
        { ECHILD, "ECHILD" },
        { EAGAIN, "EAGAIN" },
        { ENOMEM, "ENOMEM" },
        { EACCES, "EACCES" },
        { EFAULT, "EFAULT" },
        { EBUSY, "EBUSY" },
        { EEXIST, "EEXIST" },
        { EXDEV, "EXDEV" },
        { ENODEV, "ENODEV" },
        { ENOTDIR, "ENOTDIR" },
        { EISDIR, "EISDIR" },
        { EINVAL, "EINVAL" },
        { ENFILE, "ENFILE" },
        { EMFILE, "EMFILE" },
        { ENOTTY, "ENOTTY" },
        { EFBIG, "EFBIG" },
        { ENOSPC, "ENOSPC" },
        { ESPIPE, "ESPIPE" },
        { EROFS, "EROFS" },
        { EMLINK, "EMLINK" },
        { EPIPE, "EPIPE" },
        { EDOM, "EDOM" },
        { ERANGE, "ERANGE" },
        { EDEADLK, "EDEADLK" },
        { ENAMETOOLONG, "ENAMETOOLONG" },
        { ENOLCK, "ENOLCK" },
        { ENOSYS, "ENOSYS" },
        { ENOTEMPTY, "ENOTEMPTY" },
        { ELOOP, "ELOOP" },
        { ENODATA, "ENODATA" },
        { EOVERFLOW, "EOVERFLOW" },
        { EBADMSG, "EBADMSG" },
        { EOPNOTSUPP, "EOPNOTSUPP" },   /* == ENOTSUP on Linux */
        { ETIMEDOUT, "ETIMEDOUT" },
        { ESTALE, "ESTALE" },
        { EDQUOT, "EDQUOT" },
        { ECANCELED, "ECANCELED" },
        { EUCLEAN, "EUCLEAN" },
        { ENOMSG, "ENOMSG" },
        { EILSEQ, "EILSEQ" },
        { EOWNERDEAD, "EOWNERDEAD" },
        { ENOTRECOVERABLE, "ENOTRECOVERABLE" },
};

const char *trace_errno_name(int err) {
        for (size_t i = 0; i < ELEMENTSOF(errno_names); i++)
                if (errno_names[i].err == err)
                        return errno_names[i].name;
        return NULL;
}

const char *trace_errno_format(int err, char buf[static 16]) {
        const char *n = trace_errno_name(err);

        if (n)
                return n;
        (void) snprintf(buf, 16, "E%d", err);
        return buf;
}
