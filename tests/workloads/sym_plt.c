/*
 * sym_plt - calls through PLT stubs, for tests/pfsym.bats.
 *
 * Built twice: with -DPLT_LIB as a shared library (plt_nop, and plt_math,
 * which calls libm's cbrt, erf and expm1 through the library's own PLT; crt's
 * __cxa_finalize goes through .plt.got), and without it as the program,
 * whose hot loop calls plt_nop through the program's PLT: a good share of
 * the samples land in the stub "plt_nop@plt".
 * argv[1]: iterations (default 200000000).
 */
#include <stdlib.h>

#ifdef PLT_LIB
#include <math.h>

volatile double plt_sink;

void plt_nop(void)
{
}

double plt_math(double x)
{
	plt_sink = cbrt(x) + erf(x) + expm1(x);
	return plt_sink;
}
#else
void plt_nop(void);
double plt_math(double x);

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 200000000ul;
	plt_math(1.5);
	for (unsigned long i = 0; i < n; i++)
		plt_nop();
	return 0;
}
#endif
