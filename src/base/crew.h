/* crew.h - threads that live as long as their crew, each running its part of
 * every round, for work that keeps children from one round to the next.
 *
 * Why not ap_pool_run (pool.h): a child started with PR_SET_PDEATHSIG
 * (env/spawn.c) is killed when the *thread* that started it ends, not the
 * process. A worker kept for the next round must be started by a thread that
 * lives that long: a pool's threads live one job.
 *
 * Member 0 is the thread that calls ap_crew_round(); members 1..n-1 are
 * threads of the crew's own, started by ap_crew_new() and ended by
 * ap_crew_free(). A round calls fn(ctx, m) in every member at once and
 * returns when all have returned; what a round works on is in ctx, which the
 * caller changes only between rounds.
 */
#ifndef AP_CREW_H
#define AP_CREW_H

#include <stddef.h>

struct ap_crew;

/* A crew of up to n members (n >= 1) running fn; done(ctx, m), if not NULL,
 * is called by member m's own thread as the crew ends (member 0's in
 * ap_crew_free's caller). Fewer members when threads cannot be made
 * (ap_crew_size says how many); NULL when out of memory. */
struct ap_crew *ap_crew_new(size_t n, void (*fn)(void *ctx, size_t member),
			    void (*done)(void *ctx, size_t member), void *ctx);

size_t ap_crew_size(const struct ap_crew *c);

/* One round: fn in every member at once; returns when all have returned. */
void ap_crew_round(struct ap_crew *c);

/* Ends the crew's threads (each calling done first) and frees it. */
void ap_crew_free(struct ap_crew *c);

#endif
