/*
 * xxh3-64 - prints the XXH3-64 hash (seed 0) of its standard input as 16 hex
 * digits: what libpfile's pf_xxh3() computes. tests/inline_lnidx.bats uses
 * it to forge line index files whose hash checks out, so that the loader's
 * checks of every count and offset are what rejects them.
 */
#include <stdio.h>
#include <stdlib.h>

#include "pfile.h"
#include "testutil.h"

int main(void)
{
	size_t n;
	char *b = tu_slurp(stdin, &n);
	printf("%016llx\n", (unsigned long long)pf_xxh3(b, n));
	free(b);
	return 0;
}
