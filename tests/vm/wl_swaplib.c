// SPDX-License-Identifier: GPL-2.0-only
/*
 * libpd_swap0.so and libpd_swap1.so, for wl_dyn dlswap: the same pd_spin()
 * in two objects of different layout (VARIANT 1 puts a big function
 * before it), loaded in turn at what is likely the same address.  An
 * unwinder that kept the first one's layout for the second would read
 * the wrong tables.
 */
#define NOINLINE __attribute__((noinline, noclone))

#if VARIANT
/* text and unwind rows ahead of pd_spin() that the other object lacks */
NOINLINE unsigned long pd_filler(unsigned long x)
{
	unsigned long i;

	for (i = 0; i < x; i++)
		__asm__ volatile(".skip 4096, 0x90" : : : "memory");
	return x;
}
#endif

/* call @cmp back on the neighbours in @v, @n times */
NOINLINE unsigned long pd_spin(int (*cmp)(const void *, const void *), const unsigned int *v,
			       unsigned long nelem, unsigned long n)
{
	unsigned long i, sum = 0;

	for (i = 0; i < n; i++)
		sum += cmp(&v[i % (nelem - 1)], &v[i % (nelem - 1) + 1]) + 1;
	return sum;
}
