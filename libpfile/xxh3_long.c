/*
 * xxh3_long.c - pf_xxh3()'s path for long inputs (bytes.c).
 */
#include <stddef.h>
#include <stdint.h>

/* XXH3 of long inputs (restored records, section payloads: megabytes per
 * section), for pf_xxh3(): the shared libxxhash is built for SSE2 and runs
 * at about 20 GB/s on this machine, an AVX2 build at about 60. The same
 * function, compiled here for AVX2 and used where the CPU has it; the
 * result is the same XXH3_64bits value. Internal to libpfile (hidden). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__AVX2__)
#pragma GCC push_options
#pragma GCC target("avx2")
#define XXH_INLINE_ALL
#define XXH_NAMESPACE pf_avx2_
#include <xxhash.h>
static uint64_t xxh3_avx2(const void *p, size_t n)
{
	return XXH3_64bits(p, n);
}
#pragma GCC pop_options

__attribute__((visibility("hidden"))) int pfi_xxh3_long(const void *p, size_t n, uint64_t *h)
{
	if (!__builtin_cpu_supports("avx2"))
		return 0;
	*h = xxh3_avx2(p, n);
	return 1;
}
#else
__attribute__((visibility("hidden"))) int pfi_xxh3_long(const void *p, size_t n, uint64_t *h)
{
	(void)p;
	(void)n;
	(void)h;
	return 0;
}
#endif
