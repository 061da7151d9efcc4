/* sym_lib - the leaves of sym_paths.c -DUSE_LIB, built as a shared library. */
#define NI __attribute__((noinline, noclone))

extern volatile unsigned long sink;
void touch(void);

NI static void lib_spin(unsigned long n)
{
	touch();
	for (unsigned long i = 0; i < n; i++)
		sink += i;
}

NI void lib_leaf_one(unsigned long n)
{
	lib_spin(n);
	sink++;
}

NI void lib_leaf_two(unsigned long n)
{
	touch();
	for (unsigned long i = 0; i < n; i++)
		sink ^= i;
}
