/* SPDX-License-Identifier: GPL-2.0 */
/*
 * numaplace: the generic netlink client on libmnl (after ethtool's
 * netlink/nlsock.c) of the CLI and of the selftests, built once as a
 * static library (build/nl/libnp_nl.a): the family and its "events" group
 * are resolved by name through the controller, every request carries a
 * sequence number that its answers must repeat, NETLINK_EXT_ACK and
 * NETLINK_CAP_ACK are on, and an error is printed with the kernel's
 * extack message (kept in struct np_nl_ext for a caller that checks it).
 */
#ifndef NP_NL_H
#define NP_NL_H

#include <stddef.h>
#include <stdint.h>

#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <linux/numaplace.h>

/*
 * Bytes of one receive. netlink_dump() builds parts of at most 32 KiB
 * (and a multicast message is one page); twice that leaves room.
 */
#define NP_NL_RECV_SIZE		65536
/* Bytes of one request: a header and a few attributes. */
#define NP_NL_REQ_SIZE		4096
/* Longest extack message kept (the kernel's are short sentences). */
#define NP_NL_MSG_SIZE		256

/* What the kernel's extended ACK said about the last failed request. */
struct np_nl_ext {
	char msg[NP_NL_MSG_SIZE];	/* NLMSGERR_ATTR_MSG, "" if none */
	int attr;		/* type of the attribute NLMSGERR_ATTR_OFFS
				 * points at in the request, or -1 */
	int has_range;		/* NLMSGERR_ATTR_POLICY gave: 1 min, 2 max */
	long long min, max;	/* ... and these are they */
};

/**
 * struct np_nl - a generic netlink socket on the "numaplace" family
 * @sk: the socket, NETLINK_GENERIC, bound to an automatic port id
 * @portid: the kernel's answers are addressed to it
 * @seq: sequence number of the last request sent
 * @family: the family's id, 0 until resolved
 * @events_grp: the "events" multicast group's id, 0 if the family has none
 * @who: prefix of the error messages ("numaplace config")
 * @attr_names: names of the request's attributes by type, for messages
 *	about the attribute the kernel rejected; NULL: numbers are printed
 * @nr_attr_names: entries of @attr_names
 * @quiet: do not print errors (the caller does)
 * @ext: the extended ACK of the last failed request
 * @req: the request being answered (its attributes are what
 *	NLMSGERR_ATTR_OFFS points into)
 * @req_buf: where requests are built
 * @buf: NP_NL_RECV_SIZE bytes for the answers
 */
struct np_nl {
	struct mnl_socket *sk;
	unsigned int portid;
	unsigned int seq;
	uint16_t family;
	uint32_t events_grp;
	const char *who;
	const char *const *attr_names;
	unsigned int nr_attr_names;
	int quiet;
	struct np_nl_ext ext;
	const struct nlmsghdr *req;
	char req_buf[NP_NL_REQ_SIZE] __attribute__((aligned(8)));
	char *buf;
};

/*
 * Open the socket and resolve the "numaplace" family and its "events"
 * group; @who prefixes error messages, which @quiet turns off. 0, or
 * -errno: -ENOENT when the family is not registered (numaplace.ko is not
 * loaded).
 */
int np_nl_open(struct np_nl *nl, const char *who, int quiet);
void np_nl_close(struct np_nl *nl);

/*
 * Resolve family @name: its id into *@id and, if @grp is not NULL, the id
 * of its multicast group @grp into *@grp_id (0 if it has none). 0 or
 * -errno (-ENOENT: no such family).
 */
int np_nl_resolve(struct np_nl *nl, const char *name, uint16_t *id,
		  const char *grp, uint32_t *grp_id);

/*
 * Start a request of generic netlink command @cmd to family @family in
 * @nl->req_buf; NLM_F_REQUEST is added to @flags. Attributes are put
 * with mnl_attr_put*() on the returned header.
 */
struct nlmsghdr *np_nl_msg(struct np_nl *nl, uint16_t family, uint8_t cmd,
			   uint16_t flags);

/*
 * Send @nlh and read its answers until the dump's DONE or the ACK (a
 * request without NLM_F_DUMP gets NLM_F_ACK added): each answer goes to
 * @cb (may be NULL) with @data. Answers must carry the request's sequence
 * number and our port id. 0, or -errno: the kernel's error (printed with
 * its extack message unless @nl->quiet), -EINTR when a signal came first.
 */
int np_nl_send_recv(struct np_nl *nl, struct nlmsghdr *nlh, mnl_cb_t cb,
		    void *data);

/*
 * The flags (GENL_CMD_CAP_*, GENL_ADMIN_PERM) of family @name's operations
 * by command into @flags[0, @nr), -1 for a command it does not list.
 * 0 or -errno (-ENOENT: no such family).
 */
int np_nl_op_flags(struct np_nl *nl, const char *name, long *flags,
		   unsigned int nr);

/* Join (@join 1) or leave multicast group @grp. 0 or -errno. */
int np_nl_group(struct np_nl *nl, uint32_t grp, int join);

/*
 * Receive one datagram of notifications and hand each message to @cb.
 * 0, or -errno (-EINTR: a signal; -ENOBUFS: the kernel dropped
 * notifications, the socket stays usable).
 */
int np_nl_recv_notify(struct np_nl *nl, mnl_cb_t cb, void *data);

/*
 * Wait up to @ms (0: only what is queued, -1: forever) for a datagram of
 * notifications and hand each of its messages to @cb: 1, 0 when none
 * came in time, or -errno as np_nl_recv_notify().
 */
int np_nl_wait_notify(struct np_nl *nl, int ms, mnl_cb_t cb, void *data);

/* Print "who: strerror(-err): extack message (attribute, range)". */
void np_nl_perror(const struct np_nl *nl, int err);

/* The symbolic name of a positive errno ("EBUSY"), or NULL. */
const char *np_errno_name(int err);

/* The generic netlink command of a message of the family. */
uint8_t np_nl_cmd(const struct nlmsghdr *nlh);

/*
 * A MIGRATE_DONE event (NUMAPLACE_A_EVENT_*). The parsers below store the
 * attributes a message has and leave the other fields as they were; they
 * return 1 for a message of their command, 0 (nothing stored) otherwise.
 */
struct np_nl_event {
	__u32 pid, engines, error;
	__u64 pages, bytes, duration_ns, failed;
};

int np_nl_event_parse(const struct nlmsghdr *nlh, struct np_nl_event *ev);

/*
 * A WATCH event: the record as a watch fd reads it (nr_nodes: one past
 * the highest node it names; no unplaced counts), the watched pid and
 * the watch's id.
 */
struct np_nl_watch {
	struct numaplace_watch_record rec;
	__u32 pid;
	__u64 id;
};

int np_nl_watch_parse(const struct nlmsghdr *nlh, struct np_nl_watch *w);

#endif /* NP_NL_H */
