/*
 * libpfsym/cfi.c - the unwinder's fast path: DWARF CFI rules compiled once
 * per (module, pc) and evaluated by our own loop over the stack copy, with
 * libdwfl's frame unwinder as the model (see the comment below); anything
 * it does not know sends the sample back to libdwfl (unwind.c). Also the
 * reads of read-only ELF segments both paths use.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <dwarf.h>
#include <elfutils/libdwfl.h>

#include "internal/oatab.h"
#include "internal/unwind.h"

/* A word of a read-only segment of the module that holds `addr`. */
int pfsi_read_elf(Dwfl *dwfl, uint64_t addr, unsigned size, uint64_t *v)
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

static uint64_t cfi_hash(const void *e)
{
	const struct cfi_rules *r = e;
	return ptr_hash(r->mod, r->pc);
}

static int cfi_grow(struct proc *p)
{
	return PFC_OA_GROW(p->cfi, p->cfi_cap, 256, mod, cfi_hash);
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

Dwfl_Module *pfsi_fast_module(struct proc *p, uint64_t pc)
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
	Dwfl_Module *mod = pfsi_fast_module(p, pc);
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
int pfsi_fast_unwind(struct unwinder *u, struct proc *p)
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
