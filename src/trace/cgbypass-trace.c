/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgbypass/trace.h"
#include "trace-cli.h"

#define PROG "cgbypass-trace"

enum {
        EXIT_OK = 0,
        EXIT_RUNTIME = 1,       /* the runner could not do its job */
        EXIT_MALFORMED = 2,     /* malformed trace or bad usage */
};

static void help(void) {
        printf("Usage:\n"
               "  " PROG " --model [--rules bypass|stock] [--controllers LIST] [--nonroot] [--settled] TRACE\n"
               "  " PROG " --kernel DIR TRACE\n"
               "  " PROG " --help | --version\n"
               "\n"
               "Run a cgroup operation trace on the in-memory model of the Linux 6.1 cgroup v2\n"
               "core, or on a real cgroup2 hierarchy, and print one result line per operation.\n"
               "The two outputs compare byte for byte. TRACE is a file, or - for standard input.\n"
               "\n"
               "Options:\n"
               "  --model             run on a freshly booted model whose cgroup2 root is '.'\n"
               "  --rules RULES       bypass: 6.1 with the bypass series as this project ports it\n"
               "                      (the default); stock: plain 6.1\n"
               "  --controllers LIST  comma-separated controllers the modeled kernel has built in;\n"
               "                      'debug' means booted with cgroup_debug (default: the VM kernel's\n"
               "                      cpuset,cpu,io,memory,hugetlb,pids,rdma,misc,perf_event,debug)\n"
               "  --nonroot           '.' is a child of the modeled root, which enables every\n"
               "                      controller it can for it (compare with a scratch cgroup)\n"
               "  --settled           start after the root's first effective cgroup.subtree_control\n"
               "                      write, like a kernel that ran earlier traces (a fresh boot\n"
               "                      gives no implicit perf_event/debug csses below the root\n"
               "                      before it)\n"
               "  --kernel DIR        run on the cgroup2 directory DIR ('.' = DIR); afterwards kill\n"
               "                      the trace's processes, remove the cgroups it left and restore\n"
               "                      DIR's cgroup.subtree_control, cgroup.max.depth and\n"
               "                      cgroup.max.descendants (also on SIGINT/SIGTERM)\n"
               "  -h, --help          show this help\n"
               "  --version           show the version\n"
               "\n"
               "Trace (one operation per line, '#' comment lines; shared/design/trace-format.md and\n"
               "docs/trace-format-extensions.md):\n"
               "  mkdir PATH | rmdir PATH | write PATH FILE [CONTENT] | read PATH FILE\n"
               "  exists PATH FILE | spawn LABEL PATH | move LABEL PATH | kill LABEL | tree CONTROLLER\n"
               "\n"
               "Output (standard output), numbered by the operation's line in TRACE:\n"
               "  N ok              the operation succeeded\n"
               "  N error ENAME     it failed with that errno (E<number> for unnamed ones)\n"
               "  N = TEXT          read: the content, newlines shown as ' | ', last one dropped;\n"
               "                    cgroup.procs and cgroup.threads list LABELs (strcmp order), then\n"
               "                    pids the trace did not start; tree: the effective hierarchy\n"
               "  N = yes | N = no  exists\n"
               "\n"
               "Exit status:\n"
               "  0  every operation ran (their errors are output, not failures)\n"
               "  1  the runner failed (DIR unusable, cleanup failed, out of memory)\n"
               "  2  malformed trace (FILE:LINE: reason on standard error) or bad usage\n"
               "  128+N after cleaning up, when killed by signal N (SIGINT, SIGTERM)\n"
               "\n"
               "Example:\n"
               "  $ printf 'mkdir A\\nwrite . cgroup.subtree_control +cpu\\n"
               "write A cgroup.subtree_control #cpu\\nread A cgroup.subtree_control\\n' \\\n"
               "      | " PROG " --model -\n"
               "  1 ok\n"
               "  2 ok\n"
               "  3 ok\n"
               "  4 = #cpu\n");
}

int main(int argc, char *argv[]) {
        enum {
                ARG_MODEL = _CLI_ARG_NEXT, ARG_KERNEL, ARG_SETTLED, ARG_VERSION,
        };
        static const struct option options[] = {
                { "model", no_argument, NULL, ARG_MODEL },
                { "kernel", required_argument, NULL, ARG_KERNEL },
                CLI_MODEL_OPTIONS,
                { "settled", no_argument, NULL, ARG_SETTLED },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, ARG_VERSION },
                {}
        };
        TraceModelOptions mo = { .rules = RULES_BYPASS, .builtin = CGMASK_VM_KERNEL };
        const char *kernel_dir = NULL;
        bool model = false, model_only = false;
        int c, r;

        opterr = 0;
        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0) {
                r = cli_model_option(c, optarg, &mo);
                if (r < 0)
                        return r == -EINVAL ? EXIT_MALFORMED : EXIT_RUNTIME;
                if (r > 0) {
                        model_only = true;
                        continue;
                }
                switch (c) {
                case ARG_MODEL:
                        model = true;
                        break;
                case ARG_KERNEL:
                        kernel_dir = optarg;
                        break;
                case ARG_SETTLED:
                        mo.settled = true;
                        model_only = true;
                        break;
                case 'h':
                        help();
                        return EXIT_OK;
                case ARG_VERSION:
                        printf(PROG " " PROJECT_VERSION "\n");
                        return EXIT_OK;
                case '?':
                        if (optopt)
                                return cli_usage_error("option '%s' needs an argument or is unknown", argv[optind - 1]);
                        return cli_usage_error("unknown option '%s'", argv[optind - 1]);
                default:
                        return cli_usage_error("unexpected option");
                }
        }

        if (model == !!kernel_dir)
                return cli_usage_error("give exactly one of --model and --kernel DIR");
        if (kernel_dir && model_only)
                return cli_usage_error("--rules, --controllers, --nonroot and --settled go with --model only");
        if (optind >= argc)
                return cli_usage_error("no TRACE given");
        if (optind + 1 < argc)
                return cli_usage_error("one TRACE only, got '%s' too", argv[optind + 1]);

        const char *path = argv[optind];
        _cleanup_free_ char *text = NULL, *msg = NULL;
        _cleanup_(trace_freep) Trace *t = NULL;

        r = trace_read_file(path, &text);
        if (r == -EBADMSG) {
                fprintf(stderr, PROG ": '%s' is not a text file (NUL byte)\n", path);
                return EXIT_MALFORMED;
        }
        if (r < 0) {
                fprintf(stderr, PROG ": Failed to read '%s': %s\n", path, strerror(-r));
                return EXIT_RUNTIME;
        }
        r = trace_parse(text, streq(path, "-") ? "<stdin>" : path, &t, &msg);
        if (r == -EBADMSG) {
                fprintf(stderr, "%s\n", msg);
                return EXIT_MALFORMED;
        }
        if (r < 0) {
                fprintf(stderr, PROG ": Failed to parse '%s': %s\n", path, strerror(-r));
                return EXIT_RUNTIME;
        }

        if (kernel_dir)
                r = trace_run_kernel(t, kernel_dir, stdout, &msg);
        else
                r = trace_run_model(t, &mo, stdout, &msg);
        (void) fflush(stdout);

        if (r == -EBADMSG) {
                fprintf(stderr, "%s\n", msg);
                return EXIT_MALFORMED;
        }
        if (r == -EINTR && kernel_dir && trace_kernel_caught_signal()) {
                int sig = trace_kernel_caught_signal();
                fprintf(stderr, PROG ": %s\n", msg ? msg : "interrupted");
                (void) signal(sig, SIG_DFL);
                (void) raise(sig);
                return 128 + sig;
        }
        if (r < 0) {
                fprintf(stderr, PROG ": %s\n", msg ? msg : strerror(-r));
                return EXIT_RUNTIME;
        }
        return EXIT_OK;
}
