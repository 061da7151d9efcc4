/* unw_main.c - workload for DWARF unwinding (tests/unwind.bats, bench/unwind.sh).
 * Built -O2 -g -fomit-frame-pointer as a PIE linked with libunw_lib.so.
 *
 *   unw_main MODE MS     MODE: lib, rec, qsort, signal or all (each for MS ms)
 *
 * Expected stacks (root first, below main):
 *   lib:    main;run_lib;lib_work;lib_spin
 *   rec:    main;run_rec;rec;rec;rec;rec;rec;rec_leaf
 *   qsort:  main;run_qsort;qsort...;cmp_slow (through libc's sort)
 *   signal: main;run_signal;raise...;sig_handler;sig_spin (through the
 *           signal frame)
 * Every function is noinline and stores its callee's result to a volatile
 * before returning, so that no call is a tail call. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NOW_S_CLOCK CLOCK_THREAD_CPUTIME_ID
#include "now_s.h"

double lib_work(double seconds);

volatile double sink;
static double g_seconds;

__attribute__((noinline)) static double spin_until(double until)
{
	double x = 0;
	while (now_s() < until)
		for (int i = 0; i < 20000; i++)
			x += i * 0.5;
	return x;
}

/* ---- lib ---- */
__attribute__((noinline)) static void run_lib(double s)
{
	sink = lib_work(s);
}

/* ---- rec ---- */
__attribute__((noinline)) static double rec_leaf(double s)
{
	double r = spin_until(now_s() + s);
	sink = r;
	return r;
}

__attribute__((noinline)) static double rec(int n, double s)
{
	double r = n > 1 ? rec(n - 1, s) : rec_leaf(s);
	sink = r;
	return r + n;
}

__attribute__((noinline)) static void run_rec(double s)
{
	sink = rec(5, s);
}

/* ---- qsort ---- */
static double cmp_until;

__attribute__((noinline)) static int cmp_slow(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	volatile double t = 0;
	for (int i = 0; i < 2000; i++)
		t += i;
	sink = t;
	return (x > y) - (x < y);
}

__attribute__((noinline)) static void run_qsort(double s)
{
	enum { N = 4096 };
	static int v[N];
	cmp_until = now_s() + s;
	while (now_s() < cmp_until) {
		for (int i = 0; i < N; i++)
			v[i] = (int)((i * 2654435761u) % 100003u);
		qsort(v, N, sizeof(v[0]), cmp_slow);
	}
	sink = v[0];
}

/* ---- signal ---- */
__attribute__((noinline)) static double sig_spin(double s)
{
	double r = spin_until(now_s() + s) * 3; /* not folded with rec_leaf */
	sink = r;
	return r - 1;
}

static void sig_handler(int sig)
{
	(void)sig;
	sink = sig_spin(g_seconds);
}

__attribute__((noinline)) static void run_signal(double s)
{
	g_seconds = s;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = sig_handler;
	sigaction(SIGUSR1, &sa, NULL);
	raise(SIGUSR1);
	sink = 1;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "all";
	double s = (argc > 2 ? atof(argv[2]) : 300) / 1000.0;
	int all = strcmp(mode, "all") == 0;
	if (all || strcmp(mode, "lib") == 0)
		run_lib(s);
	if (all || strcmp(mode, "rec") == 0)
		run_rec(s);
	if (all || strcmp(mode, "qsort") == 0)
		run_qsort(s);
	if (all || strcmp(mode, "signal") == 0)
		run_signal(s);
	sink = 0;
	return 0;
}
