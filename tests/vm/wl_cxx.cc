// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl_cxx [MS]: a C++ program built as distributions build theirs (-O2
 * -fomit-frame-pointer, dynamically linked), that throws for MS
 * milliseconds (default 1500):
 *
 *	main -> round_once -> descend (x 6) -> fail -> __cxa_throw
 *		(libstdc++) -> _Unwind_RaiseException (libgcc_s) -> ...
 *		-> dl_iterate_phdr (libc) -> ...
 *
 * and sorts with std::sort in between, so that samples land in our own
 * code, in libstdc++, in libgcc_s's unwinder and in libc, none of which
 * keep frame pointers.
 */
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <vector>

#define NOINLINE __attribute__((noinline, noclone))
static volatile unsigned long sink;
static volatile unsigned int depth = 6;

/* throws, but for one call in 16 */
NOINLINE static unsigned long fail(unsigned int n)
{
	if (n % 16)
		throw std::runtime_error(n & 1 ? "odd" : "even");
	return n;
}

NOINLINE static unsigned long descend(unsigned int level, unsigned int n)
{
	unsigned long here = level * n;

	if (level < depth)
		here += descend(level + 1, n);
	else
		here += fail(n);
	sink += here;
	return here;
}

NOINLINE static void round_once(std::vector<unsigned int> &v, unsigned int n)
{
	try {
		sink += descend(0, n);
	} catch (const std::exception &e) {
		sink += e.what()[0];
	}
	for (auto &x : v)
		x = x * 1103515245u + n;
	std::sort(v.begin(), v.end());
	sink += v[0];
}

int main(int argc, char **argv)
{
	auto ms = std::chrono::milliseconds(argc > 1 ? std::strtoull(argv[1], nullptr, 0) : 1500);
	auto end = std::chrono::steady_clock::now() + ms;
	std::vector<unsigned int> v(256, 1);
	unsigned int n = 0;

	while (std::chrono::steady_clock::now() < end)
		round_once(v, n++);
	return 0;
}
