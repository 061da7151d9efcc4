/*
 * diff_fixed: a program that does the same fixed work in every build, with
 * one function that can be built slower, for pfdiff --mode=time. Build twice:
 *     gcc -O0 -fno-omit-frame-pointer -o fixed_v1 diff_fixed.c
 *     gcc ... -DSLOW=10 -o fixed_v2 diff_fixed.c
 * main forks a child (spawn_child -> child_work) that spins until its own
 * CPU time (CLOCK_PROCESS_CPUTIME_ID) reaches UNITS x 40 ms, so its time is
 * the same in both builds and does not depend on the parent. The parent
 * meanwhile runs prepare() (UNITS x 2 M loop steps) and softmax() (UNITS x
 * 1 M x SLOW steps), then waits for the child. Call tree:
 *     main -> spawn_child -> child_work        (child process, fixed time)
 *     main -> run -> prepare                   (fixed work)
 *                 -> softmax                   (SLOW times the work)
 * At about 6 ns a step (-O0 here), with UNITS = 5: child_work 200 ms,
 * prepare 60 ms, softmax 30 ms in v1 and 300 ms in v2. softmax's time grows
 * by 270 ms; prepare's and child_work's do not, but their shares of the
 * samples fall (child_work's from about 70 % to 36 %).
 * Argument: UNITS (default 5). -O0 keeps frame pointers in the leaves.
 */
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "diff_spin.h"

static double cpu_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

__attribute__((noinline)) double child_work(double ms)
{
	double x = 1;
	while (cpu_ms() < ms)
		SPIN(20000, x);
	return x;
}

__attribute__((noinline)) pid_t spawn_child(long units)
{
	pid_t pid = fork();
	if (pid == 0) {
		sink = child_work(40.0 * (double)units);
		_exit(0);
	}
	return pid;
}

__attribute__((noinline)) double prepare(long units, double x)
{
	SPIN(2000000L * units, x);
	return x;
}

__attribute__((noinline)) double softmax(long units, double x)
{
	SPIN(1000000L * SLOW * units, x);
	return x;
}

__attribute__((noinline)) double run(long units)
{
	double x = prepare(units, 1);
	return softmax(units, x);
}

int main(int argc, char **argv)
{
	long units = argc > 1 ? atol(argv[1]) : 5;
	pid_t child = spawn_child(units);
	sink = run(units);
	int st = 0;
	if (child > 0)
		waitpid(child, &st, 0);
	return child > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}
