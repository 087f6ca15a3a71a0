/* Calls the C library's blocking calls that the profiler passes through its frames
 * (wait_frames.c) with arguments whose effect shows, and checks each result and errno against
 * what the C library alone gives: the seventh argument of syscall (on the stack), the sixth of
 * recvfrom, error numbers returned and set. Prints `wrong NAME …` for each that differs and
 * `checked N` at the end; exits 1 if any differed. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <string.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int checked, wrong;

/* Checks `call`'s result against `wanted`, and its errno against `wanted_error` where it fails with -1. */
#define EXPECT(name, call, wanted, wanted_error)                                                              \
    do {                                                                                                      \
        errno = 0;                                                                                            \
        long result = (long)(call);                                                                           \
        int error = errno;                                                                                    \
        checked++;                                                                                            \
        if (result != (long)(wanted) || ((long)(wanted) == -1 && error != (wanted_error))) {                  \
            wrong++;                                                                                          \
            printf("wrong %s: %ld (errno %d), wanted %ld (errno %d)\n", name, result, error, (long)(wanted), wanted_error); \
        }                                                                                                     \
    } while (0)

int main(void) {
    /* The seventh argument: a bitset of 0 is refused, any other times out. */
    int word = 0;
    struct timespec short_wait = {0, 1000000};
    EXPECT("syscall futex bitset 0", syscall(SYS_futex, &word, FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG, 0, &short_wait, NULL, 0), -1, EINVAL);
    EXPECT("syscall futex bitset 1", syscall(SYS_futex, &word, FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG, 0, &short_wait, NULL, 1), -1, ETIMEDOUT);
    EXPECT("syscall getpid", syscall(SYS_getpid), getpid(), 0);

    char byte;
    EXPECT("read of -1", read(-1, &byte, 1), -1, EBADF);
    struct timespec invalid = {0, 2000000000};
    EXPECT("nanosleep of 2e9 ns", nanosleep(&invalid, NULL), -1, EINVAL);
    EXPECT("clock_nanosleep of a bad clock", clock_nanosleep(-99, 0, &short_wait, NULL), EINVAL, 0);
    EXPECT("poll of nothing", poll(NULL, 0, 1), 0, 0);
    struct timeval tenth = {0, 1000};
    EXPECT("select of nothing", select(0, NULL, NULL, NULL, &tenth), 0, 0);

    /* recvfrom's sixth argument: the address length it writes. */
    int pair[2];
    if (socketpair(AF_UNIX, SOCK_DGRAM, 0, pair) != 0) return 2;
    if (write(pair[0], "x", 1) != 1) return 2;
    struct sockaddr_storage from;
    socklen_t length = sizeof from;
    EXPECT("recvfrom", recvfrom(pair[1], &byte, 1, 0, (struct sockaddr *)&from, &length), 1, 0);
    EXPECT("recvfrom's address length", length < sizeof from, 1, 0);

    pthread_mutexattr_t attributes;
    pthread_mutexattr_init(&attributes);
    pthread_mutexattr_settype(&attributes, PTHREAD_MUTEX_ERRORCHECK);
    pthread_mutex_t mutex;
    pthread_mutex_init(&mutex, &attributes);
    EXPECT("pthread_mutex_lock", pthread_mutex_lock(&mutex), 0, 0);
    EXPECT("pthread_mutex_lock held", pthread_mutex_lock(&mutex), EDEADLK, 0);
    struct timespec past = {0, 0};
    sem_t semaphore;
    sem_init(&semaphore, 0, 0);
    EXPECT("sem_timedwait", sem_timedwait(&semaphore, &past), -1, ETIMEDOUT);
    EXPECT("waitpid without children", waitpid(-1, NULL, WNOHANG), -1, ECHILD);

    printf("checked %d\n", checked);
    return wrong ? 1 : 0;
}
