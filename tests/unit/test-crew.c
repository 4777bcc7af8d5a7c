/* test-crew.c - unit tests for src/base/crew.h: every member runs its part of
 * a round at once, a round returns when all have, and each member keeps its
 * own thread from round to round to its end (a worker started in a round
 * must outlive it: PDEATHSIG follows the starting thread). */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/crew.h"

#define MEMBERS 3

struct seen {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int arrived;                   /* parts begun, all rounds */
	int met[MEMBERS];              /* rounds in which the member met all others */
	int runs[MEMBERS];
	pthread_t tid[MEMBERS];        /* the thread of each member's last part */
	int moved[MEMBERS];            /* a part ran in another thread than the last */
	pthread_t done_tid[MEMBERS];
	int done[MEMBERS];
	int slow_done;                 /* member MEMBERS-1's part, late, is over */
};

/* Waits (5 s at most) until every member has begun this round: only members
 * running at once can all get there. */
static void part(void *ctx, size_t m)
{
	struct seen *s = ctx;
	struct timespec until;
	pthread_mutex_lock(&s->mu);
	int round = s->runs[m]++;
	if (round && !pthread_equal(s->tid[m], pthread_self()))
		s->moved[m] = 1;
	s->tid[m] = pthread_self();
	s->arrived++;
	pthread_cond_broadcast(&s->cv);
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 5;
	int r = 0;
	while (s->arrived < MEMBERS * (round + 1) && !r)
		r = pthread_cond_timedwait(&s->cv, &s->mu, &until);
	s->met[m] += !r;
	pthread_mutex_unlock(&s->mu);
	if (m == MEMBERS - 1) {
		usleep(100 * 1000);
		s->slow_done = 1;
	}
}

static void done(void *ctx, size_t m)
{
	struct seen *s = ctx;
	s->done_tid[m] = pthread_self();
	s->done[m]++;
}

static struct seen *seen_new(void)
{
	static struct seen s;
	memset(&s, 0, sizeof(s));
	pthread_mutex_init(&s.mu, NULL);
	pthread_cond_init(&s.cv, NULL);
	return &s;
}

static void every_member_runs_each_round_at_once(void **state)
{
	(void)state;
	struct seen *s = seen_new();
	struct ap_crew *c = ap_crew_new(MEMBERS, part, done, s);
	assert_non_null(c);
	assert_int_equal(ap_crew_size(c), MEMBERS);
	for (int round = 0; round < 2; round++) {
		s->slow_done = 0;
		ap_crew_round(c);
		assert_true(s->slow_done);  /* the round waited for its slowest */
	}
	for (int m = 0; m < MEMBERS; m++) {
		assert_int_equal(s->runs[m], 2);
		assert_int_equal(s->met[m], 2);
	}
	ap_crew_free(c);
}

static void each_member_keeps_its_thread_to_its_end(void **state)
{
	(void)state;
	struct seen *s = seen_new();
	struct ap_crew *c = ap_crew_new(MEMBERS, part, done, s);
	assert_non_null(c);
	ap_crew_round(c);
	ap_crew_round(c);
	pthread_t part_tid[MEMBERS];
	memcpy(part_tid, s->tid, sizeof(part_tid));
	ap_crew_free(c);
	assert_true(pthread_equal(part_tid[0], pthread_self()));
	for (int m = 0; m < MEMBERS; m++) {
		assert_int_equal(s->moved[m], 0);
		assert_int_equal(s->done[m], 1);
		assert_true(pthread_equal(s->done_tid[m], part_tid[m]));
		for (int o = 0; o < m; o++)
			assert_false(pthread_equal(part_tid[o], part_tid[m]));
	}
}

static void a_crew_of_one_is_the_caller_alone(void **state)
{
	(void)state;
	struct seen *s = seen_new();
	struct ap_crew *c = ap_crew_new(1, done, NULL, s);
	assert_non_null(c);
	assert_int_equal(ap_crew_size(c), 1);
	ap_crew_round(c);
	assert_int_equal(s->done[0], 1);
	assert_true(pthread_equal(s->done_tid[0], pthread_self()));
	ap_crew_free(c);
	assert_int_equal(s->done[0], 1);  /* no done given: none called */
}

int main(void)
{
	/* A crew that loses count of its members waits forever: that is this
	 * binary's failure (SIGALRM), not a suite that never ends. */
	alarm(30);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_member_runs_each_round_at_once),
		cmocka_unit_test(each_member_keeps_its_thread_to_its_end),
		cmocka_unit_test(a_crew_of_one_is_the_caller_alone),
	};
	return cmocka_run_group_tests_name("crew", tests, NULL, NULL);
}
