/* sweep.h - walking the catalog in one environment, resumably, and joining the
 * environments' walks into the support matrix (evidence/matrix.h).
 *
 * One worker per environment answers one request per catalog entry (the
 * entry's whole surface at once, so thousands of names cost tens of round
 * trips). Each answer is journaled before the next request: its APIs and then
 * an "entry" record saying the entry is done, with one write and one fsync.
 * A walk that crashes the worker or passes its time limit is that entry's
 * CRASH or TIMEOUT, journaled the same way, and the worker is started again
 * for the next entry.
 *
 * The journal (one file per environment; evidence/sweepfile.h reads and
 * writes its records) holds:
 *   {"type": "sweep-start", "data": {"env", "catalog", "depth", "shard"}}
 *   {"type": "api", "data": <a matrix line, without verdict>}
 *   {"type": "entry", "data": {"entry", "status", "reason", "apis"}}
 * At depth probe and numeric, each API's checks (check/autocheck.h) run
 * once the walk's answer is in, API by API; an API whose checks ran probes
 * or samples is journaled as they end, with the APIs before it (the entry
 * record still last): a kill loses little work, and a resume walks the entry
 * again with the journaled APIs skipped. An API
 * whose checks crash or hang the worker is that API's crash or timeout
 * (in its check), and the worker is started again for the next. With
 * o->lanes > 1, an entry's checks run in that many workers at once (the
 * walking one among them, each started by a thread of a crew kept for the
 * run, base/crew.h), taking the APIs in the walk's order; each API is
 * journaled once all before it are, so the journal's order, and a resume,
 * are one worker's.
 *
 * With resume, a journal of the same catalog digest, depth and shard is read
 * back first: its done entries are not walked again, and an entry cut short
 * (APIs journaled, no entry record: a kill -9 between two writes) is walked
 * again with those APIs skipped by the worker. So no API is measured twice,
 * and the lines end up as an uninterrupted run's.
 */
#ifndef AP_SWEEP_H
#define AP_SWEEP_H

#include <jansson.h>

#include "base/buf.h"
#include "check/autocheck.h"
#include "check/catalog.h"
#include "env/envs.h"
#include "evidence/matrix.h"

#define AP_SWEEP_JOBS_MAX 16  /* workers per environment for the checks */

struct ap_sweep_progress {
	const char *entry;
	const char *status;   /* the entry's status word (evidence/sweepfile.h),
			       * or "journal" (done in an earlier run) */
	size_t apis;          /* lines it gave */
	size_t done, total;   /* entries of this shard done, in all */
	double secs;          /* this entry's walk (so far, with api) */
	double elapsed;       /* since this environment started */
	/* At depth probe and numeric, also called as each API of the entry is
	 * journaled (its checks over): api is it, the api_done-th of the
	 * entry's api_total; NULL at the entry's end. */
	const char *api;
	size_t api_done, api_total;
};

struct ap_sweep_opts {
	const struct ap_catalog *cat;
	struct ap_shard shard;
	const char *depth;    /* "resolve", "signature", "probe" or "numeric" */
	/* depth probe and numeric: the checks of each API (devices are each
	 * environment's own); NULL below */
	const struct ap_autocheck *check;
	/* depth probe and numeric: workers that run an entry's checks at once
	 * (APIs taken in order, journaled in order); 0 or 1: one */
	int lanes;
	int walk_ms;          /* limit per entry */
	int start_ms;         /* limit for the worker's start and torch's import */
	int resume;           /* plugins: each environment's (ap_plugin_modules()) */
	/* Called from the environment's thread after each entry (may be NULL). */
	void (*progress)(void *ctx, size_t env, const struct ap_sweep_progress *p);
	void *ctx;
};

struct ap_sweep_env {
	const struct ap_env *env;
	size_t idx;                   /* position in --env */
	const char *journal;          /* path of this environment's journal */
	const struct ap_sweep_opts *o;
	/* results, filled by ap_sweep_env_run() */
	struct ap_matrix lines;       /* its lines: APIs, and one per entry */
	int began;                    /* the worker answered sweep_begin: */
	char *torch;                  /*   its torch version (NULL: none said) */
	struct ap_matrix_strs plugins; /*   the plugins that loaded */
	size_t measured;              /* APIs measured by this run */
	size_t resumed;               /* APIs read back from the journal */
	size_t restarts;              /* worker starts after a crash or timeout */
	int err;                      /* the environment failed (-AP_E*), detail says why */
	struct ap_buf detail;
	int io_err;                   /* the journal could not be written (-errno) */
	struct ap_buf io_detail;
};

/* Walks the shard's entries in e->env (a pool job: it prints nothing). */
void ap_sweep_env_run(void *e);

void ap_sweep_env_free(struct ap_sweep_env *e);

/* The matrix of n environments' walks: their lines, the absent ones added
 * (or, under an entry whose walk failed there, lines of that failure; in an
 * environment that failed as a whole, "error" lines), sorted and judged
 * (matrix.h), into *out (empty before). envs[i] is e[i].env's name. 0 or
 * -ENOMEM (out empty). */
int ap_sweep_matrix(const struct ap_sweep_env *e, size_t n, const char *const *envs,
		    const char *reference, struct ap_matrix *out);

#endif
