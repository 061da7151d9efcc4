/*
 * a64_unwind - a freestanding aarch64 program for the unwinding fixtures of
 * tests/fixtures/aarch64 (made by make-fixtures.sh, which runs it under
 * qemu-aarch64 and gdb-multiarch and stops at chosen functions).
 *
 * No libc: a static glibc program is over 600 KB, this one a few KB, and
 * the fixture needs the binary. _start (assembly, its return address marked
 * undefined in the CFI, as glibc's is) calls start_c, which calls main and
 * then the exit system call. Build (see make-fixtures.sh):
 *   aarch64-linux-gnu-gcc -static -nostdlib -ffreestanding -fno-stack-protector
 *     -O2 -g [-fomit-frame-pointer | -mbranch-protection=standard]
 *
 * Stacks (every function is noinline and works after its call, so neither
 * inlining nor a tail call removes a frame):
 *   main -> run_rec -> rec x 6 -> leaf             recursion
 *   main -> run_big -> big_frame -> leaf           a 2 KiB frame
 *   main -> run_vla -> vla_frame -> leaf           a variable-size frame
 *   main -> run_sort -> msort x N -> cmp_leaf      a callback through a pointer
 *   main -> run_sort -> msort x N -> merge -> cmp_leaf
 * leaf and cmp_leaf make no calls (no frame of their own, the return address
 * stays in x30).
 */
#define NOINLINE __attribute__((noinline, noclone, used))

typedef unsigned long u64;

volatile u64 sink;

NOINLINE u64 leaf(u64 x)
{
	for (int i = 0; i < 4; i++)
		x = x * 6364136223846793005ul + 1442695040888963407ul;
	sink += x;
	return x;
}

NOINLINE u64 rec(unsigned n, u64 x)
{
	u64 r = n ? rec(n - 1, x + n) : leaf(x);
	sink ^= r;
	return r + n;
}

NOINLINE u64 big_frame(unsigned n)
{
	volatile u64 buf[256];
	for (unsigned i = 0; i < 256; i++)
		buf[i] = i * n;
	u64 r = leaf(buf[n & 255]);
	return r + buf[(n + 3) & 255];
}

NOINLINE u64 vla_frame(unsigned n)
{
	volatile u64 a[n + 1];
	for (unsigned i = 0; i <= n; i++)
		a[i] = i ^ n;
	u64 r = leaf(a[n / 2]);
	return r + a[n];
}

typedef int (*cmp_fn)(long, long);

NOINLINE int cmp_leaf(long a, long b)
{
	sink++;
	return a < b ? -1 : a > b;
}

NOINLINE void merge(long *v, long *tmp, unsigned n, unsigned h, cmp_fn cmp)
{
	unsigned i = 0, j = h, k = 0;
	while (i < h && j < n)
		tmp[k++] = cmp(v[i], v[j]) <= 0 ? v[i++] : v[j++];
	while (i < h)
		tmp[k++] = v[i++];
	while (j < n)
		tmp[k++] = v[j++];
	for (k = 0; k < n; k++)
		v[k] = tmp[k];
}

/* merge sort: pairs compared here, longer runs in merge() */
NOINLINE void msort(long *v, long *tmp, unsigned n, cmp_fn cmp)
{
	if (n < 2)
		return;
	if (n == 2) {
		if (cmp(v[0], v[1]) > 0) {
			long t = v[0];
			v[0] = v[1];
			v[1] = t;
		}
		sink++;
		return;
	}
	unsigned h = n / 2;
	msort(v, tmp, h, cmp);
	msort(v + h, tmp, n - h, cmp);
	merge(v, tmp, n, h, cmp);
	sink++;
}

NOINLINE u64 run_rec(void)
{
	u64 r = rec(5, 1);
	sink += r;
	return r;
}

NOINLINE u64 run_big(void)
{
	u64 r = big_frame(17);
	sink += r;
	return r;
}

NOINLINE u64 run_vla(unsigned n)
{
	u64 r = vla_frame(n);
	sink += r;
	return r;
}

NOINLINE u64 run_sort(void)
{
	long v[16], tmp[16];
	for (int i = 0; i < 16; i++)
		v[i] = (i * 7) % 16;
	msort(v, tmp, 16, cmp_leaf);
	sink += (u64)v[3];
	return (u64)v[0];
}

NOINLINE int main(int argc, char **argv)
{
	(void)argv;
	u64 r = run_rec();
	r += run_big();
	r += run_vla(40 + (unsigned)argc);
	r += run_sort();
	sink += r;
	return 0;
}

NOINLINE void start_c(long *sp)
{
	int argc = (int)sp[0];
	long ret = main(argc, (char **)(sp + 1));
	register long x0 __asm__("x0") = ret;
	register long x8 __asm__("x8") = 93; /* exit */
	__asm__ volatile("svc #0" : : "r"(x0), "r"(x8) : "memory");
	for (;;)
		;
}

/* the outermost frame: x29 = 0 and the return address undefined */
__asm__(".text\n"
	".globl _start\n"
	".type _start, %function\n"
	"_start:\n"
	".cfi_startproc\n"
	".cfi_undefined x30\n"
	"	mov x29, #0\n"
	"	mov x30, #0\n"
	"	mov x0, sp\n"
	"	bl start_c\n"
	"	brk #0\n"
	".cfi_endproc\n"
	".size _start, .-_start\n");
