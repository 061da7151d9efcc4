/*
 * gen-folded - a deterministic sampler of a fixed, small "model" call tree,
 * written as folded stacks. Used by tests/pfdiff.bats and bench/.
 *
 *   gen-folded SEED SAMPLES [SLOW_FACTOR [ROOT [VARIANTS]]]
 *
 * Each sample picks one leaf stack with probability proportional to its
 * weight (splitmix64 PRNG seeded with SEED: the same arguments give the same
 * output on every machine). SLOW_FACTOR multiplies the weight of the
 * softmax;exp leaf (a function made that much slower; default 1). ROOT is
 * the process frame (default "model"). VARIANTS > 0 replaces the tree by
 * VARIANTS synthetic deep stacks (for benchmarks: unique stacks).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t state;

static uint64_t next(void)
{
	uint64_t z = (state += UINT64_C(0x9e3779b97f4a7c15));
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

static const struct {
	const char *stack;
	double weight;
} tree[] = {
	{ "main;init;parse_config", 2 },
	{ "main;init;load_weights;read_file", 5 },
	{ "main;run;forward;matmul", 30 },
	{ "main;run;forward;matmul;memcpy", 5 },
	{ "main;run;forward;relu", 8 },
	{ "main;run;forward;softmax;exp", 6 },
	{ "main;run;backward;matmul_grad", 20 },
	{ "main;run;backward;relu_grad", 5 },
	{ "main;run;update;axpy", 10 },
	{ "main;run;update;norm", 4 },
	{ "main;io;write_log", 3 },
	{ "main;io;write_log;memcpy", 2 },
};
#define NTREE (sizeof tree / sizeof tree[0])

static void variants(unsigned long n, unsigned long samples)
{
	/* n distinct stacks of depth 8..40 over 2000 function names. */
	uint64_t *counts = calloc(n, sizeof *counts);
	if (!counts)
		exit(1);
	for (unsigned long i = 0; i < samples; i++)
		counts[next() % n]++;
	for (unsigned long v = 0; v < n; v++) {
		uint64_t s = v * UINT64_C(0x9e3779b97f4a7c15) + 1;
		int depth = 8 + (int)(v % 33);
		fputs("bench;main", stdout);
		unsigned long x = v;
		for (int d = 0; d < depth; d++) {
			s ^= s >> 12;
			s ^= s << 25;
			s ^= s >> 27;
			/* shallow levels from v's digits (a shared tree), deep ones hashed */
			unsigned long f = d < 4 ? (x % 7) + 7 * (unsigned long)d : (unsigned long)((s * UINT64_C(2685821657736338717)) >> 53) % 2000;
			x /= 7;
			printf(";fn_%lu_%s", f, d % 3 == 0 ? "compute" : d % 3 == 1 ? "dispatch::inner" : "x");
		}
		printf(" %llu\n", (unsigned long long)(counts[v] + 1));
	}
	free(counts);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fputs("usage: gen-folded SEED SAMPLES [SLOW_FACTOR [ROOT [VARIANTS]]]\n", stderr);
		return 2;
	}
	state = strtoull(argv[1], NULL, 10);
	unsigned long samples = strtoul(argv[2], NULL, 10);
	double slow = argc > 3 ? strtod(argv[3], NULL) : 1.0;
	const char *root = argc > 4 ? argv[4] : "model";
	unsigned long nvar = argc > 5 ? strtoul(argv[5], NULL, 10) : 0;
	if (nvar) {
		variants(nvar, samples);
		return 0;
	}
	double w[NTREE], sum = 0;
	uint64_t counts[NTREE] = { 0 };
	for (size_t i = 0; i < NTREE; i++) {
		w[i] = tree[i].weight * (strcmp(tree[i].stack, "main;run;forward;softmax;exp") == 0 ? slow : 1);
		sum += w[i];
	}
	for (unsigned long s = 0; s < samples; s++) {
		double u = (double)(next() >> 11) / 9007199254740992.0 * sum;
		size_t i = 0;
		while (i + 1 < NTREE && u >= w[i]) {
			u -= w[i];
			i++;
		}
		counts[i]++;
	}
	for (size_t i = 0; i < NTREE; i++)
		if (counts[i])
			printf("%s;%s %llu\n", root, tree[i].stack, (unsigned long long)counts[i]);
	return 0;
}
