/*
 * The session's configuration, fixed by ss_engine_init (engine.c) until the next session, and
 * whether a session runs: read by the handler, the engines and the interposers.
 */
#define _GNU_SOURCE
#include "engine_internal.h"

ss_config ss_active_config;
static _Atomic int running;

int ss_engine_running(void) { return atomic_load(&running); }

int ss_session_set_running(int now_running) { return atomic_exchange(&running, now_running); }

/* Wall mode: a running thread's stack at a tick is the sample nearest in its CPU time, and a
 * thread kept off its core part of the time runs less than a period between ticks: samples
 * every eighth of a period of CPU time keep the stack at a tick within a sixteenth of a period
 * of CPU time of the truth (a period of wall time for a thread that gets a sixteenth of a
 * core), but not more often than every millisecond of CPU time (a sample costs about 10 us),
 * nor less often than every period. */
uint64_t ss_wall_counter_period(uint64_t period_ns) {
    uint64_t eighth = period_ns / 8;
    if (eighth < 1000000) eighth = 1000000;
    return eighth < period_ns ? eighth : period_ns;
}
