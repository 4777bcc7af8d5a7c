/* crew.c - long-lived threads that run rounds (see crew.h). */
#include <pthread.h>
#include <stdlib.h>

#include "base/crew.h"

struct member {
	struct ap_crew *c;
	size_t m;
	pthread_t tid;
};

struct ap_crew {
	void (*fn)(void *ctx, size_t member);
	void (*done)(void *ctx, size_t member);
	void *ctx;
	pthread_mutex_t mu;
	pthread_cond_t go, idle;
	unsigned long round;    /* rounds begun */
	size_t busy;            /* members 1.. still in the round */
	int quit;
	size_t n;               /* members, 0 included */
	struct member *v;       /* members 1..n-1 at v[0..n-2] */
};

/* A member's thread: waits for a round (or the end), runs its part, and says
 * when it is through. */
static void *member_main(void *arg)
{
	struct member *me = arg;
	struct ap_crew *c = me->c;
	unsigned long seen = 0;
	pthread_mutex_lock(&c->mu);
	for (;;) {
		while (c->round == seen && !c->quit)
			pthread_cond_wait(&c->go, &c->mu);
		if (c->quit)
			break;
		seen = c->round;
		pthread_mutex_unlock(&c->mu);
		c->fn(c->ctx, me->m);
		pthread_mutex_lock(&c->mu);
		if (--c->busy == 0)
			pthread_cond_signal(&c->idle);
	}
	pthread_mutex_unlock(&c->mu);
	if (c->done)
		c->done(c->ctx, me->m);
	return NULL;
}

struct ap_crew *ap_crew_new(size_t n, void (*fn)(void *ctx, size_t member),
			    void (*done)(void *ctx, size_t member), void *ctx)
{
	struct ap_crew *c = calloc(1, sizeof(*c));
	if (!c || !(c->v = calloc(n > 1 ? n - 1 : 1, sizeof(*c->v)))) {
		free(c);
		return NULL;
	}
	*c = (struct ap_crew){ .fn = fn, .done = done, .ctx = ctx, .n = 1, .v = c->v };
	pthread_mutex_init(&c->mu, NULL);
	pthread_cond_init(&c->go, NULL);
	pthread_cond_init(&c->idle, NULL);
	for (size_t m = 1; m < n; m++) {
		struct member *me = &c->v[c->n - 1];
		*me = (struct member){ .c = c, .m = c->n };
		if (pthread_create(&me->tid, NULL, member_main, me))
			break;
		c->n++;
	}
	return c;
}

size_t ap_crew_size(const struct ap_crew *c)
{
	return c->n;
}

void ap_crew_round(struct ap_crew *c)
{
	pthread_mutex_lock(&c->mu);
	c->busy = c->n - 1;
	c->round++;
	pthread_cond_broadcast(&c->go);
	pthread_mutex_unlock(&c->mu);
	c->fn(c->ctx, 0);
	pthread_mutex_lock(&c->mu);
	while (c->busy)
		pthread_cond_wait(&c->idle, &c->mu);
	pthread_mutex_unlock(&c->mu);
}

void ap_crew_free(struct ap_crew *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&c->mu);
	c->quit = 1;
	pthread_cond_broadcast(&c->go);
	pthread_mutex_unlock(&c->mu);
	for (size_t m = 1; m < c->n; m++)
		pthread_join(c->v[m - 1].tid, NULL);
	if (c->done)
		c->done(c->ctx, 0);
	pthread_mutex_destroy(&c->mu);
	pthread_cond_destroy(&c->go);
	pthread_cond_destroy(&c->idle);
	free(c->v);
	free(c);
}
