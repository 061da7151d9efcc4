/* variant MS: spins for MS ms in a function whose name says which build this
 * is (variant_one, or variant_two with -DTWO): a binary replaced on disk
 * while it runs must never be named from the new file. */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

#include "now_s.h"

#ifdef TWO
#define VARIANT variant_two
#else
#define VARIANT variant_one
#endif

__attribute__((noinline)) void VARIANT(double seconds)
{
	double end = now_s() + seconds;
	while (now_s() < end)
		for (unsigned i = 0; i < 20000; i++)
			sink += i ^ (sink >> 3);
}

int main(int argc, char **argv)
{
	VARIANT(argc > 1 ? atof(argv[1]) / 1000.0 : 1.0);
	return 0;
}
