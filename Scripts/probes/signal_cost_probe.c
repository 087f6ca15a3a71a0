/* signal_cost_probe: gap_probe (which see) with a signal source of its own and an empty
 * handler, no profiler, to split what a sample costs the sampled thread into the kernel's parts.
 *
 *   signal_cost_probe MODE [PERIOD_NS]      (1 s of its own CPU; prints gaps, lost_ms, signals)
 *
 * MODE: none; count (a task-clock counter counting, not sampling: its context-switch hooks);
 * hrt (a sampling task-clock counter, no signal: the hrtimer interrupt alone); sig (the perf
 * engine's mechanism: O_ASYNC, F_SETSIG, F_SETOWN_EX to this thread, an empty handler);
 * sigmmap (sig with the control page mapped); ioctl (sig with PERF_EVENT_IOC_PERIOD in every
 * handler call); ptimer (a POSIX timer on the thread's CPU clock, the timer engine's);
 * itimer (setitimer ITIMER_PROF, gperftools'). Run each interleaved with `none` and take the
 * difference of lost_ms per signal (or per extra gap for hrt).
 *
 * Build (from the repository): gcc -O2 -o signal_cost_probe Scripts/probes/signal_cost_probe.c */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
static volatile long signals; static int with_ioctl;
static void handler(int s, siginfo_t *i, void *c) { (void)s; (void)c; signals++;
  if (with_ioctl && i->si_code == POLL_IN) { uint64_t p = 1000000; ioctl(i->si_fd, PERF_EVENT_IOC_PERIOD, &p); } }
static inline uint64_t ns(clockid_t c) { struct timespec t; clock_gettime(c, &t); return (uint64_t)t.tv_sec * 1000000000u + t.tv_nsec; }
int main(int argc, char **argv) {
  if (argc < 2) { fprintf(stderr, "usage: signal_cost_probe MODE [PERIOD_NS]\n"); return 2; }
  const char *mode = argv[1]; long period = argc > 2 ? atol(argv[2]) : 1000000;
  struct sigaction sa; memset(&sa, 0, sizeof sa); sa.sa_sigaction = handler; sa.sa_flags = SA_SIGINFO | SA_RESTART; sigaction(SIGPROF, &sa, NULL);
  int tid = syscall(SYS_gettid);
  if (strcmp(mode, "none") && strcmp(mode, "ptimer") && strcmp(mode, "itimer")) {
    struct perf_event_attr a; memset(&a, 0, sizeof a); a.size = sizeof a; a.type = PERF_TYPE_SOFTWARE; a.config = PERF_COUNT_SW_TASK_CLOCK;
    a.sample_period = strcmp(mode, "count") ? (uint64_t)period : 0; a.exclude_kernel = 1; a.exclude_hv = 1; a.wakeup_events = 1;
    int fd = syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0) { perror("open"); return 1; }
    if (!strncmp(mode, "sig", 3) || !strcmp(mode, "ioctl")) { struct f_owner_ex o = {F_OWNER_TID, tid}; fcntl(fd, F_SETOWN_EX, &o); fcntl(fd, F_SETSIG, SIGPROF); fcntl(fd, F_SETFL, O_ASYNC); }
    if (!strcmp(mode, "sigmmap") || !strcmp(mode, "ioctl")) mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
    with_ioctl = !strcmp(mode, "ioctl");
  } else if (!strcmp(mode, "ptimer")) {
    struct sigevent ev; memset(&ev, 0, sizeof ev); ev.sigev_notify = SIGEV_THREAD_ID; ev.sigev_signo = SIGPROF; ev._sigev_un._tid = tid;
    timer_t t; syscall(SYS_timer_create, CLOCK_THREAD_CPUTIME_ID, &ev, &t);
    struct itimerspec v = {{0, period}, {0, period}}; timer_settime(t, 0, &v, NULL);
  } else if (!strcmp(mode, "itimer")) { struct itimerval v = {{0, period / 1000}, {0, period / 1000}}; setitimer(ITIMER_PROF, &v, NULL); }
  uint64_t last = ns(CLOCK_MONOTONIC), loops = 0, c0 = ns(CLOCK_THREAD_CPUTIME_ID), gaps = 0, lost = 0;
  for (;;) { uint64_t now = ns(CLOCK_MONOTONIC), g = now - last; last = now; if (g > 1500 && g < 200000) { gaps++; lost += g; }
    if ((++loops & 4095) == 0 && ns(CLOCK_THREAD_CPUTIME_ID) - c0 >= 1000000000u) break; }
  printf("gaps %llu lost_ms %.3f signals %ld\n", (unsigned long long)gaps, lost * 1e-6, signals);
  return 0;
}
