/* deep_rec DEPTH MS: main -> descend(DEPTH) recurses DEPTH times into
 * descend(), whose deepest call spins in bottom() for MS milliseconds: a
 * sample there has DEPTH + 1 descend frames between bottom and main, more
 * than the kernel's kernel.perf_event_max_stack (127 by default) keeps.
 * A pfrec test workload (tests/deep.bats): build with -O1 -g
 * -fno-omit-frame-pointer -fno-optimize-sibling-calls. */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

#include "now_s.h"

__attribute__((noinline)) void bottom(double seconds)
{
	double end = now_s() + seconds;
	do {
		for (unsigned i = 0; i < 100000; i++)
			sink += i ^ (sink >> 5);
	} while (now_s() < end);
}

/* descend(n) calls descend(n - 1) ... descend(0), which calls bottom():
 * n + 1 frames of descend */
__attribute__((noinline)) void descend(long n, double seconds)
{
	if (n > 0)
		descend(n - 1, seconds);
	else
		bottom(seconds);
	sink++; /* not a tail call */
}

int main(int argc, char **argv)
{
	long depth = argc > 1 ? atol(argv[1]) : 400;
	long ms = argc > 2 ? atol(argv[2]) : 300;
	descend(depth, (double)ms / 1000.0);
	return 0;
}
