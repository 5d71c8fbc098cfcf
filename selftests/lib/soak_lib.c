// SPDX-License-Identifier: GPL-2.0
/*
 * The soak's builders (soak_lib.h): stamped buffers written by one
 * thread each (the fork child writes half of its buffer), each page's
 * last generation kept, and scratch regions that the churn thread maps,
 * unmaps, remaps, forks, advises and protects, checking their bytes after
 * each step; the churn thread also splits and collapses the THP buffer's
 * PMDs under its writer and the migrators.
 */
#include <linux/mempolicy.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "soak_lib.h"

const char *const np_sb_name[NP_SB_NR] = {
	"anon", "thp", "shared_fork", "memfd"
};

long np_soak_psz;
struct np_soak_shared *np_soak_sh;

/* xorshift64*: one state per thread, derived from the seed. */
__u64 np_rand(__u64 *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dULL;
}

unsigned long np_rand_below(__u64 *s, unsigned long n)
{
	return n ? np_rand(s) % n : 0;
}

__u64 np_word(int b, size_t i, __u64 g, size_t k)
{
	__u64 x = ((__u64)b << 56 | (i + 1)) * 0x9e3779b97f4a7c15ULL ^
		  g * 0xc2b2ae3d27d4eb4fULL;

	return x ^ (k * 0x165667b19e3779f9ULL) ^ (x >> 29);
}

int np_page_ok(const char *p, int b, size_t i, __u64 g)
{
	const volatile __u64 *w = (const __u64 *)p;

	for (size_t k = 0; k < np_soak_psz / 8; k++)
		if (w[k] != np_word(b, i, g, k))
			return 0;
	return 1;
}

void np_page_stamp(char *p, int b, size_t i, __u64 g)
{
	volatile __u64 *w = (__u64 *)p;

	for (size_t k = 0; k < np_soak_psz / 8; k++)
		w[k] = np_word(b, i, g, k);
}

/* Writer of buffer @b: pages i with i % stride == id. */
void np_write_loop(int b, size_t id, size_t stride)
{
	char *buf = np_soak_sh->buf[b];

	for (__u64 g = 1; !atomic_load(&np_soak_sh->stop); g++) {
		for (size_t i = id; i < np_soak_sh->n[b]; i += stride) {
			__u64 last = atomic_load(&np_soak_sh->gen[b][i]);

			if (!np_page_ok(buf + i * np_soak_psz, b, i, last))
				np_fail("%s page %zu: not generation %llu",
					np_sb_name[b], i,
					(unsigned long long)last);
			np_page_stamp(buf + i * np_soak_psz, b, i, g);
			atomic_store(&np_soak_sh->gen[b][i], g);
			atomic_fetch_add(&np_soak_sh->writes, 1);
		}
		usleep(NP_SOAK_WRITER_NAP_US);
	}
}

void *np_writer(void *arg)
{
	int b = (int)(intptr_t)arg;

	np_write_loop(b, 0, b == NP_SB_FORK ? 2 : 1);
	return NULL;
}

/* Pages of buffer @b not holding their last stamp; the first in *first. */
long np_bad_pages(int b, long *first)
{
	long bad = 0;

	for (size_t i = 0; i < np_soak_sh->n[b]; i++) {
		if (np_page_ok(np_soak_sh->buf[b] + i * np_soak_psz, b, i,
			       atomic_load(&np_soak_sh->gen[b][i])))
			continue;
		if (!bad)
			*first = i;
		bad++;
	}
	return bad;
}

void np_soak_child(void)
{
	long first = -1;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	for (size_t i = 0; i < np_soak_sh->n[NP_SB_FORK]; i++)
		(void)((volatile char *)np_soak_sh->buf[NP_SB_FORK])[i * np_soak_psz];
	atomic_store(&np_soak_sh->child_ready, 1);
	np_write_loop(NP_SB_FORK, 1, 2);
	atomic_store(&np_soak_sh->child_done, 1);
	while (!atomic_load(&np_soak_sh->verify))
		usleep(1000);
	atomic_store(&np_soak_sh->child_bad, np_bad_pages(NP_SB_FORK, &first));
	_exit(0);
}

/* ---- scratch regions: the churn thread's, the migrators' targets ---- */

struct np_slot np_soak_slots[NP_SOAK_SLOTS];

__u64 np_slot_word(int s, __u64 g, size_t k)
{
	return np_word(NP_SB_NR + s, k / (np_soak_psz / 8), g, k);
}

void np_slot_fill(int s)
{
	volatile __u64 *w = (__u64 *)atomic_load(&np_soak_slots[s].addr);

	np_soak_slots[s].gen++;
	np_soak_slots[s].zero = 0;
	for (size_t k = 0; k < np_soak_slots[s].len / 8; k++)
		w[k] = np_slot_word(s, np_soak_slots[s].gen, k);
}

/* 0 if scratch region @s at @addr holds what it should, else a word + 1. */
size_t np_slot_check(int s, uintptr_t addr)
{
	const volatile __u64 *w = (const __u64 *)addr;

	for (size_t k = 0; k < np_soak_slots[s].len / 8; k++)
		if (w[k] != (np_soak_slots[s].zero ? 0 : np_slot_word(s, np_soak_slots[s].gen, k)))
			return k + 1;
	return 0;
}

void np_slot_verify(int s, const char *after)
{
	size_t k = np_slot_check(s, atomic_load(&np_soak_slots[s].addr));

	if (k)
		np_fail("scratch %d after %s: word %zu (page %zu) wrong", s,
			after, k - 1, (k - 1) / (np_soak_psz / 8));
}

void np_slot_map(int s, __u64 *rs)
{
	size_t len = NP_SOAK_SLOT_PAGES * np_soak_psz;
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		np_fail("scratch %d: mmap: %s", s, strerror(errno));
		return;
	}
	np_soak_slots[s].len = len;
	atomic_store(&np_soak_slots[s].addr, (uintptr_t)p);
	np_slot_fill(s);
}

void np_slot_unmap(int s)
{
	uintptr_t a = atomic_exchange(&np_soak_slots[s].addr, 0);

	munmap((void *)a, np_soak_slots[s].len);
}

/* mremap: grow and move, move to a fixed spot, or move keeping the old. */
void np_slot_remap(int s, __u64 *rs)
{
	uintptr_t old = atomic_load(&np_soak_slots[s].addr);
	size_t len = np_soak_slots[s].len;
	int how = np_rand_below(rs, 3);
	void *p, *dst = NULL;

	if (how == 1) {
		dst = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
			   -1, 0);
		if (dst == MAP_FAILED) {
			np_fail("scratch %d: mmap: %s", s, strerror(errno));
			return;
		}
	}
	switch (how) {
	case 0:
		p = mremap((void *)old, len, len + np_soak_psz, MREMAP_MAYMOVE);
		break;
	case 1:
		p = mremap((void *)old, len, len, MREMAP_MAYMOVE | MREMAP_FIXED,
			   dst);
		break;
	default:
		/* new_address is read (a hint) with DONTUNMAP alone. */
		p = mremap((void *)old, len, len,
			   MREMAP_MAYMOVE | MREMAP_DONTUNMAP, NULL);
		break;
	}
	if (p == MAP_FAILED) {
		np_fail("scratch %d: mremap %d: %s", s, how, strerror(errno));
		if (dst)
			munmap(dst, len);
		return;
	}
	atomic_store(&np_soak_slots[s].addr, (uintptr_t)p);
	np_slot_verify(s, how == 0 ? "mremap grow" :
		       how == 1 ? "mremap fixed" : "mremap dontunmap");
	if (how == 0) {
		/* The new page is zero; make the whole region the pattern. */
		np_soak_slots[s].len = len + np_soak_psz;
		np_slot_fill(s);
	} else if (how == 2) {
		munmap((void *)old, len);
	}
}

/* fork: the child sees the same bytes, writes its copy, parent unchanged. */
void np_slot_fork(int s)
{
	uintptr_t a = atomic_load(&np_soak_slots[s].addr);
	int status;
	pid_t pid;

	pid = fork();
	if (pid < 0) {
		np_fail("fork: %s", strerror(errno));
		return;
	}
	if (pid == 0) {
		int bad = np_slot_check(s, a) != 0;

		memset((void *)a, 0x5a, np_soak_slots[s].len);
		_exit(bad ? 1 : 0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		np_fail("scratch %d: fork child status %#x", s, status);
	np_slot_verify(s, "fork");
}

void np_slot_advise(int s, __u64 *rs)
{
	static const int advice[] = { MADV_DONTNEED, MADV_FREE, MADV_PAGEOUT,
				      MADV_HUGEPAGE, MADV_NOHUGEPAGE,
				      MADV_COLLAPSE };
	int a = advice[np_rand_below(rs, sizeof(advice) / sizeof(advice[0]))];
	void *p = (void *)atomic_load(&np_soak_slots[s].addr);

	/* Errors are fine (no swap, no THP): the bytes are what counts. */
	madvise(p, np_soak_slots[s].len, a);
	if (a == MADV_DONTNEED) {
		np_soak_slots[s].zero = 1;
	} else if (a == MADV_FREE) {
		/* The kernel may or may not have dropped them: refill. */
		np_slot_fill(s);
		return;
	}
	np_slot_verify(s, "madvise");
	if (np_soak_slots[s].zero)
		np_slot_fill(s);
}

void np_slot_protect(int s)
{
	void *p = (void *)atomic_load(&np_soak_slots[s].addr);

	if (mprotect(p, np_soak_slots[s].len, PROT_READ)) {
		np_fail("scratch %d: mprotect: %s", s, strerror(errno));
		return;
	}
	np_slot_verify(s, "mprotect");
	mprotect(p, np_soak_slots[s].len, PROT_READ | PROT_WRITE);
}

/*
 * A THP of the THP buffer split and collapsed again, its bytes untouched
 * (its writer goes on): a VMA boundary inside a PMD splits it (one page
 * made NOHUGEPAGE, or mlocked, and back), MADV_COLLAPSE puts a PMD back.
 * Errors are fine (a kernel without MADV_COLLAPSE, no memory for a THP).
 */
void np_thp_churn(__u64 *rs)
{
	size_t n = np_soak_sh->n[NP_SB_THP];
	size_t i = np_rand_below(rs, n);
	char *b = np_soak_sh->buf[NP_SB_THP], *p = b + i * np_soak_psz;
	size_t pmd_pages = NP_SOAK_PMD / np_soak_psz;

	switch (np_rand_below(rs, 3)) {
	case 0:
		madvise(p, np_soak_psz, MADV_NOHUGEPAGE);
		madvise(p, np_soak_psz, MADV_HUGEPAGE);
		break;
	case 1:
		mlock(p, np_soak_psz);
		munlock(p, np_soak_psz);
		break;
	default:
		madvise(b + i / pmd_pages * NP_SOAK_PMD, NP_SOAK_PMD,
			MADV_COLLAPSE);
		break;
	}
}

struct np_soak_ops np_soak_count;
atomic_int np_soak_stop;

void *np_churn(void *arg)
{
	struct np_churn_arg *c = arg;
	__u64 rs = c->seed;

	for (int s = 0; s < NP_SOAK_SLOTS; s++)
		np_slot_map(s, &rs);
	while (!atomic_load(&np_soak_stop)) {
		int s = np_rand_below(&rs, NP_SOAK_SLOTS);

		if (!atomic_load(&np_soak_slots[s].addr)) {
			np_slot_map(s, &rs);
			continue;
		}
		switch (np_rand_below(&rs, 7)) {
		case 0:
			np_slot_unmap(s);
			break;
		case 1:
			np_slot_remap(s, &rs);
			break;
		case 2:
			np_slot_fork(s);
			break;
		case 3:
			np_slot_advise(s, &rs);
			break;
		case 4:
			np_slot_protect(s);
			break;
		case 5:
			np_thp_churn(&rs);
			break;
		default:
			np_slot_fill(s);
			np_slot_verify(s, "refill");
			break;
		}
		atomic_fetch_add(&np_soak_count.churn, 1);
	}
	for (int s = 0; s < NP_SOAK_SLOTS; s++)
		if (atomic_load(&np_soak_slots[s].addr))
			np_slot_unmap(s);
	return NULL;
}
