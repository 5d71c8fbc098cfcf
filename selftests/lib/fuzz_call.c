// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz.c's random values (addresses, counts, lengths, nodes, pids,
 * struct buffers) and its calls, each checked against what the ioctl
 * may answer and write (fuzz_lib.h).
 */
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "fuzz_lib.h"

long np_fz_psz = 4096;

__u64 np_fz_next(__u64 *s)
{
	__u64 x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dULL;
}

__u64 np_fz_below(__u64 *s, __u64 n)
{
	return n ? np_fz_next(s) % n : 0;
}

int np_fz_chance(__u64 *s, int percent)
{
	return (int)np_fz_below(s, 100) < percent;
}


__u64 np_fz_sum(const char *p, size_t len)
{
	__u64 h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < len; i += 8)
		h = (h ^ *(const __u64 *)(p + i)) * 0x100000001b3ULL;
	return h;
}

void np_fz_fail(struct np_fz *z, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	np_vfail(&z->errors, &z->logged, NP_FZ_LOG_MAX, "FUZZ FAIL: ", fmt, ap);
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
		a = (uintptr_t)z->win + np_fz_below(s, NP_FZ_WIN_PAGES) * np_fz_psz;
		break;
	case 5 ... 7:
		a = (uintptr_t)z->canary +
		    np_fz_below(s, NP_FZ_CANARY_PAGES) * np_fz_psz;
		break;
	case 8:
		a = (uintptr_t)t->obuf;	/* our own scratch */
		break;
	case 9:
		a = (uintptr_t)z->ro;
		break;
	case 10:
		a = np_fz_pick(s, ((const __u64[]){ 0, np_fz_psz, 0x7ffffffff000ULL,
			0x800000000000ULL, 0xffff888000000000ULL,
			0xffffffffff600000ULL, ~0ULL, ~0ULL - np_fz_psz + 1,
			0x1000000000000000ULL }));
		break;
	default:
		a = np_fz_next(s);
		break;
	}
	if (np_fz_chance(s, 10))
		a += np_fz_below(s, np_fz_psz);	/* inside the page */
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
		return np_fz_below(s, NP_FZ_WIN_PAGES + 64) * np_fz_psz +
		       (np_fz_chance(s, 20) ? np_fz_below(s, np_fz_psz) : 0);
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
		       (np_fz_below(s, NP_FZ_SCRATCH_PAGES * np_fz_psz) & ~7ULL);
	case 10:
		/* The last bytes before the guard. */
		return (uintptr_t)t->obuf + NP_FZ_SCRATCH_PAGES * np_fz_psz -
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
	size_t n = NP_FZ_SCRATCH_PAGES * np_fz_psz;

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
					a += np_fz_psz;
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
		       (np_fz_below(s, NP_FZ_CANARY_PAGES * np_fz_psz) & ~7ULL);
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
	/* Random fields into its struct @arg (size and flags are set). */
	void (*fill)(struct np_fz_thread *t, void *arg);
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

static void np_fz_fill_info(struct np_fz_thread *t, void *arg)
{
	struct numaplace_info *a = arg;

	if (np_fz_chance(&t->rng, 5))
		a->reserved0 = 1;
	if (np_fz_chance(&t->rng, 5))
		a->reserved[np_fz_below(&t->rng, 4)] = np_fz_next(&t->rng);
	if (np_fz_chance(&t->rng, 10))
		a->abi_version = np_fz_next(&t->rng);	/* out field: ignored */
}

/* A node_pages[] output and a length around nr_node_ids. */
static void np_fz_node_pages(struct np_fz_thread *t, __u64 *ptr, __u32 *len)
{
	*ptr = np_fz_out(t);
	*len = np_fz_pick(&t->rng, ((const __u32[]){ 0, 1, 2, 3,
		t->z->info.nr_node_ids, 64, 1024, 1025, ~0U }));
}

/*
 * A field a call's struct gets now and then that the call does not take
 * (the other mode's, an output field, a reserved one): with @pct percent
 * chance, a value of @gen (NULL: 1) in @size bytes at @off, or in an
 * element of the @nr there picked at random (the pick drawn first).
 */
struct np_fz_stray {
	unsigned short off;
	unsigned char size;	/* 4 or 8 */
	unsigned char nr;	/* elements: 1 for a plain field */
	unsigned char pct;
	__u64 (*gen)(struct np_fz_thread *t);
};

/* A stray field of struct numaplace_@type, or an array's element. */
#define NP_FZ_STRAYS(type, field, elems, pct, gen)			\
	{ offsetof(struct numaplace_##type, field),			\
	  NP_SIZE_4_OR_8(sizeof(((struct numaplace_##type *)0)->field) /	\
			 (elems)),					\
	  elems, pct, gen }
#define NP_FZ_STRAY(type, field, pct, gen)				\
	NP_FZ_STRAYS(type, field, 1, pct, gen)

/* np_fz_next() and np_fz_count() as the generators of a stray. */
static __u64 np_fz_any(struct np_fz_thread *t)
{
	return np_fz_next(&t->rng);
}

static __u64 np_fz_count_of(struct np_fz_thread *t)
{
	return np_fz_count(&t->rng);
}

/* The strays @f[0..@n) into the struct @a, in order. */
static void np_fz_strays(struct np_fz_thread *t, void *a,
			 const struct np_fz_stray *f, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char *at = (char *)a + f[i].off;
		__u64 v;

		if (!np_fz_chance(&t->rng, f[i].pct))
			continue;
		if (f[i].nr > 1)
			at += np_fz_below(&t->rng, f[i].nr) * f[i].size;
		v = f[i].gen ? f[i].gen(t) : 1;
		if (f[i].size == sizeof(__u32))
			*(__u32 *)at = v;
		else
			*(__u64 *)at = v;
	}
}

/*
 * The pages a call is about: an array of addresses (@pages), or a range
 * (the array's fields or the range's are left as they are).
 */
static void np_fz_pages_or_range(struct np_fz_thread *t, int pages,
				 __u64 *pages_ptr, __u64 *count,
				 __u64 *start, __u64 *len)
{
	if (pages) {
		*pages_ptr = np_fz_in(t, 0);
		*count = np_fz_count(&t->rng);
	} else {
		*start = np_fz_addr(t);
		*len = np_fz_len(&t->rng);
	}
}

/* Now and then a field of the other mode, or an out field. */
static const struct np_fz_stray np_fz_query_strays[] = {
	NP_FZ_STRAY(query, runs_ptr, 5, np_fz_out),
	NP_FZ_STRAY(query, start, 5, np_fz_addr),
	NP_FZ_STRAY(query, count, 5, np_fz_count_of),
	NP_FZ_STRAY(query, runs_cap, 5, np_fz_count_of),
	NP_FZ_STRAY(query, done, 10, np_fz_any),
	NP_FZ_STRAY(query, nr_runs, 10, np_fz_any),
	NP_FZ_STRAY(query, reserved0, 4, NULL),
	NP_FZ_STRAY(query, reserved1, 4, NULL),
};

/* Now and then a field of the other mode; out fields are ignored. */
static const struct np_fz_stray np_fz_migrate_strays[] = {
	NP_FZ_STRAY(migrate, count, 5, np_fz_count_of),
	NP_FZ_STRAY(migrate, start, 5, np_fz_addr),
	NP_FZ_STRAY(migrate, done, 10, np_fz_any),
	NP_FZ_STRAYS(migrate, nr_failed, NUMAPLACE_FAIL_MAX, 10, NULL),
	NP_FZ_STRAY(migrate, reserved0, 4, NULL),
};

/* Now and then a reserved field. */
static const struct np_fz_stray np_fz_watch_strays[] = {
	NP_FZ_STRAY(watch, reserved0, 4, NULL),
	NP_FZ_STRAY(watch, reserved1, 4, NULL),
};

static void np_fz_fill_watch(struct np_fz_thread *t, void *arg)
{
	struct numaplace_watch *a = arg;
	__u64 *s = &t->rng;

	a->pid = np_fz_pid(t);
	a->start = np_fz_addr(t);
	a->len = np_fz_len(s);
	a->cookie = np_fz_next(s);
	if (np_fz_chance(s, 40))
		np_fz_node_pages(t, &a->node_pages_ptr, &a->node_pages_len);
	np_fz_strays(t, a, np_fz_watch_strays, ARRAY_SIZE(np_fz_watch_strays));
	if (np_fz_chance(s, 4))
		a->reserved[np_fz_below(s, 4)] = np_fz_next(s);
}

static void np_fz_fill_query(struct np_fz_thread *t, void *arg)
{
	struct numaplace_query *a = arg;
	__u64 *s = &t->rng;

	a->pid = np_fz_pid(t);
	np_fz_pages_or_range(t, a->flags & NUMAPLACE_QUERY_PAGES,
			     &a->pages_ptr, &a->count, &a->start, &a->len);
	if (!(a->flags & NUMAPLACE_QUERY_PAGES) && np_fz_chance(s, 40)) {
		a->runs_ptr = np_fz_out(t);
		a->runs_cap = np_fz_count(s);
	}
	if (np_fz_chance(s, 70))
		a->status_ptr = np_fz_out(t);
	if (np_fz_chance(s, 40))
		np_fz_node_pages(t, &a->node_pages_ptr, &a->node_pages_len);
	np_fz_strays(t, a, np_fz_query_strays, ARRAY_SIZE(np_fz_query_strays));
	if (np_fz_chance(s, 4))
		a->reserved[np_fz_below(s, 3)] = 1ULL << np_fz_below(s, 64);
	if (np_fz_chance(s, 10))
		a->nr_young = np_fz_next(s);	/* out field: ignored */
}

static void np_fz_fill_migrate(struct np_fz_thread *t, void *arg)
{
	struct numaplace_migrate *a = arg;
	__u64 *s = &t->rng;

	a->pid = np_fz_pid(t);
	a->policy = np_fz_chance(s, 95) ? np_fz_below(s, 4) :
					  (__u32)np_fz_next(s);
	np_fz_pages_or_range(t, a->flags & NUMAPLACE_MIGRATE_PAGES,
			     &a->pages_ptr, &a->count, &a->start, &a->len);
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
	np_fz_strays(t, a, np_fz_migrate_strays,
		     ARRAY_SIZE(np_fz_migrate_strays));
	if (np_fz_chance(s, 4))
		a->reserved[np_fz_below(s, 4)] = 1ULL << np_fz_below(s, 64);
}

/* Documentation/abi.md, per command. */
static const struct np_fz_cmd np_fz_cmds[NUMAPLACE_CMD_MAX] = {
	[NUMAPLACE_CMD_INFO] = {
		"INFO", sizeof(struct numaplace_info), NUMAPLACE_INFO_SIZE_VER0,
		0, NP_FZ_EINVAL | NP_FZ_E2BIG | NP_FZ_EFAULT, np_fz_fill_info,
	},
	[NUMAPLACE_CMD_QUERY] = {
		"QUERY", sizeof(struct numaplace_query),
		NUMAPLACE_QUERY_SIZE_VER0,
		NUMAPLACE_QUERY_PAGES | NUMAPLACE_QUERY_AS_SYSCALL |
		NUMAPLACE_QUERY_ACCESS | NUMAPLACE_QUERY_CLEAR_ACCESS |
		NUMAPLACE_QUERY_FLUSH_TLB,
		NP_FZ_EINVAL | NP_FZ_E2BIG | NP_FZ_EFAULT | NP_FZ_ESRCH |
		NP_FZ_EPERM | NP_FZ_EINTR | NP_FZ_EACCES | NP_FZ_EOPNOTSUPP,
		np_fz_fill_query,
	},
	[NUMAPLACE_CMD_MIGRATE] = {
		"MIGRATE", sizeof(struct numaplace_migrate),
		NUMAPLACE_MIGRATE_SIZE_VER0, 0xff,
		NP_FZ_EINVAL | NP_FZ_E2BIG | NP_FZ_EFAULT | NP_FZ_ESRCH |
		NP_FZ_EPERM | NP_FZ_EINTR | NP_FZ_ENODEV | NP_FZ_EACCES |
		NP_FZ_EOPNOTSUPP, np_fz_fill_migrate,
	},
	/* Returns a new fd; writes nothing back. */
	[NUMAPLACE_CMD_WATCH] = {
		"WATCH", sizeof(struct numaplace_watch),
		NUMAPLACE_WATCH_SIZE_VER0,
		NUMAPLACE_WATCH_CLOEXEC | NUMAPLACE_WATCH_NONBLOCK,
		NP_FZ_EINVAL | NP_FZ_E2BIG | NP_FZ_EFAULT | NP_FZ_ESRCH |
		NP_FZ_EPERM | NP_FZ_EINTR | NP_FZ_EOPNOTSUPP | NP_FZ_ENOMEM |
		NP_FZ_EMFILE, np_fz_fill_watch,
	},
};

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
void np_fz_call(struct np_fz_thread *t)
{
	struct np_fz *z = t->z;
	__u64 *s = &t->rng;
	const size_t slen = NP_FZ_SBUF_PAGES * np_fz_psz;
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
		usize = np_fz_pick(s, ((const size_t[]){ np_fz_psz, np_fz_psz + 1,
			np_fz_psz + 8, 2 * np_fz_psz, 1 << 20, ~0U }));
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
	if (c->fill)	/* a command without one is sent as it is */
		c->fill(t, &a);

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
	} else if (usize > (size_t)np_fz_psz) {
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
