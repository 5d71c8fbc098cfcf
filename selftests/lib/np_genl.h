/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The generic netlink tests' helpers (genl*.c; np_genl_util.c): the
 * family's STATS_GET dump, CONFIG_GET/SET and MIGRATE_DONE events read
 * with the CLI's client (tools/lib/nl/nl.h, libnp_nl.a), and the state
 * every genl fixture starts from. Include after kselftest_harness.h.
 */
#ifndef NP_GENL_H
#define NP_GENL_H

#include "np_test.h"
#include "nl.h"

/* Nodes, folio orders, errnos and engines the tests keep counters for. */
#define NP_GN_NODES	64
#define NP_GN_ORDERS	32
#define NP_GN_ERRNOS	256
#define NP_GN_ENGINES	3
#define NP_GN_PMD	(2UL << 20)
#define NP_GN_THP_ORDER	9
/* An event is sent before the ioctl returns: this is plenty. */
#define NP_GN_EVENT_MS	5000
/* A test that loads and unloads the module, or migrates, in TCG. */
#define NP_GN_TIMEOUT	120

struct np_gn_node {
	int seen;
	__u64 pages_in, pages_out;
	__u64 folios_in[NP_GN_ORDERS], folios_out[NP_GN_ORDERS];
};

/* One STATS_GET dump. */
struct np_gn_stats {
	int nr_global;			/* messages without a node */
	int nr_node_msgs;
	int order_ok;			/* node messages in increasing order */
	int last_node;
	__u64 query_calls, query_pages, query_runs, migrate_calls;
	__u64 bytes_copied;
	__u64 dma_pages, dma_fallback;
	__u64 migrate_retry_passes;
	/* The access scan: calls; pages answered, young, cleared; flushes. */
	__u64 access_calls, access_pages, access_young, access_cleared;
	__u64 access_flushes;
	__u64 fail[NP_GN_ERRNOS];	/* pages by positive errno, 0: other */
	__u64 phase_ns[NP_GN_ENGINES][NUMAPLACE_PHASE_MAX];
	struct np_gn_node node[NP_GN_NODES];
};

int np_gn_stats(struct np_nl *nl, struct np_gn_stats *s);

struct np_gn_config {
	long engine, batch_pages;	/* -1: absent */
	long copy_workers, dma;
};

int np_gn_config_get(struct np_nl *nl, struct np_gn_config *c);
/* Values below 0 are left out of the request. 0 or -errno (extack: nl->ext). */
int np_gn_config_set(struct np_nl *nl, long long engine, long long batch_pages);
/* Set one u32 knob. 0 or -errno. */
int np_gn_config_set_u32(struct np_nl *nl, __u16 attr, __u32 val);

/* The MIGRATE_DONE events read at once: the last one, and how many. */
struct np_gn_event {
	int got;
	struct np_nl_event ev;	/* pid, engines, error: -1 when absent */
};

/*
 * Read the events queued on @nl within @ms (0: only what is there). The
 * last one is in *@ev, ev->got counts them. 0 or -errno.
 */
int np_gn_events(struct np_nl *nl, struct np_gn_event *ev, int ms);

/* Open @nl quietly (the test prints) on the family. 0 or -errno. */
static inline int np_gn_open(struct np_nl *nl)
{
	return np_nl_open(nl, "genl", 1);
}

/* What every genl fixture holds. */
struct np_gn {
	int fd;
	struct np_nl nl;
	struct numaplace_info info;
	struct np_gn_config saved;	/* restored in the teardown */
	__u32 engines;			/* NUMAPLACE_ENGINE_* this host has */
	int unloaded;			/* the test unloads the module */
};

/*
 * Open the device and the family, save the knobs, turn NUMA balancing
 * off (its scanner would move and mark pages at random moments).
 * 0, -ENODEV (no device), -ENOENT (no family) or another -errno.
 */
int np_gn_setup(struct np_gn *g);

/*
 * Load a module a test unloaded, restore the knobs, close. 0, or the
 * error of restoring them (nl.ext says why).
 */
int np_gn_teardown(struct np_gn *g);

/* FIXTURE_SETUP()'s body for a fixture whose self->g is a struct np_gn. */
#define NP_GN_SETUP()							\
	do {								\
		int __ret = np_gn_setup(&self->g);			\
									\
		if (__ret == -ENODEV)					\
			SKIP(return, "no " NUMAPLACE_DEVICE " (module not loaded)"); \
		if (__ret == -ENOENT)					\
			SKIP(return, "no generic netlink family " NUMAPLACE_FAMILY_NAME); \
		ASSERT_EQ(0, __ret);					\
	} while (0)

#define NP_GN_TEARDOWN()						\
	EXPECT_EQ(0, np_gn_teardown(&self->g))				\
		TH_LOG("restoring the knobs: %s", self->g.nl.ext.msg)

/* A genl fixture @fx: self->g set up, and the knobs restored after. */
#define NP_GN_FIXTURE(fx)						\
	FIXTURE(fx) {							\
		struct np_gn g;						\
	};								\
	FIXTURE_SETUP(fx) { NP_GN_SETUP(); }				\
	FIXTURE_TEARDOWN(fx) { NP_GN_TEARDOWN(); }

/* Nodes 0 and 1 with memory, or SKIP. */
#define NP_GN_NEED_TWO_NODES()						\
	do {								\
		if (!np_node_isset(self->g.info.node_memory, 0) ||	\
		    !np_node_isset(self->g.info.node_memory, 1))	\
			SKIP(return, "needs nodes 0 and 1 with memory");\
	} while (0)

#endif /* NP_GENL_H */
