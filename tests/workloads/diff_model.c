/*
 * diff_model: a small "model" whose activation function can be built slower,
 * for pfdiff's recorded-workload test. Build twice:
 *     gcc -O0 -fno-omit-frame-pointer -o model_v1 diff_model.c
 *     gcc ... -DSLOW=3 -o model_v2 diff_model.c
 * In model_v2, activation() does SLOW times the work; everything else is the
 * same. -O0 keeps a frame pointer in the leaf functions too. Call tree and work units (v1):
 *     main -> run_model -> forward -> matmul (2), activation (1 * SLOW)
 *                       -> normalize (2)
 * so activation's self share goes from 20 % to 43 %, forward's total share
 * from 60 % to 71 %, and matmul's and normalize's fall from 40 % to 29 %.
 * Argument: number of iterations (default 300).
 */
#include <stdlib.h>

#include "diff_spin.h"

__attribute__((noinline)) double matmul(double x)
{
	SPIN(200000, x);
	return x;
}

__attribute__((noinline)) double activation(double x)
{
	SPIN(100000L * SLOW, x);
	return x;
}

__attribute__((noinline)) double normalize(double x)
{
	SPIN(200000, x);
	return x;
}

__attribute__((noinline)) double forward(double x)
{
	x = matmul(x);
	x = activation(x) + 1;
	return x;
}

__attribute__((noinline)) double run_model(double x)
{
	x = forward(x);
	x = normalize(x) + 1;
	return x;
}

int main(int argc, char **argv)
{
	long iters = argc > 1 ? atol(argv[1]) : 300;
	double x = 1;
	for (long i = 0; i < iters; i++)
		x = run_model(x) + 1;
	sink = x;
	return 0;
}
