// SPDX-License-Identifier: GPL-2.0
/*
 * Conformance at random: random layouts of 2 MiB slots of every page
 * kind, with random per-page targets, moved through move_pages(2) and
 * through numaplace_move_pages(), statuses and final placement compared
 * (the engine: cf_lib.c; the LTP cases: conformance.c). The one accepted
 * difference is conformance.c's (Documentation/abi.md).
 */
#include <grp.h>
#include <limits.h>
#include <linux/mempolicy.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>

#include "numaplace.h"
#include "np_test.h"
#include "cf_lib.h"
#include "kselftest_harness.h"

/* ---- random layouts, random per-page targets ----------------------------- */

/*
 * The oracle, at random: CF_RND_ROUNDS layouts of CF_RND_SLOTS 2 MiB
 * slots, each slot one kind (cf_rnd_kind), and an array of entries over
 * their pages with random per-page targets: runs of equal targets, changes
 * inside a THP, repeats of a page. Built twice from the same seed, one
 * copy moved by the syscall, the other by numaplace_move_pages()
 * (MIGRATE_AS_SYSCALL); statuses and final placement must be the same but
 * for the documented differences (Documentation/abi.md, cf_rnd_accept()):
 * a folio named again inside one batch, the syscall -EBUSY, numaplace the
 * node; a folio named with several targets, which the syscall moves at
 * each change and numaplace once, every status true.
 */
#define CF_RND_ROUNDS	16
#define CF_RND_SLOTS	4
#define CF_RND_MIN	64	/* entries per round: CF_RND_MIN .. + CF_RND_VAR */
#define CF_RND_VAR	448
#define CF_RND_RUN	8	/* longest run of one target */

enum cf_rnd_kind {
	CF_RND_THP,		/* MADV_HUGEPAGE, written whole */
	CF_RND_THP_ONE,		/* MADV_HUGEPAGE, one page written (a THP) */
	CF_RND_THP_NONE,	/* MADV_HUGEPAGE, never touched: pmd_none */
	CF_RND_THP_ZERO,	/* MADV_HUGEPAGE, read: the huge zero page */
	CF_RND_THP_HOLE,	/* a THP written, a hole unmapped in it */
	CF_RND_THP_ZAP,		/* a THP written, a run MADV_DONTNEED'd */
	CF_RND_HVMA_4K,		/* MADV_HUGEPAGE VMA without a whole PMD */
	CF_RND_4K,		/* MADV_NOHUGEPAGE, pages of every kind */
	CF_RND_NR_KINDS
};

static const char *const cf_rnd_names[CF_RND_NR_KINDS] = {
	"thp", "thp-one-write", "thp-never-touched", "thp-zero", "thp-hole",
	"thp-zapped",
	"hugepage-vma-4k", "4k-mixed",
};

static unsigned long long cf_rnd_seed;

/* splitmix64: the round's stream from the seed and the round. */
static unsigned long long cf_rnd(unsigned long long *s)
{
	unsigned long long z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static unsigned int cf_rnd_below(unsigned long long *s, unsigned int n)
{
	return cf_rnd(s) % n;
}

/* Per 4 KiB page of a 4k-mixed or hugepage-vma-4k slot. */
static void cf_rnd_page(unsigned long long *s, char *pg, int allow_hole,
			char *tag)
{
	switch (cf_rnd_below(s, allow_hole ? 4 : 3)) {
	case 0:
		*pg = 1;		/* written */
		*tag = 'w';
		break;
	case 1:
		(void)*(volatile char *)pg;	/* the zero page */
		*tag = 'z';
		break;
	case 2:
		*tag = '.';		/* never touched */
		break;
	default:
		munmap(pg, cf_env.psz);
		*tag = 'h';
		break;
	}
}

/* Slot @i at @p, kind @k; its description appended to @d. */
static int cf_rnd_slot(unsigned long long *s, char *p, enum cf_rnd_kind k,
		       int node, char *d, size_t dlen)
{
	const unsigned long per = CF_PMD / cf_env.psz;
	size_t psz = cf_env.psz, off = strlen(d);
	unsigned long at, n;
	char tags[24] = "";

	madvise(p, CF_PMD, k == CF_RND_4K ? MADV_NOHUGEPAGE : MADV_HUGEPAGE);
	if (node >= 0 && cf_mbind(p, CF_PMD, node))
		return -ENOMEM;
	switch (k) {
	case CF_RND_THP:
		memset(p, 0x3c, CF_PMD);
		break;
	case CF_RND_THP_ONE:
		at = cf_rnd_below(s, per);
		p[at * psz] = 1;
		snprintf(tags, sizeof(tags), "@%lu", at);
		break;
	case CF_RND_THP_NONE:
		break;
	case CF_RND_THP_ZERO:
		(void)((volatile char *)p)[cf_rnd_below(s, per) * psz];
		break;
	case CF_RND_THP_HOLE:
	case CF_RND_THP_ZAP:
		memset(p, 0x3c, CF_PMD);
		at = 1 + cf_rnd_below(s, per - 2);
		n = 1 + cf_rnd_below(s, per - at - 1 < 32 ? per - at - 1 : 32);
		if (k == CF_RND_THP_HOLE)
			munmap(p + at * psz, n * psz);
		else	/* splits the PMD: never-touched PTEs in a THP VMA */
			madvise(p + at * psz, n * psz, MADV_DONTNEED);
		snprintf(d + off, dlen - off, " [%s %lu+%lu on %d]",
			 cf_rnd_names[k], at, n, node);
		return 0;
	case CF_RND_HVMA_4K:
	case CF_RND_4K: {
		/* 32 pages of random kinds, then a PROT_NONE or RO run. */
		char map[33];
		unsigned int prot = cf_rnd_below(s, 3);

		if (k == CF_RND_HVMA_4K)	/* no whole PMD: 4 KiB pages */
			madvise(p, psz, MADV_NOHUGEPAGE);
		for (unsigned long i = 0; i < 32; i++)
			cf_rnd_page(s, p + (i + 1) * psz, k == CF_RND_4K,
				    &map[i]);
		map[32] = 0;
		memset(p + 40 * psz, 1, 8 * psz);
		if (prot)
			mprotect(p + 40 * psz, 8 * psz,
				 prot == 1 ? PROT_NONE : PROT_READ);
		snprintf(d + off, dlen - off, " [%s on %d 1..32:%s 40..47:%s, rest never touched]",
			 cf_rnd_names[k], node, map,
			 prot == 0 ? "rw" : prot == 1 ? "none" : "ro");
		return 0;
	}
	default:
		break;
	}
	snprintf(d + off, dlen - off, " [%s%s on %d]", cf_rnd_names[k], tags,
		 node);
	return 0;
}

/* Is slot kind @k one THP (a folio of 2 MiB)? */
static int cf_rnd_thp(int k)
{
	return k <= CF_RND_THP_ONE || k == CF_RND_THP_HOLE ||
	       k == CF_RND_THP_ZAP;
}

/*
 * The accepted differences of @n entries over slots of @per pages:
 *  - CF_ACCEPT_CONTESTED: an entry whose folio (a THP slot's, or the page)
 *    the entries name with more than one target. The syscall moves it at
 *    each change of target and answers each entry its batch's node, true
 *    or not when it returns; numaplace moves it once, for the first entry
 *    that takes it, and answers the others where it is: their node where
 *    that is their target, else -EBUSY (Documentation/abi.md). Compared:
 *    numaplace's status is true, and where the page ends up is not.
 *  - CF_ACCEPT_BUSY: an entry whose folio an earlier entry of its run of
 *    one target named: the syscall's -EBUSY, numaplace's node.
 */
static int cf_rnd_accept(struct cf_case *c, const int *kinds,
			 unsigned long n, unsigned long per)
{
	unsigned char *tgt = calloc(CF_RND_SLOTS * per, 1);
	unsigned long i, j, pg, sl, g;

	if (!tgt)
		return -ENOMEM;
	/* A folio's group: its slot for a THP, else its page. */
	for (i = 0; i < n; i++) {
		pg = c->ent_page[i];
		g = cf_rnd_thp(kinds[pg / per]) ? pg / per * per : pg;
		tgt[g] |= c->nodes[i] == cf_env.a ? 1 : 2;
	}
	for (i = 0; i < n; i++) {
		pg = c->ent_page[i];
		sl = pg / per;
		g = cf_rnd_thp(kinds[sl]) ? sl * per : pg;
		if (tgt[g] == 3) {
			c->thp_second[i] = CF_ACCEPT_CONTESTED;
			continue;
		}
		for (j = i; j-- > 0;) {
			if (c->nodes[j] != c->nodes[i])
				break;
			if (c->ent_page[j] == pg ||
			    (cf_rnd_thp(kinds[sl]) && c->ent_page[j] / per == sl)) {
				c->thp_second[i] = CF_ACCEPT_BUSY;
				break;
			}
		}
	}
	free(tgt);
	return 0;
}

/*
 * Entries over the pages of the slots: mostly on from the last page,
 * sometimes a repeat of it, a jump inside its slot or anywhere; targets in
 * runs of 1..CF_RND_RUN, each run's node at random.
 */
static int cf_rnd_build(struct cf_case *c, const struct cf_env *e, long arg)
{
	const unsigned long per = CF_PMD / e->psz;
	const unsigned long total = CF_RND_SLOTS * per;
	unsigned long long s = cf_rnd_seed * 1000003ULL + arg;
	int kinds[CF_RND_SLOTS], node = e->a, run = 0;
	unsigned long n, cur;
	char *raw, *p;

	CF_NEED_B(e);
	raw = cf_map(c, (CF_RND_SLOTS + 1) * CF_PMD, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE);
	if (!raw)
		return -ENOMEM;
	p = (char *)(((uintptr_t)raw + CF_PMD - 1) & ~(CF_PMD - 1));
	c->layout = calloc(1, 1024);
	if (!c->layout)
		return -ENOMEM;
	snprintf(c->layout, 1024, "seed %llu round %ld, slots of %lu pages:",
		 cf_rnd_seed, arg, per);
	for (int i = 0; i < CF_RND_SLOTS; i++) {
		int at = cf_rnd_below(&s, 3);

		kinds[i] = cf_rnd_below(&s, CF_RND_NR_KINDS);
		if (cf_rnd_slot(&s, p + i * CF_PMD, kinds[i],
				at == 2 ? -1 : at ? e->b : e->a, c->layout,
				1024))
			return -ENOMEM;
	}
	n = CF_RND_MIN + cf_rnd_below(&s, CF_RND_VAR);
	if (cf_arrays(c, n, 1))
		return -ENOMEM;
	c->ent_page = calloc(n, sizeof(*c->ent_page));
	if (!c->ent_page)
		return -ENOMEM;
	cur = cf_rnd_below(&s, total);
	for (unsigned long i = 0; i < n; i++) {
		unsigned int r = cf_rnd_below(&s, 100);

		if (i && r < 60)
			cur = (cur + 1) % total;
		else if (i && r < 72)
			;		/* the same page again */
		else if (i && r < 88)
			cur = cur / per * per + cf_rnd_below(&s, per);
		else
			cur = cf_rnd_below(&s, total);
		if (!run--) {
			run = cf_rnd_below(&s, CF_RND_RUN);
			node = cf_rnd_below(&s, 2) ? e->b : e->a;
		}
		c->ent_page[i] = cur;
		c->pages[i] = p + cur * e->psz + cf_rnd_below(&s, e->psz);
		c->nodes[i] = node;
	}
	if (cf_rnd_accept(c, kinds, n, per))
		return -ENOMEM;
	c->flags = MPOL_MF_MOVE;
	c->want_ret = 0;
	return 0;
}


/* ---- the fixture ------------------------------------------------------ */

FIXTURE(conformance_random)
{
	int fd;
};

FIXTURE_SETUP(conformance_random)
{
	self->fd = -1;
	CF_SETUP();
}

FIXTURE_TEARDOWN(conformance_random)
{
	if (self->fd >= 0)
		close(self->fd);
}

static int cf_rnd_stable(const char *what, long arg)
{
	struct cf_result r[2] = { 0 };
	struct cf_case c = { 0 };
	int bad = 0, accepted = 0, ret = 0;
	char w[128];

	snprintf(w, sizeof(w), "%s (syscall vs syscall)", what);
	for (int k = 0; k < 2 && !ret; k++) {
		cf_case_free(&c);
		ret = cf_rnd_build(&c, &cf_env, arg);
		c.what = w;
		if (!ret)
			ret = cf_run(0, &c, &r[k]);
	}
	if (!ret) {
		/* The second run as "library": no -EBUSY is accepted. */
		memset(c.thp_second, 0, c.nst);
		bad = cf_compare(&c, &r[0], &r[1], &accepted);
	}
	cf_result_free(&r[0], c.nst);
	cf_result_free(&r[1], c.nst);
	cf_case_free(&c);
	return ret ? -1 : !bad;
}

/* khugepaged collapses of this boot (/proc/vmstat), or -1. */
static long cf_collapses(void)
{
	char line[128];
	long v, sum = -1;
	FILE *f = fopen("/proc/vmstat", "re");

	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "thp_collapse_alloc %ld", &v) == 1 ||
		    sscanf(line, "thp_collapse_alloc_failed %ld", &v) == 1)
			sum = (sum < 0 ? 0 : sum) + v;
	}
	if (f)
		fclose(f);
	return sum;
}

#define CF_KHP_SLEEP	"/sys/kernel/mm/transparent_hugepage/khugepaged/scan_sleep_millisecs"
/* A round khugepaged collapsed into (it moves pages) is built again. */
#define CF_RND_RETRIES	3

/*
 * Random layouts and per-page targets (cf_rnd_build()); the seed is
 * printed, NP_ORACLE_SEED replays it. khugepaged would collapse a
 * PTE-mapped range of a MADV_HUGEPAGE VMA into a THP on a node of its
 * choosing between the call and the placement query, in one copy and not
 * the other: it is put to sleep for the test, and a round during which a
 * collapse was tried anyway is built and run again. So is a round that
 * differs where the syscall, run twice on two builds, differs from itself
 * (seen on 6.12 with partly zapped THPs: one page's final node, one
 * -EBUSY more or less): there the kernel is no oracle. A difference that
 * lasts CF_RND_RETRIES tries fails the test.
 */
TEST_F_TIMEOUT(conformance_random, move_pages_random_targets, NP_TIMEOUT(120))
{
	CF_SKIPPED();
	const char *env = getenv("NP_ORACLE_SEED");
	const char *skip = NULL;
	int bad = 0, ran = 0, ret, tries, unstable = 0;
	char what[64], sleep_ms[32] = "";
	long before;

	cf_rnd_seed = env ? strtoull(env, NULL, 0) :
		      (unsigned long long)time(NULL) << 16 ^ getpid();
	fprintf(stderr, "# move_pages_random_targets: seed %llu (NP_ORACLE_SEED=%llu replays it)\n",
		cf_rnd_seed, cf_rnd_seed);
	if (!np_read_str(CF_KHP_SLEEP, sleep_ms, sizeof(sleep_ms)))
		np_write_str(CF_KHP_SLEEP, "4000000000");
	for (int arg = 0; arg < CF_RND_ROUNDS; arg++) {
		snprintf(what, sizeof(what), "random_targets/%d", arg);
		for (tries = 0; tries < CF_RND_RETRIES; tries++) {
			before = cf_collapses();
			ret = cf_check(what, cf_rnd_build, arg, &skip);
			if (before >= 0 && cf_collapses() != before) {
				fprintf(stderr, "# %s: khugepaged collapsed during the round: again\n",
					what);
				continue;
			}
			if (ret <= 0 || cf_rnd_stable(what, arg))
				break;
			fprintf(stderr, "# %s: the syscall differs from itself on this layout: not comparable, again\n",
				what);
			unstable++;
		}
		if (ret < 0)
			continue;
		ran++;
		bad += ret;
	}
	if (sleep_ms[0])
		np_write_str(CF_KHP_SLEEP, sleep_ms);
	if (!ran)
		SKIP(return, "random_targets: %s", skip ? skip : "nothing ran");
	fprintf(stderr, "# move_pages_random_targets: %d differences in %d rounds, seed %llu (%d runs the syscall did not repeat, run again)\n",
		bad, CF_RND_ROUNDS, cf_rnd_seed, unstable);
	EXPECT_EQ(0, bad);
}

/*
 * migrate_pages01: the errors. Compared: pid -1 and pid_max + 1 (ESRCH),
 * another user's process (EPERM), an unreadable node array (EFAULT:
 * MIGRATE's nodes_ptr). Each on its own: a bad maxnode, offline and
 * memoryless target nodes.
 */

NP_HARNESS_MAIN
