/* A test's own binary run again as a child ("SELF child ARG FD") to be
 * killed with SIGKILL partway through what it does: the crash tests of
 * the segment-start writer and the streamed aggregate. The child writes
 * one byte to FD when its set-up is done (gd_test_child_ready), so a kill
 * is timed from where the work starts, not from exec. */
#ifndef GD_TESTS_SUPPORT_KILL_CHILD_H
#define GD_TESTS_SUPPORT_KILL_CHILD_H

#include <stdbool.h>
#include <sys/types.h>

/* Starts the child with ARG and waits for its ready byte (the test fails
 * and *pid is -1 if it exits first). */
void gd_test_child_start(pid_t *pid, const char *arg);
/* Waits for the child: its run time from ready to exit in *ns, and whether
 * it exited with status 0. */
bool gd_test_child_wait(pid_t pid, long *ns);
/* Kills the child ns after it was ready; true if the kill landed (the
 * child had not finished). */
bool gd_test_child_kill_after(pid_t pid, long ns);
/* In the child: its set-up is done (fd is argv's FD). */
void gd_test_child_ready(int fd);

#endif
