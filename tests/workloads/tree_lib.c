/* libtree.so for tree.c's family mode: the worker thread's time is spent here. */
#include "now_s.h"

static volatile unsigned long lib_sink;

__attribute__((noinline)) void tree_lib_work(double seconds)
{
	double end = now_s() + seconds;
	while (now_s() < end)
		for (unsigned i = 0; i < 20000; i++)
			lib_sink += i * 3u + (lib_sink >> 5);
	__asm__ volatile("" ::: "memory");
}
