/*
 * pfsym - add a resolved profile (symbolized samples) to a recording.
 *
 * Option parsing and messages; the work is libpfsym's pf_sym_rewrite()
 * (libpfsym/rewrite.c): it copies every section through (dropping an older
 * resolved profile) and appends STRINGS/FRAMES/STACKS/SAMPLES/SYMINFO
 * sections (format/profile.md) in bounded chunks, so that it streams.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <pfile/sym.h>
#include "cli.h"
#include "text.h"

#define PROG "pfsym"

static void usage(FILE *f)
{
	fputs("Usage: pfsym [OPTIONS] [IN.pf|-] [-o OUT.pf|-]\n"
	      "Symbolize a recording: copy IN (default: standard input) to OUT (default:\n"
	      "standard output) with a resolved profile added: function names for every\n"
	      "sampled address and callchain frame, interned stacks and samples.\n"
	      "\n"
	      "Options:\n"
	      "  -o, --output=FILE     write to FILE ('-' = standard output; never a terminal)\n"
	      "      --symfs=DIR       look for binaries under DIR instead of this machine's\n"
	      "                        root (a copy of the recorded machine's root file\n"
	      "                        system; its symbolic links never lead out of DIR)\n"
	      "      --host-fallback   with --symfs: also look at this machine's files\n"
	      "                        (the summary names each one used)\n"
	      "      --debug-dir=DIR   also look for debug files in DIR (DIR/.build-id/xx/rest.debug,\n"
	      "                        DIR/PATH, DIR/PATH.debug); may be repeated\n"
	      "  -f, --force           use binaries whose build-id differs from the recorded one,\n"
	      "                        or that no build-id can vouch for (none recorded)\n"
	      "      --no-demangle     keep C++ and Rust names as mangled in the symbol table\n"
	      "                        (default: demangled, e.g. 'Worker<3>::spin(long)')\n"
	      "      --kallsyms=FILE   name kernel frames from FILE (text as /proc/kallsyms\n"
	      "                        shows it, read as root) instead of the recording's\n"
	      "                        snapshot: for recordings made with --no-kallsyms\n"
	      "      --vmlinux=FILE    name core kernel frames from FILE, an uncompressed\n"
	      "                        kernel ELF image with symbols (with DWARF: also inline\n"
	      "                        frames and source lines); used only if its build-id is\n"
	      "                        the recorded kernel's (or with --force), moved by the\n"
	      "                        recorded _text address (KASLR); modules stay named from\n"
	      "                        the snapshot or --kallsyms\n"
	      "      --no-inline       no inline frames and no source lines (by default, from\n"
	      "                        the DWARF of the binary or its debug file)\n"
	      "      --dwarf-cache=DIR keep the inflated DWARF of compressed debug files in DIR\n"
	      "                        for later runs (default: $XDG_CACHE_HOME/pftools/dwarf,\n"
	      "                        else ~/.cache/pftools/dwarf; the output is the same)\n"
	      "      --no-dwarf-cache  neither read nor write that cache\n"
	      "      --debuginfod=URL  fetch binaries and debug files missing here by build-id\n"
	      "                        from the debuginfod server(s) URL (space-separated;\n"
	      "                        sets DEBUGINFOD_URLS, which is used when set)\n"
	      "      --no-debuginfod   never ask debuginfod servers, even with DEBUGINFOD_URLS\n"
	      "      --debuginfod-timeout=SECONDS  the time all downloads of the run may take\n"
	      "                        together (default 120; 0: no limit); a download running\n"
	      "                        then is aborted, and no more are started\n"
	      "      --max-name=BYTES  keep at most BYTES of a function name (64..1048576,\n"
	      "                        default 65536): a longer one is cut, marked [cut]\n"
	      "      --max-inline=N    keep at most N inline frames per address (1..255,\n"
	      "                        default 64): the outermost; the deepest are dropped\n"
	      "      --max-jit-symbols=N  use at most N lines of the recorded JIT maps\n"
	      "                        (/tmp/perf-PID.map) in all (default 2000000; 0: no\n"
	      "                        limit); lines past it are not used, and said so\n"
	      "      --max-jit-map-mb=MIB  keep at most MIB MiB of JIT map text (default\n"
	      "                        256; 0: no limit); sections past it are not used\n"
	      "  -q, --quiet           no summary on standard error\n"
	      "      --resolve=BINARY  print the name pfsym gives each ELF virtual address\n"
	      "                        ADDR (hex) of BINARY ('ADDR NAME', '?\?' if none),\n"
	      "                        then, with DWARF, its inline frames and lines as\n"
	      "                        addr2line -f -i -p prints them; then exit:\n"
	      "                        pfsym --resolve=BINARY ADDR...\n"
	      "      --json            with --resolve: one JSON object per address\n"
	      "  -h, --help            show this help and exit\n"
	      "  -V, --version         show the version and exit\n"
	      "\n"
	      "Binaries are looked up in this order: the recorded path (under --symfs DIR,\n"
	      "else on this machine), each --debug-dir, /usr/lib/debug/.build-id/xx/rest.debug\n"
	      "(under --symfs DIR, else on this machine), and with --symfs --host-fallback,\n"
	      "this machine's path and /usr/lib/debug/.build-id; then a stripped binary's\n"
	      ".gnu_debuglink file (CRC32-checked) and debuginfod. A file is used only if its\n"
	      "build-id matches the recording's (without --force); frames of missing or\n"
	      "mismatched binaries stay '[file+0xOFFSET]' and the summary lists the places\n"
	      "tried. Only regular files are opened: never FIFOs, devices, sockets, or files\n"
	      "under /proc, /sys or /dev; never a path recorded as deleted or memfd.\n"
	      "\n"
	      "The input's sections are copied as stored. The resolved profile is compressed\n"
	      "(zstd level 1) when OUT is a file, and stored uncompressed when OUT is a pipe\n"
	      "or a socket, where the next program (pffold) reads it at once.\n"
	      "\n"
	      "Exit status: 0 ok, 1 error (including a damaged input), 2 usage.\n",
	      f);
}

/* One address of --resolve as text: "0xADDR NAME" (the real function, "??"
 * if none), then, when DWARF gives lines, the frames innermost first as
 * addr2line -f -i -p prints them ("NAME at FILE:LINE", "(inlined by) ..."). */
static void resolve_text(unsigned long long v, const struct pf_sym_frame *f, uint32_t n, int chain)
{
	printf("0x%llx ", v);
	pf_text_write(stdout, f[n - 1].name ? f[n - 1].name : "??");
	putchar('\n');
	int lines = 0;
	for (uint32_t i = 0; i < n; i++)
		lines |= f[i].file != NULL;
	if (!chain || !lines)
		return;
	for (uint32_t i = 0; i < n; i++) {
		fputs(i ? "  (inlined by) " : "  ", stdout);
		pf_text_write(stdout, f[i].name ? f[i].name : "??");
		fputs(" at ", stdout);
		pf_text_write(stdout, f[i].file ? f[i].file : "??");
		printf(":%u\n", f[i].line);
	}
}

/* One address of --resolve --json: {"addr":"0x..","name":..,"frames":[..]}
 * with the frames innermost first. */
static void resolve_json(unsigned long long v, const struct pf_sym_frame *f, uint32_t n)
{
	printf("{\"addr\":\"0x%llx\",\"name\":", v);
	if (f[n - 1].name)
		pf_json_str(stdout, f[n - 1].name, strlen(f[n - 1].name), PF_JSON_BAD_LATIN1);
	else
		fputs("null", stdout);
	fputs(",\"frames\":[", stdout);
	for (uint32_t i = 0; i < n; i++) {
		fputs(i ? ",{\"name\":" : "{\"name\":", stdout);
		if (f[i].name)
			pf_json_str(stdout, f[i].name, strlen(f[i].name), PF_JSON_BAD_LATIN1);
		else
			fputs("null", stdout);
		fputs(",\"file\":", stdout);
		if (f[i].file)
			pf_json_str(stdout, f[i].file, strlen(f[i].file), PF_JSON_BAD_LATIN1);
		else
			fputs("null", stdout);
		printf(",\"line\":%u,\"inline\":%s}", f[i].line, f[i].depth ? "true" : "false");
	}
	fputs("]}\n", stdout);
}

/* pfsym --resolve=BINARY ADDR...: each address's frames (resolve_text(),
 * resolve_json()). */
static int resolve_main(const struct pf_sym_opts *so, const char *bin, char **addrs, int n, int json)
{
	pf_sym *sym;
	char err[PATH_MAX + 128];
	int rc = pf_sym_new(&sym, so, err, sizeof(err));
	if (rc < 0) {
		if (err[0])
			fprintf(stderr, PROG ": %s\n", err);
		else
			fprintf(stderr, PROG ": symbolizer: %s\n", strerror(-rc));
		return 1;
	}
	/* binaries are found by absolute path, as recorded */
	char *abs = realpath(bin, NULL);
	if (!abs) {
		fprintf(stderr, PROG ": %s: %s\n", bin, strerror(errno));
		pf_sym_free(sym);
		return 1;
	}
	int status = 0;
	for (int i = 0; i < n && !status; i++) {
		char *e;
		errno = 0;
		unsigned long long v = strtoull(addrs[i], &e, 16);
		if (errno || e == addrs[i] || *e) {
			fprintf(stderr, PROG ": --resolve: '%s' is not a hexadecimal address\n", addrs[i]);
			status = 2;
			break;
		}
		struct pf_sym_frame f[256];
		uint32_t nf = 0;
		rc = pf_sym_lookup_chain(sym, abs, v, f, 256, &nf);
		if (rc < 0 && rc != -ENOSPC) {
			fprintf(stderr, PROG ": %s: %s\n", bin, rc == -ENOENT ? "not a readable ELF file" : strerror(-rc));
			status = 1;
			break;
		}
		if (json)
			resolve_json(v, f, nf);
		else
			resolve_text(v, f, nf, !so->no_inline);
	}
	if (!status) {
		int e = pf_out_flush(stdout);
		if (e) {
			pf_out_error(PROG, "-", e);
			status = 1;
		}
	}
	free(abs);
	pf_sym_free(sym);
	return status;
}

static void on_message(void *arg, const char *msg)
{
	(void)arg;
	/* a message may name a recorded path: its control bytes escaped, so
	 * that it stays one line */
	fputs(PROG ": ", stderr);
	pf_text_write(stderr, msg);
	fputc('\n', stderr);
}

/* Opens the output ("-": standard output, never a terminal) after checking
 * that it is not the input. @return the descriptor, or -1 (told). */
static int open_output(const char *in, const char *out)
{
	/* Writing over the input would destroy the recording before it is read. */
	struct stat in_st, out_st;
	int have_in = strcmp(in, "-") ? stat(in, &in_st) == 0 : fstat(0, &in_st) == 0;
	int have_out = strcmp(out, "-") ? stat(out, &out_st) == 0 : fstat(1, &out_st) == 0;
	if (have_in && have_out && S_ISREG(in_st.st_mode) && in_st.st_dev == out_st.st_dev &&
	    in_st.st_ino == out_st.st_ino) {
		fprintf(stderr, PROG ": %s: the output is the input file; write to another file\n", out);
		return -1;
	}
	if (strcmp(out, "-") == 0) {
		if (isatty(1)) {
			fprintf(stderr, PROG ": refusing to write binary data to a terminal (use -o FILE or a pipe)\n");
			return -1;
		}
		return 1;
	}
	int ofd = pf_out_create_recording(out);
	if (ofd < 0)
		fprintf(stderr, PROG ": %s: %s\n", out, strerror(errno));
	return ofd;
}

/* Symbolizes `in` into `out`. @return the exit status. */
static int symbolize(const struct pf_sym_opts *so, const char *in, const char *out, int quiet)
{
	/* the directories first: a wrong --symfs must not cost the output file */
	pf_sym *sym;
	char err[PATH_MAX + 128];
	int rc = pf_sym_new(&sym, so, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, PROG ": %s\n", err[0] ? err : strerror(-rc));
		return 1;
	}
	int ofd = open_output(in, out);
	if (ofd < 0) {
		pf_sym_free(sym);
		return 1;
	}
	pf_reader *r;
	rc = pf_reader_open(&r, in);
	if (rc < 0) {
		const char *m = r ? pf_reader_errmsg(r) : "";
		pf_cli_lib_error(PROG, m, in, rc);
		pf_reader_close(r);
		if (ofd != 1)
			close(ofd);
		pf_sym_free(sym);
		return 1;
	}
	struct pf_sym_rewrite_opts ro = PF_SYM_REWRITE_OPTS_INIT;
	ro.input_name = in;
	ro.output_name = out;
	ro.message = on_message;
	rc = pf_sym_rewrite(sym, r, ofd, &ro, err, sizeof(err));
	int status = rc != 0;
	if (rc < 0)
		fprintf(stderr, PROG ": %s\n", err);
	/* the output is complete: close it now, so that the next stage of a
	 * pipeline sees its end while this process is still tearing down */
	if (close(ofd) < 0 && !status) {
		pf_out_error(PROG, out, errno);
		status = 1;
	}
	if (!quiet)
		pf_sym_report(sym, stderr, PROG);
	pf_sym_free(sym);
	pf_reader_close(r);
	return status;
}

/* $XDG_CACHE_HOME/pftools/dwarf, else $HOME/.cache/pftools/dwarf (XDG Base
 * Directory rules: a relative XDG_CACHE_HOME is ignored), in buf; NULL when
 * neither is set (no cache). */
static const char *default_cache(char *buf, size_t size)
{
	const char *x = getenv("XDG_CACHE_HOME"), *h = getenv("HOME");
	int w;
	if (x && x[0] == '/')
		w = snprintf(buf, size, "%s/pftools/dwarf", x);
	else if (h && h[0] == '/')
		w = snprintf(buf, size, "%s/.cache/pftools/dwarf", h);
	else
		return NULL;
	return w > 0 && (size_t)w < size ? buf : NULL;
}

/* A count of lo..hi in decimal. @return 1 with *v set, or 0. */
static int parse_bound(const char *s, unsigned long lo, unsigned long hi, unsigned long *v)
{
	char *end;
	errno = 0;
	if (*s < '0' || *s > '9')
		return 0;
	*v = strtoul(s, &end, 10);
	return !errno && !*end && *v >= lo && *v <= hi;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "symfs", required_argument, NULL, 'S' },
		{ "host-fallback", no_argument, NULL, 'H' },
		{ "debug-dir", required_argument, NULL, 'D' },
		{ "force", no_argument, NULL, 'f' },
		{ "no-demangle", no_argument, NULL, 'M' },
		{ "kallsyms", required_argument, NULL, 'K' },
		{ "vmlinux", required_argument, NULL, 'L' },
		{ "no-inline", no_argument, NULL, 'I' },
		{ "dwarf-cache", required_argument, NULL, 'C' },
		{ "no-dwarf-cache", no_argument, NULL, 'c' },
		{ "debuginfod", required_argument, NULL, 'U' },
		{ "no-debuginfod", no_argument, NULL, 'N' },
		{ "debuginfod-timeout", required_argument, NULL, 'T' },
		{ "max-name", required_argument, NULL, 'W' },
		{ "max-inline", required_argument, NULL, 'J' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "resolve", required_argument, NULL, 'R' },
		{ "json", no_argument, NULL, 'j' },
		{ "max-jit-symbols", required_argument, NULL, 'Y' },
		{ "max-jit-map-mb", required_argument, NULL, 'Z' },
		PF_CLI_STD_LONGOPTS,
	};
	/* large section buffers come and go: keep them in the heap instead of
	 * mapping and unmapping them (fresh pages fault on every touch) */
	mallopt(M_MMAP_THRESHOLD, 256 << 20);
	mallopt(M_TRIM_THRESHOLD, 512 << 20);
	/* a closed output pipe is a write error (EPIPE), reported in one line */
	pf_out_ignore_sigpipe();
	struct pf_sym_opts so = PF_SYM_OPTS_INIT;
	so.message = on_message;
	const char *out = NULL, *in = "-", *resolve = NULL;
	const char *ddirs[32];
	int quiet = 0, no_cache = 0, json = 0, c;
	char cache_dir[4096];
	so.debug_dirs = ddirs;
	while ((c = getopt_long(argc, argv, "o:fqhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 'S':
			so.symfs = optarg;
			break;
		case 'H':
			so.host_fallback = 1;
			break;
		case 'D':
			if (so.n_debug_dirs == 32) {
				fprintf(stderr, PROG ": too many --debug-dir options (at most 32)\n");
				return 2;
			}
			ddirs[so.n_debug_dirs++] = optarg;
			break;
		case 'f':
			so.force = 1;
			break;
		case 'U':
			if (!*optarg) {
				fprintf(stderr, PROG ": --debuginfod: an empty URL\n");
				return 2;
			}
			/* libdebuginfod reads its servers from the environment only */
			if (setenv("DEBUGINFOD_URLS", optarg, 1) < 0) {
				fprintf(stderr, PROG ": --debuginfod: %s\n", strerror(errno));
				return 1;
			}
			so.debuginfod = 1;
			break;
		case 'N':
			so.debuginfod = -1;
			break;
		case 'T': {
			char *end;
			errno = 0;
			double t = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(t >= 0) || t > 1e6) {
				fprintf(stderr, PROG ": --debuginfod-timeout: expected seconds (0 to 1000000), not '%s'\n",
					optarg);
				return 2;
			}
			so.debuginfod_timeout_s = t > 0 ? t : -1;
			break;
		}
		case 'W':
		case 'J': {
			unsigned long v;
			unsigned long lo = c == 'W' ? 64 : 1, hi = c == 'W' ? 1048576 : 255;
			if (!parse_bound(optarg, lo, hi, &v)) {
				fprintf(stderr, PROG ": %s: expected %s from %lu to %lu, not '%s'\n",
					c == 'W' ? "--max-name" : "--max-inline", c == 'W' ? "bytes" : "frames", lo, hi,
					optarg);
				return 2;
			}
			if (c == 'W')
				so.max_name = (uint32_t)v;
			else
				so.max_inline = (uint32_t)v;
			break;
		}
		case 'M':
			so.no_demangle = 1;
			break;
		case 'K':
			so.kallsyms = optarg;
			break;
		case 'L':
			so.vmlinux = optarg;
			break;
		case 'I':
			so.no_inline = 1;
			break;
		case 'C':
			if (!*optarg) {
				fprintf(stderr, PROG ": --dwarf-cache: an empty folder name\n");
				return 2;
			}
			so.dwarf_cache = optarg;
			no_cache = 0;
			break;
		case 'c':
			no_cache = 1;
			break;
		case 'q':
			quiet = 1;
			break;
		case 'R':
			resolve = optarg;
			break;
		case 'j':
			json = 1;
			break;
		case 'Y':
		case 'Z': {
			const char *name = c == 'Y' ? "--max-jit-symbols" : "--max-jit-map-mb";
			char *e;
			errno = 0;
			unsigned long long v = strtoull(optarg, &e, 10);
			if (errno || e == optarg || *e || optarg[0] == '-' || (c == 'Z' && v > (UINT64_MAX >> 20)))
				return pf_cli_usage(PROG, "%s: expected a number (0: no limit), not '%s'", name, optarg);
			if (c == 'Y')
				so.max_jit_symbols = v ? v : UINT64_MAX;
			else
				so.max_jit_map_bytes = v ? v << 20 : UINT64_MAX;
			break;
		}
		default:
			return pf_cli_std_opt(PROG, c, usage);
		}
	}
	if (no_cache)
		so.dwarf_cache = NULL;
	else if (!so.dwarf_cache)
		so.dwarf_cache = default_cache(cache_dir, sizeof(cache_dir));
	if (json && !resolve)
		return pf_cli_usage(PROG, "--json goes with --resolve");
	if (resolve)
		return resolve_main(&so, resolve, argv + optind, argc - optind, json);
	if (optind < argc)
		in = argv[optind++];
	if (optind < argc && !out)
		out = argv[optind++];
	if (optind < argc)
		return pf_cli_usage(PROG, "unexpected argument '%s'", argv[optind]);
	if (!out)
		out = "-";

	return symbolize(&so, in, out, quiet);
}
