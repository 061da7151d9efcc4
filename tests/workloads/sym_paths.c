/*
 * sym_paths - deterministic call paths for tests/pfsym.bats and pffold.bats.
 *
 * main -> path_a -> leaf_one        (n iterations)
 * main -> path_b -> leaf_two        (2n iterations)
 * main -> path_b -> "weird;name"    (n/2 iterations, a symbol with ';')
 * main -> path_c -> leaf_end        (n iterations, then exit: path_c's call
 *                                    is its last instruction)
 * Leaves spin on a volatile without calling anything, so frame-pointer
 * callchains are exact. -DUSE_LIB: leaf_one/leaf_two come from sym_lib.c
 * (a shared library). -DVARIANT=N changes the code (another build-id).
 * argv[1]: n (default 100000000).
 */
#include <stdlib.h>

#define NI __attribute__((noinline, noclone))

volatile unsigned long sink;

/* Called before each spin loop: a leaf that calls nothing gets no frame of
 * its own from gcc even with -fno-omit-frame-pointer, and its caller would
 * vanish from the callchain. */
NI void touch(void)
{
	__asm__ volatile("" ::: "memory");
}

#ifdef USE_LIB
void lib_leaf_one(unsigned long n);
void lib_leaf_two(unsigned long n);
#define leaf_one lib_leaf_one
#define leaf_two lib_leaf_two
#else
NI void leaf_one(unsigned long n)
{
	touch();
	for (unsigned long i = 0; i < n; i++)
		sink += i;
}

NI void leaf_two(unsigned long n)
{
	touch();
	for (unsigned long i = 0; i < n; i++)
		sink ^= i;
}
#endif

NI void weird_leaf(unsigned long n) __asm__("\"weird;name\"");
NI void weird_leaf(unsigned long n)
{
	touch();
	for (unsigned long i = 0; i < n; i++)
		sink += i * 3;
}

NI __attribute__((noreturn)) void leaf_end(unsigned long n)
{
	touch();
	for (unsigned long i = 0; i < n; i++)
		sink -= i;
	exit(0);
}

NI void path_a(unsigned long n)
{
	leaf_one(n);
	sink++;
}

NI void path_b(unsigned long n)
{
	leaf_two(2 * n);
	weird_leaf(n / 2);
#ifdef VARIANT
	sink += VARIANT;
#endif
	sink++;
}

NI __attribute__((noreturn)) void path_c(unsigned long n)
{
	leaf_end(n);
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 100000000UL;
	path_a(n);
	path_b(n);
	path_c(n);
}
