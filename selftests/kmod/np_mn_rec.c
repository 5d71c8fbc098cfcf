// SPDX-License-Identifier: GPL-2.0
/*
 * np_mn_rec: a test-only secondary MMU for numaplace's selftests
 * (selftests/migrate_gentle.c). Opening /dev/np_mn_rec registers an mmu
 * notifier on the opener's mm, as KVM or an SVA device does; every
 * invalidate_range_start() it is told of is recorded (start, end, event)
 * until the file is closed. read() hands the records over, oldest first,
 * after a header that says how many were lost to a full record (each read
 * empties it); an offset is ignored.
 * Its clear_young() (the access scan, selftests/query_access.c) is
 * recorded too, as event NP_MR_CLEAR_YOUNG, and answers "young" for a
 * range that meets the window last written: two __u64, start and end
 * (end 0: nothing is young), as if a guest had touched those pages.
 */
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/mmu_notifier.h>
#include <linux/module.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/uaccess.h>

#define NP_MR_NAME	"np_mn_rec"
/*
 * Records kept between two reads: the kernel engine sends a range per
 * folio, and a full node's move of 4 KiB pages (migrate_gentle.c) moves
 * up to 512 MiB, 131072 pages (3 MiB of records).
 */
#define NP_MR_MAX	131072

/* read()'s layout: the header, then nr records (selftests/migrate_gentle.c). */
struct np_mr_head {
	__u32 nr;		/* records that follow */
	__u32 lost;		/* ranges not recorded: the record was full */
};

struct np_mr_range {
	__u64 start, end;
	__u32 event;		/* enum mmu_notifier_event */
	__u32 blockable;
};

/* The event of a clear_young() record: no enum mmu_notifier_event's. */
#define NP_MR_CLEAR_YOUNG	0xc1ea

struct np_mr {
	struct mmu_notifier mn;
	struct mm_struct *mm;
	spinlock_t lock;	/* nr, lost, r[], young_* */
	unsigned int nr, lost;
	u64 young_start, young_end;
	struct np_mr_range r[NP_MR_MAX];
};

static void np_mr_record(struct np_mr *mr, u64 start, u64 end, u32 event,
			 u32 blockable)
{
	if (mr->nr < NP_MR_MAX)
		mr->r[mr->nr++] = (struct np_mr_range) {
			.start = start,
			.end = end,
			.event = event,
			.blockable = blockable,
		};
	else
		mr->lost++;
}

static int np_mr_start(struct mmu_notifier *mn,
		       const struct mmu_notifier_range *range)
{
	struct np_mr *mr = container_of(mn, struct np_mr, mn);
	unsigned long flags;

	spin_lock_irqsave(&mr->lock, flags);
	np_mr_record(mr, range->start, range->end, range->event,
		     mmu_notifier_range_blockable(range));
	spin_unlock_irqrestore(&mr->lock, flags);
	return 0;
}

/* int on 6.1 and 6.12, bool on 7.x: the ops' own type. */
#define NP_MR_YOUNG_T \
	typeof(((struct mmu_notifier_ops *)NULL)->clear_young(NULL, NULL, 0, 0))

static NP_MR_YOUNG_T np_mr_clear_young(struct mmu_notifier *mn,
				       struct mm_struct *mm,
				       unsigned long start, unsigned long end)
{
	struct np_mr *mr = container_of(mn, struct np_mr, mn);
	unsigned long flags;
	bool young;

	spin_lock_irqsave(&mr->lock, flags);
	np_mr_record(mr, start, end, NP_MR_CLEAR_YOUNG, 0);
	young = start < mr->young_end && end > mr->young_start;
	spin_unlock_irqrestore(&mr->lock, flags);
	return young;
}

static const struct mmu_notifier_ops np_mr_ops = {
	.invalidate_range_start = np_mr_start,
	.clear_young = np_mr_clear_young,
};

static int np_mr_open(struct inode *inode, struct file *file)
{
	struct np_mr *mr;
	int ret;

	if (!current->mm)
		return -EINVAL;
	mr = kvzalloc(sizeof(*mr), GFP_KERNEL_ACCOUNT);
	if (!mr)
		return -ENOMEM;
	spin_lock_init(&mr->lock);
	mr->mn.ops = &np_mr_ops;
	mr->mm = current->mm;
	ret = mmu_notifier_register(&mr->mn, mr->mm);
	if (ret)
		goto free_mr;
	file->private_data = mr;
	return 0;

free_mr:
	kvfree(mr);
	return ret;
}

static int np_mr_release(struct inode *inode, struct file *file)
{
	struct np_mr *mr = file->private_data;

	/* Also after the mm's exit (its release took the notifier off). */
	mmu_notifier_unregister(&mr->mn, mr->mm);
	kvfree(mr);
	return 0;
}

static ssize_t np_mr_read(struct file *file, char __user *buf, size_t len,
			  loff_t *ppos)
{
	struct np_mr *mr = file->private_data;
	struct np_mr_range *copy;
	struct np_mr_head head;
	size_t room, bytes;
	ssize_t ret;

	if (len < sizeof(head))
		return -EINVAL;
	room = min_t(size_t, (len - sizeof(head)) / sizeof(*copy), NP_MR_MAX);
	copy = kvmalloc_array(max_t(size_t, room, 1), sizeof(*copy),
			      GFP_KERNEL_ACCOUNT);
	if (!copy)
		return -ENOMEM;
	spin_lock_irq(&mr->lock);
	head.nr = min_t(unsigned int, mr->nr, room);
	head.lost = mr->lost + (mr->nr - head.nr);
	memcpy(copy, mr->r, head.nr * sizeof(*copy));
	mr->nr = 0;
	mr->lost = 0;
	spin_unlock_irq(&mr->lock);
	bytes = head.nr * sizeof(*copy);
	ret = -EFAULT;
	if (copy_to_user(buf, &head, sizeof(head)) ||
	    copy_to_user(buf + sizeof(head), copy, bytes))
		goto free_copy;
	ret = sizeof(head) + bytes;
free_copy:
	kvfree(copy);
	return ret;
}

/* The young window: two __u64, start and end. */
static ssize_t np_mr_write(struct file *file, const char __user *buf,
			   size_t len, loff_t *ppos)
{
	struct np_mr *mr = file->private_data;
	u64 win[2];

	if (len != sizeof(win))
		return -EINVAL;
	if (copy_from_user(win, buf, sizeof(win)))
		return -EFAULT;
	spin_lock_irq(&mr->lock);
	mr->young_start = win[0];
	mr->young_end = win[1];
	spin_unlock_irq(&mr->lock);
	return len;
}

static const struct file_operations np_mr_fops = {
	.owner = THIS_MODULE,
	.open = np_mr_open,
	.release = np_mr_release,
	.read = np_mr_read,
	.write = np_mr_write,
	.llseek = noop_llseek,
};

static struct miscdevice np_mr_dev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = NP_MR_NAME,
	.fops = &np_mr_fops,
	.mode = 0600,
};

static int __init np_mr_init(void)
{
	return misc_register(&np_mr_dev);
}

static void __exit np_mr_exit(void)
{
	misc_deregister(&np_mr_dev);
}

module_init(np_mr_init);
module_exit(np_mr_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("numaplace selftests: a secondary MMU that records invalidations");
