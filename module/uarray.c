// SPDX-License-Identifier: GPL-2.0
/*
 * numaplace: user arrays in and out.
 *
 * Addresses are fetched once, straight into the stretches they form;
 * statuses go out straight from the segments that answer them. Neither
 * passes through a per-element kernel buffer: an access per element, as
 * move_pages' own get_user() per entry, inside one user_access_begin().
 * Plain arrays (nodes[] in, a status array out) are copied whole.
 */
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/uaccess.h>

#include "numaplace.h"

/**
 * np_get_stretches - read @n user addresses as stretches of consecutive pages
 * @src: user array of @n addresses (any address inside a page)
 * @n: entries to read, at most what @st can hold
 * @st: out, the stretches, in array order
 * @ascending: out if not NULL: every page is above the one before it (so
 *	no page is named twice)
 *
 * Addresses at or above TASK_SIZE_MAX are never joined to a stretch: no
 * VMA is there, and joining could wrap past the top of the address space.
 * Return: the number of stretches, or -EFAULT.
 */
int np_get_stretches(const u64 __user *src, unsigned int n,
		     struct np_stretch *st, bool *ascending)
{
	unsigned long page, prev = 0, next = 1; /* never a page address */
	unsigned int i, nr = 0;
	bool up = true;
	u64 addr;

	if (!user_access_begin(src, n * sizeof(*src)))
		return -EFAULT;
	for (i = 0; i < n; i++) {
		unsafe_get_user(addr, src + i, efault);
		page = addr & PAGE_MASK;
		if (i && page <= prev)
			up = false;
		prev = page;
		if (page == next) {
			st[nr - 1].nr_pages++;
		} else {
			st[nr].start = page;
			st[nr].nr_pages = 1;
			nr++;
		}
		next = page < TASK_SIZE_MAX ? page + PAGE_SIZE : 1;
	}
	user_access_end();
	if (ascending)
		*ascending = up;
	return nr;
efault:
	user_access_end();
	return -EFAULT;
}

/**
 * np_put_segs - write segments of equal status into a user status array
 * @dst: user array, one s32 per page the segments cover
 * @segs: the segments, in page order
 * @nr: how many
 *
 * Return: 0 or -EFAULT.
 */
int np_put_segs(s32 __user *dst, const struct np_seg *segs, unsigned int nr)
{
	unsigned long total = 0;
	unsigned int i, k;

	for (i = 0; i < nr; i++)
		total += segs[i].nr_pages;
	if (!user_access_begin(dst, total * sizeof(*dst)))
		return -EFAULT;
	for (i = 0; i < nr; i++)
		for (k = 0; k < segs[i].nr_pages; k++)
			unsafe_put_user(segs[i].status, dst++, efault);
	user_access_end();
	return 0;
efault:
	user_access_end();
	return -EFAULT;
}

/* Read @n s32 from user memory (move_pages' nodes[]). 0 or -EFAULT. */
int np_get_s32s(s32 *dst, const s32 __user *src, unsigned int n)
{
	return copy_from_user(dst, src, n * sizeof(*dst)) ? -EFAULT : 0;
}

/* Write @n s32 to user memory (a status array). 0 or -EFAULT. */
int np_put_s32s(s32 __user *dst, const s32 *src, unsigned int n)
{
	return copy_to_user(dst, src, n * sizeof(*src)) ? -EFAULT : 0;
}

/**
 * np_range_check - a user range [@start, @start + @len) a call may walk
 *
 * Return: 0, or -EINVAL when the range or its page-aligned end wraps.
 */
int np_range_check(u64 start, u64 len)
{
	u64 end;

	if (check_add_overflow(start, len, &end) ||
	    (end & ~PAGE_MASK && !PAGE_ALIGN(end)))
		return -EINVAL;
	return 0;
}
