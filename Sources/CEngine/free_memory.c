/*
 * Gives the pages of freed heap memory back to the system, after a session's
 * naming has freed its symbol tables (glibc keeps them otherwise).
 */
#define _GNU_SOURCE
#include "stacksampler_engine.h"

#include <malloc.h>

void ss_release_free_memory(void) { malloc_trim(0); }
