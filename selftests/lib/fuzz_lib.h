/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The ioctl fuzzer of fuzz.c: its shared state, and the random values
 * and calls it makes (fuzz_call.c, in the tests' library: no kselftest
 * harness there). What each call may answer is fuzz.c's comment.
 */
#ifndef NP_FUZZ_LIB_H
#define NP_FUZZ_LIB_H

#include <pthread.h>
#include <stdatomic.h>

#include "np_test.h"

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif

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

/* The page size: the fixture sets it before any call. */
extern long np_fz_psz;

/* xorshift64*: the next value of stream @s; one below @n; @percent odds. */
__u64 np_fz_next(__u64 *s);
__u64 np_fz_below(__u64 *s, __u64 n);
int np_fz_chance(__u64 *s, int percent);

/* A checksum of @len bytes (a multiple of 8) at @p. */
__u64 np_fz_sum(const char *p, size_t len);

/* Count a failed rule; the first NP_FZ_LOG_MAX are printed. */
void np_fz_fail(struct np_fz *z, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* One random call of thread @t, checked (t->last says which). */
void np_fz_call(struct np_fz_thread *t);

/* A random element of array @arr. */
#define np_fz_pick(s, arr) ((arr)[np_fz_below(s, ARRAY_SIZE(arr))])

#endif /* NP_FUZZ_LIB_H */
