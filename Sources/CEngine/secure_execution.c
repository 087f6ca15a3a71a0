/* Secure-execution mode (stacksampler_engine.h). */
#define _GNU_SOURCE
#include "stacksampler_engine.h"

#include <sys/auxv.h>

int ss_secure_execution(void) { return getauxval(AT_SECURE) != 0; }
