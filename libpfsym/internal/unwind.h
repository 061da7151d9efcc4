/*
 * libpfsym/internal/unwind.h - the unwinder's structures, shared by
 * unwind.c (setup, libdwfl, the frame-pointer fallback, counters) and cfi.c
 * (the fast path: compiled CFI rules). Not installed.
 */
#ifndef PFSYM_INTERNAL_UNWIND_H
#define PFSYM_INTERNAL_UNWIND_H

#include <string.h>
#include <dwarf.h>
#include <elfutils/libdwfl.h>

#include "internal/pfsym.h"

/* libdw is loaded (dlopen) on the first sample with a stack copy: recordings
 * with frame pointers never need it, and a link-time dependency made every
 * run of pfsym load it and its compression libraries (about 0.2 ms of the
 * 7 ms of `pfsym < run.pf | pffold` on the demo). Static builds
 * (STATIC=1) link it. */
#ifdef PF_DW_DLOPEN
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

#define DW_PTR(f) extern __typeof__(f) *pfsi_dw_##f;
DW_FUNCS(DW_PTR)
#undef DW_PTR

#define dwarf_cfi_addrframe (*pfsi_dw_dwarf_cfi_addrframe)
#define dwarf_frame_cfa (*pfsi_dw_dwarf_frame_cfa)
#define dwarf_frame_info (*pfsi_dw_dwarf_frame_info)
#define dwarf_frame_register (*pfsi_dw_dwarf_frame_register)
#define dwfl_addrmodule (*pfsi_dw_dwfl_addrmodule)
#define dwfl_attach_state (*pfsi_dw_dwfl_attach_state)
#define dwfl_begin (*pfsi_dw_dwfl_begin)
#define dwfl_end (*pfsi_dw_dwfl_end)
#define dwfl_frame_pc (*pfsi_dw_dwfl_frame_pc)
#define dwfl_frame_reg (*pfsi_dw_dwfl_frame_reg)
#define dwfl_getthread_frames (*pfsi_dw_dwfl_getthread_frames)
#define dwfl_module_dwarf_cfi (*pfsi_dw_dwfl_module_dwarf_cfi)
#define dwfl_module_eh_cfi (*pfsi_dw_dwfl_module_eh_cfi)
#define dwfl_module_getelf (*pfsi_dw_dwfl_module_getelf)
#define dwfl_module_info (*pfsi_dw_dwfl_module_info)
#define dwfl_offline_section_address (*pfsi_dw_dwfl_offline_section_address)
#define dwfl_pid (*pfsi_dw_dwfl_pid)
#define dwfl_report_begin_add (*pfsi_dw_dwfl_report_begin_add)
#define dwfl_report_elf (*pfsi_dw_dwfl_report_elf)
#define dwfl_report_end (*pfsi_dw_dwfl_report_end)
#define dwfl_thread_getframes (*pfsi_dw_dwfl_thread_getframes)
#define dwfl_thread_state_register_pc (*pfsi_dw_dwfl_thread_state_register_pc)
#define dwfl_thread_state_registers (*pfsi_dw_dwfl_thread_state_registers)
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


/* Per recorded machine: how perf's registers map to DWARF numbers. */
struct layout {
	uint16_t machine;
	unsigned nregs;          /* DWARF registers 0..nregs-1 set */
	signed char perf[33];    /* perf index of DWARF register i, -1 none */
	int perf_sp, perf_pc;    /* perf indexes */
	int dwarf_fp;            /* frame-pointer register (DWARF), -1 none */
	unsigned word;           /* bytes */
};

extern const struct layout pfsi_l_x86_64, pfsi_l_i386, pfsi_l_aarch64, pfsi_l_arm;
#define L_X86_64 pfsi_l_x86_64
#define L_I386 pfsi_l_i386
#define L_AARCH64 pfsi_l_aarch64
#define L_ARM pfsi_l_arm

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

static inline uint64_t strip_pac(struct unwinder *u, uint64_t v, int count)
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


/* cfi.c */
/* A word of a read-only segment of the module that holds `addr`. */
int pfsi_read_elf(Dwfl *dwfl, uint64_t addr, unsigned size, uint64_t *v);
Dwfl_Module *pfsi_fast_module(struct proc *p, uint64_t pc);
/* Unwinds the current sample (u->c, registers set) with cached rules.
 * @return the stop reason (STOP_END or STOP_MAX_DEPTH) with c->addrs/c->n
 * filled and counters updated, or -1 with nothing changed: use libdwfl. */
int pfsi_fast_unwind(struct unwinder *u, struct proc *p);

#endif
