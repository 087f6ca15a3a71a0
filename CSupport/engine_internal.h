/* Shared between the engine's files; not part of the public header. */
#ifndef STACKSAMPLER_ENGINE_INTERNAL_H
#define STACKSAMPLER_ENGINE_INTERNAL_H

#include "stacksampler_engine.h"
#include <signal.h>
#include <stdatomic.h>

/* Thread-local state lives in the initial-exec model: the default model may
 * call into the loader (and allocate) on first touch, inside the handler. */
#define SS_TLS __thread __attribute__((tls_model("initial-exec")))

/* Frames the unwinder reports above the interrupted PC (handler, trampoline):
 * room reserved in each slot so that they can be cut off in place. */
#define SS_SKIP_HEADROOM 8

extern ss_config ss_active_config;

/* next_symbol.c: the definition of `name` that this library's own interposes
 * (libc's), looked up once and kept in `cache`. NULL if there is none. */
void *ss_next_symbol(const char *name, void *_Atomic *cache);

/* sample_buffer.c */
int ss_buffer_create(uint32_t slots, uint32_t max_frames);
void ss_buffer_reset(void);          /* forked child: empty, no reader or writer running */
ss_sample *ss_buffer_claim(void);   /* signal-safe; NULL when full (counted) */
void ss_buffer_publish(ss_sample *sample);

/* unwind.c */
int ss_unwind_load(void);
int ss_unwind_backtrace(void **frames, int capacity); /* signal-safe once warmed */

/* thread_registry.c */
void ss_registry_stop_all(void);
void ss_registry_forget_after_fork(void);

/* signal_hooks.c: the real sigaction; ss_signal_take installs `handler` on
 * `signo` and remembers the program's action there, to chain to it;
 * ss_signal_is_virtualized says whether `signo` was taken so. */
int ss_real_sigaction(int signo, const struct sigaction *action, struct sigaction *previous);
int ss_signal_is_virtualized(int signo);
int ss_signal_take(int signo, void (*handler)(int, siginfo_t *, void *));
void ss_chain_to_program(int signo, siginfo_t *info, void *context);

/* module_cache.c: nonzero while the thread unwinds in the handler. */
extern SS_TLS int ss_tls_in_handler;
void ss_module_cache_reset_after_fork(void);

/* handler.c */
extern SS_TLS int ss_tls_unwind_ready;
extern SS_TLS int ss_tls_excluded;
int ss_handler_install(int preferred_signo);
int ss_fault_guard_install(void);
void ss_handler_reset_after_fork(void);
void ss_handler_deactivate(void);
extern const char ss_timer_cookie[1];

#endif
