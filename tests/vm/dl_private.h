/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What defer_lib.c, dl_rings.c and dl_chains.c share, and the tests do not.
 */
#ifndef DL_PRIVATE_H
#define DL_PRIVATE_H

#include <stddef.h>

/* realloc(), or abort with a message */
void *dl_xrealloc(void *p, size_t n);

/* room for one more element of arr, which has n of cap */
#define GROW(arr, n, cap)						\
	do {								\
		if ((n) == (cap)) {					\
			(cap) = (cap) ? 2 * (cap) : 256;		\
			(arr) = dl_xrealloc((arr), (cap) * sizeof(*(arr)));\
		}							\
	} while (0)

#endif /* DL_PRIVATE_H */
