// unwind_code: code an unwinder must follow, in phases of argv[1] seconds of CPU each (default
// 0.3): C++ exceptions thrown through a few frames (libstdc++, libgcc's unwinder, the loader's
// _dl_find_object), a SIGALRM handler of its own doing work (samples inside it walk through the
// kernel's signal frame), short libc calls through the PLT, clock_gettime (the vDSO), and qsort
// (libc calling back into the program). Prints `done`.
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <stdexcept>
#include <sys/time.h>

#define SAMPLED_FUNCTION __attribute__((noinline, noipa))

static volatile unsigned long sink;
static volatile sig_atomic_t alarms;

static double cpu_seconds() {
    timespec now;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
    return (double)now.tv_sec + (double)now.tv_nsec * 1e-9;
}

SAMPLED_FUNCTION static void thrower(int depth) {
    if (depth == 0) throw std::runtime_error("unwind me");
    thrower(depth - 1);
    sink = sink + 1;
}

SAMPLED_FUNCTION static void exceptions(double seconds) {
    for (double end = cpu_seconds() + seconds; cpu_seconds() < end;) {
        for (int i = 0; i < 100; i++) {
            try { thrower(i % 8); } catch (const std::exception &error) { sink = sink + std::strlen(error.what()); }
        }
    }
}

SAMPLED_FUNCTION static unsigned long handler_work(unsigned long seed) {
    for (int i = 0; i < 20000; i++) seed = seed * 6364136223846793005ul + 1442695040888963407ul;
    return seed;
}

static void on_alarm(int) {
    sink = sink + handler_work(sink);
    alarms = alarms + 1;
}

SAMPLED_FUNCTION static void own_handler(double seconds) {
    struct sigaction action = {};
    action.sa_handler = on_alarm;
    action.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &action, nullptr);
    itimerval every = {{0, 200}, {0, 200}};
    setitimer(ITIMER_REAL, &every, nullptr);
    for (double end = cpu_seconds() + seconds; cpu_seconds() < end;) sink = sink + handler_work(sink) % 7;
    itimerval off = {};
    setitimer(ITIMER_REAL, &off, nullptr);
}

SAMPLED_FUNCTION static void plt_calls(double seconds) {
    char text[8] = "abcdefg";
    for (double end = cpu_seconds() + seconds; cpu_seconds() < end;)
        for (int i = 0; i < 100000; i++) {
            text[i & 7 ? i & 7 : 1] = (char)('a' + (i & 15));
            sink = sink + std::strlen(text) + (unsigned long)std::abs(std::atoi(text + 7));
        }
}

SAMPLED_FUNCTION static void clock_reads(double seconds) {
    timespec now;
    for (double end = cpu_seconds() + seconds; cpu_seconds() < end;)
        for (int i = 0; i < 1000; i++) {
            clock_gettime(CLOCK_MONOTONIC, &now);
            sink = sink + (unsigned long)now.tv_nsec;
        }
}

static int by_value(const void *a, const void *b) {
    unsigned x = *static_cast<const unsigned *>(a), y = *static_cast<const unsigned *>(b);
    return x < y ? -1 : x > y;
}

SAMPLED_FUNCTION static void sorting(double seconds) {
    static unsigned values[4096];
    for (double end = cpu_seconds() + seconds; cpu_seconds() < end;) {
        for (unsigned i = 0; i < 4096; i++) values[i] = (i * 2654435761u) ^ (unsigned)sink;
        std::qsort(values, 4096, sizeof values[0], by_value);
        sink = sink + values[0];
    }
}

int main(int argc, char **argv) {
    double seconds = argc > 1 ? std::strtod(argv[1], nullptr) : 0.3;
    exceptions(seconds);
    own_handler(seconds);
    plt_calls(seconds);
    clock_reads(seconds);
    sorting(seconds);
    std::printf("alarms %d\ndone\n", (int)alarms);
    return 0;
}
