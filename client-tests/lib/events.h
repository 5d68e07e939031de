/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reading inotify and fanotify events with a bound, as (mask, name) pairs,
 * so that a test can count what a watcher received for one change.
 */
#ifndef TB_EVENTS_H
#define TB_EVENTS_H

#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <sys/fanotify.h>
#include <sys/inotify.h>

#include "testbed.h"

#ifndef FAN_REPORT_REMOTE
#define FAN_REPORT_REMOTE	0x00008000	/* the series' proposal */
#endif

#define TB_EVENTS_MAX	256

/*
 * A fanotify group that reports changes made on the server, with the
 * directory's handle and the name (what fsnotify gives a filesystem mark),
 * and @flags (FAN_NONBLOCK); -1 with errno set.
 */
static inline int tb_remote_fan_group(unsigned int flags)
{
	return fanotify_init(FAN_CLASS_NOTIF | FAN_REPORT_DFID_NAME |
			     FAN_REPORT_REMOTE | flags, O_RDONLY);
}

struct tb_event {
	uint32_t mask;		/* IN_* (inotify) or FAN_* (fanotify) */
	uint32_t cookie;	/* inotify's rename cookie */
	char name[256];
	/* fanotify's DFID_NAME record: the directory's handle, type first */
	unsigned char fh[64];
	unsigned int fh_len;
};

struct tb_events {
	int n;
	struct tb_event ev[TB_EVENTS_MAX];
};

/* Append the inotify events in buf[0..len) to @evs. */
static inline void tb_parse_inotify(struct tb_events *evs, const char *buf,
				    ssize_t len)
{
	const char *p = buf;

	while (p + sizeof(struct inotify_event) <= buf + len) {
		const struct inotify_event *ie = (const void *)p;

		if (evs->n < TB_EVENTS_MAX) {
			struct tb_event *e = &evs->ev[evs->n++];

			e->mask = ie->mask;
			e->cookie = ie->cookie;
			snprintf(e->name, sizeof(e->name), "%s",
				 ie->len ? ie->name : "");
		}
		p += sizeof(*ie) + ie->len;
	}
}

/*
 * Append the fanotify events in buf[0..len) (the directory's handle and
 * the name from a DFID_NAME record), closing the file an event without
 * FIDs carries.
 */
static inline void tb_parse_fanotify(struct tb_events *evs, const char *buf,
				     ssize_t len)
{
	const struct fanotify_event_metadata *md = (const void *)buf;

	for (; FAN_EVENT_OK(md, len); md = FAN_EVENT_NEXT(md, len)) {
		const char *p = (const char *)(md + 1);
		struct tb_event *e;

		/* a group without FIDs hands over an open file: not kept */
		if (md->fd >= 0)
			close(md->fd);
		if (evs->n >= TB_EVENTS_MAX)
			continue;
		e = &evs->ev[evs->n++];
		e->mask = md->mask;
		e->cookie = 0;
		e->name[0] = '\0';
		e->fh_len = 0;
		while (p < (const char *)md + md->event_len) {
			const struct fanotify_event_info_fid *fid = (const void *)p;

			if (fid->hdr.info_type == FAN_EVENT_INFO_TYPE_DFID_NAME) {
				const struct file_handle *fh =
					(const void *)fid->handle;
				const char *name = (const char *)fh->f_handle +
						   fh->handle_bytes;

				snprintf(e->name, sizeof(e->name), "%s", name);
				if (fh->handle_bytes <= sizeof(e->fh) - sizeof(int)) {
					memcpy(e->fh, &fh->handle_type, sizeof(int));
					memcpy(e->fh + sizeof(int), fh->f_handle,
					       fh->handle_bytes);
					e->fh_len = sizeof(int) + fh->handle_bytes;
				}
			}
			if (!fid->hdr.len)
				break;
			p += fid->hdr.len;
		}
	}
}

/*
 * Read events from @fd (inotify, or fanotify when @fan) until @seconds
 * have passed; with @quiet > 0, stop earlier once nothing came for @quiet
 * seconds after the first event.  Returns the number of events read.
 */
static inline int tb_read_events(int fd, int fan, struct tb_events *evs,
				 double seconds, double quiet)
{
	double end = tb_now() + seconds, last = 0;
	char buf[16384] __attribute__((aligned(8)));

	for (;;) {
		double now = tb_now(), left = end - now;
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t len;

		if (quiet > 0 && last > 0 && now - last >= quiet)
			break;
		if (quiet > 0 && last > 0 && last + quiet - now < left)
			left = last + quiet - now;
		if (left <= 0)
			break;
		if (poll(&pfd, 1, (int)(left * 1000) + 1) <= 0)
			continue;
		len = read(fd, buf, sizeof(buf));
		if (len <= 0)
			break;
		if (fan)
			tb_parse_fanotify(evs, buf, len);
		else
			tb_parse_inotify(evs, buf, len);
		last = tb_now();
	}
	return evs->n;
}

/*
 * Wait until smbd holds @want notify requests on share/@name (tb-serverd's
 * "watched": notifyd's watches of it); 1 when it does, 0 after @seconds.
 */
static inline int tb_wait_watched(const char *name, long long want,
				  double seconds)
{
	return tb_wait_count("watched", name, want, seconds, 200) == want;
}

/*
 * Wait until smbd holds a CHANGE_NOTIFY request on share/@name: inotify and
 * fanotify marks arm the remote watch without waiting for the server, so a
 * change made before that is not reported.  1 when it does.
 */
static inline int tb_wait_remote_watch(const char *name, double seconds)
{
	return tb_wait_watched(name, 1, seconds);
}

#ifndef AT_HANDLE_FID
#define AT_HANDLE_FID		0x200	/* linux/fcntl.h, 6.5 */
#endif

/*
 * The handle fanotify reports for @path (a DFID record's), as tb_event
 * keeps it: the type, then the bytes; 0, or -1 with errno set.
 */
static inline int tb_handle(const char *path, unsigned char *out,
			    unsigned int *len)
{
	struct {
		struct file_handle fh;
		unsigned char buf[64];
	} h;
	int mnt_id;

	h.fh.handle_bytes = sizeof(h.buf);
	if (name_to_handle_at(AT_FDCWD, path, &h.fh, &mnt_id, AT_HANDLE_FID))
		return -1;
	memcpy(out, &h.fh.handle_type, sizeof(int));
	memcpy(out + sizeof(int), h.fh.f_handle, h.fh.handle_bytes);
	*len = sizeof(int) + h.fh.handle_bytes;
	return 0;
}

/* How many of @evs have all of @mask's bits and the name @name. */
static inline int tb_count(const struct tb_events *evs, uint32_t mask,
			   const char *name)
{
	int i, n = 0;

	for (i = 0; i < evs->n; i++)
		if ((evs->ev[i].mask & mask) == mask &&
		    !strcmp(evs->ev[i].name, name))
			n++;
	return n;
}

/* One line per event, for a test's log: "0x100 name". */
static inline const char *tb_events_str(const struct tb_events *evs,
					char *buf, size_t len)
{
	size_t off = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; i < evs->n && off < len; i++)
		off += snprintf(buf + off, len - off, "%s0x%x %s",
				i ? ", " : "", evs->ev[i].mask,
				evs->ev[i].name);
	return buf;
}

#endif /* TB_EVENTS_H */
