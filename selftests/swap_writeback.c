// SPDX-License-Identifier: GPL-2.0
/*
 * Migration while anonymous pages are swapped out and faulted back in
 * with their swap writeback in flight (issue 14, item 1). A page whose
 * write to swap has started can be mapped again (do_swap_page() finds it
 * in the swap cache) before the write ends; migrate_vma_setup() then
 * collects it, and migrate_vma_pages() BUG()s on a folio under writeback
 * (migrate_folio_extra() on 6.1, __migrate_device_pages() on 6.12): the
 * kernel's own migration waits for writeback, the device-migration API
 * does not. So no swap-cache or writeback page may reach the VMA or the
 * batched engine.
 *
 * The swap device is the guest's virtio-blk disk (tools/vm/run
 * --swap-disk), whose writes complete asynchronously; zram writes
 * synchronously and never shows the window; its writes are throttled so
 * that a page stays under writeback for a while. One thread pages random
 * windows of a buffer out (MADV_PAGEOUT: unmapped, written to swap, left
 * in the swap cache under writeback), two fault pages back in (half of
 * them from the last windows paged out; each page's every word checked
 * against its stamp), and the test
 * migrates windows of the buffer between nodes 0 and 1 on each engine,
 * for NP_WB_SECONDS (default 20) seconds a variant. On a module that gives
 * such pages to migrate_vma_pages() the guest's kernel hits the BUG, the
 * child dies and the run fails; here: no crash, every byte as stamped,
 * and pages both swapped in and moved (else the test proved nothing).
 */
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/swap.h>
#include <sys/wait.h>

#include "np_test.h"
#include "kselftest_harness.h"

#define NP_WB_DISK		"/dev/vda"
#define NP_WB_BUF_MB		32
/* Pages per MIGRATE call: many short calls, many setups. */
#define NP_WB_WINDOW		256
/* Pages per MADV_PAGEOUT, and the pause after each (the disk is slow). */
#define NP_WB_PAGEOUT		64
#define NP_WB_PAGEOUT_US	250000
#define NP_WB_SECONDS		20
#define NP_WB_THREADS		2
/*
 * The pager's last windows, where the faulters fault half their pages and
 * the test looks for pages mapped under writeback: a scan of the whole
 * buffer took seconds on a debug kernel, and found the writeback over.
 */
#define NP_WB_RECENT		8
#define NP_WB_WORDS		(4096 / sizeof(__u64))

/* Exit codes of the child. */
enum { NP_WB_OK, NP_WB_SETUP, NP_WB_IOCTL, NP_WB_DATA, NP_WB_NOTHING };

struct np_wb {
	__u64 *buf;
	size_t nr_pages;
	volatile int stop;
	long bad;		/* words not as stamped, seen by the faulters */
	/* First pages of the pager's last windows; nr_out: windows so far. */
	volatile size_t recent[NP_WB_RECENT];
	volatile unsigned long nr_out;
};

/* A page of one of the pager's last windows, or any page before one. */
static size_t np_wb_recent_page(const struct np_wb *w, unsigned int *seed)
{
	unsigned long n = w->nr_out;

	if (!n)
		return rand_r(seed) % w->nr_pages;
	n = n < NP_WB_RECENT ? n : NP_WB_RECENT;
	return w->recent[rand_r(seed) % n] + rand_r(seed) % NP_WB_PAGEOUT;
}

static void np_wb_stamp(__u64 *page, size_t i)
{
	for (size_t k = 0; k < NP_WB_WORDS; k++)
		page[k] = np_stamp_word(i, 1, k);
}

static long np_wb_check(const __u64 *page, size_t i)
{
	long bad = 0;

	for (size_t k = 0; k < NP_WB_WORDS; k++)
		bad += page[k] != np_stamp_word(i, 1, k);
	return bad;
}

/*
 * Fault pages back in (read), checking each whole: every other one from
 * the pager's last windows (their writeback may still be on), the rest
 * anywhere.
 */
static void *np_wb_faulter(void *arg)
{
	struct np_wb *w = arg;
	unsigned int seed = (uintptr_t)&seed;
	long bad = 0;

	while (!w->stop) {
		size_t i = rand_r(&seed) & 1 ? np_wb_recent_page(w, &seed) :
			   rand_r(&seed) % w->nr_pages;

		bad += np_wb_check(w->buf + i * NP_WB_WORDS, i);
	}
	__atomic_add_fetch(&w->bad, bad, __ATOMIC_RELAXED);
	return NULL;
}

/* Page random windows out: the pages' writeback starts, and lasts. */
static void *np_wb_pager(void *arg)
{
	struct np_wb *w = arg;
	unsigned int seed = (uintptr_t)&seed;

	while (!w->stop) {
		size_t i = rand_r(&seed) % (w->nr_pages - NP_WB_PAGEOUT);

		madvise(w->buf + i * NP_WB_WORDS, NP_WB_PAGEOUT * 4096UL,
			MADV_PAGEOUT);
		w->recent[w->nr_out % NP_WB_RECENT] = i;
		__atomic_add_fetch(&w->nr_out, 1, __ATOMIC_RELEASE);
		usleep(NP_WB_PAGEOUT_US);
	}
	return NULL;
}

/*
 * The pages of the pager's last windows mapped while under writeback
 * right now (the window: pagemap says present, kpageflags says
 * writeback), at most @max of them into @addrs. Their count.
 */
static size_t np_wb_window(const struct np_wb *w, int pm, int kpf,
			   __u64 *addrs, size_t max)
{
	unsigned long nr = w->nr_out;
	size_t n = 0;
	__u64 e, f;

	nr = nr < NP_WB_RECENT ? nr : NP_WB_RECENT;
	for (size_t k = 0; k < nr * NP_WB_PAGEOUT && n < max; k++) {
		size_t i = w->recent[k / NP_WB_PAGEOUT] + k % NP_WB_PAGEOUT;
		uintptr_t va = (uintptr_t)(w->buf + i * NP_WB_WORDS);

		if (pread(pm, &e, 8, va / 4096 * 8) != 8 ||
		    !(e & NP_PM_PRESENT) ||
		    pread(kpf, &f, 8, (e & NP_PM_PFN_MASK) * 8) != 8)
			continue;
		if (f & (1ULL << KPF_WRITEBACK))
			addrs[n++] = va;
	}
	return n;
}

/*
 * Keep of @addrs[@n] the pages not on the target, the node the first
 * page is not on (move_pages(2) asked), into *@target: a page named for
 * the node it is on would only be found there. The count kept.
 */
static size_t np_wb_off_target(__u64 *addrs, size_t n, int *st,
			       int *target)
{
	size_t kept = 0;

	if (np_sys_move_pages(0, n, addrs, NULL, st, 0) < 0 || st[0] < 0)
		return 0;
	*target = !st[0];
	for (size_t k = 0; k < n; k++)
		if (st[k] >= 0 && st[k] != *target)
			addrs[kept++] = addrs[k];
	return kept;
}

/* The child: churn and migrate for @secs. Its exit code. */
static int np_wb_child(__u32 eflags, long secs)
{
	struct np_wb w = { .nr_pages = NP_WB_BUF_MB * 256UL };
	pthread_t th[NP_WB_THREADS + 1];
	long end, hard_end, calls = 0, moved = 0, pswpout, seen = 0;
	__u64 addrs[NP_WB_WINDOW];
	__s32 st[NP_WB_WINDOW];
	long named_moved = 0, named_busy = 0;
	unsigned int seed = getpid();
	struct numaplace_migrate m;
	int fd, pm, kpf, ret = NP_WB_OK, win_node = 0;

	fd = np_open();
	pm = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	kpf = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || pm < 0 || kpf < 0)
		return NP_WB_SETUP;
	w.buf = mmap(NULL, w.nr_pages * 4096, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (w.buf == MAP_FAILED)
		return NP_WB_SETUP;
	madvise(w.buf, w.nr_pages * 4096, MADV_NOHUGEPAGE);
	for (size_t i = 0; i < w.nr_pages; i++)
		np_wb_stamp(w.buf + i * NP_WB_WORDS, i);
	pswpout = np_vmstat("pswpout");
	for (int t = 0; t <= NP_WB_THREADS; t++)
		if (pthread_create(&th[t], NULL, t ? np_wb_faulter : np_wb_pager,
				   &w))
			return NP_WB_SETUP;
	end = np_mono_ms() + secs * 1000;
	hard_end = np_mono_ms() + secs * 1000 * np_time_scale();
	/*
	 * Odd rounds: the pages mapped under writeback, moved by address
	 * (what an unfixed module BUG()s on at once) to the node they are
	 * not on (np_wb_off_target()); even rounds
	 * (and odd ones that find none): a random window, to nodes 1 and 0 in
	 * turn (the buffer starts on one node: a random window sent to it
	 * moves nothing), where pages that are not in the swap cache move on
	 * every engine. Past @secs, until both have happened (a debug
	 * kernel's guest made 4 calls in 20 s), for at most @secs times the
	 * tests' time scale.
	 */
	while (np_mono_ms() < end ||
	       ((!moved || !seen) && np_mono_ms() < hard_end)) {
		size_t i = rand_r(&seed) % (w.nr_pages - NP_WB_WINDOW);
		size_t n = calls & 1 ? np_wb_window(&w, pm, kpf, addrs,
						    NP_WB_WINDOW) : 0;
		int target = 1;

		n = n ? np_wb_off_target(addrs, n, st, &target) : 0;
		seen += n;
		if (n) {
			np_migrate_init(&m, 0, eflags | NUMAPLACE_MIGRATE_PAGES,
					NUMAPLACE_POLICY_NODE);
			m.pages_ptr = (uintptr_t)addrs;
			m.count = n;
			m.node = target;
			m.status_ptr = (uintptr_t)st;
			ret = np_migrate(fd, &m);
			for (size_t k = 0; !ret && k < n; k++) {
				named_moved += st[k] == m.node;
				named_busy += st[k] == -EBUSY;
			}
		} else {
			win_node ^= 1;
			ret = np_migrate_node(fd, 0, eflags,
					      (uintptr_t)(w.buf + i * NP_WB_WORDS),
					      NP_WB_WINDOW * 4096UL, win_node,
					      NULL, &m);
		}
		if (ret) {
			fprintf(stderr, "# MIGRATE: %s\n", strerror(-ret));
			ret = NP_WB_IOCTL;
			break;
		}
		moved += m.nr_moved_pages;
		calls++;
	}
	w.stop = 1;
	for (int t = 0; t <= NP_WB_THREADS; t++)
		pthread_join(th[t], NULL);
	pswpout = np_vmstat("pswpout") - pswpout;
	for (size_t i = 0; i < w.nr_pages; i++)
		w.bad += np_wb_check(w.buf + i * NP_WB_WORDS, i);
	fprintf(stderr, "# %ld calls, %ld pages moved, %ld swapped out, %ld bad words\n",
		calls, moved, pswpout, w.bad);
	fprintf(stderr, "# %ld pages named while mapped under writeback: %ld moved, %ld -EBUSY\n",
		seen, named_moved, named_busy);
	if (ret)
		return ret;
	if (w.bad)
		return NP_WB_DATA;
	return moved && seen > 0 ? NP_WB_OK : NP_WB_NOTHING;
}

FIXTURE(swap_wb)
{
	int fd;
	int swap_on;	/* this test enabled the disk */
};

/*
 * Not the kernel engine: migrate_pages() waits for writeback, and the
 * window this test holds open is the device-migration engines' (above).
 */
NP_ENGINE_FIXTURE_VARIANT(swap_wb);
NP_ENGINE_VARIANT(swap_wb, vma);
NP_ENGINE_VARIANT(swap_wb, batch);
NP_ENGINE_VARIANT(swap_wb, default);

FIXTURE_SETUP(swap_wb)
{
	struct numaplace_info info;
	int ret;

	self->fd = np_open();
	if (self->fd == -ENOENT)
		SKIP(return, "no " NUMAPLACE_DEVICE " (module not loaded)");
	ASSERT_GE(self->fd, 0);
	ASSERT_EQ(0, np_get_info(self->fd, &info));
	if (variant->feature && !(info.features & variant->feature))
		SKIP(return, "engine not available here");
	if (!np_node_isset(info.node_memory, 1))
		SKIP(return, "needs a node 1 with memory");
	if (geteuid())
		SKIP(return, "needs root (swapon)");
	if (access(NP_WB_DISK, F_OK))
		SKIP(return, "no swap disk %s (tools/vm/run --swap-disk)",
		     NP_WB_DISK);
	np_write_str("/proc/sys/kernel/numa_balancing", "0");
	/* Above zram (if any): this disk takes the writeback. */
	ret = swapon(NP_WB_DISK, SWAP_FLAG_PREFER |
		     (32767 & SWAP_FLAG_PRIO_MASK));
	ASSERT_TRUE(!ret || errno == EBUSY) TH_LOG("swapon: %s",
						   strerror(errno));
	self->swap_on = !ret;
}

FIXTURE_TEARDOWN(swap_wb)
{
	if (self->swap_on)
		EXPECT_EQ(0, swapoff(NP_WB_DISK)) TH_LOG("swapoff: %s",
							 strerror(errno));
	if (self->fd >= 0)
		close(self->fd);
}

TEST_F_TIMEOUT(swap_wb, refault_during_writeback, NP_TIMEOUT(180))
{
	const char *env = getenv("NP_WB_SECONDS");
	long secs = env ? strtol(env, NULL, 10) : NP_WB_SECONDS;
	int status;
	pid_t pid;

	if (_metadata->skip)
		return;
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid)
		_exit(np_wb_child(variant->flags, secs));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status)) TH_LOG("child killed by signal %d",
					      WTERMSIG(status));
	EXPECT_EQ(NP_WB_OK, WEXITSTATUS(status));
}

NP_HARNESS_MAIN
