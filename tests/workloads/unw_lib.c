/* unw_lib.c - the shared library of the unw_main workload (tests/unwind.bats).
 * Built -O2 -g -fomit-frame-pointer -shared -fPIC. */
#define NOW_S_CLOCK CLOCK_THREAD_CPUTIME_ID
#include "now_s.h"

volatile double unw_lib_sink;

/* a static function: its frame is found only through the library's CFI */
__attribute__((noinline)) static double lib_spin(double until)
{
	double x = 0;
	while (now_s() < until)
		for (int i = 0; i < 20000; i++)
			x += i * 0.25;
	return x;
}

__attribute__((noinline)) double lib_work(double seconds)
{
	double r = lib_spin(now_s() + seconds);
	unw_lib_sink = r; /* not a tail call */
	return r;
}
