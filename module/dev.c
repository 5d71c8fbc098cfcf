// SPDX-License-Identifier: GPL-2.0
/*
 * numaplace: the misc device and its table-driven ioctl dispatch.
 *
 * Every command struct starts with "__u32 size; __u32 flags;". One place
 * (np_ioctl) checks the size against the table, copies the struct in with
 * copy_struct_from_user() (zero-fill when short, -E2BIG for a non-zero
 * tail when long), rejects unknown flags and copies the result back, at
 * most the caller's size. Handlers see a kernel copy only.
 */
#include <linux/compat.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/nodemask.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "numaplace.h"

/* The largest struct any command takes: the on-stack buffer's size. */
union np_ioctl_buf {
	struct numaplace_info info;
	struct numaplace_query query;
	struct numaplace_migrate migrate;
	struct numaplace_watch watch;
};

#define __NP_IOCTL_OP(_nr, _fn, _struct, _ver0, _flags, _progress, _fd) \
	[_nr] = {                                                          \
		.cmd = _IO(NUMAPLACE_TYPE, _nr),                           \
		.handler = _fn,                                            \
		.size = sizeof(_struct),                                   \
		.min_size = _ver0,                                         \
		.valid_flags = _flags,                                     \
		.progress = _progress,                                     \
		.new_fd = _fd,                                             \
	}

#define NP_IOCTL_OP(_nr, _fn, _struct, _ver0, _flags, _progress)         \
	__NP_IOCTL_OP(_nr, _fn, _struct, _ver0, _flags, _progress, false)

/* A command that answers with a new file descriptor. */
#define NP_IOCTL_OP_FD(_nr, _fn, _struct, _ver0, _flags)                 \
	__NP_IOCTL_OP(_nr, _fn, _struct, _ver0, _flags, false, true)

static int np_info(void *arg);

static const struct np_ioctl_op np_ioctl_ops[] = {
	NP_IOCTL_OP(NUMAPLACE_CMD_INFO, np_info, struct numaplace_info,
		    NUMAPLACE_INFO_SIZE_VER0, 0, false),
	NP_IOCTL_OP(NUMAPLACE_CMD_QUERY, np_query, struct numaplace_query,
		    NUMAPLACE_QUERY_SIZE_VER0,
		    NUMAPLACE_QUERY_PAGES | NUMAPLACE_QUERY_AS_SYSCALL |
		    NUMAPLACE_QUERY_ACCESS | NUMAPLACE_QUERY_CLEAR_ACCESS |
		    NUMAPLACE_QUERY_FLUSH_TLB, false),
	NP_IOCTL_OP(NUMAPLACE_CMD_MIGRATE, np_migrate, struct numaplace_migrate,
		    NUMAPLACE_MIGRATE_SIZE_VER0,
		    NUMAPLACE_MIGRATE_PAGES | NUMAPLACE_MIGRATE_MOVE_ALL |
		    NUMAPLACE_MIGRATE_SPLIT_OK | NUMAPLACE_MIGRATE_AS_SYSCALL |
		    NUMAPLACE_MIGRATE_ENGINE_KERNEL |
		    NUMAPLACE_MIGRATE_ENGINE_VMA |
		    NUMAPLACE_MIGRATE_ENGINE_BATCH |
		    NUMAPLACE_MIGRATE_ENGINE_PT, true),
	NP_IOCTL_OP_FD(NUMAPLACE_CMD_WATCH, np_watch, struct numaplace_watch,
		       NUMAPLACE_WATCH_SIZE_VER0,
		       NUMAPLACE_WATCH_CLOEXEC | NUMAPLACE_WATCH_NONBLOCK),
};

static u64 np_ioctl_mask(void)
{
	u64 mask = 0;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(np_ioctl_ops); i++)
		if (np_ioctl_ops[i].handler)
			mask |= 1ULL << i;
	return mask;
}

static void np_fill_nodemask(u64 *words, enum node_states state)
{
	int nid;

	for_each_node_state(nid, state)
		words[nid / 64] |= 1ULL << (nid % 64);
}

/* NUMAPLACE_IOC_INFO, the handshake: the ABI, the features, the nodes. */
static int np_info(void *arg)
{
	struct numaplace_info *info = arg;

	BUILD_BUG_ON(offsetofend(struct numaplace_info, reserved) !=
		     NUMAPLACE_INFO_SIZE_VER0);
	BUILD_BUG_ON(MAX_NUMNODES > NUMAPLACE_MAX_NODES);

	if (info->reserved0 || memchr_inv(info->reserved, 0,
					  sizeof(info->reserved)))
		return -EINVAL;

	info->abi_version = NUMAPLACE_ABI_VERSION;
	info->nr_node_ids = nr_node_ids;
	info->features = np_features();
	info->ioctls = np_ioctl_mask();
	info->page_size = PAGE_SIZE;
	memset(info->node_online, 0, sizeof(info->node_online));
	memset(info->node_memory, 0, sizeof(info->node_memory));
	np_fill_nodemask(info->node_online, N_ONLINE);
	np_fill_nodemask(info->node_memory, N_MEMORY);
	return 0;
}

static long np_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	void __user *uarg = (void __user *)arg;
	const struct np_ioctl_op *op;
	union np_ioctl_buf buf;
	unsigned int nr = _IOC_NR(cmd);
	u32 usize, *hdr;
	int ret;

	BUILD_BUG_ON(NUMAPLACE_CMD_MAX > 64);
	if (nr >= ARRAY_SIZE(np_ioctl_ops))
		return -ENOTTY;
	op = &np_ioctl_ops[nr];
	if (!op->handler || op->cmd != cmd)
		return -ENOTTY;

	if (get_user(usize, (u32 __user *)uarg))
		return -EFAULT;
	if (usize < op->min_size)
		return -EINVAL;
	/* As clone3(): a struct larger than a page is not a newer version. */
	if (usize > PAGE_SIZE)
		return -E2BIG;
	ret = copy_struct_from_user(&buf, op->size, uarg, usize);
	if (ret)
		return ret;

	hdr = (u32 *)&buf;
	if (hdr[1] & ~op->valid_flags)
		return -EINVAL;

	/*
	 * On success, on -EINTR (a fatal signal cut a long call short), and
	 * on any error of a command that reports progress (a bad node met
	 * half-way), the struct goes back: its progress fields say what was
	 * done.
	 */
	ret = op->handler(&buf);
	if (op->new_fd)
		return ret;
	if (ret && ret != -EINTR && !op->progress)
		return ret;

	/* The caller sees its own size, not ours. */
	hdr[0] = min_t(u32, usize, op->size);
	if (copy_to_user(uarg, &buf, min_t(size_t, usize, op->size)) && !ret)
		return -EFAULT;
	return ret;
}

static const struct file_operations np_fops = {
	.owner = THIS_MODULE,
	.unlocked_ioctl = np_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};

/*
 * Mode 0666: every check is made per call with the caller's credentials,
 * as move_pages(2) makes them (a udev rule can narrow it, see
 * Documentation/admin-guide.md).
 */
static struct miscdevice np_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = NP_NAME,
	.fops = &np_fops,
	.mode = 0666,
};

int np_dev_init(void)
{
	return misc_register(&np_misc);
}

void np_dev_exit(void)
{
	misc_deregister(&np_misc);
}
