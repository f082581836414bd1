/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * container.c against a fake world (struct container_env): cgroups, init
 * processes and pinned links are tables here, records are real files in a
 * temporary directory.  Guard, claims, id reuse, poststop, detach and gc.
 */
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "container.h"
#include "guard.h" /* GUARD_LINK_* */
#include "learn.h"
#include "record.h"
#include "test.h"
#include "util.h"

#define MAX 8

static struct world {
	struct {
		const char *path;
		__u64 id;
		bool populated;
	} cg[MAX]; /* path NULL: gone */
	struct {
		pid_t pid;
		__u64 start;
	} proc[MAX];
	__u64 link[MAX]; /* 0: free slot */
	bool dead[MAX]; /* link[i] is pinned but detached (LINK_DETACH under nsguard) */
	int state_err; /* link_state fails with it */
	int attaches; /* attach calls */
	struct nsguard_policy pol[MAX]; /* the policy written with link[i] */
	struct nsguard_usage learned[MAX]; /* its learn-mode usage */
	int attach_err; /* the next attach fails with it */
	bool break_records; /* attach puts a file where the records go */
	char tmp[64], recdir[128], learndir[128];
	int lock_rd; /* read end of the fake lock: EOF once it is released */
	bool no_learned; /* the learned map had no room for the entry */
	int walks; /* cgroups_below calls */
} w;

static int find_cg_path(const char *path)
{
	for (int i = 0; i < MAX; i++)
		if (w.cg[i].path && strcmp(w.cg[i].path, path) == 0)
			return i;
	return -1;
}

static int find_link(__u64 id)
{
	for (int i = 0; i < MAX; i++)
		if (id && w.link[i] == id)
			return i;
	return -1;
}

/* The fake lock is a pipe: the caller holds the write end until it closes it. */
static int f_lock(int *fd)
{
	int p[2];

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	if (w.lock_rd > 0)
		close(w.lock_rd);
	w.lock_rd = p[0];
	*fd = p[1];
	return 0;
}

/* Every change to links happens under the lock. */
static bool locked(void)
{
	struct pollfd pfd = { .fd = w.lock_rd, .events = POLLIN };

	return w.lock_rd > 0 && poll(&pfd, 1, 0) == 0;
}

static int f_cgroup_id(const char *path, __u64 *id)
{
	int i = find_cg_path(path);

	if (i < 0)
		return nsg_fail(ENOENT, "cgroup %s does not exist", path);
	*id = w.cg[i].id;
	return 0;
}

static int f_cgroup_open(const char *path, __u64 *id)
{
	int err = f_cgroup_id(path, id);

	return err ?: open("/dev/null", O_RDONLY | O_CLOEXEC);
}

static bool f_cgroup_alive(__u64 id)
{
	for (int i = 0; i < MAX; i++)
		if (w.cg[i].path && w.cg[i].id == id)
			return true;
	return false;
}

static int f_populated(const char *path, bool *populated)
{
	int i = find_cg_path(path);

	if (i < 0)
		return -ENOENT;
	*populated = w.cg[i].populated;
	return 0;
}

static int f_start_time(pid_t pid, __u64 *start)
{
	for (int i = 0; i < MAX; i++) {
		if (w.proc[i].pid == pid) {
			*start = w.proc[i].start;
			return 0;
		}
	}
	return -ESRCH;
}

static bool f_link_pinned(__u64 id)
{
	return find_link(id) >= 0;
}

static int f_link_state(__u64 id)
{
	int i = find_link(id);

	if (w.state_err)
		return nsg_fail(-w.state_err, "fake world: link state: %s", strerror(-w.state_err));
	if (i < 0)
		return GUARD_LINK_NONE;
	return w.dead[i] ? GUARD_LINK_DETACHED : GUARD_LINK_ATTACHED;
}

static int f_cgroup_open_id(__u64 id)
{
	if (!f_cgroup_alive(id))
		return nsg_fail(ENOENT, "fake world: no cgroup %llu", (unsigned long long)id);
	return open("/dev/null", O_RDONLY | O_CLOEXEC);
}

/* As guard_attach: a dead link is made anew, its usage kept. */
static int f_attach(int fd, __u64 id, const struct nsguard_policy *pol, char **pin)
{
	int i = find_link(id);

	w.attaches++;
	if (fd < 0)
		return nsg_fail(EBADF, "fake world: attach without a cgroup fd");
	if (!locked())
		return nsg_fail(EDEADLK, "fake world: attach without the lock");
	if (w.attach_err)
		return nsg_fail(-w.attach_err, "attach: %s", strerror(-w.attach_err));
	for (int j = 0; i < 0 && j < MAX; j++)
		if (!w.link[j])
			i = j;
	if (i < 0)
		return nsg_fail(ENOSPC, "fake world: no link slot");
	w.link[i] = id;
	w.dead[i] = false;
	w.pol[i] = *pol;
	if (w.break_records && (rmdir(w.recdir) < 0 ||
				close(open(w.recdir, O_CREAT | O_WRONLY | O_CLOEXEC, 0600)) < 0))
		return nsg_fail(EIO, "fake world: cannot put a file at %s", w.recdir);
	if (pin && asprintf(pin, "/fake/links/%llu", (unsigned long long)id) < 0)
		return -ENOMEM;
	return 0;
}

static int f_read_learned(__u64 id, struct nsguard_usage *u)
{
	int i = find_link(id);

	if (i < 0 || w.no_learned)
		return nsg_fail(ENOENT, "fake world: no learned usage for %llu", (unsigned long long)id);
	*u = w.learned[i];
	return 0;
}

static int f_detach(__u64 id)
{
	int i = find_link(id);

	if (!locked())
		return nsg_fail(EDEADLK, "fake world: detach without the lock");
	if (i >= 0) {
		w.link[i] = 0;
		w.dead[i] = false;
	}
	return 0;
}

static int f_links(__u64 **ids, size_t *n)
{
	*n = 0;
	*ids = calloc(MAX, sizeof(**ids));
	if (!*ids)
		return -ENOMEM;
	for (int i = 0; i < MAX; i++)
		if (w.link[i])
			(*ids)[(*n)++] = w.link[i];
	return 0;
}

/* Every cgroup strictly below path ("/a/c" below "/a", not "/ab"). */
static int f_cgroups_below(const char *path, int (*fn)(__u64 id, void *data), void *data)
{
	size_t n = strlen(path);
	int err = 0;

	w.walks++;
	for (int i = 0; i < MAX && !err; i++)
		if (w.cg[i].path && strncmp(w.cg[i].path, path, n) == 0 &&
		    w.cg[i].path[n] == '/')
			err = fn(w.cg[i].id, data);
	return err;
}

/* Set-up of the world, not nsguard's doing: no lock needed. */
static void pin_link(__u64 id)
{
	for (int j = 0; j < MAX && find_link(id) < 0; j++)
		if (!w.link[j])
			w.link[j] = id;
}

static void unpin_link(__u64 id)
{
	int i = find_link(id);

	if (i >= 0)
		w.link[i] = 0;
}

/* LINK_DETACH from outside: the pin stays, the link guards nothing. */
static void kill_link(__u64 id)
{
	w.dead[find_link(id)] = true;
}

static struct container_env env = {
	.record_dir = w.recdir,
	.lock = f_lock,
	.cgroup_open = f_cgroup_open,
	.cgroup_id = f_cgroup_id,
	.cgroup_alive = f_cgroup_alive,
	.cgroup_populated = f_populated,
	.start_time = f_start_time,
	.link_pinned = f_link_pinned,
	.link_state = f_link_state,
	.cgroup_open_id = f_cgroup_open_id,
	.attach = f_attach,
	.read_learned = f_read_learned,
	.detach = f_detach,
	.links = f_links,
	.cgroups_below = f_cgroups_below,
};

static void cg(const char *path, __u64 id)
{
	int i = find_cg_path(path);

	for (int j = 0; i < 0 && j < MAX; j++)
		if (!w.cg[j].path)
			i = j;
	w.cg[i].path = path;
	w.cg[i].id = id;
	w.cg[i].populated = false;
}

static void cg_gone(const char *path)
{
	w.cg[find_cg_path(path)].path = NULL;
}

static void proc(int slot, pid_t pid, __u64 start)
{
	w.proc[slot].pid = pid;
	w.proc[slot].start = start;
}

static void world_reset(void)
{
	char cmd[256];

	if (w.lock_rd > 0)
		close(w.lock_rd);
	if (w.tmp[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf -- '%s'", w.tmp);
		if (system(cmd) != 0)
			fprintf(stderr, "# could not remove %s\n", w.tmp);
	}
	memset(&w, 0, sizeof(w));
	snprintf(w.tmp, sizeof(w.tmp), "/tmp/nsguard-test-ct.XXXXXX");
	if (!mkdtemp(w.tmp))
		abort();
	snprintf(w.recdir, sizeof(w.recdir), "%s/containers", w.tmp);
	snprintf(w.learndir, sizeof(w.learndir), "%s/learn", w.tmp);
	nsg_clear_error();
}

static const struct nsguard_policy allow2 = { .mode = NSGUARD_MODE_ALLOW, .max_depth = 2 };

/* Guard id on path as the hook (pid > 0) or nsguard attach (pid 0). */
static int guard(const char *id, pid_t pid, const char *path, bool *refused)
{
	struct nsguard_policy pol = allow2;
	bool r = false;

	nsg_clear_error();
	struct container_spec spec = { .id = id, .pid = pid, .cgroup_path = path,
				       .learn_dir = w.learndir };

	return container_guard(&env, &spec, &pol, refused ?: &r);
}

static bool has_record(const char *id)
{
	struct nsguard_record rec;
	int err = record_read(w.recdir, id, &rec);

	record_free(&rec);
	nsg_clear_error();
	return err == 0;
}

static void t_guard_records_and_links(void)
{
	struct nsguard_record rec = { 0 };
	int i;

	cg("/a", 10);
	proc(0, 100, 5);
	ASSERT_OK(guard("web", 100, "/a", NULL));
	i = find_link(10);
	ASSERT_TRUE(i >= 0);
	ASSERT_EQ(NSGUARD_MODE_ALLOW, w.pol[i].mode);
	ASSERT_EQ_U64(10, w.pol[i].cgroup_id);
	ASSERT_OK(record_read(w.recdir, "web", &rec));
	ASSERT_STREQ("/a", rec.cgroup_path);
	ASSERT_EQ_U64(10, rec.cgroup_id);
	ASSERT_EQ(100, rec.pid);
	ASSERT_EQ_U64(5, rec.start_time);
	ASSERT_STREQ("/fake/links/10", rec.link_pin);
	ASSERT_EQ(2, rec.policy.max_depth);
	record_free(&rec);
}

static void t_init_gone_before_attach(void)
{
	cg("/a", 10);
	ASSERT_ERR(-ESRCH, guard("web", 100, "/a", NULL));
	ASSERT_MSG("start time of pid 100");
	ASSERT_TRUE(!f_link_pinned(10));
	ASSERT_TRUE(!has_record("web"));
}

static void t_same_cgroup_other_id(void)
{
	bool refused = false;

	cg("/a", 10);
	ASSERT_OK(guard("web", 0, "/a", NULL));
	ASSERT_ERR(-EBUSY, guard("other", 0, "/a", &refused));
	ASSERT_MSG("already guarded for container web");
	ASSERT_TRUE(refused);
	ASSERT_TRUE(!has_record("other"));
}

static void t_id_reuse_live(void)
{
	struct nsguard_record rec = { 0 };
	bool refused = false;

	cg("/a", 10);
	cg("/b", 11);
	proc(0, 100, 5);
	proc(1, 101, 6);
	ASSERT_OK(guard("web", 100, "/a", NULL));
	ASSERT_ERR(-EBUSY, guard("web", 101, "/b", &refused));
	ASSERT_MSG("already guarding cgroup /a");
	ASSERT_TRUE(refused);
	ASSERT_TRUE(f_link_pinned(10));
	ASSERT_TRUE(!f_link_pinned(11));
	ASSERT_OK(record_read(w.recdir, "web", &rec));
	ASSERT_EQ_U64(10, rec.cgroup_id);
	record_free(&rec);
}

/* The same container's hook again rewrites; another container with its id
 * in the same (shared) cgroup does not, while the first one's init runs. */
static void t_same_id_same_cgroup(void)
{
	bool refused = false;

	cg("/a", 10);
	proc(0, 100, 5);
	proc(1, 101, 6);
	ASSERT_OK(guard("web", 100, "/a", NULL));
	ASSERT_OK(guard("web", 100, "/a", NULL));
	ASSERT_ERR(-EBUSY, guard("web", 101, "/a", &refused));
	ASSERT_MSG("already guarding cgroup /a for a running container (pid 100)");
	ASSERT_TRUE(refused);
	/* Once it has ended (pid gone, or another process now), it may. */
	proc(0, 100, 7);
	ASSERT_OK(guard("web", 101, "/a", NULL));
}

static void t_id_reuse_gone_moves(void)
{
	struct nsguard_record rec = { 0 };

	cg("/a", 10);
	cg("/b", 11);
	proc(0, 100, 5);
	proc(1, 101, 6);
	ASSERT_OK(guard("web", 100, "/a", NULL));
	cg_gone("/a");
	ASSERT_OK(guard("web", 101, "/b", NULL));
	ASSERT_TRUE(!f_link_pinned(10));
	ASSERT_TRUE(f_link_pinned(11));
	ASSERT_OK(record_read(w.recdir, "web", &rec));
	ASSERT_STREQ("/b", rec.cgroup_path);
	ASSERT_EQ(101, rec.pid);
	record_free(&rec);
}

static void t_above_another(void)
{
	bool refused = false;

	cg("/a", 10);
	cg("/a/c", 12);
	proc(0, 100, 5);
	proc(1, 101, 6);
	ASSERT_OK(guard("inner", 100, "/a/c", NULL));
	ASSERT_ERR(-EBUSY, guard("outer", 101, "/a", &refused));
	ASSERT_MSG("is above cgroup /a/c, which is guarded for container inner");
	ASSERT_TRUE(refused);
	ASSERT_TRUE(!f_link_pinned(10));
	/* "/a/c" is not below "/a/" + "c2", nor "/a/cd" below "/a/c". */
	cg("/a/c2", 13);
	cg("/a/cd", 14);
	proc(2, 102, 7);
	proc(3, 103, 8);
	ASSERT_OK(guard("sibling", 102, "/a/c2", NULL));
	ASSERT_OK(guard("prefix", 103, "/a/cd", NULL));
	/* The admin may nest guards (nsguard attach, pid 0). */
	ASSERT_OK(guard("admin", 0, "/a", NULL));
}

static void t_above_stale_record(void)
{
	cg("/a", 10);
	cg("/a/c", 12);
	proc(0, 100, 5);
	proc(1, 101, 6);
	ASSERT_OK(guard("inner", 100, "/a/c", NULL));
	/* A record whose link is gone, or whose cgroup is, holds no place. */
	unpin_link(12);
	ASSERT_OK(guard("outer", 101, "/a", NULL));
}

static void t_below_another(void)
{
	bool refused = false;

	cg("/a", 10);
	cg("/a/c", 12);
	cg("/b", 20);
	cg("/b/c", 22);
	proc(0, 100, 5);
	proc(1, 101, 6);
	ASSERT_OK(guard("outer", 100, "/a", NULL));
	ASSERT_ERR(-EBUSY, guard("inner", 101, "/a/c", &refused));
	ASSERT_MSG("is below cgroup /a, which is guarded for container outer");
	ASSERT_TRUE(refused);
	/* Below an admin's guard (no pid) a container may start. */
	ASSERT_OK(guard("admin", 0, "/b", NULL));
	ASSERT_OK(guard("inner", 101, "/b/c", NULL));
}

static void t_record_write_fails(void)
{
	bool refused = false;

	cg("/a", 10);
	ASSERT_OK(mkdir(w.recdir, 0700) < 0 ? -errno : 0);
	/* Between attach and record, the record directory turns into a file. */
	w.break_records = true;
	ASSERT_ERR(-ENOTDIR, guard("web", 0, "/a", &refused));
	ASSERT_MSG("writing the record of container web");
	ASSERT_TRUE(!refused);
	/* Without a record nothing would ever detach a new link. */
	ASSERT_TRUE(!f_link_pinned(10));
}

static void t_attach_fails(void)
{
	bool refused = true;

	cg("/a", 10);
	w.attach_err = -EIO;
	ASSERT_ERR(-EIO, guard("web", 0, "/a", &refused));
	ASSERT_TRUE(!refused); /* a failure fail-mode open may open */
	ASSERT_TRUE(!has_record("web"));
	/* An LSM refused bpf(): nsguard's bpf() guard, to a hook in a guarded cgroup. */
	w.attach_err = -EPERM;
	ASSERT_ERR(-EPERM, guard("web", 0, "/a", &refused));
	ASSERT_TRUE(refused);
	ASSERT_TRUE(!has_record("web"));
	ASSERT_TRUE(!f_link_pinned(10));
	/* Pins this hook may not move (an older build's route): never opened. */
	w.attach_err = -ESTALE;
	ASSERT_ERR(-ESTALE, guard("web", 0, "/a", &refused));
	ASSERT_TRUE(refused);
}

static void t_unguard_init_running(void)
{
	cg("/a", 10);
	proc(0, 100, 5);
	ASSERT_OK(guard("web", 100, "/a", NULL));
	ASSERT_ERR(-EBUSY, container_unguard(&env, "web", false));
	ASSERT_MSG("init (pid 100) is still running");
	ASSERT_TRUE(f_link_pinned(10));
	ASSERT_TRUE(has_record("web"));
	/* The same pid, another process (start time): the instance is over. */
	proc(0, 100, 6);
	ASSERT_OK(container_unguard(&env, "web", false));
	ASSERT_TRUE(!f_link_pinned(10));
	ASSERT_TRUE(!has_record("web"));
}

static void t_unguard_populated(void)
{
	cg("/a", 10);
	proc(0, 100, 5);
	ASSERT_OK(guard("web", 100, "/a", NULL));
	proc(0, 0, 0);
	w.cg[find_cg_path("/a")].populated = true;
	ASSERT_ERR(-EBUSY, container_unguard(&env, "web", false));
	ASSERT_MSG("still holds processes");
	ASSERT_TRUE(f_link_pinned(10));
	ASSERT_OK(container_unguard(&env, "web", true));
	ASSERT_TRUE(!f_link_pinned(10));
	ASSERT_TRUE(!has_record("web"));
}

static void t_unguard_shared(void)
{
	struct container_spec spec = { .id = "web", .pid = 100, .cgroup_path = "/a", .shared = true };
	struct nsguard_policy pol = allow2;
	bool refused = false;

	cg("/a", 10);
	proc(0, 100, 5);
	ASSERT_OK(container_guard(&env, &spec, &pol, &refused));
	proc(0, 0, 0);
	w.cg[find_cg_path("/a")].populated = true;
	ASSERT_OK(container_unguard(&env, "web", false));
	ASSERT_TRUE(!f_link_pinned(10));
}

/* The spec's pod identity goes into the record. */
static void t_guard_identity(void)
{
	struct pod_identity ident = { .v = { (char *)"web-0", (char *)"shop", NULL } };
	struct container_spec spec = { .id = "web", .pid = 100, .cgroup_path = "/a",
				       .identity = &ident };
	struct nsguard_policy pol = allow2;
	struct nsguard_record rec = { 0 };
	bool refused = false;

	cg("/a", 10);
	proc(0, 100, 5);
	ASSERT_OK(container_guard(&env, &spec, &pol, &refused));
	ASSERT_OK(record_read(w.recdir, "web", &rec));
	ASSERT_STREQ("web-0", rec.identity.v[IDENT_POD]);
	ASSERT_STREQ("shop", rec.identity.v[IDENT_NAMESPACE]);
	ASSERT_TRUE(rec.identity.v[IDENT_CONTAINER] == NULL);
	record_free(&rec);
}

static void t_unguard_unknown(void)
{
	ASSERT_ERR(-ENOENT, container_unguard(&env, "nope", false));
}

static void t_unguard_cgroup(void)
{
	cleanup_free char *id1 = NULL, *id2 = NULL;
	char *id4 = NULL;

	cg("/a", 10);
	cg("/b", 11);
	cg("/c", 12);
	ASSERT_OK(guard("web", 0, "/a", NULL));
	ASSERT_OK(guard("db", 0, "/b", NULL));
	/* By the cgroup's id. */
	ASSERT_OK(container_unguard_cgroup(&env, "/a", &id1));
	ASSERT_STREQ("web", id1);
	ASSERT_TRUE(!f_link_pinned(10) && !has_record("web"));
	/* The cgroup is gone: by the path its record names. */
	cg_gone("/b");
	ASSERT_OK(container_unguard_cgroup(&env, "/b", &id2));
	ASSERT_STREQ("db", id2);
	ASSERT_TRUE(!f_link_pinned(11) && !has_record("db"));
	/* A link without a record (an attach that failed to record). */
	pin_link(12);
	ASSERT_OK(container_unguard_cgroup(&env, "/c", &id4));
	ASSERT_TRUE(id4 == NULL);
	ASSERT_TRUE(!f_link_pinned(12));
	ASSERT_ERR(-ENOENT, container_unguard_cgroup(&env, "/c", &id4));
	ASSERT_MSG("cgroup /c is not guarded");
	ASSERT_ERR(-ENOENT, container_unguard_cgroup(&env, "/gone", &id4));
	ASSERT_MSG("does not exist and no record names it");
}

static void t_gc(void)
{
	cleanup_free char *out = NULL;
	size_t len = 0;
	FILE *f;

	cg("/live", 10);
	cg("/gone", 11);
	cg("/again", 12);
	cg("/bare", 51);
	ASSERT_OK(guard("live", 0, "/live", NULL));
	ASSERT_OK(guard("gone", 0, "/gone", NULL));
	ASSERT_OK(guard("again", 0, "/again", NULL));
	cg_gone("/gone");
	cg("/again", 13); /* re-created: same path, new id */
	pin_link(50); /* no record, cgroup gone */
	pin_link(51); /* no record, cgroup alive */
	f = open_memstream(&out, &len);
	ASSERT_TRUE(f != NULL);
	ASSERT_OK(container_gc(&env, container_gc_print, f));
	fclose(f);
	ASSERT_TRUE(has_record("live") && f_link_pinned(10));
	ASSERT_TRUE(!has_record("gone") && !f_link_pinned(11));
	ASSERT_TRUE(!has_record("again") && !f_link_pinned(12));
	ASSERT_TRUE(!f_link_pinned(50));
	ASSERT_TRUE(f_link_pinned(51));
	ASSERT_SUBSTR("removed container gone (cgroup /gone, id 11: gone)", out);
	ASSERT_SUBSTR("removed container again (cgroup /again, id 12: re-created)", out);
	ASSERT_SUBSTR("links/50 (no record, cgroup gone)", out);
	ASSERT_TRUE(!strstr(out, "live") && !strstr(out, "/51"));
}

/* gc attaches anew a live cgroup whose link was detached: the record's policy, or deny. */
static void t_gc_relinks_detached(void)
{
	cleanup_free char *out = NULL;
	struct nsguard_policy deny3 = { .mode = NSGUARD_MODE_DENY, .err = 28 };
	size_t len = 0;
	FILE *f;
	int i;

	cg("/live", 10);
	cg("/dead", 11);
	cg("/bare", 51);
	cg("/gonedead", 12);
	ASSERT_OK(guard("live", 0, "/live", NULL));
	ASSERT_OK(guard("dead", 0, "/dead", NULL));
	ASSERT_OK(guard("gonedead", 0, "/gonedead", NULL));
	/* What the record says is what goes back: make it differ from allow2. */
	w.pol[find_link(11)] = deny3;
	pin_link(51); /* no record, cgroup alive: a failed attach */
	w.pol[find_link(51)] = allow2;
	kill_link(11);
	kill_link(51);
	kill_link(12);
	cg_gone("/gonedead"); /* detached and gone: removed as ever */
	w.attaches = 0;
	f = open_memstream(&out, &len);
	ASSERT_TRUE(f != NULL);
	ASSERT_OK(container_gc(&env, container_gc_print, f));
	fclose(f);
	ASSERT_EQ(2, w.attaches);
	i = find_link(11);
	ASSERT_TRUE(i >= 0 && !w.dead[i] && has_record("dead"));
	/* The record's policy (allow2 was written by guard()), for its cgroup. */
	ASSERT_EQ(NSGUARD_MODE_ALLOW, w.pol[i].mode);
	ASSERT_EQ(2, w.pol[i].max_depth);
	ASSERT_EQ(11, w.pol[i].cgroup_id);
	i = find_link(51);
	ASSERT_TRUE(i >= 0 && !w.dead[i]);
	ASSERT_EQ(NSGUARD_MODE_NONE, w.pol[i].mode); /* no record: deny */
	ASSERT_TRUE(!f_link_pinned(12) && !has_record("gonedead"));
	ASSERT_SUBSTR("re-linked container dead (cgroup /dead, id 11: its link was detached)", out);
	ASSERT_SUBSTR("re-linked link /sys/fs/bpf/nsguard/links/51 (it was detached", out);
	ASSERT_SUBSTR("removed container gonedead (cgroup /gonedead, id 12: gone)", out);
	ASSERT_TRUE(!strstr(out, "live"));
	/* A second pass finds everything attached: nothing to do. */
	free(out);
	out = NULL;
	f = open_memstream(&out, &len);
	ASSERT_TRUE(f != NULL);
	ASSERT_OK(container_gc(&env, container_gc_print, f));
	fclose(f);
	ASSERT_STREQ("", out);
	ASSERT_EQ(2, w.attaches);
}

/* container_gc, its lines discarded. */
static int gc_quiet(void)
{
	cleanup_free char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	int err;

	if (!f)
		return -ENOMEM;
	err = container_gc(&env, container_gc_print, f);
	fclose(f);
	return err;
}

/* A re-link that fails, or a state that cannot be read, is loud: gc fails. */
static void t_gc_relink_fails(void)
{
	cg("/dead", 11);
	ASSERT_OK(guard("dead", 0, "/dead", NULL));
	kill_link(11);
	w.attach_err = -EIO;
	ASSERT_ERR(-EIO, gc_quiet());
	ASSERT_MSG("gc: some entries could not be removed");
	ASSERT_TRUE(has_record("dead") && w.dead[find_link(11)]);
	w.attach_err = 0;
	w.state_err = -EACCES;
	ASSERT_ERR(-EACCES, gc_quiet());
	ASSERT_TRUE(has_record("dead") && w.dead[find_link(11)]);
	w.state_err = 0;
	ASSERT_OK(gc_quiet());
	ASSERT_TRUE(!w.dead[find_link(11)]);
}

static bool indexed(__u64 cgid, const char *id)
{
	char a[256], b[256];
	struct stat sa, sb;

	snprintf(a, sizeof(a), "%s/by-cgroup-id/%llu", w.recdir, (unsigned long long)cgid);
	snprintf(b, sizeof(b), "%s/%s.json", w.recdir, id);
	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_ino == sb.st_ino;
}

static bool index_has(__u64 cgid)
{
	char a[256];

	snprintf(a, sizeof(a), "%s/by-cgroup-id/%llu", w.recdir, (unsigned long long)cgid);
	return access(a, F_OK) == 0;
}

/* Drop a record's index entry: as an older nsguard or a crash leaves it. */
static void unindex(__u64 cgid)
{
	char a[256];

	snprintf(a, sizeof(a), "%s/by-cgroup-id/%llu", w.recdir, (unsigned long long)cgid);
	ASSERT_TRUE(unlink(a) == 0);
}

/* The claims look records up by cgroup id: the index, or a scan when a link is pinned. */
static void t_index_lookups(void)
{
	struct nsguard_record ghost = { .id = "ghost", .cgroup_path = "/a", .cgroup_id = 10,
					.policy = allow2 };
	bool refused = false;

	cg("/a", 10);
	cg("/b", 11);
	proc(0, 100, 5);
	ASSERT_OK(guard("web", 100, "/b", NULL));
	ASSERT_TRUE(indexed(11, "web"));
	ASSERT_EQ(1, w.walks); /* this cgroup's subtree, once */
	/* A record the index lacks, with no link: no scan finds it (not guarded). */
	ASSERT_OK(record_write(w.recdir, &ghost));
	unindex(10);
	ASSERT_OK(guard("admin", 0, "/a", NULL));
	ASSERT_OK(container_unguard(&env, "admin", true));
	/* With a link pinned there, the lookup reads every record and refuses. */
	pin_link(10);
	ASSERT_ERR(-EBUSY, guard("admin", 0, "/a", &refused));
	ASSERT_MSG("already guarded for container ghost");
	ASSERT_TRUE(refused);
	unpin_link(10);
	/* The same for a container below an unindexed container's guard. */
	cg("/b/c", 12);
	proc(1, 101, 6);
	unindex(11);
	ASSERT_ERR(-EBUSY, guard("inner", 101, "/b/c", NULL));
	ASSERT_MSG("is below cgroup /b, which is guarded for container web");
	/* gc puts the entry back, and drops entries whose record is gone. */
	ASSERT_OK(record_remove(w.recdir, "ghost", 99));
	ASSERT_TRUE(index_has(10) == false);
	ASSERT_OK(container_gc(&env, container_gc_print, stderr));
	ASSERT_TRUE(indexed(11, "web"));
}

/* A moved guard (re-created container) leaves no entry for its old cgroup. */
static void t_index_move(void)
{
	struct nsguard_record rec = { 0 };

	cg("/a", 10);
	proc(0, 100, 5);
	ASSERT_OK(guard("web", 100, "/a", NULL));
	cg_gone("/a");
	cg("/a2", 11);
	proc(0, 101, 6);
	ASSERT_OK(guard("web", 101, "/a2", NULL));
	ASSERT_TRUE(indexed(11, "web"));
	ASSERT_TRUE(!index_has(10));
	ASSERT_EQ(-ENOENT, record_read_cgroup(w.recdir, 10, &rec));
	proc(0, 0, 0); /* its init exited: poststop */
	ASSERT_OK(container_unguard(&env, "web", false));
	ASSERT_TRUE(!index_has(11));
}

/* Guard id in learn mode; the program's usage: created, depths. */
static int guard_learn(const char *id, const char *path, __u64 cgid, __u32 created, __u64 depths)
{
	struct container_spec spec = { .id = id, .pid = 0, .cgroup_path = path,
				       .learn_dir = w.learndir };
	struct nsguard_policy pol = { .mode = NSGUARD_MODE_LEARN, .max_depth = 32,
				      .max_count = NSGUARD_COUNT_UNLIMITED };
	bool refused = false;
	int err;

	cg(path, cgid);
	err = container_guard(&env, &spec, &pol, &refused);
	if (!err) {
		w.learned[find_link(cgid)].created = created;
		w.learned[find_link(cgid)].depths = depths;
	}
	return err;
}

static char *suggestion(const char *id)
{
	char *text = NULL;

	nsg_clear_error();
	if (learn_read(w.learndir, id, &text) < 0)
		return NULL;
	return text;
}

static void t_learn_writes_suggestion(void)
{
	cleanup_free char *ci = NULL, *idle = NULL, *gone = NULL;
	struct nsguard_record rec = { 0 };
	FILE *f;
	char *out = NULL;
	size_t len = 0;

	/* Three namespaces with one more inside each: six, two levels deep. */
	ASSERT_OK(guard_learn("ci", "/ci", 10, 6, (1u << 1) | (1u << 2)));
	ASSERT_OK(record_read(w.recdir, "ci", &rec));
	ASSERT_STREQ(w.learndir, rec.learn_dir);
	record_free(&rec);
	ASSERT_OK(container_unguard(&env, "ci", false));
	ci = suggestion("ci");
	ASSERT_STREQ("{\"id\":\"ci\",\"cgroup_id\":10,\"created\":6,\"deepest\":2,\"annotations\":{"
		     "\"nsguard.io/userns\":\"allow\",\"nsguard.io/userns.max-depth\":\"2\","
		     "\"nsguard.io/userns.max-count\":\"6\"}}\n", ci);
	/* None created: deny. */
	ASSERT_OK(guard_learn("idle", "/idle", 11, 0, 0));
	ASSERT_OK(container_unguard(&env, "idle", false));
	idle = suggestion("idle");
	ASSERT_SUBSTR("\"annotations\":{\"nsguard.io/userns\":\"deny\"}", idle);
	/* gc of a learn container whose cgroup is gone writes it too. */
	ASSERT_OK(guard_learn("gone", "/gone", 12, 1, 1u << 1));
	cg_gone("/gone");
	f = open_memstream(&out, &len);
	ASSERT_TRUE(f != NULL);
	ASSERT_OK(container_gc(&env, container_gc_print, f));
	fclose(f);
	free(out);
	gone = suggestion("gone");
	ASSERT_SUBSTR("\"nsguard.io/userns.max-depth\":\"1\"", gone);
}

/*
 * A second container with the same id (another runtime root, a rerun) does
 * not overwrite the first one's suggestion: one file per instance, named by
 * its cgroup id, and learn_list lists both, newest first.
 */
static void t_learn_same_id_two_instances(void)
{
	struct learn_found *found = NULL;
	cleanup_free char *newest = NULL;
	size_t n = 0;

	ASSERT_OK(guard_learn("ci", "/ci", 10, 6, (1u << 1) | (1u << 2)));
	ASSERT_OK(container_unguard(&env, "ci", false));
	ASSERT_OK(guard_learn("ci", "/root2/ci", 20, 1, 1u << 1));
	ASSERT_OK(container_unguard(&env, "ci", false));
	ASSERT_OK(learn_list(w.learndir, "ci", &found, &n));
	ASSERT_EQ(2, n);
	ASSERT_OK(learn_load(w.learndir, &found[0]));
	ASSERT_OK(learn_load(w.learndir, &found[1]));
	/* Written later (or in the same tick, with the higher cgroup id). */
	ASSERT_EQ_U64(20, found[0].cgroup_id);
	ASSERT_STREQ("ci@20.json", found[0].name);
	ASSERT_SUBSTR("\"cgroup_id\":20,\"created\":1,\"deepest\":1,", found[0].text);
	ASSERT_SUBSTR("\"nsguard.io/userns.max-count\":\"1\"", found[0].text);
	ASSERT_EQ_U64(10, found[1].cgroup_id);
	ASSERT_SUBSTR("\"cgroup_id\":10,\"created\":6,\"deepest\":2,", found[1].text);
	ASSERT_SUBSTR("\"nsguard.io/userns.max-count\":\"6\"", found[1].text);
	learn_found_free(found, n);
	ASSERT_OK(learn_read(w.learndir, "ci", &newest));
	ASSERT_SUBSTR("\"cgroup_id\":20,", newest);
}

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0644);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -EIO;
}

/* Only <id>@<digits>.json and an older nsguard's <id>.json are id's. */
static void t_learn_file_names(void)
{
	static const char *const others[] = { "ci@.json", "ci@1x.json", "ci@1.json.tmp", "cix@1.json",
					      "ci.x.json", "ci@-1.json", "c@1.json", ".ci@1.json",
					      "ci@99999999999999999999999.json", "ci" };
	struct learn_found *found = NULL;
	char path[4200];
	size_t n = 0;

	ASSERT_OK(mkdir(w.learndir, 0755));
	for (size_t i = 0; i < ARRAY_SIZE(others); i++) {
		snprintf(path, sizeof(path), "%s/%s", w.learndir, others[i]);
		ASSERT_OK(write_file(path, "{}"));
	}
	ASSERT_ERR(-ENOENT, learn_list(w.learndir, "ci", &found, &n));
	ASSERT_MSG("no suggestion for ci in");
	snprintf(path, sizeof(path), "%s/ci.json", w.learndir);
	ASSERT_OK(write_file(path, "{\"old\":1}"));
	snprintf(path, sizeof(path), "%s/ci@7.json", w.learndir);
	ASSERT_OK(write_file(path, "{\"new\":1}"));
	ASSERT_OK(learn_list(w.learndir, "ci", &found, &n));
	ASSERT_EQ(2, n);
	ASSERT_TRUE((found[0].cgroup_id == 7 && found[1].cgroup_id == 0) ||
		    (found[0].cgroup_id == 0 && found[1].cgroup_id == 7));
	learn_found_free(found, n);
	/* A symlink is never followed. */
	snprintf(path, sizeof(path), "%s/ci@8.json", w.learndir);
	ASSERT_OK(symlink("/etc/passwd", path));
	ASSERT_OK(learn_list(w.learndir, "ci", &found, &n));
	ASSERT_EQ(3, n);
	for (size_t i = 0; i < n; i++) {
		if (found[i].cgroup_id == 8)
			ASSERT_ERR(-ELOOP, learn_load(w.learndir, &found[i]));
		else
			ASSERT_OK(learn_load(w.learndir, &found[i]));
	}
	learn_found_free(found, n);
	ASSERT_ERR(-EINVAL, learn_list(w.learndir, "../ci", &found, &n));
}

/* The hook knew the init: its pid and start time say which instance it was. */
static void t_learn_names_instance(void)
{
	struct nsguard_record rec = { .id = (char *)"ci", .cgroup_id = 42, .pid = 812,
				      .start_time = 52311 };
	struct nsguard_usage used = { .created = 0 };
	cleanup_free char *text = NULL;

	ASSERT_OK(learn_suggest(&rec, &used, &text));
	ASSERT_STREQ("{\"id\":\"ci\",\"cgroup_id\":42,\"pid\":812,\"start_time\":52311,"
		     "\"created\":0,\"deepest\":0,\"annotations\":{\"nsguard.io/userns\":\"deny\"}}",
		     text);
}

/* The learned map had no room at attach: detach with a warning, no file. */
static void t_learn_nothing_kept(void)
{
	char *text = NULL;

	ASSERT_OK(guard_learn("ci", "/ci", 10, 2, 1u << 1));
	w.no_learned = true;
	ASSERT_OK(container_unguard(&env, "ci", false));
	ASSERT_TRUE(!f_link_pinned(10) && !has_record("ci"));
	ASSERT_ERR(-ENOENT, learn_read(w.learndir, "ci", &text));
}

static void t_learn_write_fails(void)
{
	char *text = NULL;

	ASSERT_OK(guard_learn("ci", "/ci", 10, 2, 1u << 1));
	/* A file where the directory should be: nothing can be written. */
	ASSERT_OK(close(open(w.learndir, O_CREAT | O_WRONLY | O_CLOEXEC, 0600)));
	ASSERT_ERR(-ENOTDIR, container_unguard(&env, "ci", false));
	ASSERT_MSG("the guard stays: learn mode: no suggestion written for ci");
	ASSERT_TRUE(f_link_pinned(10) && has_record("ci"));
	/* detach --id: by force, with a warning. */
	ASSERT_OK(container_unguard(&env, "ci", true));
	ASSERT_TRUE(!f_link_pinned(10) && !has_record("ci"));
	ASSERT_ERR(-ENOTDIR, learn_read(w.learndir, "ci", &text));
}

#define CASE(name, fn)                                                                  \
	do {                                                                            \
		world_reset();                                                          \
		TEST_CASE("container", name, fn);                                       \
	} while (0)

void suite_container(void)
{
	CASE("guard-records-and-links", t_guard_records_and_links);
	CASE("init-gone-before-attach", t_init_gone_before_attach);
	CASE("same-cgroup-other-id-refused", t_same_cgroup_other_id);
	CASE("id-reuse-live-refused", t_id_reuse_live);
	CASE("id-reuse-gone-moves", t_id_reuse_gone_moves);
	CASE("same-id-same-cgroup", t_same_id_same_cgroup);
	CASE("above-another-refused", t_above_another);
	CASE("above-stale-record-allowed", t_above_stale_record);
	CASE("below-another-refused", t_below_another);
	CASE("record-write-fails-detaches", t_record_write_fails);
	CASE("attach-fails-no-record", t_attach_fails);
	CASE("unguard-init-running", t_unguard_init_running);
	CASE("unguard-populated", t_unguard_populated);
	CASE("unguard-shared", t_unguard_shared);
	CASE("guard-identity", t_guard_identity);
	CASE("unguard-unknown", t_unguard_unknown);
	CASE("unguard-cgroup", t_unguard_cgroup);
	CASE("gc", t_gc);
	CASE("gc-relinks-detached", t_gc_relinks_detached);
	CASE("gc-relink-fails-loudly", t_gc_relink_fails);
	CASE("index-lookups", t_index_lookups);
	CASE("index-move", t_index_move);
	CASE("learn-writes-suggestion", t_learn_writes_suggestion);
	CASE("learn-write-fails", t_learn_write_fails);
	CASE("learn-same-id-two-instances", t_learn_same_id_two_instances);
	CASE("learn-file-names", t_learn_file_names);
	CASE("learn-names-instance", t_learn_names_instance);
	CASE("learn-nothing-kept", t_learn_nothing_kept);
	world_reset();
	rmdir(w.tmp);
}
