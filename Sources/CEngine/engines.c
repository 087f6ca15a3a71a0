/*
 * Every engine of the process (sampling_engine.h), for the question the signal handler and the
 * mask interposers ask of each signal of the engine's number: whose is it. Every engine is asked,
 * not only the session's: a signal an earlier session's engine raised may still be pending.
 */
#define _GNU_SOURCE
#include "engine_internal.h"
#include "sampling_engine.h"

static const ss_sampling_engine *const engines[] = {&ss_cpu_timer_engine, &ss_perf_event_engine};

const ss_sampling_engine *ss_engine_of_signal(const siginfo_t *info) {
    for (size_t i = 0; i < sizeof engines / sizeof *engines; i++)
        if (engines[i]->owns_signal(info)) return engines[i];
    return NULL;
}
