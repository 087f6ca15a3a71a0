/*
 * Wall mode's engine: no per-thread resource. The sampler thread decides on its
 * wall-clock schedule which threads to sample and signals each with the engine's
 * signal, queued with the cookie that tells the handler it is the engine's.
 */
#define _GNU_SOURCE
#include "engine_internal.h"
#include "sampling_engine.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

static int attach(int32_t tid, int armed, int *handle) {
    (void)tid;
    (void)armed;
    *handle = -1;
    return 0;
}

static int arm(int handle) {
    (void)handle;
    return 0;
}

/* Nothing to stop: the registry refuses to signal a thread that blocks the signal. */
static void disarm(int handle) { (void)handle; }

static void detach(int handle) { (void)handle; }

static int orphaned(int handle) {
    (void)handle;
    return 0;
}

static void forget_after_fork(int handle) { (void)handle; }

const ss_sampling_engine ss_wall_signal_engine = {"wall-clock signals from the sampler thread", attach, arm, disarm, detach,
                                                  orphaned, forget_after_fork};

static int queue_signal(int32_t tid) {
    int signo = ss_engine_signal();
    pid_t pid = getpid();
    siginfo_t info;
    memset(&info, 0, sizeof info);
    info.si_signo = signo;
    info.si_code = SI_QUEUE;
    info.si_pid = pid;
    info.si_uid = getuid();
    info.si_value.sival_ptr = (void *)ss_timer_cookie;
    if (syscall(SYS_rt_tgsigqueueinfo, pid, tid, signo, &info) != 0) return -errno;
    return 0;
}

int ss_signal_thread(int32_t tid) { return ss_thread_signal_unless_blocked(tid, queue_signal); }
