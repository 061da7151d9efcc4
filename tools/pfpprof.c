/*
 * pfpprof - a symbolized .pf as pprof's gzip-compressed profile.proto.
 *
 * Option parsing only: reading is tools/pfpprof/read.c, the encoding (with
 * protobuf-c and zlib) tools/pfpprof/encode.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "pfpprof/pprof.h"

#define PROG "pfpprof"

static void usage(FILE *f)
{
	fputs("Usage: pfpprof [OPTIONS] [IN.pf|-]\n"
	      "Write a symbolized recording (pfsym's output) as pprof's profile.proto,\n"
	      "gzip-compressed, as pprof, Grafana Pyroscope, Parca and speedscope read it:\n"
	      "    pfsym run.pf | pfpprof -o run.pb.gz && pprof -top run.pb.gz\n"
	      "\n"
	      "Options:\n"
	      "  -o, --output=FILE       write to FILE instead of standard output ('-')\n"
	      "      --no-inline         one Line per location, its real function's; no\n"
	      "                          Line per inlined function (as pffold --no-inline)\n"
	      "      --gzip-level=N      gzip compression level 0-9 (default 6, zlib's)\n"
	      "  -h, --help              show this help and exit\n"
	      "  -V, --version           show the version and exit\n"
	      "\n"
	      "Each event gives two sample types: its samples ('samples/count' for the\n"
	      "first event) and their periods ('cpu/nanoseconds' for cpu-clock and\n"
	      "task-clock, 'EVENT/count' for counters). Samples carry the labels comm,\n"
	      "pid and tid; lost samples are one sample on the function '[lost]' with the\n"
	      "label lost. Frames are named as pffold names them. A location's Lines are\n"
	      "the functions inlined at its address, innermost first, then its real\n"
	      "function, each with its own source line.\n"
	      "\n"
	      "A damaged or truncated input is still exported: every intact sample is\n"
	      "written, each problem is reported on standard error and the exit status\n"
	      "is 1. An unsymbolized recording is an error (run pfsym first).\n"
	      "\n"
	      "Exit status: 0 ok, 1 error (including a damaged input), 2 usage.\n",
	      f);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "no-inline", no_argument, NULL, 'I' },
		{ "gzip-level", required_argument, NULL, 'z' },
		PF_CLI_STD_LONGOPTS,
	};
	const char *out = "-", *in = "-";
	int c, inline_lines = 1, level = PP_GZIP_LEVEL;
	pf_out_ignore_sigpipe();
	while ((c = getopt_long(argc, argv, "o:hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 'I':
			inline_lines = 0;
			break;
		case 'z':
			if (optarg[0] < '0' || optarg[0] > '9' || optarg[1]) {
				fprintf(stderr, PROG ": --gzip-level: '%s' is not a level from 0 to 9\n", optarg);
				return PF_EXIT_USAGE;
			}
			level = optarg[0] - '0';
			break;
		default:
			return pf_cli_std_opt(PROG, c, usage);
		}
	}
	if (pf_cli_one_input(PROG, argc, argv, optind, &in))
		return PF_EXIT_USAGE;

	struct pp_input pi;
	if (pp_read(&pi, in) < 0) {
		pp_input_free(&pi);
		return 1;
	}
	uint64_t kept = 0;
	for (uint32_t g = 0; g < pi.n_groups; g++)
		kept += pi.groups[g].samples + pi.groups[g].lost;
	if (!kept)
		fprintf(stderr, PROG ": %s: no samples: the profile written is empty\n", in);
	int fd = 1;
	/* private, as a recording: it holds the stacks and command names */
	if (strcmp(out, "-") != 0 && (fd = pf_out_create_recording(out)) < 0) {
		fprintf(stderr, PROG ": %s: %s\n", out, strerror(errno));
		pp_input_free(&pi);
		return 1;
	}
	int rc = pp_write(&pi, fd, level, inline_lines);
	if (!rc && fd != 1 && close(fd) < 0)
		rc = -errno;
	else if (fd != 1 && rc)
		close(fd);
	if (rc < 0)
		pf_out_error(PROG, out, -rc);
	int status = rc < 0 || pi.damaged ? 1 : 0;
	pp_input_free(&pi);
	return status;
}
