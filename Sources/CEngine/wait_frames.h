/*
 * The blocking calls passed through a frame that saves the frame pointer (wait_frames.c): those
 * the engine stands in for with that frame alone, and those it interposes in C for its signal,
 * which call the C library's through a hidden frame of the same kind (ss_framed_NAME).
 */
#ifndef SS_WAIT_FRAMES_H
#define SS_WAIT_FRAMES_H

#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <sys/epoll.h>
#include <sys/select.h>

/* The blocking calls passed through, by slot. */
#define SS_WAIT_FUNCTIONS(X)                                                                             \
    X(0, nanosleep) X(1, clock_nanosleep) X(2, usleep) X(3, sleep) X(4, pause) X(5, poll) X(6, select)   \
    X(7, epoll_wait) X(8, read) X(9, readv) X(10, pread) X(11, pread64) X(12, recv) X(13, recvfrom)      \
    X(14, recvmsg) X(15, recvmmsg) X(16, accept) X(17, accept4) X(18, connect) X(19, wait)               \
    X(20, waitpid) X(21, wait4) X(22, waitid) X(23, pthread_join) X(24, pthread_timedjoin_np)            \
    X(25, pthread_clockjoin_np) X(26, pthread_cond_wait) X(27, pthread_cond_timedwait)                   \
    X(28, pthread_cond_clockwait) X(29, pthread_mutex_lock) X(30, pthread_mutex_timedlock)               \
    X(31, pthread_mutex_clocklock) X(32, pthread_rwlock_rdlock) X(33, pthread_rwlock_wrlock)             \
    X(34, pthread_rwlock_timedrdlock) X(35, pthread_rwlock_timedwrlock) X(36, pthread_barrier_wait)      \
    X(37, sem_wait) X(38, sem_timedwait) X(39, sem_clockwait) X(40, syscall) X(41, flock) X(42, msgrcv)

/* The calls interposed in C, by slot (after those above). */
#define SS_FRAMED_CALLS(X)                                                                             \
    X(43, ppoll) X(44, __ppoll_chk) X(45, pselect) X(46, epoll_pwait) X(47, epoll_pwait2) X(48, sigsuspend) \
    X(49, sigwait) X(50, sigwaitinfo) X(51, sigtimedwait)

enum { SS_WAIT_SLOT_COUNT = 52 };

#define SS_FRAMED_SLOT(slot, name) SS_FRAMED_SLOT_##name = slot,
enum { SS_FRAMED_CALLS(SS_FRAMED_SLOT) };
#undef SS_FRAMED_SLOT

/* ppoll under _FORTIFY_SOURCE, which the C library's headers declare only then. */
int __ppoll_chk(struct pollfd *fds, nfds_t count, const struct timespec *timeout, const sigset_t *mask, size_t fds_length);

/* The C library's NAME, called through a frame that saves the frame pointer. */
#define SS_FRAMED_DECLARE(slot, name) __attribute__((visibility("hidden"))) __typeof__(name) ss_framed_##name;
SS_FRAMED_CALLS(SS_FRAMED_DECLARE)
#undef SS_FRAMED_DECLARE

/* The C library's function of `slot`, looked up now if it was not yet; NULL (errno ENOSYS) if
 * it has none. */
__attribute__((visibility("hidden"))) void *ss_wait_resolve(long slot);

#endif
