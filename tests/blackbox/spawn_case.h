/* spawn_case: runs this test program again as a child with one argument
 * (the case), its stderr gathered into a buffer: for the tests whose
 * cases end a process or check what sgc prints (bad_free,
 * out_of_memory). */
#ifndef SGC_TESTS_SPAWN_CASE_H
#define SGC_TESTS_SPAWN_CASE_H

#include <errno.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

/* Runs /proc/self/exe with argv[1] = MODE; returns its wait status, its
 * stderr in BUF (CAP bytes, NUL-terminated). */
static T_UNUSED int spawn_case(const char *mode, char *buf, size_t cap)
{
    const char *self = "/proc/self/exe";
    int pfd[2];
    CHECK(pipe(pfd) == 0);
    pid_t pid = fork();
    CHECK(pid >= 0, "fork: %s", strerror(errno));
    if (pid == 0) {
        dup2(pfd[1], 2);
        close(pfd[0]);
        close(pfd[1]);
        /* no core dumps for the expected aborts */
        struct rlimit nocore = {0, 0};
        setrlimit(RLIMIT_CORE, &nocore);
        signal(SIGABRT, SIG_DFL);
        execl(self, self, mode, (char *)NULL);
        _exit(127);
    }
    close(pfd[1]);
    size_t len = 0;
    ssize_t r;
    while ((r = read(pfd[0], buf + len, cap - 1 - len)) > 0 ||
           (r < 0 && errno == EINTR))
        if (r > 0)
            len += (size_t)r;
    buf[len] = 0;
    close(pfd[0]);
    int st;
    while (waitpid(pid, &st, 0) < 0)
        CHECK(errno == EINTR);
    return st;
}

static T_UNUSED void spawn_case_on_alarm(int sig)
{
    (void)sig;
    static const char msg[] = "] still running past its alarm: a hang\n";
    if (write(2, "FAIL [", 6) < 0 ||
        write(2, t_test_name, strlen(t_test_name)) < 0 ||
        write(2, msg, sizeof msg - 1) < 0)
        _exit(3);
    _exit(3);
}

/* In a case that could hang: after SECONDS it ends with status 3 and a
 * FAIL line, so a hang fails the case, not the test's time limit. */
static T_UNUSED void spawn_case_alarm(unsigned seconds)
{
    signal(SIGALRM, spawn_case_on_alarm);
    alarm(seconds);
}

/* Runs case MODE and checks it exited 0 having printed MARKER; its
 * output is left in BUF for further checks. */
static T_UNUSED void spawn_case_expect_exit0(const char *mode, const char *marker, char *buf,
                                            size_t cap)
{
    int st = spawn_case(mode, buf, cap);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0 && strstr(buf, marker),
          "%s: wanted exit 0 after \"%s\", got status %#x: %s", mode, marker, st, buf);
}

#endif
