/* pool.h - run one job per item concurrently, a thread each, and wait for all.
 *
 * Environments are slow (an interpreter start and a torch import each) and
 * independent, so every command that touches several runs them at once. Jobs
 * must not print; they leave their results in their item.
 */
#ifndef AP_POOL_H
#define AP_POOL_H

#include <stddef.h>

/* Calls fn(item) for each of n items of size bytes at items, concurrently;
 * returns when all have returned. Falls back to running a job in the calling
 * thread when no thread can be created. */
void ap_pool_run(void *items, size_t n, size_t size, void (*fn)(void *item));

#endif
