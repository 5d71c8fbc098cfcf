// SPDX-License-Identifier: GPL-2.0
/*
 * userfaultfd write protection (uffd-wp) changed while
 * NUMAPLACE_IOC_MIGRATE moves the pages, once per engine (fixture
 * "migrate_wp_race", migrate.c's NP_MIG_FIXTURE(); issue 35, item 6).
 *
 * migrate_pt.c's uffd_wp_kept moves a range protected before the call.
 * Here the protection changes during the call: UFFDIO_WRITEPROTECT runs
 * change_protection() under the mmap lock held for read, as the migration
 * does, so it meets the call's migration entries; it sets or clears their
 * swap uffd-wp bit (and makes a writable entry readable). The page-table
 * engine rewrites the PTEs itself at restore: it must take the bit, and
 * the write permission, from the entry it finds then, not from the PTE it
 * unmapped. The other engines restore through the kernel's
 * remove_migration_pte() (the controls).
 *
 * A private anonymous region of NP_WP_PAGES 4 KiB pages (MADV_NOHUGEPAGE),
 * stamped on node 0, registered with UFFDIO_REGISTER_MODE_WP, moves to
 * node 1 and back, round after round, for NP_RACE_MS (race.c's length,
 * 1.5 s by default; NP_WP_MIN_ROUNDS at least). In each round a toggler
 * thread protects and unprotects random runs of pages (up to NP_WP_RUN_MAX)
 * for exactly as long as the call is in flight, and remembers what it last
 * did to each page. After each round, with the toggler stopped:
 *  - every page is present (no migration entry left) and its pagemap
 *    uffd-wp bit (57) is what the toggler last made it;
 *  - every byte holds its stamp, every page is on the target node (its
 *    status is the node) and the call's counters add up;
 *  - each unprotected page is written (its own word again) without a
 *    trap: its PTE is writable again for the next round (unprotecting
 *    leaves it read-only on 6.1), the case where a protection in flight
 *    turns the call's writable migration entry into a read-only one;
 * and over the race the toggler met migration entries (pagemap's swap bit
 * right after its change: the race took place), each with the bit it had
 * just set or cleared. After the last round a write to every page: each
 * protected page traps (a UFFD_EVENT_PAGEFAULT with UFFD_PAGEFAULT_FLAG_WP,
 * read by a handler thread that then unprotects the page and lets the
 * write go on), no unprotected one does, and every write lands.
 * NP_WP_SEED replays the toggler's choices (the seed is printed; the
 * race's timing is not replayed).
 *
 * It fails when an engine restores a page with the uffd-wp bit or the
 * write permission its PTE had at unmap time (a page protected mid-call
 * comes back writable: bit 57 clear, its write does not trap; a page
 * unprotected mid-call comes back protected: its write traps), when a
 * restore drops the entry's bit (uffd_wp_kept fails too then), or when a
 * page loses its bytes. Seen failing, 6.1, with a page-table engine that
 * remembers at unmap whether the entry it made was writable and maps the
 * new page writable (and without the uffd-wp bit) from that: default and
 * pt failed (900 and 1233 page states wrong over the rounds, 17 protected
 * pages written without a trap at the end), kernel, vma and batch passed,
 * and so did migrate_pt.c's uffd_wp_kept: only a change in flight shows it.
 *
 * Skipped without uffd-wp on anonymous memory (UFFDIO_REGISTER_MODE_WP
 * refused, or pagemap without bit 57), the engine, or nodes 0 and 1.
 */
#include <linux/mempolicy.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/mman.h>

#include "migrate_lib.h"
#include "race_lib.h"
#include "kselftest_harness.h"

/* Pages of the region: 4 MiB, a few dozen moves in NP_RACE_MS under TCG. */
#define NP_WP_PAGES		1024
/* Pages one toggle protects or unprotects, at most. */
#define NP_WP_RUN_MAX		64
/* Rounds at least, however long they take. */
#define NP_WP_MIN_ROUNDS	4
/* The stamp generation of the region (np_fill()). */
#define NP_WP_GEN		7
#define NP_PM_UFFD_WP		(1ULL << 57)
/* The handler's poll(2) timeout: how soon it sees its stop flag. */
#define NP_WP_POLL_MS		20
/* Isolated pages are back on the LRU this soon after the last move. */
#define NP_WP_SETTLE_MS		2000

static long psz;

NP_MIG_FIXTURE(migrate_wp_race)

/* The region, its userfaultfd and what the threads share. */
struct np_wp {
	char *buf;
	int uffd;
	int pm_fd;		/* /proc/self/pagemap */
	unsigned char *exp;	/* per page: 1 when last protected */
	__u64 rng;
	/* The toggler's round: ready, then the call in flight, then done. */
	atomic_int ready;
	atomic_int phase;	/* 0 before the call, 1 in it, 2 after */
	/* Counted by the toggler, read by the main thread after a join. */
	long ops;		/* UFFDIO_WRITEPROTECT calls */
	long errors;		/* ... that failed */
	long hits;		/* migration entries seen right after one */
	long odd_hits;		/* ... whose bit was not the one just set */
	/* The write-fault handler, all along the test. */
	atomic_int stop;
	unsigned char *trapped;	/* per page: write faults seen */
	long not_wp;		/* page faults without UFFD_PAGEFAULT_FLAG_WP */
	long other;		/* other messages, or outside the region */
	long resolve_errors;	/* unprotects that failed (the writer waits) */
};

/* Protect (@on) or unprotect @n pages from page @first. 0 or -errno. */
static int np_wp_set(const struct np_wp *w, size_t first, size_t n, int on)
{
	struct uffdio_writeprotect wp = {
		.range = { (uintptr_t)w->buf + first * psz, n * psz },
		.mode = on ? UFFDIO_WRITEPROTECT_MODE_WP : 0,
	};

	return ioctl(w->uffd, UFFDIO_WRITEPROTECT, &wp) ? -errno : 0;
}

/* pagemap entries of @n pages from page @first. 0 or -errno. */
static int np_wp_pagemap(const struct np_wp *w, size_t first, size_t n,
			 __u64 *pm)
{
	off_t off = ((uintptr_t)w->buf / psz + first) * sizeof(*pm);
	ssize_t got = pread(w->pm_fd, pm, n * sizeof(*pm), off);

	return got == (ssize_t)(n * sizeof(*pm)) ? 0 : -EIO;
}

/*
 * One round's toggler: random runs protected or unprotected while the
 * main thread's call is in flight (phase 1), each followed by a look at
 * the run's pagemap entries: a migration entry there is the race.
 */
static void *np_wp_toggler(void *arg)
{
	struct np_wp *w = arg;
	__u64 pm[NP_WP_RUN_MAX];

	atomic_store(&w->ready, 1);
	while (!atomic_load(&w->phase))
		;
	while (atomic_load(&w->phase) == 1) {
		size_t first = np_rnd_below(&w->rng, NP_WP_PAGES);
		size_t n = 1 + np_rnd_below(&w->rng, NP_WP_RUN_MAX);
		int on = np_rnd_below(&w->rng, 2);

		if (first + n > NP_WP_PAGES)
			n = NP_WP_PAGES - first;
		if (np_wp_set(w, first, n, on)) {
			w->errors++;
			break;
		}
		memset(w->exp + first, on, n);
		w->ops++;
		if (np_wp_pagemap(w, first, n, pm)) {
			w->errors++;
			break;
		}
		for (size_t k = 0; k < n; k++) {
			if (!(pm[k] & NP_PM_SWAP))
				continue;
			w->hits++;
			w->odd_hits += !!(pm[k] & NP_PM_UFFD_WP) != on;
		}
	}
	return NULL;
}

/*
 * After a round: every page present with the uffd-wp bit the toggler
 * left, every byte its stamp. Returns the number of bad pages (logged).
 */
static long np_wp_check(struct __test_metadata *_metadata,
			const struct np_wp *w, long round)
{
	static __u64 pm[NP_WP_PAGES];
	long bad = 0;
	size_t first = 0, stamps;

	if (np_wp_pagemap(w, 0, NP_WP_PAGES, pm))
		return NP_WP_PAGES;
	for (size_t i = 0; i < NP_WP_PAGES; i++) {
		int got = !!(pm[i] & NP_PM_UFFD_WP);

		if ((pm[i] & NP_PM_PRESENT) && !(pm[i] & NP_PM_SWAP) &&
		    got == w->exp[i])
			continue;
		if (bad++ < NP_RC_LOG_MAX)
			TH_LOG("round %ld page %zu: pagemap %#llx, uffd-wp %d, expected %d",
			       round, i, (unsigned long long)pm[i], got,
			       w->exp[i]);
	}
	stamps = np_fill_bad(w->buf, NP_WP_PAGES, NP_WP_GEN, &first);
	if (stamps)
		TH_LOG("round %ld: %zu pages lost their stamp, the first %zu",
		       round, stamps, first);
	return bad + stamps;
}

/*
 * The trap check's handler: each write fault on the region is counted
 * for its page and resolved by unprotecting the page (which wakes the
 * writer), until told to stop.
 */
static void *np_wp_handler(void *arg)
{
	struct np_wp *w = arg;

	while (!atomic_load(&w->stop)) {
		struct pollfd pfd = { .fd = w->uffd, .events = POLLIN };
		struct uffd_msg msg;
		size_t i;

		if (poll(&pfd, 1, NP_WP_POLL_MS) <= 0)
			continue;
		if (read(w->uffd, &msg, sizeof(msg)) != sizeof(msg))
			continue;
		i = (msg.arg.pagefault.address - (uintptr_t)w->buf) / psz;
		if (msg.event != UFFD_EVENT_PAGEFAULT ||
		    msg.arg.pagefault.address < (uintptr_t)w->buf ||
		    i >= NP_WP_PAGES) {
			w->other++;
			continue;
		}
		w->not_wp += !(msg.arg.pagefault.flags & UFFD_PAGEFAULT_FLAG_WP);
		w->trapped[i]++;
		if (np_wp_set(w, i, 1, 0))
			w->resolve_errors++;
	}
	return NULL;
}

/*
 * Between rounds, word 0 of every unprotected page written again with
 * what it holds, as an application writes its memory: its PTE is
 * writable again (unprotecting leaves it read-only on 6.1), so the next
 * round unmaps it writable, the case a protection in flight changes. None
 * may trap. Returns the pages that did (logged).
 */
static long np_wp_rewrite(struct __test_metadata *_metadata, struct np_wp *w,
			  long round)
{
	long bad = 0;

	for (size_t i = 0; i < NP_WP_PAGES; i++) {
		volatile __u64 *p = (volatile __u64 *)(w->buf + i * psz);

		if (!w->exp[i])
			*p = *p;
	}
	for (size_t i = 0; i < NP_WP_PAGES; i++) {
		if (!w->trapped[i])
			continue;
		if (bad++ < NP_RC_LOG_MAX)
			TH_LOG("round %ld page %zu: not protected, its write trapped",
			       round, i);
		w->trapped[i] = 0;
	}
	return bad;
}

/*
 * A write to word 0 of every page: the protected ones must trap, once,
 * the others not; every write must land. Returns the bad pages (logged).
 */
static long np_wp_traps(struct __test_metadata *_metadata, struct np_wp *w)
{
	__u64 *orig = calloc(NP_WP_PAGES, sizeof(*orig));
	long bad = 0, nprot = 0;
	size_t first = 0;

	if (!orig)
		return NP_WP_PAGES;
	for (size_t i = 0; i < NP_WP_PAGES; i++) {
		volatile __u64 *p = (volatile __u64 *)(w->buf + i * psz);

		orig[i] = *p;
		*p = ~orig[i];
	}
	for (size_t i = 0; i < NP_WP_PAGES; i++) {
		__u64 *p = (__u64 *)(w->buf + i * psz);

		nprot += w->exp[i];
		if (w->trapped[i] == w->exp[i] && *p == ~orig[i])
			continue;
		if (bad++ < NP_RC_LOG_MAX)
			TH_LOG("page %zu: %s, %u write faults, word %#llx (wrote %#llx)",
			       i, w->exp[i] ? "protected" : "not protected",
			       w->trapped[i], (unsigned long long)*p,
			       (unsigned long long)~orig[i]);
	}
	TH_LOG("writes: %ld pages protected, %ld bad; faults without the WP flag %ld, other messages %ld",
	       nprot, bad, w->not_wp, w->other);
	/* The rest of each page is untouched: put word 0 back, compare all. */
	for (size_t i = 0; i < NP_WP_PAGES; i++)
		*(__u64 *)(w->buf + i * psz) = orig[i];
	if (np_fill_bad(w->buf, NP_WP_PAGES, NP_WP_GEN, &first)) {
		TH_LOG("after the writes: page %zu lost its stamp", first);
		bad++;
	}
	free(orig);
	return bad + w->not_wp + w->other + w->resolve_errors;
}

/*
 * The region registered for write protection; 0, 1 (skip: why in @why)
 * or -errno.
 */
static int np_wp_open(struct np_wp *w, char *why, size_t len)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = {
		.range = { (uintptr_t)w->buf, NP_WP_PAGES * psz },
		.mode = UFFDIO_REGISTER_MODE_WP,
	};
	__u64 pm;

	w->uffd = syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (w->uffd < 0) {
		snprintf(why, len, "no userfaultfd: %s", strerror(errno));
		return 1;
	}
	if (ioctl(w->uffd, UFFDIO_API, &api) ||
	    ioctl(w->uffd, UFFDIO_REGISTER, &reg) ||
	    !(reg.ioctls & (1ULL << _UFFDIO_WRITEPROTECT))) {
		snprintf(why, len, "no uffd-wp on anonymous memory: %s",
			 strerror(errno));
		return 1;
	}
	if (np_wp_set(w, 0, 1, 1)) {
		snprintf(why, len, "UFFDIO_WRITEPROTECT: %s", strerror(errno));
		return 1;
	}
	if (np_wp_pagemap(w, 0, 1, &pm))
		return -EIO;
	if (!(pm & NP_PM_UFFD_WP)) {
		snprintf(why, len, "pagemap shows no uffd-wp bit");
		return 1;
	}
	return np_wp_set(w, 0, 1, 0);
}

TEST_F_TIMEOUT(migrate_wp_race, toggled_in_flight, NP_TIMEOUT(60))
{
	NP_SKIPPED_OR_FILTERED();
	static __s32 st[NP_WP_PAGES + 1];
	struct np_wp w = { .uffd = -1 };
	long rounds, bad = 0, off = 0, traps = 0, anon0, file0, anon, file, t0;
	__u32 engines = 0;
	const char *seed = getenv("NP_WP_SEED");
	pthread_t handler;
	int ret;

	w.rng = seed ? strtoull(seed, NULL, 0) : (__u64)time(NULL) * 2654435761U;
	w.rng |= 1;
	ksft_print_msg("seed %#llx (NP_WP_SEED)\n", (unsigned long long)w.rng);
	w.exp = calloc(NP_WP_PAGES, 1);
	w.trapped = calloc(NP_WP_PAGES, 1);
	ASSERT_TRUE(w.exp && w.trapped);
	w.buf = np_pmd_map(NP_WP_PAGES * psz, 0);
	ASSERT_NE(NULL, w.buf);
	ASSERT_EQ(0, np_mempolicy(MPOL_BIND, 0));
	np_fill(w.buf, NP_WP_PAGES, NP_WP_GEN);
	ASSERT_EQ(0, np_mempolicy(MPOL_DEFAULT, -1));
	w.pm_fd = open("/proc/self/pagemap", O_RDONLY);
	ASSERT_LE(0, w.pm_fd);
	if (NP_OPEN_SETUP(np_wp_open, &w))
		return;
	ASSERT_EQ(0, np_isolated(&anon0, &file0));
	ASSERT_EQ(0, pthread_create(&handler, NULL, np_wp_handler, &w));

	NP_RC_ROUNDS(rounds, t0, NP_WP_MIN_ROUNDS) {
		int node = NP_RC_ROUND_NODE(rounds);
		struct numaplace_migrate m;
		char what[32];
		pthread_t th;

		atomic_store(&w.ready, 0);
		atomic_store(&w.phase, 0);
		ASSERT_EQ(0, pthread_create(&th, NULL, np_wp_toggler, &w));
		while (!atomic_load(&w.ready))
			;
		st[NP_WP_PAGES] = NP_SENTINEL;
		atomic_store(&w.phase, 1);
		ret = np_migrate_node(self->fd, 0, self->eflags,
				      (uintptr_t)w.buf, NP_WP_PAGES * psz,
				      node, st, &m);
		atomic_store(&w.phase, 2);
		pthread_join(th, NULL);
		if (ret == -EOPNOTSUPP && !rounds)
			SKIP(return, "the engine answers EOPNOTSUPP");
		ASSERT_EQ(0, ret) TH_LOG("round %ld: %s", rounds, strerror(-ret));
		ASSERT_EQ(0, w.errors) TH_LOG("UFFDIO_WRITEPROTECT or pagemap failed");
		NP_ROUND_DONE(self, m, st, NP_WP_PAGES, rounds, what);
		engines |= m.engines;
		for (size_t i = 0; i < NP_WP_PAGES; i++) {
			if (st[i] == node)
				continue;
			if (off++ < NP_RC_LOG_MAX)
				TH_LOG("round %ld page %zu: status %d, target %d",
				       rounds, i, st[i], node);
		}
		bad += np_wp_check(_metadata, &w, rounds);
		traps += np_wp_rewrite(_metadata, &w, rounds);
	}
	ksft_print_msg("%ld rounds, %ld toggles, %ld migration entries met (%ld with another bit), engines %#x\n",
		       rounds, w.ops, w.hits, w.odd_hits, engines);
	EXPECT_EQ(0, bad);
	EXPECT_EQ(0, off);
	EXPECT_EQ(0, traps);
	/* The race took place: the toggles met the calls' migration entries. */
	EXPECT_LT(0, w.hits);
	EXPECT_EQ(0, w.odd_hits);
	if (self->eflags == NUMAPLACE_MIGRATE_ENGINE_PT) {
		EXPECT_EQ(NUMAPLACE_ENGINE_PT, engines);
	}

	/* The protection works as pagemap says: writes trap where protected. */
	EXPECT_EQ(0, np_wp_traps(_metadata, &w));
	atomic_store(&w.stop, 1);
	pthread_join(handler, NULL);

	ASSERT_EQ(0, np_isolated_settle(anon0, file0, NP_WP_SETTLE_MS,
					&anon, &file));
	EXPECT_LE(anon, anon0);
	close(w.uffd);
	close(w.pm_fd);
	munmap(w.buf, NP_WP_PAGES * psz);
	free(w.exp);
	free(w.trapped);
}

NP_HARNESS_MAIN
