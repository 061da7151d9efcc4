/*
 * pfimport - a perf.data file (perf record's output) as a .pf recording.
 *
 * Option parsing and messages only: the reader is pf_perfdata_*() in
 * tools/pfimport/perfdata.c, the conversion pf_import() in tools/pfimport/import.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "perfdata.h"

#define PROG "pfimport"
#define DEFAULT_LEVEL 3

static void usage(FILE *f)
{
	fputs("Usage: pfimport [OPTIONS] [PERF.DATA|-]\n"
	      "Read a perf.data file (perf record's output, file or pipe mode, compressed\n"
	      "with -z or not, of any byte order) and write it as a .pf recording that\n"
	      "pfdump, pfsym, pffold and pfdiff read: META from perf's header features,\n"
	      "one EVENT per event with its ids and name, every kernel record byte for\n"
	      "byte, perf's build-ids, and END with the totals. PERF.DATA defaults to\n"
	      "perf.data; - reads standard input (perf record -o - | pfimport -).\n"
	      "\n"
	      "Options:\n"
	      "  -o, --output=FILE     write to FILE ('-' = standard output, the default;\n"
	      "                        never a terminal)\n"
	      "  -z, --compress=LEVEL  zstd level 1-19, 0 stores uncompressed (default 3)\n"
	      "      --no-transform    store records as they are, without the columnar\n"
	      "                        transform (larger files that pf format 1.0 readers\n"
	      "                        can read)\n"
	      "      --buildid-dir=DIR perf's build-id cache, where the [vdso] image is\n"
	      "                        read from (default: $PERF_BUILDID_DIR, else ~/.debug)\n"
	      "      --no-vdso         do not look for the [vdso] image\n"
	      "      --max-inflate=RATIO[,BYTES]\n"
	      "                        COMPRESSED records (perf record -z) may inflate to\n"
	      "                        RATIO times the compressed bytes read (default 200,\n"
	      "                        never less than 64 MiB) and BYTES in all (default\n"
	      "                        64 GiB); 0: no bound of that kind\n"
	      "      --no-kallsyms     no snapshot of /proc/kallsyms, even when the running\n"
	      "                        kernel is the recorded one\n"
	      "      --no-perf-maps    do not import the recorded processes' JIT maps\n"
	      "                        (/tmp/perf-PID.map)\n"
	      "  -q, --quiet           no notices and no summary\n"
	      "  -v, --verbose         also count perf's own records that were not imported\n"
	      "  -h, --help            show this help and exit\n"
	      "  -V, --version         show the version and exit\n"
	      "\n"
	      "A damaged or truncated perf.data gives every intact record, then one line\n"
	      "naming the offset of the damage (also with --quiet), and exit status 1; the\n"
	      "output then has no END section (an incomplete recording). What pfimport does\n"
	      "not know (a feature, a record type) is skipped with a notice.\n"
	      "\n"
	      "Exit status: 0 ok, 1 error (including a damaged input), 2 usage.\n",
	      f);
}

struct ctx {
	int quiet;
};

static void on_notice(void *arg, const char *msg)
{
	const struct ctx *c = arg;
	if (!c->quiet)
		fprintf(stderr, PROG ": %s\n", msg);
}

/* argv joined by spaces, for META pfimport_cmdline. */
static char *join_args(int argc, char **argv)
{
	size_t n = 1;
	for (int i = 0; i < argc; i++)
		n += strlen(argv[i]) + 1;
	char *s = malloc(n);
	if (!s)
		return NULL;
	char *p = s;
	for (int i = 0; i < argc; i++) {
		size_t l = strlen(argv[i]);
		if (i)
			*p++ = ' ';
		memcpy(p, argv[i], l);
		p += l;
	}
	*p = 0;
	return s;
}

static void print_dropped(const struct pf_import_stats *st)
{
	char line[1024];
	size_t n = 0;
	for (uint32_t k = 0; k < 32; k++) {
		if (!st->perf_records[k])
			continue;
		const char *nm = pf_pd_record_name(64 + k);
		char tmp[32];
		if (!nm) {
			snprintf(tmp, sizeof tmp, "type %u", 64 + k);
			nm = tmp;
		}
		n += (size_t)snprintf(line + n, sizeof(line) - n, "%s%llu %s", n ? ", " : "",
				      (unsigned long long)st->perf_records[k], nm);
		if (n >= sizeof(line))
			break;
	}
	if (st->perf_records_other && n < sizeof(line))
		n += (size_t)snprintf(line + n, sizeof(line) - n, "%s%llu of types 96 and up", n ? ", " : "",
				      (unsigned long long)st->perf_records_other);
	if (n)
		fprintf(stderr, PROG ": perf's own records read (used or left out, none copied): %s\n", line);
	if (st->compressed)
		fprintf(stderr, PROG ": %llu COMPRESSED records decompressed\n", (unsigned long long)st->compressed);
	if (st->lost_counters)
		fprintf(stderr, PROG ": %llu LOST_SAMPLES records of perf's lost-sample counters left out (the LOST "
			"records count those samples)\n", (unsigned long long)st->lost_counters);
}

/* perf's build-id cache as perf finds it without a config file:
 * $PERF_BUILDID_DIR, else ~/.debug (in buf). NULL if neither is set. */
static const char *default_buildid_dir(char *buf, size_t size)
{
	const char *d = getenv("PERF_BUILDID_DIR"), *home = getenv("HOME");
	if (d && *d)
		return d;
	if (home && *home && (size_t)snprintf(buf, size, "%s/.debug", home) < size)
		return buf;
	return NULL;
}

/* --max-inflate=RATIO[,BYTES]: 0 is no bound of that kind (UINT64_MAX for
 * the reader; it takes 0 as its default). @return 0, or -1. */
static int parse_inflate(const char *arg, uint64_t *ratio, uint64_t *bytes)
{
	char *e;
	errno = 0;
	if (*arg < '0' || *arg > '9')
		return -1;
	unsigned long long r = strtoull(arg, &e, 10);
	if (errno || (*e && *e != ','))
		return -1;
	*ratio = r ? (uint64_t)r : UINT64_MAX;
	if (*e == ',') {
		const char *b = e + 1;
		if (*b < '0' || *b > '9')
			return -1;
		unsigned long long n = strtoull(b, &e, 10);
		if (errno || *e)
			return -1;
		*bytes = n ? (uint64_t)n : UINT64_MAX;
	}
	return 0;
}

int main(int argc, char **argv)
{
	enum { O_NOTX = 256, O_BIDDIR, O_NOVDSO, O_INFLATE, O_NOKSYMS, O_NOPERFMAPS };
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "buildid-dir", required_argument, NULL, O_BIDDIR },
		{ "no-vdso", no_argument, NULL, O_NOVDSO },
		{ "max-inflate", required_argument, NULL, O_INFLATE },
		{ "no-kallsyms", no_argument, NULL, O_NOKSYMS },
		{ "no-perf-maps", no_argument, NULL, O_NOPERFMAPS },
		{ "compress", required_argument, NULL, 'z' },
		{ "no-transform", no_argument, NULL, O_NOTX },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		PF_CLI_STD_LONGOPTS,
	};
	const char *in = "perf.data", *out = "-";
	char home_debug[4096];
	const char *bid_dir = default_buildid_dir(home_debug, sizeof home_debug);
	int level = DEFAULT_LEVEL, no_tx = 0, verbose = 0, no_ksyms = 0, no_perf_maps = 0, c;
	uint64_t inflate_ratio = 0, inflate_bytes = 0; /* 0: the defaults */
	struct ctx cx = { 0 };
	pf_out_ignore_sigpipe();
	while ((c = getopt_long(argc, argv, "o:z:qvhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 'z': {
			char *e;
			errno = 0;
			long v = strtol(optarg, &e, 10);
			if (errno || *e || e == optarg || v < 0 || v > 19) {
				fprintf(stderr, PROG ": --compress: '%s' is not a level from 0 to 19\n", optarg);
				fprintf(stderr, "Try '" PROG " --help' for more information.\n");
				return 2;
			}
			level = (int)v;
			break;
		}
		case O_NOTX:
			no_tx = 1;
			break;
		case O_BIDDIR:
			bid_dir = optarg;
			break;
		case O_NOVDSO:
			bid_dir = NULL;
			break;
		case O_INFLATE:
			if (parse_inflate(optarg, &inflate_ratio, &inflate_bytes) < 0) {
				fprintf(stderr, PROG ": --max-inflate: '%s' is not RATIO or RATIO,BYTES (whole "
						"numbers; 0: no bound of that kind)\n", optarg);
				fprintf(stderr, "Try '" PROG " --help' for more information.\n");
				return 2;
			}
			break;
		case O_NOKSYMS:
			no_ksyms = 1;
			break;
		case O_NOPERFMAPS:
			no_perf_maps = 1;
			break;
		case 'q':
			cx.quiet = 1;
			break;
		case 'v':
			verbose = 1;
			break;
		default:
			return pf_cli_std_opt(PROG, c, usage);
		}
	}
	if (pf_cli_one_input(PROG, argc, argv, optind, &in))
		return PF_EXIT_USAGE;
	int to_stdout = strcmp(out, "-") == 0;
	if (to_stdout && isatty(1)) {
		fprintf(stderr, PROG ": refusing to write binary data to a terminal (use -o FILE or a pipe)\n");
		return 1;
	}

	struct pf_perfdata_opts po = PF_PERFDATA_OPTS_INIT;
	po.features = PF_IMPORT_FEATURES;
	po.notice = on_notice;
	po.notice_arg = &cx;
	po.max_inflate_ratio = inflate_ratio;
	po.max_inflate_bytes = inflate_bytes;
	pf_perfdata *pd;
	int rc = pf_perfdata_open(&pd, in, &po);
	if (rc < 0) {
		const char *m = pd ? pf_perfdata_errmsg(pd) : "";
		pf_cli_lib_error(PROG, m, in, rc);
		pf_perfdata_close(pd);
		return 1;
	}
	int fd = 1;
	if (!to_stdout) {
		fd = pf_out_create_recording(out);
		if (fd < 0) {
			fprintf(stderr, PROG ": %s: %s\n", out, strerror(errno));
			pf_perfdata_close(pd);
			return 1;
		}
	}
	char *cmd = join_args(argc, argv);
	struct pf_import_opts io = PF_IMPORT_OPTS_INIT;
	io.zstd_level = level == 0 ? -1 : level;
	io.transform = no_tx ? PF_TRANSFORM_NONE : PF_TRANSFORM_COLUMNS;
	io.cmdline = cmd;
	char tool_version[64];
	snprintf(tool_version, sizeof tool_version, PROG " (pftools) %s", pf_version());
	io.tool_version = tool_version;
	io.notice = on_notice;
	io.notice_arg = &cx;
	io.buildid_dir = bid_dir;
	io.no_kallsyms = no_ksyms;
	io.no_perf_maps = no_perf_maps;
	/* the input file's owner, whose JIT maps are accepted too */
	struct stat ist;
	if (strcmp(in, "-") != 0 && stat(in, &ist) == 0 && S_ISREG(ist.st_mode))
		io.input_owner = ist.st_uid;
	struct pf_import_stats st;
	char msg[600];
	rc = pf_import(pd, fd, &io, &st, msg, sizeof msg);
	free(cmd);
	int status = 0, close_err = 0;
	if (st.output_error)
		pf_out_error(PROG, out, st.output_error);
	if (st.output_error || rc < 0)
		status = 1;
	if (!to_stdout && close(fd) != 0 && !status) {
		close_err = errno;
		status = 1;
	}
	if (!cx.quiet && !st.output_error) {
		const char *iname = strcmp(in, "-") == 0 ? "<stdin>" : in;
		double per = st.samples ? (double)st.bytes_out / (double)st.samples : 0;
		char bad[64] = "";
		if (st.bad_samples)
			snprintf(bad, sizeof bad, ", %llu damaged samples left out",
				 (unsigned long long)st.bad_samples);
		fprintf(stderr,
			PROG ": %s: %llu samples, %llu lost, %llu records, %llu bytes written to %s (%.1f bytes/sample)%s%s\n",
			iname, (unsigned long long)st.samples, (unsigned long long)st.lost_samples,
			(unsigned long long)st.records, (unsigned long long)st.bytes_out, to_stdout ? "<stdout>" : out, per,
			st.complete ? "" : ", incomplete (no END)", bad);
		if (st.perf_maps)
			fprintf(stderr,
				PROG ": %u JIT map%s (/tmp/perf-PID.map) imported: proof: this machine and boot, last "
				"written while the process lived\n",
				st.perf_maps, st.perf_maps > 1 ? "s" : "");
		if (st.dso_images)
			fprintf(stderr, PROG ": %u vDSO image%s from perf's build-id cache %s\n", st.dso_images,
				st.dso_images > 1 ? "s" : "", bid_dir);
		if (!st.build_ids && !st.mmap_build_ids && st.inode_unproven)
			fprintf(stderr,
				PROG ": %s: no build-ids (perf record writes none in pipe mode or with -z; "
				"--buildid-mmap puts them in the MMAP2 records), and %u file%s not proven by inode: "
				"pfsym uses %s only with --force\n",
				iname, st.inode_unproven, st.inode_unproven > 1 ? "s" : "",
				st.inode_unproven > 1 ? "them" : "it");
		if (verbose)
			print_dropped(&st);
	}
	/* the fault of the input last: the summary above counts what was
	 * intact before it */
	if (!st.output_error && rc < 0)
		fprintf(stderr, PROG ": %s\n", msg[0] ? msg : strerror(-rc));
	if (close_err)
		pf_out_error(PROG, out, close_err);
	pf_perfdata_close(pd);
	return status;
}
