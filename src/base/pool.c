#include <pthread.h>
#include <stdlib.h>

#include "base/pool.h"

struct ap_job {
	void (*fn)(void *item);
	void *item;
};

static void *job_main(void *arg)
{
	struct ap_job *j = arg;
	j->fn(j->item);
	return NULL;
}

void ap_pool_run(void *items, size_t n, size_t size, void (*fn)(void *item))
{
	pthread_t *tid = calloc(n ? n : 1, sizeof(*tid));
	struct ap_job *jobs = calloc(n ? n : 1, sizeof(*jobs));
	char *started = calloc(n ? n : 1, 1);

	for (size_t i = 0; i < n; i++) {
		void *item = (char *)items + i * size;
		if (!tid || !jobs || !started) {
			fn(item);
			continue;
		}
		jobs[i] = (struct ap_job){ fn, item };
		if (pthread_create(&tid[i], NULL, job_main, &jobs[i]) == 0)
			started[i] = 1;
		else
			fn(item);
	}
	for (size_t i = 0; i < n; i++)
		if (started && started[i])
			pthread_join(tid[i], NULL);
	free(tid);
	free(jobs);
	free(started);
}
