/* rec_fork MS PROGRAM [ARGS...]: forks; the child execs PROGRAM, the parent
 * spins in parent_loop() for MS milliseconds, then waits for the child and
 * exits with its status. With REC_SPIN_CPU=1 in the environment (which the
 * child inherits: tests/workloads/rec_spin.c reads it too), MS is the
 * parent's CPU time, not wall time. A pfrec test workload
 * (-g -fno-omit-frame-pointer). */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

static clockid_t spin_clock = CLOCK_MONOTONIC;
#define NOW_S_CLOCK spin_clock
#include "now_s.h"

__attribute__((noinline)) void parent_loop(double seconds)
{
	double end = now_s() + seconds;
	while (now_s() < end)
		for (unsigned i = 0; i < 100000; i++)
			sink += i + (sink >> 2);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: rec_fork MS PROGRAM [ARGS...]\n");
		return 2;
	}
	pid_t pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		execv(argv[2], argv + 2);
		perror(argv[2]);
		_exit(127);
	}
	const char *cpu = getenv("REC_SPIN_CPU");
	if (cpu && cpu[0] == '1')
		spin_clock = CLOCK_THREAD_CPUTIME_ID;
	parent_loop(atof(argv[1]) / 1000.0);
	int st;
	if (waitpid(pid, &st, 0) < 0)
		return 1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}
