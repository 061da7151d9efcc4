/* nosym_spin MS: spins for MS milliseconds, most of the time in a loop that
 * no symbol names: it lies past the end of nosym_head (whose ELF symbol is 1
 * byte long), as code in a function's padding or a stripped trampoline
 * does. main calls it through a pointer. x86-64 only (tests/pprof.bats: a
 * mapping whose frames are named in part). Build with -O1 -g
 * -fno-omit-frame-pointer. */
#include <stdlib.h>

#include "now_s.h"

__asm__(".text\n"
	".globl nosym_head\n"
	".type nosym_head, @function\n"
	"nosym_head:\n"
	"\tret\n"
	".size nosym_head, 1\n"
	".p2align 4\n"
	"\tpush %rbp\n" /* a frame of its own: main's call is in the chain */
	"\tmov %rsp, %rbp\n"
	"\tmov $200000, %ecx\n"
	"1:\tdec %ecx\n"
	"\tjnz 1b\n"
	"\tpop %rbp\n"
	"\tret\n");

extern char nosym_head[];

int main(int argc, char **argv)
{
	double end = now_s() + (argc > 1 ? atof(argv[1]) : 300) / 1000;
	void (*body)(void) = (void (*)(void))(void *)(nosym_head + 16);
	while (now_s() < end)
		body();
	return 0;
}
