/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The soak's builders (soak_lib.c, in the tests' library): the stamped
 * buffers and their writers, the fork child, the scratch regions and the
 * churn thread that keeps remapping them. soak.c's migrators query and
 * move them.
 */
#ifndef NP_SOAK_LIB_H
#define NP_SOAK_LIB_H

#include <stdatomic.h>

#include "np_test.h"
#include "migrate_lib.h"

#define NP_SOAK_DEFAULT_S	15	/* NP_SOAK_SECONDS unset: make check */
#define NP_SOAK_MAX_S		3600	/* the harness's timeout needs a bound */
#define NP_SOAK_END_S		300	/* final checks, after the mix */
#define NP_SOAK_PAGES		256	/* pages of a 4 KiB-page buffer */
#define NP_SOAK_THP_PAGES	1024	/* two PMDs */
#define NP_SOAK_MIGRATORS	2	/* threads mixing queries and moves */
#define NP_SOAK_SLOTS		4	/* scratch regions of the churn thread */
#define NP_SOAK_SLOT_PAGES	64	/* pages of a scratch region */
#define NP_SOAK_PMD		(2UL << 20)	/* a PMD's bytes: the THP buffer's unit */
#define NP_SOAK_LOG		8	/* failure lines printed, then counted */
#define NP_SOAK_FINAL_TRIES	10	/* calls to get -EBUSY pages home */
#define NP_SOAK_ISO_WAIT_MS	10000	/* nr_isolated back to baseline in */
#define NP_SOAK_WRITER_NAP_US	500	/* writers pause after each pass */
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE		25	/* v6.1 */
#endif
#ifndef MREMAP_DONTUNMAP
#define MREMAP_DONTUNMAP	4	/* v5.7 */
#endif


enum np_sb_kind { NP_SB_ANON, NP_SB_THP, NP_SB_FORK, NP_SB_MEMFD, NP_SB_NR };
extern const char *const np_sb_name[NP_SB_NR];

/* Shared with the fork child (MAP_SHARED). */
struct np_soak_shared {
	atomic_int stop;	/* writers: leave */
	atomic_int verify;	/* the child: check every page, exit */
	atomic_int child_ready;
	atomic_int child_done;
	atomic_long errors;	/* failures of any thread or process */
	atomic_long logged;	/* failure lines printed */
	atomic_long child_bad;	/* pages the child saw wrong at the end */
	atomic_long writes;	/* pages stamped */
	char *buf[NP_SB_NR];
	size_t n[NP_SB_NR];	/* pages */
	atomic_ullong *gen[NP_SB_NR]; /* last generation of each page */
};

extern long np_soak_psz;
extern struct np_soak_shared *np_soak_sh;

/*
 * ksft_print_msg() and flush: the harness ends a test with _exit(), which
 * drops what stdio still buffers when stdout is a file (run_tests.np_soak_sh).
 */
#define np_msg(fmt, ...)						\
	do {								\
		ksft_print_msg(fmt, ##__VA_ARGS__);			\
		fflush(stdout);						\
	} while (0)

#define np_fail(fmt, ...)						\
	do {								\
		atomic_fetch_add(&np_soak_sh->errors, 1);			\
		if (atomic_fetch_add(&np_soak_sh->logged, 1) < NP_SOAK_LOG)	\
			fprintf(stderr, "# FAIL " fmt "\n", ##__VA_ARGS__); \
	} while (0)


struct np_slot {
	_Atomic(uintptr_t) addr;	/* 0: nothing mapped */
	size_t len;			/* the churn thread's alone */
	__u64 gen;
	int zero;			/* contents: zeros, not the pattern */
};

extern struct np_slot np_soak_slots[NP_SOAK_SLOTS];

struct np_soak_ops {
	atomic_long queries, migrations, moved, busy, churn;
};
extern struct np_soak_ops np_soak_count;
/* The churn thread and the migrators: leave. */
extern atomic_int np_soak_stop;

struct np_churn_arg {
	__u64 seed;
};

__u64 np_rand(__u64 *s);
unsigned long np_rand_below(__u64 *s, unsigned long n);
__u64 np_word(int b, size_t i, __u64 g, size_t k);
int np_page_ok(const char *p, int b, size_t i, __u64 g);
void np_page_stamp(char *p, int b, size_t i, __u64 g);
void np_write_loop(int b, size_t id, size_t stride);
void *np_writer(void *arg);
long np_bad_pages(int b, long *first);
void np_soak_child(void);
__u64 np_slot_word(int s, __u64 g, size_t k);
void np_slot_fill(int s);
size_t np_slot_check(int s, uintptr_t addr);
void np_slot_verify(int s, const char *after);
void np_slot_map(int s, __u64 *rs);
void np_slot_unmap(int s);
void np_slot_remap(int s, __u64 *rs);
void np_slot_fork(int s);
void np_slot_advise(int s, __u64 *rs);
void np_slot_protect(int s);
void np_thp_churn(__u64 *rs);
void *np_churn(void *arg);

#endif /* NP_SOAK_LIB_H */
