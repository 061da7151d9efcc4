/*
 * fake_vmlinux - a stand-in kernel image for tests/vmlinux.bats: linked
 * freestanding as ET_EXEC at the x86_64 kernel's link address
 * (0xffffffff81000000, -mcmodel=kernel) with a build-id note and a `_text`
 * symbol at the start of .text, as a kernel build's vmlinux has. Never run.
 * Built at -O2 -g: mix_helper() is inlined into fake_read_zero(); the three
 * fake_* functions call each other as a syscall path does.
 */
__asm__(".pushsection .text\n.globl _text\n_text:\n.popsection\n");

volatile long sink;

static inline long mix_helper(long x)
{
	long r = x;
	for (int i = 0; i < 8; i++)
		r = r * 31 + (r >> 3) + sink;
	return r;
}

__attribute__((noinline)) long fake_read_zero(long n)
{
	return mix_helper(n) + 1;
}

__attribute__((noinline)) long fake_vfs_read(long n)
{
	return fake_read_zero(n) * 3;
}

__attribute__((noinline)) long fake_do_syscall_64(long n)
{
	return fake_vfs_read(n) + 7;
}

void _start(void)
{
	sink = fake_do_syscall_64(sink);
	for (;;)
		;
}
