// SPDX-License-Identifier: GPL-2.0
/*
 * numaplace: NUMAPLACE_IOC_WATCH's file descriptor: a watch (watch.c
 * makes it, and queues its records) read from user space. read() hands
 * out whole struct numaplace_watch_record, and end of file after the GONE
 * record. The file holds the module (fops.owner): rmmod fails while a
 * watch fd exists; release() stops the watch before it frees it.
 */
#include <linux/anon_inodes.h>
#include <linux/err.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "watch.h"

/* The oldest record, off the queue, or NULL. */
static struct np_watch_rec *np_watch_pop(struct np_watch *w)
{
	struct np_watch_rec *r;

	spin_lock(&w->lock);
	r = list_first_entry_or_null(&w->queue, struct np_watch_rec, link);
	if (r) {
		list_del(&r->link);
		w->nr_queued--;
		if (r == w->overflow)
			w->overflow = NULL;
	}
	spin_unlock(&w->lock);
	return r;
}

/* Put back a record that could not be copied out. */
static void np_watch_unpop(struct np_watch *w, struct np_watch_rec *r)
{
	spin_lock(&w->lock);
	if (r->reason == NUMAPLACE_WATCH_OVERFLOW && list_empty(&w->queue))
		w->overflow = r;
	list_add(&r->link, &w->queue);
	w->nr_queued++;
	spin_unlock(&w->lock);
}

static void np_watch_fill(const struct np_watch *w,
			  const struct np_watch_rec *r,
			  struct numaplace_watch_record *u)
{
	unsigned int n = w->nr_nodes;

	memset(u, 0, sizeof(*u));
	u->cookie = w->cookie;
	u->seq = r->seq;
	u->start = r->start;
	u->len = r->end - r->start;
	u->reason = r->reason;
	u->nr_nodes = n;
	u->nr_changed = r->nr_changed;
	u->unplaced_before = r->before[n];
	u->unplaced_after = r->after[n];
	memcpy(u->before, r->before, n * sizeof(u64));
	memcpy(u->after, r->after, n * sizeof(u64));
}

/* Wait for a record; false with *@ret set when there is none to read. */
static bool np_watch_wait(struct np_watch *w, struct file *file, ssize_t *ret)
{
	bool empty, gone;

	spin_lock(&w->lock);
	empty = list_empty(&w->queue);
	gone = w->gone;
	spin_unlock(&w->lock);
	if (!empty)
		return true;
	*ret = 0;		/* after GONE: end of file */
	if (gone)
		return false;
	*ret = -EAGAIN;
	if (file->f_flags & O_NONBLOCK)
		return false;
	*ret = wait_event_interruptible(w->wq, !list_empty_careful(&w->queue) ||
					       READ_ONCE(w->gone));
	return !*ret;
}

static ssize_t np_watch_read(struct file *file, char __user *buf,
			     size_t count, loff_t *ppos)
{
	struct np_watch *w = file->private_data;
	struct numaplace_watch_record *u;
	struct np_watch_rec *r;
	ssize_t done = 0, ret = 0;

	if (count < sizeof(*u))
		return -EINVAL;
	u = kmalloc(sizeof(*u), GFP_KERNEL);
	if (!u)
		return -ENOMEM;
	while (count - done >= sizeof(*u)) {
		r = np_watch_pop(w);
		if (!r) {
			if (done || !np_watch_wait(w, file, &ret))
				break;
			continue;
		}
		np_watch_fill(w, r, u);
		if (copy_to_user(buf + done, u, sizeof(*u))) {
			np_watch_unpop(w, r);
			ret = -EFAULT;
			break;
		}
		kfree(r);
		done += sizeof(*u);
	}
	kfree(u);
	return done ?: ret;
}

static __poll_t np_watch_poll(struct file *file, poll_table *pt)
{
	struct np_watch *w = file->private_data;
	__poll_t mask = 0;

	poll_wait(file, &w->wq, pt);
	spin_lock(&w->lock);
	if (!list_empty(&w->queue))
		mask |= EPOLLIN | EPOLLRDNORM;
	else if (w->gone)
		mask |= EPOLLHUP;
	spin_unlock(&w->lock);
	return mask;
}

static int np_watch_release(struct inode *inode, struct file *file)
{
	struct np_watch *w = file->private_data;

	np_watch_stop(w);
	np_watch_free(w);
	return 0;
}

static const struct file_operations np_watch_fops = {
	.owner = THIS_MODULE,	/* rmmod is refused while a watch exists */
	.read = np_watch_read,
	.poll = np_watch_poll,
	.release = np_watch_release,
	.llseek = noop_llseek,
};

/* Make the file and its descriptor; installed only when all went well. */
static int np_watch_fd(struct np_watch *w, u32 flags)
{
	struct file *file;
	int fd;

	fd = get_unused_fd_flags(flags & NUMAPLACE_WATCH_CLOEXEC ? O_CLOEXEC : 0);
	if (fd < 0)
		return fd;
	file = anon_inode_getfile("[numaplace-watch]", &np_watch_fops, w,
				  O_RDONLY | (flags & NUMAPLACE_WATCH_NONBLOCK ?
					      O_NONBLOCK : 0));
	if (IS_ERR(file)) {
		put_unused_fd(fd);
		return PTR_ERR(file);
	}
	fd_install(fd, file);
	return fd;
}

/**
 * np_watch - NUMAPLACE_IOC_WATCH
 * @arg: struct numaplace_watch
 *
 * Return: a new file descriptor, or -errno (the struct is not written back).
 */
int np_watch(void *arg)
{
	struct numaplace_watch *a = arg;
	struct np_watch *w;
	int ret;

	w = np_watch_new(a);
	if (IS_ERR(w))
		return PTR_ERR(w);
	ret = np_watch_fd(w, a->flags);
	if (ret < 0) {
		np_watch_stop(w);
		np_watch_free(w);
	}
	return ret;
}
