/*
 * What the engine's C callers use beyond stacksampler_engine.h, which holds what Swift calls:
 * the preload library marks the load of its Swift part, and C programs compare the engine's
 * walk with libunwind's from a signal's context (Tests/Programs/unwind_diff.c). Not in the
 * CEngineHeader module.
 */
#ifndef STACKSAMPLER_ENGINE_C_H
#define STACKSAMPLER_ENGINE_C_H

#include "stacksampler_engine.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Around the load of the profiler's own code (its Swift part and what that brings in): the
 *  modules it adds are the profiler's, whose unwind tables are compiled only from the sampler
 *  thread's first wake after the threads are armed (no thread of the program waits for them). */
void ss_module_cache_own_load_begin(void);
void ss_module_cache_own_load_end(void);

/** The module holding `code` (the preload library's Swift part, once loaded) holds only the
 *  profiler's code: a program thread's stack through it is the profiler's work, left out of its
 *  samples as the engine's own code is (own_code.c). */
void ss_own_code_note_module(const void *code);

/** ss_unwind_stack from the context a signal interrupted (`interrupted`, a ucontext_t), with every
 *  register the handler's walk starts from (rbx too: the CFA of the loader's lazy-binding resolver). */
int ss_unwind_context(const void *interrupted, ss_memory_reader read, void *context, uintptr_t *frames, int capacity,
                      int *outcome);

#ifdef __cplusplus
}
#endif
#endif
