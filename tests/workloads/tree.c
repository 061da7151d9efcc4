/* tree MODE [ARGS...]: process-tree shapes for pfrec/pfsym tests, built with
 * -fno-omit-frame-pointer. Every mode spends its time in named functions, so
 * each process's folded stacks and name (comm) are known from this file:
 *
 *   tree spin MS                 spin_loop() for MS ms
 *   tree family MS               a worker thread (worker_loop -> tree_lib_work
 *                                in libtree.so when built with -DUSE_LIB), a
 *                                forked child (child_loop) and main (main_loop)
 *   tree spawn MS PROG ARGS...   posix_spawn PROG, then parent_loop until it ends
 *   tree vfork MS PROG ARGS...   vfork + execv PROG, then parent_loop
 *   tree thread-exec PROG ARGS...  a second thread execs PROG (the process keeps
 *                                its pid; comm becomes PROG's name)
 *   tree rename NAME MS          before_rename() for MS ms, prctl(PR_SET_NAME,
 *                                NAME), then after_rename() for MS ms
 */
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;
static volatile unsigned long sink;

#ifdef USE_LIB
void tree_lib_work(double seconds);
#endif

#include "now_s.h"

__attribute__((noinline)) static void burn(double seconds)
{
	double end = now_s() + seconds;
	while (now_s() < end)
		for (unsigned i = 0; i < 20000; i++)
			sink += i ^ (sink >> 3);
}

__attribute__((noinline)) void spin_loop(double s) { burn(s); __asm__ volatile("" ::: "memory"); }
__attribute__((noinline)) void main_loop(double s) { burn(s); __asm__ volatile("" ::: "memory"); }
__attribute__((noinline)) void child_loop(double s) { burn(s); __asm__ volatile("" ::: "memory"); }
__attribute__((noinline)) void parent_loop(double s) { burn(s); __asm__ volatile("" ::: "memory"); }
__attribute__((noinline)) void before_rename(double s) { burn(s); __asm__ volatile("" ::: "memory"); }
__attribute__((noinline)) void after_rename(double s) { burn(s); __asm__ volatile("" ::: "memory"); }

__attribute__((noinline)) void worker_loop(double s)
{
#ifdef USE_LIB
	tree_lib_work(s);
#else
	burn(s);
#endif
	__asm__ volatile("" ::: "memory");
}

static double g_secs;
static char **g_argv;

static void *worker(void *arg)
{
	(void)arg;
	worker_loop(g_secs);
	return NULL;
}

static void *execer(void *arg)
{
	(void)arg;
	execv(g_argv[0], g_argv);
	perror(g_argv[0]);
	_exit(127);
}

static int wait_child(pid_t pid)
{
	int st;
	if (waitpid(pid, &st, 0) < 0)
		return 1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

int main(int argc, char **argv)
{
	if (argc >= 3 && strcmp(argv[1], "spin") == 0) {
		spin_loop(atof(argv[2]) / 1000.0);
		return 0;
	}
	if (argc >= 3 && strcmp(argv[1], "family") == 0) {
		g_secs = atof(argv[2]) / 1000.0;
		pid_t pid = fork();
		if (pid < 0)
			return 1;
		if (pid == 0) {
			child_loop(g_secs);
			_exit(0);
		}
		pthread_t th;
		if (pthread_create(&th, NULL, worker, NULL) != 0)
			return 1;
		main_loop(g_secs);
		pthread_join(th, NULL);
		return wait_child(pid);
	}
	if (argc >= 4 && (strcmp(argv[1], "spawn") == 0 || strcmp(argv[1], "vfork") == 0)) {
		pid_t pid;
		if (argv[1][0] == 's') {
			if (posix_spawn(&pid, argv[3], NULL, NULL, argv + 3, environ) != 0)
				return 1;
		} else {
			pid = vfork();
			if (pid < 0)
				return 1;
			if (pid == 0) {
				execv(argv[3], argv + 3);
				_exit(127);
			}
		}
		parent_loop(atof(argv[2]) / 1000.0);
		return wait_child(pid);
	}
	if (argc >= 3 && strcmp(argv[1], "thread-exec") == 0) {
		g_argv = argv + 2;
		pthread_t th;
		if (pthread_create(&th, NULL, execer, NULL) != 0)
			return 1;
		pthread_join(th, NULL); /* never returns: the exec replaces us */
		return 1;
	}
	if (argc >= 4 && strcmp(argv[1], "rename") == 0) {
		double s = atof(argv[3]) / 1000.0;
		before_rename(s);
		prctl(PR_SET_NAME, argv[2], 0, 0, 0);
		after_rename(s);
		return 0;
	}
	fprintf(stderr, "usage: tree spin|family|spawn|vfork|thread-exec|rename ...\n");
	return 2;
}
