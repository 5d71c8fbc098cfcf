// SPDX-License-Identifier: GPL-2.0
/*
 * The "numaplace" generic netlink family and its knobs, read and set with
 * the CLI's client (np_genl.h; Documentation/netlink/specs/numaplace.yaml):
 *  - family: the controller lists the family, its "events" group and its
 *    operations with the right flags (CONFIG_SET admin-only);
 *  - config_*: CONFIG_SET and joining "events" need CAP_SYS_ADMIN (EPERM
 *    for nobody and for root without it, with CAP_NET_ADMIN; CONFIG_GET
 *    and the dump are open to all); bad values are refused whole, with an
 *    extack message pointing at the attribute and the policy's bounds;
 *    the bounds are accepted; GET returns what SET set, and a migration
 *    without an engine flag uses the configured engine. The knobs are
 *    restored in the teardown;
 *  - batch_workers_dma: the batched engine's copy knobs.
 * The STATS_GET dump is genl_stats.c's, the events genl_event.c's.
 */
#include <grp.h>
#include <linux/capability.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "migrate_lib.h"
#include "np_genl.h"

#define GN_NOBODY	65534
/* The bounds of batch_pages: the spec's, which the module's policy uses. */
#define GN_BATCH_MIN	NUMAPLACE_BATCH_PAGES_MIN
#define GN_BATCH_MAX	NUMAPLACE_BATCH_PAGES_MAX

static long psz;

static void __attribute__((constructor)) genl_page_size(void)
{
	psz = sysconf(_SC_PAGESIZE);
}

NP_GN_FIXTURE(genl);

NP_TEST_F(genl, family)
{
	long op_flags[NUMAPLACE_NL_CMD_MAX + 1];

	NP_SKIPPED();
	ASSERT_EQ(0, np_nl_op_flags(&self->g.nl, NUMAPLACE_FAMILY_NAME, op_flags,
				    NUMAPLACE_NL_CMD_MAX + 1));
	EXPECT_NE(0, self->g.nl.family);
	EXPECT_NE(0, self->g.nl.events_grp) TH_LOG("no \"events\" group");
	EXPECT_EQ(GENL_CMD_CAP_DUMP,
		  op_flags[NUMAPLACE_NL_CMD_STATS_GET] & (GENL_CMD_CAP_DUMP |
							      GENL_ADMIN_PERM));
	EXPECT_EQ(GENL_CMD_CAP_DO,
		  op_flags[NUMAPLACE_NL_CMD_CONFIG_GET] & (GENL_CMD_CAP_DO |
							       GENL_ADMIN_PERM));
	EXPECT_EQ(GENL_CMD_CAP_DO | GENL_ADMIN_PERM,
		  op_flags[NUMAPLACE_NL_CMD_CONFIG_SET] & (GENL_CMD_CAP_DO |
							       GENL_ADMIN_PERM));
	/* An event is no request. */
	EXPECT_EQ(-1, op_flags[NUMAPLACE_NL_CMD_MIGRATE_DONE]);
}

/*
 * Child: drop privileges as told (nobody, or root without CAP_SYS_ADMIN
 * but with CAP_NET_ADMIN), then CONFIG_SET must be EPERM and joining the
 * events group too (its messages name other users' processes).
 */
static int gn_unprivileged_child(int as_nobody)
{
	struct np_gn_config c;
	struct np_gn_stats s;
	struct np_nl g;
	int ret;

	if (as_nobody) {
		if (setgroups(0, NULL) || setgid(GN_NOBODY) || setuid(GN_NOBODY))
			return 10;
	} else if (np_drop_cap(CAP_SYS_ADMIN)) {
		return 11;
	}
	if (np_gn_open(&g))
		return 12;
	ret = np_gn_config_set(&g, NUMAPLACE_CONFIG_ENGINE_AUTO, -1);
	if (ret != -EPERM) {
		fprintf(stderr, "# CONFIG_SET without CAP_SYS_ADMIN: %d (%s)\n",
			ret, g.ext.msg);
		return 13;
	}
	ret = np_nl_group(&g, g.events_grp, 1);
	if (ret != -EPERM) {
		fprintf(stderr, "# joined \"events\" without CAP_SYS_ADMIN: %d\n",
			ret);
		return 16;
	}
	/* Reading is open to all. */
	if (np_gn_config_get(&g, &c) || c.engine < 0 || c.batch_pages < 0)
		return 14;
	if (np_gn_stats(&g, &s) || s.nr_global != 1)
		return 15;
	np_nl_close(&g);
	return 0;
}

static int gn_run_child(int as_nobody)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (!pid)
		_exit(gn_unprivileged_child(as_nobody));
	if (waitpid(pid, &status, 0) != pid)
		return -errno;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

NP_TEST_F(genl, config_unprivileged)
{
	struct np_gn_config c;

	NP_SKIPPED();
	EXPECT_EQ(0, gn_run_child(1)) TH_LOG("as nobody");
	EXPECT_EQ(0, gn_run_child(0)) TH_LOG("as root without CAP_SYS_ADMIN");
	ASSERT_EQ(0, np_gn_config_get(&self->g.nl, &c));
	EXPECT_EQ(self->g.saved.engine, c.engine);
	EXPECT_EQ(self->g.saved.batch_pages, c.batch_pages);
}

/* What the kernel said when it refused a request. */
struct gn_refusal {
	char msg[256];
	int has_min, has_max;
	long long min, max;
};

/*
 * A refused CONFIG_SET: an error, an extack message (kept in *@r),
 * nothing changed.
 */
static void gn_expect_refused(struct __test_metadata *_metadata,
			      FIXTURE_DATA(genl) *self, long long engine,
			      long long batch, int bad_attr, const char *what,
			      struct gn_refusal *r)
{
	struct np_gn_config c;
	int ret;

	ret = np_gn_config_set(&self->g.nl, engine, batch);
	memcpy(r->msg, self->g.nl.ext.msg, sizeof(r->msg));
	r->has_min = !!(self->g.nl.ext.has_range & 1);
	r->has_max = !!(self->g.nl.ext.has_range & 2);
	r->min = self->g.nl.ext.min;
	r->max = self->g.nl.ext.max;
	EXPECT_GT(0, ret) TH_LOG("%s: accepted", what);
	EXPECT_NE(0, self->g.nl.ext.msg[0]) TH_LOG("%s: no extack message", what);
	if (bad_attr > 0) {
		EXPECT_EQ(bad_attr, self->g.nl.ext.attr)
			TH_LOG("%s: extack points at %d (\"%s\")", what,
			       self->g.nl.ext.attr, self->g.nl.ext.msg);
	}
	TH_LOG("%s: %s: \"%s\"", what, strerror(-ret), self->g.nl.ext.msg);
	ASSERT_EQ(0, np_gn_config_get(&self->g.nl, &c));
	EXPECT_EQ(self->g.saved.engine, c.engine) TH_LOG("%s", what);
	EXPECT_EQ(self->g.saved.batch_pages, c.batch_pages) TH_LOG("%s", what);
}

NP_TEST_F(genl, config_bad_values)
{
	struct gn_refusal r;
	struct np_gn_config c;
	int ret;

	NP_SKIPPED();
	ASSERT_GE(self->g.saved.engine, 0);
	ASSERT_GE(self->g.saved.batch_pages, 0);
	gn_expect_refused(_metadata, self, -1, 1,
			  NUMAPLACE_A_CONFIG_BATCH_PAGES, "batch_pages=1", &r);
	/* The range is in the message or in the policy the kernel sent. */
	EXPECT_TRUE(strstr(r.msg, "range") ||
		    (r.has_min && r.min == GN_BATCH_MIN))
		TH_LOG("\"%s\"", r.msg);
	if (r.has_min && r.has_max) {
		EXPECT_EQ(GN_BATCH_MIN, r.min);
		EXPECT_EQ(GN_BATCH_MAX, r.max);
	} else {
		TH_LOG("no policy bounds in the extended ACK");
	}
	gn_expect_refused(_metadata, self, -1, 1000000,
			  NUMAPLACE_A_CONFIG_BATCH_PAGES, "batch_pages=1000000", &r);
	gn_expect_refused(_metadata, self, -1, GN_BATCH_MIN - 1,
			  NUMAPLACE_A_CONFIG_BATCH_PAGES, "batch_pages=511", &r);
	gn_expect_refused(_metadata, self, -1, GN_BATCH_MAX + 1,
			  NUMAPLACE_A_CONFIG_BATCH_PAGES, "batch_pages=65537", &r);
	gn_expect_refused(_metadata, self, 9, -1, NUMAPLACE_A_CONFIG_ENGINE,
			  "engine=9", &r);
	gn_expect_refused(_metadata, self, 0x80000000LL, -1,
			  NUMAPLACE_A_CONFIG_ENGINE, "engine=2^31", &r);
	if (!(self->g.engines & NUMAPLACE_ENGINE_BATCH)) {
		gn_expect_refused(_metadata, self, NUMAPLACE_CONFIG_ENGINE_BATCH,
				  -1, NUMAPLACE_A_CONFIG_ENGINE,
				  "engine=batch (not on this host)", &r);
		/* All or nothing: the good batch_pages is not taken either. */
		gn_expect_refused(_metadata, self, NUMAPLACE_CONFIG_ENGINE_BATCH,
				  1024, NUMAPLACE_A_CONFIG_ENGINE,
				  "engine=batch batch_pages=1024", &r);
	}
	gn_expect_refused(_metadata, self, NUMAPLACE_CONFIG_ENGINE_KERNEL, 1,
			  NUMAPLACE_A_CONFIG_BATCH_PAGES,
			  "engine=kernel batch_pages=1", &r);
	gn_expect_refused(_metadata, self, -1, -1, 0, "nothing to set", &r);

	/* The bounds themselves are good. */
	EXPECT_EQ(0, np_gn_config_set(&self->g.nl, -1, GN_BATCH_MIN))
		TH_LOG("%s", self->g.nl.ext.msg);
	ASSERT_EQ(0, np_gn_config_get(&self->g.nl, &c));
	EXPECT_EQ(GN_BATCH_MIN, c.batch_pages);
	EXPECT_EQ(0, np_gn_config_set(&self->g.nl, -1, GN_BATCH_MAX))
		TH_LOG("%s", self->g.nl.ext.msg);
	ASSERT_EQ(0, np_gn_config_get(&self->g.nl, &c));
	EXPECT_EQ(GN_BATCH_MAX, c.batch_pages);
	ret = np_gn_config_set(&self->g.nl, self->g.saved.engine, self->g.saved.batch_pages);
	EXPECT_EQ(0, ret);
}

/* Migrate @n pages of @p (bound to node @from) to @to, no engine flag. */
static int gn_migrate_default(int fd, char *p, size_t n, int to,
			      struct numaplace_migrate *m)
{
	return np_migrate_node(fd, 0, 0, (uintptr_t)p, n * psz, to, NULL, m);
}

TEST_F_TIMEOUT(genl, config_roundtrip_engine, NP_TIMEOUT(NP_GN_TIMEOUT))
{
	static const struct {
		__u32 config, engine;
	} engines[] = {
		{ NUMAPLACE_CONFIG_ENGINE_KERNEL, NUMAPLACE_ENGINE_KERNEL },
		{ NUMAPLACE_CONFIG_ENGINE_VMA, NUMAPLACE_ENGINE_VMA },
		{ NUMAPLACE_CONFIG_ENGINE_BATCH, NUMAPLACE_ENGINE_BATCH },
	};
	const size_t n = 64;
	struct numaplace_migrate m;
	struct np_gn_config c;
	int to = 1;
	char *p;

	NP_SKIPPED();
	NP_GN_NEED_TWO_NODES();
	p = np_pmd_map(n * psz, 0);
	ASSERT_NE(NULL, p);
	ASSERT_EQ(0, np_touch_on(p, 0, n, 0));

	for (size_t i = 0; i < sizeof(engines) / sizeof(engines[0]); i++) {
		if (!(self->g.engines & engines[i].engine))
			continue;
		ASSERT_EQ(0, np_gn_config_set(&self->g.nl, engines[i].config, 1024))
			TH_LOG("engine %u: %s", engines[i].config, self->g.nl.ext.msg);
		ASSERT_EQ(0, np_gn_config_get(&self->g.nl, &c));
		EXPECT_EQ(engines[i].config, c.engine);
		EXPECT_EQ(1024, c.batch_pages);
		/* Private anonymous 4 KiB pages: every engine takes them. */
		ASSERT_EQ(0, gn_migrate_default(self->g.fd, p, n, to, &m));
		EXPECT_EQ(n, m.nr_moved_pages) TH_LOG("engine %u", engines[i].config);
		EXPECT_EQ(engines[i].engine, m.engines)
			TH_LOG("configured %u, used %#x", engines[i].config, m.engines);
		to = !to;
	}
	ASSERT_EQ(0, np_gn_config_set(&self->g.nl, NUMAPLACE_CONFIG_ENGINE_AUTO,
				   self->g.saved.batch_pages));
	ASSERT_EQ(0, np_gn_config_get(&self->g.nl, &c));
	EXPECT_EQ(NUMAPLACE_CONFIG_ENGINE_AUTO, c.engine);
	ASSERT_EQ(0, gn_migrate_default(self->g.fd, p, n, to, &m));
	EXPECT_EQ(n, m.nr_moved_pages);
	EXPECT_EQ(0, m.engines & ~self->g.engines);
	/* An explicit engine flag wins over the configured engine. */
	if ((self->g.engines & NUMAPLACE_ENGINE_VMA) &&
	    (self->g.engines & NUMAPLACE_ENGINE_KERNEL)) {
		ASSERT_EQ(0, np_gn_config_set(&self->g.nl, NUMAPLACE_CONFIG_ENGINE_VMA, -1));
		ASSERT_EQ(0, np_migrate_node(self->g.fd, 0, NUMAPLACE_MIGRATE_ENGINE_KERNEL,
					     (uintptr_t)p, n * psz, !to, NULL, &m));
		EXPECT_EQ(NUMAPLACE_ENGINE_KERNEL, m.engines);
	}
	munmap(p, n * psz);
}

/*
 * The batched engine's copy knobs: every worker count and the DMA switch
 * move every page with its data; without a DMA channel (the guest has
 * none) every page of a DMA copy is counted as a CPU fallback, with one
 * each is counted once; out-of-range values are refused and change
 * nothing.
 */
TEST_F_TIMEOUT(genl, batch_workers_dma, NP_TIMEOUT(NP_GN_TIMEOUT))
{
	static const __u32 workers[] = { 1, 2, 8, 0 };
	const size_t n = 1024;	/* 2 shares of at least NP_COPY_SHARE_MIN */
	struct numaplace_migrate m;
	struct np_gn_stats a, b;
	struct np_gn_config c;
	int to = 1, bad;
	char *p;

	NP_SKIPPED();
	NP_GN_NEED_TWO_NODES();
	if (!(self->g.engines & NUMAPLACE_ENGINE_BATCH))
		SKIP(return, "no batched engine");
	p = np_pmd_map(n * psz, 0);
	ASSERT_NE(NULL, p);
	ASSERT_EQ(0, np_touch_on(p, 0, n, 0));
	for (size_t w = 0; w < sizeof(workers) / sizeof(workers[0]); w++) {
		for (__u32 dma = 0; dma <= 1; dma++) {
			ASSERT_EQ(0, np_gn_config_set_u32(&self->g.nl,
					NUMAPLACE_A_CONFIG_COPY_WORKERS, workers[w]))
				TH_LOG("%s", self->g.nl.ext.msg);
			ASSERT_EQ(0, np_gn_config_set_u32(&self->g.nl,
					NUMAPLACE_A_CONFIG_DMA, dma));
			ASSERT_EQ(0, np_gn_config_get(&self->g.nl, &c));
			EXPECT_EQ(workers[w], c.copy_workers);
			EXPECT_EQ(dma, c.dma);
			ASSERT_EQ(0, np_gn_stats(&self->g.nl, &a));
			ASSERT_EQ(0, np_migrate_node(self->g.fd, 0, NUMAPLACE_MIGRATE_ENGINE_BATCH,
						     (uintptr_t)p, n * psz, to, NULL, &m));
			ASSERT_EQ(0, np_gn_stats(&self->g.nl, &b));
			EXPECT_EQ(n, m.nr_moved_pages)
				TH_LOG("workers %u dma %u", workers[w], dma);
			EXPECT_EQ(NUMAPLACE_ENGINE_BATCH, m.engines);
			bad = 0;
			for (size_t i = 0; i < n; i++)
				for (size_t k = 0; k < psz; k += 512)
					bad += (unsigned char)p[i * psz + k] != 1 + (int)(i % 251);
			EXPECT_EQ(0, bad) TH_LOG("workers %u dma %u", workers[w], dma);
			EXPECT_EQ(dma ? n : 0, (b.dma_pages - a.dma_pages) +
					       (b.dma_fallback - a.dma_fallback));
			to = !to;
		}
	}
	/* Out of range: refused with the attribute named, nothing changed. */
	EXPECT_NE(0, np_gn_config_set_u32(&self->g.nl, NUMAPLACE_A_CONFIG_COPY_WORKERS, 9));
	EXPECT_NE(0, np_gn_config_set_u32(&self->g.nl, NUMAPLACE_A_CONFIG_DMA, 2));
	ASSERT_EQ(0, np_gn_config_get(&self->g.nl, &c));
	EXPECT_EQ(0, c.copy_workers);
	EXPECT_EQ(1, c.dma);
	EXPECT_EQ(0, np_gn_config_set_u32(&self->g.nl, NUMAPLACE_A_CONFIG_DMA, 0));
	munmap(p, n * psz);
}

NP_HARNESS_MAIN
