// SPDX-License-Identifier: GPL-2.0
/*
 * The selftests' shared helpers: the device, the raw syscalls, sysfs and
 * procfs, MIGRATE, memcgs and timeouts; np_model.c and np_check.c hold
 * the query oracle. np_test.h documents each one. They are compiled once
 * into the tests' library (build/testlib/libnp_test.a) that every test
 * links. Nothing here uses the kselftest harness: it defines its globals
 * in every file that includes it, so only the test files do; a helper
 * that needs a test's _metadata (ASSERT_*, SKIP) stays a macro in
 * np_test.h.
 */
#include <glob.h>
#include <limits.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "np_test.h"
#include "numaplace.h"

int np_ioctl(int fd, unsigned long cmd, void *arg)
{
	int ret;

	do {
		ret = ioctl(fd, cmd, arg);
	} while (ret < 0 && errno == EINTR);
	return ret < 0 ? -errno : 0;
}

int np_open(void)
{
	int fd = open(NUMAPLACE_DEVICE, O_RDWR | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

int np_read_nodelist(const char *path, __u64 *mask)
{
	char buf[4096], *p, *end;
	unsigned long lo, hi, n;
	int fd, len, top = 0;

	memset(mask, 0, NUMAPLACE_NODE_WORDS * sizeof(__u64));
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len < 0)
		return -errno;
	buf[len] = 0;
	for (p = buf; *p && *p != '\n';) {
		lo = strtoul(p, &end, 10);
		if (end == p)
			return -EINVAL;
		hi = lo;
		if (*end == '-')
			hi = strtoul(end + 1, &end, 10);
		if (hi >= NUMAPLACE_MAX_NODES || lo > hi)
			return -ERANGE;
		for (n = lo; n <= hi; n++)
			mask[n / 64] |= 1ULL << (n % 64);
		if ((int)hi + 1 > top)
			top = hi + 1;
		p = *end == ',' ? end + 1 : end;
	}
	return top;
}

int np_get_info(int fd, struct numaplace_info *info)
{
	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
	return np_ioctl(fd, NUMAPLACE_IOC_INFO, info);
}

int np_kernel_is_new(void)
{
	int major = 0, minor = 0;
	struct utsname u;

	if (uname(&u) || sscanf(u.release, "%d.%d", &major, &minor) != 2)
		return -1;
	return major > 6 || (major == 6 && minor >= 12);
}

long np_raw_syscall6(long nr, long a1, long a2, long a3,
		     long a4, long a5, long a6)
{
#if defined(__x86_64__)
	register long r10 __asm__("r10") = a4;
	register long r8 __asm__("r8") = a5;
	register long r9 __asm__("r9") = a6;
	long ret;

	__asm__ volatile ("syscall"
			  : "=a"(ret)
			  : "0"(nr), "D"(a1), "S"(a2), "d"(a3), "r"(r10),
			    "r"(r8), "r"(r9)
			  : "rcx", "r11", "memory");
	return ret;
#else
	long ret = syscall(nr, a1, a2, a3, a4, a5, a6);

	return ret < 0 ? -errno : ret;
#endif
}

long np_sys_move_pages(int pid, unsigned long n,
		       const __u64 *pages, const int *nodes,
		       int *status, int flags)
{
	return np_raw_syscall6(SYS_move_pages, pid, n, (uintptr_t)pages,
			       (uintptr_t)nodes, (uintptr_t)status, flags);
}

long np_sys_query(int pid, unsigned long n, const __u64 *pages,
		  int *status)
{
	for (unsigned long i = 0; i < n; i++)
		status[i] = NP_SENTINEL;
	return np_sys_move_pages(pid, n, pages, NULL, status, 0);
}

void np_query_init(struct numaplace_query *q, int pid,
		   __u32 flags)
{
	memset(q, 0, sizeof(*q));
	q->size = sizeof(*q);
	q->flags = flags;
	q->pid = pid;
}

/* QUERY with @q's outputs: @status and @node_pages[@nr_nodes]. */
static int np_query_out(int fd, struct numaplace_query *q, __s32 *status,
			__u64 *node_pages, __u32 nr_nodes)
{
	q->status_ptr = (uintptr_t)status;
	q->node_pages_ptr = (uintptr_t)node_pages;
	q->node_pages_len = nr_nodes;
	return np_query(fd, q);
}

int np_query_range(int fd, int pid, __u32 flags, __u64 start,
		   __u64 len, struct numaplace_run *runs,
		   __u32 cap, __s32 *status, __u64 *node_pages,
		   __u32 nr_nodes, struct numaplace_query *q)
{
	np_query_init(q, pid, flags);
	q->start = start;
	q->len = len;
	q->runs_ptr = (uintptr_t)runs;
	q->runs_cap = cap;
	return np_query_out(fd, q, status, node_pages, nr_nodes);
}

int np_query_array(int fd, int pid, __u32 flags,
		   const __u64 *pages, __u64 count,
		   __s32 *status, __u64 *node_pages,
		   __u32 nr_nodes, struct numaplace_query *q)
{
	np_query_init(q, pid, flags | NUMAPLACE_QUERY_PAGES);
	q->pages_ptr = (uintptr_t)pages;
	q->count = count;
	return np_query_out(fd, q, status, node_pages, nr_nodes);
}

int np_write_str(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t len = strlen(val), ret;

	if (fd < 0)
		return -errno;
	ret = write(fd, val, len);
	if (ret < 0)
		ret = -errno;
	close(fd);
	return ret < 0 ? ret : ret == len ? 0 : -EIO;
}

int np_read_str(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t len;

	if (fd < 0)
		return -errno;
	len = read(fd, buf, size - 1);
	close(fd);
	if (len < 0)
		return -errno;
	buf[len] = 0;
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

long np_read_long(const char *path)
{
	char buf[64];

	return np_read_str(path, buf, sizeof(buf)) ? -1 :
	       strtol(buf, NULL, 0);
}

static const char *const np_ksm_knobs[] = {
	NP_KSM_RUN,
	"/sys/kernel/mm/ksm/sleep_millisecs",
	"/sys/kernel/mm/ksm/pages_to_scan",
};

int np_ksm_save(struct np_ksm *k)
{
	for (int i = 0; i < 3; i++) {
		int ret = np_read_str(np_ksm_knobs[i], k->saved[i],
				      sizeof(k->saved[i]));

		if (ret)
			return ret;
	}
	k->changed = 1;
	return 0;
}

int np_ksm_fast(void)
{
	static const char *const fast[] = { "1", "10", "1000" };

	for (int i = 2; i >= 0; i--) {
		int ret = np_write_str(np_ksm_knobs[i], fast[i]);

		if (ret)
			return ret;
	}
	return 0;
}

void np_ksm_restore(struct np_ksm *k)
{
	for (int i = 2; k->changed && i >= 0; i--)
		np_write_str(np_ksm_knobs[i], k->saved[i]);
}

void np_vfail(atomic_long *errors, atomic_long *logged, long max,
	      const char *prefix, const char *fmt, va_list ap)
{
	atomic_fetch_add(errors, 1);
	if (atomic_fetch_add(logged, 1) >= max)
		return;
	fprintf(stderr, "# %s", prefix);
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
}

int np_bad_pids(int pids[NP_BAD_PIDS])
{
	long max = np_read_long("/proc/sys/kernel/pid_max");
	int pid;

	if (max <= 300)
		return -1;
	for (pid = max - 1; pid > 300; pid--)
		if (kill(pid, 0) && errno == ESRCH)
			break;
	pids[0] = pid;
	pids[1] = -1;
	pids[2] = INT_MIN;
	pids[3] = INT_MAX;
	return 0;
}


void np_migrate_init(struct numaplace_migrate *m, int pid,
		     __u32 flags, __u32 policy)
{
	memset(m, 0, sizeof(*m));
	m->size = sizeof(*m);
	m->flags = flags;
	m->pid = pid;
	m->policy = policy;
}

int np_migrate(int fd, struct numaplace_migrate *m)
{
	return np_ioctl(fd, NUMAPLACE_IOC_MIGRATE, m);
}

int np_migrate_node(int fd, int pid, __u32 flags, __u64 start,
		    __u64 len, int node, __s32 *status,
		    struct numaplace_migrate *m)
{
	np_migrate_init(m, pid, flags, NUMAPLACE_POLICY_NODE);
	m->start = start;
	m->len = len;
	m->node = node;
	m->status_ptr = (uintptr_t)status;
	return np_migrate(fd, m);
}

__u32 np_engines_available(const struct numaplace_info *info)
{
	__u32 e = 0;

	if (info->features & NUMAPLACE_FEAT_MIGRATE_KERNEL)
		e |= NUMAPLACE_ENGINE_KERNEL;
	if (info->features & NUMAPLACE_FEAT_MIGRATE_VMA)
		e |= NUMAPLACE_ENGINE_VMA;
	if (info->features & NUMAPLACE_FEAT_MIGRATE_BATCH)
		e |= NUMAPLACE_ENGINE_BATCH;
	if (info->features & NUMAPLACE_FEAT_MIGRATE_PT)
		e |= NUMAPLACE_ENGINE_PT;
	return e;
}

__u32 np_vma_engine(__u32 flags, __u32 avail)
{
	if (flags & NUMAPLACE_MIGRATE_ENGINE_VMA)
		return NUMAPLACE_ENGINE_VMA;
	if (flags & NUMAPLACE_MIGRATE_ENGINE_BATCH)
		return NUMAPLACE_ENGINE_BATCH;
	if (flags & NUMAPLACE_MIGRATE_ENGINE_KERNEL)
		return 0;
	/*
	 * ENGINE_PT, or the module's choice where it has it: inside the
	 * batched engine, which takes all of a SPLIT_OK call.
	 */
	if ((flags & NUMAPLACE_MIGRATE_ENGINE_PT) ||
	    (avail & NUMAPLACE_ENGINE_PT))
		return flags & NUMAPLACE_MIGRATE_SPLIT_OK ?
		       NUMAPLACE_ENGINE_BATCH : NUMAPLACE_ENGINE_PT;
	if (avail & NUMAPLACE_ENGINE_BATCH)
		return NUMAPLACE_ENGINE_BATCH;
	return avail & NUMAPLACE_ENGINE_VMA;
}

__u32 np_engines_allowed(const struct numaplace_info *info,
			 __u32 flags)
{
	__u32 e = 0;

	if (!(flags & NP_MIG_ENGINE_FLAGS))
		return np_engines_available(info);
	if (flags & NUMAPLACE_MIGRATE_ENGINE_KERNEL)
		e |= NUMAPLACE_ENGINE_KERNEL;
	if (flags & NUMAPLACE_MIGRATE_ENGINE_VMA)
		e |= NUMAPLACE_ENGINE_VMA;
	/* The batched engine hands what it does not move to the kernel's. */
	if (flags & NUMAPLACE_MIGRATE_ENGINE_BATCH)
		e |= NUMAPLACE_ENGINE_BATCH | NUMAPLACE_ENGINE_KERNEL;
	/* The page-table engine runs inside the batched one. */
	if (flags & NUMAPLACE_MIGRATE_ENGINE_PT)
		e |= NUMAPLACE_ENGINE_PT | NUMAPLACE_ENGINE_BATCH |
		     NUMAPLACE_ENGINE_KERNEL;
	return e & np_engines_available(info);
}

__u64 np_stamp_word(size_t i, __u64 g, size_t k)
{
	__u64 x = (i + 1) * 0x9e3779b97f4a7c15ULL ^ g * 0xc2b2ae3d27d4eb4fULL;

	return x ^ (k * 0x165667b19e3779f9ULL) ^ (x >> 29);
}

long np_pages_not_on(int pid, const char *buf, size_t n,
		     int node, long *first, int *where)
{
	const size_t psz = sysconf(_SC_PAGESIZE);
	__u64 *a = calloc(n, sizeof(*a));
	int *st = calloc(n, sizeof(*st));
	long bad = 0;

	if (!a || !st) {
		free(a);
		free(st);
		return n;
	}
	for (size_t i = 0; i < n; i++)
		a[i] = (uintptr_t)buf + i * psz;
	if (np_sys_query(pid, n, a, st)) {
		bad = n;
	} else {
		for (size_t i = 0; i < n; i++) {
			if (st[i] == node)
				continue;
			if (!bad) {
				*first = i;
				*where = st[i];
			}
			bad++;
		}
	}
	free(a);
	free(st);
	return bad;
}

__u64 np_count_fails(const __s32 *status, size_t n, __u64 *fail)
{
	__u64 nfail = 0;

	for (size_t i = 0; i < n; i++) {
		if (status[i] >= 0)
			continue;
		nfail++;
		fail[numaplace_fail_reason(status[i])]++;
	}
	return nfail;
}

int np_check_mig_counters(struct np_ctx *c, const char *what,
			  const struct numaplace_migrate *m,
			  const __s32 *status, size_t n,
			  int range, __u32 allowed)
{
	__u64 fail[NUMAPLACE_FAIL_MAX] = { 0 }, nfail = 0, sum = 0;
	int bad = 0;

	np_log_start(c);
	if (status)
		nfail = np_count_fails(status, n, fail);
	for (int r = 0; r < NUMAPLACE_FAIL_MAX; r++) {
		sum += m->nr_failed[r];
		if (status && m->nr_failed[r] != fail[r]) {
			bad++;
			np_log(c, "%s: nr_failed[%d] %llu, status says %llu",
			       what, r, (unsigned long long)m->nr_failed[r],
			       (unsigned long long)fail[r]);
		}
	}
	if (sum != m->nr_failed_pages) {
		bad++;
		np_log(c, "%s: nr_failed[] add up to %llu, nr_failed_pages %llu",
		       what, (unsigned long long)sum,
		       (unsigned long long)m->nr_failed_pages);
	}
	if (status && m->nr_failed_pages != nfail) {
		bad++;
		np_log(c, "%s: nr_failed_pages %llu, status says %llu", what,
		       (unsigned long long)m->nr_failed_pages,
		       (unsigned long long)nfail);
	}
	if (range && m->nr_moved_pages + m->nr_in_place_pages +
		     m->nr_failed_pages != m->done) {
		bad++;
		np_log(c, "%s: moved %llu + in place %llu + failed %llu != done %llu",
		       what, (unsigned long long)m->nr_moved_pages,
		       (unsigned long long)m->nr_in_place_pages,
		       (unsigned long long)m->nr_failed_pages,
		       (unsigned long long)m->done);
	}
	if (m->nr_moved_folios > m->nr_moved_pages ||
	    !m->nr_moved_folios != !m->nr_moved_pages) {
		bad++;
		np_log(c, "%s: %llu folios moved for %llu pages", what,
		       (unsigned long long)m->nr_moved_folios,
		       (unsigned long long)m->nr_moved_pages);
	}
	if (!m->engines != !m->nr_moved_pages || (m->engines & ~allowed)) {
		bad++;
		np_log(c, "%s: engines %#x (may be %#x) with %llu pages moved",
		       what, m->engines, allowed,
		       (unsigned long long)m->nr_moved_pages);
	}
	return np_log_end(c, what, bad);
}

long np_mempolicy(int mode, int node)
{
	unsigned long mask[NUMAPLACE_NODE_WORDS] = { 0 };
	long ret;

	if (node >= 0)
		mask[node / 64] = 1UL << (node % 64);
	ret = syscall(SYS_set_mempolicy, mode, node >= 0 ? mask : NULL,
		      node >= 0 ? NUMAPLACE_MAX_NODES + 1 : 0);
	return ret < 0 ? -errno : 0;
}

long np_mono_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

int np_isolated(long *anon, long *file)
{
	char line[128];
	FILE *f;

	np_write_str("/proc/sys/vm/stat_refresh", "1");
	f = fopen("/proc/vmstat", "re");
	if (!f)
		return -errno;
	*anon = *file = -1;
	while (fgets(line, sizeof(line), f)) {
		sscanf(line, "nr_isolated_anon %ld", anon);
		sscanf(line, "nr_isolated_file %ld", file);
	}
	fclose(f);
	return *anon < 0 || *file < 0 ? -ENOENT : 0;
}

int np_isolated_settle(long anon0, long file0, long ms,
		       long *anon, long *file)
{
	long t0 = np_mono_ms();
	int ret;

	while (!(ret = np_isolated(anon, file))) {
		if ((*anon <= anon0 && *file <= file0) ||
		    np_mono_ms() - t0 > ms)
			break;
		usleep(50000);
	}
	return ret;
}

long np_meminfo_kb(const char *key)
{
	char line[256];
	long val = -1;
	FILE *f = fopen("/proc/meminfo", "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key)) && line[strlen(key)] == ':')
			val = strtol(line + strlen(key) + 1, NULL, 10);
	fclose(f);
	return val;
}

const char *np_cg_file(char *buf, size_t len, const char *cg,
		       const char *file)
{
	snprintf(buf, len, "%s/%s", cg, file);
	return buf;
}

int np_memcg_make(const char *name, char *cg, size_t len)
{
	char f[256];

	if (access(NP_CG_ROOT "/cgroup.controllers", R_OK))
		return -ENOENT;
	np_write_str(NP_CG_ROOT "/cgroup.subtree_control", "+memory");
	snprintf(cg, len, NP_CG_ROOT "/%s", name);
	if (mkdir(cg, 0755) && errno != EEXIST)
		return -errno;
	return access(np_cg_file(f, sizeof(f), cg, "memory.max"), W_OK) ?
	       -ENOENT : 0;
}

int np_memcg_set(const char *cg, const char *file,
		 const char *val)
{
	char f[256];

	return np_write_str(np_cg_file(f, sizeof(f), cg, file), val);
}

long np_memcg_long(const char *cg, const char *file)
{
	char f[256];

	return np_read_long(np_cg_file(f, sizeof(f), cg, file));
}

long np_memcg_key(const char *cg, const char *file,
		  const char *key)
{
	char f[256], k[64];
	long v, ret = -ENOENT;
	FILE *fp = fopen(np_cg_file(f, sizeof(f), cg, file), "re");

	if (!fp)
		return -errno;
	while (fscanf(fp, "%63s %ld", k, &v) == 2)
		if (!strcmp(k, key)) {
			ret = v;
			break;
		}
	fclose(fp);
	return ret;
}

int np_memcg_enter(const char *cg)
{
	return np_memcg_set(cg, "cgroup.procs", "0");
}

int np_memcg_fork(const char *name, char *cg, size_t len,
		  int (*fn)(const char *cg, void *arg), void *arg)
{
	int ret = np_memcg_make(name, cg, len), status;
	pid_t pid;

	if (ret)
		return ret;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid)
		_exit(fn(cg, arg));
	if (waitpid(pid, &status, 0) != pid)
		return -errno;
	return status;
}

/* The steps of np_memcg_tight(). */
enum {
	NP_TIGHT_ENTERED = 1,	/* the child is in the memcg */
	NP_TIGHT_FULL,		/* memory.max is what it holds */
	NP_TIGHT_CALLED,	/* the child made its call */
	NP_TIGHT_FREE,		/* memory.max is "max" again */
};
#define NP_TIGHT_POLL_US	1000
#define NP_TIGHT_DRAIN_US	20000	/* other CPUs' drains are queued work */

static void np_tight_wait(struct np_memcg_tight *t, int step)
{
	while (t->step < step)
		usleep(NP_TIGHT_POLL_US);
}

void np_memcg_tight_begin(struct np_memcg_tight *t)
{
	t->step = NP_TIGHT_ENTERED;
	np_tight_wait(t, NP_TIGHT_FULL);
}

void np_memcg_tight_end(struct np_memcg_tight *t)
{
	t->step = NP_TIGHT_CALLED;
	np_tight_wait(t, NP_TIGHT_FREE);
}

/* Wait for the child's @step; 0, or -ECHILD once it is gone (*status). */
static int np_tight_parent_wait(struct np_memcg_tight *t, int step,
				pid_t pid, int *status)
{
	while (t->step < step) {
		if (waitpid(pid, status, WNOHANG) == pid)
			return -ECHILD;
		usleep(NP_TIGHT_POLL_US);
	}
	return 0;
}

/*
 * memory.max at what the memcg holds, its precharge drained. A drain is
 * skipped while another runs anywhere (6.1 drain_all_stock()'s trylock)
 * and other CPUs' are queued work: NP_TIGHT_DRAINS writes of memory.high
 * 0, and memory.max lowered again while memory.current still falls.
 */
#define NP_TIGHT_DRAINS		3

static int np_tight_fill(const char *cg, struct np_memcg_tight *t)
{
	long cur = -1;
	char v[32];

	for (int i = 0; i < NP_TIGHT_DRAINS; i++) {
		if (np_memcg_set(cg, "memory.high", "0"))
			return -EIO;
		usleep(NP_TIGHT_DRAIN_US);
	}
	for (int i = 0; i < NP_TIGHT_DRAINS; i++) {
		cur = np_memcg_long(cg, "memory.current");
		if (cur < 0)
			return -EIO;
		if (i && cur == t->max)
			break;
		t->max = cur;
		snprintf(v, sizeof(v), "%ld", t->max);
		if (np_memcg_set(cg, "memory.max", v))
			return -EIO;
		usleep(NP_TIGHT_DRAIN_US);
	}
	return np_memcg_set(cg, "memory.high", "max") ? -EIO : 0;
}

int np_memcg_tight(const char *name, char *cg, size_t len,
		   int (*fn)(const char *cg, void *arg,
			     struct np_memcg_tight *t),
		   void *arg, struct np_memcg_tight *seen)
{
	struct np_memcg_tight *t;
	int ret, status = -1;
	long max_events = 0;
	pid_t pid;

	ret = np_memcg_make(name, cg, len);
	if (ret)
		return ret;
	t = mmap(NULL, sizeof(*t), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (t == MAP_FAILED)
		return -errno;
	memset(t, 0, sizeof(*t));
	pid = fork();
	if (pid < 0) {
		ret = -errno;
		goto unmap;
	}
	if (!pid) {
		t->oom_kill = 0;	/* faulted here, not in @cg */
		_exit(fn(cg, arg, t));
	}
	ret = np_tight_parent_wait(t, NP_TIGHT_ENTERED, pid, &status);
	if (!ret)
		ret = np_tight_fill(cg, t);
	if (!ret) {
		max_events = np_memcg_key(cg, "memory.events", "max");
		t->step = NP_TIGHT_FULL;
		ret = np_tight_parent_wait(t, NP_TIGHT_CALLED, pid, &status);
	}
	/* Read also when the child is gone: an OOM kill ends it early. */
	t->oom_kill = np_memcg_key(cg, "memory.events", "oom_kill");
	t->nr_max_events = np_memcg_key(cg, "memory.events", "max") -
			   max_events;
	if (!ret) {
		ret = np_memcg_set(cg, "memory.max", "max") ? -EIO : 0;
		t->step = NP_TIGHT_FREE;
	}
	if (ret == -ECHILD) {
		ret = 0;	/* gone early: its status says why */
	} else {
		if (ret)
			kill(pid, SIGKILL);
		if (waitpid(pid, &status, 0) != pid && !ret)
			ret = -errno;
	}
	*seen = *t;
	if (!ret)
		ret = status;
unmap:
	munmap(t, sizeof(*t));
	return ret;
}

int np_memcg_remove(const char *cg)
{
	for (int i = 0; i < 50; i++) {
		if (!rmdir(cg) || errno == ENOENT)
			return 0;
		usleep(20000);
	}
	return -errno;
}

unsigned int np_time_scale(void)
{
	const char *v = getenv("NP_TEST_TIMEOUT_SCALE");
	long k = v ? strtol(v, NULL, 10) : 1;

	return k < 1 || k > NP_TIMEOUT_SCALE_MAX ? 1 : k;
}

pid_t np_fork_pipe(int *fd)
{
	int pfd[2];
	pid_t pid;

	if (pipe(pfd))
		return -1;
	pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return -1;
	}
	close(pfd[pid ? 1 : 0]);
	*fd = pfd[pid ? 0 : 1];
	return pid;
}

pid_t np_fork_ready(int (*fn)(void *arg), void *arg)
{
	pid_t pid;
	char x;
	int fd;

	pid = np_fork_pipe(&fd);
	if (pid < 0)
		return -1;
	if (!pid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (fn && fn(arg))
			_exit(1);
		if (write(fd, "r", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	if (read(fd, &x, 1) != 1) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		pid = -1;
	}
	close(fd);
	return pid;
}

struct np_sharer {
	char *p;
	size_t len;
};

static int np_sharer_touch(void *arg)
{
	const struct np_sharer *s = arg;
	size_t psz = sysconf(_SC_PAGESIZE);

	for (size_t off = 0; off < s->len; off += psz)
		(void)((volatile char *)s->p)[off];
	return 0;
}

pid_t np_fork_sharer(char *p, size_t len)
{
	struct np_sharer s = { .p = p, .len = len };

	return np_fork_ready(np_sharer_touch, &s);
}

const char *const np_bad_names[NP_BAD_MAX] = {
	"NULL", "kernel", "unmapped", "PROT_NONE", "read-only",
};

void *np_bad_pointer(enum np_bad k, const void *src, size_t len)
{
	size_t psz = sysconf(_SC_PAGESIZE);
	char *m;

	switch (k) {
	case NP_BAD_NULL:
		return NULL;
	case NP_BAD_KERNEL:
		return (void *)0xffff888000001000UL;
	default:
		break;
	}
	m = mmap(NULL, 4 * psz, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	if (src)
		memcpy(m, src, len);
	if (k == NP_BAD_UNMAPPED)
		munmap(m, 4 * psz);
	else
		mprotect(m, 4 * psz, k == NP_BAD_PROTNONE ? PROT_NONE :
			 PROT_READ);
	return m;
}

int np_thp_setting(const char *path, char *out, size_t len)
{
	char buf[128], *l, *r;
	int ret;

	out[0] = 0;
	ret = np_read_str(path, buf, sizeof(buf));
	if (ret)
		return ret;
	l = strchr(buf, '[');
	r = l ? strchr(l, ']') : NULL;
	if (!r || (size_t)(r - l) >= len)
		return -EINVAL;
	memcpy(out, l + 1, r - l - 1);
	out[r - l - 1] = 0;
	return 0;
}

int np_open_info(int *fd, struct numaplace_info *info, char *why,
		 size_t len)
{
	int ret;

	*fd = np_open();
	if (*fd == -ENOENT) {
		snprintf(why, len, "no " NUMAPLACE_DEVICE " (module not loaded)");
		return 1;
	}
	if (*fd < 0) {
		snprintf(why, len, "open " NUMAPLACE_DEVICE ": %s",
			 strerror(-*fd));
		return *fd;
	}
	ret = np_get_info(*fd, info);
	if (ret)
		snprintf(why, len, "INFO: %s", strerror(-ret));
	return ret;
}

int np_ctx_ready(struct np_ctx *c, int fd, char *why, size_t len)
{
	int ret = np_ctx_init(c, fd, 0);

	if (ret) {
		snprintf(why, len, "np_ctx_init: %s", strerror(-ret));
		return ret;
	}
	/* Its scanner would make PROT_NONE hints at random moments. */
	np_write_str("/proc/sys/kernel/numa_balancing", "0");
	return 0;
}

void *np_guarded(size_t nb, char **map, size_t *maplen)
{
	size_t psz = sysconf(_SC_PAGESIZE);
	size_t len = ((nb + psz - 1) / psz + 1) * psz;
	char *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED)
		return NULL;
	if (mprotect(m + len - psz, psz, PROT_NONE)) {
		munmap(m, len);
		return NULL;
	}
	if (map)
		*map = m;
	if (maplen)
		*maplen = len;
	return m + len - psz - nb;
}

static void *np_idle_fn(void *arg)
{
	struct np_idle *t = arg;

	pthread_mutex_lock(&t->lock);
	t->tid = gettid();
	pthread_cond_broadcast(&t->cond);
	while (!t->stop)
		pthread_cond_wait(&t->cond, &t->lock);
	pthread_mutex_unlock(&t->lock);
	return NULL;
}

int np_idle_start(struct np_idle *t)
{
	int ret;

	pthread_mutex_init(&t->lock, NULL);
	pthread_cond_init(&t->cond, NULL);
	t->tid = 0;
	t->stop = 0;
	ret = pthread_create(&t->th, NULL, np_idle_fn, t);
	if (ret)
		return -ret;
	pthread_mutex_lock(&t->lock);
	while (!t->tid)
		pthread_cond_wait(&t->cond, &t->lock);
	pthread_mutex_unlock(&t->lock);
	return 0;
}

void np_idle_stop(struct np_idle *t)
{
	pthread_mutex_lock(&t->lock);
	t->stop = 1;
	pthread_cond_broadcast(&t->cond);
	pthread_mutex_unlock(&t->lock);
	pthread_join(t->th, NULL);
}

long np_vmstat(const char *key)
{
	char k[64];
	long v, ret = -1;
	FILE *f = fopen("/proc/vmstat", "re");

	while (f && fscanf(f, "%63s %ld", k, &v) == 2)
		if (!strcmp(k, key))
			ret = v;
	if (f)
		fclose(f);
	return ret;
}

/*
 * ---- What a program's tests change, put back at its end ----------------
 *
 * The knobs the tests turn (np_test.h, NP_HARNESS_MAIN), as the values a
 * write takes back: "always [madvise] never" is saved as "madvise".
 */
static const char *const np_knob_globs[] = {
	"/proc/sys/kernel/numa_balancing",
	"/sys/kernel/mm/transparent_hugepage/enabled",
	"/sys/kernel/mm/transparent_hugepage/defrag",
	"/sys/kernel/mm/transparent_hugepage/hugepages-*kB/enabled",
	"/sys/kernel/mm/transparent_hugepage/khugepaged/scan_sleep_millisecs",
	"/sys/kernel/mm/transparent_hugepage/khugepaged/alloc_sleep_millisecs",
	"/sys/kernel/mm/ksm/run",
	"/sys/kernel/mm/ksm/sleep_millisecs",
	"/sys/kernel/mm/ksm/pages_to_scan",
	"/sys/kernel/mm/ksm/merge_across_nodes",
	"/sys/devices/system/node/node*/hugepages/hugepages-*kB/nr_hugepages",
};

/* The test modules a program may load (selftests/kmod). */
static const char *const np_test_kos[] = { "np_fake_dma", "np_mn_rec" };

#define NP_KNOBS_MAX	128	/* mTHP sizes x 1 + nodes x huge page sizes */
#define NP_KNOB_LEN	64	/* the longest value: a bracketed word */

static struct np_knob {
	char path[PATH_MAX];
	char val[NP_KNOB_LEN];
} np_knobs[NP_KNOBS_MAX];
static int np_nr_knobs;
static pid_t np_state_pid;
static int np_state_module;		/* numaplace.ko loaded at the start */
static int np_state_kos[2];		/* np_test_kos[] loaded at the start */

static int np_mod_present(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/module/%s", name);
	return access(path, F_OK) == 0;
}

/* @raw's bracketed choice if it has one, else its first word. */
static void np_knob_value(const char *raw, char *val, size_t len)
{
	const char *open = strchr(raw, '['), *close;
	size_t n;

	if (open && (close = strchr(open, ']'))) {
		raw = open + 1;
		n = close - raw;
	} else {
		n = strcspn(raw, " \n");
	}
	if (n >= len)
		n = len - 1;
	memcpy(val, raw, n);
	val[n] = '\0';
}

static void np_state_restore(void)
{
	char raw[256], now[NP_KNOB_LEN];
	size_t i;
	int k;

	if (getpid() != np_state_pid)
		return;		/* a test's child that called exit() */
	for (k = 0; k < np_nr_knobs; k++) {
		if (np_read_str(np_knobs[k].path, raw, sizeof(raw)) < 0)
			continue;
		np_knob_value(raw, now, sizeof(now));
		if (strcmp(now, np_knobs[k].val))
			np_write_str(np_knobs[k].path, np_knobs[k].val);
	}
	for (i = 0; i < sizeof(np_test_kos) / sizeof(np_test_kos[0]); i++)
		if (!np_state_kos[i] && np_mod_present(np_test_kos[i]))
			syscall(SYS_delete_module, np_test_kos[i], O_NONBLOCK);
	/* A test that unloads the module and fails half-way. */
	if (np_state_module && !np_mod_present("numaplace") &&
	    np_module_load())
		fprintf(stderr, "# could not load numaplace.ko again\n");
}

void np_state_save(void)
{
	char raw[256];
	glob_t g;
	size_t i, j;

	np_state_pid = getpid();
	for (i = 0; i < sizeof(np_knob_globs) / sizeof(np_knob_globs[0]); i++) {
		if (glob(np_knob_globs[i], 0, NULL, &g))
			continue;
		for (j = 0; j < g.gl_pathc && np_nr_knobs < NP_KNOBS_MAX; j++) {
			struct np_knob *kn = &np_knobs[np_nr_knobs];

			if (np_read_str(g.gl_pathv[j], raw, sizeof(raw)) < 0)
				continue;
			snprintf(kn->path, sizeof(kn->path), "%s",
				 g.gl_pathv[j]);
			np_knob_value(raw, kn->val, sizeof(kn->val));
			np_nr_knobs++;
		}
		globfree(&g);
	}
	for (i = 0; i < sizeof(np_test_kos) / sizeof(np_test_kos[0]); i++)
		np_state_kos[i] = np_mod_present(np_test_kos[i]);
	np_state_module = np_mod_present("numaplace");
	atexit(np_state_restore);
	/* Its scanner makes PROT_NONE hints and moves pages at random. */
	np_write_str("/proc/sys/kernel/numa_balancing", "0");
}
