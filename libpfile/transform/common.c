/*
 * transform/common.c - transform 1's contexts and events: pf_tx_new(),
 * pf_tx_free(), pf_tx_add_event() (format/pfile.md 3.6; internal/tx.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal/alloc.h"
#include "internal/tx.h"

static uint8_t sp_reg_of(uint16_t e_machine)
{
	switch (e_machine) {
	case 62: /* EM_X86_64: PERF_REG_X86_SP */
	case 3:  /* EM_386 */
		return 7;
	case 183: /* EM_AARCH64: PERF_REG_ARM64_SP */
		return 31;
	case 40: /* EM_ARM: PERF_REG_ARM_SP */
		return 13;
	case 243: /* EM_RISCV: PERF_REG_RISCV_SP */
		return 2;
	case 21: /* EM_PPC64: PERF_REG_POWERPC_R1 */
		return 1;
	default:
		return 255;
	}
}

int pf_tx_new(pf_tx **out, uint16_t e_machine)
{
	if (!out)
		return -EINVAL;
	pf_tx *t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->sp_reg = sp_reg_of(e_machine);
	*out = t;
	return 0;
}

void pf_tx_free(pf_tx *t)
{
	if (!t)
		return;
	for (uint32_t i = 0; i < t->n_ev; i++)
		free(t->ev[i].ids);
	for (unsigned i = 0; i < N_SLOTS; i++) {
		free(t->slot[i].chain);
		free(t->slot[i].stack);
	}
	for (unsigned i = 0; i < N_STREAMS; i++)
		free(t->st[i].p);
	free(t->deltas);
	free(t->chain_tmp);
	free(t->stack_tmp);
	free(t);
}

int pf_tx_add_event(pf_tx *t, const uint8_t *data, size_t size)
{
	if (!t || (!data && size))
		return -EINVAL;
	if (t->n_ev >= MAX_EVENTS)
		return 0; /* later events are not used by the transform */
	struct txev *e = &t->ev[t->n_ev++];
	memset(e, 0, sizeof(*e));
	if (size < 12)
		return -EBADMSG;
	uint32_t attr_size = pf_le32(data), n_ids = pf_le32(data + 4);
	uint64_t need = 12ull + attr_size + (uint64_t)n_ids * 8;
	if (attr_size < PERF_ATTR_SIZE_VER0 || need > size)
		return -EBADMSG;
	const uint8_t *a = data + 12;
	/* host order: the payload was converted by the caller */
	e->sample_type = pfi_ldn(a + 24, 8, 0);
	e->read_format = pfi_ldn(a + 32, 8, 0);
	if (attr_size >= 80)
		e->branch_sample_type = pfi_ldn(a + 72, 8, 0);
	if (attr_size >= 88)
		e->regs_user = pfi_ldn(a + 80, 8, 0);
	if (attr_size >= 104)
		e->regs_intr = pfi_ldn(a + 96, 8, 0);
	if (n_ids && pfi_memdup((void **)&e->ids, a + attr_size, (size_t)n_ids * 8) < 0)
		return -ENOMEM;
	e->n_ids = n_ids;
	e->valid = 1;
	e->fast = !(e->sample_type & ~(uint64_t)FAST_ST);
	return 0;
}

/* The event index of a KE sample record, or -1. As pf_events_find(): by the
 * sample id when several events exist, else the first event. */
