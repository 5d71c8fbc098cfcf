/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bench: the environment a benchmark gives the program it runs with and
 * without the LD_PRELOAD shim (preload.c, migratepages.c).
 */
#ifndef NP_BENCH_ENV_H
#define NP_BENCH_ENV_H

#include <stdlib.h>
#include <string.h>

extern char **environ;

/*
 * This process's environment without LD_PRELOAD and the shim's
 * NUMAPLACE_PRELOAD_STATS, plus @extra (NULL-terminated; NULL for none).
 * calloc()ed, NULL-terminated; the strings are not copied.
 */
static inline char **np_bench_env(const char *const *extra)
{
	size_t n = 0, nr_extra = 0, k = 0;
	char **env;

	while (environ[n])
		n++;
	while (extra && extra[nr_extra])
		nr_extra++;
	env = calloc(n + nr_extra + 1, sizeof(*env));
	if (!env)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "LD_PRELOAD=", 11) &&
		    strncmp(environ[i], "NUMAPLACE_PRELOAD_STATS=", 24))
			env[k++] = environ[i];
	for (size_t i = 0; i < nr_extra; i++)
		env[k++] = (char *)extra[i];
	return env;
}

#endif
