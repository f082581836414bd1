/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target for every parser that sees untrusted bytes:
 * oci_state_parse, oci_state_merge_config, config_parse and policy_resolve on
 * the annotations that survive, and spec_edit_apply (nsguard runtime's edit
 * of a config.json).  An input is tried whole as each format; if
 * it contains "\n--\n" the part before is also used as the admin config and
 * the part after as the state, so the fuzzer can combine the two.  Besides
 * the sanitizers, the invariants of a resolved policy are checked, and every
 * config.json the wrapper accepts is read back as runc would read it (a
 * model of Go's encoding/json below): nsguard's hooks must be there.
 * jv: what it parses prints and parses back equal; what json_strict_check
 * accepts, it parses; and jv_parse_only builds exactly the named part.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "jsonstrict.h"
#include "jv.h"
#include "log.h"
#include "oci.h"
#include "policy.h"
#include "spec.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_failure(int err)
{
	/* Failures are negative and always explained. */
	if (err >= 0 || !nsg_last_error()[0])
		abort();
}

static void resolve(const struct nsguard_config *cfg, const struct oci_state *st)
{
	struct nsguard_policy pol = { 0 };
	int err;

	nsg_clear_error();
	err = policy_resolve(cfg, st->annotations, st->n_annotations, &pol);
	if (err < 0) {
		check_failure(err);
		return;
	}
	if (pol.mode < NSGUARD_MODE_DENY || pol.mode >= NSGUARD_MODE_COUNT)
		abort();
	if (pol.max_depth > cfg->max_depth || pol.max_depth > NSGUARD_MAX_DEPTH)
		abort();
	if (pol.mode == NSGUARD_MODE_DENY && pol.max_depth != 0)
		abort();
	if (!policy_errno_name(pol.err) || pol.err == 0)
		abort();
	/* A mode other than the default must have been allowed. */
	if (pol.mode != cfg->default_mode && !(cfg->allowed_modes & (1u << pol.mode)))
		abort();
}

static void restrictive(struct nsguard_config *cfg)
{
	config_defaults(cfg);
	cfg->allowed_modes = 1u << NSGUARD_MODE_DENY | 1u << NSGUARD_MODE_AUDIT;
	cfg->max_depth = 2;
	cfg->default_err = 28;
}

static void state_part(const struct nsguard_config *cfg, const char *buf, size_t len)
{
	struct nsguard_config def, strict;
	struct oci_state st;
	int err;

	nsg_clear_error();
	err = oci_state_parse(buf, len, &st);
	if (err < 0) {
		check_failure(err);
		if (st.id || st.annotations)
			abort();
		return;
	}
	if (!oci_id_valid(st.id) || !st.oci_version || st.pid < 0)
		abort();
	config_defaults(&def);
	restrictive(&strict);
	resolve(&def, &st);
	resolve(&strict, &st);
	if (cfg)
		resolve(cfg, &st);

	/* The same bytes as config.json: merging never drops state keys. */
	nsg_clear_error();
	err = oci_state_merge_config(&st, buf, len);
	if (err < 0)
		check_failure(err);
	resolve(&def, &st);
	if (cfg)
		resolve(cfg, &st);
	oci_state_free(&st);
}

static bool fuzz_is_self(const char *path, void *data)
{
	return strcmp(path, "/usr/bin/nsguard") == 0;
}

/*
 * ---- What runc reads: a model of Go's encoding/json decoding config.json
 * into runtime-spec's Spec, for the parts nsguard writes (hooks and
 * annotations).  Written from Go's decode.go/scanner.go, not from spec.c:
 *  - syntax: whitespace is space, tab, CR, LF; a raw byte < 0x20 in a
 *    string is an error; escapes \" \\ \/ \b \f \n \r \t \uXXXX; numbers
 *    and literals as RFC 8259; bytes >= 0x80 anywhere in a string are taken;
 *    one value is read, what follows is not (json.Decoder);
 *  - strings: each byte of invalid UTF-8 (utf8.DecodeRune: overlong,
 *    surrogate, > U+10FFFF, truncated) becomes U+FFFD, as does a \u escape
 *    of a surrogate that is not the first of a pair;
 *  - struct fields: the key that equals a field's name, else the one equal
 *    after folding (ASCII case, U+017F = s, U+212A = k); unknown keys are
 *    skipped; a key given again decodes into what the first one made (a
 *    slice's elements, a struct's fields, a map's entries: the last wins);
 *    null empties a slice, map or pointer and leaves a string;
 *  - a value of the wrong type fails the whole decode (runc refuses).
 */
enum gkind { G_NULL, G_BOOL, G_NUM, G_STR, G_ARR, G_OBJ };

struct gval {
	enum gkind kind;
	char *str; /* G_STR, and each key of a G_OBJ: decoded, NUL-terminated */
	size_t len;
	struct gval **items;
	char **keys;
	size_t *klens;
	size_t n;
};

struct gparse {
	const unsigned char *s;
	size_t n, i;
	int depth;
	struct gval **all; /* every node, to free */
	size_t nall;
	bool bad;
};

static void gfree(struct gparse *p)
{
	for (size_t k = 0; k < p->nall; k++) {
		struct gval *v = p->all[k];

		for (size_t j = 0; v->keys && j < v->n; j++)
			free(v->keys[j]);
		free(v->keys);
		free(v->klens);
		free(v->items);
		free(v->str);
		free(v);
	}
	free(p->all);
}

static struct gval *gnew(struct gparse *p, enum gkind kind)
{
	struct gval *v = calloc(1, sizeof(*v));
	struct gval **all = realloc(p->all, (p->nall + 1) * sizeof(*all));

	if (!v || !all)
		abort();
	p->all = all;
	all[p->nall++] = v;
	v->kind = kind;
	return v;
}

static void gws(struct gparse *p)
{
	while (p->i < p->n && strchr(" \t\r\n", p->s[p->i]) && p->s[p->i])
		p->i++;
}

static void gput(char **buf, size_t *len, uint32_t r)
{
	char *b = realloc(*buf, *len + 5);

	if (!b)
		abort();
	*buf = b;
	if (r < 0x80) {
		b[(*len)++] = (char)r;
	} else if (r < 0x800) {
		b[(*len)++] = (char)(0xc0 | r >> 6);
		b[(*len)++] = (char)(0x80 | (r & 0x3f));
	} else if (r < 0x10000) {
		b[(*len)++] = (char)(0xe0 | r >> 12);
		b[(*len)++] = (char)(0x80 | ((r >> 6) & 0x3f));
		b[(*len)++] = (char)(0x80 | (r & 0x3f));
	} else {
		b[(*len)++] = (char)(0xf0 | r >> 18);
		b[(*len)++] = (char)(0x80 | ((r >> 12) & 0x3f));
		b[(*len)++] = (char)(0x80 | ((r >> 6) & 0x3f));
		b[(*len)++] = (char)(0x80 | (r & 0x3f));
	}
	b[*len] = '\0';
}

static int ghex(const unsigned char *s, size_t n, size_t i)
{
	int v = 0;

	if (i + 4 > n)
		return -1;
	for (size_t k = i; k < i + 4; k++) {
		int c = s[k];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= c - '0';
		else if (c >= 'a' && c <= 'f')
			v |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			v |= c - 'A' + 10;
		else
			return -1;
	}
	return v;
}

/* utf8.DecodeRune: the rune at s[i] and its size, or U+FFFD and 1. */
static uint32_t gdecode_rune(const unsigned char *s, size_t n, size_t i, size_t *size)
{
	unsigned c = s[i], lo = 0x80, hi = 0xbf;
	size_t len;
	uint32_t r;

	*size = 1;
	if (c < 0x80)
		return c;
	if (c < 0xc2 || c > 0xf4)
		return 0xfffd;
	len = c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
	lo = c == 0xe0 ? 0xa0 : c == 0xf0 ? 0x90 : 0x80;
	hi = c == 0xed ? 0x9f : c == 0xf4 ? 0x8f : 0xbf;
	r = c & (0x3f >> (len - 1));
	for (size_t k = 1; k < len; k++) {
		unsigned b = i + k < n ? s[i + k] : 0;

		if (b < (k == 1 ? lo : 0x80) || b > (k == 1 ? hi : 0xbf))
			return 0xfffd;
		r = (r << 6) | (b & 0x3f);
	}
	*size = len;
	return r;
}

static bool gstring(struct gparse *p, char **out, size_t *olen)
{
	const unsigned char *s = p->s;
	char *buf = NULL;
	size_t len = 0, size;
	int r, lo;

	gput(&buf, &len, 0);
	len = 0;
	for (p->i++; p->i < p->n && s[p->i] != '"';) {
		unsigned c = s[p->i];

		if (c < 0x20)
			goto fail;
		if (c != '\\') {
			gput(&buf, &len, gdecode_rune(s, p->n, p->i, &size));
			p->i += size;
			continue;
		}
		if (p->i + 1 >= p->n)
			goto fail;
		switch (s[p->i + 1]) {
		case '"': case '\\': case '/': r = s[p->i + 1]; break;
		case 'b': r = '\b'; break;
		case 'f': r = '\f'; break;
		case 'n': r = '\n'; break;
		case 'r': r = '\r'; break;
		case 't': r = '\t'; break;
		case 'u':
			r = ghex(s, p->n, p->i + 2);
			if (r < 0)
				goto fail;
			if (r >= 0xd800 && r < 0xe000) {
				lo = -1;
				if (r < 0xdc00 && p->i + 12 <= p->n && s[p->i + 6] == '\\' &&
				    s[p->i + 7] == 'u')
					lo = ghex(s, p->n, p->i + 8);
				if (lo >= 0xdc00 && lo < 0xe000) {
					r = 0x10000 + ((r - 0xd800) << 10) + (lo - 0xdc00);
					p->i += 6;
				} else {
					r = 0xfffd;
				}
			}
			p->i += 4;
			break;
		default:
			goto fail;
		}
		p->i += 2;
		gput(&buf, &len, (uint32_t)r);
	}
	if (p->i >= p->n)
		goto fail;
	p->i++;
	*out = buf;
	*olen = len;
	return true;
fail:
	free(buf);
	return false;
}

static struct gval *gvalue(struct gparse *p)
{
	const unsigned char *s = p->s;
	struct gval *v;

	gws(p);
	if (p->i >= p->n || ++p->depth > 10000)
		return NULL;
	if (s[p->i] == '{' || s[p->i] == '[') {
		bool obj = s[p->i] == '{';

		v = gnew(p, obj ? G_OBJ : G_ARR);
		p->i++;
		gws(p);
		if (p->i < p->n && s[p->i] == (obj ? '}' : ']')) {
			p->i++;
			p->depth--;
			return v;
		}
		for (;;) {
			char *key = NULL;
			size_t klen = 0;
			struct gval *item;

			if (obj) {
				gws(p);
				if (p->i >= p->n || s[p->i] != '"' || !gstring(p, &key, &klen))
					return NULL;
				gws(p);
				if (p->i >= p->n || s[p->i] != ':') {
					free(key);
					return NULL;
				}
				p->i++;
			}
			item = gvalue(p);
			v->items = realloc(v->items, (v->n + 1) * sizeof(*v->items));
			v->keys = realloc(v->keys, (v->n + 1) * sizeof(*v->keys));
			v->klens = realloc(v->klens, (v->n + 1) * sizeof(*v->klens));
			if (!v->items || !v->keys || !v->klens)
				abort();
			v->items[v->n] = item;
			v->keys[v->n] = key;
			v->klens[v->n++] = klen;
			if (!item)
				return NULL;
			gws(p);
			if (p->i < p->n && s[p->i] == ',') {
				p->i++;
				continue;
			}
			if (p->i < p->n && s[p->i] == (obj ? '}' : ']')) {
				p->i++;
				p->depth--;
				return v;
			}
			return NULL;
		}
	}
	if (s[p->i] == '"') {
		v = gnew(p, G_STR);
		if (!gstring(p, &v->str, &v->len))
			return NULL;
		p->depth--;
		return v;
	}
	for (const char *const *lit = (const char *const[]){ "true", "false", "null", NULL }; *lit;
	     lit++) {
		size_t l = strlen(*lit);

		if (p->n - p->i >= l && memcmp(s + p->i, *lit, l) == 0) {
			p->i += l;
			p->depth--;
			return gnew(p, **lit == 'n' ? G_NULL : G_BOOL);
		}
	}
	/* -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
	{
		size_t i = p->i, d;

		if (i < p->n && s[i] == '-')
			i++;
		if (i < p->n && s[i] == '0')
			i++;
		else if (i < p->n && s[i] >= '1' && s[i] <= '9')
			while (i < p->n && s[i] >= '0' && s[i] <= '9')
				i++;
		else
			return NULL;
		if (i < p->n && s[i] == '.') {
			for (d = ++i; i < p->n && s[i] >= '0' && s[i] <= '9'; i++)
				;
			if (i == d)
				return NULL;
		}
		if (i < p->n && (s[i] == 'e' || s[i] == 'E')) {
			i++;
			if (i < p->n && (s[i] == '+' || s[i] == '-'))
				i++;
			for (d = i; i < p->n && s[i] >= '0' && s[i] <= '9'; i++)
				;
			if (i == d)
				return NULL;
		}
		p->i = i;
		p->depth--;
		return gnew(p, G_NUM);
	}
}

/* Go's field match: the exact name, else the folded one (ASCII case, ſ, K). */
static uint32_t gfold(const char *k, size_t *i)
{
	size_t size;
	uint32_t r = gdecode_rune((const unsigned char *)k, strlen(k), *i, &size);

	*i += size;
	if (r == 0x17f)
		return 's';
	if (r == 0x212a)
		return 'k';
	return r >= 'A' && r <= 'Z' ? r + 32 : r;
}

static bool gfield(const char *key, size_t klen, const char *field)
{
	size_t i = 0, j = 0;

	if (klen != strlen(key)) /* a NUL inside: not a field name */
		return false;
	while (key[i] && field[j])
		if (gfold(key, &i) != gfold(field, &j))
			return false;
	return !key[i] && !field[j];
}

#define GO_STAGES 6
static const char *const go_stages[GO_STAGES] = { "prestart",	    "createRuntime",
						  "createContainer", "startContainer",
						  "poststart",	    "poststop" };

struct go_hook {
	const char *path;
	const struct gval *args, *env; /* arrays of strings, or NULL */
	size_t nargs, nenv;
	const char *argv[8]; /* the first args, decoded into */
};

struct go_spec {
	bool hooks; /* Spec.Hooks != nil */
	struct go_hook *stage[GO_STAGES];
	size_t nstage[GO_STAGES];
	bool annotations;
	const char *userns; /* annotations["nsguard.io/userns"] */
	bool userns_set;
};

static void go_spec_free(struct go_spec *g)
{
	for (int k = 0; k < GO_STAGES; k++)
		free(g->stage[k]);
}

/*
 * []string: null empties it; an array sets its length.  A null element
 * keeps whatever the slice held there (Go decodes into it): unknown here,
 * so it never matches.
 */
static bool go_strings(const struct gval *v, const char **argv, size_t cap, size_t *n)
{
	if (v->kind == G_NULL) {
		*n = 0;
		return true;
	}
	if (v->kind != G_ARR)
		return false;
	for (size_t k = 0; k < v->n; k++) {
		if (v->items[k]->kind != G_STR && v->items[k]->kind != G_NULL)
			return false;
		if (k < cap)
			argv[k] = v->items[k]->kind == G_STR ? v->items[k]->str : NULL;
	}
	*n = v->n;
	return true;
}

static bool go_hook(const struct gval *v, struct go_hook *h)
{
	const char *envv[1];

	if (v->kind == G_NULL)
		return true;
	if (v->kind != G_OBJ)
		return false;
	for (size_t k = 0; k < v->n; k++) {
		const struct gval *x = v->items[k];
		const char *key = v->keys[k];

		if (gfield(key, v->klens[k], "path")) {
			if (x->kind == G_STR)
				h->path = x->str;
			else if (x->kind != G_NULL)
				return false;
		} else if (gfield(key, v->klens[k], "args")) {
			if (!go_strings(x, h->argv, ARRAY_SIZE(h->argv), &h->nargs))
				return false;
		} else if (gfield(key, v->klens[k], "env")) {
			if (!go_strings(x, envv, 0, &h->nenv))
				return false;
		} else if (gfield(key, v->klens[k], "timeout")) {
			if (x->kind != G_NUM && x->kind != G_NULL)
				return false;
		}
	}
	return true;
}

static bool go_hooks(const struct gval *v, struct go_spec *g)
{
	if (v->kind == G_NULL) {
		for (int k = 0; k < GO_STAGES; k++)
			g->nstage[k] = 0;
		g->hooks = false;
		return true;
	}
	if (v->kind != G_OBJ)
		return false;
	g->hooks = true;
	for (size_t m = 0; m < v->n; m++) {
		const struct gval *arr = v->items[m];
		int k;

		for (k = 0; k < GO_STAGES; k++)
			if (gfield(v->keys[m], v->klens[m], go_stages[k]))
				break;
		if (k == GO_STAGES)
			continue;
		if (arr->kind == G_NULL) {
			g->nstage[k] = 0;
			continue;
		}
		if (arr->kind != G_ARR)
			return false;
		if (arr->n > g->nstage[k]) {
			struct go_hook *h = realloc(g->stage[k], arr->n * sizeof(*h));

			if (!h)
				abort();
			memset(h + g->nstage[k], 0, (arr->n - g->nstage[k]) * sizeof(*h));
			g->stage[k] = h;
		}
		/* Decoded into the elements already there (json: "array"). */
		for (size_t e = 0; e < arr->n; e++) {
			if (e >= g->nstage[k])
				memset(&g->stage[k][e], 0, sizeof(g->stage[k][e]));
			if (!go_hook(arr->items[e], &g->stage[k][e]))
				return false;
		}
		g->nstage[k] = arr->n;
	}
	return true;
}

static bool go_annotations(const struct gval *v, struct go_spec *g)
{
	if (v->kind == G_NULL) {
		g->annotations = false;
		g->userns_set = false;
		return true;
	}
	if (v->kind != G_OBJ)
		return false;
	g->annotations = true;
	for (size_t m = 0; m < v->n; m++) {
		const struct gval *x = v->items[m];

		if (x->kind != G_STR && x->kind != G_NULL)
			return false;
		/* A map's keys are taken as they are: no folding. */
		if (v->klens[m] == strlen("nsguard.io/userns") &&
		    memcmp(v->keys[m], "nsguard.io/userns", v->klens[m]) == 0) {
			g->userns = x->kind == G_STR ? x->str : "";
			g->userns_set = true;
		}
	}
	return true;
}

enum go_result { GO_OK, GO_SYNTAX, GO_TYPE };

/*
 * runc's view of doc: GO_SYNTAX when it is not JSON to Go, GO_TYPE when a
 * value has the wrong type (an annotation that is a number): either way runc
 * refuses and runs nothing.
 */
static enum go_result go_decode(const char *doc, size_t len, struct go_spec *g, struct gparse *p)
{
	const struct gval *root;

	memset(g, 0, sizeof(*g));
	*p = (struct gparse){ .s = (const unsigned char *)doc, .n = len };
	root = gvalue(p);
	if (!root)
		return GO_SYNTAX;
	if (root->kind != G_OBJ)
		return GO_TYPE;
	for (size_t m = 0; m < root->n; m++) {
		if (gfield(root->keys[m], root->klens[m], "hooks") && !go_hooks(root->items[m], g))
			return GO_TYPE;
		if (gfield(root->keys[m], root->klens[m], "annotations") &&
		    !go_annotations(root->items[m], g))
			return GO_TYPE;
	}
	return GO_OK;
}

static bool go_hook_is_ours(const struct go_hook *h, const char *config, const char *stage)
{
	const char *with_config[] = { "nsguard", "--config", config, "hook", stage };
	const char *plain[] = { "nsguard", "hook", stage };
	const char **want = config ? with_config : plain;
	size_t n = config ? 5 : 3;

	if (!h->path || strcmp(h->path, "/usr/bin/nsguard") != 0 || h->nenv || h->nargs != n)
		return false;
	for (size_t k = 0; k < n; k++)
		if (!h->argv[k] || strcmp(h->argv[k], want[k]) != 0)
			return false;
	return true;
}

static bool go_has_ours(const struct go_spec *g, int stage, const char *config, bool first)
{
	for (size_t k = 0; k < g->nstage[stage]; k++)
		if (go_hook_is_ours(&g->stage[stage][k], config, go_stages[stage]))
			return true;
		else if (first)
			return false;
	return false;
}

/*
 * The differential check: what the wrapper wrote, as runc reads it, runs
 * nsguard's createRuntime (or prestart) and poststop hooks, first where the
 * wrapper says it added them, and carries the annotation it set.  A
 * document that is not JSON to Go is a failure too (the wrapper only passes
 * strict JSON); one of the wrong types runc refuses, which is safe.
 */
static void check_as_runc(const char *doc, size_t len, unsigned what, const char *config)
{
	struct gparse p;
	struct go_spec g;
	enum go_result r = go_decode(doc, len, &g, &p);

	if (r == GO_SYNTAX)
		abort();
	if (r == GO_TYPE) {
		go_spec_free(&g);
		gfree(&p);
		return;
	}
	if (!g.hooks)
		abort();
	if (!go_has_ours(&g, 1, config, what & SPEC_ADDED_CREATE_RUNTIME) &&
	    !((what & SPEC_ADDED_CREATE_RUNTIME) == 0 && go_has_ours(&g, 0, config, false)))
		abort();
	if (!go_has_ours(&g, 5, config, what & SPEC_ADDED_POSTSTOP))
		abort();
	if (!g.userns_set || strcmp(g.userns, "audit") != 0)
		abort();
	go_spec_free(&g);
	gfree(&p);
}

/*
 * A tenant's config.json through nsguard runtime's edit: refused with a
 * message, or edited into a document that runc reads with nsguard's hooks
 * (check_as_runc) and that a second edit finds guarded (no hook added
 * twice); with and without a --config file.
 */
static void spec_part(const char *buf, size_t len)
{
	static const char *const keys[] = { "nsguard.io/userns" }, *const values[] = { "audit" };
	static const char *const configs[] = { NULL, "/etc/nsguard/tier.conf" };

	for (size_t c = 0; c < ARRAY_SIZE(configs); c++) {
		const struct spec_edit e = { .hook_path = "/usr/bin/nsguard",
					     .config_path = configs[c],
					     .is_self = fuzz_is_self,
					     .keys = keys,
					     .values = values,
					     .n = 1 };
		char *out = NULL, *again = NULL;
		unsigned what;
		int err;

		nsg_clear_error();
		err = spec_edit_apply(buf, len, &e, &out, &what);
		if (err < 0) {
			check_failure(err);
			if (out)
				abort();
			return;
		}
		if (!out)
			abort(); /* the annotation is always written */
		check_as_runc(out, strlen(out), what, configs[c]);
		err = spec_edit_apply(out, strlen(out), &e, &again, &what);
		if (err < 0 || (what & (SPEC_ADDED_CREATE_RUNTIME | SPEC_ADDED_POSTSTOP)))
			abort();
		free(again);
		free(out);
	}
}

/* Whether part is full with only the members only names (jv.h). */
static bool same_part(const struct jv *full, const struct jv *part, const struct jv_only *only)
{
	const struct jv *x, *y;
	size_t kept = 0;

	if (!only || !full || !part || full->type != part->type)
		return jv_equal(full, part);
	if (jv_is_array(full)) {
		for (x = full->child, y = part->child; x && y; x = x->next, y = y->next)
			if (!same_part(x, y, only))
				return false;
		return !x && !y;
	}
	if (!jv_is_object(full))
		return jv_equal(full, part);
	jv_for_each(x, full) {
		const struct jv_only *o = only;

		while (o->key && strcmp(o->key, x->key) != 0)
			o++;
		if (!o->key)
			continue;
		kept++;
		if (!same_part(x, jv_get(part, x->key), o->below))
			return false;
	}
	return kept == jv_count(part);
}

static void jv_part(const char *buf, size_t len)
{
	cleanup_jv struct jv *again = NULL, *part = NULL, *v = NULL;
	cleanup_free char *text = NULL;
	int range;

	errno = 0;
	v = jv_parse(buf, len);
	range = !v && errno == ERANGE; /* strict JSON, a number beyond a double */
	nsg_clear_error();
	if (json_strict_check(buf, len, "fuzz", NULL) == 0 && !range) {
		if (!v)
			abort();
		part = jv_parse_only(buf, len, oci_config_read);
		if (!part || !same_part(v, part, oci_config_read))
			abort();
	}
	if (!v)
		return;
	text = jv_format(v);
	again = text ? jv_parse(text, strlen(text)) : NULL;
	if (!again || !jv_equal(v, again))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	struct nsguard_config cfg;
	const char *sep;
	int err;

	nsg_clear_error();
	err = config_parse(buf, size, "fuzz.conf", &cfg);
	if (err < 0) {
		check_failure(err);
	} else if (!(cfg.allowed_modes & (1u << cfg.default_mode)) ||
		   cfg.max_depth > NSGUARD_MAX_DEPTH || !policy_errno_name(cfg.default_err)) {
		abort();
	}
	state_part(NULL, buf, size);
	spec_part(buf, size);
	jv_part(buf, size);

	sep = memmem(buf, size, "\n--\n", 4);
	if (sep) {
		size_t clen = sep - buf;

		nsg_clear_error();
		if (config_parse(buf, clen, "fuzz.conf", &cfg) == 0)
			state_part(&cfg, sep + 4, size - clen - 4);
	}
	return 0;
}
