// SPDX-License-Identifier: GPL-2.0
/*
 * A buffer pinned for as long as the test runs, written by the kernel all
 * along, while NUMAPLACE_IOC_MIGRATE moves it, once per engine (fixture
 * "migrate_pin_writer", migrate.c's NP_MIG_FIXTURE(); issue 35, item 6).
 *
 * migrate_busy.c's pins (process_vm_readv(2)) pass; race.c's
 * pinned_vmsplice holds a reference, not a pin. Here the pin is
 * long-term: io_uring fixed buffers (IORING_REGISTER_BUFFERS pins the
 * pages FOLL_LONGTERM, folio_maybe_dma_pinned() is true), and the kernel
 * writes them through its own mapping of the pages, never through the
 * process's page tables: a pinned page that a migration moved anyway
 * would take the kernel's writes in the old page while the process maps
 * the new one, and the data would be lost without a fault.
 *
 * The region is NP_PIN_HEAD unpinned pages, NP_PIN_PAGES pinned (the one
 * registered iovec) and NP_PIN_TAIL unpinned, 4 KiB pages faulted in on
 * node 0. A reader thread, again and again, writes a new generation of
 * stamps into a memfd, reads the memfd into the pinned pages with
 * IORING_OP_READ_FIXED (NP_PIN_SQES reads of NP_PIN_CHUNK pages) and, once
 * they complete, compares the pinned pages through the process's mapping
 * with what it wrote. The main thread meanwhile moves the whole region to
 * node 1 and back, for NP_RACE_MS (race.c's length) and NP_PIN_MIN_ROUNDS
 * at least. Asserted:
 *  - each call answers every pinned page -EBUSY when asked to move it off
 *    node 0 and 0 (in place) when asked to node 0; every unpinned page its
 *    target; the counters add up (a busy page counted in nr_failed[EBUSY]);
 *  - after each call every pinned page is still the same frame
 *    (/proc/self/pagemap) on node 0, every unpinned one on the target
 *    (move_pages(2) without nodes);
 *  - every read's data is what the process sees (nothing lost), reads
 *    completed during the calls, the unpinned pages keep their stamps;
 *  - move_pages(2) on the pinned pages leaves them too (it returns the
 *    number it could not move and leaves their statuses unwritten: the
 *    module answers -EBUSY where the syscall says nothing per page);
 *  - once the buffers are unregistered every page moves, its data intact
 *    (the pin was what kept them).
 *
 * It fails when an engine moves a pinned page (a new frame in pagemap, the
 * next read's data not visible: both asserted), answers a status that is
 * not true (a node for a page left behind, -EBUSY for one moved or
 * unpinned), or leaves an unpinned neighbour behind. No engine moves a
 * pinned page by one slip (the page-table engine checks the pin at unmap
 * and the reference count before the copy and at the move; the others
 * rely on the kernel's same checks), so the failure was shown with what
 * such a move leaves, made by hand: after the fourth call, pinned page 5
 * replaced in the mapping by a copy of itself (mmap(MAP_FIXED) of the
 * page, its bytes copied back). 6.1, every variant failed: the reads'
 * data not visible there (501 to 871 pages not as read), a new frame
 * from that call on, and the copy, no longer pinned, answered with its
 * target where -EBUSY was expected.
 *
 * Skipped where io_uring is not built (ENOSYS) or disabled
 * (kernel.io_uring_disabled, EPERM), without the engine, or nodes 0 and 1.
 */
#include <linux/io_uring.h>
#include <linux/mempolicy.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/uio.h>

#include "migrate_lib.h"
#include "race_lib.h"
#include "kselftest_harness.h"

/* Pinned pages (one registered buffer): 256 KiB. */
#define NP_PIN_PAGES		64
/* Unpinned pages before and after them in the same mapping. */
#define NP_PIN_HEAD		32
#define NP_PIN_TAIL		32
#define NP_PIN_ALL		(NP_PIN_HEAD + NP_PIN_PAGES + NP_PIN_TAIL)
/* One IORING_OP_READ_FIXED reads this many pages; all of them at once. */
#define NP_PIN_CHUNK		16
#define NP_PIN_SQES		(NP_PIN_PAGES / NP_PIN_CHUNK)
/* Moves at least, however long they take. */
#define NP_PIN_MIN_ROUNDS	8
/* Stamp generations of the unpinned parts (np_fill()). */
#define NP_PIN_HEAD_GEN		11
#define NP_PIN_TAIL_GEN		12
/* Isolated pages are back on the LRU this soon after the last move. */
#define NP_PIN_SETTLE_MS	2000
#define NP_PIN_DISABLED		"/proc/sys/kernel/io_uring_disabled"

static long psz;

NP_MIG_FIXTURE(migrate_pin_writer)

/* An io_uring instance, its rings mapped (raw system calls, no liburing). */
struct np_ring {
	int fd;
	void *sq_map, *cq_map;
	size_t sq_len, cq_len, sqes_len;
	unsigned int *sq_tail, *sq_mask, *sq_array;
	unsigned int *cq_head, *cq_tail, *cq_mask;
	struct io_uring_sqe *sqes;
	struct io_uring_cqe *cqes;
};

/* The region and what the reader thread shares with the main thread. */
struct np_pin {
	char *buf;		/* NP_PIN_ALL pages */
	char *pinned;		/* buf + NP_PIN_HEAD pages */
	char *src;		/* the reader's generation, as written */
	int memfd;
	struct np_ring ring;
	atomic_int stop;
	atomic_int in_call;	/* the main thread's call is in flight */
	/* The reader's, read by the main thread after the join. */
	long reads;		/* rounds of NP_PIN_SQES reads checked */
	long overlapped;	/* ... with a call in flight at start or end */
	long bad_pages;		/* pinned pages not as read */
	long errors;		/* failed steps (logged) */
};

static int np_ring_open(struct np_ring *r, unsigned int entries)
{
	struct io_uring_params p;

	memset(&p, 0, sizeof(p));
	r->fd = syscall(__NR_io_uring_setup, entries, &p);
	if (r->fd < 0)
		return -errno;
	r->sq_len = p.sq_off.array + p.sq_entries * sizeof(__u32);
	r->cq_len = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	r->sqes_len = p.sq_entries * sizeof(struct io_uring_sqe);
	r->sq_map = mmap(NULL, r->sq_len, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQ_RING);
	r->cq_map = mmap(NULL, r->cq_len, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_CQ_RING);
	r->sqes = mmap(NULL, r->sqes_len, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQES);
	if (r->sq_map == MAP_FAILED || r->cq_map == MAP_FAILED ||
	    r->sqes == MAP_FAILED)
		return -ENOMEM;
	r->sq_tail = (unsigned int *)((char *)r->sq_map + p.sq_off.tail);
	r->sq_mask = (unsigned int *)((char *)r->sq_map + p.sq_off.ring_mask);
	r->sq_array = (unsigned int *)((char *)r->sq_map + p.sq_off.array);
	r->cq_head = (unsigned int *)((char *)r->cq_map + p.cq_off.head);
	r->cq_tail = (unsigned int *)((char *)r->cq_map + p.cq_off.tail);
	r->cq_mask = (unsigned int *)((char *)r->cq_map + p.cq_off.ring_mask);
	r->cqes = (struct io_uring_cqe *)((char *)r->cq_map + p.cq_off.cqes);
	return 0;
}

static void np_ring_close(struct np_ring *r)
{
	if (r->sqes && r->sqes != MAP_FAILED)
		munmap(r->sqes, r->sqes_len);
	if (r->cq_map && r->cq_map != MAP_FAILED)
		munmap(r->cq_map, r->cq_len);
	if (r->sq_map && r->sq_map != MAP_FAILED)
		munmap(r->sq_map, r->sq_len);
	if (r->fd >= 0)
		close(r->fd);
	r->fd = -1;
}

/*
 * Read the first NP_PIN_PAGES pages of @fd into the registered buffer
 * (index 0) at @dst, NP_PIN_SQES reads of NP_PIN_CHUNK pages, and wait
 * for all of them. 0, or -errno (a short read: -EIO).
 */
static int np_ring_read_fixed(struct np_ring *r, int fd, char *dst)
{
	unsigned int tail = *r->sq_tail, mask = *r->sq_mask, head;
	size_t chunk = NP_PIN_CHUNK * psz;
	int done = 0, ret = 0;
	long n;

	for (int c = 0; c < NP_PIN_SQES; c++) {
		unsigned int idx = (tail + c) & mask;
		struct io_uring_sqe *sqe = &r->sqes[idx];

		memset(sqe, 0, sizeof(*sqe));
		sqe->opcode = IORING_OP_READ_FIXED;
		sqe->fd = fd;
		sqe->addr = (uintptr_t)dst + c * chunk;
		sqe->len = chunk;
		sqe->off = c * chunk;
		sqe->buf_index = 0;
		sqe->user_data = c;
		r->sq_array[idx] = idx;
	}
	__atomic_store_n(r->sq_tail, tail + NP_PIN_SQES, __ATOMIC_RELEASE);
	do {
		n = syscall(__NR_io_uring_enter, r->fd, NP_PIN_SQES,
			    NP_PIN_SQES, IORING_ENTER_GETEVENTS, NULL, 0);
	} while (n < 0 && errno == EINTR);
	if (n != NP_PIN_SQES)
		return n < 0 ? -errno : -EIO;
	head = *r->cq_head;
	while (done < NP_PIN_SQES) {
		if (head == __atomic_load_n(r->cq_tail, __ATOMIC_ACQUIRE)) {
			n = syscall(__NR_io_uring_enter, r->fd, 0, 1,
				    IORING_ENTER_GETEVENTS, NULL, 0);
			if (n < 0 && errno != EINTR)
				return -errno;
			continue;
		}
		if (r->cqes[head & *r->cq_mask].res != (int)chunk && !ret)
			ret = r->cqes[head & *r->cq_mask].res < 0 ?
			      r->cqes[head & *r->cq_mask].res : -EIO;
		head++;
		done++;
	}
	__atomic_store_n(r->cq_head, head, __ATOMIC_RELEASE);
	return ret;
}

/* Log the first few of the reader's failures. */
#define np_pin_log(x, fmt, ...)						\
	do {								\
		if ((x)->errors + (x)->bad_pages < NP_RC_LOG_MAX)	\
			ksft_print_msg(fmt "\n", ##__VA_ARGS__);	\
	} while (0)

/*
 * The pinned writer: a new generation of stamps into the memfd, read into
 * the pinned pages by io_uring, then compared through the mapping.
 */
static void *np_pin_reader(void *arg)
{
	struct np_pin *x = arg;
	const size_t len = NP_PIN_PAGES * psz;

	for (__u64 gen = 1; !atomic_load(&x->stop); gen++) {
		int busy, ret;

		for (size_t i = 0; i < NP_PIN_PAGES; i++) {
			__u64 *w = (__u64 *)(x->src + i * psz);

			for (size_t k = 0; k < psz / 8; k++)
				w[k] = np_stamp_word(i, gen, k);
		}
		if (pwrite(x->memfd, x->src, len, 0) != (ssize_t)len) {
			np_pin_log(x, "memfd write: %s", strerror(errno));
			x->errors++;
			break;
		}
		busy = atomic_load(&x->in_call);
		ret = np_ring_read_fixed(&x->ring, x->memfd, x->pinned);
		busy |= atomic_load(&x->in_call);
		if (ret) {
			np_pin_log(x, "READ_FIXED: %s", strerror(-ret));
			x->errors++;
			break;
		}
		for (size_t i = 0; i < NP_PIN_PAGES; i++) {
			if (!memcmp(x->pinned + i * psz, x->src + i * psz, psz))
				continue;
			np_pin_log(x, "generation %llu: page %zu (pinned) not as read (word 0 %#llx, read %#llx)",
				   (unsigned long long)gen, NP_PIN_HEAD + i,
				   *(unsigned long long *)(x->pinned + i * psz),
				   *(unsigned long long *)(x->src + i * psz));
			x->bad_pages++;
		}
		x->reads++;
		x->overlapped += busy;
	}
	return NULL;
}

/* The frames of the pinned pages (pagemap; root sees them). 0 or -errno. */
static int np_pin_pfns(const struct np_pin *x, __u64 *pfn)
{
	int fd = open("/proc/self/pagemap", O_RDONLY);
	off_t off = (uintptr_t)x->pinned / psz * sizeof(*pfn);
	ssize_t got;

	if (fd < 0)
		return -errno;
	got = pread(fd, pfn, NP_PIN_PAGES * sizeof(*pfn), off);
	close(fd);
	if (got != (ssize_t)(NP_PIN_PAGES * sizeof(*pfn)))
		return -EIO;
	for (size_t i = 0; i < NP_PIN_PAGES; i++)
		pfn[i] = (pfn[i] & NP_PM_PRESENT) ? pfn[i] & NP_PM_PFN_MASK : 0;
	return 0;
}

/*
 * After a call to @node: pinned pages the same frames (@pfn0) on node 0,
 * unpinned ones on @node. Returns the pages that are not (logged while
 * they and @seen, those found before, are under NP_RC_LOG_MAX).
 */
static long np_pin_where(struct __test_metadata *_metadata,
			 const struct np_pin *x, const __u64 *pfn0,
			 int node, const char *what, long seen)
{
	__u64 addrs[NP_PIN_ALL], pfn[NP_PIN_PAGES];
	int where[NP_PIN_ALL];
	long bad = 0;

	np_range_addrs(addrs, (uintptr_t)x->buf, NP_PIN_ALL);
	if (np_nodes_of(0, addrs, NP_PIN_ALL, where) || np_pin_pfns(x, pfn))
		return NP_PIN_ALL;
	for (size_t i = 0; i < NP_PIN_ALL; i++) {
		size_t k = i - NP_PIN_HEAD;
		int pinned = i >= NP_PIN_HEAD && k < NP_PIN_PAGES;
		int want = pinned ? 0 : node;

		if (where[i] == want && (!pinned || pfn[k] == pfn0[k]))
			continue;
		if (seen + bad++ < NP_RC_LOG_MAX)
			TH_LOG("%s: page %zu (%s) on %d (want %d), pfn %#llx (was %#llx)",
			       what, i, pinned ? "pinned" : "unpinned",
			       where[i], want,
			       pinned ? (unsigned long long)pfn[k] : 0ULL,
			       pinned ? (unsigned long long)pfn0[k] : 0ULL);
	}
	return bad;
}

/* Unpinned pages that lost their stamps. */
static size_t np_pin_stamps_bad(const struct np_pin *x)
{
	size_t first;

	return np_fill_bad(x->buf, NP_PIN_HEAD, NP_PIN_HEAD_GEN, &first) +
	       np_fill_bad(x->pinned + NP_PIN_PAGES * psz, NP_PIN_TAIL,
			   NP_PIN_TAIL_GEN, &first);
}

/*
 * The ring, the memfd and the registered buffer: 0, 1 (skip: why in
 * @why) or -errno (the failed step in @why).
 */
static int np_pin_open(struct np_pin *x, char *why, size_t len)
{
	struct iovec iov = { x->pinned, NP_PIN_PAGES * psz };
	char dis[16] = "?";
	int ret;

	ret = np_ring_open(&x->ring, NP_PIN_SQES);
	if (ret == -ENOSYS || ret == -EPERM) {
		np_read_str(NP_PIN_DISABLED, dis, sizeof(dis));
		snprintf(why, len, "io_uring_setup: %s (kernel.io_uring_disabled %s)",
			 strerror(-ret), dis);
		return 1;
	}
	if (ret) {
		snprintf(why, len, "io_uring_setup: %s", strerror(-ret));
		return ret;
	}
	x->memfd = memfd_create("np-pin-writer", MFD_CLOEXEC);
	if (x->memfd < 0 || ftruncate(x->memfd, NP_PIN_PAGES * psz)) {
		snprintf(why, len, "memfd: %s", strerror(errno));
		return -errno;
	}
	if (syscall(__NR_io_uring_register, x->ring.fd,
		    IORING_REGISTER_BUFFERS, &iov, 1)) {
		snprintf(why, len, "IORING_REGISTER_BUFFERS: %s",
			 strerror(errno));
		return -errno;
	}
	return 0;
}

TEST_F_TIMEOUT(migrate_pin_writer, read_fixed_pinned, NP_TIMEOUT(60))
{
	NP_SKIPPED_OR_FILTERED();
	static __s32 st[NP_PIN_ALL + 1];
	struct np_pin x = { .memfd = -1, .ring = { .fd = -1 } };
	__u64 pfn0[NP_PIN_PAGES], addrs[NP_PIN_PAGES];
	int nodes[NP_PIN_PAGES], sys_st[NP_PIN_PAGES];
	long rounds, bad = 0, where = 0, t0, sys, anon0, file0, anon, file;
	long first = -1;
	struct numaplace_migrate m;
	__u32 engines = 0;
	int at = -1, last = 0;	/* the unpinned pages' node */
	size_t stamps;
	pthread_t th;
	int ret;

	x.buf = np_pmd_map(NP_PIN_ALL * psz, 0);
	x.src = malloc(NP_PIN_PAGES * psz);
	ASSERT_TRUE(x.buf && x.src);
	x.pinned = x.buf + NP_PIN_HEAD * psz;
	ASSERT_EQ(0, np_mempolicy(MPOL_BIND, 0));
	np_fill(x.buf, NP_PIN_HEAD, NP_PIN_HEAD_GEN);
	memset(x.pinned, 0x5a, NP_PIN_PAGES * psz);
	np_fill(x.pinned + NP_PIN_PAGES * psz, NP_PIN_TAIL, NP_PIN_TAIL_GEN);
	ASSERT_EQ(0, np_mempolicy(MPOL_DEFAULT, -1));
	if (NP_OPEN_SETUP(np_pin_open, &x))
		return;
	ASSERT_EQ(0, np_pin_pfns(&x, pfn0));
	ASSERT_EQ(0, np_pin_where(_metadata, &x, pfn0, 0, "registered", 0));
	ASSERT_EQ(0, np_isolated(&anon0, &file0));

	ASSERT_EQ(0, pthread_create(&th, NULL, np_pin_reader, &x));
	NP_RC_ROUNDS(rounds, t0, NP_PIN_MIN_ROUNDS) {
		int node = NP_RC_ROUND_NODE(rounds);
		char what[32];

		st[NP_PIN_ALL] = NP_SENTINEL;
		atomic_store(&x.in_call, 1);
		ret = np_migrate_node(self->fd, 0, self->eflags,
				      (uintptr_t)x.buf, NP_PIN_ALL * psz, node,
				      st, &m);
		atomic_store(&x.in_call, 0);
		if (ret == -EOPNOTSUPP && !rounds) {
			atomic_store(&x.stop, 1);
			pthread_join(th, NULL);
			SKIP(return, "the engine answers EOPNOTSUPP");
		}
		ASSERT_EQ(0, ret) TH_LOG("round %ld: %s", rounds, strerror(-ret));
		NP_ROUND_DONE(self, m, st, NP_PIN_ALL, rounds, what);
		engines |= m.engines;
		for (size_t i = 0; i < NP_PIN_ALL; i++) {
			int pinned = i >= NP_PIN_HEAD &&
				     i < NP_PIN_HEAD + NP_PIN_PAGES;
			int want = !pinned ? node : node ? -EBUSY : 0;

			if (st[i] == want)
				continue;
			if (bad++ < NP_RC_LOG_MAX)
				TH_LOG("round %ld: page %zu (%s) answered %d, want %d",
				       rounds, i, pinned ? "pinned" : "unpinned",
				       st[i], want);
		}
		where += np_pin_where(_metadata, &x, pfn0, node, what, where);
		last = node;
	}
	atomic_store(&x.stop, 1);
	pthread_join(th, NULL);
	stamps = np_pin_stamps_bad(&x);
	ksft_print_msg("%ld rounds, %ld reads of %d pages (%ld during a call), engines %#x\n",
		       rounds, x.reads, NP_PIN_PAGES, x.overlapped, engines);
	EXPECT_EQ(0, bad);
	EXPECT_EQ(0, where);
	EXPECT_EQ(0, x.errors);
	EXPECT_EQ(0, x.bad_pages);
	EXPECT_EQ(0, stamps);
	/* The writer wrote while the calls ran. */
	EXPECT_LT(0, x.overlapped);
	if (self->eflags == NUMAPLACE_MIGRATE_ENGINE_PT) {
		EXPECT_EQ(NUMAPLACE_ENGINE_PT, engines);
	}

	/* The kernel's own answer for the same pinned pages. */
	np_range_addrs(addrs, (uintptr_t)x.pinned, NP_PIN_PAGES);
	for (size_t i = 0; i < NP_PIN_PAGES; i++) {
		nodes[i] = 1;
		sys_st[i] = NP_SENTINEL;
	}
	sys = np_sys_move_pages(0, NP_PIN_PAGES, addrs, nodes, sys_st,
				NP_MF_MOVE);
	ksft_print_msg("move_pages(2) of the pinned pages to node 1: %ld, %zu of %d statuses unwritten\n",
		       sys, np_count(sys_st, NP_PIN_PAGES, NP_SENTINEL),
		       NP_PIN_PAGES);
	EXPECT_LT(0, sys);
	EXPECT_EQ(0, np_pin_where(_metadata, &x, pfn0, last, "move_pages", 0));

	/* Unpinned, every page moves, its data intact. */
	ASSERT_EQ(0, syscall(__NR_io_uring_register, x.ring.fd,
			     IORING_UNREGISTER_BUFFERS, NULL, 0));
	ASSERT_EQ(0, np_migrate_node(self->fd, 0, self->eflags,
				     (uintptr_t)x.buf, NP_PIN_ALL * psz, 1,
				     st, &m));
	EXPECT_EQ(0, np_pages_not_on(0, x.buf, NP_PIN_ALL, 1, &first, &at))
		TH_LOG("unregistered: page %ld on node %d", first, at);
	EXPECT_EQ(NP_PIN_ALL, np_count_s32(st, NP_PIN_ALL, 1));
	EXPECT_EQ(NP_PIN_PAGES + (last ? 0 : NP_PIN_HEAD + NP_PIN_TAIL),
		  m.nr_moved_pages);
	EXPECT_EQ(0, memcmp(x.pinned, x.src, NP_PIN_PAGES * psz));
	EXPECT_EQ(0, np_pin_stamps_bad(&x));

	ASSERT_EQ(0, np_isolated_settle(anon0, file0, NP_PIN_SETTLE_MS,
					&anon, &file));
	EXPECT_LE(anon, anon0);
	np_ring_close(&x.ring);
	close(x.memfd);
	munmap(x.buf, NP_PIN_ALL * psz);
	free(x.src);
}

NP_HARNESS_MAIN
