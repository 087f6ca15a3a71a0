/*
 * The exec family, interposed so that no profiler signal outlives the process image.
 *
 * exec resets caught signals to their default action, and the default action of
 * SIGPROF kills: a signal of ours still pending at exec, or sent during it (a wall
 * tick, a CPU timer), kills the new program before its first instruction. So before
 * the real exec, the session's owner stops sampling (its hook: the sampler thread
 * is joined, every timer deleted, the profile written), and the engine's signals
 * still pending on the calling thread are taken off its queue, while the program's
 * own signals of that number are put back. The program's signal mask is what it
 * was, and a disposition it set to SIG_IGN reaches the new image as SIG_IGN (a
 * caught one would be reset to the default anyway). If the exec fails, sampling
 * resumes and the caller sees the exec's errno.
 *
 * Each public entry that execs in the calling process is covered: libc calls its
 * internal __execve directly, not through the interposable symbols, so execv
 * reaching execve, for example, would not pass here. posix_spawn, system and popen
 * exec in a fresh child (clone with CLONE_VM|CLONE_VFORK in glibc 2.36) that
 * has no timers, is never signalled by the sampler (a different process) and starts
 * with all signals blocked and caught ones reset: nothing of ours can reach it.
 */
#define _GNU_SOURCE
#include "engine_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*execv_fn)(const char *, char *const[]);
typedef int (*fexecve_fn)(int, char *const[], char *const[]);
typedef int (*execveat_fn)(int, const char *, char *const[], char *const[], int);

/* Signals whose disposition the engine holds (the sampling signal, the fault guard). */
static int taken_signals(int signals[3]) {
    int signo = ss_engine_signal();
    if (signo <= 0) return 0;
    signals[0] = signo;
    signals[1] = SIGSEGV;
    signals[2] = SIGBUS;
    return 3;
}

/* What the engine changed that the new image must not see, to undo if the exec fails. */
typedef struct {
    int stopped;                  /* the owner's hook stopped a session */
    int count;                    /* signals in `signals` */
    int signals[3];
    int ignored[3];               /* the program ignores it: SIG_IGN installed for the exec */
    struct sigaction engine_action[3];
} exec_preparation;

static exec_preparation prepare_exec(void) {
    int saved_errno = errno;
    exec_preparation preparation;
    memset(&preparation, 0, sizeof preparation);
    const ss_session_hooks *hooks = ss_session_hooks_of(getpid());
    if (hooks && hooks->stop_for_exec) preparation.stopped = hooks->stop_for_exec();
    preparation.count = taken_signals(preparation.signals);
    if (preparation.count > 0) ss_discard_pending_own_signals(preparation.signals[0]);
    for (int i = 0; i < preparation.count; i++) {
        struct sigaction program;
        /* The interposed sigaction reports the program's own action. */
        if (sigaction(preparation.signals[i], NULL, &program) != 0) continue;
        if ((program.sa_flags & SA_SIGINFO) || program.sa_handler != SIG_IGN) continue;
        struct sigaction ignore;
        memset(&ignore, 0, sizeof ignore);
        ignore.sa_handler = SIG_IGN;
        if (ss_real_sigaction(preparation.signals[i], &ignore, &preparation.engine_action[i]) == 0)
            preparation.ignored[i] = 1;
    }
    errno = saved_errno;
    return preparation;
}

/* The exec failed: the engine's handlers back, sampling resumed, the exec's errno kept. */
static void undo_exec_preparation(const exec_preparation *preparation) {
    int exec_errno = errno;
    for (int i = 0; i < preparation->count; i++)
        if (preparation->ignored[i]) ss_real_sigaction(preparation->signals[i], &preparation->engine_action[i], NULL);
    const ss_session_hooks *hooks = ss_session_hooks_of(getpid());
    if (preparation->stopped && hooks && hooks->resume_after_failed_exec) hooks->resume_after_failed_exec();
    errno = exec_errno;
}

/* libc's definitions, looked up by name once (ss_exec_hooks_resolve() does it ahead, in a
 * process with a session, so that a vfork child never has to call into the loader). */
enum { REAL_EXECVE, REAL_EXECV, REAL_EXECVP, REAL_EXECVPE, REAL_FEXECVE, REAL_EXECVEAT, REAL_COUNT };
static const char *const real_names[REAL_COUNT] = {"execve", "execv", "execvp", "execvpe", "fexecve", "execveat"};
static void *_Atomic real_functions[REAL_COUNT];

static void *real_function(int which) { return ss_real_function(real_names[which], &real_functions[which]); }

void ss_exec_hooks_resolve(void) {
    for (int which = 0; which < REAL_COUNT; which++) ss_next_symbol(real_names[which], &real_functions[which]);
}

/* execve and execvpe: the same shape, the real function by index. */
static int hooked_exec_with_environment(int which, const char *path, char *const argv[], char *const envp[]) {
    execve_fn real = (execve_fn)real_function(which);
    if (!real) return -1;
    exec_preparation preparation = prepare_exec();
    int result = real(path, argv, envp);
    undo_exec_preparation(&preparation);
    return result;
}

/* execv and execvp: the same shape, the real function by index. */
static int hooked_exec_path(int which, const char *path, char *const argv[]) {
    execv_fn real = (execv_fn)real_function(which);
    if (!real) return -1;
    exec_preparation preparation = prepare_exec();
    int result = real(path, argv);
    undo_exec_preparation(&preparation);
    return result;
}

SS_INTERPOSER int execve(const char *path, char *const argv[], char *const envp[]) {
    return hooked_exec_with_environment(REAL_EXECVE, path, argv, envp);
}

SS_INTERPOSER int execv(const char *path, char *const argv[]) { return hooked_exec_path(REAL_EXECV, path, argv); }

SS_INTERPOSER int execvp(const char *file, char *const argv[]) { return hooked_exec_path(REAL_EXECVP, file, argv); }

SS_INTERPOSER int execvpe(const char *file, char *const argv[], char *const envp[]) {
    return hooked_exec_with_environment(REAL_EXECVPE, file, argv, envp);
}

SS_INTERPOSER int fexecve(int fd, char *const argv[], char *const envp[]) {
    fexecve_fn real = (fexecve_fn)real_function(REAL_FEXECVE);
    if (!real) return -1;
    exec_preparation preparation = prepare_exec();
    int result = real(fd, argv, envp);
    undo_exec_preparation(&preparation);
    return result;
}

SS_INTERPOSER int execveat(int dirfd, const char *path, char *const argv[], char *const envp[], int flags) {
    execveat_fn real = (execveat_fn)real_function(REAL_EXECVEAT);
    if (!real) return -1;
    exec_preparation preparation = prepare_exec();
    int result = real(dirfd, path, argv, envp, flags);
    undo_exec_preparation(&preparation);
    return result;
}

/* The variadic forms gather their arguments on the stack as glibc's do, then take the
 * vector path (execl -> execv, execlp -> execvp, execle -> execve). */
static int count_arguments(va_list arguments) {
    int count = 1;
    while (va_arg(arguments, char *) != NULL) count++;
    return count;
}

/* Declares `argv` holding `first`, the variadic arguments after it and the NULL that ends
 * them, with `arguments` left just past that NULL (where execle's envp is). */
#define GATHER_ARGUMENTS(first, argv, arguments)                          \
    va_list counting;                                                     \
    va_start(counting, first);                                            \
    int argc = count_arguments(counting);                                 \
    va_end(counting);                                                     \
    char *argv[argc + 1];                                                 \
    va_list arguments;                                                    \
    va_start(arguments, first);                                           \
    argv[0] = (char *)(first);                                            \
    for (int i = 1; i <= argc; i++) argv[i] = va_arg(arguments, char *)

SS_INTERPOSER int execl(const char *path, const char *arg, ...) {
    GATHER_ARGUMENTS(arg, argv, arguments);
    va_end(arguments);
    return hooked_exec_path(REAL_EXECV, path, argv);
}

SS_INTERPOSER int execlp(const char *file, const char *arg, ...) {
    GATHER_ARGUMENTS(arg, argv, arguments);
    va_end(arguments);
    return hooked_exec_path(REAL_EXECVP, file, argv);
}

SS_INTERPOSER int execle(const char *path, const char *arg, ...) {
    GATHER_ARGUMENTS(arg, argv, arguments);
    char *const *envp = va_arg(arguments, char *const *);
    va_end(arguments);
    return hooked_exec_with_environment(REAL_EXECVE, path, argv, envp);
}
