// SPDX-License-Identifier: GPL-2.0
/*
 * An ioctl fuzzer for /dev/numaplace.
 *
 * Several threads call random ioctls (random numbers, valid numbers with a
 * size or direction encoded, INFO, QUERY and MIGRATE) with random struct
 * sizes (0, short, exact, longer with a zero or non-zero tail, larger than
 * a page), flags, reserved fields, pointers (NULL, unmapped, PROT_NONE,
 * read-only, kernel addresses, straddling into a guard page), counts,
 * lengths, pids (0, self, a thread, a child, a zombie, 1, a kernel thread,
 * nonexistent) and nodes (-1, memoryless, MAX_NUMNODES, valid), while a
 * churn thread keeps changing the memory map they point into (mmap,
 * munmap, mremap, mprotect, madvise, mlock, fork).
 *
 * What can trip:
 *  - every return is 0 or an errno of the documented set for that ioctl
 *    (Documentation/abi.md); where the dispatch alone decides (number,
 *    size, tail, flags, unreadable struct) exactly the errno it must be;
 *  - the module writes nothing of the struct buffer but the struct, and
 *    at most min(caller's size, its own size) of it; nothing at all when
 *    the dispatch refuses the call; on success size says what it wrote;
 *  - a canary buffer, never passed as an output (but passed as input
 *    arrays and as pages to query and migrate), keeps its bytes;
 *  - no call takes longer than NP_FZ_CALL_MAX_MS;
 *  - the process survives (no SIGSEGV/SIGBUS); the runner checks the
 *    guest's kernel log.
 *
 * NP_FUZZ_SECONDS (default 20) bounds the run, NP_FUZZ_SEED replays a
 * seed (the thread interleaving is not replayed).
 */
#include <linux/mempolicy.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "np_test.h"
#include "kselftest_harness.h"

/* Fuzzing time when NP_FUZZ_SECONDS is not set: make check stays short. */
#define NP_FZ_SECONDS		20
/* Share of the time the unprivileged variant gets (1 / this). */
#define NP_FZ_NOBODY_SHARE	4
/* Threads calling ioctls; one more churns the memory map. */
#define NP_FZ_THREADS		3
/* Pages of the churned window (pages in it come and go). */
#define NP_FZ_WIN_PAGES		2048
/* Pages of the canary: two THPs' worth and some. */
#define NP_FZ_CANARY_PAGES	1100
/* Pages of each thread's output and input scratch (a guard page follows). */
#define NP_FZ_SCRATCH_PAGES	8
/* No single call may take longer (TCG on a loaded host is slow). */
#define NP_FZ_CALL_MAX_MS	30000
/* After the deadline, threads get this long to return from their call. */
#define NP_FZ_GRACE_MS		60000
/* Mismatch lines printed before they are only counted. */
#define NP_FZ_LOG_MAX		20
/* Bytes of a struct buffer: two pages, then a guard page. */
#define NP_FZ_SBUF_PAGES	2
/* The fill of struct buffers: bytes the module must not write show. */
#define NP_FZ_FILL		0xc5

/* Kernel thread kthreadd: always pid 2. */
#define NP_FZ_KTHREADD		2

static long psz = 4096;	/* sysconf(_SC_PAGESIZE) in the fixture */

/* Everything the threads share. */
struct np_fz {
	int fd;
	struct numaplace_info info;
	int nobody;		/* the unprivileged variant */
	atomic_int stop;
	atomic_long calls;
	atomic_long errors;	/* assertion failures */
	atomic_long logged;
	atomic_long by_errno[256];
	atomic_long max_ms;
	atomic_long churn_ops;
	char *win;		/* the churned window */
	char *canary;
	__u64 canary_sum;
	char *ro;		/* a read-only page (of addresses) */
	char *protnone;		/* a PROT_NONE page */
	char *unmapped;		/* a page nobody maps */
	pid_t child;		/* a sleeping child with memory */
	pid_t zombie;		/* an exited, unreaped child */
	pid_t gone;		/* a reaped child: nonexistent */
	pid_t tid;		/* another thread of ours */
	atomic_int churn_kid;	/* the churn's latest fork child, or 0 */
	__u64 seed;
};

struct np_fz_thread {
	struct np_fz *z;
	int id;
	__u64 rng;
	char *sbuf;		/* struct buffer (+ guard) */
	char *obuf;		/* outputs (+ guard) */
	char *ibuf;		/* inputs (+ guard) */
	char *before;		/* the struct buffer before the call */
	atomic_long in_call;	/* ms the current call started, 0 if none */
	char last[320];		/* the call in progress, for the hang report */
	pthread_t th;
};

static __u64 np_fz_next(__u64 *s)
{
	__u64 x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dULL;
}

static __u64 np_fz_below(__u64 *s, __u64 n)
{
	return n ? np_fz_next(s) % n : 0;
}

static int np_fz_chance(__u64 *s, int percent)
{
	return (int)np_fz_below(s, 100) < percent;
}

#define np_fz_pick(s, arr) ((arr)[np_fz_below(s, ARRAY_SIZE(arr))])
#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif

static __u64 np_fz_sum(const char *p, size_t len)
{
	__u64 h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < len; i += 8)
		h = (h ^ *(const __u64 *)(p + i)) * 0x100000001b3ULL;
	return h;
}

static void np_fz_fail(struct np_fz *z, const char *fmt, ...)
{
	va_list ap;

	atomic_fetch_add(&z->errors, 1);
	if (atomic_fetch_add(&z->logged, 1) >= NP_FZ_LOG_MAX)
		return;
	va_start(ap, fmt);
	fprintf(stderr, "# FUZZ FAIL: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
}

/* ---- values ----------------------------------------------------------- */

/* A user address to look at: mostly the window and the canary. */
static __u64 np_fz_addr(struct np_fz_thread *t)
{
	struct np_fz *z = t->z;
	__u64 *s = &t->rng;
	__u64 a;

	switch (np_fz_below(s, 12)) {
	case 0 ... 4:
		a = (uintptr_t)z->win + np_fz_below(s, NP_FZ_WIN_PAGES) * psz;
		break;
	case 5 ... 7:
		a = (uintptr_t)z->canary +
		    np_fz_below(s, NP_FZ_CANARY_PAGES) * psz;
		break;
	case 8:
		a = (uintptr_t)t->obuf;	/* our own scratch */
		break;
	case 9:
		a = (uintptr_t)z->ro;
		break;
	case 10:
		a = np_fz_pick(s, ((const __u64[]){ 0, psz, 0x7ffffffff000ULL,
			0x800000000000ULL, 0xffff888000000000ULL,
			0xffffffffff600000ULL, ~0ULL, ~0ULL - psz + 1,
			0x1000000000000000ULL }));
		break;
	default:
		a = np_fz_next(s);
		break;
	}
	if (np_fz_chance(s, 10))
		a += np_fz_below(s, psz);	/* inside the page */
	if (np_fz_chance(s, 3))
		a |= 0x5aULL << 56;		/* a tag */
	return a;
}

/* A count or capacity. */
static __u64 np_fz_count(__u64 *s)
{
	static const __u64 c[] = {
		0, 1, 2, 16, 17, 255, 2047, 2048, 2049, 16383, 16384, 16385,
		65536, 1ULL << 31, 1ULL << 32, 1ULL << 40, (1ULL << 61) + 1,
		(1ULL << 62), ~0ULL, ~0ULL >> 1,
	};

	if (np_fz_chance(s, 50))
		return np_fz_below(s, 64);
	return np_fz_pick(s, c);
}

/* A byte length for range mode. */
static __u64 np_fz_len(__u64 *s)
{
	static const __u64 l[] = {
		0, 1, 4095, 4096, 4097, 2UL << 20, (2UL << 20) + 1, 1UL << 30,
		1ULL << 40, 1ULL << 46, 1ULL << 47, ~0ULL, ~0ULL - 4095,
	};

	if (np_fz_chance(s, 70))
		return np_fz_below(s, NP_FZ_WIN_PAGES + 64) * psz +
		       (np_fz_chance(s, 20) ? np_fz_below(s, psz) : 0);
	return np_fz_pick(s, l);
}

static __s32 np_fz_node(struct np_fz_thread *t)
{
	__u64 *s = &t->rng;
	__s32 n[] = { -1, 0, 1, 2, 3, (__s32)t->z->info.nr_node_ids,
		      63, 64, 1023, NUMAPLACE_MAX_NODES, INT_MAX, INT_MIN };

	if (np_fz_chance(s, 60))
		return np_fz_below(s, 2);
	return np_fz_pick(s, n);
}

static __s32 np_fz_pid(struct np_fz_thread *t)
{
	struct np_fz *z = t->z;
	__u64 *s = &t->rng;

	switch (np_fz_below(s, 14)) {
	case 0 ... 4:
		return 0;
	case 5:
		return getpid();
	case 6:
		return z->tid;
	case 7:
		return z->child;
	case 8:
		return z->zombie;
	case 9:
		return z->gone;
	case 10:
		return 1;
	case 11:
		return NP_FZ_KTHREADD;
	case 12:
		return atomic_load(&z->churn_kid);
	default:
		return np_fz_pick(s, ((const __s32[]){ -1, INT_MAX, INT_MIN,
						      4194304, 4194305 }));
	}
}

/*
 * An output pointer: our output scratch at a random offset (a large count
 * runs into the guard page), or a bad one. Never the canary.
 */
static __u64 np_fz_out(struct np_fz_thread *t)
{
	struct np_fz *z = t->z;
	__u64 *s = &t->rng;

	switch (np_fz_below(s, 16)) {
	case 0 ... 9:
		return (uintptr_t)t->obuf +
		       (np_fz_below(s, NP_FZ_SCRATCH_PAGES * psz) & ~7ULL);
	case 10:
		/* The last bytes before the guard. */
		return (uintptr_t)t->obuf + NP_FZ_SCRATCH_PAGES * psz -
		       8 * (1 + np_fz_below(s, 4));
	case 11:
		return (uintptr_t)z->ro;
	case 12:
		return (uintptr_t)z->protnone;
	case 13:
		return (uintptr_t)z->unmapped;
	case 14:
		return 0xffff888000000000ULL + np_fz_below(s, 1 << 20) * 8;
	default:
		return (uintptr_t)t->obuf + 1 + np_fz_below(s, 6); /* unaligned */
	}
}

/*
 * An input array: our input scratch (filled with addresses or nodes), the
 * read-only page, the canary (input only: never written), or a bad one.
 */
static __u64 np_fz_in(struct np_fz_thread *t, int nodes)
{
	struct np_fz *z = t->z;
	__u64 *s = &t->rng;
	size_t n = NP_FZ_SCRATCH_PAGES * psz;

	switch (np_fz_below(s, 16)) {
	case 0 ... 9:
		if (nodes) {
			__s32 *v = (__s32 *)t->ibuf;

			for (size_t i = 0; i < n / 4; i += 1 + (i > 64) * 31)
				v[i] = np_fz_node(t);
		} else {
			__u64 *v = (__u64 *)t->ibuf;
			__u64 a = np_fz_addr(t);

			for (size_t i = 0; i < n / 8; i++) {
				if (np_fz_chance(s, 20))
					a = np_fz_addr(t);
				else
					a += psz;
				v[i] = a;
				if (i > 256 && np_fz_chance(s, 50))
					break;	/* the rest: last time's */
			}
		}
		return (uintptr_t)t->ibuf + (np_fz_below(s, n) & ~7ULL);
	case 10:
		return (uintptr_t)t->ibuf + n - 8 * (1 + np_fz_below(s, 4));
	case 11:
		return (uintptr_t)z->ro;
	case 12:
		return (uintptr_t)z->canary +
		       (np_fz_below(s, NP_FZ_CANARY_PAGES * psz) & ~7ULL);
	case 13:
		return (uintptr_t)z->protnone;
	case 14:
		return (uintptr_t)z->unmapped;
	default:
		return np_fz_pick(s, ((const __u64[]){ 0xffff888000000000ULL,
						      ~0ULL - 7, 1 }));
	}
}

/* ---- the calls ------------------------------------------------------- */

struct np_fz_cmd {
	const char *name;
	size_t size;		/* sizeof() in our header */
	size_t ver0;
	__u32 flags;		/* known flags */
	unsigned int errs;	/* NP_FZ_E* the handler may answer */
};

enum {
	NP_FZ_EINVAL = 1 << 0, NP_FZ_E2BIG = 1 << 1, NP_FZ_EFAULT = 1 << 2,
	NP_FZ_ESRCH = 1 << 3, NP_FZ_EPERM = 1 << 4, NP_FZ_EINTR = 1 << 5,
	NP_FZ_ENODEV = 1 << 6, NP_FZ_EACCES = 1 << 7,
	NP_FZ_EOPNOTSUPP = 1 << 8, NP_FZ_ENOMEM = 1 << 9, NP_FZ_EMFILE = 1 << 10,
};

static const int np_fz_errnos[] = {
	EINVAL, E2BIG, EFAULT, ESRCH, EPERM, EINTR, ENODEV, EACCES, EOPNOTSUPP,
	ENOMEM, EMFILE,
};

/* Documentation/abi.md, per command. */
static const struct np_fz_cmd np_fz_cmds[NUMAPLACE_CMD_MAX] = {
	[NUMAPLACE_CMD_INFO] = {
		"INFO", sizeof(struct numaplace_info), NUMAPLACE_INFO_SIZE_VER0,
		0, NP_FZ_EINVAL | NP_FZ_E2BIG | NP_FZ_EFAULT,
	},
	[NUMAPLACE_CMD_QUERY] = {
		"QUERY", sizeof(struct numaplace_query),
		NUMAPLACE_QUERY_SIZE_VER0,
		NUMAPLACE_QUERY_PAGES | NUMAPLACE_QUERY_AS_SYSCALL,
		NP_FZ_EINVAL | NP_FZ_E2BIG | NP_FZ_EFAULT | NP_FZ_ESRCH |
		NP_FZ_EPERM | NP_FZ_EINTR,
	},
	[NUMAPLACE_CMD_MIGRATE] = {
		"MIGRATE", sizeof(struct numaplace_migrate),
		NUMAPLACE_MIGRATE_SIZE_VER0, 0x7f,
		NP_FZ_EINVAL | NP_FZ_E2BIG | NP_FZ_EFAULT | NP_FZ_ESRCH |
		NP_FZ_EPERM | NP_FZ_EINTR | NP_FZ_ENODEV | NP_FZ_EACCES |
		NP_FZ_EOPNOTSUPP,
	},
	/* Returns a new fd; writes nothing back. */
	[NUMAPLACE_CMD_WATCH] = {
		"WATCH", sizeof(struct numaplace_watch),
		NUMAPLACE_WATCH_SIZE_VER0,
		NUMAPLACE_WATCH_CLOEXEC | NUMAPLACE_WATCH_NONBLOCK,
		NP_FZ_EINVAL | NP_FZ_E2BIG | NP_FZ_EFAULT | NP_FZ_ESRCH |
		NP_FZ_EPERM | NP_FZ_EINTR | NP_FZ_EOPNOTSUPP | NP_FZ_ENOMEM |
		NP_FZ_EMFILE,
	},
};

static int np_fz_allowed(unsigned int errs, int err)
{
	for (size_t i = 0; i < ARRAY_SIZE(np_fz_errnos); i++)
		if (np_fz_errnos[i] == err)
			return !!(errs & (1U << i));
	return 0;
}

/* Random flags: mostly known bits, sometimes any. */
static __u32 np_fz_flags(__u64 *s, __u32 known)
{
	if (np_fz_chance(s, 85))
		return np_fz_next(s) & known;
	return np_fz_chance(s, 50) ? 1U << np_fz_below(s, 32) :
				     (__u32)np_fz_next(s);
}

static void np_fz_fill_info(struct np_fz_thread *t, struct numaplace_info *a)
{
	if (np_fz_chance(&t->rng, 5))
		a->reserved0 = 1;
	if (np_fz_chance(&t->rng, 5))
		a->reserved[np_fz_below(&t->rng, 4)] = np_fz_next(&t->rng);
	if (np_fz_chance(&t->rng, 10))
		a->abi_version = np_fz_next(&t->rng);	/* out field: ignored */
}

static void np_fz_fill_watch(struct np_fz_thread *t, struct numaplace_watch *a)
{
	__u64 *s = &t->rng;

	a->pid = np_fz_pid(t);
	a->start = np_fz_addr(t);
	a->len = np_fz_len(s);
	a->cookie = np_fz_next(s);
	if (np_fz_chance(s, 40)) {
		a->node_pages_ptr = np_fz_out(t);
		a->node_pages_len = np_fz_pick(s, ((const __u32[]){ 0, 1, 2, 3,
			t->z->info.nr_node_ids, 64, 1024, 1025, ~0U }));
	}
	if (np_fz_chance(s, 4))
		a->reserved0 = 1;
	if (np_fz_chance(s, 4))
		a->reserved1 = 1;
	if (np_fz_chance(s, 4))
		a->reserved[np_fz_below(s, 4)] = np_fz_next(s);
}

static void np_fz_fill_query(struct np_fz_thread *t, struct numaplace_query *a)
{
	__u64 *s = &t->rng;

	a->pid = np_fz_pid(t);
	if (a->flags & NUMAPLACE_QUERY_PAGES) {
		a->pages_ptr = np_fz_in(t, 0);
		a->count = np_fz_count(s);
	} else {
		a->start = np_fz_addr(t);
		a->len = np_fz_len(s);
		if (np_fz_chance(s, 40)) {
			a->runs_ptr = np_fz_out(t);
			a->runs_cap = np_fz_count(s);
		}
	}
	if (np_fz_chance(s, 70))
		a->status_ptr = np_fz_out(t);
	if (np_fz_chance(s, 40)) {
		a->node_pages_ptr = np_fz_out(t);
		a->node_pages_len = np_fz_pick(s, ((const __u32[]){ 0, 1, 2, 3,
			t->z->info.nr_node_ids, 64, 1024, 1025, ~0U }));
	}
	/* Now and then a field of the other mode, or an out field. */
	if (np_fz_chance(s, 5))
		a->runs_ptr = np_fz_out(t);
	if (np_fz_chance(s, 5))
		a->start = np_fz_addr(t);
	if (np_fz_chance(s, 5))
		a->count = np_fz_count(s);
	if (np_fz_chance(s, 5))
		a->runs_cap = np_fz_count(s);
	if (np_fz_chance(s, 10))
		a->done = np_fz_next(s);
	if (np_fz_chance(s, 10))
		a->nr_runs = np_fz_next(s);
	if (np_fz_chance(s, 4))
		a->reserved0 = 1;
	if (np_fz_chance(s, 4))
		a->reserved1 = 1;
	if (np_fz_chance(s, 4))
		a->reserved[np_fz_below(s, 4)] = 1ULL << np_fz_below(s, 64);
}

static void np_fz_fill_migrate(struct np_fz_thread *t,
			       struct numaplace_migrate *a)
{
	__u64 *s = &t->rng;

	a->pid = np_fz_pid(t);
	a->policy = np_fz_chance(s, 95) ? np_fz_below(s, 4) :
					  (__u32)np_fz_next(s);
	if (a->flags & NUMAPLACE_MIGRATE_PAGES) {
		a->pages_ptr = np_fz_in(t, 0);
		a->count = np_fz_count(s);
	} else {
		a->start = np_fz_addr(t);
		a->len = np_fz_len(s);
	}
	if (a->policy == NUMAPLACE_POLICY_PER_PAGE || np_fz_chance(s, 5))
		a->nodes_ptr = np_fz_in(t, 1);
	if (np_fz_chance(s, 5))
		a->nodes_ptr = 0;
	if (np_fz_chance(s, 70))
		a->status_ptr = np_fz_out(t);
	a->node = np_fz_node(t);
	a->cpu = np_fz_chance(s, 80) ? np_fz_below(s, 4) :
				       np_fz_pick(s, ((const __u32[]){ 64, 4096,
					       8192, ~0U }));
	for (int i = np_fz_below(s, 4); i > 0; i--) {
		int n = np_fz_node(t);

		if (n >= 0 && n < NUMAPLACE_MAX_NODES)
			a->node_set[n / 64] |= 1ULL << (n % 64);
	}
	if (np_fz_chance(s, 3))
		memset(a->node_set, 0xff, sizeof(a->node_set));
	if (np_fz_chance(s, 5))
		a->count = np_fz_count(s);
	if (np_fz_chance(s, 5))
		a->start = np_fz_addr(t);
	if (np_fz_chance(s, 10))
		a->done = np_fz_next(s);	/* out fields: ignored */
	if (np_fz_chance(s, 10))
		a->nr_failed[np_fz_below(s, NUMAPLACE_FAIL_MAX)] = 1;
	if (np_fz_chance(s, 4))
		a->reserved0 = 1;
	if (np_fz_chance(s, 4))
		a->reserved[np_fz_below(s, 4)] = 1ULL << np_fz_below(s, 64);
}

/* An ioctl number do_vfs_ioctl() answers before the driver sees it. */
static int np_fz_vfs_cmd(unsigned int cmd)
{
	switch (_IOC_TYPE(cmd)) {
	case 0x00:	/* FIBMAP, FIGETBSZ */
	case 'T':	/* FIOCLEX, FIONBIO, FIOASYNC, FIOQSIZE, ... */
	case 'X':	/* FIFREEZE, FITHAW, FITRIM */
	case 'f':	/* FS_IOC_FIEMAP, ... */
	case 0x94:	/* FICLONE, FIDEDUPERANGE */
	case 0x15:	/* FS_IOC_GETFSUUID, FS_IOC_GETFSSYSFSPATH */
		return 1;
	}
	return 0;
}

/* Where the struct goes in the struct buffer, and how far it is readable. */
enum np_fz_where { NP_FZ_AT_START, NP_FZ_AT_GUARD, NP_FZ_AT_RO, NP_FZ_AT_BAD };

/* One call: build, predict, call, check. */
static void np_fz_call(struct np_fz_thread *t)
{
	struct np_fz *z = t->z;
	__u64 *s = &t->rng;
	const size_t slen = NP_FZ_SBUF_PAGES * psz;
	unsigned int cmd, nr = np_fz_below(s, NUMAPLACE_CMD_MAX);
	const struct np_fz_cmd *c = &np_fz_cmds[nr];
	union {
		struct numaplace_info info;
		struct numaplace_query query;
		struct numaplace_migrate migrate;
		struct numaplace_watch watch;
		char bytes[4096];
	} a;
	size_t usize, off = 0, written;
	enum np_fz_where where = NP_FZ_AT_START;
	int valid_cmd = 1, expect = 0, tail_nonzero = 0, ret, err;
	unsigned long arg;
	char *p = t->sbuf;
	long t0, ms;

	/* The number. */
	cmd = _IO(NUMAPLACE_TYPE, nr);
	if (np_fz_chance(s, 10)) {
		/* A known number with a size or direction encoded. */
		cmd = _IOC(np_fz_below(s, 4), NUMAPLACE_TYPE, nr,
			   np_fz_below(s, 1 << _IOC_SIZEBITS));
		valid_cmd = cmd == _IO(NUMAPLACE_TYPE, nr);
	} else if (np_fz_chance(s, 5)) {
		cmd = np_fz_chance(s, 50) ?
		      _IO(NUMAPLACE_TYPE, NUMAPLACE_CMD_MAX +
			  np_fz_below(s, 256 - NUMAPLACE_CMD_MAX)) :
		      (unsigned int)np_fz_next(s);
		if (np_fz_vfs_cmd(cmd))
			cmd = _IO(NUMAPLACE_TYPE, 0xff);
		valid_cmd = 0;
		for (unsigned int i = 0; i < NUMAPLACE_CMD_MAX; i++)
			if (cmd == _IO(NUMAPLACE_TYPE, i)) {
				valid_cmd = 1;
				nr = i;
				c = &np_fz_cmds[nr];
			}
	}

	/* The size. */
	switch (np_fz_below(s, 10)) {
	case 0:
		usize = np_fz_pick(s, ((const size_t[]){ 0, 4, 8, c->ver0 - 8,
							c->ver0 - 1 }));
		break;
	case 1:
		usize = c->size + 8 * (1 + np_fz_below(s, 64));
		tail_nonzero = np_fz_chance(s, 50);
		break;
	case 2:
		usize = np_fz_pick(s, ((const size_t[]){ psz, psz + 1,
			psz + 8, 2 * psz, 1 << 20, ~0U }));
		break;
	case 3:
		usize = c->ver0;
		break;
	default:
		usize = c->size;
		break;
	}

	/* The struct. */
	memset(&a, 0, sizeof(a));
	a.query.size = usize;
	a.query.flags = np_fz_flags(s, c->flags);
	switch (nr) {
	case NUMAPLACE_CMD_INFO:
		np_fz_fill_info(t, &a.info);
		break;
	case NUMAPLACE_CMD_QUERY:
		np_fz_fill_query(t, &a.query);
		break;
	case NUMAPLACE_CMD_MIGRATE:
		np_fz_fill_migrate(t, &a.migrate);
		break;
	case NUMAPLACE_CMD_WATCH:
		np_fz_fill_watch(t, &a.watch);
		break;
	}

	/* Where it goes. */
	switch (np_fz_below(s, 20)) {
	case 0:
		where = NP_FZ_AT_GUARD;
		break;
	case 1:
		where = NP_FZ_AT_RO;
		break;
	case 2:
		where = NP_FZ_AT_BAD;
		break;
	}
	memset(p, NP_FZ_FILL, slen);
	/* The header is there whatever the size says. */
	written = usize < 8 ? 8 : usize < slen ? usize : slen;
	if (where == NP_FZ_AT_GUARD) {
		/* The struct runs into the guard page. */
		off = slen - 4 - np_fz_below(s, c->size);
		written = slen - off;
	}
	memcpy(p + off, &a, written < sizeof(a) ? written : sizeof(a));
	if (written > sizeof(a))
		memset(p + off + sizeof(a), 0, written - sizeof(a));
	if (usize <= c->size || off + usize > slen)
		tail_nonzero = 0;
	if (tail_nonzero)
		p[off + usize - 1 - np_fz_below(s, usize - c->size)] = 1;
	memcpy(t->before, p, slen);
	arg = (uintptr_t)(p + off);
	if (where == NP_FZ_AT_RO) {
		/* The same bytes in a page we may not write. */
		mprotect(p, slen, PROT_READ);
	} else if (where == NP_FZ_AT_BAD) {
		arg = np_fz_pick(s, ((const __u64[]){ 0, (uintptr_t)z->unmapped,
			(uintptr_t)z->protnone, 0xffff888000000000ULL,
			0xffffffffff600000ULL, ~0ULL - 3 }));
	}

	/* What the dispatch alone decides. */
	if (!valid_cmd) {
		expect = ENOTTY;
	} else if (where == NP_FZ_AT_BAD) {
		expect = EFAULT;
	} else if (usize < c->ver0) {
		expect = EINVAL;
	} else if (usize > (size_t)psz) {
		expect = E2BIG;
	} else if (where == NP_FZ_AT_GUARD && usize > written) {
		expect = EFAULT;
	} else if (tail_nonzero && usize > c->size) {
		expect = E2BIG;
	} else if (a.query.flags & ~c->flags) {
		expect = EINVAL;
	}

	snprintf(t->last, sizeof(t->last),
		 "cmd %#x (%s) size %zu flags %#x at %d", cmd, c->name, usize,
		 a.query.flags, where);
	if (nr == NUMAPLACE_CMD_QUERY)
		snprintf(t->last + strlen(t->last), 160,
			 " pid %d start %#llx len %#llx pages %#llx count %#llx status %#llx runs %#llx cap %u",
			 a.query.pid, (unsigned long long)a.query.start,
			 (unsigned long long)a.query.len,
			 (unsigned long long)a.query.pages_ptr,
			 (unsigned long long)a.query.count,
			 (unsigned long long)a.query.status_ptr,
			 (unsigned long long)a.query.runs_ptr,
			 a.query.runs_cap);
	if (nr == NUMAPLACE_CMD_MIGRATE)
		snprintf(t->last + strlen(t->last), 160,
			 " pid %d policy %u node %d start %#llx len %#llx pages %#llx count %#llx status %#llx",
			 a.migrate.pid, a.migrate.policy, a.migrate.node,
			 (unsigned long long)a.migrate.start,
			 (unsigned long long)a.migrate.len,
			 (unsigned long long)a.migrate.pages_ptr,
			 (unsigned long long)a.migrate.count,
			 (unsigned long long)a.migrate.status_ptr);
	t0 = np_mono_ms();
	atomic_store(&t->in_call, t0);
	ret = ioctl(z->fd, cmd, arg);
	err = ret < 0 ? errno : 0;
	atomic_store(&t->in_call, 0);
	ms = np_mono_ms() - t0;
	atomic_fetch_add(&z->calls, 1);
	atomic_fetch_add(&z->by_errno[err & 255], 1);
	if (ms > atomic_load(&z->max_ms))
		atomic_store(&z->max_ms, ms);
	if (where == NP_FZ_AT_RO)
		mprotect(p, slen, PROT_READ | PROT_WRITE);

	if (ret > 0 && nr == NUMAPLACE_CMD_WATCH && valid_cmd) {
		close(ret);	/* the watch's fd */
		ret = 0;
	} else if (ret > 0) {
		np_fz_fail(z, "%s: returned %d", t->last, ret);
	}
	if (ms > NP_FZ_CALL_MAX_MS)
		np_fz_fail(z, "%s: took %ld ms", t->last, ms);
	if (expect) {
		if (err != expect)
			np_fz_fail(z, "%s: %s, expected %s", t->last,
				   strerror(err), strerror(expect));
	} else if (err && !np_fz_allowed(c->errs, err)) {
		np_fz_fail(z, "%s: %s is not documented for it", t->last,
			   strerror(err));
	}
	if (where == NP_FZ_AT_BAD)
		return;

	/*
	 * The buffer: a refused call writes nothing, else the module writes
	 * at most min(usize, its size) bytes of the struct, nothing around.
	 */
	{
		size_t hi = off;

		/* WATCH reads its struct and writes nothing back. */
		if (!expect && nr != NUMAPLACE_CMD_WATCH)
			hi = off + (usize < c->size ? usize : c->size);
		for (size_t i = 0; i < slen; i++) {
			if ((i >= off && i < hi) || p[i] == t->before[i])
				continue;
			np_fz_fail(z, "%s -> %s: byte %zd of the struct changed %#x -> %#x",
				   t->last, strerror(err), (ssize_t)(i - off),
				   (unsigned char)t->before[i],
				   (unsigned char)p[i]);
			break;
		}
		if (!err && where == NP_FZ_AT_START && nr != NUMAPLACE_CMD_WATCH &&
		    *(__u32 *)(p + off) != (usize < c->size ? usize : c->size))
			np_fz_fail(z, "%s: size written back %u", t->last,
				   *(__u32 *)(p + off));
	}
}

/* What this thread is (for the fatal-signal report). */
static __thread const char *np_fz_who = "main";
static __thread struct np_fz_thread *np_fz_self;

/* A SIGSEGV/SIGBUS: say where and in which thread, then die of it. */
static void np_fz_fatal(int sig, siginfo_t *si, void *uc)
{
	char msg[256];
	int len;

	len = snprintf(msg, sizeof(msg),
		       "# FUZZ FATAL: signal %d code %d addr %p in %s%s%s\n",
		       sig, si->si_code, si->si_addr, np_fz_who,
		       np_fz_self ? " during " : "",
		       np_fz_self ? np_fz_self->last : "");
	if (write(2, msg, len) < 0)
		_exit(4);
	signal(sig, SIG_DFL);
	raise(sig);
}

/* ---- the memory map churn --------------------------------------------- */

static void np_fz_churn_step(struct np_fz *z, __u64 *s)
{
	size_t n = 1 + np_fz_below(s, 64), i = np_fz_below(s, NP_FZ_WIN_PAGES);
	char *p, *q;
	pid_t kid;

	if (i + n > NP_FZ_WIN_PAGES)
		n = NP_FZ_WIN_PAGES - i;
	p = z->win + i * psz;
	switch (np_fz_below(s, 16)) {
	case 0:
		munmap(p, n * psz);
		break;
	case 1:
	case 2:
		mmap(p, n * psz, PROT_READ | PROT_WRITE,
		     MAP_FIXED | MAP_ANONYMOUS |
		     (np_fz_chance(s, 30) ? MAP_SHARED : MAP_PRIVATE), -1, 0);
		memset(p, 0x11, n * psz);
		break;
	case 3:
		/* A THP where it fits. */
		i &= ~511UL;
		if (i + 512 > NP_FZ_WIN_PAGES)
			break;
		p = z->win + i * psz;
		mmap(p, 512 * psz, PROT_READ | PROT_WRITE,
		     MAP_FIXED | MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
		madvise(p, 512 * psz, MADV_HUGEPAGE);
		memset(p, 0x22, 512 * psz);
		break;
	case 4:
		q = z->win + np_fz_below(s, NP_FZ_WIN_PAGES - n) * psz;
		mremap(p, n * psz, n * psz, MREMAP_MAYMOVE | MREMAP_FIXED, q);
		break;
	case 5:
		q = z->win + np_fz_below(s, NP_FZ_WIN_PAGES - n) * psz;
		q = mremap(p, n * psz, n * psz,
			   MREMAP_MAYMOVE | MREMAP_FIXED | MREMAP_DONTUNMAP, q);
		break;
	case 6:
		mprotect(p, n * psz, np_fz_pick(s, ((const int[]){ PROT_NONE,
			PROT_READ, PROT_READ | PROT_WRITE })));
		break;
	case 7:
	case 8:
		madvise(p, n * psz, np_fz_pick(s, ((const int[]){
			MADV_DONTNEED, MADV_FREE, 21 /* PAGEOUT */,
			25 /* COLLAPSE */, MADV_WILLNEED, MADV_NOHUGEPAGE,
			MADV_HUGEPAGE, 20 /* COLD */ })));
		break;
	case 9:
		if (np_fz_chance(s, 50))
			mlock(p, n * psz);
		else
			munlock(p, n * psz);
		break;
	case 10:
		/* fork: the child writes some pages (COW) and lives a bit. */
		kid = fork();
		if (kid == 0) {
			for (size_t k = 0; k < n; k++)
				if (mprotect(p + k * psz, psz,
					     PROT_READ | PROT_WRITE) == 0)
					p[k * psz] = 3;
			usleep(np_fz_below(s, 20000));
			_exit(0);
		}
		if (kid > 0) {
			pid_t old = atomic_exchange(&z->churn_kid, kid);

			if (old > 0)
				waitpid(old, NULL, 0);
		}
		break;
	default:
		/* Fault pages in for writing (no signal where we may not). */
		madvise(p, n * psz, np_fz_chance(s, 80) ? 23 /* POPULATE_WRITE */ :
			22 /* POPULATE_READ */);
		break;
	}
	atomic_fetch_add(&z->churn_ops, 1);
}

static void *np_fz_churn(void *arg)
{
	struct np_fz *z = arg;
	__u64 s = z->seed ^ 0x6368757276ULL;

	np_fz_who = "churn";

	while (!atomic_load(&z->stop))
		np_fz_churn_step(z, &s);
	return NULL;
}

static void *np_fz_thread(void *arg)
{
	struct np_fz_thread *t = arg;

	np_fz_who = "ioctl thread";
	np_fz_self = t;
	while (!atomic_load(&t->z->stop))
		np_fz_call(t);
	return NULL;
}

/* ---- the test ---------------------------------------------------------- */

FIXTURE(fuzz)
{
	struct np_fz *z;
	struct np_fz_thread t[NP_FZ_THREADS];
	size_t zlen;
};

FIXTURE_VARIANT(fuzz)
{
	int nobody;
};

FIXTURE_VARIANT_ADD(fuzz, root)
{
	.nobody = 0,
};

FIXTURE_VARIANT_ADD(fuzz, nobody)
{
	.nobody = 1,
};

static char *np_fz_map(size_t len, int prot)
{
	char *p = mmap(NULL, len, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* A region of @pages read-write pages followed by a PROT_NONE guard. */
static char *np_fz_guarded(size_t pages)
{
	char *p = np_fz_map((pages + 1) * psz, PROT_READ | PROT_WRITE);

	if (p)
		mprotect(p + pages * psz, psz, PROT_NONE);
	return p;
}

static pid_t np_fz_kid(int sleep_s)
{
	pid_t kid = fork();

	if (kid == 0) {
		char *m = np_fz_map(64 * psz, PROT_READ | PROT_WRITE);

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (m)
			memset(m, 7, 64 * psz);
		if (sleep_s)
			sleep(sleep_s);
		_exit(0);
	}
	return kid;
}

static void *np_fz_idle(void *arg)
{
	struct np_fz *z = arg;

	z->tid = syscall(SYS_gettid);
	while (!atomic_load(&z->stop))
		usleep(10000);
	return NULL;
}

FIXTURE_SETUP(fuzz)
{
	struct np_fz *z;

	self->z = NULL;
	psz = sysconf(_SC_PAGESIZE);
	self->zlen = sizeof(*z);
	z = self->z = (struct np_fz *)np_fz_map(self->zlen,
						 PROT_READ | PROT_WRITE);
	ASSERT_NE(NULL, z);
	z->fd = np_open();
	if (z->fd == -ENOENT)
		SKIP(return, "no " NUMAPLACE_DEVICE " (module not loaded)");
	ASSERT_GE(z->fd, 0);
	ASSERT_EQ(0, np_get_info(z->fd, &z->info));
	z->nobody = variant->nobody;
	if (z->nobody && geteuid())
		SKIP(return, "needs root to become nobody");
}

FIXTURE_TEARDOWN(fuzz)
{
	struct np_fz *z = self->z;

	if (!z)
		return;
	atomic_store(&z->stop, 1);
	if (z->child > 0)
		kill(z->child, SIGKILL);
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	if (z->fd >= 0)
		close(z->fd);
}

static long np_fz_seconds(int nobody)
{
	const char *e = getenv("NP_FUZZ_SECONDS");
	long sec = e ? strtol(e, NULL, 10) : NP_FZ_SECONDS;

	if (sec < 1)
		sec = 1;
	/* The unprivileged variant gets a share; root the rest. */
	if (nobody)
		return sec / NP_FZ_NOBODY_SHARE ?: 1;
	return sec - sec / NP_FZ_NOBODY_SHARE ?: 1;
}

TEST_F_TIMEOUT(fuzz, ioctls, 7200)
{
	NP_SKIPPED();
	struct np_fz *z = self->z;
	const char *e = getenv("NP_FUZZ_SEED");
	long sec = np_fz_seconds(z->nobody), t0, last_check;
	pthread_t churn, idle;
	int status;

	z->seed = e ? strtoull(e, NULL, 0) : (__u64)time(NULL) * 2654435761ULL;
	if (!z->seed)
		z->seed = 1;
	ksft_print_msg("seed %#llx (NP_FUZZ_SEED to replay), %ld s, %s\n",
		       (unsigned long long)z->seed, sec,
		       z->nobody ? "as nobody" : "as root");

	{
		struct sigaction sa = { .sa_sigaction = np_fz_fatal,
					.sa_flags = SA_SIGINFO };

		sigaction(SIGSEGV, &sa, NULL);
		sigaction(SIGBUS, &sa, NULL);
	}
	np_write_str("/sys/kernel/mm/transparent_hugepage/enabled", "madvise");
	/* The memory the calls point into. */
	z->win = np_fz_map(NP_FZ_WIN_PAGES * psz, PROT_READ | PROT_WRITE);
	z->canary = np_fz_map(NP_FZ_CANARY_PAGES * psz, PROT_READ | PROT_WRITE);
	z->ro = np_fz_map(psz, PROT_READ | PROT_WRITE);
	z->protnone = np_fz_map(psz, PROT_NONE);
	/* Below mmap_min_addr: nothing is ever mapped there. */
	z->unmapped = (char *)(uintptr_t)(0x10000 - psz);
	ASSERT_NE(NULL, z->win);
	ASSERT_NE(NULL, z->canary);
	ASSERT_NE(NULL, z->ro);
	ASSERT_NE(NULL, z->protnone);
	memset(z->win, 0x33, NP_FZ_WIN_PAGES * psz);
	madvise(z->canary, NP_FZ_CANARY_PAGES * psz, MADV_HUGEPAGE);
	{
		__u64 cs = z->seed;

		for (size_t i = 0; i < NP_FZ_CANARY_PAGES * psz / 8; i++)
			((__u64 *)z->canary)[i] = np_fz_next(&cs);
	}
	z->canary_sum = np_fz_sum(z->canary, NP_FZ_CANARY_PAGES * psz);
	for (size_t i = 0; i < psz / 8; i++)
		((__u64 *)z->ro)[i] = (uintptr_t)z->canary + (i % 64) * psz;
	mprotect(z->ro, psz, PROT_READ);

	if (z->nobody) {
		ASSERT_EQ(0, setresgid(65534, 65534, 65534));
		ASSERT_EQ(0, setresuid(65534, 65534, 65534));
	}
	/* Pids: a sleeping child, a zombie, one that is gone. */
	z->child = np_fz_kid(3600);
	z->zombie = np_fz_kid(0);
	z->gone = np_fz_kid(0);
	ASSERT_GT(z->child, 0);
	ASSERT_GT(z->zombie, 0);
	ASSERT_GT(z->gone, 0);
	ASSERT_EQ(z->gone, waitpid(z->gone, &status, 0));
	ASSERT_EQ(0, pthread_create(&idle, NULL, np_fz_idle, z));
	while (!z->tid)
		usleep(1000);

	for (int i = 0; i < NP_FZ_THREADS; i++) {
		struct np_fz_thread *t = &self->t[i];

		t->z = z;
		t->id = i;
		t->rng = z->seed + 0x9e3779b97f4a7c15ULL * (i + 1);
		t->sbuf = np_fz_guarded(NP_FZ_SBUF_PAGES);
		t->obuf = np_fz_guarded(NP_FZ_SCRATCH_PAGES);
		t->ibuf = np_fz_guarded(NP_FZ_SCRATCH_PAGES);
		t->before = malloc(NP_FZ_SBUF_PAGES * psz);
		ASSERT_NE(NULL, t->before);
		ASSERT_NE(NULL, t->sbuf);
		ASSERT_NE(NULL, t->obuf);
		ASSERT_NE(NULL, t->ibuf);
	}
	ASSERT_EQ(0, pthread_create(&churn, NULL, np_fz_churn, z));
	for (int i = 0; i < NP_FZ_THREADS; i++)
		ASSERT_EQ(0, pthread_create(&self->t[i].th, NULL, np_fz_thread,
					    &self->t[i]));

	t0 = last_check = np_mono_ms();
	while (np_mono_ms() - t0 < sec * 1000) {
		usleep(100000);
		/* The zombie stays a zombie (nobody reaps it but us). */
		if (np_mono_ms() - last_check >= 1000) {
			last_check = np_mono_ms();
			if (np_fz_sum(z->canary, NP_FZ_CANARY_PAGES * psz) !=
			    z->canary_sum)
				np_fz_fail(z, "the canary changed");
		}
	}
	atomic_store(&z->stop, 1);

	/* Every thread returns from its call within the grace period. */
	for (long tw = np_mono_ms();;) {
		int busy = 0;

		for (int i = 0; i < NP_FZ_THREADS; i++)
			busy += atomic_load(&self->t[i].in_call) != 0;
		if (!busy)
			break;
		if (np_mono_ms() - tw > NP_FZ_GRACE_MS) {
			for (int i = 0; i < NP_FZ_THREADS; i++)
				if (atomic_load(&self->t[i].in_call))
					ksft_print_msg("thread %d stuck in %s\n",
						       i, self->t[i].last);
			ASSERT_EQ(0, busy);
		}
		usleep(100000);
	}
	for (int i = 0; i < NP_FZ_THREADS; i++)
		pthread_join(self->t[i].th, NULL);
	pthread_join(churn, NULL);
	pthread_join(idle, NULL);

	ksft_print_msg("%ld calls, %ld churn ops, slowest %ld ms; 0: %ld, EINVAL %ld, E2BIG %ld, EFAULT %ld, ENOTTY %ld, ESRCH %ld, EPERM %ld, ENODEV %ld, EACCES %ld, EOPNOTSUPP %ld\n",
		       (long)atomic_load(&z->calls),
		       (long)atomic_load(&z->churn_ops),
		       (long)atomic_load(&z->max_ms),
		       (long)atomic_load(&z->by_errno[0]),
		       (long)atomic_load(&z->by_errno[EINVAL]),
		       (long)atomic_load(&z->by_errno[E2BIG]),
		       (long)atomic_load(&z->by_errno[EFAULT]),
		       (long)atomic_load(&z->by_errno[ENOTTY]),
		       (long)atomic_load(&z->by_errno[ESRCH]),
		       (long)atomic_load(&z->by_errno[EPERM]),
		       (long)atomic_load(&z->by_errno[ENODEV]),
		       (long)atomic_load(&z->by_errno[EACCES]),
		       (long)atomic_load(&z->by_errno[EOPNOTSUPP]));
	EXPECT_EQ(z->canary_sum, np_fz_sum(z->canary, NP_FZ_CANARY_PAGES * psz))
		TH_LOG("the canary changed");
	/* The fuzzing reached past the dispatch. */
	{
		long ok = atomic_load(&z->by_errno[0]);
		long errors = atomic_load(&z->errors);

		EXPECT_LT(0, ok);
		EXPECT_EQ(0, errors);
	}
	/* The device still answers, as before. */
	{
		struct numaplace_info info;

		ASSERT_EQ(0, np_get_info(z->fd, &info));
		EXPECT_EQ(0, memcmp(&info, &z->info, sizeof(info)));
	}
}

/*
 * The largest range there is, without a status array: the holes between
 * VMAs must not cost a round of work per 64 MiB (that took tens of minutes
 * under TCG). Bounded by the harness timeout; the counters add up.
 */
TEST(migrate_whole_address_space)
{
	const __u64 len = 1ULL << 47;	/* x86-64 user address space */
	struct numaplace_info info;
	struct numaplace_migrate m;
	__u64 failed = 0;
	long t0;
	int fd = np_open(), ret;

	if (fd == -ENOENT)
		SKIP(return, "no " NUMAPLACE_DEVICE " (module not loaded)");
	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, np_get_info(fd, &info));
	if (!np_node_isset(info.node_memory, 1))
		SKIP(return, "needs memory on node 1");
	for (int e = 0; e < 3; e++) {
		__u32 flags = e == 0 ? 0 : e == 1 ?
			      NUMAPLACE_MIGRATE_ENGINE_KERNEL :
			      NUMAPLACE_MIGRATE_ENGINE_VMA;

		t0 = np_mono_ms();
		ret = np_migrate_node(fd, 0, flags, 0, len, e & 1, NULL, &m);
		if (ret == -EOPNOTSUPP)
			continue;
		ASSERT_EQ(0, ret);
		ksft_print_msg("engine flags %#x: %llu pages, %llu moved, %llu failed, %ld ms\n",
			       flags, (unsigned long long)m.done,
			       (unsigned long long)m.nr_moved_pages,
			       (unsigned long long)m.nr_failed_pages,
			       np_mono_ms() - t0);
		EXPECT_EQ(len / psz, m.done);
		EXPECT_EQ(m.done, m.nr_moved_pages + m.nr_in_place_pages +
				  m.nr_failed_pages);
		failed = 0;
		for (int r = 0; r < NUMAPLACE_FAIL_MAX; r++)
			failed += m.nr_failed[r];
		EXPECT_EQ(failed, m.nr_failed_pages);
		/* Nearly all of it is holes. */
		EXPECT_LT(len / psz / 2, m.nr_failed[NUMAPLACE_FAIL_EFAULT]);
	}
	close(fd);
}

NP_HARNESS_MAIN
