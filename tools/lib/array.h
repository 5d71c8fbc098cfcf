/* SPDX-License-Identifier: LGPL-2.1 OR GPL-2.0 */
/*
 * The growth of an array by doubling, for libnumaplace and the numaplace
 * CLI alike; not installed. Inline in this header rather than a function
 * of the library: the CLI links libnumaplace.so, which is built with
 * -fvisibility=hidden and exports its API (NP_EXPORT) only.
 */
#ifndef NP_ARRAY_H
#define NP_ARRAY_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

/*
 * Room for one entry more in @v, an array of @nr entries of @size bytes
 * with room for *@cap: doubled when full (@first entries the first
 * time), *@cap updated. The array, moved or not; NULL (and @v as it was)
 * when out of memory.
 */
static inline void *np_array_grow(void *v, size_t *cap, size_t nr,
				  size_t size, size_t first)
{
	size_t n = *cap ? 2 * *cap : first;

	if (nr < *cap)
		return v;
	if (n < *cap || n > SIZE_MAX / size)
		return NULL;
	v = realloc(v, n * size);
	if (v)
		*cap = n;
	return v;
}

/*
 * np_array_grow() of the array @v (its pointer, set to the array grown)
 * of @nr entries of its type: 0, or -ENOMEM with @v as it was.
 */
#define np_array_reserve(v, cap, nr, first) ({				\
	__typeof__(v) np_grown_ = np_array_grow((v), (cap), (nr),	\
						 sizeof(*(v)), (first));	\
									\
	if (np_grown_)							\
		(v) = np_grown_;					\
	np_grown_ ? 0 : -ENOMEM;					\
})

#endif /* NP_ARRAY_H */
