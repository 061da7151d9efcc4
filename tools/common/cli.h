/*
 * tools/common/cli.h - the command-line manners every pftools program
 * shares (not installed; linked into each tool from tools/common/).
 *
 * Exit status: 0 ok, 1 error, 2 usage error (pfdiff adds 3 for a regression
 * found, pfrec passes on the command's). -h/--help prints the usage to
 * standard output and exits 0; -V/--version prints "PROG (pftools) VERSION"
 * (pf_version(), the Makefile's VERSION); a usage error prints one line
 * "PROG: what" (getopt's own message for an unknown option), then "Try 'PROG
 * --help' for more information.", to standard error, and exits 2.
 *
 * Output errors (the man pages' EXIT STATUS): SIGPIPE is ignored, so a reader
 * that closes the pipe early (`pfdump run.pf | head`) makes a write fail with
 * EPIPE instead of killing the program (status 141); the program then stops
 * writing, prints one line naming the output and the fault, and exits 1, as
 * for any other write error (ENOSPC, EIO).
 */
#ifndef PF_TOOLS_CLI_H
#define PF_TOOLS_CLI_H

#include <stdio.h>

enum { PF_EXIT_OK = 0, PF_EXIT_ERROR = 1, PF_EXIT_USAGE = 2 };

/* -V, --version: "PROG (pftools) VERSION" on standard output. @return 0,
 * or 1 when it could not be written (a line names the fault). */
int pf_cli_version(const char *prog);

/* The last line of every usage error, "Try 'PROG --help' for more
 * information.", on standard error. @return PF_EXIT_USAGE. */
int pf_cli_try_help(const char *prog);

/* A usage error: "PROG: MESSAGE" and the Try line on standard error.
 * @return PF_EXIT_USAGE. */
int pf_cli_usage(const char *prog, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The options every tool has, as the default case of its getopt switch:
 * c == 'h' prints usage(stdout), c == 'V' the version (both @return
 * PF_EXIT_OK, or PF_EXIT_ERROR with a line naming the fault when standard
 * output could not take it); any other c is a usage error that getopt has already
 * printed: the Try line, @return PF_EXIT_USAGE. */
int pf_cli_std_opt(const char *prog, int c, void (*usage)(FILE *out));

/* The last entries of every tool's getopt_long() table: --help and
 * --version, which pf_cli_std_opt() handles, and the table's end. */
#define PF_CLI_STD_LONGOPTS \
	{ "help", no_argument, NULL, 'h' }, { "version", no_argument, NULL, 'V' }, { NULL, 0, NULL, 0 }

/* At most one operand, the input, left after the options at argv[optind]:
 * *in = it (unchanged if none). @return 0, or PF_EXIT_USAGE after
 * "PROG: unexpected argument 'X'" for a second one. */
int pf_cli_one_input(const char *prog, int argc, char **argv, int optind, const char **in);

/* The index of `arg` in `names` (NULL-terminated), or -1 when it is none
 * of them. */
int pf_cli_choice(const char *arg, const char *const *names);

/* An option whose value is one of a few words: @return the index of `arg`
 * in `names` (NULL-terminated), or -1 after the one line "PROG: --OPT:
 * expected A, B or C, not 'ARG'" on standard error (no Try line: the
 * message pfdiff and pfflame print for such a value); the caller exits with
 * PF_EXIT_USAGE. */
int pf_cli_pick(const char *prog, const char *opt, const char *arg, const char *const *names);

/* As pf_cli_usage(), then exit(PF_EXIT_USAGE). */
void pf_cli_usage_exit(const char *prog, const char *fmt, ...)
	__attribute__((format(printf, 2, 3), noreturn));

/* Opens the input `path` for reading; "-" is standard input. A directory
 * is refused (errno EISDIR), as fopen() would let it through and the first
 * read fail with a less clear message. @return the stream, or NULL with
 * errno set. */
FILE *pf_cli_open_in(const char *path);

/* Creates (or truncates) the recording `path` for writing, as perf record
 * writes perf.data: mode 0600, since a recording holds what the recorded
 * programs had in memory and in their JIT maps, command lines and paths.
 * An existing regular file that others could read loses those bits first,
 * before the new contents go in. close-on-exec. @return the file
 * descriptor, or -1 with errno set. */
int pf_out_create_recording(const char *path);

/* A temporary file that no one else can see: O_TMPFILE in $TMPDIR (/tmp
 * when unset or empty), else mkostemp() of "DIR/PREFIX-XXXXXX" unlinked at
 * once; close-on-exec. *dir = the folder (for a message). @return the file
 * descriptor, or -errno. */
int pf_tmpfile(const char *prefix, const char **dir);

/* The one line for a library call on the input `name` that failed with
 * rc (a negative errno value): "PROG: MSG" when the library left a message
 * (msg neither NULL nor empty: it names the file), else "PROG: NAME:
 * strerror(-rc)", on standard error. */
void pf_cli_lib_error(const char *prog, const char *msg, const char *name, int rc);

/* Called first thing in main(): writes to a closed pipe fail with EPIPE. */
void pf_out_ignore_sigpipe(void);

/* The one line for a write error `err` (an errno value) on the output
 * `name` ("-" or NULL = standard output, shown as <stdout>). */
void pf_out_error(const char *prog, const char *name, int err);

/* Flushes a stdio output and tells whether it failed, now or before:
 * @return 0, or the errno value of the failure. stdio keeps only a flag
 * (ferror()) of a write that failed inside an earlier call, not its errno,
 * and drops the buffer it could not write: that case is told apart by
 * poll(2), which reports POLLERR on a pipe whose reader is gone (EPIPE),
 * or by errno on entry when it is one that only a failed write sets
 * (ENOSPC, EDQUOT, EFBIG, EPIPE); anything else is EIO. */
int pf_out_flush(FILE *f);

/* Writes all n bytes of p to fd, again after a short write or EINTR.
 * @return 0, or -errno of the write(2) that failed. */
int pf_out_write_all(int fd, const void *p, size_t n);

#endif
