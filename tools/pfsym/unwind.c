/*
 * pfsym/unwind.c - DWARF unwinding of the user stacks of `pfrec --call-graph
 * dwarf` samples with libdwfl (elfutils).
 *
 * One Dwfl per process, attached once (dwfl_attach_state can be called only
 * once per Dwfl); the sample being unwound is handed to the callbacks through
 * the unwinder (u->c), set before each dwfl_getthread_frames(). Modules are
 * reported as the unwinder meets their addresses: the leaf's first, then,
 * when a frame's PC lies in no module yet, the mapping that holds it at the
 * sample's time (dwfl_report_begin_add) and the sample is unwound again.
 * The ELF files are those the symbolizer found (build-id checked); the
 * [vdso] is the recorded image, handed to libdwfl through a memfd.
 *
 * Registers: perf's sample_regs_user order (arch/x86/include/uapi/asm/perf_regs.h,
 * arch/arm64/include/uapi/asm/perf_regs.h, arch/arm/...) mapped to the DWARF
 * numbering of the psABI of the recorded machine (the file header's
 * e_machine, never the host's). Memory: the stack copy, [sp, sp + dyn_size),
 * else the read-only PT_LOAD segments of the module's ELF file.
 *
 * aarch64 pointer authentication: return addresses may carry a PAC in the
 * bits above the user virtual-address size. elfutils 0.188 does not strip
 * it, so on aarch64 every word read (and lr/pc) is masked to va_bits (META
 * `va_bits`, 48 if absent). Only sp/x29 matter for locating frames and they
 * never carry a PAC, so masking the other saved registers is harmless.
 *
 * Where CFI unwinding stops early (no CFI, binary missing, unreadable
 * memory), a frame-pointer walk over the stack copy continues from the last
 * frame's fp register if it finds a chain of return addresses that lie in
 * mappings. Each sample's stop reason is counted for the summary.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <dwarf.h>
#include <elfutils/libdwfl.h>

#include "pfsym-unwind.h"

/* libdw is loaded (dlopen) on the first sample with a stack copy: recordings
 * with frame pointers never need it, and a link-time dependency made every
 * run of pfsym load it and its compression libraries (about 0.2 ms of the
 * 7 ms of `pfsym < run.pf | pffold` on the demo). Static builds
 * (STATIC=1) link it. */
#ifdef PF_DW_DLOPEN
#include <dlfcn.h>
#include <stdio.h>

#define DW_FUNCS(X) \
	X(dwarf_cfi_addrframe) \
	X(dwarf_frame_cfa) \
	X(dwarf_frame_info) \
	X(dwarf_frame_register) \
	X(dwfl_addrmodule) \
	X(dwfl_attach_state) \
	X(dwfl_begin) \
	X(dwfl_end) \
	X(dwfl_frame_pc) \
	X(dwfl_frame_reg) \
	X(dwfl_getthread_frames) \
	X(dwfl_module_dwarf_cfi) \
	X(dwfl_module_eh_cfi) \
	X(dwfl_module_getelf) \
	X(dwfl_module_info) \
	X(dwfl_offline_section_address) \
	X(dwfl_pid) \
	X(dwfl_report_begin_add) \
	X(dwfl_report_elf) \
	X(dwfl_report_end) \
	X(dwfl_thread_getframes) \
	X(dwfl_thread_state_register_pc) \
	X(dwfl_thread_state_registers)

#define DW_PTR(f) static __typeof__(f) *p_##f;
DW_FUNCS(DW_PTR)
#undef DW_PTR

/* 1 once libdw's functions are there; 0 (after one message) if not. */
static int dw_load(void)
{
	static int state; /* 0 not tried, 1 loaded, -1 failed */
	if (state)
		return state > 0;
	state = -1;
	/* PFSYM_LIBDW: another file (tests; a libdw outside the search path) */
	const char *lib = getenv("PFSYM_LIBDW");
	if (!lib || !*lib)
		lib = "libdw.so.1";
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "pfsym: cannot load libdw (%s): samples with stack copies are not unwound\n", dlerror());
		return 0;
	}
#define DW_SYM(f)                                                                                  \
	if (!(p_##f = (__typeof__(p_##f))dlsym(h, #f))) {                                          \
		fprintf(stderr, "pfsym: %s: no %s: samples with stack copies are not unwound\n", lib, #f); \
		return 0;                                                                          \
	}
	DW_FUNCS(DW_SYM)
#undef DW_SYM
	state = 1;
	return 1;
}

#define dwarf_cfi_addrframe (*p_dwarf_cfi_addrframe)
#define dwarf_frame_cfa (*p_dwarf_frame_cfa)
#define dwarf_frame_info (*p_dwarf_frame_info)
#define dwarf_frame_register (*p_dwarf_frame_register)
#define dwfl_addrmodule (*p_dwfl_addrmodule)
#define dwfl_attach_state (*p_dwfl_attach_state)
#define dwfl_begin (*p_dwfl_begin)
#define dwfl_end (*p_dwfl_end)
#define dwfl_frame_pc (*p_dwfl_frame_pc)
#define dwfl_frame_reg (*p_dwfl_frame_reg)
#define dwfl_getthread_frames (*p_dwfl_getthread_frames)
#define dwfl_module_dwarf_cfi (*p_dwfl_module_dwarf_cfi)
#define dwfl_module_eh_cfi (*p_dwfl_module_eh_cfi)
#define dwfl_module_getelf (*p_dwfl_module_getelf)
#define dwfl_module_info (*p_dwfl_module_info)
#define dwfl_offline_section_address (*p_dwfl_offline_section_address)
#define dwfl_pid (*p_dwfl_pid)
#define dwfl_report_begin_add (*p_dwfl_report_begin_add)
#define dwfl_report_elf (*p_dwfl_report_elf)
#define dwfl_report_end (*p_dwfl_report_end)
#define dwfl_thread_getframes (*p_dwfl_thread_getframes)
#define dwfl_thread_state_register_pc (*p_dwfl_thread_state_register_pc)
#define dwfl_thread_state_registers (*p_dwfl_thread_state_registers)
#else
static int dw_load(void)
{
	return 1;
}
#endif

/* Frames per sample at most: the builder asks for its 1024 plus one, and
 * marks a stack that fills them ([truncated] root, profile.h) */
#define DEPTH_MAX 1025
#define RETRIES_MAX 16
/* an address this far above sp is taken for stack the copy did not hold */
#define STACK_GUESS_BYTES (64ull << 20)

enum stop {
	STOP_END,          /* reached the outermost frame (CFI says so, or pc 0) */
	STOP_NO_CFI,       /* a frame's PC has no CFI in its binary */
	STOP_SHORT,        /* a read above the stack copy: raise the stack size */
	STOP_UNREADABLE,   /* a read neither in the stack copy nor in a binary */
	STOP_UNKNOWN,      /* a PC in no mapping */
	STOP_NO_FILE,      /* a PC in a mapping whose binary was not found */
	STOP_PAC,          /* a PC with bits above va_bits left (aarch64) */
	STOP_MAX_DEPTH,    /* the builder's maximum of frames (DEPTH_MAX) */
	STOP_NO_REGS,      /* registers missing or machine not supported */
	STOP_OTHER,
	STOP_N
};

static const char *const stop_names[STOP_N] = {
	"complete", "no_cfi", "stack_too_short", "unreadable_memory", "unknown_address",
	"binary_missing", "pac", "max_depth", "no_registers", "other",
};

/* Per recorded machine: how perf's registers map to DWARF numbers. */
struct layout {
	uint16_t machine;
	unsigned nregs;          /* DWARF registers 0..nregs-1 set */
	signed char perf[33];    /* perf index of DWARF register i, -1 none */
	int perf_sp, perf_pc;    /* perf indexes */
	int dwarf_fp;            /* frame-pointer register (DWARF), -1 none */
	unsigned word;           /* bytes */
};

static const struct layout L_X86_64 = {
	EM_X86_64, 17, { 0, 3, 2, 1, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23, 8 }, 7, 8, 6, 8,
};
static const struct layout L_I386 = {
	EM_386, 9, { 0, 2, 3, 1, 7, 6, 4, 5, 8 }, 7, 8, 5, 4,
};
static const struct layout L_AARCH64 = {
	EM_AARCH64, 32,
	{ 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26,
	  27, 28, 29, 30, 31 },
	31, 32, 29, 8,
};
static const struct layout L_ARM = {
	EM_ARM, 16, { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 }, 13, 15, -1, 4,
};

/* CFI rules of one PC, compiled from libdw's Dwarf_Frame (fast path). */
enum rule_kind {
	RK_SAME,    /* caller's value = this frame's (if set): kept as a bit
		       in cfi_rules.same, not as a rule */
	RK_AT_CFA,  /* caller's value = word at CFA + off */
	RK_VAL_CFA, /* caller's value = CFA + off */
	RK_REG,     /* caller's value = this frame's register `reg` (if set) */
	RK_EXPR,    /* a DWARF expression: ops[off .. off + nops) of the process */
};
struct rule {
	uint8_t regno, kind, reg;
	uint16_t nops;
	int64_t off;
};
/* A DWARF operation of a CFI expression (the subset fast_eval knows). */
struct fop {
	uint8_t atom;
	uint64_t number, number2;
};
#define RULES_MAX 48
struct cfi_rules {
	Dwfl_Module *mod;        /* key: module and lookup pc; NULL = empty slot */
	uint64_t pc;
	uint8_t usable;          /* 0: not for the fast path (no CFI, expressions) */
	uint8_t signal;          /* the FDE is a signal frame's */
	uint8_t ra;              /* return-address column */
	uint8_t ra_undef;        /* its rule is "undefined": the outermost frame */
	uint8_t cfa_reg;         /* CFA = cfa_reg + cfa_off, or when cfa_nops: */
	uint8_t n;               /* rules other than "same value"; registers
				    with neither are undefined */
	uint16_t cfa_nops;       /* an expression at ops[cfa_off] */
	int64_t cfa_off;
	uint64_t same[2];        /* bit per register whose rule is "same value" */
	struct rule r[RULES_MAX];
};

struct proc {
	uint32_t pid;
	Dwfl *dwfl;
	int attached;
	struct cfi_rules *cfi;   /* open addressing on (mod, pc) */
	uint32_t cfi_n, cfi_cap;
	struct fop *ops;         /* expressions of the rules */
	uint32_t n_ops, cap_ops;
	/* the module of the last lookup and its address range */
	struct {                 /* fast_module()'s last modules, most recent first */
		Dwfl_Module *mod;
		uint64_t lo, hi;
	} last[4];
	uint64_t *failed;        /* mapping starts whose module could not be reported */
	size_t n_failed, cap_failed;
	struct unwinder *u;
	struct proc *next;
};

/* The sample being unwound. */
struct cur {
	const struct pf_sample *s;
	struct pf_maps *maps;
	const struct layout *l;
	struct proc *p;
	Dwarf_Word regs[33];
	uint64_t pc, sp;
	const uint8_t *stack;
	uint64_t stack_len;
	uint64_t *addrs;
	uint32_t n, max;
	uint64_t last_pc, last_fp;
	int have_fp, depth_hit, mem_fail;
	int any_fail;             /* the first failed read's reason, kept */
};

/* Where each register of a layout is in a sample's user_regs for one
 * register mask: index, or -1 when the mask lacks it. */
struct reg_map {
	const struct layout *l; /* NULL: not computed */
	uint64_t mask;
	int8_t idx[33];         /* DWARF register i */
	int8_t sp, pc;
};

struct unwinder {
	struct symbolizer *sym;
	struct reg_map rm;     /* for the last sample's mask */
	uint16_t e_machine;
	unsigned va_bits;
	int pac_enabled;
	Dwfl_Callbacks cb;
	struct proc *procs[256];
	struct cur c;
	uint64_t samples, frames, fp_fallback, fp_frames, pac_stripped, retries;
	uint64_t stops[STOP_N];
	uint64_t fast_samples;   /* unwound by the fast path */
	uint64_t vaddrs[DEPTH_MAX]; /* verify: the fast path's frames */
	int fast_off;            /* PFSYM_UNWIND=libdwfl: every sample through libdwfl */
	int verify;              /* PFSYM_UNWIND=verify: both, compared */
	uint64_t verify_bad;
};

/* ---- setup ---- */

/* The unwinder whose symbolizer answers libdwfl's callbacks (one per
 * process; they get no pointer of ours but the module's userdata). */
static struct unwinder *g_unwinder;

/* libdwfl would look for files itself, by name: open() without O_NONBLOCK,
 * links followed anywhere (a sysroot's /usr/lib/debug link to /etc/shadow,
 * a FIFO named by .gnu_debuglink, this machine's /usr/lib/debug under
 * --symfs). Every file comes from the symbolizer instead, under its rules:
 * modules are reported with their descriptor, and a separate debug file is
 * the one the symbolizer finds for the module's DSO (its userdata: the DSO
 * id + 1). */
static int find_elf_cb(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
		       char **file_name, Elf **elfp)
{
	(void)mod;
	(void)userdata;
	(void)modname;
	(void)base;
	(void)file_name;
	*elfp = NULL;
	return -1;
}

static int find_debuginfo_cb(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			     const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
			     char **debuginfo_file_name)
{
	(void)mod;
	(void)modname;
	(void)base;
	(void)debuglink_file;
	(void)debuglink_crc;
	struct unwinder *u = g_unwinder;
	uintptr_t id = userdata ? (uintptr_t)*userdata : 0;
	if (!u || !id || !u->c.maps || id - 1 >= u->c.maps->n_dsos)
		return -1;
	struct pf_dso *dso = pf_maps_dso(u->c.maps, (uint32_t)(id - 1));
	const char *main_path, *path;
	int main_fd;
	/* the module's own debug file only (not a dwz file, which libdwfl asks
	 * for with the debug file's name) */
	if (!sym_dso_elf(u->sym, dso, &main_path, &main_fd) || !main_path || !file_name ||
	    strcmp(file_name, main_path) != 0)
		return -1;
	int fd = sym_dso_debug_fd(u->sym, dso, &path);
	if (fd >= 0 && debuginfo_file_name && !(*debuginfo_file_name = strdup(path))) {
		close(fd);
		return -1;
	}
	return fd;
}

struct unwinder *unw_new(struct symbolizer *sym, const struct pfsym_opts *o, uint16_t e_machine)
{
	struct unwinder *u = calloc(1, sizeof(*u));
	if (!u)
		return NULL;
	u->sym = sym;
	u->e_machine = e_machine;
	u->va_bits = 48;
	(void)o; /* the places to look are the symbolizer's */
	g_unwinder = u;
	const char *mode = getenv("PFSYM_UNWIND");
	u->fast_off = mode && strcmp(mode, "libdwfl") == 0;
	u->verify = mode && strcmp(mode, "verify") == 0;
	/* the callbacks: unw_unwind(), once libdw is loaded */
	return u;
}

static void proc_reset(struct proc *p)
{
	if (p->dwfl)
		dwfl_end(p->dwfl);
	p->dwfl = NULL;
	/* the cached rules are keyed by modules of that Dwfl */
	free(p->cfi);
	p->cfi = NULL;
	p->cfi_n = p->cfi_cap = 0;
	free(p->ops);
	p->ops = NULL;
	p->n_ops = p->cap_ops = 0;
	memset(p->last, 0, sizeof(p->last));
	p->attached = 0;
	free(p->failed);
	p->failed = NULL;
	p->n_failed = p->cap_failed = 0;
}

void unw_free(struct unwinder *u)
{
	if (!u)
		return;
	for (int i = 0; i < 256; i++) {
		for (struct proc *p = u->procs[i], *n; p; p = n) {
			n = p->next;
			proc_reset(p);
			free(p);
		}
	}
	if (g_unwinder == u)
		g_unwinder = NULL;
	free(u);
}

void unw_meta(struct unwinder *u, const uint8_t *data, size_t size)
{
	char v[32];
	if (pf_kv_get(data, size, "va_bits", v, sizeof(v)) > 0) {
		unsigned long x = strtoul(v, NULL, 10);
		if (x >= 32 && x <= 64)
			u->va_bits = (unsigned)x;
	}
	if (pf_kv_get(data, size, "pac_enabled", v, sizeof(v)) > 0)
		u->pac_enabled = v[0] == '1';
}

/* ---- memory ---- */

static uint64_t strip_pac(struct unwinder *u, uint64_t v, int count)
{
	if (u->c.l != &L_AARCH64 || u->va_bits >= 64 || !(v >> u->va_bits))
		return v;
	uint64_t m = v & ((1ull << u->va_bits) - 1);
	if (count && u->c.s && pf_maps_find(u->c.maps, u->c.s->pid, m, u->c.s->time))
		u->pac_stripped++;
	return m;
}

static inline int read_stack(const struct cur *c, uint64_t addr, unsigned size, uint64_t *v)
{
	if (addr < c->sp || addr - c->sp > c->stack_len || c->stack_len - (addr - c->sp) < size)
		return 0;
	const uint8_t *src = c->stack + (addr - c->sp);
	if (size == 8) { /* constant sizes: no call to memcpy */
		uint64_t x;
		memcpy(&x, src, 8); /* little-endian targets */
		*v = x;
	} else {
		uint32_t x = 0;
		memcpy(&x, src, size < 4 ? size : 4);
		*v = x;
	}
	return 1;
}

/* A word of a read-only segment of the module that holds `addr`. */
static int read_elf(Dwfl *dwfl, uint64_t addr, unsigned size, uint64_t *v)
{
	Dwfl_Module *mod = dwfl_addrmodule(dwfl, addr);
	if (!mod)
		return 0;
	Dwarf_Addr bias;
	Elf *e = dwfl_module_getelf(mod, &bias);
	size_t nph, fsize;
	if (!e || elf_getphdrnum(e, &nph) != 0)
		return 0;
	char *raw = elf_rawfile(e, &fsize);
	if (!raw)
		return 0;
	uint64_t va = addr - bias;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD || (ph.p_flags & PF_W))
			continue;
		if (va < ph.p_vaddr || va - ph.p_vaddr >= ph.p_filesz || ph.p_filesz - (va - ph.p_vaddr) < size)
			continue;
		uint64_t off = ph.p_offset + (va - ph.p_vaddr);
		if (off > fsize || fsize - off < size)
			return 0;
		uint64_t x = 0;
		memcpy(&x, raw + off, size);
		*v = x;
		return 1;
	}
	return 0;
}

static int read_word(struct unwinder *u, Dwfl *dwfl, uint64_t addr, uint64_t *v)
{
	struct cur *c = &u->c;
	unsigned w = c->l->word;
	if (read_stack(c, addr, w, v) || (dwfl && read_elf(dwfl, addr, w, v)))
		return 1;
	c->mem_fail = addr >= c->sp && addr - c->sp < STACK_GUESS_BYTES ? STOP_SHORT : STOP_UNREADABLE;
	if (!c->any_fail)
		c->any_fail = c->mem_fail;
	return 0;
}

/* ---- libdwfl callbacks ---- */

static pid_t cb_next_thread(Dwfl *dwfl, void *dwfl_arg, void **thread_argp)
{
	if (*thread_argp)
		return 0;
	*thread_argp = dwfl_arg;
	return dwfl_pid(dwfl);
}

static bool cb_get_thread(Dwfl *dwfl, pid_t tid, void *dwfl_arg, void **thread_argp)
{
	(void)dwfl;
	(void)tid;
	*thread_argp = dwfl_arg;
	return true;
}

static bool cb_memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *dwfl_arg)
{
	struct proc *p = dwfl_arg;
	uint64_t v;
	if (!read_word(p->u, dwfl, addr, &v))
		return false;
	*result = strip_pac(p->u, v, 1);
	return true;
}

static bool cb_set_initial_registers(Dwfl_Thread *thread, void *thread_arg)
{
	struct proc *p = thread_arg;
	struct cur *c = &p->u->c;
	if (!dwfl_thread_state_registers(thread, 0, c->l->nregs, c->regs))
		return false;
	dwfl_thread_state_register_pc(thread, c->pc);
	return true;
}

static const Dwfl_Thread_Callbacks thread_cb = {
	.next_thread = cb_next_thread,
	.get_thread = cb_get_thread,
	.memory_read = cb_memory_read,
	.set_initial_registers = cb_set_initial_registers,
};

/* ---- processes and modules ---- */

static struct proc *proc_get(struct unwinder *u, uint32_t pid)
{
	struct proc **head = &u->procs[pid & 255];
	for (struct proc *p = *head; p; p = p->next)
		if (p->pid == pid)
			return p;
	struct proc *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	p->u = u;
	p->next = *head;
	*head = p;
	return p;
}

static int failed_has(const struct proc *p, uint64_t start)
{
	for (size_t i = 0; i < p->n_failed; i++)
		if (p->failed[i] == start)
			return 1;
	return 0;
}

static void failed_add(struct proc *p, uint64_t start)
{
	if (p->n_failed == p->cap_failed) {
		size_t cap = p->cap_failed ? p->cap_failed * 2 : 4;
		uint64_t *n = realloc(p->failed, cap * sizeof(*n));
		if (!n)
			return;
		p->failed = n;
		p->cap_failed = cap;
	}
	p->failed[p->n_failed++] = start;
}

/* The pf_dso id + 1 recorded with a module. */
static uintptr_t module_dso(Dwfl_Module *mod)
{
	void **ud = NULL;
	dwfl_module_info(mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL);
	return ud ? (uintptr_t)*ud : 0;
}

/* Reports the module of the mapping that holds `addr` in the current sample's
 * process. @return 1 reported, or the stop reason why not (STOP_UNKNOWN:
 * no mapping; STOP_NO_FILE: no binary or libdwfl refused it). */
static int report_module(struct unwinder *u, struct proc *p, uint64_t addr)
{
	const struct cur *c = &u->c;
	const struct pf_map *mp = pf_maps_find(c->maps, c->s->pid, addr, c->s->time);
	if (!mp)
		return STOP_UNKNOWN;
	if (failed_has(p, mp->start))
		return STOP_NO_FILE;
	struct pf_dso *dso = pf_maps_dso(c->maps, mp->dso);
	const char *path;
	int sym_fd;
	Elf *e = sym_dso_elf(u->sym, dso, &path, &sym_fd);
	GElf_Ehdr eh;
	size_t nph;
	if (!e || !gelf_getehdr(e, &eh) || elf_getphdrnum(e, &nph) != 0)
		goto fail;
	/* bias: the segment that holds the mapping's file offset */
	uint64_t off = addr - mp->start + mp->pgoff, bias = 0;
	int found = 0;
	for (size_t i = 0; i < nph && !found; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (off >= ph.p_offset && off - ph.p_offset < ph.p_filesz) {
			bias = addr - (off - ph.p_offset + ph.p_vaddr);
			found = 1;
		}
	}
	if (!found)
		goto fail;
	if (eh.e_type == ET_EXEC)
		bias = 0;
	/* libdwfl gets the file pfsym found, as a descriptor of its own (it
	 * closes it): never the name, which it would open itself */
	int fd = -1;
	if (path) {
		if ((fd = fcntl(sym_fd, F_DUPFD_CLOEXEC, 0)) < 0)
			goto fail;
	} else {
		size_t size;
		char *raw = elf_rawfile(e, &size);
		fd = raw ? memfd_create("pfsym-image", MFD_CLOEXEC) : -1;
		if (fd < 0 || write(fd, raw, size) != (ssize_t)size) {
			if (fd >= 0)
				close(fd);
			goto fail;
		}
	}
	if (!p->dwfl && !(p->dwfl = dwfl_begin(&u->cb))) {
		if (fd >= 0)
			close(fd);
		goto fail;
	}
	dwfl_report_begin_add(p->dwfl);
	Dwfl_Module *mod = dwfl_report_elf(p->dwfl, dso->path, path ? path : dso->path, fd, bias, true);
	dwfl_report_end(p->dwfl, NULL, NULL);
	if (!mod) {
		if (fd >= 0)
			close(fd);
		goto fail;
	}
	void **ud = NULL;
	dwfl_module_info(mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL);
	if (ud)
		*ud = (void *)(uintptr_t)(mp->dso + 1);
	if (!p->attached) {
		if (!dwfl_attach_state(p->dwfl, NULL, (pid_t)p->pid, &thread_cb, p))
			return STOP_OTHER;
		p->attached = 1;
	}
	return 1;
fail:
	failed_add(p, mp->start);
	return STOP_NO_FILE;
}

/* ---- unwinding ---- */

static int frame_cb(Dwfl_Frame *state, void *arg)
{
	struct unwinder *u = arg;
	struct cur *c = &u->c;
	Dwarf_Addr pc;
	bool act;
	if (!dwfl_frame_pc(state, &pc, &act))
		return DWARF_CB_ABORT;
	pc = strip_pac(u, pc, 0);
	if (pc == 0 && c->n > 0)
		return DWARF_CB_ABORT; /* the end */
	if (c->n >= c->max || c->n >= DEPTH_MAX) {
		c->depth_hit = 1;
		return DWARF_CB_ABORT;
	}
	c->addrs[c->n++] = act || pc == 0 ? pc : pc - 1;
	c->last_pc = pc;
	Dwarf_Word fp = 0;
	c->have_fp = c->l->dwarf_fp >= 0 && dwfl_frame_reg(state, (unsigned)c->l->dwarf_fp, &fp) == 0;
	c->last_fp = fp;
	c->mem_fail = 0;
	return DWARF_CB_OK;
}

static int has_cfi(Dwfl_Module *mod, uint64_t pc)
{
	Dwarf_Addr bias;
	Dwarf_Frame *fr;
	Dwarf_CFI *cfi = dwfl_module_eh_cfi(mod, &bias);
	if (cfi && dwarf_cfi_addrframe(cfi, pc - bias, &fr) == 0) {
		free(fr);
		return 1;
	}
	cfi = dwfl_module_dwarf_cfi(mod, &bias);
	if (cfi && dwarf_cfi_addrframe(cfi, pc - bias, &fr) == 0) {
		free(fr);
		return 1;
	}
	return 0;
}

/* Follows saved frame pointers over the stack copy from `fp`: [fp] is the
 * caller's fp, [fp + word] a return address. Stops at the first word outside
 * the copy, a return address in no mapping, or an fp that does not grow. */
static void fp_walk(struct unwinder *u, Dwfl *dwfl, uint64_t fp)
{
	struct cur *c = &u->c;
	unsigned w = c->l->word;
	uint32_t before = c->n;
	while (c->n < c->max && c->n < DEPTH_MAX) {
		uint64_t next, ret;
		if (!read_stack(c, fp, w, &next) || !read_stack(c, fp + w, w, &ret))
			break;
		ret = strip_pac(u, ret, 0);
		if (ret == 0 || !pf_maps_find(c->maps, c->s->pid, ret, c->s->time))
			break;
		c->addrs[c->n++] = ret - 1;
		if (next <= fp)
			break;
		fp = next;
	}
	(void)dwfl;
	if (c->n > before) {
		u->fp_fallback++;
		u->fp_frames += c->n - before;
	}
}

/* ---- fast path: cached CFI rules, our own unwinding loop ----
 *
 * libdwfl evaluates the CFI of every frame of every sample again. This loop
 * does what libdwfl's frame unwinder does (dwfl_thread_getframes,
 * __libdwfl_frame_unwind, handle_cfi, dwfl_frame_pc of elfutils) for frames
 * whose rules are of the simple kinds compilers emit (CFA = register +
 * offset; registers undefined, same value, saved at CFA + offset, CFA +
 * offset, or in another register), with the rules of each (module, pc)
 * compiled once. Whenever a sample meets anything else (a pc in no reported
 * module, no CFI, an expression, a read outside the stack copy, an early
 * end), the fast path gives up without side effects and the sample goes
 * through libdwfl as before, so that frames, stop reasons and counters stay
 * what libdwfl gives. PFSYM_UNWIND=libdwfl turns the fast path off;
 * PFSYM_UNWIND=verify runs both and reports differences on stderr. */

/* ebl_frame_nregs of elfutils' backends: the registers handle_cfi evaluates */
static unsigned frame_nregs(const struct layout *l)
{
	return l == &L_X86_64 ? 17 : l == &L_AARCH64 ? 97 : 0;
}

static uint64_t ptr_hash(const void *m, uint64_t pc)
{
	uint64_t h = (uint64_t)(uintptr_t)m * 0x9e3779b97f4a7c15ULL ^ pc * 0xc2b2ae3d27d4eb4fULL;
	return h ^ h >> 29;
}

static int cfi_grow(struct proc *p)
{
	uint32_t cap = p->cfi_cap ? p->cfi_cap * 2 : 256;
	struct cfi_rules *n = calloc(cap, sizeof(*n));
	if (!n)
		return -ENOMEM;
	for (uint32_t i = 0; i < p->cfi_cap; i++) {
		if (!p->cfi[i].mod)
			continue;
		uint32_t k = (uint32_t)ptr_hash(p->cfi[i].mod, p->cfi[i].pc) & (cap - 1);
		while (n[k].mod)
			k = (k + 1) & (cap - 1);
		n[k] = p->cfi[i];
	}
	free(p->cfi);
	p->cfi = n;
	p->cfi_cap = cap;
	return 0;
}

/* Copies an expression into the process's ops if every operation is one
 * fast_eval knows. @return its index, or -1. */
static int64_t keep_ops(struct proc *p, const Dwarf_Op *ops, size_t nops, int cfa_expr, unsigned nregs)
{
	if (!nops || nops > 64)
		return -1;
	for (size_t i = 0; i < nops; i++) {
		uint8_t a = ops[i].atom;
		if ((a >= DW_OP_breg0 && a <= DW_OP_breg31 && (unsigned)(a - DW_OP_breg0) < nregs) ||
		    (a == DW_OP_bregx && ops[i].number < nregs) || (a >= DW_OP_lit0 && a <= DW_OP_lit31) ||
		    a == DW_OP_plus_uconst || a == DW_OP_deref || (a == DW_OP_deref_size && ops[i].number == 8) ||
		    a == DW_OP_stack_value || a == DW_OP_constu || a == DW_OP_consts || a == DW_OP_const1u ||
		    a == DW_OP_const1s || a == DW_OP_const2u || a == DW_OP_const2s || a == DW_OP_const4u ||
		    a == DW_OP_const4s || a == DW_OP_const8u || a == DW_OP_const8s || a == DW_OP_plus ||
		    a == DW_OP_minus || a == DW_OP_nop || (a == DW_OP_call_frame_cfa && !cfa_expr))
			continue;
		return -1;
	}
	if (p->n_ops + nops > p->cap_ops) {
		uint32_t cap = p->cap_ops ? p->cap_ops * 2 : 256;
		while (cap < p->n_ops + nops)
			cap *= 2;
		struct fop *n = realloc(p->ops, cap * sizeof(*n));
		if (!n)
			return -1;
		p->ops = n;
		p->cap_ops = cap;
	}
	int64_t at = p->n_ops;
	for (size_t i = 0; i < nops; i++)
		p->ops[p->n_ops++] = (struct fop){ ops[i].atom, ops[i].number, ops[i].number2 };
	return at;
}

/* Compiles the rules of `fr` into `r`. @return 1 usable, 0 not. */
static int compile_rules(struct proc *p, Dwarf_Frame *fr, unsigned nregs, struct cfi_rules *r)
{
	bool signal = false;
	int ra = dwarf_frame_info(fr, NULL, NULL, &signal);
	if (ra < 0 || (unsigned)ra >= nregs)
		return 0;
	r->signal = signal;
	r->ra = (uint8_t)ra;
	Dwarf_Op *ops;
	size_t nops;
	if (dwarf_frame_cfa(fr, &ops, &nops) != 0 || nops == 0)
		return 0;
	if (nops == 1 && ops[0].atom == DW_OP_bregx && ops[0].number < nregs) {
		r->cfa_reg = (uint8_t)ops[0].number;
		r->cfa_off = (int64_t)ops[0].number2;
	} else if (nops == 1 && ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31 &&
		   (unsigned)(ops[0].atom - DW_OP_breg0) < nregs) {
		r->cfa_reg = (uint8_t)(ops[0].atom - DW_OP_breg0);
		r->cfa_off = (int64_t)ops[0].number;
	} else {
		int64_t at = keep_ops(p, ops, nops, 1, nregs);
		if (at < 0)
			return 0;
		r->cfa_off = at;
		r->cfa_nops = (uint16_t)nops;
	}
	r->n = 0;
	r->ra_undef = 0;
	r->same[0] = r->same[1] = 0;
	for (unsigned regno = 0; regno < nregs; regno++) {
		Dwarf_Op mem[3];
		if (dwarf_frame_register(fr, (int)regno, mem, &ops, &nops) != 0)
			return 0;
		struct rule ru = { (uint8_t)regno, RK_SAME, 0, 0, 0 };
		if (nops == 0) {
			if (ops == mem) { /* undefined */
				if (regno == (unsigned)ra)
					r->ra_undef = 1;
				continue;
			}
			if (ops != NULL)
				return 0;
			r->same[regno >> 6] |= 1ull << (regno & 63); /* copied in bulk */
			continue;
		} else if (ops == mem && ops[0].atom == DW_OP_call_frame_cfa &&
			   (nops == 1 || (nops == 2 && (ops[1].atom == DW_OP_plus_uconst || ops[1].atom == DW_OP_stack_value)) ||
			    (nops == 3 && ops[1].atom == DW_OP_plus_uconst && ops[2].atom == DW_OP_stack_value))) {
			ru.kind = ops[nops - 1].atom == DW_OP_stack_value ? RK_VAL_CFA : RK_AT_CFA;
			if (nops > 1 && ops[1].atom == DW_OP_plus_uconst)
				ru.off = (int64_t)ops[1].number;
		} else if (nops == 1 && ops[0].atom == DW_OP_regx && ops[0].number < nregs) {
			ru.kind = RK_REG;
			ru.reg = (uint8_t)ops[0].number;
		} else {
			int64_t at = keep_ops(p, ops, nops, 0, nregs);
			if (at < 0)
				return 0;
			ru.kind = RK_EXPR;
			ru.off = at;
			ru.nops = (uint16_t)nops;
		}
		if (r->n == RULES_MAX)
			return 0;
		r->r[r->n++] = ru;
	}
	return 1;
}

/* The rules for looking up `pc` in `mod` (cached per process). */
static const struct cfi_rules *rules_for(struct proc *p, Dwfl_Module *mod, uint64_t pc, unsigned nregs)
{
	if ((p->cfi_n + 1) * 2 > p->cfi_cap && cfi_grow(p) < 0)
		return NULL;
	uint32_t mask = p->cfi_cap - 1, k = (uint32_t)ptr_hash(mod, pc) & mask;
	while (p->cfi[k].mod) {
		if (p->cfi[k].mod == mod && p->cfi[k].pc == pc)
			return &p->cfi[k];
		k = (k + 1) & mask;
	}
	struct cfi_rules *r = &p->cfi[k];
	memset(r, 0, sizeof(*r));
	/* as libdwfl: .eh_frame first, then .debug_frame */
	Dwarf_Addr bias;
	Dwarf_Frame *fr = NULL;
	Dwarf_CFI *cfi = dwfl_module_eh_cfi(mod, &bias);
	if (!cfi || dwarf_cfi_addrframe(cfi, pc - bias, &fr) != 0) {
		fr = NULL;
		cfi = dwfl_module_dwarf_cfi(mod, &bias);
		if (cfi && dwarf_cfi_addrframe(cfi, pc - bias, &fr) != 0)
			fr = NULL;
	}
	r->usable = fr && compile_rules(p, fr, nregs, r);
	free(fr);
	r->mod = mod;
	r->pc = pc;
	p->cfi_n++;
	return r;
}

static Dwfl_Module *fast_module(struct proc *p, uint64_t pc)
{
	/* a stack moves between a few modules: remember the last four */
	const unsigned n = sizeof(p->last) / sizeof(p->last[0]);
	for (unsigned i = 0; i < n && p->last[i].mod; i++) {
		if (pc >= p->last[i].lo && pc < p->last[i].hi) {
			if (i) {
				__typeof__(p->last[0]) t = p->last[i];
				memmove(&p->last[1], &p->last[0], i * sizeof(p->last[0]));
				p->last[0] = t;
			}
			return p->last[0].mod;
		}
	}
	Dwfl_Module *mod = dwfl_addrmodule(p->dwfl, pc);
	if (mod) {
		Dwarf_Addr lo, hi;
		dwfl_module_info(mod, NULL, &lo, &hi, NULL, NULL, NULL, NULL);
		memmove(&p->last[1], &p->last[0], (n - 1) * sizeof(p->last[0]));
		p->last[0].mod = mod;
		p->last[0].lo = lo;
		p->last[0].hi = hi;
	}
	return mod;
}

/* One frame's state, as libdwfl's Dwfl_Frame. */
struct fstate {
	uint64_t regs[97];
	uint64_t set[2];         /* bit per register */
	uint64_t pc;
	int pc_set;              /* 0: undefined (the end) */
	int initial, signal;
};

#define FS_HAS(st, r) (((st)->set[(r) >> 6] >> ((r) & 63)) & 1)
#define FS_SET(st, r, v) ((st)->regs[r] = (v), (st)->set[(r) >> 6] |= 1ull << ((r) & 63))

/* memory_read as cb_memory_read does it, from the stack copy only; PAC
 * stripping counted in *pac. @return 1, or 0 (not in the copy: give up). */
static inline int fast_read(struct unwinder *u, uint64_t addr, uint64_t *v, uint64_t *pac)
{
	const struct cur *c = &u->c;
	if (!read_stack(c, addr, c->l->word, v))
		return 0;
	if (c->l == &L_AARCH64 && u->va_bits < 64 && (*v >> u->va_bits)) {
		uint64_t m = *v & ((1ull << u->va_bits) - 1);
		if (pf_maps_find(c->maps, c->s->pid, m, c->s->time))
			(*pac)++;
		*v = m;
	}
	return 1;
}

/* libdwfl's expr_eval for the operations keep_ops() accepts. `r` is NULL
 * while computing the CFA itself. @return 1 with *out, or 0: give up. */
static int fast_eval(struct unwinder *u, struct proc *p, const struct fstate *st, const struct cfi_rules *r,
		     const struct fop *ops, unsigned nops, uint64_t *out, uint64_t *pac)
{
	uint64_t stk[16], v;
	unsigned sp = 0;
	int is_location = 0;
	for (unsigned i = 0; i < nops; i++) {
		const struct fop *o = &ops[i];
		uint8_t a = o->atom;
		if (sp >= 15)
			return 0;
		if (a >= DW_OP_lit0 && a <= DW_OP_lit31) {
			stk[sp++] = (uint64_t)(a - DW_OP_lit0);
		} else if (a >= DW_OP_breg0 && a <= DW_OP_breg31) {
			if (!FS_HAS(st, a - DW_OP_breg0))
				return 0;
			stk[sp++] = st->regs[a - DW_OP_breg0] + o->number;
		} else if (a == DW_OP_bregx) {
			if (!FS_HAS(st, o->number))
				return 0;
			stk[sp++] = st->regs[o->number] + o->number2;
		} else if (a == DW_OP_plus_uconst) {
			if (!sp)
				return 0;
			stk[sp - 1] += o->number;
		} else if (a == DW_OP_deref || a == DW_OP_deref_size) {
			if (!sp || !fast_read(u, stk[sp - 1], &v, pac))
				return 0;
			stk[sp - 1] = v;
		} else if (a == DW_OP_stack_value) {
			is_location = 0;
		} else if (a == DW_OP_plus || a == DW_OP_minus) {
			if (sp < 2)
				return 0;
			sp--;
			stk[sp - 1] = a == DW_OP_plus ? stk[sp - 1] + stk[sp] : stk[sp - 1] - stk[sp];
		} else if (a == DW_OP_nop) {
		} else if (a == DW_OP_call_frame_cfa) {
			if (!r)
				return 0;
			if (r->cfa_nops) {
				if (!fast_eval(u, p, st, NULL, p->ops + r->cfa_off, r->cfa_nops, &v, pac))
					return 0;
			} else {
				if (!FS_HAS(st, r->cfa_reg))
					return 0;
				v = st->regs[r->cfa_reg] + (uint64_t)r->cfa_off;
			}
			stk[sp++] = v;
			is_location = 1;
		} else { /* the constants */
			stk[sp++] = o->number;
		}
	}
	if (!sp)
		return 0;
	v = stk[sp - 1];
	if (is_location && !fast_read(u, v, &v, pac))
		return 0;
	*out = v;
	return 1;
}

/* __libdwfl_frame_unwind + handle_cfi for simple rules: `next` from `st`.
 * @return 1, or 0 when the fast path cannot say what libdwfl would do. */
static int fast_step(struct unwinder *u, struct proc *p, unsigned nregs, const struct fstate *st,
		     struct fstate *next, uint64_t *pac)
{
	uint64_t pc = st->pc;
	if (!st->initial && !st->signal)
		pc--;
	Dwfl_Module *mod = fast_module(p, pc);
	if (!mod)
		return 0;
	const struct cfi_rules *r = rules_for(p, mod, pc, nregs);
	if (!r || !r->usable)
		return 0;
	uint64_t cfa = 0;
	if (r->cfa_nops) {
		/* libdwfl evaluates the CFA for each rule that uses it; an
		 * expression CFA is read where a rule needs it (below) */
	} else {
		if (!FS_HAS(st, r->cfa_reg))
			return 0;
		cfa = st->regs[r->cfa_reg] + (uint64_t)r->cfa_off;
	}
	/* "same value" registers: all copied, those set in `st` kept set */
	memcpy(next->regs, st->regs, nregs * sizeof(next->regs[0]));
	next->set[0] = st->set[0] & r->same[0];
	next->set[1] = st->set[1] & r->same[1];
	next->initial = 0;
	next->signal = r->signal;
	for (unsigned i = 0; i < r->n; i++) {
		const struct rule *ru = &r->r[i];
		uint64_t v;
		switch (ru->kind) {
		case RK_AT_CFA:
		case RK_VAL_CFA: {
			uint64_t base = cfa;
			if (r->cfa_nops && !fast_eval(u, p, st, NULL, p->ops + r->cfa_off, r->cfa_nops, &base, pac))
				return 0;
			v = base + (uint64_t)ru->off;
			/* a read outside the copy: libdwfl would look in the
			 * binary, or count a failure */
			if (ru->kind == RK_AT_CFA && !fast_read(u, v, &v, pac))
				return 0;
			break;
		}
		case RK_EXPR:
			if (!fast_eval(u, p, st, r, p->ops + ru->off, ru->nops, &v, pac))
				return 0;
			break;
		default:
			if (!FS_HAS(st, ru->reg))
				continue;
			v = st->regs[ru->reg];
			break;
		}
		FS_SET(next, ru->regno, v);
	}
	if (r->ra_undef || !FS_HAS(next, r->ra)) {
		next->pc_set = 0;
	} else {
		next->pc = next->regs[r->ra];
		next->pc_set = next->pc != 0;
	}
	return 1;
}

/* Unwinds the current sample (u->c, registers set) with cached rules.
 * @return the stop reason (STOP_END or STOP_MAX_DEPTH) with c->addrs/c->n
 * filled and counters updated, or -1 with nothing changed: use libdwfl. */
static int fast_unwind(struct unwinder *u, struct proc *p)
{
	struct cur *c = &u->c;
	unsigned nregs = frame_nregs(c->l);
	if (!nregs || !p->dwfl || !p->attached)
		return -1;
	static struct fstate fs[2];
	struct fstate *st = &fs[0], *next = &fs[1];
	memset(st->set, 0, sizeof(st->set));
	for (unsigned i = 0; i < c->l->nregs; i++)
		FS_SET(st, i, c->regs[i]);
	st->pc = c->pc;
	st->pc_set = 1;
	st->initial = 1;
	st->signal = 0;
	uint64_t pac = 0;
	uint32_t n = 0;
	for (;;) {
		/* the frame callback: dwfl_frame_pc first (for a frame that is
		 * neither the first nor a signal frame's caller it unwinds the
		 * frame to see whether its caller is a signal frame) */
		int act, have_next = 0;
		if (st->initial || st->signal) {
			act = 1;
		} else {
			if (!fast_step(u, p, nregs, st, next, &pac))
				return -1;
			have_next = 1;
			act = next->pc_set && next->signal;
		}
		uint64_t pc = strip_pac(u, st->pc, 0);
		if (pc == 0 && n > 0)
			return -1;
		if (n >= c->max || n >= DEPTH_MAX) {
			c->n = n;
			u->pac_stripped += pac;
			return STOP_MAX_DEPTH;
		}
		c->addrs[n++] = act || pc == 0 ? pc : pc - 1;
		if (!have_next && !fast_step(u, p, nregs, st, next, &pac))
			return -1;
		if (!next->pc_set) {
			c->n = n;
			u->pac_stripped += pac;
			return STOP_END;
		}
		struct fstate *t = st;
		st = next;
		next = t;
	}
}

int unw_unwind(void *ctx, struct pf_maps *maps, const struct pf_sample *s, uint64_t *addrs, uint32_t max)
{
	struct unwinder *u = ctx;
	struct cur *c = &u->c;
	memset(c, 0, sizeof(*c));
	c->s = s;
	c->maps = maps;
	c->addrs = addrs;
	c->max = max;
	u->samples++;
	switch (u->e_machine) {
	case EM_X86_64:
		c->l = s->user_regs_abi == PERF_SAMPLE_REGS_ABI_32 ? &L_I386 : &L_X86_64;
		break;
	case EM_386:
		c->l = &L_I386;
		break;
	case EM_AARCH64:
		c->l = &L_AARCH64;
		break;
	case EM_ARM:
		c->l = &L_ARM;
		break;
	default:
		u->stops[STOP_NO_REGS]++;
		return 0;
	}
	if (!u->cb.find_elf) {
		if (!dw_load()) {
			u->stops[STOP_OTHER]++;
			return 0;
		}
		u->cb.find_elf = find_elf_cb;
		u->cb.find_debuginfo = find_debuginfo_cb;
		u->cb.section_address = dwfl_offline_section_address;
	}
	/* registers: perf order -> DWARF, through the index map of this
	 * register mask (the same for every sample of an event) */
	uint64_t mask = s->user_regs_mask;
	struct reg_map *rm = &u->rm;
	if (rm->l != c->l || rm->mask != mask) {
		rm->l = c->l;
		rm->mask = mask;
		for (unsigned i = 0; i < 35; i++) {
			int perf = i < c->l->nregs ? c->l->perf[i] : i == 33 ? c->l->perf_sp : i == 34 ? c->l->perf_pc : -1;
			int k = perf < 0 || perf >= 64 || !((mask >> perf) & 1)
					? -1
					: __builtin_popcountll(mask & ((1ull << perf) - 1));
			if (i < 33)
				rm->idx[i] = (int8_t)k;
			else if (i == 33)
				rm->sp = (int8_t)k;
			else
				rm->pc = (int8_t)k;
		}
	}
	/* the sample holds one word per mask bit (records.c checks): a
	 * missing general register is left 0, a missing SP or PC stops */
	for (unsigned i = 0; i < c->l->nregs; i++)
		c->regs[i] = rm->idx[i] >= 0 ? s->user_regs[rm->idx[i]] : 0;
	int ok = rm->sp >= 0 && rm->pc >= 0;
	c->sp = rm->sp >= 0 ? s->user_regs[rm->sp] : 0;
	c->pc = rm->pc >= 0 ? s->user_regs[rm->pc] : 0;
	if (!ok || !c->pc) {
		u->stops[STOP_NO_REGS]++;
		return 0;
	}
	if (c->l == &L_AARCH64)
		c->regs[30] = strip_pac(u, c->regs[30], 0);
	c->stack = s->user_stack;
	c->stack_len = s->user_stack_dyn_size < s->user_stack_size ? s->user_stack_dyn_size : s->user_stack_size;

	struct proc *p = proc_get(u, s->pid);
	if (!p)
		return -ENOMEM;
	c->p = p;
	/* exec: the leaf's module belongs to another file than the mapping now */
	if (p->dwfl) {
		Dwfl_Module *mod = fast_module(p, c->pc);
		const struct pf_map *mp = pf_maps_find(maps, s->pid, c->pc, s->time);
		if (mod && mp && module_dso(mod) != (uintptr_t)mp->dso + 1)
			proc_reset(p);
	}
	int stop = STOP_OTHER;
	if (!p->dwfl || !fast_module(p, c->pc)) {
		int r = report_module(u, p, c->pc);
		if (r != 1 && !p->attached) {
			/* nothing to unwind with: the leaf, then frame pointers */
			c->addrs[c->n++] = c->pc;
			if (c->l->dwarf_fp >= 0)
				fp_walk(u, NULL, c->regs[c->l->dwarf_fp]);
			u->stops[r]++;
			u->frames += c->n;
			return (int)c->n;
		}
	}
	int v_stop = -1;
	uint32_t v_n = 0;
	uint64_t v_pac = 0, v_fp = u->fp_fallback;
	if (!u->fast_off) {
		uint64_t pac0 = u->pac_stripped;
		int fst = fast_unwind(u, p);
		if (fst >= 0) {
			u->fast_samples++;
			if (!u->verify) {
				u->stops[fst]++;
				u->frames += c->n;
				return (int)c->n;
			}
			/* verify: keep the fast result, then let libdwfl do it */
			v_stop = fst;
			v_n = c->n;
			v_pac = u->pac_stripped - pac0;
			u->pac_stripped = pac0;
			memcpy(u->vaddrs, c->addrs, v_n * sizeof(*c->addrs));
		}
	}
	uint64_t pac1 = u->pac_stripped;
	for (int attempt = 0;; attempt++) {
		c->n = 0;
		c->depth_hit = c->mem_fail = c->have_fp = c->any_fail = 0;
		int rc = dwfl_getthread_frames(p->dwfl, (pid_t)s->tid, frame_cb, u);
		if (c->depth_hit) {
			stop = STOP_MAX_DEPTH;
			break;
		}
		if (rc == 0) {
			/* libdwfl takes a return address it cannot read for the
			 * outermost frame: tell the two apart by our reads */
			stop = c->mem_fail ? c->mem_fail : c->any_fail ? c->any_fail : STOP_END;
			break;
		}
		if (c->n == 0) {
			stop = STOP_OTHER;
			break;
		}
		if (c->last_pc == 0) {
			stop = STOP_END;
			break;
		}
		Dwfl_Module *mod = dwfl_addrmodule(p->dwfl, c->last_pc);
		if (!mod) {
			if (c->l == &L_AARCH64 && u->va_bits < 64 && (c->last_pc >> u->va_bits)) {
				stop = STOP_PAC;
				break;
			}
			int r = attempt < RETRIES_MAX ? report_module(u, p, c->last_pc) : STOP_OTHER;
			if (r == 1) {
				u->retries++;
				continue;
			}
			stop = r;
			break;
		}
		/* the frame's pc is a return address (not the leaf): look in the call */
		if (!has_cfi(mod, c->n > 1 ? c->last_pc - 1 : c->last_pc))
			stop = STOP_NO_CFI;
		else
			stop = c->mem_fail ? c->mem_fail : STOP_OTHER;
		break;
	}
	if (stop != STOP_END && stop != STOP_MAX_DEPTH && c->have_fp && c->n)
		fp_walk(u, p->dwfl, c->last_fp);
	if (v_stop >= 0 && (v_stop != stop || v_n != c->n || v_pac != u->pac_stripped - pac1 ||
			    v_fp != u->fp_fallback || memcmp(u->vaddrs, c->addrs, v_n * sizeof(*c->addrs)) != 0)) {
		u->verify_bad++;
		fprintf(stderr, "pfsym: verify: pid %u time %llu: fast %s %u frames (pac %llu), libdwfl %s %u frames (pac %llu)",
			s->pid, (unsigned long long)s->time, stop_names[v_stop], v_n, (unsigned long long)v_pac,
			stop_names[stop], c->n, (unsigned long long)(u->pac_stripped - pac1));
		for (uint32_t i = 0; i < v_n || i < c->n; i++)
			fprintf(stderr, " %llx/%llx", i < v_n ? (unsigned long long)u->vaddrs[i] : 0ull,
				i < c->n ? (unsigned long long)c->addrs[i] : 0ull);
		fputc('\n', stderr);
	}
	u->stops[stop]++;
	u->frames += c->n;
	return (int)c->n;
}

/* ---- summary ---- */

int unw_syminfo(const struct unwinder *u, struct pf_buf *b)
{
	if (!u || !u->samples)
		return 0;
	int rc = pf_kv_add_u64(b, "unwind.samples", u->samples);
	rc |= pf_kv_add_u64(b, "unwind.frames", u->frames);
	for (int i = 0; i < STOP_N; i++) {
		char key[64];
		snprintf(key, sizeof(key), "unwind.stop.%s", stop_names[i]);
		rc |= pf_kv_add_u64(b, key, u->stops[i]);
	}
	rc |= pf_kv_add_u64(b, "unwind.fp_fallback_samples", u->fp_fallback);
	rc |= pf_kv_add_u64(b, "unwind.fp_fallback_frames", u->fp_frames);
	rc |= pf_kv_add_u64(b, "unwind.pac_stripped", u->pac_stripped);
	return rc ? -ENOMEM : 0;
}

void unw_report(const struct unwinder *u, FILE *out, const char *prog)
{
	if (!u || !u->samples)
		return;
	if (u->verify && u->verify_bad)
		fprintf(out, "%s: verify: %llu samples by the fast path, %llu differ from libdwfl\n", prog,
			(unsigned long long)u->fast_samples, (unsigned long long)u->verify_bad);
	fprintf(out, "%s: unwound %llu samples (%llu frames): %llu to the outermost frame", prog,
		(unsigned long long)u->samples, (unsigned long long)u->frames,
		(unsigned long long)u->stops[STOP_END]);
	const char *sep = "; stopped early: ";
	for (int i = 1; i < STOP_N; i++) {
		if (!u->stops[i])
			continue;
		fprintf(out, "%s%s %llu", sep, stop_names[i], (unsigned long long)u->stops[i]);
		sep = ", ";
	}
	if (u->fp_fallback)
		fprintf(out, "; frame-pointer fallback in %llu samples (%llu frames)", (unsigned long long)u->fp_fallback,
			(unsigned long long)u->fp_frames);
	if (u->pac_stripped)
		fprintf(out, "; %llu PAC-signed addresses stripped", (unsigned long long)u->pac_stripped);
	fputc('\n', out);
	if (u->stops[STOP_SHORT])
		fprintf(out, "%s: %llu stacks were cut at the end of the stack copy: record with a larger "
			     "--call-graph dwarf,BYTES\n",
			prog, (unsigned long long)u->stops[STOP_SHORT]);
}
