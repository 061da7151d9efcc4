// inl_cxx.cc - a C++ workload whose hot code is inlined templates:
// std::sort of a vector and a templated accumulate, for tests/inline.bats
// (built at -O2 -g).
#include <algorithm>
#include <cstdlib>
#include <vector>

namespace inl {
template <typename T> struct Mixer {
	T k;
	T operator()(T x) const { return (x ^ (x >> 7)) * k; }
};

template <typename T, typename F> T fold(const std::vector<T> &v, F f)
{
	T acc = 0;
	for (const T &x : v)
		acc += f(x);
	return acc;
}
} // namespace inl

static volatile unsigned sink;

__attribute__((noinline)) static unsigned round_trip(std::vector<unsigned> &v, unsigned seed)
{
	for (auto &x : v)
		x = seed = seed * 1103515245u + 12345u;
	std::sort(v.begin(), v.end());
	return inl::fold(v, inl::Mixer<unsigned>{ 2654435761u });
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? std::atol(argv[1]) : 200;
	std::vector<unsigned> v(50000);
	for (long r = 0; r < rounds; r++)
		sink = sink + round_trip(v, (unsigned)r);
	return 0;
}
