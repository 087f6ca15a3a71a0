// Threads that sleep two calls deep, each in another of the C library's blocking calls:
// nanosleep, poll, epoll_wait, read of a pipe, a std::condition_variable's timed wait (a futex),
// and ppoll and epoll_pwait with a signal mask (which the profiler interposes), 20 ms at a time, for SECONDS (argument 1). Built with and without frame pointers by
// the tests: a sleeping thread's stack must reach `X_thread;X_middle;X_leaf` either way.
// Prints `rounds NAME N` per thread at the end.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>
#include <poll.h>
#include <signal.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

static std::atomic<bool> stopping{false};
static int wakeup_pipe[2];     // never written: poll and epoll_wait time out
static int feed_pipe[2];       // written every 20 ms by the main thread, read by read_thread
static std::mutex lock;
static std::condition_variable never_notified;

#define KEEP_FRAME() __asm__ volatile("")

extern "C" {
__attribute__((noinline)) void nap_leaf() { timespec t{0, 20000000}; nanosleep(&t, nullptr); KEEP_FRAME(); }
__attribute__((noinline)) void nap_middle() { nap_leaf(); KEEP_FRAME(); }

__attribute__((noinline)) void poll_leaf() { pollfd fd{wakeup_pipe[0], POLLIN, 0}; poll(&fd, 1, 20); KEEP_FRAME(); }
__attribute__((noinline)) void poll_middle() { poll_leaf(); KEEP_FRAME(); }

__attribute__((noinline)) void epoll_leaf(int epoll) { epoll_event event; epoll_wait(epoll, &event, 1, 20); KEEP_FRAME(); }
__attribute__((noinline)) void epoll_middle(int epoll) { epoll_leaf(epoll); KEEP_FRAME(); }

__attribute__((noinline)) void ppoll_leaf() {
    pollfd fd{wakeup_pipe[0], POLLIN, 0};
    timespec timeout{0, 20000000};
    sigset_t mask;
    sigemptyset(&mask);
    ppoll(&fd, 1, &timeout, &mask);
    KEEP_FRAME();
}
__attribute__((noinline)) void ppoll_middle() { ppoll_leaf(); KEEP_FRAME(); }

__attribute__((noinline)) void pwait_leaf(int epoll) {
    epoll_event event;
    sigset_t mask;
    sigemptyset(&mask);
    epoll_pwait(epoll, &event, 1, 20, &mask);
    KEEP_FRAME();
}
__attribute__((noinline)) void pwait_middle(int epoll) { pwait_leaf(epoll); KEEP_FRAME(); }

__attribute__((noinline)) void read_leaf() { char byte; if (read(feed_pipe[0], &byte, 1) < 0) std::abort(); KEEP_FRAME(); }
__attribute__((noinline)) void read_middle() { read_leaf(); KEEP_FRAME(); }

__attribute__((noinline)) void futex_leaf() {
    std::unique_lock<std::mutex> held(lock);
    never_notified.wait_for(held, std::chrono::milliseconds(20));
    KEEP_FRAME();
}
__attribute__((noinline)) void futex_middle() { futex_leaf(); KEEP_FRAME(); }
}

template <typename Body> static void run(const char *name, Body body) {
    long rounds = 0;
    while (!stopping.load()) { body(); rounds++; }
    std::printf("rounds %s %ld\n", name, rounds);
}

extern "C" {
__attribute__((noinline)) void nap_thread() { run("nap", nap_middle); KEEP_FRAME(); }
__attribute__((noinline)) void poll_thread() { run("poll", poll_middle); KEEP_FRAME(); }
// Runs `wait` on an epoll instance watching the wakeup pipe.
static void run_on_epoll(const char *name, void (*wait)(int)) {
    int epoll = epoll_create1(0);
    epoll_event event{EPOLLIN, {}};
    epoll_ctl(epoll, EPOLL_CTL_ADD, wakeup_pipe[0], &event);
    run(name, [epoll, wait] { wait(epoll); });
    close(epoll);
}
__attribute__((noinline)) void epoll_thread() { run_on_epoll("epoll", epoll_middle); KEEP_FRAME(); }
__attribute__((noinline)) void ppoll_thread() { run("ppoll", ppoll_middle); KEEP_FRAME(); }
__attribute__((noinline)) void pwait_thread() { run_on_epoll("pwait", pwait_middle); KEEP_FRAME(); }
__attribute__((noinline)) void read_thread() { run("read", read_middle); KEEP_FRAME(); }
__attribute__((noinline)) void futex_thread() { run("futex", futex_middle); KEEP_FRAME(); }
}

int main(int argc, char **argv) {
    double seconds = argc > 1 ? std::atof(argv[1]) : 2.0;
    if (pipe(wakeup_pipe) != 0 || pipe(feed_pipe) != 0) return 1;
    std::vector<std::thread> threads;
    threads.emplace_back(nap_thread);
    threads.emplace_back(poll_thread);
    threads.emplace_back(epoll_thread);
    threads.emplace_back(read_thread);
    threads.emplace_back(futex_thread);
    threads.emplace_back(ppoll_thread);
    threads.emplace_back(pwait_thread);
    auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < end) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        if (write(feed_pipe[1], "x", 1) != 1) return 1;
    }
    stopping = true;
    if (write(feed_pipe[1], "x", 1) != 1) return 1;
    for (auto &thread : threads) thread.join();
    std::fflush(stdout);
    return 0;
}
