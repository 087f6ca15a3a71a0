/*
 * The waits that set a signal mask for their length (ppoll, pselect, epoll_pwait, epoll_pwait2,
 * sigsuspend), interposed for the engine's signal. The race-free way to wait for a signal or a
 * descriptor is to block signals while working and let the wait unblock them atomically: an
 * engine's signal that came while the thread worked is then pending as it enters the wait, and
 * delivered inside it, which ends ppoll, pselect and epoll_pwait with EINTR whatever SA_RESTART
 * says, and wakes sigsuspend as if the program's own signal had come (a loop blocking every
 * signal for 3 ms between 1 ms waits: 97-99 of 100 waits cut short at 1 ms). So a wait whose mask
 * unblocks the engine's signal runs with it blocked all the same, after a pending one is let in
 * first, in user space, where it is a sample of the thread about to wait (taken where it unblocks
 * the signal, as for any thread that blocked it; inlined, so that the stack shows the wait and
 * the C library's mask call only). The program's mask is
 * used as it is when the program handles that signal itself (its own signal may be what it
 * waits for). A sleeping thread needs no signal: cpu mode's timers do not fire while it sleeps,
 * and wall mode walks it without one.
 */
#define _GNU_SOURCE
#include "engine_internal.h"
#include "wait_frames.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Lets an engine's signal pending on the calling thread in now: unblocked for a moment, it is
 * delivered as the mask call returns to user space. The kernel's own call, not sigpending's
 * interposer (which takes the caller for a synchronous reader of the signal). */
static inline __attribute__((always_inline)) void deliver_pending_sample(int signo) {
    sigset_t pending;
    if (syscall(SYS_rt_sigpending, &pending, (size_t)(_NSIG / 8)) != 0 || sigismember(&pending, signo) != 1) return;
    sigset_t only, previous;
    sigemptyset(&only);
    sigaddset(&only, signo);
    ss_real_sigmask(SIG_UNBLOCK, &only, &previous);
    ss_real_sigmask(SIG_SETMASK, &previous, NULL);
}

/* Threads in such a wait now, with the engine's signal blocked by the profiler and not by the
 * program: the mask scan (ThreadScan.swift) takes them as not blocking it, as their own mask
 * for the wait says, rather than disarm them for good. Lock-free; a thread finding no free
 * place is not noted (it may then be disarmed while it waits, until a scan sees it work). */
enum { WAITING_CAPACITY = 256 };
static _Atomic int32_t waiting[WAITING_CAPACITY];

static int enter_wait(void) {
    int32_t tid = ss_current_tid();
    for (int slot = 0; slot < WAITING_CAPACITY; slot++) {
        int32_t free_slot = 0;
        if (atomic_load_explicit(&waiting[slot], memory_order_relaxed) == 0 &&
            atomic_compare_exchange_strong(&waiting[slot], &free_slot, tid))
            return slot;
    }
    return -1;
}

/* Leaves the waiting threads, the wait's errno kept. */
static void finish_wait(int slot) {
    if (slot >= 0) atomic_store(&waiting[slot], 0);
}

int ss_thread_in_masked_wait(int32_t tid) {
    for (int slot = 0; slot < WAITING_CAPACITY; slot++)
        if (atomic_load_explicit(&waiting[slot], memory_order_relaxed) == tid) return 1;
    return 0;
}

/* The mask the wait runs with: `program`'s, or `adjusted` (it, with the engine's signal blocked). */
static inline __attribute__((always_inline)) const sigset_t *wait_mask(const sigset_t *program, sigset_t *adjusted) {
    int signo = ss_engine_signal();
    if (!program || signo <= 0 || ss_tls_excluded || !ss_engine_running() || sigismember(program, signo) != 0 ||
        ss_program_handles_signal(signo))
        return program;
    int saved_errno = errno;
    deliver_pending_sample(signo);
    errno = saved_errno;
    *adjusted = *program;
    sigaddset(adjusted, signo);
    return adjusted;
}

/* The mask the wait runs with (wait_mask), the calling thread noted as waiting (`*slot`) when it
 * is the profiler's adjusted one. */
static inline __attribute__((always_inline)) const sigset_t *begin_wait(const sigset_t *program, sigset_t *adjusted, int *slot) {
    const sigset_t *used = wait_mask(program, adjusted);
    *slot = used == adjusted ? enter_wait() : -1;
    return used;
}

SS_INTERPOSER int ppoll(struct pollfd *fds, nfds_t count, const struct timespec *timeout, const sigset_t *mask) {
    if (!ss_wait_resolve(SS_FRAMED_SLOT_ppoll)) return -1;
    sigset_t adjusted; /* the mask the wait runs with, when the profiler's */
    int slot;          /* the thread's place among the waiting, or -1 */
    int result = ss_framed_ppoll(fds, count, timeout, begin_wait(mask, &adjusted, &slot));
    finish_wait(slot);
    return result;
}

/* ppoll under _FORTIFY_SOURCE. */
SS_INTERPOSER int __ppoll_chk(struct pollfd *fds, nfds_t count, const struct timespec *timeout, const sigset_t *mask, size_t fds_length) {
    if (!ss_wait_resolve(SS_FRAMED_SLOT___ppoll_chk)) return -1;
    sigset_t adjusted; /* the mask the wait runs with, when the profiler's */
    int slot;          /* the thread's place among the waiting, or -1 */
    int result = ss_framed___ppoll_chk(fds, count, timeout, begin_wait(mask, &adjusted, &slot), fds_length);
    finish_wait(slot);
    return result;
}

SS_INTERPOSER int pselect(int count, fd_set *read, fd_set *write, fd_set *except, const struct timespec *timeout, const sigset_t *mask) {
    if (!ss_wait_resolve(SS_FRAMED_SLOT_pselect)) return -1;
    sigset_t adjusted; /* the mask the wait runs with, when the profiler's */
    int slot;          /* the thread's place among the waiting, or -1 */
    int result = ss_framed_pselect(count, read, write, except, timeout, begin_wait(mask, &adjusted, &slot));
    finish_wait(slot);
    return result;
}

SS_INTERPOSER int epoll_pwait(int epoll, struct epoll_event *events, int capacity, int timeout, const sigset_t *mask) {
    if (!ss_wait_resolve(SS_FRAMED_SLOT_epoll_pwait)) return -1;
    sigset_t adjusted; /* the mask the wait runs with, when the profiler's */
    int slot;          /* the thread's place among the waiting, or -1 */
    int result = ss_framed_epoll_pwait(epoll, events, capacity, timeout, begin_wait(mask, &adjusted, &slot));
    finish_wait(slot);
    return result;
}

SS_INTERPOSER int epoll_pwait2(int epoll, struct epoll_event *events, int capacity, const struct timespec *timeout, const sigset_t *mask) {
    if (!ss_wait_resolve(SS_FRAMED_SLOT_epoll_pwait2)) return -1;
    sigset_t adjusted; /* the mask the wait runs with, when the profiler's */
    int slot;          /* the thread's place among the waiting, or -1 */
    int result = ss_framed_epoll_pwait2(epoll, events, capacity, timeout, begin_wait(mask, &adjusted, &slot));
    finish_wait(slot);
    return result;
}

SS_INTERPOSER int sigsuspend(const sigset_t *mask) {
    if (!ss_wait_resolve(SS_FRAMED_SLOT_sigsuspend)) return -1;
    sigset_t adjusted; /* the mask the wait runs with, when the profiler's */
    int slot;          /* the thread's place among the waiting, or -1 */
    int result = ss_framed_sigsuspend(begin_wait(mask, &adjusted, &slot));
    finish_wait(slot);
    return result;
}
