/* inl.c - a workload whose hot code is inlined: `static inline` helpers
 * nested two deep in a loop, for tests/inline.bats (built at -O2 -g). */
#include <stdlib.h>

static volatile unsigned long sink;

static inline unsigned long mix(unsigned long x)
{
	x ^= x >> 13;
	x *= 0x9e3779b97f4a7c15ul;
	return x ^ (x >> 29);
}

static inline unsigned long step(unsigned long x, int i)
{
	unsigned long y = mix(x + (unsigned long)i);
	return y + mix(y ^ (unsigned long)i);
}

__attribute__((noinline)) static unsigned long work(unsigned long seed, long n)
{
	unsigned long x = seed;
	for (long i = 0; i < n; i++)
		x = step(x, (int)i);
	return x;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000000;
	for (int r = 0; r < 4; r++)
		sink += work((unsigned long)r + sink, n / 4);
	return 0;
}
