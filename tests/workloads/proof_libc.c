/* proof_libc N: fixed work that spends its time in the C library
 * (snprintf, strlen, qsort), in main and in a second thread, so that the
 * call chains pass through libc's __libc_start_call_main and start_thread.
 * For tests/proof.bats: build with -O1 -fno-omit-frame-pointer -pthread. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long n = 400000;

static int cmp(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

__attribute__((noinline)) static long work(long iters)
{
	char buf[64];
	int v[64];
	long s = 0;
	for (long i = 0; i < iters; i++) {
		snprintf(buf, sizeof buf, "%ld %s", i, "proof");
		s += (long)strlen(buf);
		if (i % 16 == 0) {
			for (int k = 0; k < 64; k++)
				v[k] = (int)((i * 7919 + k * 104729) % 1000);
			qsort(v, 64, sizeof(v[0]), cmp);
			s += v[0];
		}
	}
	return s;
}

__attribute__((noinline)) static void *worker(void *arg)
{
	(void)arg;
	return (void *)work(n);
}

int main(int argc, char **argv)
{
	if (argc > 1)
		n = atol(argv[1]);
	pthread_t t;
	if (pthread_create(&t, NULL, worker, NULL) != 0)
		return 1;
	long s = work(n);
	void *r;
	pthread_join(t, &r);
	printf("%ld\n", s + (long)r);
	return 0;
}
