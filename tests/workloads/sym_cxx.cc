// sym_cxx - C++ names for tests/pfsym.bats: a class template in a
// namespace, an overloaded operator, and a function that gcc -O2 clones
// for a constant argument (a " [clone .constprop.0]" suffix once demangled).
//
// main -> ns::run(long) -> ns::Worker<3>::spin(long)      (n iterations)
//                       -> ns::Worker<3>::operator()(int)  (n iterations)
//                       -> ns::(anonymous namespace)::mix(long, int) (n)
// Every function calls touch() first so that it gets a frame of its own.
// argv[1]: n (default 150000000).
#include <cstdlib>

#define NI __attribute__((noinline))

volatile unsigned long sink;

extern "C" NI void touch(void)
{
	__asm__ volatile("" ::: "memory");
}

namespace ns {

template <int N> struct Worker {
	NI void spin(long n)
	{
		touch();
		for (long i = 0; i < n; i++)
			sink += (unsigned long)(i * N);
	}
	NI void operator()(int n)
	{
		touch();
		for (int i = 0; i < n; i++)
			sink ^= (unsigned long)(i + N);
	}
};

namespace {
NI void mix(long n, int k)
{
	touch();
	for (long i = 0; i < n; i++)
		sink += (unsigned long)(i << k);
}
} // namespace

NI void run(long n)
{
	Worker<3> w;
	w.spin(n);
	w((int)n);
	mix(n, 3);
	touch();
}

} // namespace ns

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], nullptr, 10) : 150000000;
	ns::run(n);
	return 0;
}
