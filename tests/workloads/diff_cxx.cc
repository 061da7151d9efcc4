// diff_cxx N: templates, lambdas, std::function, std::sort with a lambda
// comparator and a class template's member functions, for N rounds.
// A workload of tests/perfdiff.bats: build with -O1 -g -fno-omit-frame-pointer.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace work {
template <typename T> struct Accum {
	T total{};
	template <typename F> __attribute__((noinline)) void add_all(const std::vector<T> &v, F f)
	{
		for (const T &x : v)
			total += f(x);
	}
};

template <typename T> __attribute__((noinline)) std::vector<T> make(size_t n, unsigned seed)
{
	std::vector<T> v(n);
	for (auto &x : v) {
		seed = seed * 1103515245u + 12345u;
		x = static_cast<T>(seed >> 8);
	}
	return v;
}

__attribute__((noinline)) long strings(int n)
{
	std::map<std::string, long> m;
	for (int i = 0; i < n; i++)
		m[std::to_string(i % 997)] += i;
	long s = 0;
	for (auto &kv : m)
		s += kv.second;
	return s;
}
} // namespace work

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 20;
	long sink = 0;
	std::function<long(long)> sq = [](long x) { return x * x % 1000003; };
	for (int r = 0; r < rounds; r++) {
		auto v = work::make<long>(200000, (unsigned)r);
		std::sort(v.begin(), v.end(), [](long a, long b) { return (a ^ 0x5555) < (b ^ 0x5555); });
		work::Accum<long> acc;
		acc.add_all(v, [&](long x) { return sq(x); });
		auto d = work::make<double>(50000, (unsigned)r + 7);
		work::Accum<double> accd;
		accd.add_all(d, [](double x) { return x / 3.0; });
		sink += acc.total + (long)accd.total + work::strings(20000);
	}
	printf("%ld\n", sink);
	return 0;
}
