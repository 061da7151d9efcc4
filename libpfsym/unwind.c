/*
 * libpfsym/unwind.c - DWARF unwinding of the user stacks of `pfrec --call-graph
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

#include "internal/unwind.h"

#ifdef PF_DW_DLOPEN
#include <dlfcn.h>
#include <stdio.h>

#define DW_PTR(f) __typeof__(f) *pfsi_dw_##f;
DW_FUNCS(DW_PTR)
#undef DW_PTR

/* 1 once libdw's functions are there; 0 (after one message) if not. */
static int dw_load(void)
{
	static int state;
#define DW_SYM(f) { #f, &pfsi_dw_##f },
	static const struct pfsi_dw_sym syms[] = { DW_FUNCS(DW_SYM) };
#undef DW_SYM
	return pfsi_dw_load(&state, "cannot load libdw", "samples with stack copies are not unwound", syms,
			    sizeof(syms) / sizeof(syms[0]));
}
#else /* !PF_DW_DLOPEN */
static int dw_load(void)
{
	return 1;
}
#endif

/* the names of enum stop in SYMINFO keys and the summary */
static const char *const stop_names[STOP_N] = {
	"complete", "no_cfi", "stack_too_short", "unreadable_memory", "unknown_address",
	"binary_missing", "pac", "max_depth", "no_registers", "other",
};

/* the register layouts of internal/unwind.h */
const struct layout pfsi_l_x86_64 = {
	EM_X86_64, 17, { 0, 3, 2, 1, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23, 8 }, 7, 8, 6, 8,
};
const struct layout pfsi_l_i386 = {
	EM_386, 9, { 0, 2, 3, 1, 7, 6, 4, 5, 8 }, 7, 8, 5, 4,
};
const struct layout pfsi_l_aarch64 = {
	EM_AARCH64, 32,
	{ 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26,
	  27, 28, 29, 30, 31 },
	31, 32, 29, 8,
};
const struct layout pfsi_l_arm = {
	EM_ARM, 16, { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 }, 13, 15, -1, 4,
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
	if (!pfsi_sym_dso_elf(u->sym, dso, &main_path, &main_fd) || !main_path || !file_name ||
	    strcmp(file_name, main_path) != 0)
		return -1;
	int fd = pfsi_sym_dso_debug_fd(u->sym, dso, &path);
	if (fd >= 0 && debuginfo_file_name && !(*debuginfo_file_name = strdup(path))) {
		close(fd);
		return -1;
	}
	return fd;
}

struct unwinder *pfsi_unw_new(struct symbolizer *sym, const struct pfsym_opts *o, uint16_t e_machine)
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
	/* the callbacks: pfsi_unw_unwind(), once libdw is loaded */
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

void pfsi_unw_free(struct unwinder *u)
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

void pfsi_unw_meta(struct unwinder *u, const uint8_t *data, size_t size)
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

static int read_word(struct unwinder *u, Dwfl *dwfl, uint64_t addr, uint64_t *v)
{
	struct cur *c = &u->c;
	unsigned w = c->l->word;
	if (read_stack(c, addr, w, v) || (dwfl && pfsi_read_elf(dwfl, addr, w, v)))
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
	if (p->n_failed == p->cap_failed && pfsi_grow((void **)&p->failed, &p->cap_failed, sizeof(*p->failed), 4) < 0)
		return;
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
	Elf *e = pfsi_sym_dso_elf(u->sym, dso, &path, &sym_fd);
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

/* The sample's register layout (c->l) from the recorded machine, libdw
 * loaded and the callbacks set on first use, and the registers in DWARF
 * order (c->regs, c->sp, c->pc). @return -1 when they are there, else the
 * stop reason to count (the sample is not unwound). */
static int set_regs(struct unwinder *u, const struct pf_sample *s)
{
	struct cur *c = &u->c;
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
		return STOP_NO_REGS;
	}
	if (!u->cb.find_elf) {
		if (!dw_load())
			return STOP_OTHER;
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
	if (!ok || !c->pc)
		return STOP_NO_REGS;
	if (c->l == &L_AARCH64)
		c->regs[30] = strip_pac(u, c->regs[30], 0);
	return -1;
}

/* Unwinds the current sample with libdwfl, reporting the modules of PCs
 * met in no module yet and trying again (at most RETRIES_MAX times).
 * @return the stop reason, c->addrs/c->n filled. */
static int dwfl_unwind(struct unwinder *u, struct proc *p, const struct pf_sample *s)
{
	struct cur *c = &u->c;
	int stop = STOP_OTHER;
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
	return stop;
}

int pfsi_unw_unwind(void *ctx, struct pf_maps *maps, const struct pf_sample *s, uint64_t *addrs, uint32_t max)
{
	struct unwinder *u = ctx;
	struct cur *c = &u->c;
	memset(c, 0, sizeof(*c));
	c->s = s;
	c->maps = maps;
	c->addrs = addrs;
	c->max = max;
	u->samples++;
	int not_unwound = set_regs(u, s);
	if (not_unwound >= 0) {
		u->stops[not_unwound]++;
		return 0;
	}
	c->stack = s->user_stack;
	c->stack_len = s->user_stack_dyn_size < s->user_stack_size ? s->user_stack_dyn_size : s->user_stack_size;

	struct proc *p = proc_get(u, s->pid);
	if (!p)
		return -ENOMEM;
	c->p = p;
	/* exec: the leaf's module belongs to another file than the mapping now */
	if (p->dwfl) {
		Dwfl_Module *mod = pfsi_fast_module(p, c->pc);
		const struct pf_map *mp = pf_maps_find(maps, s->pid, c->pc, s->time);
		if (mod && mp && module_dso(mod) != (uintptr_t)mp->dso + 1)
			proc_reset(p);
	}
	if (!p->dwfl || !pfsi_fast_module(p, c->pc)) {
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
		int fst = pfsi_fast_unwind(u, p);
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
	int stop = dwfl_unwind(u, p, s);
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

int pfsi_unw_syminfo(const struct unwinder *u, struct pf_buf *b)
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

void pfsi_unw_report(const struct unwinder *u, FILE *out, const char *prog)
{
	if (!u || !u->samples)
		return;
	if (u->verify && u->verify_bad)
		pfsi_report_line(out, "%s: verify: %llu samples by the fast path, %llu differ from libdwfl", prog,
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
		pfsi_report_line(out, "%s: %llu stacks were cut at the end of the stack copy: record with a larger "
			     "--call-graph dwarf,BYTES",
			prog, (unsigned long long)u->stops[STOP_SHORT]);
}
