// SPDX-License-Identifier: GPL-2.0
/*
 * The "numaplace" generic netlink family's "events" group, read with the
 * CLI's client (np_genl.h):
 *  - event_*: a listener of "events" gets one MIGRATE_DONE per call, whose
 *    fields are the ioctl's (own pages, another process's, a failed call);
 *  - unload_with_listener: the module goes and comes back while a socket
 *    is in its group and an event is queued; the socket stays usable
 *    (the runner checks the kernel log). The module is loaded at the end.
 */
#include <sys/mman.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "migrate_lib.h"
#include "np_genl.h"

static long psz;

static void __attribute__((constructor)) genl_event_page_size(void)
{
	psz = sysconf(_SC_PAGESIZE);
}

/* Open @l and join the "events" group. 0 or -errno. */
static int ge_listen(struct np_nl *l)
{
	int ret = np_gn_open(l);

	return ret ? ret : np_nl_group(l, l->events_grp, 1);
}

/* Resolve the family and its "events" group again on @l. 0 or -errno. */
static int ge_resolve(struct np_nl *l)
{
	return np_nl_resolve(l, NUMAPLACE_FAMILY_NAME, &l->family,
			     NUMAPLACE_MCGRP_EVENTS, &l->events_grp);
}

NP_GN_FIXTURE(genl_event);

/* Events of own calls: the fields are the ioctl's. One per call. */
TEST_F_TIMEOUT(genl_event, event_migrate, NP_TIMEOUT(NP_GN_TIMEOUT))
{
	const size_t n = 48;
	struct numaplace_migrate m;
	struct np_gn_event ev;
	struct np_nl l;
	__s32 status[48];
	char *p;

	NP_SKIPPED();
	NP_GN_NEED_TWO_NODES();
	ASSERT_EQ(0, ge_listen(&l));
	p = np_pmd_map(n * psz, 0);
	ASSERT_NE(NULL, p);
	/* 40 written pages, 8 never touched: failures in the event too. */
	ASSERT_EQ(0, np_touch_on(p, 0, 40, 0));

	ASSERT_EQ(0, np_migrate_node(self->g.fd, 0, 0,
				     (uintptr_t)p, n * psz, 1, status, &m));
	ASSERT_EQ(0, np_gn_events(&l, &ev, NP_GN_EVENT_MS));
	ASSERT_EQ(1, ev.got);
	EXPECT_EQ(getpid(), ev.ev.pid);
	EXPECT_EQ(m.nr_moved_pages, ev.ev.pages);
	EXPECT_EQ(40, ev.ev.pages);
	EXPECT_EQ(m.nr_moved_pages * psz, ev.ev.bytes);
	EXPECT_EQ(m.engines, ev.ev.engines);
	EXPECT_EQ(m.nr_failed_pages, ev.ev.failed);
	EXPECT_EQ(8, ev.ev.failed);
	EXPECT_EQ(0, ev.ev.error);
	EXPECT_LT(0, ev.ev.duration_ns);

	/* Nothing moved (all in place): still one event, zeros. */
	ASSERT_EQ(0, np_migrate_node(self->g.fd, 0, 0,
				     (uintptr_t)p, 40 * psz, 1, NULL, &m));
	ASSERT_EQ(0, np_gn_events(&l, &ev, NP_GN_EVENT_MS));
	ASSERT_EQ(1, ev.got);
	EXPECT_EQ(0, ev.ev.pages);
	EXPECT_EQ(0, ev.ev.engines);
	EXPECT_EQ(0, ev.ev.failed);
	EXPECT_EQ(0, ev.ev.error);

	/* A call that fails: its error is in the event. */
	for (int node = 0; node < (int)self->g.info.nr_node_ids; node++) {
		int ret;

		if (!np_node_isset(self->g.info.node_online, node) ||
		    np_node_isset(self->g.info.node_memory, node))
			continue;
		ret = np_migrate_node(self->g.fd, 0, 0,
				      (uintptr_t)p, n * psz, node, NULL, &m);
		EXPECT_EQ(-ENODEV, ret) TH_LOG("to memoryless node %d", node);
		ASSERT_EQ(0, np_gn_events(&l, &ev, NP_GN_EVENT_MS));
		EXPECT_EQ(1, ev.got);
		EXPECT_EQ(ENODEV, ev.ev.error);
		EXPECT_EQ(0, ev.ev.pages);
		EXPECT_EQ(getpid(), ev.ev.pid);
		break;
	}
	munmap(p, n * psz);
	np_nl_close(&l);
}

/* Another process's pages: the event names it. */
TEST_F_TIMEOUT(genl_event, event_other_process, NP_TIMEOUT(NP_GN_TIMEOUT))
{
	const size_t n = 16;
	struct numaplace_migrate m;
	struct np_gn_event ev;
	struct np_nl l;
	int pipefd[2], status;
	char c = 0, *p;
	pid_t child;

	NP_SKIPPED();
	NP_GN_NEED_TWO_NODES();
	ASSERT_EQ(0, ge_listen(&l));
	p = np_pmd_map(n * psz, 0);
	ASSERT_NE(NULL, p);
	ASSERT_EQ(0, pipe(pipefd));
	child = fork();
	ASSERT_GE(child, 0);
	if (!child) {
		/* Its own copies of the pages, on node 0. */
		if (np_touch_on(p, 0, n, 0))
			_exit(1);
		if (write(pipefd[1], &c, 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	ASSERT_EQ(1, read(pipefd[0], &c, 1));
	EXPECT_EQ(0, np_migrate_node(self->g.fd, child, 0,
				     (uintptr_t)p, n * psz, 1, NULL, &m));
	EXPECT_EQ(n, m.nr_moved_pages);
	EXPECT_EQ(0, np_gn_events(&l, &ev, NP_GN_EVENT_MS));
	EXPECT_EQ(1, ev.got);
	EXPECT_EQ(child, ev.ev.pid);
	EXPECT_EQ(m.nr_moved_pages, ev.ev.pages);
	EXPECT_EQ(m.engines, ev.ev.engines);
	EXPECT_EQ(m.nr_failed_pages, ev.ev.failed);
	kill(child, SIGKILL);
	waitpid(child, &status, 0);
	close(pipefd[0]);
	close(pipefd[1]);
	munmap(p, n * psz);
	np_nl_close(&l);
}

/*
 * Unload the module while a socket listens, with an event queued on it;
 * load it again: the socket still works, joins the new group and gets
 * the next event. The runner fails the run on any kernel report.
 */
TEST_F_TIMEOUT(genl_event, unload_with_listener, NP_TIMEOUT(NP_GN_TIMEOUT))
{
	struct numaplace_migrate m;
	struct np_gn_event ev;
	struct np_nl l;
	const size_t n = 8;
	char *p;
	int fd, ret;

	NP_SKIPPED();
	NP_GN_NEED_TWO_NODES();
	if (!np_ko_found("numaplace"))
		SKIP(return, "no numaplace.ko in " NP_KO_WHERE);
	p = np_pmd_map(n * psz, 0);
	ASSERT_NE(NULL, p);
	ASSERT_EQ(0, np_touch_on(p, 0, n, 0));
	ASSERT_EQ(0, ge_listen(&l));
	/* An event left unread in the listener's queue. */
	ASSERT_EQ(0, np_migrate_node(self->g.fd, 0, 0,
				     (uintptr_t)p, n * psz, 1, NULL, &m));

	/* Nothing of ours may hold the module. */
	close(self->g.fd);
	self->g.fd = -1;
	np_nl_close(&self->g.nl);
	self->g.unloaded = 1;
	ret = np_module_unload();
	ASSERT_EQ(0, ret) TH_LOG("delete_module: %s", strerror(-ret));
	ASSERT_FALSE(np_module_loaded());
	/* The queued event outlives the module (read it before anything
	 * else is asked on the socket: a request's reader skips events).
	 */
	ASSERT_EQ(0, np_gn_events(&l, &ev, 0));
	EXPECT_EQ(1, ev.got);
	EXPECT_EQ(n, ev.ev.pages);
	EXPECT_EQ(-ENOENT, ge_resolve(&l));

	ret = np_module_load();
	ASSERT_EQ(0, ret) TH_LOG("finit_module: %s", strerror(-ret));
	fd = np_open();
	ASSERT_GE(fd, 0);
	self->g.fd = fd;
	ASSERT_EQ(0, np_gn_open(&self->g.nl));
	/* The kernel dropped the listener from the old group. */
	ASSERT_EQ(0, np_migrate_node(self->g.fd, 0, 0,
				     (uintptr_t)p, n * psz, 0, NULL, &m));
	ASSERT_EQ(0, np_gn_events(&l, &ev, 200));
	EXPECT_EQ(0, ev.got);
	/* The same socket resolves the new family and joins its group. */
	ASSERT_EQ(0, ge_resolve(&l));
	ASSERT_EQ(0, np_nl_group(&l, l.events_grp, 1));
	ASSERT_EQ(0, np_migrate_node(self->g.fd, 0, 0,
				     (uintptr_t)p, n * psz, 1, NULL, &m));
	ASSERT_EQ(0, np_gn_events(&l, &ev, NP_GN_EVENT_MS));
	EXPECT_EQ(1, ev.got);
	EXPECT_EQ(n, ev.ev.pages);
	np_nl_close(&l);
	munmap(p, n * psz);
	EXPECT_TRUE(np_module_loaded());
}

NP_HARNESS_MAIN
