// SPDX-License-Identifier: GPL-2.0
/*
 * numaplace monitor: a line per completed migration call, from the
 * "events" multicast group of the numaplace generic netlink family
 * (MIGRATE_DONE), and a line per placement-watch record (WATCH, printed
 * as `numaplace watch` prints it), until SIGINT or SIGTERM. Every line is flushed, so a
 * pipe sees it at once.
 *
 *   numaplace monitor [--json]
 *
 * The generic netlink controller's "notify" group is joined too: when the
 * module is unloaded the kernel drops every member of its groups, and when
 * it is loaded again the monitor joins the new family's group by itself.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include <linux/genetlink.h>

#include "cli.h"
#include "nl.h"
#include "output.h"

struct np_monitor {
	struct np_nl nl;
	int json;
	uint32_t notify_grp;	/* the controller's "notify" group */
	int rejoin;		/* the family was registered again */
};

static const struct np_cmd_desc np_monitor_desc = {
	.name = "monitor",
	NP_CMD_JSON_ONLY("one JSON object per line"),
	.about = "Print a line per completed migration call (any process's) until\n"
		 "interrupted: time, pid, pages and MiB moved, the call's duration,\n"
		 "its throughput, the engines that moved pages, pages that did not\n"
		 "move and the call's error; and a line per placement-watch record\n"
		 "of any watch (as `numaplace watch` prints it).",
	.exits = NP_EXITS_BASE | NP_EXIT_BIT(NP_EXIT_PERM),
};

/* The engines of an event: "kernel,vma", "-" for none. */
static const struct np_bits np_monitor_engine_bits = {
	np_engine_bit_names, NP_NR_ENGINES, ",", "-", 1,
};

static void np_print_event(const struct np_monitor *mon,
			   const struct np_nl_event *ev)
{
	const char *err = ev->error ? np_errno_name(ev->error) : NULL;
	double gbps = ev->duration_ns ? (double)ev->bytes / ev->duration_ns : 0;
	char errbuf[16];
	struct timeval tv;
	struct np_out o;

	if (np_out_begin(&o, mon->json ? NP_FMT_JSON : NP_FMT_TEXT))
		return;
	gettimeofday(&tv, NULL);
	if (ev->error && !err) {
		snprintf(errbuf, sizeof(errbuf), "E%u", ev->error);
		err = errbuf;
	}
	np_print_time(&o, NP_PRINT_ANY, "time", "%s", &tv);
	np_print_uint(&o, NP_PRINT_ANY, "pid", " %8llu", ev->pid);
	np_print_uint(&o, NP_PRINT_ANY, "pages", " %10llu", ev->pages);
	/* JSON in bytes and nanoseconds; text in MiB and milliseconds. */
	np_print_uint(&o, NP_PRINT_JSON, "bytes", NULL, ev->bytes);
	np_print_float(&o, NP_PRINT_TEXT, NULL, " %10.2f", 2,
		       ev->bytes / 1048576.0);
	np_print_uint(&o, NP_PRINT_JSON, "duration_ns", NULL, ev->duration_ns);
	np_print_float(&o, NP_PRINT_TEXT, NULL, " %10.3f", 3,
		       ev->duration_ns / 1e6);
	np_print_float(&o, ev->duration_ns ? NP_PRINT_ANY : NP_PRINT_JSON,
		       "gbps", " %8.2f", 3, gbps);
	if (!ev->duration_ns)
		np_print_text(&o, " %8s", "-");
	np_print_names(&o, NP_PRINT_ANY, "engines", "  %-14s",
		       &np_monitor_engine_bits, ev->engines);
	np_print_uint(&o, NP_PRINT_ANY, "failed", " %8llu", ev->failed);
	if (err)
		np_print_str(&o, NP_PRINT_ANY, "error", "  %s\n", err);
	else
		np_print_null(&o, NP_PRINT_ANY, "error", "  -\n");
	np_out_end(&o);
	fflush(stdout);
}

static void np_print_header(const struct np_monitor *mon)
{
	if (mon->json)
		return;
	printf("%-12s %8s %10s %10s %10s %8s  %-14s %8s  %s\n", "TIME", "PID",
	       "PAGES", "MiB", "ms", "GB/s", "ENGINES", "FAILED", "ERROR");
	fflush(stdout);
}

/* The controller's news about our family: the module went or came. */
static int np_ctrl_attr_cb(const struct nlattr *attr, void *data)
{
	const char **name = data;

	if (mnl_attr_get_type(attr) == CTRL_ATTR_FAMILY_NAME &&
	    mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) >= 0)
		*name = mnl_attr_get_str(attr);
	return MNL_CB_OK;
}

static void np_monitor_ctrl(struct np_monitor *mon, const struct nlmsghdr *nlh)
{
	uint8_t cmd = np_nl_cmd(nlh);
	const char *name = NULL;

	if (cmd != CTRL_CMD_NEWFAMILY && cmd != CTRL_CMD_DELFAMILY)
		return;
	mnl_attr_parse(nlh, GENL_HDRLEN, np_ctrl_attr_cb, &name);
	if (!name || strcmp(name, NUMAPLACE_FAMILY_NAME))
		return;
	if (cmd == CTRL_CMD_NEWFAMILY) {
		mon->rejoin = 1;	/* once this datagram is read */
		return;
	}
	/* The kernel has dropped us from the group already. */
	mon->nl.family = 0;
	mon->nl.events_grp = 0;
	fprintf(stderr, "numaplace monitor: the module was unloaded; waiting for it\n");
}

/*
 * The module is back: resolve its family and join its group. Resolving
 * reads the answer on this socket; a notification that comes meanwhile is
 * dropped (none of the new family's events can: we are not in its group
 * yet).
 */
static void np_monitor_rejoin(struct np_monitor *mon)
{
	struct np_nl *nl = &mon->nl;
	int ret;

	mon->rejoin = 0;
	ret = np_nl_resolve(nl, NUMAPLACE_FAMILY_NAME, &nl->family,
			    NUMAPLACE_MCGRP_EVENTS, &nl->events_grp);
	if (!ret)
		ret = nl->events_grp ? np_nl_group(nl, nl->events_grp, 1) :
				       -ENOENT;
	if (ret)
		fprintf(stderr, "numaplace monitor: the module is back but its events group could not be joined: %s\n",
			strerror(-ret));
	else
		fprintf(stderr, "numaplace monitor: the module is back\n");
}

static int np_monitor_cb(const struct nlmsghdr *nlh, void *data)
{
	struct np_monitor *mon = data;
	struct np_nl_event ev = { 0 };
	struct np_nl_watch w = { 0 };

	if (nlh->nlmsg_type == GENL_ID_CTRL) {
		np_monitor_ctrl(mon, nlh);
		return MNL_CB_OK;
	}
	if (!mon->nl.family || nlh->nlmsg_type != mon->nl.family)
		return MNL_CB_OK;
	/* A WATCH event prints as `numaplace watch` prints it (watch.c). */
	if (np_nl_watch_parse(nlh, &w))
		np_watch_print_id(&w.rec, w.pid, w.id, mon->json);
	else if (np_nl_event_parse(nlh, &ev))
		np_print_event(mon, &ev);
	return MNL_CB_OK;
}

int np_cmd_monitor(int argc, char **argv)
{
	struct np_monitor mon = { 0 };
	uint16_t ctrl_id;
	int ret;

	/* --json is the only option. */
	ret = np_parse_opts_only(&np_monitor_desc, argc, argv, np_opt_flag,
				 &mon.json);
	if (ret)
		return ret == NP_OPT_HELP ? NP_EXIT_OK : ret;
	ret = np_nl_open(&mon.nl, "numaplace monitor", 0);
	if (ret)
		return np_exit_of(ret);
	if (!mon.nl.events_grp) {
		fprintf(stderr, "numaplace monitor: the module has no \"%s\" group\n",
			NUMAPLACE_MCGRP_EVENTS);
		np_nl_close(&mon.nl);
		return NP_EXIT_NODEV;
	}
	ret = np_nl_resolve(&mon.nl, "nlctrl", &ctrl_id, "notify",
			    &mon.notify_grp);
	if (!ret && mon.notify_grp)
		ret = np_nl_group(&mon.nl, mon.notify_grp, 1);
	if (ret)	/* Not fatal: only the module's reload goes unseen. */
		mon.notify_grp = 0;
	ret = np_nl_group(&mon.nl, mon.nl.events_grp, 1);
	if (ret) {
		fprintf(stderr, "numaplace monitor: joining the events group: %s\n",
			strerror(-ret));
		np_nl_close(&mon.nl);
		/* EPERM: the kernel wants CAP_NET_ADMIN to join (v6.7+). */
		return np_exit_of(ret);
	}

	/* No SA_RESTART: the signal ends the receive at once. */
	np_stop_on_signals();
	np_print_header(&mon);
	while (!np_stop) {
		ret = np_nl_recv_notify(&mon.nl, np_monitor_cb, &mon);
		if (ret == -ENOBUFS) {
			fprintf(stderr, "numaplace monitor: the kernel dropped events (receive queue full)\n");
			continue;
		}
		if (ret == -EINTR)
			continue;
		if (!ret && mon.rejoin)
			np_monitor_rejoin(&mon);
		if (ret) {
			fprintf(stderr, "numaplace monitor: %s\n", strerror(-ret));
			break;
		}
	}
	np_nl_close(&mon.nl);
	return np_stop ? NP_EXIT_OK : NP_EXIT_FAIL;
}
