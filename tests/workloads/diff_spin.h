/* diff_spin.h - what the pfdiff workloads diff_model.c and diff_fixed.c
 * share: SLOW (the slow build's factor, 1 unless -DSLOW=N), the volatile
 * sink and SPIN. Included by their .c files only (tests build each .c alone,
 * from tests/workloads/). */
#ifndef DIFF_SPIN_H
#define DIFF_SPIN_H

#ifndef SLOW
#define SLOW 1
#endif

static volatile double sink;

/* the work stays in the function itself, so that it is the sampled leaf */
#define SPIN(n, x)                                     \
	do {                                           \
		for (long i_ = 0; i_ < (n); i_++)      \
			(x) = (x) * 1.0000001 + 0.5;   \
	} while (0)

#endif
