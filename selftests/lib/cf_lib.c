// SPDX-License-Identifier: GPL-2.0
/*
 * The conformance tests' engine (cf_lib.h): one move_pages(2) case built
 * twice, run through the system call and through libnumaplace, the
 * answers compared. conformance.c (the LTP move_pages cases and the page
 * kinds), conformance_random.c (random layouts) and
 * conformance_migrate_pages.c (migrate_pages(2)) use it.
 */
#include <dlfcn.h>
#include <grp.h>
#include <limits.h>
#include <linux/mempolicy.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "numaplace.h"
#include "np_test.h"
#include "migrate_lib.h"
#include "cf_lib.h"

struct cf_env cf_env;

/*
 * The oracle is the kernel: glibc's own syscall(), taken from libc.so.6
 * itself, so that no interposed syscall() (libnumaplace-preload.so, or a
 * libnumaplace.so that wrongly carried it) can stand in for the kernel.
 */
cf_syscall_fn cf_sys;

int cf_sys_init(void)
{
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);

	cf_sys = libc ? (cf_syscall_fn)dlsym(libc, "syscall") : NULL;
	return cf_sys ? 0 : -ENOENT;
}

/* ---- memory ------------------------------------------------------------ */

void *cf_map(struct cf_case *c, size_t len, int prot, int flags)
{
	void *p;

	if (c->nr_maps == CF_MAX_MAPS)
		return NULL;
	p = mmap(NULL, len, prot, flags, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	c->maps[c->nr_maps].p = p;
	c->maps[c->nr_maps++].len = len;
	return p;
}

long cf_mbind(void *p, size_t len, int node)
{
	unsigned long mask[NUMAPLACE_NODE_WORDS] = { 0 };

	mask[node / 64] = 1UL << (node % 64);
	return syscall(SYS_mbind, p, len, MPOL_BIND, mask,
		       NUMAPLACE_MAX_NODES + 1, 0) ? -errno : 0;
}

/*
 * @npages pages bound to @node (MAP_SHARED when @shared), THP-aligned
 * and THP-backed when @thp, written when @touch. NULL on failure.
 */
char *cf_pages_on(struct cf_case *c, size_t npages, int node, int shared,
		  int thp, int touch)
{
	size_t len = npages * cf_env.psz;
	char *raw, *p;

	raw = cf_map(c, len + (thp ? CF_PMD : 0), PROT_READ | PROT_WRITE,
		     (shared ? MAP_SHARED : MAP_PRIVATE) | MAP_ANONYMOUS);
	if (!raw)
		return NULL;
	p = thp ? (char *)(((uintptr_t)raw + CF_PMD - 1) & ~(CF_PMD - 1)) :
		  raw;
	madvise(p, len, thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
	if (node >= 0 && cf_mbind(p, len, node))
		return NULL;
	if (touch)
		memset(p, 0x3c, len);
	return p;
}

/* 1 when the 2 MiB at @p are one THP (AnonHugePages of its VMA). */
int cf_thp_backed(const void *p)
{
	unsigned long s, t;
	char line[256];
	long kb = 0;
	int in = 0;
	FILE *f = fopen("/proc/self/smaps", "re");

	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &s, &t) == 2 &&
		    strchr(line, '-') < strchr(line, ' ')) {
			in = s <= (uintptr_t)p && (uintptr_t)p < t;
			continue;
		}
		if (in && sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
			break;
	}
	if (f)
		fclose(f);
	return kb * 1024 >= (long)CF_PMD;
}

/* pages[] and nodes[] (nodes only when @move) for @n entries. */
int cf_arrays(struct cf_case *c, unsigned long n, int move)
{
	c->pages = c->pages_alloc = calloc(n + 1, sizeof(*c->pages));
	c->nodes = c->nodes_alloc = move ? calloc(n + 1, sizeof(*c->nodes)) :
				    NULL;
	c->thp_second = calloc(n + 1, 1);
	c->count = c->nst = n;
	return !c->pages || (move && !c->nodes) || !c->thp_second ? -ENOMEM :
	       0;
}

/* Entries @first.. of pages[] are the pages of @p, every @step bytes. */
void cf_fill(struct cf_case *c, unsigned long first, unsigned long n,
	     char *p, size_t step, int node)
{
	for (unsigned long i = 0; i < n; i++) {
		c->pages[first + i] = p + i * step;
		if (c->nodes)
			c->nodes[first + i] = node;
	}
}

void cf_want(struct cf_case *c, unsigned long i, int st)
{
	if (c->nr_want < CF_MAX_WANT) {
		c->want[c->nr_want].i = i;
		c->want[c->nr_want++].st = st;
	}
}

int cf_passes(struct cf_case *c, unsigned long i, int st)
{
	c->want_ret = 0;
	cf_want(c, i, st);
	return 0;
}

int cf_fails(struct cf_case *c, int err)
{
	c->want_ret = -1;
	c->want_err = err;
	return 0;
}

int cf_fails_on(struct cf_case *c, pid_t pid, int flags, int err)
{
	c->pid = pid;
	c->flags = flags;
	c->no_place = 1;
	return cf_fails(c, err);
}

/* A child that touches [p, p + len) and waits to be killed. */
pid_t cf_sharer(struct cf_case *c, char *p, size_t len)
{
	pid_t pid;

	if (c->nr_kids == CF_MAX_KIDS)
		return -1;
	pid = np_fork_sharer(p, len);
	if (pid > 0)
		c->kids[c->nr_kids++] = pid;
	return pid;
}

/* What cf_target()'s child builds, and where it tells the address. */
struct cf_target_arg {
	uid_t uid;
	int dumpable;
	size_t npages;
	int node;
	char **shared;
};

static int cf_target_build(void *arg)
{
	const struct cf_target_arg *t = arg;
	struct cf_case own = { 0 };
	char *p;

	if (np_become(t->uid, t->dumpable))
		return 1;
	p = cf_pages_on(&own, t->npages, t->node, 0, 0, 1);
	if (!p)
		return 1;
	*t->shared = p;
	return 0;
}

/*
 * A child that becomes @uid (0: stays), dumpable or not, builds @npages
 * pages on @node and
 * waits to be killed; *@base gets their address (the child's layout is
 * the parent's, so pages[] can name them). Its pid, or -1.
 */
pid_t cf_target(struct cf_case *c, uid_t uid, int dumpable, size_t npages,
		int node, char **base)
{
	char **shared = mmap(NULL, sizeof(char *), PROT_READ | PROT_WRITE,
			     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct cf_target_arg t = {
		.uid = uid, .dumpable = dumpable, .npages = npages,
		.node = node, .shared = shared,
	};
	pid_t pid;

	if (shared == MAP_FAILED)
		return -1;
	pid = c->nr_kids == CF_MAX_KIDS ? -1 :
	      np_fork_ready(cf_target_build, &t);
	if (pid > 0) {
		c->kids[c->nr_kids++] = pid;
		*base = *shared;
	}
	munmap(shared, sizeof(char *));
	return pid;
}

void cf_case_free(struct cf_case *c)
{
	for (int i = 0; i < c->nr_kids; i++) {
		kill(c->kids[i], SIGKILL);
		waitpid(c->kids[i], NULL, 0);
	}
	for (int i = 0; i < c->nr_maps; i++)
		munmap(c->maps[i].p, c->maps[i].len);
	free(c->pages_alloc);
	free(c->nodes_alloc);
	free(c->thp_second);
	free(c->layout);
	free(c->ent_page);
	memset(c, 0, sizeof(*c));
}

/* ---- one call, both ways ------------------------------------------------ */

static long cf_call(int lib, const struct cf_case *c, int *status)
{
	if (c->null_status)
		status = NULL;
	if (lib)
		return numaplace_move_pages(c->pid, c->count, c->pages,
					    c->nodes, status, c->flags);
	return cf_sys(SYS_move_pages, c->pid, c->count, c->pages, c->nodes,
		       status, c->flags);
}

/*
 * A run's own buffers (the status array, the shared answer) are mapped no
 * smaller than CF_RUN_MAP_MIN, more than any hole a case leaves inside its
 * pages (a slot is 2 MiB). The kernel's top-down search would otherwise
 * put them in the highest hole that fits, among the pages under test,
 * and their first touch, on whichever CPU the run was on, would decide a
 * placement the comparison reads.
 */
#define CF_RUN_MAP_MIN	(4UL << 20)

static size_t cf_run_len(size_t len)
{
	return len < CF_RUN_MAP_MIN ? CF_RUN_MAP_MIN : len;
}

static void *cf_run_map(size_t len)
{
	void *p = mmap(NULL, cf_run_len(len), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* Does [@p, @p + @len) fall inside one of @c's mappings (or its holes)? */
static bool cf_in_case(const struct cf_case *c, const void *p, size_t len)
{
	uintptr_t a = (uintptr_t)p;

	for (int i = 0; i < c->nr_maps; i++) {
		uintptr_t m = (uintptr_t)c->maps[i].p;

		if (a < m + c->maps[i].len && m < a + len)
			return true;
	}
	return false;
}

void cf_result_free(struct cf_result *r, unsigned long nst)
{
	if (r->status)
		munmap(r->status, cf_run_len((nst + CF_ROOM) * sizeof(int)));
	free(r->place);
	memset(r, 0, sizeof(*r));
}

/* Run @c through the syscall (@lib 0) or the library. 0 or -errno. */
int cf_run(int lib, const struct cf_case *c, struct cf_result *r)
{
	size_t room = (c->nst + CF_ROOM) * sizeof(int);
	struct { long ret; int err; } *sh;
	int status, ret = 0;
	pid_t kid;

	memset(r, 0, sizeof(*r));
	r->status = cf_run_map(room);
	sh = cf_run_map(sizeof(*sh));
	r->place = calloc(c->nst + 1, sizeof(int));
	if (!r->status || !sh || !r->place) {
		ret = -ENOMEM;
		goto out;
	}
	if (cf_in_case(c, r->status, room) || cf_in_case(c, sh, sizeof(*sh))) {
		fprintf(stderr, "# %s: the run's own buffers (%p, %p) lie among the case's pages: a test bug\n",
			c->what, (void *)r->status, (void *)sh);
		ret = -EADDRINUSE;
		goto out;
	}
	for (size_t i = 0; i < c->nst + CF_ROOM; i++)
		r->status[i] = CF_SENTINEL;

	if (c->as_uid && !c->use_seteuid) {
		kid = fork();
		if (kid < 0) {
			ret = -errno;
			goto out;
		}
		if (!kid) {
			if (np_drop_to(c->as_uid))
				_exit(1);
			errno = 0;
			sh->ret = cf_call(lib, c, r->status);
			sh->err = sh->ret < 0 ? errno : 0;
			_exit(0);
		}
		if (waitpid(kid, &status, 0) != kid || !WIFEXITED(status) ||
		    WEXITSTATUS(status)) {
			ret = -ECHILD;
			goto out;
		}
	} else {
		if (c->use_seteuid && seteuid(c->as_uid)) {
			ret = -errno;
			goto out;
		}
		errno = 0;
		sh->ret = cf_call(lib, c, r->status);
		sh->err = sh->ret < 0 ? errno : 0;
		if (c->use_seteuid && seteuid(0)) {
			ret = -errno;
			goto out;
		}
	}
	r->ret = sh->ret;
	r->err = sh->err;

	for (size_t i = 0; i < c->nst; i++)
		r->place[i] = CF_SENTINEL;
	if (!c->no_place && c->nst &&
	    cf_sys(SYS_move_pages, c->pid, c->nst, c->pages, NULL, r->place,
		    0) < 0)
		ret = -errno;
out:
	if (sh)
		munmap(sh, cf_run_len(sizeof(*sh)));
	return ret;
}

const char *cf_errname(int err)
{
	const char *name = err ? strerrorname_np(err) : "0";

	return name ? name : "?";
}

/*
 * The syscall's answer and the library's, entry by entry. Returns the
 * number of differences; the accepted ones are counted in *@accepted.
 */
int cf_compare(const struct cf_case *c, const struct cf_result *s,
	       const struct cf_result *l, int *accepted)
{
	int bad = 0, logged = 0;

	if (s->ret != l->ret || s->err != l->err) {
		bad++;
		fprintf(stderr, "# %s: syscall returned %ld (errno %s), library %ld (errno %s)\n",
			c->what, s->ret, cf_errname(s->err), l->ret,
			cf_errname(l->err));
	}
	for (unsigned long i = 0; i < c->nst + CF_TAIL; i++) {
		int sys = s->status[i], lib = l->status[i];

		if (i < c->nst && c->thp_second[i] == CF_ACCEPT_CONTESTED &&
		    c->nodes && !c->no_place) {
			/* True: on its target where it says so, or an errno. */
			if (lib >= 0 ? lib == c->nodes[i] && lib == l->place[i] :
				       lib == -EBUSY || lib == sys) {
				*accepted += lib != sys;
				continue;
			}
		} else if (sys == lib) {
			continue;
		} else if (i < c->nst && c->thp_second[i] && c->nodes &&
			   lib == c->nodes[i] &&
			   (sys == -EBUSY ||
			    (c->thp_second[i] == CF_ACCEPT_HUGETLB &&
			     sys == -EACCES))) {
			++*accepted;
			continue;
		}
		if (!bad++ && c->layout)
			fprintf(stderr, "# %s: layout: %s\n", c->what, c->layout);
		if (logged++ < CF_LOG_MAX)
			fprintf(stderr, "# %s: status[%lu] (%p%s%s%d, layout page %d): syscall %d, library %d\n",
				c->what, i, i < c->nst ? c->pages[i] : NULL,
				i >= c->nst ? ", past the end" : "",
				c->nodes && i < c->nst ? ", to node " : ", node ",
				c->nodes && i < c->nst ? c->nodes[i] : -1,
				c->ent_page && i < c->nst ?
				(int)c->ent_page[i] : -1, sys, lib);
	}
	for (unsigned long i = 0; !c->no_place && i < c->nst; i++) {
		if (s->place[i] == l->place[i] ||
		    c->thp_second[i] == CF_ACCEPT_CONTESTED)
			continue;
		if (!bad++ && c->layout)
			fprintf(stderr, "# %s: layout: %s\n", c->what, c->layout);
		if (logged++ < CF_LOG_MAX)
			fprintf(stderr, "# %s: page %lu (%p, layout page %d, to node %d) after the call: on %d via the syscall, on %d via the library\n",
				c->what, i, c->pages[i],
				c->ent_page ? (int)c->ent_page[i] : -1,
				c->nodes ? c->nodes[i] : -1, s->place[i],
				l->place[i]);
	}
	if (logged > CF_LOG_MAX)
		fprintf(stderr, "# %s: %d differences in all\n", c->what, bad);
	return bad;
}

/* The syscall against what LTP expects: a miss is a test bug. */
static int cf_check_want(const struct cf_case *c, const struct cf_result *s)
{
	int bad = 0;

	if (c->want_ret != INT_MIN &&
	    (s->ret != c->want_ret || s->err != c->want_err)) {
		bad++;
		fprintf(stderr, "# %s: the syscall returned %ld (errno %s), the case expects %d (errno %s): a test bug\n",
			c->what, s->ret, cf_errname(s->err), c->want_ret,
			cf_errname(c->want_err));
	}
	for (int k = 0; k < c->nr_want; k++) {
		if (s->status[c->want[k].i] == c->want[k].st)
			continue;
		bad++;
		fprintf(stderr, "# %s: the syscall's status[%lu] is %d, the case expects %d: a test bug\n",
			c->what, c->want[k].i, s->status[c->want[k].i],
			c->want[k].st);
	}
	return bad;
}

/* The layout, and what the syscall answered by kind: the coverage. */
static void cf_histogram(const struct cf_case *c, const struct cf_result *s)
{
	static const int errs[] = { EFAULT, ENOENT, EBUSY, EACCES, ENOMEM };
	unsigned long node = 0, other = 0, err[5] = { 0 };

	for (unsigned long i = 0; i < c->nst; i++) {
		int st = s->status[i], k;

		for (k = 0; k < 5 && st != -errs[k]; k++)
			;
		if (st >= 0)
			node++;
		else if (k < 5)
			err[k]++;
		else
			other++;
	}
	fprintf(stderr, "# %s: %s\n", c->what, c->layout);
	fprintf(stderr, "# %s: the syscall answered: node %lu, EFAULT %lu, ENOENT %lu, EBUSY %lu, EACCES %lu, ENOMEM %lu, other %lu\n",
		c->what, node, err[0], err[1], err[2], err[3], err[4], other);
}

/*
 * Build the case with @build, run it through the syscall, build it again
 * (a query: reuse it), run it through the library, compare. Returns the
 * number of differences, or -1 with *@skip set when the case cannot be
 * built here.
 */
int cf_check(const char *what, cf_build_fn build, long arg,
	     const char **skip)
{
	struct cf_case c = { 0 };
	struct cf_result s = { 0 }, l = { 0 };
	int bad = 0, accepted = 0, ret, query;

	c.want_ret = INT_MIN;
	ret = build(&c, &cf_env, arg);
	if (ret) {
		*skip = ret == -EOPNOTSUPP ? "not on this machine" :
			"setup failed";
		fprintf(stderr, "# %s: %s (%s)\n", what, *skip,
			strerror(-ret));
		cf_case_free(&c);
		return ret == -EOPNOTSUPP ? -1 : 1;
	}
	c.what = what;
	query = !c.nodes;
	ret = cf_run(0, &c, &s);
	if (!ret && !query) {
		unsigned long nst = c.nst;

		cf_case_free(&c);
		c.want_ret = INT_MIN;
		ret = build(&c, &cf_env, arg);
		c.what = what;
		if (!ret && c.nst != nst)
			ret = -EINVAL;
	}
	if (!ret)
		ret = cf_run(1, &c, &l);
	if (ret) {
		fprintf(stderr, "# %s: run failed: %s\n", what, strerror(-ret));
		bad = 1;
	} else {
		bad = cf_check_want(&c, &s) + cf_compare(&c, &s, &l, &accepted);
		fprintf(stderr, "# %s: %s %lu entries; syscall %ld (errno %s)%s",
			what, query ? "query" : "move", c.nst, s.ret,
			cf_errname(s.err), bad ? ", DIFFERENT" : ", identical");
		if (accepted)
			fprintf(stderr, " but for %d documented differences (accepted)",
				accepted);
		fprintf(stderr, "\n");
		if (c.layout)
			cf_histogram(&c, &s);
		if (c.nst >= 2)
			fprintf(stderr, "# %s: status[0..1]: syscall %d %d, library %d %d\n",
				what, s.status[0], s.status[1], l.status[0],
				l.status[1]);
	}
	cf_result_free(&s, c.nst);
	cf_result_free(&l, c.nst);
	cf_case_free(&c);
	return bad;
}


/* ---- the fixtures' setup ------------------------------------------------ */

int cf_env_init(int fd)
{
	__u64 online[NUMAPLACE_NODE_WORDS], memory[NUMAPLACE_NODE_WORDS];
	int ret;

	ret = np_get_info(fd, &cf_env.info);
	if (ret) {
		fprintf(stderr, "# INFO: %s\n", strerror(-ret));
		return ret;
	}
	ret = cf_sys_init();
	if (ret) {
		fprintf(stderr, "# no syscall() in libc.so.6\n");
		return ret;
	}
	cf_env.psz = sysconf(_SC_PAGESIZE);
	cf_env.root = !geteuid();
	cf_env.a = cf_env.b = cf_env.memless = cf_env.offline = -1;
	memcpy(online, cf_env.info.node_online, sizeof(online));
	memcpy(memory, cf_env.info.node_memory, sizeof(memory));
	for (int n = 0; n < NUMAPLACE_MAX_NODES; n++) {
		if (np_node_isset(memory, n)) {
			if (cf_env.a < 0)
				cf_env.a = n;
			else if (cf_env.b < 0)
				cf_env.b = n;
		} else if (np_node_isset(online, n)) {
			if (cf_env.memless < 0)
				cf_env.memless = n;
		} else if (cf_env.offline < 0 &&
			   n < (int)cf_env.info.nr_node_ids) {
			cf_env.offline = n;
		}
	}
	if (cf_env.a < 0) {
		fprintf(stderr, "# no node with memory\n");
		return -ENODEV;
	}
	/* Its scanner would move pages and set PROT_NONE hints mid-case. */
	np_write_str("/proc/sys/kernel/numa_balancing", "0");
	return 0;
}
