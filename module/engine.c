// SPDX-License-Identifier: GPL-2.0
/*
 * numaplace: the migration engines' table. Each engine fills its struct
 * np_engine_ops in its own file (engine_*.c); MIGRATE (migrate.c), INFO
 * (info.c) and CONFIG_SET (genl.c) go through this table and name no
 * engine themselves.
 */
#include <linux/bitops.h>
#include <linux/build_bug.h>
#include <linux/kernel.h>
#include <linux/mm.h>

#include "numaplace.h"
#include "migrate.h"

/*
 * In the order a call prefers them for the pages several could take: the
 * page-table engine (inside the batched one), the batched engine, the
 * migrate_vma engine, the kernel engine (Documentation/performance.md).
 */
static const struct np_engine_ops *const np_engines[] = {
	&np_engine_pt_ops,
	&np_engine_batch_ops,
	&np_engine_vma_ops,
	&np_engine_kernel_ops,
};

/* Every engine of the uapi is in the table, once (names: engine-check). */
static_assert(ARRAY_SIZE(np_engines) == HWEIGHT32(NUMAPLACE_MIGRATE_ENGINES));

#define np_for_each_engine(e, i)					\
	for ((i) = 0; (i) < ARRAY_SIZE(np_engines) && ((e) = np_engines[i]); \
	     (i)++)

/* The engines this host has: their own probe, and the engines they need. */
unsigned int np_engines_have(void)
{
	const struct np_engine_ops *e;
	unsigned int have = 0, i;

	np_for_each_engine(e, i)
		if (e->available())
			have |= e->engine;
	np_for_each_engine(e, i)
		if ((e->needs & have) != e->needs)
			have &= ~e->engine;
	return have;
}

/* The INFO features of the engines this host has. */
u64 np_engines_features(void)
{
	unsigned int have = np_engines_have(), i;
	const struct np_engine_ops *e;
	u64 features = 0;

	np_for_each_engine(e, i) {
		if (!(have & e->engine))
			continue;
		features |= e->feature;
		if (e->features)
			features |= e->features();
	}
	return features;
}

/* The engine CONFIG_SET names (NUMAPLACE_CONFIG_ENGINE_*); NULL: AUTO. */
static const struct np_engine_ops *np_engine_of_config(u32 config)
{
	const struct np_engine_ops *e;
	unsigned int i;

	np_for_each_engine(e, i)
		if (config && e->config == config)
			return e;
	return NULL;
}

/* May CONFIG_SET name @config: AUTO, or an engine this host has? */
bool np_engine_config_ok(u32 config)
{
	const struct np_engine_ops *e = np_engine_of_config(config);

	return config == NUMAPLACE_CONFIG_ENGINE_AUTO ||
	       (e && (np_engines_have() & e->engine));
}

/*
 * The engines of a call: its ENGINE_* flag (at most one) names an engine,
 * else the configured one (CONFIG_SET) does, and the call has that engine
 * and those that take what it leaves (@with); by default every engine
 * this host has, each taking what it does best (collect.c). A flag for
 * an engine this host lacks is -EOPNOTSUPP; the configured engine, if
 * the host lacks it, is passed over.
 */
int np_engines_pick(u32 flags, u32 config)
{
	unsigned int have = np_engines_have(), i;
	u32 want = flags & NUMAPLACE_MIGRATE_ENGINES;
	const struct np_engine_ops *e;

	if (!want) {
		e = np_engine_of_config(config);
		if (e && (have & e->engine))
			return have & (e->engine | e->with);
		return have ?: -EOPNOTSUPP;
	}
	np_for_each_engine(e, i) {
		if (e->flag != want)
			continue;
		if (!(have & e->engine))
			return -EOPNOTSUPP;
		return have & (e->engine | e->with);
	}
	return -EINVAL;		/* more than one flag */
}

/*
 * The engines of a call's steps: @mapped, the first of @engines (in the
 * table's order) that runs under the mmap lock, and @unlocked, the first
 * that runs with no lock held (the kernel engine); NULL where none does.
 */
void np_engines_steps(unsigned int engines,
		      const struct np_engine_ops **mapped,
		      const struct np_engine_ops **unlocked)
{
	const struct np_engine_ops *e;
	unsigned int i;

	*mapped = NULL;
	*unlocked = NULL;
	np_for_each_engine(e, i) {
		if (!(engines & e->engine))
			continue;
		if (e->run_mapped && !*mapped)
			*mapped = e;
		if (e->run && !*unlocked)
			*unlocked = e;
	}
}
