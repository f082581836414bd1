// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * nsguard monitor [--json] [--count N] [--id ID] [--pod NAME] [--namespace NS]:
 * stream the ring-buffer events.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <bpf/libbpf.h>
#include "cmd.h"
#include "guard.h"
#include "json.h"
#include "log.h"
#include "policy.h"
#include "record.h"
#include "util.h"
#include "evlog.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

struct idmap {
	__u64 cgroup_id;
	char *id;
	struct pod_identity identity;
	bool retired; /* from /run/nsguard/gone: a live record may take it over */
};

struct monitor {
	bool json;
	/* Filters: an event whose record does not match is consumed, not printed. */
	const char *want_id, *want_pod, *want_namespace;
	unsigned long long count, seen;
	struct idmap *ids;
	size_t n_ids, cap_ids;
	__u64 last_miss; /* cgroup id that had no record at the last reload */
	time_t last_miss_at;
	struct evlog log; /* the collector's log, or the one followed */
	bool logging; /* collector: events go to the log too */
};

static void ids_free(struct monitor *m)
{
	for (size_t i = 0; i < m->n_ids; i++) {
		free(m->ids[i].id);
		identity_free(&m->ids[i].identity);
	}
	free(m->ids);
	m->ids = NULL;
	m->n_ids = m->cap_ids = 0;
}

static int ids_add(const struct nsguard_record *rec, void *data)
{
	struct monitor *m = data;
	struct idmap *n;

	if (m->n_ids == m->cap_ids) {
		n = realloc(m->ids, (m->cap_ids * 2 + 8) * sizeof(*n));
		if (!n)
			return -ENOMEM;
		m->ids = n;
		m->cap_ids = m->cap_ids * 2 + 8;
	}
	m->ids[m->n_ids].cgroup_id = rec->cgroup_id;
	m->ids[m->n_ids].retired = false;
	m->ids[m->n_ids].id = strdup(rec->id);
	if (!m->ids[m->n_ids].id)
		return -ENOMEM;
	if (identity_copy(&m->ids[m->n_ids].identity, &rec->identity) < 0) {
		free(m->ids[m->n_ids].id);
		return -ENOMEM;
	}
	m->n_ids++;
	return 0;
}

static const struct idmap *ids_lookup(struct monitor *m, __u64 cgroup_id)
{
	time_t now = time(NULL);

	for (size_t i = 0; i < m->n_ids; i++) {
		struct nsguard_record rec = { 0 };

		if (m->ids[i].cgroup_id != cgroup_id)
			continue;
		/* A retired name holds only while no live record has the cgroup. */
		if (!m->ids[i].retired || record_read_cgroup(NSGUARD_RECORD_DIR, cgroup_id, &rec) < 0)
			return &m->ids[i];
		record_free(&rec);
		nsg_clear_error();
		m->last_miss = 0; /* reload now */
		break;
	}
	/* A container started after us: reload, but not once per event. */
	if (cgroup_id == m->last_miss && now - m->last_miss_at < 2)
		return NULL;
	ids_free(m);
	if (record_foreach(NSGUARD_RECORD_DIR, ids_add, m) < 0)
		nsg_clear_error();
	for (size_t i = 0; i < m->n_ids; i++)
		if (m->ids[i].cgroup_id == cgroup_id)
			return &m->ids[i];
	/* A container gone since (poststop, gc): its retired record names it. */
	{
		struct nsguard_record rec = { 0 };
		int err = record_read_gone(NSGUARD_RECORD_DIR, cgroup_id, &rec);

		if (err == 0)
			err = ids_add(&rec, m);
		record_free(&rec);
		if (err == 0) {
			m->ids[m->n_ids - 1].retired = true;
			return &m->ids[m->n_ids - 1];
		}
	}
	m->last_miss = cgroup_id;
	m->last_miss_at = now;
	return NULL;
}

/* ts is CLOCK_BOOTTIME; print it as wall-clock UTC with milliseconds. */
static void format_time(__u64 ts_boot_ns, char *buf, size_t len)
{
	struct timespec real, boot;
	long long ns;
	time_t sec;
	struct tm tm;

	clock_gettime(CLOCK_REALTIME, &real);
	clock_gettime(CLOCK_BOOTTIME, &boot);
	ns = (long long)real.tv_sec * 1000000000LL + real.tv_nsec -
	     ((long long)boot.tv_sec * 1000000000LL + boot.tv_nsec - (long long)ts_boot_ns);
	sec = ns / 1000000000LL;
	gmtime_r(&sec, &tm);
	snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%03lldZ", tm.tm_year + 1900, tm.tm_mon + 1,
		 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (ns / 1000000LL) % 1000);
}

static const char *decision_name(__u32 d)
{
	return d == NSGUARD_DECISION_DENY ? "deny" : d == NSGUARD_DECISION_AUDIT ? "audit" : "allow";
}

static const char *reason_name(__u32 r)
{
	static const char *const names[] = {
		[NSGUARD_REASON_MODE] = "mode",
		[NSGUARD_REASON_NO_POLICY] = "no-policy",
		[NSGUARD_REASON_DEPTH] = "depth",
		[NSGUARD_REASON_COUNT] = "count",
	};

	return r < ARRAY_SIZE(names) && names[r] ? names[r] : "unknown";
}

/* 1: the keys of nsguard(8), MONITOR; schema and node added (#31). */
#define NSGUARD_EVENT_SCHEMA 1

/* This host's name (uname), which a collector of many nodes' events needs. */
static const char *node_name(void)
{
	static struct utsname u;
	static bool done;

	if (!done && uname(&u) < 0)
		u.nodename[0] = '\0';
	done = true;
	return u.nodename;
}

/* The event, named from its container's record: what every reader prints. */
static struct jv *event_json(struct monitor *m, const struct nsguard_event *e)
{
	char time[80], comm[NSGUARD_COMM_LEN * 4 + 1], numerr[16];
	const struct idmap *c = ids_lookup(m, e->cgroup_id);
	const char *errname = NULL;
	struct jv *o = jv_new_object();
	size_t i;

	if (!o)
		return NULL;
	format_time(e->ts_boot_ns, time, sizeof(time));
	/* comm is chosen by the container: never let it forge fields or lines. */
	for (i = 0; i < NSGUARD_COMM_LEN && e->comm[i]; i++)
		comm[i] = (e->comm[i] > ' ' && e->comm[i] < 0x7f && e->comm[i] != '=') ? e->comm[i] : '?';
	comm[i] = '\0';
	if (e->decision == NSGUARD_DECISION_DENY) {
		errname = policy_errno_name(e->err);
		if (!errname) {
			snprintf(numerr, sizeof(numerr), "%u", e->err);
			errname = numerr;
		}
	}
	/* The event format's version: a key's meaning never changes within one. */
	jv_add_number(o, "schema", NSGUARD_EVENT_SCHEMA);
	jv_add_string(o, "node", node_name());
	jv_add_string(o, "time", time);
	json_add_string_or_null(o, "id", c ? c->id : NULL);
	for (int f = 0; f < IDENT_COUNT; f++)
		json_add_string_or_null(o, identity_name(f), c ? c->identity.v[f] : NULL);
	json_add_u64(o, "cgroup_id", e->cgroup_id);
	json_add_u64(o, "task_cgroup_id", e->task_cgroup_id);
	jv_add_number(o, "pid", e->pid);
	jv_add_number(o, "tid", e->tid);
	jv_add_string(o, "comm", comm);
	jv_add_number(o, "uid", e->uid);
	jv_add_number(o, "gid", e->gid);
	jv_add_number(o, "level", e->level);
	jv_add_number(o, "depth", e->depth);
	jv_add_string(o, "decision", decision_name(e->decision));
	jv_add_string(o, "reason", reason_name(e->reason));
	jv_add_string(o, "mode", policy_mode_name(e->mode));
	json_add_string_or_null(o, "errno", errname);
	return o;
}

static const char *str_of(const struct jv *o, const char *key)
{
	const struct jv *v = jv_get(o, key);

	return jv_is_string(v) ? v->str : NULL;
}

static double num_of(const struct jv *o, const char *key)
{
	const struct jv *v = jv_get(o, key);

	return jv_is_number(v) ? v->num : 0;
}

/* Whether an event passes the filters (an unnamed one matches none). */
static bool wanted(const struct monitor *m, const struct jv *o)
{
	const char *const want[] = { m->want_id, m->want_pod, m->want_namespace };
	const char *const have[] = { str_of(o, "id"), str_of(o, identity_name(IDENT_POD)),
				     str_of(o, identity_name(IDENT_NAMESPACE)) };

	for (size_t i = 0; i < ARRAY_SIZE(want); i++)
		if (want[i] && (!have[i] || strcmp(want[i], have[i]) != 0))
			return false;
	return true;
}

/* Print one event, as JSON or as the human line, if the filters want it. */
static void emit(struct monitor *m, struct jv *o)
{
	cleanup_free char *text = NULL;

	if (!wanted(m, o))
		return; /* consumed, not printed, not counted */
	if (m->json) {
		text = jv_format(o);
		if (text)
			printf("%s\n", text);
	} else {
		printf("%s %s id=%s", str_of(o, "time") ?: "?", str_of(o, "decision") ?: "?",
		       str_of(o, "id") ?: "-");
		/* Only what the record has: lines of containers outside a pod stay as they were. */
		for (int f = 0; f < IDENT_COUNT; f++)
			if (str_of(o, identity_name(f)))
				printf(" %s=%s", identity_name(f), str_of(o, identity_name(f)));
		printf(" cgroup=%s pid=%.0f tid=%.0f comm=%s uid=%.0f gid=%.0f level=%.0f depth=%.0f "
		       "reason=%s errno=%s\n",
		       str_of(o, "cgroup_id") ?: "?", num_of(o, "pid"), num_of(o, "tid"),
		       str_of(o, "comm") ?: "?", num_of(o, "uid"), num_of(o, "gid"),
		       num_of(o, "level"), num_of(o, "depth"), str_of(o, "reason") ?: "?",
		       str_of(o, "errno") ?: "-");
	}
	fflush(stdout);
	m->seen++;
}

static void emit_dropped(struct monitor *m, unsigned long long n)
{
	if (m->json)
		printf("{\"dropped\":\"%llu\"}\n", n); /* 64-bit: a string, as elsewhere */
	else
		printf("dropped %llu events\n", n);
	fflush(stdout);
}

static int on_event(void *ctx, void *data, size_t size)
{
	struct monitor *m = ctx;
	cleanup_jv struct jv *o = NULL;

	if (size < sizeof(struct nsguard_event))
		return 0;
	if (m->count && m->seen >= m->count)
		return -ECANCELED;
	o = event_json(m, data);
	if (!o)
		return -ENOMEM;
	/* Every event to the log, for the other readers, whatever our filters. */
	if (m->logging && evlog_append(&m->log, o) < 0) {
		nsg_warn("warning: monitor: %s; the other readers miss events", nsg_last_error());
		nsg_clear_error();
	}
	emit(m, o);
	/* Stop consuming: events past --count stay for the next reader. */
	return m->count && m->seen >= m->count ? -ECANCELED : 0;
}

static void report_drops(struct monitor *m, struct guard *g, __u64 *last)
{
	struct nsguard_stats st;

	if (guard_read_stats(g, &st) < 0) {
		nsg_clear_error();
		return;
	}
	if (st.events_dropped > *last) {
		/* The other readers hear of it too. */
		if (m->logging) {
			cleanup_jv struct jv *o = jv_new_object();

			if (!o || !json_add_u64(o, "dropped", st.events_dropped - *last) ||
			    evlog_append(&m->log, o) < 0)
				nsg_clear_error();
		}
		emit_dropped(m, st.events_dropped - *last);
	}
	*last = st.events_dropped;
}

/*
 * nsguard upgrade swaps the pin directory: the ring buffer being read is
 * then written by nobody.  Compared by the pin's inode (0: none).
 */
static ino_t events_pin(void)
{
	struct stat st;

	return stat(NSGUARD_PIN_EVENTS, &st) == 0 ? st.st_ino : 0;
}

static int monitor_opt(int opt, const char *arg, void *data)
{
	struct monitor *m = data;

	if (opt == 'j')
		m->json = true;
	else if (opt == 'i')
		m->want_id = arg;
	else if (opt == 'p')
		m->want_pod = arg;
	else if (opt == 'N')
		m->want_namespace = arg;
	else if (parse_u64(arg, &m->count) < 0 || m->count == 0)
		return cmd_usage("monitor: --count wants a positive number, got '%s'", arg);
	return 0;
}

/* The collector: the ring buffer, every event to the log and our output. */
static int collect(struct monitor *m)
{
	struct guard g = GUARD_INIT;
	struct ring_buffer *rb = NULL;
	struct nsguard_stats st = { 0 };
	__u64 dropped = 0;
	time_t beat = 0;
	ino_t pin;
	int err = 0;

	/* Before the open: a swap in between only costs a restart. */
	pin = events_pin();
	err = guard_open(&g, false);
	if (err)
		return nsg_fail_context(err, "monitor: nothing to watch yet (attach a container first)");
	/* Only drops that happen while we watch are reported. */
	if (guard_read_stats(&g, &st) == 0)
		dropped = st.events_dropped;
	nsg_clear_error();
	if (record_foreach(NSGUARD_RECORD_DIR, ids_add, m) < 0)
		nsg_clear_error();

	rb = ring_buffer__new(g.events_fd, on_event, m, NULL);
	if (!rb) {
		err = nsg_fail(errno, "monitor: cannot open the ring buffer %s: %s", NSGUARD_PIN_EVENTS,
			       strerror(errno));
		goto out;
	}
	while (!stop && !(m->count && m->seen >= m->count)) {
		time_t now = time(NULL);

		/* Followers tell a live collector by this, events or none. */
		if (now != beat) {
			evlog_heartbeat(&m->log);
			beat = now;
		}
		err = ring_buffer__poll(rb, 250);
		if (err == -EINTR || err == -ECANCELED) {
			err = 0;
			continue;
		}
		if (err < 0) {
			nsg_fail(-err, "monitor: reading the ring buffer: %s", strerror(-err));
			break;
		}
		err = 0;
		report_drops(m, &g, &dropped);
		if (events_pin() != pin) {
			/* What the old buffer still holds, then a failure: restart. */
			ring_buffer__consume(rb);
			err = nsg_fail(ESTALE, "monitor: %s was replaced (nsguard upgrade); start the monitor "
					       "again to read the new one",
				       NSGUARD_PIN_EVENTS);
			break;
		}
	}
out:
	ring_buffer__free(rb);
	guard_close(&g);
	return err;
}

static int on_line(struct jv *o, unsigned long long lost, void *data)
{
	struct monitor *m = data;

	if (lost)
		emit_dropped(m, lost);
	if (!o)
		return 0;
	if (jv_get(o, "dropped")) {
		const char *n = str_of(o, "dropped");
		unsigned long long v = 0;

		if (n && parse_u64(n, &v) == 0 && v)
			emit_dropped(m, v);
		return 0;
	}
	jv_remove(o, "seq");
	emit(m, o);
	return m->count && m->seen >= m->count ? 1 : 0;
}

/*
 * A follower: the collector's log from its end, until --count, a signal,
 * or the collector's lock coming free (then we collect: 1).  A lock held
 * by something that writes no log (anything that can open the file can
 * hold it) is said once a stall lasts EVLOG_IDLE_SECS, with its holder;
 * the follower goes on trying, so it collects the moment the lock comes
 * free and the ring buffer's backlog is not lost (exiting would not help:
 * a restarted monitor finds the same holder).
 */
static int follow(struct monitor *m)
{
	struct timespec since, now;
	bool open = false, warned = false;
	int err = 0, n = 0;
	char who[1024];

	clock_gettime(CLOCK_MONOTONIC, &since);

	while (!stop && !(m->count && m->seen >= m->count)) {
		if (!open) {
			err = evlog_follow_open(&m->log, false);
			if (err < 0 && err != -ENOENT)
				return err;
			open = err == 0;
		}
		if (open) {
			err = evlog_follow_read(&m->log, on_line, m);
			if (err < 0)
				return err;
		}
		/* Every second: is the collector still there? */
		if (++n % 10 == 0) {
			/* Just read to the end: the last collector's lines are ours. */
			err = evlog_try_collect(&m->log);
			if (err == 1 && warned)
				nsg_warn("monitor: %s came free: collecting now", m->log.lock);
			if (err)
				return err;
			clock_gettime(CLOCK_MONOTONIC, &now);
			if (!evlog_collector_idle(&m->log, EVLOG_IDLE_SECS, who, sizeof(who))) {
				warned = false;
			} else if (!warned && now.tv_sec - since.tv_sec >= EVLOG_IDLE_SECS) {
				nsg_warn("warning: monitor: %s is held by %s, and nothing has written %s "
					 "for %d s: no monitor collects, events wait in the ring buffer "
					 "and are lost once it fills; following, and collecting as soon "
					 "as the lock comes free",
					 m->log.lock, who, m->log.path, EVLOG_IDLE_SECS);
				warned = true;
			}
		}
		usleep(100 * 1000);
	}
	return 0;
}

int cmd_monitor(struct cmd_ctx *ctx, int argc, char **argv)
{
	static const struct cmd_option opts[] = {
		{ .name = "json", .val = 'j', .help = "one JSON object per line" },
		{ .name = "count", .arg = "N", .val = 'n', .help = "stop after N printed events" },
		{ .name = "id", .arg = "ID", .val = 'i', .help = "only the events of this container" },
		{ .name = "pod", .arg = "NAME", .val = 'p', .help = "only the events of this pod" },
		{ .name = "namespace", .arg = "NS", .val = 'N',
		  .help = "only the events of this Kubernetes namespace" },
		{},
	};
	struct monitor m = { .log = EVLOG_INIT };
	struct sigaction sa = { .sa_handler = on_signal };
	int err = 0;

	err = cmd_options("monitor", argc, argv, opts, monitor_opt, &m) ?:
	      cmd_require_privileges();
	if (err)
		return err;
	/* No SA_RESTART: the signal must interrupt the poll. */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	err = evlog_try_collect(&m.log);
	if (err == 0)
		err = follow(&m);
	if (err == 1) {
		m.logging = true;
		err = collect(&m);
	}
	evlog_close(&m.log);
	ids_free(&m);
	return err;
}
