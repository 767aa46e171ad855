/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgbypass/strbuf.h"
#include "cgbypass/trace.h"
#include "trace-cli.h"

#define PROG "cgbypass-conform"

/*
 * Runs traces on the model and on the kernel it runs on and compares the two
 * outputs byte for byte. Meant to run inside the VM, as root, on the cgroup2
 * root of a kernel booted with cgroup_debug; depends on libc only.
 */

static void help(void) {
        printf("Usage:\n"
               "  " PROG " --kernel DIR --rules bypass|stock [--controllers LIST] [--nonroot]\n"
               "  " "                 [--seed S --count N --length L] [--no-shrink] [--verbose] [TRACE...]\n"
               "  " PROG " --help | --version\n"
               "\n"
               "For every TRACE file and every generated trace, run it on a fresh model\n"
               "(cgbypass-trace --model) and on the cgroup2 directory DIR (cgbypass-trace\n"
               "--kernel, which cleans up after every trace) and compare the outputs byte for\n"
               "byte, together with the exit status and diagnostics of a malformed run.\n"
               "The model starts settled (cgbypass-trace --settled) when the kernel's root has\n"
               "already propagated its masks, as after the first trace of a boot.\n"
               "A mismatch is shrunk automatically (delta debugging over the operation lines,\n"
               "skipping candidates that are malformed on the model) and printed: the minimal\n"
               "trace and both outputs.\n"
               "\n"
               "Options:\n"
               "  --kernel DIR        the cgroup2 directory to run on (normally /sys/fs/cgroup)\n"
               "  --rules RULES       the model's rules: bypass for a kernel with the series,\n"
               "                      stock for plain 6.1; also the rules traces are generated for\n"
               "  --controllers LIST  the kernel's controllers (default: the VM kernel's\n"
               "                      cpuset,cpu,io,memory,hugetlb,pids,rdma,misc,perf_event,debug)\n"
               "  --nonroot           DIR is a cgroup below the root (see cgbypass-trace --nonroot)\n"
               "  --seed S            first seed of the generated traces (default 1)\n"
               "  --count N           generate N traces, seeds S to S+N-1 (default 0)\n"
               "  --length L          operations per generated trace (default 60)\n"
               "  --no-shrink         report mismatches as they are\n"
               "  --verbose           print 'RUN NAME' before each trace (to find a trace that hangs)\n"
               "  -h, --help          show this help\n"
               "  --version           show the version\n"
               "\n"
               "Output: one block per mismatch, then a last line 'N passed, N failed'.\n"
               "A generated trace is named gen-SEED; cgbypass-tracegen --seed SEED --length L\n"
               "--rules RULES (and --controllers LIST, --nonroot) prints it again.\n"
               "\n"
               "Exit status: 0 if every trace passed, 1 if any failed (or the runner failed),\n"
               "2 for bad usage, 128+N when stopped by signal N.\n"
               "\n"
               "Example (inside the VM):\n"
               "  " PROG " --kernel /sys/fs/cgroup --rules bypass --seed 1 --count 2000 \\\n"
               "      /tests/traces/*.trace\n");
}

static char *strdupf(const char *fmt, ...) _printf_(1, 2);
static char *strdupf(const char *fmt, ...) {
        va_list ap;
        char *s;

        va_start(ap, fmt);
        int r = vasprintf(&s, fmt, ap);
        va_end(ap);
        return r < 0 ? NULL : s;
}

typedef struct Config {
        const char *dir;
        TraceModelOptions model;
        bool shrink;
        bool verbose;
} Config;

typedef struct RunResult {
        int status;             /* 0: ran, 2: malformed, 1: runner failure */
        char *out;
        char *msg;
} RunResult;

static void run_result_done(RunResult *r) {
        free(r->out);
        free(r->msg);
        *r = (RunResult) {};
}

static int run_one(const Config *cfg, const Trace *t, bool kernel, RunResult *res) {
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);
        int r;

        if (!f)
                return -errno;
        *res = (RunResult) {};
        if (kernel)
                r = trace_run_kernel(t, cfg->dir, f, &res->msg);
        else {
                /*
                 * Only the first trace of a boot meets a root that has never
                 * propagated its masks; the model must start the way the
                 * kernel is now (the kernel runs right after the model).
                 */
                TraceModelOptions o = cfg->model;
                o.settled = trace_kernel_root_settled(cfg->dir) > 0;
                r = trace_run_model(t, &o, f, &res->msg);
        }
        if (fclose(f) == EOF) {
                free(buf);
                return -ENOMEM;
        }
        res->out = buf;
        if (r == -EINTR && kernel)
                return r;
        res->status = r == -EBADMSG ? 2 : r < 0 ? 1 : 0;
        return 0;
}

static bool results_equal(const RunResult *a, const RunResult *b) {
        return a->status == b->status && streq(a->out, b->out) &&
               (a->status != 2 || streq_ptr(a->msg, b->msg));
}

/* 1: both ran and differ; 0: same (or not comparable); <0: interrupted or OOM */
static int compare_text(const Config *cfg, const char *text, const char *name, RunResult *rm, RunResult *rk) {
        _cleanup_(trace_freep) Trace *t = NULL;
        int r;

        r = trace_parse(text, name, &t, NULL);
        if (r == -EBADMSG)
                return 0;
        if (r < 0)
                return r;
        r = run_one(cfg, t, false, rm);
        if (r < 0)
                return r;
        if (rm->status != 0)
                return 0;
        r = run_one(cfg, t, true, rk);
        if (r < 0)
                return r;
        if (rk->status == 1)
                return 0;
        return !results_equal(rm, rk);
}

static char *join_lines(char **lines, const bool *keep, size_t n) {
        StrBuf b = STRBUF_INIT;
        char *s = NULL;

        for (size_t i = 0; i < n; i++)
                if (keep[i]) {
                        strbuf_append(&b, lines[i]);
                        strbuf_putc(&b, '\n');
                }
        return strbuf_steal(&b, &s) < 0 ? NULL : s;
}

/*
 * ddmin over operation lines: try dropping each of n chunks; on success keep
 * the smaller trace and coarsen, else refine until single lines.
 */
static int shrink(const Config *cfg, const Trace *t, char **ret_text) {
        size_t n = t->n_ops, alive = n, parts = 2;
        _cleanup_free_ char **lines = calloc(n ?: 1, sizeof(char *));
        _cleanup_free_ bool *keep = calloc(n ?: 1, sizeof(bool)), *cand = calloc(n ?: 1, sizeof(bool));
        int r;

        if (!lines || !keep || !cand)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                lines[i] = t->ops[i].text;
                keep[i] = true;
        }

        while (alive >= 2) {
                size_t chunk = (alive + parts - 1) / parts;
                bool reduced = false;

                for (size_t p = 0; p < parts && !reduced; p++) {
                        size_t idx = 0, dropped = 0;
                        for (size_t i = 0; i < n; i++) {
                                cand[i] = keep[i];
                                if (keep[i]) {
                                        if (idx / chunk == p) {
                                                cand[i] = false;
                                                dropped++;
                                        }
                                        idx++;
                                }
                        }
                        if (dropped == 0 || dropped == alive)
                                continue;
                        _cleanup_free_ char *text = join_lines(lines, cand, n);
                        if (!text)
                                return -ENOMEM;
                        RunResult rm = {}, rk = {};
                        r = compare_text(cfg, text, t->name, &rm, &rk);
                        run_result_done(&rm);
                        run_result_done(&rk);
                        if (r < 0)
                                return r;
                        if (r > 0) {
                                memcpy(keep, cand, n * sizeof(bool));
                                alive -= dropped;
                                parts = parts > 2 ? parts - 1 : 2;
                                reduced = true;
                        }
                }
                if (!reduced) {
                        if (parts >= alive)
                                break;
                        parts = parts * 2 < alive ? parts * 2 : alive;
                }
        }

        *ret_text = join_lines(lines, keep, n);
        return *ret_text ? 0 : -ENOMEM;
}

static void print_indented(const char *title, const char *text) {
        printf("--- %s\n", title);
        for (const char *s = text; *s;) {
                size_t len = strcspn(s, "\n");
                printf("    %.*s\n", (int) len, s);
                s += len + (s[len] == '\n');
        }
}

static void print_result(const char *title, const RunResult *r) {
        print_indented(title, strempty(r->out));
        if (r->status != 0)
                printf("    [%s: %s]\n", r->status == 2 ? "malformed, exit 2" : "runner failed, exit 1",
                       strempty(r->msg));
}

/* 1 passed, 0 failed, <0 interrupted/OOM */
static int check_trace(const Config *cfg, const char *text, const char *name) {
        _cleanup_(trace_freep) Trace *t = NULL;
        _cleanup_free_ char *msg = NULL, *minimal = NULL, *title = NULL, *mt = NULL, *kt = NULL;
        RunResult rm = {}, rk = {};
        int r;

        if (cfg->verbose) {
                /* before running: a kernel that hangs shows which trace did it */
                printf("RUN %s\n", name);
                (void) fflush(stdout);
        }
        r = trace_parse(text, name, &t, &msg);
        if (r == -EBADMSG) {
                printf("FAIL %s: malformed trace: %s\n", name, msg);
                return 0;
        }
        if (r < 0)
                return r;

        r = run_one(cfg, t, false, &rm);
        if (r >= 0)
                r = run_one(cfg, t, true, &rk);
        if (r < 0)
                goto finish;
        if (rk.status == 1) {
                printf("FAIL %s: the kernel runner failed: %s\n", name, strempty(rk.msg));
                r = 0;
                goto finish;
        }
        if (results_equal(&rm, &rk)) {
                r = 1;
                goto finish;
        }

        if (cfg->shrink && rm.status == 0) {
                r = shrink(cfg, t, &minimal);
                if (r < 0)
                        goto finish;
                run_result_done(&rm);
                run_result_done(&rk);
                _cleanup_(trace_freep) Trace *m = NULL;
                r = trace_parse(minimal, name, &m, NULL);
                if (r >= 0)
                        r = run_one(cfg, m, false, &rm);
                if (r >= 0)
                        r = run_one(cfg, m, true, &rk);
                if (r < 0)
                        goto finish;
        }

        printf("FAIL %s: the model and the kernel differ\n", name);
        if (minimal) {
                title = strdupf("minimal trace (from %zu operations)", t->n_ops);
                print_indented(title ?: "minimal trace", minimal);
        } else
                print_indented("trace", text);
        mt = strdupf("model (--rules %s%s)", rules_to_string(cfg->model.rules),
                                                cfg->model.nonroot ? " --nonroot" : "");
        kt = strdupf("kernel (%s)", cfg->dir);
        print_result(mt ?: "model", &rm);
        print_result(kt ?: "kernel", &rk);
        r = 0;

finish:
        (void) fflush(stdout);
        run_result_done(&rm);
        run_result_done(&rk);
        return r;
}

int main(int argc, char *argv[]) {
        enum {
                ARG_KERNEL = _CLI_ARG_NEXT, ARG_SEED, ARG_COUNT, ARG_LENGTH, ARG_NO_SHRINK, ARG_VERBOSE,
        };
        static const struct option options[] = {
                { "kernel", required_argument, NULL, ARG_KERNEL },
                CLI_MODEL_OPTIONS,
                { "seed", required_argument, NULL, ARG_SEED },
                { "count", required_argument, NULL, ARG_COUNT },
                { "length", required_argument, NULL, ARG_LENGTH },
                { "no-shrink", no_argument, NULL, ARG_NO_SHRINK },
                { "verbose", no_argument, NULL, ARG_VERBOSE },
                CLI_HELP_OPTIONS,
                {}
        };
        Config cfg = {
                .model = { .rules = _RULES_INVALID, .builtin = CGMASK_VM_KERNEL },
                .shrink = true,
        };
        uint64_t seed = 1, count = 0, length = 60;
        unsigned passed = 0, failed = 0;
        int c, r = 0, status;

        while ((c = cli_getopt(argc, argv, options, &cfg.model, help, PROG, &status)) >= 0) {
                switch (c) {
                case ARG_KERNEL:
                        cfg.dir = optarg;
                        break;
                case ARG_SEED:
                        if (cli_parse_u64(optarg, &seed) < 0)
                                return cli_usage_error("bad --seed '%s'", optarg);
                        break;
                case ARG_COUNT:
                        if (cli_parse_u64(optarg, &count) < 0)
                                return cli_usage_error("bad --count '%s'", optarg);
                        break;
                case ARG_LENGTH:
                        r = cli_parse_length(optarg, &length);
                        if (r != 0)
                                return r;
                        break;
                case ARG_NO_SHRINK:
                        cfg.shrink = false;
                        break;
                case ARG_VERBOSE:
                        cfg.verbose = true;
                        break;
                }
        }
        if (status >= 0)
                return status;
        if (!cfg.dir)
                return cli_usage_error("--kernel DIR is required");
        if (cfg.model.rules < 0)
                return cli_usage_error("--rules bypass|stock is required");
        if (optind >= argc && count == 0)
                return cli_usage_error("nothing to run: give TRACE files or --count N");

        r = 0;
        for (int i = optind; i < argc && r >= 0; i++) {
                _cleanup_free_ char *text = NULL;
                int k = trace_read_file(argv[i], &text);
                if (k < 0) {
                        printf("FAIL %s: cannot read it: %s\n", argv[i], strerror(-k));
                        failed++;
                        continue;
                }
                r = check_trace(&cfg, text, argv[i]);
                if (r > 0)
                        passed++;
                else if (r == 0)
                        failed++;
        }
        for (uint64_t i = 0; i < count && r >= 0; i++) {
                _cleanup_free_ char *text = NULL, *name = NULL;
                r = trace_generate(seed + i, (unsigned) length, &cfg.model, &text);
                if (r < 0)
                        break;
                if (asprintf(&name, "gen-%" PRIu64, seed + i) < 0) {
                        name = NULL;
                        r = -ENOMEM;
                        break;
                }
                r = check_trace(&cfg, text, name);
                if (r > 0)
                        passed++;
                else if (r == 0)
                        failed++;
        }

        printf("%u passed, %u failed\n", passed, failed);
        (void) fflush(stdout);
        if (r == -EINTR && trace_kernel_caught_signal()) {
                int sig = trace_kernel_caught_signal();
                fprintf(stderr, PROG ": interrupted by %s\n", strsignal(sig));
                (void) signal(sig, SIG_DFL);
                (void) raise(sig);
                return 128 + sig;
        }
        if (r < 0) {
                fprintf(stderr, PROG ": %s\n", strerror(-r));
                return 1;
        }
        return failed > 0 ? 1 : 0;
}
