/*
 * pfscript - one block per sample in the text layout of `perf script`
 * (callchain form), or JSON Lines, from a .pf file.
 *
 * The samples and frames come from the resolved profile that pfsym adds
 * (pf_prof_load_section() and pf_prof_samples_next(), profile.h); an
 * unsymbolized recording goes through pf_prof_builder with no symbolizer,
 * its frames then DSO + offset. Symbol offsets ("sym+0x1f") are those pfsym
 * stored in each frame (PF_FRAME_HAS_SYMOFF, profile format 1.1): pfscript
 * reads no ELF file.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cli.h"
#include "maps.h"
#include "profile.h"
#include "text.h"

#define PROG "pfscript"

enum {
	F_COMM = 1u << 0,
	F_PID = 1u << 1,
	F_TID = 1u << 2,
	F_CPU = 1u << 3,
	F_TIME = 1u << 4,
	F_PERIOD = 1u << 5,
	F_EVENT = 1u << 6,
	F_IP = 1u << 7,
	F_SYM = 1u << 8,
	F_DSO = 1u << 9,
	F_SYMOFF = 1u << 10,
};
static const struct { const char *name; unsigned bit; } field_names[] = {
	{ "comm", F_COMM }, { "pid", F_PID }, { "tid", F_TID }, { "cpu", F_CPU }, { "time", F_TIME },
	{ "period", F_PERIOD }, { "event", F_EVENT }, { "ip", F_IP }, { "sym", F_SYM }, { "dso", F_DSO },
	{ "symoff", F_SYMOFF },
};
/* perf script's default for a sampled event, with [cpu] where the event
 * recorded the CPU (PERF_SAMPLE_CPU) */
#define F_DEFAULT (F_COMM | F_TID | F_TIME | F_PERIOD | F_EVENT | F_IP | F_SYM | F_SYMOFF | F_DSO)

/* One frame's text, made once (frame_cached()). */
/* Where frame texts are in ctx.arena: off, len (len 0: not made yet). */
struct ftext {
	uint32_t off, len;
};

/* The text output: sample lines and frame texts are copied into ctx.obuf
 * and written a MiB at a time, not one fwrite per line. JSON goes through
 * stdio. */
#define OBUF_SIZE ((size_t)128 << 10)

/* perf script's sample filters (--comm, --pid, --tid, -C, --time, -S) and
 * --max-stack, as its documentation gives them. Lists are kept as the
 * comma-separated text given (a few entries each). */
struct filter {
	const char *comms, *pids, *tids, *syms; /* NULL: no such filter */
	uint8_t *cpus;       /* -C: bitmap of PF_MAX_CPUS bits, NULL: no filter */
	int has_time;
	uint64_t t_start, t_stop; /* --time, ns inclusive; t_stop 0: no end */
	uint32_t max_stack;  /* frames printed per sample (UINT32_MAX: all) */
};
#define PF_MAX_CPUS 4096

struct ctx {
	FILE *out;
	unsigned fields;
	int fields_given; /* -F: exactly these; else the default plus cpu per event */
	int json, offsets, ns;
	struct pf_prof *prof;
	struct pf_events *evs;
	int old_offsets; /* a named frame without an offset was seen (pfsym before 1.1) */
	uint8_t word_size; /* the recording's pointer size (file header): 4 or 8 */
	struct ftext *fcache; /* frame texts by 2 * frame id + (caller ? 1 : 0) */
	size_t n_fcache;
	char *arena; /* the frame texts, one after the other */
	size_t arena_len, arena_cap;
	uint8_t *fkern; /* per frame id: 1 a kernel frame (print_all()) */
	uint8_t *fanon; /* per frame id: 1 in anonymous memory (its text names the pid) */
	uint32_t cur_pid; /* the process of the sample being printed */
	char *obuf; /* text output not yet handed to stdio (OBUF_SIZE bytes) */
	size_t olen;
	FILE *mem; /* frame_cached()'s memory stream over mem_buf, mem_len */
	char *mem_buf;
	size_t mem_len;
	struct pf_prof_sample **keep; /* the samples, printed at the end, in blocks of
					* KEEP_BLOCK (no copying as they grow) */
	size_t n_keep, n_blocks;
	int opened; /* the input could be opened */
	const char *in;
	const char *event; /* -e: only the samples of the event of this name */
	size_t name_width; /* the longest event name: perf script pads each to it */
	uint32_t name_width_n; /* of the first name_width_n events */
	uint64_t printed, lost;
	int werr; /* errno of a failed write */
	struct filter filt;
};

static void usage(FILE *f)
{
	fputs("Usage: pfscript [OPTIONS] [IN.pf|-]\n"
	      "Write every sample of a symbolized .pf file (pfsym's output) as `perf script`\n"
	      "prints a callchain: one line 'comm tid time: period event:' and one line\n"
	      "'\\tADDR sym+0xOFF (dso)' per frame, leaf first, then an empty line. The\n"
	      "output reads unchanged into stackcollapse-perf.pl, inferno-collapse-perf,\n"
	      "speedscope, the Firefox Profiler and hotspot. An unsymbolized file gives\n"
	      "'OFF [unknown] (dso)' frames, as perf script prints unnamed code.\n"
	      "\n"
	      "Options:\n"
	      "  -e, --event=NAME        only the samples of event NAME (its name as given to\n"
	      "                          pfrec -e: 'cpu-clock', 'cpu/event=0x3c/u'; default:\n"
	      "                          every event's)\n"
	      "      --comm=LIST         only the samples of these thread names (comma-separated)\n"
	      "      --pid=LIST          only the samples of these process ids\n"
	      "      --tid=LIST          only the samples of these thread ids\n"
	      "  -C, --cpu=LIST          only the samples taken on these CPUs (0,2-3)\n"
	      "      --time=START,STOP   only the samples from START to STOP (seconds, as the\n"
	      "                          time field prints them; either may be left out)\n"
	      "  -S, --symbols=LIST      only the samples taken in these functions\n"
	      "      --max-stack=N       at most N frames per sample\n"
	      "  -o, --output=FILE       write to FILE instead of standard output\n"
	      "  -F, --fields=LIST       the fields to print, comma-separated, from comm, pid,\n"
	      "                          tid, cpu, time, period, event, ip, sym, symoff, dso\n"
	      "                          (default: comm,tid,time,period,event,ip,sym,symoff,dso,\n"
	      "                          plus cpu when the event recorded it); ip, sym, symoff\n"
	      "                          and dso are the frame lines\n"
	      "      --no-offsets        'sym' without '+0xOFF'\n"
	      "      --ns                times with nanoseconds (9 decimals; default 6)\n"
	      "  -j, --json              JSON Lines: one object per sample with the same\n"
	      "                          fields, frames in an array, leaf first\n"
	      "  -q, --quiet             no summary on standard error\n"
	      "  -h, --help              show this help and exit\n"
	      "  -V, --version           show the version and exit\n"
	      "\n"
	      "Samples come in time order, as perf script prints them (a recording holds\n"
	      "each CPU's samples in runs): pfscript keeps 48 bytes per sample to sort them.\n"
	      "ADDR is the frame's offset in its file, as perf prints it (a caller's at its\n"
	      "return address; in a DWARF-unwound stack at the byte before it), the kernel's\n"
	      "address for kernel frames, the address itself in anonymous memory (a JIT's:\n"
	      "DSO /tmp/perf-PID.map). Lost samples are counted in the summary, not printed.\n"
	      "\n"
	      "Exit status: 0 ok, 1 error (including a damaged input), 2 usage.\n",
	      f);
}

static int parse_fields(const char *s, unsigned *out)
{
	unsigned f = 0;
	while (*s) {
		const char *e = strchr(s, ',');
		size_t n = e ? (size_t)(e - s) : strlen(s);
		size_t i;
		for (i = 0; i < sizeof(field_names) / sizeof(field_names[0]); i++)
			if (strlen(field_names[i].name) == n && !strncmp(field_names[i].name, s, n))
				break;
		if (i == sizeof(field_names) / sizeof(field_names[0]))
			return -1;
		f |= field_names[i].bit;
		s += n + (e ? 1 : 0);
	}
	*out = f;
	return f ? 0 : -1;
}

static const char *str(const struct ctx *c, uint32_t id)
{
	const char *s = id == PF_PROF_NONE ? NULL : pf_prof_str_get(c->prof, id, NULL);
	return s;
}

/* One frame's parts: its address, symbol name (NULL: unknown), offset in
 * the symbol (has_off), the DSO text. */
struct frame_text {
	uint64_t addr;
	const char *sym;
	int has_off;
	uint64_t off;
	char dso[4096];
};

/* `ret`: the frame is a caller's, looked up (pf_prof_builder) at its return
 * address minus one, which perf script prints as it is: add the one back. */
static void frame_text(struct ctx *c, const struct pf_prof_frame *f, int ret, struct frame_text *t)
{
	const char *dso = str(c, f->dso);
	/* perf script prints a DSO's frame at its offset in the file (the
	 * address in the mapping plus the mapping's file offset), the kernel's
	 * at its address: pfsym's file_off is both */
	t->addr = f->file_off;
	int adj = ret && !(f->flags & (PF_FRAME_UNKNOWN | PF_FRAME_TRUNCATED));
	t->addr += (uint64_t)adj;
	t->sym = str(c, f->name);
	t->has_off = 0;
	if ((f->flags & PF_FRAME_KERNEL) && !dso && !t->sym && c->word_size == 8 &&
	    f->file_off < (UINT64_C(1) << 63)) {
		/* a kernel-context word in the user half of a 64-bit address
		 * space (a frame-pointer walk through code without frame
		 * pointers read a stack word equal to PERF_CONTEXT_KERNEL): no
		 * kernel map holds it, and perf script prints its map as
		 * [unknown]. Which frames are the kernel's follows the
		 * callchain's context markers and the sample's cpumode (the
		 * builder's PF_FRAME_KERNEL); a 32-bit recording's kernel lies
		 * below 2^63 and its user stack words (32 bits) never read as
		 * a marker */
		snprintf(t->dso, sizeof t->dso, "[unknown]");
	} else if (f->flags & PF_FRAME_KERNEL) {
		snprintf(t->dso, sizeof t->dso, "%s", dso ? dso : "[kernel.kallsyms]");
		/* a named kernel frame with its offset, as perf script
		 * prints it (exc_page_fault+0xeb) */
		if (t->sym && c->offsets && (f->flags & PF_FRAME_HAS_SYMOFF)) {
			t->off = (uint32_t)(f->sym_off + (uint32_t)adj);
			t->has_off = 1;
		}
	} else if (f->flags & (PF_FRAME_UNKNOWN | PF_FRAME_TRUNCATED) || !dso) {
		snprintf(t->dso, sizeof t->dso, "[unknown]");
		t->sym = (f->flags & PF_FRAME_TRUNCATED) ? "[truncated]" : NULL;
	} else if (pf_dso_perf_anon(dso, strlen(dso))) {
		/* anonymous memory (a JIT's code): perf maps it one to one and
		 * names it /tmp/perf-PID.map, the file a JIT writes its
		 * symbols to; the builder keyed the frame by its address */
		snprintf(t->dso, sizeof t->dso, "/tmp/perf-%" PRId32 ".map", (int32_t)c->cur_pid);
		if (t->sym && c->offsets && (f->flags & PF_FRAME_HAS_SYMOFF)) {
			t->off = (uint32_t)(f->sym_off + (uint32_t)adj);
			t->has_off = 1;
		}
	} else if (!t->sym) {
		/* as perf script: the offset is ADDR, the DSO alone in
		 * parentheses (stackcollapse-perf.pl then folds an unnamed
		 * frame as [DSO], not one frame per address) */
		snprintf(t->dso, sizeof t->dso, "%s", dso);
	} else {
		snprintf(t->dso, sizeof t->dso, "%s", dso);
		if (c->offsets && (f->flags & PF_FRAME_HAS_SYMOFF)) {
			/* pfsym's offset is that of the byte it looked up,
			 * modulo 2^32: a return address at its function's
			 * first byte was looked up at offset -1 (0xffffffff:
			 * the kernel's __pfx_ padding, format/profile.md 3.1) */
			t->off = (uint32_t)(f->sym_off + (uint32_t)adj);
			t->has_off = 1;
		} else if (c->offsets) {
			c->old_offsets = 1;
		}
	}
}

/* One frame's text (a JSON object, or a "\t...\n" line) to `o`. */
static void write_frame(struct ctx *c, FILE *o, const struct pf_prof_frame *f, int ret, unsigned fl)
{
	struct frame_text t;
	frame_text(c, f, ret, &t);
	if (c->json) {
		const char *fs = "";
		putc('{', o);
		if (fl & F_IP) {
			fprintf(o, "\"ip\":\"0x%" PRIx64 "\"", t.addr);
			fs = ",";
		}
		if (fl & F_SYM) {
			fprintf(o, "%s\"sym\":", fs);
			const char *sym = t.sym ? t.sym : "[unknown]";
			pf_json_str(o, sym, strlen(sym), PF_JSON_BAD_FFFD);
			if (t.has_off)
				fprintf(o, ",\"symoff\":%" PRIu64, t.off);
			fs = ",";
		}
		if (fl & F_DSO) {
			fprintf(o, "%s\"dso\":", fs);
			pf_json_str(o, t.dso, strlen(t.dso), PF_JSON_BAD_FFFD);
		}
		putc('}', o);
		return;
	}
	putc('\t', o);
	if (fl & F_IP)
		fprintf(o, "%16" PRIx64, t.addr);
	if (fl & F_SYM) {
		fprintf(o, " %s", t.sym ? t.sym : "[unknown]");
		if (t.has_off)
			fprintf(o, "+0x%" PRIx64, t.off);
	}
	if (fl & F_DSO)
		fprintf(o, " (%s)", t.dso);
	putc('\n', o);
}

/* Room in the arena for n more bytes past its end. @return 0 or -ENOMEM. */
static int arena_room(struct ctx *c, size_t n)
{
	if (c->arena_len + n <= c->arena_cap)
		return 0;
	size_t cap = c->arena_cap ? 2 * c->arena_cap : (size_t)1 << 16;
	while (cap < c->arena_len + n)
		cap *= 2;
	char *na = realloc(c->arena, cap);
	if (!na)
		return -ENOMEM;
	c->arena = na;
	c->arena_cap = cap;
	return 0;
}

/* Writes frame `fid`'s text (as a caller: `ret`) at the arena's end, not
 * counted in it (the caller keeps it by adding t->len to arena_len, or
 * lets the next text overwrite it); *t says where. One memory stream for all
 * frames (a new one costs an 8 KiB calloc, most of pfscript's instructions
 * on many frames). @return 0 or -ENOMEM. */
static int frame_to_arena(struct ctx *c, uint32_t fid, int ret, unsigned fl, struct ftext *t)
{
	if (!c->mem && !(c->mem = open_memstream(&c->mem_buf, &c->mem_len)))
		return -ENOMEM;
	if (fseeko(c->mem, 0, SEEK_SET) != 0)
		return -ENOMEM;
	write_frame(c, c->mem, pf_prof_frame_get(c->prof, fid), ret, fl);
	if (fflush(c->mem) != 0 || c->mem_len == 0 || c->mem_len > UINT32_MAX - c->arena_len)
		return -ENOMEM;
	if (arena_room(c, c->mem_len) < 0)
		return -ENOMEM;
	memcpy(c->arena + c->arena_len, c->mem_buf, c->mem_len);
	t->off = (uint32_t)c->arena_len;
	t->len = (uint32_t)c->mem_len;
	return 0;
}

/* The text of frame `fid` (as a caller: `ret`), made once: frames repeat
 * in every sample that passes through them. NULL when out of memory. The
 * frame fields are the same for every sample (only cpu varies). The texts
 * lie one after the other in one arena: the frames of a stack are then
 * near each other, not in scattered heap blocks. */
static const struct ftext *frame_cached(struct ctx *c, uint32_t fid, int ret, unsigned fl)
{
	size_t i = 2 * (size_t)fid + (ret ? 1 : 0);
	if (c->fanon[fid]) {
		/* its text names the sample's pid: made each time, kept in
		 * the slot past the arena's end */
		static struct ftext once;
		return frame_to_arena(c, fid, ret, fl, &once) < 0 ? NULL : &once;
	}
	if (i >= c->n_fcache) {
		size_t n = 2 * (size_t)pf_prof_n_frames(c->prof);
		if (n <= i)
			n = i + 1;
		struct ftext *nc = realloc(c->fcache, n * sizeof(*nc));
		if (!nc)
			return NULL;
		memset(nc + c->n_fcache, 0, (n - c->n_fcache) * sizeof(*nc));
		c->fcache = nc;
		c->n_fcache = n;
	}
	if (!c->fcache[i].len) {
		if (frame_to_arena(c, fid, ret, fl, &c->fcache[i]) < 0)
			return NULL;
		c->arena_len += c->mem_len;
	}
	return &c->fcache[i];
}

/* Writes the text output to the output's fd (stdio holds nothing of it:
 * glibc's fwrite of a MiB would first copy a buffer's worth). A failure
 * sets c->werr; what comes after it is dropped. */
static void out_flush(struct ctx *c)
{
	if (c->olen && !c->werr) {
		if (fflush(c->out) != 0) /* nothing there in text mode, but keep the order */
			c->werr = errno ? errno : EIO;
		int rc = c->werr ? 0 : pf_out_write_all(fileno(c->out), c->obuf, c->olen);
		if (rc < 0)
			c->werr = -rc;
	}
	c->olen = 0;
}

/* Room for n more bytes of text output (n <= OBUF_SIZE); the pointer to
 * write them at. */
static inline char *out_room(struct ctx *c, size_t n)
{
	if (OBUF_SIZE - c->olen < n)
		out_flush(c);
	return c->obuf + c->olen;
}

static inline void out_put(struct ctx *c, const void *p, size_t n)
{
	if (n > OBUF_SIZE) {
		out_flush(c);
		int rc = c->werr ? 0 : pf_out_write_all(fileno(c->out), p, n);
		if (rc < 0)
			c->werr = -rc;
		return;
	}
	memcpy(out_room(c, n), p, n);
	c->olen += n;
}

/* Decimal `v` at p, right-aligned in `width` columns filled with `pad`, as
 * printf's %Nu and %0Nu. @return the end. p needs max(width, 20) bytes. */
static char *put_u64(char *p, uint64_t v, int width, char pad)
{
	static const char pairs[201] = "00010203040506070809101112131415161718192021222324"
				       "25262728293031323334353637383940414243444546474849"
				       "50515253545556575859606162636465666768697071727374"
				       "75767778798081828384858687888990919293949596979899";
	char d[20], *e = d + sizeof d, *q = e;
	while (v >= 100) {
		const char *two = pairs + 2 * (v % 100);
		v /= 100;
		*--q = two[1];
		*--q = two[0];
	}
	if (v >= 10) {
		*--q = pairs[2 * v + 1];
		*--q = pairs[2 * v];
	} else {
		*--q = (char)('0' + v);
	}
	for (int k = (int)(e - q); k < width; k++)
		*p++ = pad;
	memcpy(p, q, (size_t)(e - q));
	return p + (e - q);
}

/* As put_u64 with `%-Nu`: the number, then spaces up to `width` columns. */
static char *put_u64_left(char *p, uint64_t v, int width)
{
	char *s = p;
	p = put_u64(p, v, 0, ' ');
	while (p - s < width)
		*p++ = ' ';
	return p;
}

/* A pid or tid as perf script prints it (%5d, or %-5d when `left`): -1 is
 * a task perf knows no id of (tid -1 of an exiting task under -a). */
static char *put_id(char *p, uint32_t v, int width, int left)
{
	if (v != UINT32_MAX)
		return left ? put_u64_left(p, v, width) : put_u64(p, v, width, ' ');
	char *s = p;
	for (int k = 2; !left && k < width; k++)
		*p++ = ' ';
	*p++ = '-';
	*p++ = '1';
	while (left && p - s < width)
		*p++ = ' ';
	return p;
}

/* The sample line of perf script (tools/perf/builtin-script.c): the comm
 * unpadded before a callchain, else in 16 columns; pid/tid in 5; [cpu] in 3
 * digits; seconds.micro(nano)seconds; period in 10. Made by hand: printf
 * was a fifth of pfscript's time. */
static void write_head(struct ctx *c, const struct pf_prof_sample *s, unsigned fl, int chain,
		       const char *comm, const char *evname)
{
	char b[160], *p = b;
	if (fl & F_COMM) {
		size_t n = strlen(comm);
		for (size_t k = n; !chain && k < 16; k++)
			*p++ = ' ';
		out_put(c, b, (size_t)(p - b));
		out_put(c, comm, n);
		p = b;
		*p++ = ' ';
	}
	if ((fl & F_PID) && (fl & F_TID)) {
		p = put_id(p, s->pid, 5, 0);
		*p++ = '/';
		p = put_id(p, s->tid, 5, 1);
		*p++ = ' ';
	} else if (fl & (F_PID | F_TID)) {
		p = put_id(p, (fl & F_PID) ? s->pid : s->tid, 5, 0);
		*p++ = ' ';
	}
	if (fl & F_CPU) {
		*p++ = '[';
		p = put_u64(p, s->cpu, 3, '0');
		*p++ = ']';
		*p++ = ' ';
	}
	if (fl & F_TIME) {
		uint64_t sec = s->time / 1000000000u, nsec = s->time % 1000000000u;
		p = put_u64(p, sec, 5, ' ');
		*p++ = '.';
		p = c->ns ? put_u64(p, nsec, 9, '0') : put_u64(p, nsec / 1000, 6, '0');
		*p++ = ':';
		*p++ = ' ';
	}
	if (fl & F_PERIOD) {
		p = put_u64(p, s->period, 10, ' ');
		*p++ = ' ';
	}
	out_put(c, b, (size_t)(p - b));
	if (fl & F_EVENT) {
		size_t n = strlen(evname);
		for (size_t k = n; k < c->name_width; k++)
			out_put(c, " ", 1);
		out_put(c, evname, n);
		out_put(c, ": ", 2);
	}
	out_put(c, "\n", 1);
}

/* The width of the event names: perf script right-aligns each to the
 * longest name of the recording's events (evlist__max_name_len()). */
static const char *event_name(const struct pf_event *ev)
{
	return ev && ev->name[0] ? ev->name : "event";
}

static void update_name_width(struct ctx *c)
{
	uint32_t n = pf_events_count(c->evs);
	for (; c->name_width_n < n; c->name_width_n++) {
		size_t len = strlen(event_name(pf_events_get(c->evs, c->name_width_n)));
		if (len > c->name_width)
			c->name_width = len;
	}
}

/* The frames of leaf node `stack` (leaf first) to `o`, each text made once
 * (frame_cached()). Whole stacks are not cached: on a VM the page faults of
 * that memory cost more than the copying it saves. @return 0 or -ENOMEM. */
static int write_stack(struct ctx *c, FILE *o, uint32_t stack, unsigned fl, int dwarf)
{
	int prev = -1, first = 1;
	uint32_t n_stacks = pf_prof_n_stacks(c->prof), left = c->filt.max_stack;
	for (uint32_t st = stack; st != PF_PROF_NONE && st < n_stacks && left; left--) {
		const struct pf_prof_stack *node = pf_prof_stack_get(c->prof, st);
		uint32_t fid = node->frame;
		st = node->parent;
		/* perf script without --inline: an inlined function's frame
		 * (profile format 1.2) is part of its real function's line */
		if (pf_prof_frame_get(c->prof, fid)->flags & PF_FRAME_INLINE) {
			left++; /* not a frame of its own */
			continue;
		}
		int k = c->fkern[fid];
		/* the first frame of each part (kernel, user) is where the
		 * sample was taken or the kernel was entered; the others
		 * are return addresses, printed as such; but where perf
		 * unwound a stack copy (--call-graph dwarf), it prints a
		 * caller at the byte before its return address (its
		 * unwinders decrement a non-activation frame's pc, as
		 * dwfl_frame_pc() tells): the byte pfsym looked up */
		const struct ftext *t = frame_cached(c, fid, prev == k && !(dwarf && !k), fl);
		if (!t)
			return -ENOMEM;
		prev = k;
		if (c->json) {
			if (!first)
				putc(',', o);
			fwrite(c->arena + t->off, 1, t->len, o);
		} else {
			out_put(c, c->arena + t->off, t->len);
		}
		first = 0;
	}
	return 0;
}

static int print_sample(struct ctx *c, const struct pf_prof_sample *s)
{
	FILE *o = c->out;
	int rc;
	const struct pf_event *ev = s->event < pf_events_count(c->evs) ? pf_events_get(c->evs, s->event) : NULL;
	unsigned fl = c->fields;
	if (!c->fields_given && ev && (ev->attr.sample_type & PERF_SAMPLE_CPU))
		fl |= F_CPU;
	int dwarf = ev && (ev->attr.sample_type & PERF_SAMPLE_STACK_USER);
	c->cur_pid = s->pid;
	const char *comm = str(c, s->comm);
	char tidname[16];
	if (!comm) {
		/* a thread without a COMM: perf names it ":TID" (thread__new()) */
		snprintf(tidname, sizeof tidname, ":%" PRId32, (int32_t)s->tid);
		comm = tidname;
	}
	/* tid -1 (a task exiting under -a): perf finds no thread and prints
	 * the comm of thread -1 */
	if (s->tid == UINT32_MAX)
		comm = ":-1";
	const char *evname = event_name(ev);
	update_name_width(c);
	if (c->json) {
		const char *sep = "{";
#define SEP() (fputs(sep, o), sep = ",")
		if (fl & F_COMM) { SEP(); fputs("\"comm\":", o); pf_json_str(o, comm, strlen(comm), PF_JSON_BAD_FFFD); }
		if (fl & F_PID) { SEP(); fprintf(o, "\"pid\":%" PRIu32, s->pid); }
		if (fl & F_TID) { SEP(); fprintf(o, "\"tid\":%" PRIu32, s->tid); }
		if (fl & F_CPU) { SEP(); fprintf(o, "\"cpu\":%" PRIu32, s->cpu); }
		if (fl & F_TIME) { SEP(); fprintf(o, "\"time\":%" PRIu64, s->time); }
		if (fl & F_PERIOD) { SEP(); fprintf(o, "\"period\":%" PRIu64, s->period); }
		if (fl & F_EVENT) { SEP(); fputs("\"event\":", o); pf_json_str(o, evname, strlen(evname), PF_JSON_BAD_FFFD); }
		if (fl & (F_IP | F_SYM | F_DSO)) {
			SEP();
			fputs("\"frames\":[", o);
			if ((rc = write_stack(c, o, s->stack, fl, dwarf)) < 0)
				return rc;
			putc(']', o);
		}
		if (sep[0] == '{')
			putc('{', o);
		fputs("}\n", o);
#undef SEP
	} else {
		int chain = (fl & (F_IP | F_SYM | F_DSO)) != 0;
		write_head(c, s, fl, chain, comm, evname);
		if (chain) {
			if ((rc = write_stack(c, o, s->stack, fl, dwarf)) < 0)
				return rc;
			out_put(c, "\n", 1);
		}
	}
	c->printed++;
	if (c->werr)
		return -c->werr;
	if (ferror(o)) {
		c->werr = pf_out_flush(o);
		return -(c->werr ? c->werr : EIO);
	}
	return 0;
}

/* Memory for many samples: in 2 MiB-aligned whole huge pages, which the
 * kernel may back with transparent huge pages (madvise mode is the default):
 * filling 40 bytes per sample is otherwise one page fault per 100 samples,
 * and on a virtual machine those faults were a third of pfscript's time.
 * @return the memory (free() it) or NULL. */
static void *big_alloc(size_t bytes)
{
	size_t huge = (size_t)2 << 20, size = (bytes + huge - 1) / huge * huge;
	void *p = aligned_alloc(huge, size ? size : huge);
#ifdef MADV_HUGEPAGE
	if (p)
		madvise(p, size, MADV_HUGEPAGE); /* advice only: its failure changes nothing */
#endif
	return p;
}

/* 4 MiB of samples per block */
#define KEEP_BLOCK ((size_t)(4u << 20) / sizeof(struct pf_prof_sample))

static const struct pf_prof_sample *kept(const struct ctx *c, size_t i)
{
	return &c->keep[i / KEEP_BLOCK][i % KEEP_BLOCK];
}

/* Samples are kept (40 bytes each) and printed in time order at the end, as
 * perf script orders them: a recording holds each CPU's samples in runs. */
static int on_sample(void *arg, const struct pf_prof_sample *s)
{
	struct ctx *c = arg;
	if (s->flags & PF_SAMPLE_LOST) {
		c->lost += s->period;
		return 0;
	}
	if (c->n_keep == c->n_blocks * KEEP_BLOCK) {
		struct pf_prof_sample **nb = realloc(c->keep, (c->n_blocks + 1) * sizeof(*nb));
		if (!nb)
			return -ENOMEM;
		c->keep = nb;
		if (!(c->keep[c->n_blocks] = big_alloc(KEEP_BLOCK * sizeof(**nb))))
			return -ENOMEM;
		c->n_blocks++;
	}
	c->keep[c->n_keep / KEEP_BLOCK][c->n_keep % KEEP_BLOCK] = *s;
	c->n_keep++;
	return 0;
}

/* The time order of the samples, as perf script prints them: samples of
 * one time in file order. The kept samples are runs already in time order
 * (one per CPU and flush of the recorder's buffers: 1,848 runs in 1.2 M
 * samples of a system-wide recording), so they are merged with a binary heap
 * of the runs' next samples, keyed (time, index): each sample is read once,
 * in the order of its run, and nothing of the size of the samples is
 * allocated (a merge sort of keys, with its arrays' page clearing, took
 * twice as long; qsort over indexes a tenth of pfscript's time). */
struct head {
	uint64_t time;
	size_t pos; /* index of the run's next sample */
	size_t end; /* one past the run's last */
};

static int head_less(const struct head *a, const struct head *b)
{
	return a->time < b->time || (a->time == b->time && a->pos < b->pos);
}

static void heap_down(struct head *h, size_t n, size_t i)
{
	struct head x = h[i];
	for (;;) {
		size_t l = 2 * i + 1;
		if (l >= n)
			break;
		if (l + 1 < n && head_less(&h[l + 1], &h[l]))
			l++;
		if (!head_less(&h[l], &x))
			break;
		h[i] = h[l];
		i = l;
	}
	h[i] = x;
}

/* The heap of the runs of kept samples 0..n: *out, its size. @return 0 or
 * -ENOMEM. */
static int runs_heap(const struct ctx *c, size_t n, struct head **out, size_t *n_out)
{
	struct head *h = NULL;
	size_t nh = 0, cap = 0;
	uint64_t last = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t t = kept(c, i)->time;
		if (i > 0 && t >= last) {
			last = t;
			continue;
		}
		if (nh == cap) {
			struct head *nx = realloc(h, (cap = cap ? 2 * cap : 64) * sizeof(*h));
			if (!nx) {
				free(h);
				return -ENOMEM;
			}
			h = nx;
		}
		if (nh)
			h[nh - 1].end = i;
		h[nh].time = t;
		h[nh].pos = i;
		h[nh].end = n;
		nh++;
		last = t;
	}
	for (size_t i = nh / 2; i-- > 0;)
		heap_down(h, nh, i);
	*out = h;
	*n_out = nh;
	return 0;
}

/* Is `s` (n bytes) one of the comma-separated entries of `list`? */
static int in_list(const char *list, const char *s, size_t n)
{
	for (const char *p = list; *p;) {
		const char *e = strchr(p, ',');
		size_t k = e ? (size_t)(e - p) : strlen(p);
		if (k == n && !memcmp(p, s, n))
			return 1;
		if (!e)
			break;
		p = e + 1;
	}
	return 0;
}

static int in_num_list(const char *list, uint32_t v)
{
	char b[16];
	int n = snprintf(b, sizeof b, "%" PRIu32, v);
	return in_list(list, b, (size_t)n);
}

/* The name of the function sample s was taken in (its leaf's real
 * function, as perf script -S matches it), or NULL. */
static const char *leaf_name(const struct ctx *c, const struct pf_prof_sample *s)
{
	uint32_t n_stacks = pf_prof_n_stacks(c->prof);
	for (uint32_t st = s->stack; st != PF_PROF_NONE && st < n_stacks;) {
		const struct pf_prof_stack *node = pf_prof_stack_get(c->prof, st);
		const struct pf_prof_frame *f = pf_prof_frame_get(c->prof, node->frame);
		if (!(f->flags & PF_FRAME_INLINE))
			return str(c, f->name);
		st = node->parent;
	}
	return NULL;
}

/* Does sample s pass the filters of perf script's options? */
static int keep_sample(const struct ctx *c, const struct pf_prof_sample *s)
{
	const struct filter *f = &c->filt;
	if (f->has_time && (s->time < f->t_start || (f->t_stop && s->time > f->t_stop)))
		return 0;
	if (f->pids && !in_num_list(f->pids, s->pid))
		return 0;
	if (f->tids && !in_num_list(f->tids, s->tid))
		return 0;
	if (f->cpus && (s->cpu >= PF_MAX_CPUS || !(f->cpus[s->cpu / 8] & (1u << (s->cpu % 8)))))
		return 0;
	if (f->comms) {
		const char *comm = str(c, s->comm);
		if (!comm || !in_list(f->comms, comm, strlen(comm)))
			return 0;
	}
	if (f->syms) {
		const char *sym = leaf_name(c, s);
		if (!sym || !in_list(f->syms, sym, strlen(sym)))
			return 0;
	}
	return 1;
}

static int print_all(struct ctx *c)
{
	size_t n_frames = pf_prof_n_frames(c->prof);
	if (!(c->fkern = malloc(n_frames ? n_frames : 1)))
		return -ENOMEM;
	if (!(c->fanon = calloc(n_frames ? n_frames : 1, 1)))
		return -ENOMEM;
	for (size_t f = 0; f < n_frames; f++) {
		const struct pf_prof_frame *fr = pf_prof_frame_get(c->prof, (uint32_t)f);
		c->fkern[f] = (fr->flags & PF_FRAME_KERNEL) != 0;
		const char *d = c->fkern[f] ? NULL : str(c, fr->dso);
		c->fanon[f] = d && !(fr->flags & (PF_FRAME_UNKNOWN | PF_FRAME_TRUNCATED)) && pf_dso_perf_anon(d, strlen(d));
	}
	if (!c->json && !c->obuf && !(c->obuf = malloc(OBUF_SIZE)))
		return -ENOMEM;
	struct head *h = NULL;
	size_t nh = 0;
	int rc = runs_heap(c, c->n_keep, &h, &nh);
	while (rc == 0 && nh > 0) {
		const struct pf_prof_sample *s = kept(c, h[0].pos);
		if (++h[0].pos < h[0].end)
			h[0].time = kept(c, h[0].pos)->time;
		else
			h[0] = h[--nh];
		heap_down(h, nh, 0);
		if (c->event) {
			const struct pf_event *ev = s->event < pf_events_count(c->evs) ? pf_events_get(c->evs, s->event) : NULL;
			if (!ev || strcmp(ev->name, c->event))
				continue;
		}
		if (!keep_sample(c, s))
			continue;
		rc = print_sample(c, s);
	}
	out_flush(c);
	if (rc == 0 && c->werr)
		rc = -c->werr;
	if (rc == 0 && ferror(c->out)) {
		c->werr = pf_out_flush(c->out);
		rc = -(c->werr ? c->werr : EIO);
	}
	free(h);
	return rc;
}

/* -e: the file has an event of that name (pffold's rule: the EVENT's name,
 * which pfrec sets to the event as typed). */
static int event_named(const struct ctx *c)
{
	for (size_t i = 0; i < pf_events_count(c->evs); i++)
		if (!strcmp(pf_events_get(c->evs, i)->name, c->event))
			return 1;
	return 0;
}

/* -F cpu: the name of an event (-e's, or any) whose samples hold no CPU
 * (PERF_SAMPLE_CPU not in its sample_type), as perf script refuses the
 * field for it; NULL if none. */
static const char *event_without_cpu(const struct ctx *c)
{
	for (size_t i = 0; i < pf_events_count(c->evs); i++) {
		const struct pf_event *ev = pf_events_get(c->evs, i);
		if (c->event && strcmp(ev->name, c->event))
			continue;
		if (!(ev->attr.sample_type & PERF_SAMPLE_CPU))
			return ev->name;
	}
	return NULL;
}

/* A resolved file: the payloads pfscript reads (the reader skips the
 * decompression of the others, the raw records above all). */
static int want_resolved(void *arg, uint16_t type)
{
	(void)arg;
	return type == PF_SEC_STRINGS || type == PF_SEC_FRAMES || type == PF_SEC_STACKS ||
	       type == PF_SEC_SAMPLES || type == PF_SEC_SYMINFO || type == PF_SEC_EVENT;
}

static int run(struct ctx *c, int *damaged)
{
	pf_reader *r = NULL;
	int rc = pf_reader_open(&r, c->in);
	if (rc < 0) {
		/* the reader is set on most errors, for its message: closed too */
		const char *m = r ? pf_reader_errmsg(r) : NULL;
		pf_cli_lib_error(PROG, m, strcmp(c->in, "-") ? c->in : "<stdin>", rc);
		pf_reader_close(r);
		return 1;
	}
	c->opened = 1;
	c->word_size = pf_reader_header(r)->word_size;
	pf_reader_set_stop_at_end(r, 1); /* another file appended is not read */
	pf_prof_builder *b = NULL;
	int resolved = -1; /* unknown until SYMINFO or RECORDS comes */
	char msg[512];
	struct pf_section sec;
	for (;;) {
		rc = pf_reader_next(r, &sec);
		if (rc == 0)
			break;
		if (rc < 0) {
			fprintf(stderr, PROG ": %s\n", pf_reader_errmsg(r));
			*damaged = 1;
			if (!pf_reader_can_continue(r))
				break;
			continue;
		}
		if (sec.type == PF_SEC_EVENT) {
			if ((rc = pf_events_add(c->evs, &sec)) < 0)
				goto bad;
		}
		if (resolved < 0 && sec.type == PF_SEC_SYMINFO) {
			resolved = 1;
			pf_reader_set_want(r, want_resolved, NULL);
		}
		if (resolved < 0 && sec.type == PF_SEC_RECORDS) {
			resolved = 0;
			struct pf_prof_builder_opts bo = { 0 };
			bo.sz = sizeof bo;
			bo.on_sample = on_sample;
			bo.sample_ctx = c;
			if ((rc = pf_prof_builder_new(&b, c->prof, &bo)) < 0)
				goto bad;
			/* the sections before it: EVENT, META, MAPS, THREADS, BUILDID
			 * were read already; the builder needs them: reread */
			pf_reader_close(r);
			if (strcmp(c->in, "-") == 0) {
				fprintf(stderr, PROG ": <stdin>: not symbolized (no SYMINFO before the records): "
						"run pfsym first, or give the file by name\n");
				pf_prof_builder_free(b);
				return 1;
			}
			pf_events_delete(c->evs);
			c->name_width = c->name_width_n = 0;
			if ((rc = pf_events_new(&c->evs)) < 0) {
				c->evs = NULL;
				pf_prof_builder_free(b);
				fprintf(stderr, PROG ": %s\n", strerror(-rc));
				return 1;
			}
			if ((rc = pf_reader_open(&r, c->in)) < 0) {
				const char *m = r ? pf_reader_errmsg(r) : NULL;
				pf_cli_lib_error(PROG, m, c->in, rc);
				pf_reader_close(r);
				pf_prof_builder_free(b);
				return 1;
			}
			pf_reader_set_stop_at_end(r, 1);
			continue;
		}
		if (resolved == 1) {
			if (sec.type == PF_SEC_STRINGS || sec.type == PF_SEC_FRAMES || sec.type == PF_SEC_STACKS) {
				if ((rc = pf_prof_load_section(c->prof, &sec, msg, sizeof msg)) < 0) {
					fprintf(stderr, PROG ": %s: %s\n", c->in, msg);
					*damaged = 1;
				}
			} else if (sec.type == PF_SEC_SAMPLES) {
				size_t pos = 0;
				struct pf_prof_sample s;
				while ((rc = pf_prof_samples_next(sec.data, sec.raw_size, &pos, &s)) > 0) {
					if (s.stack != PF_PROF_NONE && s.stack >= pf_prof_n_stacks(c->prof)) {
						fprintf(stderr, PROG ": %s: section %" PRIu64 " at offset %" PRIu64
								": a sample refers to stack %" PRIu32 ", not defined: damaged\n",
							c->in, sec.index, sec.offset, s.stack);
						*damaged = 1;
						break;
					}
					if ((rc = on_sample(c, &s)) < 0)
						goto bad;
				}
				if (rc < 0) {
					fprintf(stderr, PROG ": %s: section %" PRIu64 " at offset %" PRIu64
							": SAMPLES damaged\n", c->in, sec.index, sec.offset);
					*damaged = 1;
				}
			}
		} else if (b) {
			rc = pf_prof_builder_section(b, &sec);
			if (rc == -EBADMSG) {
				fprintf(stderr, PROG ": %s\n", pf_prof_builder_errmsg(b));
				*damaged = 1;
			} else if (rc < 0) {
				goto bad;
			}
		}
	}
	if (b && (rc = pf_prof_builder_finish(b)) < 0 && rc != -EBADMSG)
		goto bad;
	uint64_t bad_samples = b ? pf_prof_builder_stats(b)->bad_samples : 0;
	if (bad_samples) {
		fprintf(stderr, PROG ": %s: %" PRIu64 " SAMPLE records whose fields run past their size (damaged): "
				"left out\n", strcmp(c->in, "-") ? c->in : "<stdin>", bad_samples);
		*damaged = 1;
	}
	/* how much of an input that was not whole was used, once (format/
	 * pfile.md 5.4): libpfile words it */
	char note[600];
	if (pf_input_note(strcmp(c->in, "-") ? c->in : "<stdin>", pf_reader_complete(r),
			  *damaged || pf_reader_errors(r), c->n_keep, pf_reader_samples_claimed(r), note,
			  sizeof note) > 0)
		fprintf(stderr, PROG ": %s\n", note);
	if (c->event && !event_named(c)) {
		fprintf(stderr, PROG ": %s: no event named '%s' (its events: ", strcmp(c->in, "-") ? c->in : "<stdin>",
			c->event);
		size_t n = pf_events_count(c->evs);
		for (size_t i = 0; i < n; i++) {
			const char *nm = pf_events_get(c->evs, i)->name;
			size_t j;
			for (j = 0; j < i && strcmp(pf_events_get(c->evs, j)->name, nm); j++)
				;
			if (j == i) {
				fputs(i ? ", " : "", stderr);
				pf_text_write(stderr, nm);
			}
		}
		fputs(n ? ")\n" : "none)\n", stderr);
		c->opened = 0; /* the error is the one line: no summary */
		pf_prof_builder_free(b);
		pf_reader_close(r);
		return 1;
	}
	const char *nocpu = (c->fields & F_CPU) || c->filt.cpus ? event_without_cpu(c) : NULL;
	if (nocpu) {
		fprintf(stderr, PROG ": %s: event '%s' did not record the CPU (no PERF_SAMPLE_CPU, as perf record "
				"of a command leaves it): %s\n",
			strcmp(c->in, "-") ? c->in : "<stdin>", nocpu,
			(c->fields & F_CPU) ? "no 'cpu' field; leave it out of -F" : "no -C filter");
		c->opened = 0;
		pf_prof_builder_free(b);
		pf_reader_close(r);
		return 1;
	}
	if ((rc = print_all(c)) < 0)
		goto bad;
	pf_prof_builder_free(b);
	pf_reader_close(r);
	return 0;
bad:
	if (c->werr)
		pf_out_error(PROG, "-", c->werr);
	else if (b && pf_prof_builder_errmsg(b) && *pf_prof_builder_errmsg(b))
		fprintf(stderr, PROG ": %s\n", pf_prof_builder_errmsg(b));
	else
		fprintf(stderr, PROG ": %s: %s\n", c->in, strerror(-rc));
	pf_prof_builder_free(b);
	pf_reader_close(r);
	return 1;
}

static int num_list_ok(const char *s)
{
	if (!*s)
		return 0;
	for (const char *p = s; *p; p++)
		if (!((*p >= '0' && *p <= '9') || (*p == ',' && p != s && p[1] && p[-1] != ',')))
			return 0;
	return 1;
}

/* -C: "0,2-3" into a bitmap of PF_MAX_CPUS bits. @return 0 or -1. */
static int parse_cpus(const char *s, uint8_t *bits)
{
	const char *p = s;
	do {
		char *e;
		if (*p < '0' || *p > '9')
			return -1;
		unsigned long a = strtoul(p, &e, 10), b = a;
		if (*e == '-') {
			p = e + 1;
			if (*p < '0' || *p > '9')
				return -1;
			b = strtoul(p, &e, 10);
		}
		if (a > b || b >= PF_MAX_CPUS || (*e && *e != ','))
			return -1;
		for (unsigned long k = a; k <= b; k++)
			bits[k / 8] |= (uint8_t)(1u << (k % 8));
		p = *e ? e + 1 : e;
	} while (*p);
	return 0;
}

/* One time of --time: seconds with up to 9 decimals, into ns. @return 0 or -1. */
static int parse_secs(const char *s, size_t n, uint64_t *ns)
{
	uint64_t sec = 0, frac = 0;
	size_t i = 0, digits = 0;
	for (; i < n && s[i] >= '0' && s[i] <= '9'; i++, digits++) {
		if (sec > (UINT64_MAX / 1000000000u - 9) / 10)
			return -1;
		sec = sec * 10 + (uint64_t)(s[i] - '0');
	}
	if (i < n && s[i] == '.') {
		uint64_t scale = 100000000u;
		for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++, digits++) {
			frac += (uint64_t)(s[i] - '0') * scale;
			scale /= 10;
			if (!scale && i + 1 < n && s[i + 1] >= '0' && s[i + 1] <= '9')
				return -1; /* more than 9 decimals */
		}
	}
	if (i != n || !digits)
		return -1;
	*ns = sec * 1000000000u + frac;
	return 0;
}

/* --time START,STOP (perf script's, in seconds of the perf clock as the
 * time field prints them; either may be empty). @return 0 or -1. */
static int parse_time_range(const char *s, struct filter *f)
{
	const char *comma = strchr(s, ',');
	if (!comma)
		return -1;
	f->t_start = f->t_stop = 0;
	if (comma > s && parse_secs(s, (size_t)(comma - s), &f->t_start) < 0)
		return -1;
	if (comma[1] && parse_secs(comma + 1, strlen(comma + 1), &f->t_stop) < 0)
		return -1;
	if (f->t_stop && f->t_stop < f->t_start)
		return -1;
	f->has_time = 1;
	return 0;
}

int main(int argc, char **argv)
{
	enum { O_NOOFF = 256, O_NS, O_COMM, O_PID, O_TID, O_TIME, O_MAXSTACK };
	static const struct option longopts[] = {
		{ "event", required_argument, NULL, 'e' },
		{ "comm", required_argument, NULL, O_COMM },
		{ "pid", required_argument, NULL, O_PID },
		{ "tid", required_argument, NULL, O_TID },
		{ "cpu", required_argument, NULL, 'C' },
		{ "time", required_argument, NULL, O_TIME },
		{ "symbols", required_argument, NULL, 'S' },
		{ "max-stack", required_argument, NULL, O_MAXSTACK },
		{ "output", required_argument, NULL, 'o' },
		{ "fields", required_argument, NULL, 'F' },
		{ "no-offsets", no_argument, NULL, O_NOOFF },
		{ "ns", no_argument, NULL, O_NS },
		{ "json", no_argument, NULL, 'j' },
		{ "quiet", no_argument, NULL, 'q' },
		PF_CLI_STD_LONGOPTS,
	};
	struct ctx c;
	memset(&c, 0, sizeof c);
	c.fields = F_DEFAULT;
	c.offsets = 1;
	c.in = "-";
	const char *out = "-";
	int quiet = 0, opt;
	pf_out_ignore_sigpipe();
	c.filt.max_stack = UINT32_MAX;
	static uint8_t cpus[PF_MAX_CPUS / 8];
	while ((opt = getopt_long(argc, argv, "e:o:F:C:S:jqhV", longopts, NULL)) != -1) {
		switch (opt) {
		case 'e':
			c.event = optarg;
			break;
		case O_COMM:
			c.filt.comms = optarg;
			break;
		case O_PID:
		case O_TID:
			if (!num_list_ok(optarg))
				return pf_cli_usage(PROG, "--%s: '%s' is not a comma-separated list of numbers",
						    opt == O_PID ? "pid" : "tid", optarg);
			*(opt == O_PID ? &c.filt.pids : &c.filt.tids) = optarg;
			break;
		case 'C':
			if (parse_cpus(optarg, cpus) < 0)
				return pf_cli_usage(PROG, "--cpu: '%s' is not a list of CPUs (0,2-3) under %d", optarg,
						    PF_MAX_CPUS);
			c.filt.cpus = cpus;
			break;
		case O_TIME:
			if (parse_time_range(optarg, &c.filt) < 0)
				return pf_cli_usage(PROG, "--time: '%s' is not START,STOP in seconds (either may be empty)",
						    optarg);
			break;
		case 'S':
			c.filt.syms = optarg;
			break;
		case O_MAXSTACK: {
			char *e;
			errno = 0;
			unsigned long v = strtoul(optarg, &e, 10);
			if (errno || e == optarg || *e || optarg[0] == '-' || v > UINT32_MAX)
				return pf_cli_usage(PROG, "--max-stack: '%s' is not a number of frames", optarg);
			c.filt.max_stack = (uint32_t)v;
			break;
		}
		case 'o':
			out = optarg;
			break;
		case 'F':
			if (parse_fields(optarg, &c.fields) < 0) {
				fprintf(stderr, PROG ": --fields: '%s' is not a list of comm, pid, tid, cpu, time, "
						"period, event, ip, sym, symoff, dso\n", optarg);
				return 2;
			}
			c.fields_given = 1;
			break;
		case O_NOOFF:
			c.offsets = 0;
			break;
		case O_NS:
			c.ns = 1;
			break;
		case 'j':
			c.json = 1;
			break;
		case 'q':
			quiet = 1;
			break;
		default:
			return pf_cli_std_opt(PROG, opt, usage);
		}
	}
	if (pf_cli_one_input(PROG, argc, argv, optind, &c.in))
		return PF_EXIT_USAGE;
	/* perf script prints sym+0xOFF with symoff only (its default has it) */
	if (!(c.fields & F_SYMOFF))
		c.offsets = 0;
	c.out = stdout;
	if (strcmp(out, "-") != 0 && !(c.out = fopen(out, "w"))) {
		fprintf(stderr, PROG ": %s: %s\n", out, strerror(errno));
		return 1;
	}
	/* one large buffer (glibc ignores the size without one), no locking:
	 * the frames are many short writes */
	static char outbuf[256u << 10];
	setvbuf(c.out, outbuf, _IOFBF, sizeof outbuf);
	__fsetlocking(c.out, FSETLOCKING_BYCALLER);
	if (pf_prof_new(&c.prof) < 0 || pf_events_new(&c.evs) < 0) {
		fprintf(stderr, PROG ": %s\n", strerror(ENOMEM));
		return 1;
	}
	int damaged = 0;
	int status = run(&c, &damaged);
	if (damaged)
		status = 1;
	int e = c.werr ? 0 : pf_out_flush(c.out);
	if (c.out != stdout && fclose(c.out) != 0 && !e && !c.werr)
		e = errno;
	if (e) {
		pf_out_error(PROG, out, e);
		status = 1;
	}
	if (c.old_offsets && !c.werr && !e)
		fprintf(stderr, PROG ": %s: symbolized by a pfsym older than profile format 1.1: frames "
				"without +0xOFF (run pfsym again for offsets)\n",
			strcmp(c.in, "-") ? c.in : "<stdin>");
	if (!quiet && !c.werr && !e && c.opened)
		fprintf(stderr, PROG ": %s: %" PRIu64 " samples, %" PRIu64 " lost\n",
			strcmp(c.in, "-") ? c.in : "<stdin>", c.printed, c.lost);
	for (size_t i = 0; i < c.n_blocks; i++)
		free(c.keep[i]);
	free(c.keep);
	free(c.arena);
	free(c.fkern);
	free(c.fanon);
	free(c.obuf);
	if (c.mem)
		fclose(c.mem);
	free(c.mem_buf);
	free(c.fcache);
	pf_events_delete(c.evs);
	pf_prof_delete(c.prof);
	return status;
}
