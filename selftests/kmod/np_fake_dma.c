// SPDX-License-Identifier: GPL-2.0
/*
 * np_fake_dma: a test-only dmaengine provider for numaplace's selftests
 * (selftests/dma.c). One DMA_MEMCPY channel on a platform device whose
 * "hardware" is an hrtimer doing the memcpy; the guest has no IOMMU,
 * so a DMA address is the physical address (checked at probe). The
 * parameter mode (writable at run time) picks how descriptors issued from
 * then on complete:
 *   normal        at once, in order;
 *   late          after late_ms (longer than numaplace's per-page wait);
 *   out_of_order  after ooo_ms, each batch in reverse order, and while in
 *                 flight device_tx_status() answers DMA_OUT_OF_ORDER, as
 *                 Intel DSA does (a client must wait for the callback);
 *   never         not at all, until terminated.
 * Read-only counters say what the device saw: descriptors prepared,
 * completed (written), terminated, out-of-order answers, and abandoned:
 * descriptors still queued when their client released the channel, that
 * is, that it gave up on without device_terminate_all(). Real hardware
 * would write those after the client had unmapped (and freed) the pages;
 * this one only counts them and drops them.
 */
#include <linux/dma-mapping.h>
#include <linux/dmaengine.h>
#include <linux/hrtimer.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/mm.h>
#include <linux/platform_device.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>

#define NP_FD_NAME	"np_fake_dma"

enum np_fd_mode { NP_FD_NORMAL, NP_FD_LATE, NP_FD_OOO, NP_FD_NEVER };

static const char * const np_fd_modes[] = {
	[NP_FD_NORMAL] = "normal",
	[NP_FD_LATE] = "late",
	[NP_FD_OOO] = "out_of_order",
	[NP_FD_NEVER] = "never",
};

static int np_fd_mode = NP_FD_NORMAL;

static int np_fd_mode_set(const char *val, const struct kernel_param *kp)
{
	int m = sysfs_match_string(np_fd_modes, val);

	if (m < 0)
		return m;
	WRITE_ONCE(np_fd_mode, m);
	return 0;
}

static int np_fd_mode_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%s\n", np_fd_modes[READ_ONCE(np_fd_mode)]);
}

static const struct kernel_param_ops np_fd_mode_ops = {
	.set = np_fd_mode_set,
	.get = np_fd_mode_get,
};
module_param_cb(mode, &np_fd_mode_ops, NULL, 0644);
MODULE_PARM_DESC(mode, "normal|late|out_of_order|never");

/* late: well over numaplace's 100 ms per page, well under a test's bound */
static unsigned int late_ms = 300;
module_param(late_ms, uint, 0644);
MODULE_PARM_DESC(late_ms, "late: ms from issue to completion");
/* out_of_order: within numaplace's wait, in flight when polled at once */
static unsigned int ooo_ms = 1;
module_param(ooo_ms, uint, 0644);
MODULE_PARM_DESC(ooo_ms, "out_of_order: ms from issue to completion");

/*
 * A counter, updated under np_fd.lock, that the tests read as a read-only
 * parameter (/sys/module/np_fake_dma/parameters/@name).
 */
#define NP_FD_COUNTER(name, desc)					\
	static unsigned long name;					\
	module_param(name, ulong, 0444);				\
	MODULE_PARM_DESC(name, desc)

NP_FD_COUNTER(descs, "descriptors prepared");
NP_FD_COUNTER(completed, "descriptors the device completed (wrote)");
NP_FD_COUNTER(terminated, "descriptors device_terminate_all() cancelled");
NP_FD_COUNTER(abandoned, "descriptors queued when the channel was freed");
NP_FD_COUNTER(ooo_answers, "tx_status answers DMA_OUT_OF_ORDER");
NP_FD_COUNTER(errors, "descriptors failed (an address not in RAM)");

struct np_fd_desc {
	struct dma_async_tx_descriptor tx;
	struct list_head node;
	dma_addr_t dst, src;
	size_t len;
	ktime_t due;
	bool never;		/* issued in mode never: not before terminate */
	bool ooo;		/* issued in mode out_of_order */
};

static struct np_fd {
	struct platform_device *pdev;
	struct dma_device dd;
	struct dma_chan chan;
	spinlock_t lock;		/* the lists, the cookies, the counters */
	struct list_head submitted;	/* submitted, not issued */
	struct list_head issued;	/* issued, not started */
	struct list_head running;	/* being copied by the timer */
	/*
	 * The "hardware": an hrtimer in hard interrupt context, to run
	 * beside a client that polls tx_status in a loop on every CPU
	 * (dma_sync_wait() neither sleeps nor yields), where a work or a
	 * softirq deferred to ksoftirqd would wait for the client to give up.
	 */
	struct hrtimer timer;
	bool registered;
} np_fd;

static void np_fd_free_list(struct list_head *list)
{
	struct np_fd_desc *d, *n;

	list_for_each_entry_safe(d, n, list, node) {
		list_del(&d->node);
		kfree(d);
	}
}

static dma_cookie_t np_fd_submit(struct dma_async_tx_descriptor *tx)
{
	struct np_fd_desc *d = container_of(tx, struct np_fd_desc, tx);
	struct dma_chan *chan = tx->chan;
	unsigned long flags;
	dma_cookie_t cookie;

	spin_lock_irqsave(&np_fd.lock, flags);
	cookie = chan->cookie + 1;
	if (cookie < DMA_MIN_COOKIE)
		cookie = DMA_MIN_COOKIE;
	chan->cookie = cookie;
	tx->cookie = cookie;
	list_add_tail(&d->node, &np_fd.submitted);
	spin_unlock_irqrestore(&np_fd.lock, flags);
	return cookie;
}

static struct dma_async_tx_descriptor *
np_fd_prep_memcpy(struct dma_chan *chan, dma_addr_t dst, dma_addr_t src,
		  size_t len, unsigned long flags)
{
	struct np_fd_desc *d = kzalloc(sizeof(*d), GFP_NOWAIT);
	unsigned long irqflags;

	if (!d)
		return NULL;
	dma_async_tx_descriptor_init(&d->tx, chan);
	d->tx.flags = flags;
	d->tx.tx_submit = np_fd_submit;
	d->dst = dst;
	d->src = src;
	d->len = len;
	spin_lock_irqsave(&np_fd.lock, irqflags);
	descs++;
	spin_unlock_irqrestore(&np_fd.lock, irqflags);
	return &d->tx;
}

/* Arm the timer for @due unless it fires before; under np_fd.lock. */
static void np_fd_arm(ktime_t due)
{
	if (!hrtimer_is_queued(&np_fd.timer) ||
	    ktime_before(due, hrtimer_get_expires(&np_fd.timer)))
		hrtimer_start(&np_fd.timer, due, HRTIMER_MODE_ABS_HARD);
}

static void np_fd_issue_pending(struct dma_chan *chan)
{
	int mode = READ_ONCE(np_fd_mode);
	struct np_fd_desc *d;
	unsigned long flags;
	ktime_t due = ktime_get();

	if (mode == NP_FD_LATE)
		due = ktime_add_ms(due, READ_ONCE(late_ms));
	else if (mode == NP_FD_OOO)
		due = ktime_add_ms(due, READ_ONCE(ooo_ms));
	spin_lock_irqsave(&np_fd.lock, flags);
	list_for_each_entry(d, &np_fd.submitted, node) {
		d->never = mode == NP_FD_NEVER;
		d->ooo = mode == NP_FD_OOO;
		d->due = due;
	}
	list_splice_tail_init(&np_fd.submitted, &np_fd.issued);
	if (mode != NP_FD_NEVER)
		np_fd_arm(due);
	spin_unlock_irqrestore(&np_fd.lock, flags);
}

/* A DMA address as the device sees it: RAM at that physical address. */
static void *np_fd_virt(dma_addr_t addr, size_t len)
{
	if (!len || !pfn_valid(PHYS_PFN(addr)) ||
	    !pfn_valid(PHYS_PFN(addr + len - 1)))
		return NULL;
	return phys_to_virt(addr);
}

static void np_fd_complete(struct np_fd_desc *d)
{
	struct dmaengine_result res = { .result = DMA_TRANS_NOERROR };
	dma_async_tx_callback_result cb_result = d->tx.callback_result;
	dma_async_tx_callback cb = d->tx.callback;
	void *param = d->tx.callback_param;
	void *to = np_fd_virt(d->dst, d->len);
	void *from = np_fd_virt(d->src, d->len);
	unsigned long flags;

	if (to && from)
		memcpy(to, from, d->len);
	else
		res.result = DMA_TRANS_WRITE_FAILED;
	spin_lock_irqsave(&np_fd.lock, flags);
	list_del(&d->node);
	if (res.result == DMA_TRANS_NOERROR)
		completed++;
	else
		errors++;
	/* Out of order, the last cookie is no watermark (device_tx_status). */
	np_fd.chan.completed_cookie = d->tx.cookie;
	spin_unlock_irqrestore(&np_fd.lock, flags);
	if (cb_result)
		cb_result(param, &res);
	else if (cb)
		cb(param);
	kfree(d);
}

/* The "hardware": run every issued descriptor that is due. */
static enum hrtimer_restart np_fd_run(struct hrtimer *timer)
{
	ktime_t now = ktime_get(), next = 0;
	struct np_fd_desc *d, *n;
	unsigned long flags;
	bool more = false;

	spin_lock_irqsave(&np_fd.lock, flags);
	list_for_each_entry_safe(d, n, &np_fd.issued, node) {
		if (d->never)
			continue;
		if (ktime_after(d->due, now)) {
			if (!more || ktime_before(d->due, next))
				next = d->due;
			more = true;
		} else if (d->ooo) {
			list_move(&d->node, &np_fd.running); /* in reverse */
		} else {
			list_move_tail(&d->node, &np_fd.running);
		}
	}
	spin_unlock_irqrestore(&np_fd.lock, flags);
	/* Only the timer takes descriptors off running (terminate leaves them). */
	list_for_each_entry_safe(d, n, &np_fd.running, node)
		np_fd_complete(d);
	if (more) {
		spin_lock_irqsave(&np_fd.lock, flags);
		np_fd_arm(next);
		spin_unlock_irqrestore(&np_fd.lock, flags);
	}
	return HRTIMER_NORESTART;
}

static enum dma_status np_fd_tx_status(struct dma_chan *chan,
				       dma_cookie_t cookie,
				       struct dma_tx_state *state)
{
	enum dma_status st = DMA_IN_PROGRESS;
	struct np_fd_desc *d;
	unsigned long flags;
	bool queued = false;

	spin_lock_irqsave(&np_fd.lock, flags);
	list_for_each_entry(d, &np_fd.issued, node)
		queued |= d->tx.cookie == cookie;
	list_for_each_entry(d, &np_fd.submitted, node)
		queued |= d->tx.cookie == cookie;
	list_for_each_entry(d, &np_fd.running, node)
		queued |= d->tx.cookie == cookie;
	if (queued && READ_ONCE(np_fd_mode) == NP_FD_OOO) {
		st = DMA_OUT_OF_ORDER;
		ooo_answers++;
	} else if (!queued) {
		/* done, or terminated: either way the device is through */
		st = DMA_COMPLETE;
	}
	spin_unlock_irqrestore(&np_fd.lock, flags);
	dma_set_tx_state(state, chan->completed_cookie, chan->cookie, 0);
	return st;
}

/*
 * Take every queued descriptor (submitted or issued) off the device onto
 * @gone, adding their number to *@count: the device writes none of them.
 */
static void np_fd_take_queued(struct list_head *gone, unsigned long *count)
{
	struct np_fd_desc *d;
	unsigned long flags;

	spin_lock_irqsave(&np_fd.lock, flags);
	list_splice_init(&np_fd.submitted, gone);
	list_splice_init(&np_fd.issued, gone);
	list_for_each_entry(d, gone, node)
		(*count)++;
	spin_unlock_irqrestore(&np_fd.lock, flags);
}

/* Cancel every queued descriptor: the device writes none of them. */
static int np_fd_terminate_all(struct dma_chan *chan)
{
	LIST_HEAD(gone);

	np_fd_take_queued(&gone, &terminated);
	np_fd_free_list(&gone);
	return 0;
}

/*
 * Wait for the descriptors the device is running (their copy, their
 * callback). The device stops: one issued after the terminate waits for
 * the next issue_pending (a client that timed out on it terminates it).
 */
static void np_fd_synchronize(struct dma_chan *chan)
{
	hrtimer_cancel(&np_fd.timer);
}

static int np_fd_alloc_chan(struct dma_chan *chan)
{
	return 1;
}

/* The client is gone: what it left queued, it abandoned. */
static void np_fd_free_chan(struct dma_chan *chan)
{
	LIST_HEAD(gone);

	np_fd_take_queued(&gone, &abandoned);
	if (!list_empty(&gone))
		dev_info(np_fd.dd.dev, "%s: channel freed with descriptors queued\n",
			 NP_FD_NAME);
	hrtimer_cancel(&np_fd.timer);
	np_fd_free_list(&gone);
}

/* dma_map_page() on this device must give the physical address. */
static int np_fd_check_direct(struct device *dev)
{
	struct page *page = alloc_page(GFP_KERNEL);
	dma_addr_t addr;
	int ret = 0;

	if (!page)
		return -ENOMEM;
	addr = dma_map_page(dev, page, 0, PAGE_SIZE, DMA_BIDIRECTIONAL);
	if (dma_mapping_error(dev, addr)) {
		ret = -EIO;
		goto free_page;
	}
	if (addr != page_to_phys(page)) {
		dev_err(dev, "DMA address %pad is not the physical address\n",
			&addr);
		ret = -ENODEV;
	}
	dma_unmap_page(dev, addr, PAGE_SIZE, DMA_BIDIRECTIONAL);
free_page:
	__free_page(page);
	return ret;
}

static int np_fd_probe(struct platform_device *pdev)
{
	struct dma_device *dd = &np_fd.dd;
	int ret;

	ret = dma_coerce_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (ret)
		return ret;
	ret = np_fd_check_direct(&pdev->dev);
	if (ret)
		return ret;
	dd->dev = &pdev->dev;
	INIT_LIST_HEAD(&dd->channels);
	dma_cap_zero(dd->cap_mask);
	dma_cap_set(DMA_MEMCPY, dd->cap_mask);
	dd->device_alloc_chan_resources = np_fd_alloc_chan;
	dd->device_free_chan_resources = np_fd_free_chan;
	dd->device_prep_dma_memcpy = np_fd_prep_memcpy;
	dd->device_issue_pending = np_fd_issue_pending;
	dd->device_tx_status = np_fd_tx_status;
	dd->device_terminate_all = np_fd_terminate_all;
	dd->device_synchronize = np_fd_synchronize;
	np_fd.chan.device = dd;
	list_add_tail(&np_fd.chan.device_node, &dd->channels);
	ret = dma_async_device_register(dd);
	if (ret)
		return ret;
	np_fd.registered = true;
	return 0;
}

static struct platform_driver np_fd_driver = {
	.probe = np_fd_probe,
	.driver = {
		.name = NP_FD_NAME,
		/* unbound only by the module's exit */
		.suppress_bind_attrs = true,
	},
};

static int __init np_fd_init(void)
{
	int ret;

	spin_lock_init(&np_fd.lock);
	INIT_LIST_HEAD(&np_fd.submitted);
	INIT_LIST_HEAD(&np_fd.issued);
	INIT_LIST_HEAD(&np_fd.running);
#ifdef NP_FD_HAVE_HRTIMER_SETUP
	hrtimer_setup(&np_fd.timer, np_fd_run, CLOCK_MONOTONIC,
		      HRTIMER_MODE_ABS_HARD);
#else	/* before v6.13 "hrtimers: Introduce hrtimer_setup()" */
	hrtimer_init(&np_fd.timer, CLOCK_MONOTONIC, HRTIMER_MODE_ABS_HARD);
	np_fd.timer.function = np_fd_run;
#endif
	ret = platform_driver_register(&np_fd_driver);
	if (ret)
		return ret;
	np_fd.pdev = platform_device_register_simple(NP_FD_NAME, -1, NULL, 0);
	if (IS_ERR(np_fd.pdev)) {
		ret = PTR_ERR(np_fd.pdev);
		goto unregister_driver;
	}
	if (!np_fd.registered) {
		ret = -ENODEV;		/* probe failed (its message says why) */
		goto unregister_pdev;
	}
	return 0;
unregister_pdev:
	platform_device_unregister(np_fd.pdev);
unregister_driver:
	platform_driver_unregister(&np_fd_driver);
	return ret;
}

static void __exit np_fd_exit(void)
{
	/* No client holds the channel: it holds a reference on this module. */
	dma_async_device_unregister(&np_fd.dd);
	hrtimer_cancel(&np_fd.timer);
	np_fd_free_list(&np_fd.submitted);
	np_fd_free_list(&np_fd.issued);
	platform_device_unregister(np_fd.pdev);
	platform_driver_unregister(&np_fd_driver);
}

module_init(np_fd_init);
module_exit(np_fd_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("numaplace selftests: a fake dmaengine memcpy channel");
