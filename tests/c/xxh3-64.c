/*
 * xxh3-64 - prints the XXH3-64 hash (seed 0) of its standard input as 16 hex
 * digits: what libpfile's pf_xxh3() computes. tests/inline_lnidx.bats uses
 * it to forge line index files whose hash checks out, so that the loader's
 * checks of every count and offset are what rejects them.
 */
#include <stdio.h>
#include <stdlib.h>

#include "pfile.h"

int main(void)
{
	size_t n = 0, cap = 1 << 16;
	char *b = malloc(cap);
	size_t r;
	while (b && (r = fread(b + n, 1, cap - n, stdin)) > 0) {
		n += r;
		if (n == cap) {
			char *nb = realloc(b, cap *= 2);
			if (!nb) {
				free(b);
				b = NULL;
			}
			b = nb;
		}
	}
	if (!b || ferror(stdin)) {
		fprintf(stderr, "xxh3-64: cannot read standard input\n");
		free(b);
		return 1;
	}
	printf("%016llx\n", (unsigned long long)pf_xxh3(b, n));
	free(b);
	return 0;
}
