/* Children killed partway (tests/support/kill_child.h). */
#include "tests/support/kill_child.h"

#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/support/testkit.h"

static struct timespec g_ready; /* when the current child said it was ready */

void gd_test_child_start(pid_t *pid, const char *arg) {
    char self[4096];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    CHECK(len > 0);
    self[len > 0 ? len : 0] = '\0';
    int ready[2];
    CHECK(pipe(ready) == 0);
    char fd[16];
    snprintf(fd, sizeof fd, "%d", ready[1]);
    *pid = fork();
    if (*pid == 0) {
        close(ready[0]);
        execl(self, self, "child", arg, fd, (char *)NULL);
        _exit(127);
    }
    CHECK(*pid > 0);
    close(ready[1]);
    char byte = 0;
    if (read(ready[0], &byte, 1) != 1) { /* it exited before its set-up was done */
        CHECK(false);
        int status = 0;
        waitpid(*pid, &status, 0);
        *pid = -1;
    }
    close(ready[0]);
    clock_gettime(CLOCK_MONOTONIC, &g_ready);
}

static long gd_since_ready_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (now.tv_sec - g_ready.tv_sec) * 1000000000L + (now.tv_nsec - g_ready.tv_nsec);
}

bool gd_test_child_wait(pid_t pid, long *ns) {
    int status = 0;
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
    *ns = gd_since_ready_ns();
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

bool gd_test_child_kill_after(pid_t pid, long ns) {
    if (pid <= 0)
        return false;
    nanosleep(&(struct timespec){ns / 1000000000L, ns % 1000000000L}, NULL);
    kill(pid, SIGKILL);
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
}

void gd_test_child_ready(int fd) {
    if (write(fd, "r", 1) != 1)
        _exit(3);
    close(fd);
}
