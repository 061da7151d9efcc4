/* libtree.so for tree.c's family mode: the worker thread's time is spent here. */
#include <time.h>

static volatile unsigned long lib_sink;

static double lib_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void tree_lib_work(double seconds)
{
	double end = lib_now() + seconds;
	while (lib_now() < end)
		for (unsigned i = 0; i < 20000; i++)
			lib_sink += i * 3u + (lib_sink >> 5);
	__asm__ volatile("" ::: "memory");
}
