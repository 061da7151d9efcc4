/* rec_bench [ROUNDS]: a fixed amount of work (so a profiler's overhead shows
 * as a longer run) on two threads, through call paths of varying depth and
 * a libc callback (qsort), for bench/pfrec.sh. Build with -O2 -g
 * -fno-omit-frame-pointer -pthread. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define NI __attribute__((noinline))

static volatile double dsink;
static volatile unsigned usink;
static long rounds = 400;

NI static double kernel_mul(int n)
{
	double a = 1.0001, s = 0;
	for (int i = 0; i < n; i++) {
		s += a * (double)i;
		a *= 1.0000001;
	}
	return s;
}

NI static unsigned kernel_hash(int n)
{
	unsigned h = 2166136261u;
	for (int i = 0; i < n; i++)
		h = (h ^ (unsigned)i) * 16777619u;
	return h;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

NI static void kernel_sort(unsigned seed)
{
	int v[512];
	for (int i = 0; i < 512; i++) {
		seed = seed * 1103515245u + 12345u;
		v[i] = (int)(seed >> 8);
	}
	qsort(v, 512, sizeof(v[0]), cmp_int);
	usink += (unsigned)v[17];
}

NI static void descend(int depth, long r)
{
	if (depth > 0) {
		descend(depth - 1, r);
		return;
	}
	switch (r % 3) {
	case 0:
		dsink += kernel_mul(20000);
		break;
	case 1:
		usink += kernel_hash(30000);
		break;
	default:
		kernel_sort((unsigned)r);
		break;
	}
}

NI static void step(long r)
{
	for (int k = 0; k < 8; k++)
		descend((int)((r + k) % 7), r + k);
}

static void *worker(void *arg)
{
	long base = (long)arg;
	for (long r = 0; r < rounds * 100; r++)
		step(base + r);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		rounds = atol(argv[1]);
	pthread_t t;
	if (pthread_create(&t, NULL, worker, (void *)1000L) != 0)
		return 1;
	worker((void *)0L);
	pthread_join(t, NULL);
	printf("%u\n", usink & 1);
	return 0;
}
