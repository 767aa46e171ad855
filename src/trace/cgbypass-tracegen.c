/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cgbypass/trace.h"
#include "trace-cli.h"

#define PROG "cgbypass-tracegen"

static void help(void) {
        printf("Usage:\n"
               "  " PROG " --seed N --length N [--rules bypass|stock] [--controllers LIST] [--nonroot]\n"
               "  " PROG " --seed N --length N [...] --count N --out-dir DIR\n"
               "  " PROG " --help | --version\n"
               "\n"
               "Print a random cgroup operation trace (shared/design/trace-format.md) for\n"
               "cgbypass-trace and cgbypass-conform. The same arguments give the same text on\n"
               "every machine. The generator runs the trace on the model of RULES while it\n"
               "writes it, to steer toward states where the cgroup rules interact and to keep\n"
               "the trace well-formed for that rule set.\n"
               "\n"
               "Options:\n"
               "  --seed N            the seed (0 to 2^64-1)\n"
               "  --length N          operations per trace\n"
               "  --rules RULES       bypass (default) or stock\n"
               "  --controllers LIST  the kernel's controllers (default: the VM kernel's\n"
               "                      cpuset,cpu,io,memory,hugetlb,pids,rdma,misc,perf_event,debug)\n"
               "  --nonroot           for cgbypass-trace --model --nonroot ('.' below the root)\n"
               "  --count N           write N traces, seeds N, N+1, ... (needs --out-dir)\n"
               "  --out-dir DIR       where --count writes gen-SEED.trace files\n"
               "  -h, --help          show this help\n"
               "  --version           show the version\n"
               "\n"
               "Trace i of --count has the seed --seed + i, so one trace of a batch can be\n"
               "regenerated alone.\n"
               "\n"
               "Exit status: 0 on success, 1 on failure, 2 for bad usage.\n"
               "\n"
               "Example:\n"
               "  " PROG " --seed 7 --length 40 | cgbypass-trace --model -\n");
}

static int write_file(const char *path, const char *text) {
        _cleanup_fclose_ FILE *f = fopen(path, "we");

        if (!f)
                return -errno;
        if (fputs(text, f) == EOF || fflush(f) == EOF)
                return -errno ?: -EIO;
        return 0;
}

int main(int argc, char *argv[]) {
        enum {
                ARG_SEED = _CLI_ARG_NEXT, ARG_LENGTH, ARG_COUNT, ARG_OUT_DIR,
        };
        static const struct option options[] = {
                { "seed", required_argument, NULL, ARG_SEED },
                { "length", required_argument, NULL, ARG_LENGTH },
                CLI_MODEL_OPTIONS,
                { "count", required_argument, NULL, ARG_COUNT },
                { "out-dir", required_argument, NULL, ARG_OUT_DIR },
                CLI_HELP_OPTIONS,
                {}
        };
        uint64_t seed = 0, length = 0, count = 0;
        bool have_seed = false, have_count = false;
        TraceModelOptions mo = { .rules = RULES_BYPASS, .builtin = CGMASK_VM_KERNEL };
        const char *out_dir = NULL;
        int c, r, status;

        while ((c = cli_getopt(argc, argv, options, &mo, help, PROG, &status)) >= 0) {
                switch (c) {
                case ARG_SEED:
                        if (cli_parse_u64(optarg, &seed) < 0)
                                return cli_usage_error("bad --seed '%s'", optarg);
                        have_seed = true;
                        break;
                case ARG_LENGTH:
                        r = cli_parse_length(optarg, &length);
                        if (r != 0)
                                return r;
                        break;
                case ARG_COUNT:
                        if (cli_parse_u64(optarg, &count) < 0 || count == 0 || count > 10000000)
                                return cli_usage_error("bad --count '%s'", optarg);
                        have_count = true;
                        break;
                case ARG_OUT_DIR:
                        out_dir = optarg;
                        break;
                }
        }
        if (status >= 0)
                return status;
        if (optind < argc)
                return cli_usage_error("unexpected argument '%s'", argv[optind]);
        if (!have_seed || length == 0)
                return cli_usage_error("--seed and --length are required");
        if (have_count != !!out_dir)
                return cli_usage_error("--count and --out-dir go together");

        if (!have_count) {
                _cleanup_free_ char *text = NULL;
                r = trace_generate(seed, (unsigned) length, &mo, &text);
                if (r < 0) {
                        fprintf(stderr, PROG ": Failed to generate a trace: %s\n", strerror(-r));
                        return 1;
                }
                fputs(text, stdout);
                return fflush(stdout) == EOF ? 1 : 0;
        }

        if (mkdir(out_dir, 0755) < 0 && errno != EEXIST) {
                fprintf(stderr, PROG ": Failed to create '%s': %m\n", out_dir);
                return 1;
        }
        for (uint64_t i = 0; i < count; i++) {
                _cleanup_free_ char *text = NULL, *path = NULL;
                r = trace_generate(seed + i, (unsigned) length, &mo, &text);
                if (r < 0) {
                        fprintf(stderr, PROG ": Failed to generate a trace: %s\n", strerror(-r));
                        return 1;
                }
                if (asprintf(&path, "%s/gen-%" PRIu64 ".trace", out_dir, seed + i) < 0) {
                        path = NULL;
                        fprintf(stderr, PROG ": Out of memory\n");
                        return 1;
                }
                r = write_file(path, text);
                if (r < 0) {
                        fprintf(stderr, PROG ": Failed to write '%s': %s\n", path, strerror(-r));
                        return 1;
                }
        }
        return 0;
}
