/*
 * tools/common/folded.h - folded-stack text: parsing, frame names, string
 * interning (not installed: only pffold, pfdiff and pfflame read folded text).
 *
 * "Folded" text is the line format that flame-graph tools exchange: one
 * line per distinct stack, frames from the root (usually the process name)
 * to the leaf separated by ';', then a space and a sample count:
 *
 *     model_v1;main;run_model;matmul 1234
 *
 * A differential line carries two counts, BASE then NEW:
 *
 *     model;main;run_model;matmul 1234 3702
 *
 * Rules this parser follows (shared by pffold's output, pfdiff and pfflame):
 *  - The count is the last blank-separated token of the line, all decimal
 *    digits. Frames may contain spaces ("operator new", "foo [libc.so.6]").
 *  - An input has one count on every line or two (BASE NEW) on every line;
 *    its first stack line decides: two when the token before the last is
 *    all digits too and something is left in front of it (flame-graph
 *    tools' differential rule). Later lines are read the same way: in a
 *    one-count input only the last number counts ("p;sleep 10 3" is the
 *    frame "sleep 10" with count 3), in a two-count input a line without two
 *    counts is an error. So "a;b 1 2 3" as a first line is the frame "b 1"
 *    with BASE 2 and NEW 3; a one-count input whose first leaf ends in a
 *    number ("p;sleep 10 3") is misread: put such a line after another.
 *  - Counts are unsigned decimal integers up to 2^63-1 (PF_FOLDED_COUNT_MAX),
 *    and so is the sum of one input's counts (of each column): a line that
 *    would take it past 2^63-1 is an error ("counts overflow"), never a
 *    silent wrap or saturation.
 *  - Empty lines and lines whose first character is '#' are skipped
 *    (among them the unit line below); a trailing '\r' is ignored.
 *  - A line with text but no count, or with an empty stack, is an error.
 *
 * Frame-name conventions understood by pf_frame_*():
 *  - "func [module]" : pffold --dso appends the module's base name.
 *  - "func [FILE:LINE]" : pffold --srcline appends the frame's source line,
 *    before " [module]": "mix [/src/inl.c:11] [app]_[i]". FILE holds no
 *    '[' or ']' (pffold writes them as \x5b and \x5d), LINE is 1 to
 *    4294967295 in decimal.
 *  - a mark at the very end: "_[k]" kernel, "_[i]" inlined, "_[j]" JIT,
 *    "_[w]" waker (FlameGraph's annotations, used by its palettes).
 *  - "[module+0x1a2b]" : an unsymbolized address inside a module.
 *  - compiler clone suffixes: ".isra.N", ".constprop.N", ".part.N",
 *    ".lto_priv.N", ".cold", ".cold.N", ".llvm.NNNN", ".localalias",
 *    ".clone.N" and the demangler's " [clone .isra.0]" form.
 *
 * All functions here are pure parsing; none reads ELF or .pf files.
 */
#ifndef PF_FOLDED_H
#define PF_FOLDED_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The largest count, and the largest sum of one input's counts. */
#define PF_FOLDED_COUNT_MAX UINT64_C(0x7fffffffffffffff)

/* One parsed line. stack points into the caller's line buffer (not
 * NUL-terminated; stack_len bytes). counts[1] is 0 when ncounts == 1. */
struct pf_folded_line {
	const char *stack;
	size_t stack_len;
	uint64_t counts[2];
	int ncounts; /* 1 or 2 */
};

/* Parses one line of len bytes (no trailing '\n' needed; a '\r' or '\n'
 * at the end is ignored), alone: two counts when it ends in two numbers (the
 * first-line rule above; pf_folded_read() applies the rest).
 * @return 1 when *out holds a stack, 0 for a line to skip (empty or '#'),
 *         -EINVAL for a malformed line (no count, empty stack), -ERANGE for
 *         a count above 2^63-1. */
int pf_folded_parse_line(const char *line, size_t len, struct pf_folded_line *out);

/* Callback for pf_folded_read(): return 0 to go on, non-zero to stop (that
 * value is returned by pf_folded_read). lineno counts from 1. */
typedef int (*pf_folded_cb)(void *arg, const struct pf_folded_line *line, uint64_t lineno);

/* Reads folded text from f to its end and calls cb for every stack line;
 * every line has the ncounts of the first (see the rules above).
 * On a malformed line or a read error writes a message "line N: what" into
 * err (errlen bytes, always NUL-terminated when errlen > 0) and returns a
 * negative errno (-EINVAL, -ERANGE, -ENOMEM, read(2)'s error such as -EISDIR
 * or -EIO, with strerror's text as the message; -EOVERFLOW with "line N:
 * counts overflow ..." when the sum of the counts read so far, per column,
 * would pass PF_FOLDED_COUNT_MAX: cb has not seen that line).
 * @return 0 at EOF. */
int pf_folded_read(FILE *f, pf_folded_cb cb, void *arg, char *err, size_t errlen);

/*
 * The unit line. A count in folded text may be a number of samples or a sum
 * of sample periods: `perf script | stackcollapse-perf.pl` (perf 6.1) and
 * `pffold --weight=period` weight each stack by its periods, which are
 * nanoseconds for cpu-clock and task-clock. Nothing in the stack lines says
 * which, so pffold --weight=period writes one comment line first:
 *
 *     # pffold weight=period unit=ns period=250000
 *
 * Syntax: the bytes "# pffold " at the start of the line, then tokens
 * KEY=VALUE separated by blanks (spaces or tabs):
 *   weight=samples|period  what a count is (required)
 *   unit=ns|events         the unit of a period: ns for the software clock
 *                          events (cpu-clock, task-clock), events for
 *                          counters such as cycles (optional)
 *   period=N               the sampling period in that unit, a decimal
 *                          integer >= 1: the mean period of the samples,
 *                          rounded (exact for cpu-clock, whose period is
 *                          fixed at 1e9/F ns) (optional)
 * Unknown keys are ignored, for later additions; a key given twice keeps its
 * last value. Every token has the form KEY=VALUE, so the line never ends in a
 * blank followed by a number: flamegraph.pl, inferno and speedscope skip it as
 * a line without a count (flamegraph.pl then says "Ignored 1 lines with
 * invalid format"), and every pftools reader skips it as a comment.
 */
enum { PF_FOLDED_WEIGHT_UNKNOWN = 0, PF_FOLDED_WEIGHT_SAMPLES = 1, PF_FOLDED_WEIGHT_PERIOD = 2 };

struct pf_folded_unit {
	int weight;       /* PF_FOLDED_WEIGHT_*; UNKNOWN: no unit line */
	char unit[8];     /* "ns", "events", or "" when not given */
	uint64_t period;  /* units per sample, 0 when not given */
};

/* Parses line[0..len) (a trailing '\r' or '\n' ignored) as a unit line.
 * @return 1 with *u filled; 0 when the line does not start with "# pffold ";
 *         -EINVAL when it does but a token is not KEY=VALUE, weight is
 *         missing or not samples/period, unit is not ns/events, or period is
 *         not an integer from 1 to 2^63-1. */
int pf_folded_unit_parse(const char *line, size_t len, struct pf_folded_unit *u);

/* Writes the unit line of *u, with its '\n', into buf (size bytes, always
 * NUL-terminated when size > 0); unit and period are left out when "" or 0.
 * @return the length of the whole line, as snprintf() counts it (no more than
 *         size - 1 bytes were written when it is >= size), or -EINVAL when
 *         u->weight is not SAMPLES or PERIOD or u->unit is not "", "ns" or
 *         "events". */
int pf_folded_unit_format(char *buf, size_t size, const struct pf_folded_unit *u);

/* As pf_folded_read(), and also reads the unit line: *unit gets the first
 * unit line of the input (weight PF_FOLDED_WEIGHT_UNKNOWN when there is
 * none). *unit is zeroed first and set when that line is read, so cb sees
 * the unit from the first stack line on. The same unit line again later (outputs of the same kind put one
 * after the other) is fine; a malformed one, a first one after a stack line,
 * or one that differs from the first is an error (-EINVAL, "line N: ..."):
 * counts read under one unit cannot be mixed with counts in another. */
int pf_folded_read_unit(FILE *f, pf_folded_cb cb, void *arg, struct pf_folded_unit *unit,
			char *err, size_t errlen);

/*
 * The input line. pffold folds whatever is intact of a .pf that is not whole
 * (format/pfile.md 5.4: incomplete, damaged) and says so on standard error;
 * so that the folded text does not pass for a whole profile, it also writes
 * one comment line first:
 *
 *     # pffold-input run.pf: incomplete (no END section: ...): 812 samples used
 *
 * Syntax: the bytes "# pffold-input " at the start of the line, then the
 * text libpfile's pf_input_note() wrote (control bytes as '?'). Other tools
 * skip it as a comment; pfflame shows it in the SVG's subtitle, pfdiff in
 * its header and JSON. Several (folded texts put one after the other) are
 * all kept.
 */
#define PF_FOLDED_INPUT_PREFIX "# pffold-input "

/* Writes text with each control byte (below 0x20, and 0x7f) as '?', so that
 * it stays one line. */
void pf_folded_input_write(FILE *out, const char *text);

/* The first input line of a folded text: text[0..len) kept in note (of
 * `cap` bytes, NUL-terminated, cut to fit) and said once on stderr as
 * "PROG: PATH: folded from an input that was not whole: TEXT". A later line
 * (note already set) is ignored. */
void pf_folded_input_keep(char *note, size_t cap, const char *prog, const char *path, const char *text,
			  size_t len);

/* If line[0..len) is an input line, the text after the prefix (without
 * the trailing '\r' or '\n') in *text and *text_len. @return 1, or 0. */
int pf_folded_input_parse(const char *line, size_t len, const char **text, size_t *text_len);

/* As pf_folded_read_unit(), and also calls input(arg, text, len) for each
 * input line (NULL: not wanted). */
int pf_folded_read_input(FILE *f, pf_folded_cb cb, void *arg, struct pf_folded_unit *unit,
			 void (*input)(void *arg, const char *text, size_t len), char *err, size_t errlen);

/* Splits the next frame off a stack. *pos is the byte offset to start at
 * (0 first); on return *frame and *flen name the frame and *pos is past its ';'.
 * @return 1 when a frame was returned, 0 when the stack is exhausted. */
int pf_folded_next_frame(const char *stack, size_t len, size_t *pos,
			 const char **frame, size_t *flen);

/* Length of name[0..len) once trailing compiler clone suffixes (see above)
 * are removed, repeatedly ("f.constprop.0.isra.0" -> "f"). Never returns 0
 * for a non-empty name (".cold" stays as it is). */
size_t pf_frame_strip_clone(const char *name, size_t len);

/* Length of the mark that ends frame[0..len) ("_[k]", "_[i]", "_[j]",
 * "_[w]": 4), or 0 when it has none. */
size_t pf_frame_mark(const char *frame, size_t len);

/* Finds the source line " [FILE:LINE]" of a frame (before its module and its
 * mark, if any). On success frame[*at..*end) is the whole group with its
 * leading blank (the frame without it is frame[0..*at) + frame[*end..len)),
 * *file and *file_len the file as written (escapes not undone), *line the
 * line. @return 1, or 0 when the frame has none. */
int pf_frame_srcline(const char *frame, size_t len, size_t *at, size_t *end,
		     const char **file, size_t *file_len, uint32_t *line);

/* Splits a frame into function and module (the module's base name, any
 * directory removed). Pointers point into frame; absent parts are NULL/0.
 * The function leaves out the frame's source line and mark (pf_frame_srcline(),
 * pf_frame_mark()).
 *   "f [libm.so.6]"              -> func "f",   mod "libm.so.6"
 *   "f [/s/f.c:3] [libm.so.6]_[i]" -> func "f", mod "libm.so.6"
 *   "f [clone .isra.0]"          -> func "f [clone .isra.0]", no module
 *   "[/lib/libm.so.6+0x1a2b]"    -> func NULL (an address), mod "libm.so.6"
 *   "[unknown]", "f"             -> func the whole frame, no module
 * An unsymbolized frame (func NULL) has no name that survives a rebuild;
 * callers name it "[module]" so that frames of one module still match. */
void pf_frame_split(const char *frame, size_t len,
		    const char **func, size_t *func_len,
		    const char **mod, size_t *mod_len);

/* Returns non-zero when the first n bytes of a file look like folded text
 * (printable text whose first non-comment line ends in a count). */
int pf_folded_sniff(const void *buf, size_t n);

/*
 * String table: interns byte strings to dense ids 0, 1, 2, ... (insertion
 * order). Strings are copied into an arena owned by the table and stay valid
 * (NUL-terminated) until pf_strtab_free(). Lookup is XXH3-64 + open
 * addressing; cost O(len) per call, no allocation per call except growth.
 */
struct pf_strtab {
	uint32_t *slots;  /* id + 1, 0 = empty */
	uint32_t nslots;  /* power of two */
	uint32_t count;   /* number of strings */
	uint32_t cap;     /* capacity of offs/lens/hashes */
	uint64_t *offs;   /* byte offset of string id in arena */
	uint32_t *lens;   /* length of string id in bytes */
	uint64_t *hashes; /* XXH3-64 of string id */
	char *arena;
	size_t arena_len, arena_cap;
};

/* Initializes an empty table. @return 0 or -ENOMEM. */
int pf_strtab_init(struct pf_strtab *t);
/* Frees everything; *t is left zeroed. */
void pf_strtab_free(struct pf_strtab *t);
/* Returns the id of s[0..len), adding it if new (*added set to 1 then, when
 * added is not NULL); s may point into the table's own strings. @return the id (>= 0), or -ENOMEM, or -E2BIG beyond
 * 2^31 strings or 2^62 bytes. */
int64_t pf_strtab_intern(struct pf_strtab *t, const char *s, size_t len, int *added);
/* Returns the id of s[0..len) or -1 when absent. */
int64_t pf_strtab_find(const struct pf_strtab *t, const char *s, size_t len);
/* The NUL-terminated string of id (valid until the next intern call, which
 * may move the arena). */
static inline const char *pf_strtab_str(const struct pf_strtab *t, uint32_t id)
{
	return t->arena + t->offs[id];
}
static inline uint32_t pf_strtab_len(const struct pf_strtab *t, uint32_t id)
{
	return t->lens[id];
}

#ifdef __cplusplus
}
#endif
#endif
