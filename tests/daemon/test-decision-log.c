/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The journal fields of a change applied or refused (decision-log.c), one
 * table: the decision, and every field the entry must have, in order
 * (MESSAGE first). Fields not listed must be absent.
 */
#include <check.h>
#include <syslog.h>

#include "../check-run.h"
#include "cgbypass/macro.h"
#include "decision-log.h"

static const Caller root = { .uid = 0, .pid = 42, .known = true };
static const Caller owner = { .uid = 1000, .pid = 0, .known = true };
static const Caller unknown = { .known = false };

static const struct {
        Decision d;
        const char *fields[DECISION_FIELDS_MAX + 1];
} cases[] = {
        { { .priority = LOG_INFO, .method = "EnableController", .cgroup = "/srv/a", .argument = "cpu",
            .caller = &owner, .detail = "1 operation(s)" },
          { "MESSAGE=EnableController /srv/a cpu by uid=1000 pid=?: applied: 1 operation(s)", "PRIORITY=6",
            "MESSAGE_ID=" DECISION_MESSAGE_CHANGE_APPLIED, "CGBYPASS_METHOD=EnableController",
            "CGBYPASS_CGROUP=/srv/a", "CGBYPASS_ARGUMENT=cpu", "CGBYPASS_CALLER_UID=1000",
            "CGBYPASS_RESULT=applied" } },
        { { .priority = LOG_NOTICE, .method = "SetSubtreeControl", .cgroup = "/srv/a", .argument = "+cpu #io",
            .caller = &root, .refused = true, .error = "org.cgbypass1.Error.NoSuchCgroup", .detail = "gone" },
          { "MESSAGE=SetSubtreeControl /srv/a +cpu #io by uid=0 pid=42: refused: org.cgbypass1.Error.NoSuchCgroup: gone",
            "PRIORITY=5", "MESSAGE_ID=" DECISION_MESSAGE_REFUSED, "CGBYPASS_METHOD=SetSubtreeControl",
            "CGBYPASS_CGROUP=/srv/a", "CGBYPASS_ARGUMENT=+cpu #io", "CGBYPASS_CALLER_UID=0",
            "CGBYPASS_CALLER_PID=42", "CGBYPASS_RESULT=refused",
            "CGBYPASS_ERROR=org.cgbypass1.Error.NoSuchCgroup" } },
        /* a caller the bus could not name: no uid field rather than a wrong one */
        { { .priority = LOG_NOTICE, .method = "Reload", .caller = &unknown, .refused = true, .detail = "Permission denied" },
          { "MESSAGE=Reload by uid=? pid=?: refused: Permission denied", "PRIORITY=5",
            "MESSAGE_ID=" DECISION_MESSAGE_REFUSED, "CGBYPASS_METHOD=Reload", "CGBYPASS_RESULT=refused" } },
        { { .priority = LOG_INFO, .method = "Reload", .caller = &root },
          { "MESSAGE=Reload by uid=0 pid=42: applied", "PRIORITY=6", "MESSAGE_ID=" DECISION_MESSAGE_RELOADED,
            "CGBYPASS_METHOD=Reload", "CGBYPASS_CALLER_UID=0", "CGBYPASS_CALLER_PID=42",
            "CGBYPASS_RESULT=applied" } },
        { { .priority = LOG_INFO, .method = "AddDelegation", .cgroup = "/srv/c", .argument = "uid=1000 cpu io",
            .caller = &root },
          { "MESSAGE=AddDelegation /srv/c uid=1000 cpu io by uid=0 pid=42: applied", "PRIORITY=6",
            "MESSAGE_ID=" DECISION_MESSAGE_DELEGATION, "CGBYPASS_METHOD=AddDelegation", "CGBYPASS_CGROUP=/srv/c",
            "CGBYPASS_ARGUMENT=uid=1000 cpu io", "CGBYPASS_CALLER_UID=0", "CGBYPASS_CALLER_PID=42",
            "CGBYPASS_RESULT=applied" } },
        /* a caller's control characters never reach a field, nor a line */
        { { .priority = LOG_NOTICE, .method = "EnableController", .cgroup = "/srv/a\nMESSAGE_ID=x", .argument = "cpu",
            .caller = &owner, .refused = true, .error = "org.cgbypass1.Error.InvalidPath" },
          { "MESSAGE=EnableController /srv/a?MESSAGE_ID=x cpu by uid=1000 pid=?: refused: org.cgbypass1.Error.InvalidPath",
            "PRIORITY=5", "MESSAGE_ID=" DECISION_MESSAGE_REFUSED, "CGBYPASS_METHOD=EnableController",
            "CGBYPASS_CGROUP=/srv/a?MESSAGE_ID=x", "CGBYPASS_ARGUMENT=cpu", "CGBYPASS_CALLER_UID=1000",
            "CGBYPASS_RESULT=refused", "CGBYPASS_ERROR=org.cgbypass1.Error.InvalidPath" } },
};

START_TEST(test_fields) {
        DecisionFields f;
        size_t n = 0;

        ck_assert_int_eq(decision_fields(&cases[_i].d, &f), 0);
        while (cases[_i].fields[n])
                n++;
        for (size_t i = 0; i < f.n && i < n; i++)
                ck_assert_str_eq(f.v[i], cases[_i].fields[i]);
        ck_assert_uint_eq(f.n, n);
        decision_fields_done(&f);
}
END_TEST

/* The ids are 128 bits in the journal's form, distinct */
START_TEST(test_message_ids) {
        const char *ids[] = { DECISION_MESSAGE_CHANGE_APPLIED, DECISION_MESSAGE_REFUSED, DECISION_MESSAGE_RELOADED,
                              DECISION_MESSAGE_DELEGATION, DECISION_MESSAGE_ADOPTED };

        for (size_t i = 0; i < ELEMENTSOF(ids); i++) {
                ck_assert_uint_eq(strlen(ids[i]), 32);
                ck_assert_uint_eq(strspn(ids[i], "0123456789abcdef"), 32);
                for (size_t j = 0; j < i; j++)
                        ck_assert_str_ne(ids[i], ids[j]);
        }
}
END_TEST

int main(void) {
        return check_run(CHECK_SUITE_TABLE("decision-log", "journal fields", NULL, NULL,
                                           { test_fields, ELEMENTSOF(cases) }, { test_message_ids }));
}
