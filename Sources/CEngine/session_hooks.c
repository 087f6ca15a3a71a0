/*
 * What the owner of a session (the preload library) does around exec and fork,
 * kept as plain C functions so that the interposed exec family and the fork
 * handlers can reach it without knowing who it is. Registered through
 * ss_set_session_hooks (engine.c), which readies fork and exec as well.
 */
#define _GNU_SOURCE
#include "engine_internal.h"

#include <unistd.h>

static ss_session_hooks registered;
static _Atomic pid_t owner_pid;

void ss_session_hooks_keep(const ss_session_hooks *hooks) {
    registered = *hooks;
    atomic_store(&owner_pid, getpid());
}

const ss_session_hooks *ss_session_hooks_of(pid_t process) {
    return atomic_load(&owner_pid) == process ? &registered : NULL;
}

int ss_session_hooks_registered(void) { return atomic_load(&owner_pid) == getpid(); }
