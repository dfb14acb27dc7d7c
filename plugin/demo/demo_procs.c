/* The demo's children and its temporary home (see demo_procs.h). */
#include "plugin/demo/demo_procs.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/file.h"

extern char **environ;

/* The signals that stop the demo; what their handlers were before. */
static const int k_stop_signals[] = {SIGINT, SIGTERM, SIGHUP};
#define GD_DEMO_N_STOP (sizeof k_stop_signals / sizeof k_stop_signals[0])
static struct sigaction g_old[GD_DEMO_N_STOP], g_old_pipe;
static volatile sig_atomic_t g_stop_signal;

static void gd_demo_on_signal(int sig) { g_stop_signal = sig; }

void gd_demo_signals_catch(void) {
    g_stop_signal = 0;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = gd_demo_on_signal;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < GD_DEMO_N_STOP; i++)
        sigaction(k_stop_signals[i], &sa, &g_old[i]);
    struct sigaction ign;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &ign, &g_old_pipe);
}

void gd_demo_signals_restore(void) {
    for (size_t i = 0; i < GD_DEMO_N_STOP; i++)
        sigaction(k_stop_signals[i], &g_old[i], NULL);
    sigaction(SIGPIPE, &g_old_pipe, NULL);
}

gd_status gd_demo_check_stop(void) {
    int sig = g_stop_signal;
    if (sig == 0)
        return GD_OK;
    return gd_fail(GD_ERR_IO, "stopped by %s", sig == SIGINT    ? "SIGINT"
                                               : sig == SIGTERM ? "SIGTERM"
                                                                : "SIGHUP");
}

void gd_demo_sleep_ms(long ms) {
    /* In slices, so a stop signal is seen within 50 ms whatever nanosleep
     * does with it. */
    while (ms > 0 && g_stop_signal == 0) {
        long slice = ms < 50 ? ms : 50;
        struct timespec ts = {0, slice * 1000000L};
        nanosleep(&ts, NULL);
        ms -= slice;
    }
}

/* In the child, between fork and exec: only async-signal-safe calls. It
 * asks for SIGTERM when the demo dies, even by SIGKILL, which no handler
 * sees (so no daemon or chain outlives it); gets the default handlers of
 * the signals the demo catches or ignores (an ignored SIGINT, as a
 * background job gets, would survive exec) and no blocked ones; reads
 * /dev/null and writes its log. An exec that fails writes its errno to the
 * pipe. */
static void gd_demo_child(pid_t parent, const char *log, char *const argv[], int report) {
    if (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 || getppid() != parent)
        _exit(127); /* the demo is already gone */
    for (size_t i = 0; i < GD_DEMO_N_STOP; i++)
        signal(k_stop_signals[i], SIG_DFL);
    signal(SIGPIPE, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    int in = open("/dev/null", O_RDONLY);
    int out = open(log, O_WRONLY | O_CREAT | O_APPEND, 0600);
    if (in >= 0 && out >= 0 && dup2(in, STDIN_FILENO) >= 0 && dup2(out, STDOUT_FILENO) >= 0 &&
        dup2(out, STDERR_FILENO) >= 0)
        execve(argv[0], argv, environ);
    int e = errno;
    ssize_t w = write(report, &e, sizeof e);
    (void)w;
    _exit(127);
}

gd_status gd_demo_spawn(gd_demo_procs *ps, const char *name, const char *log,
                        char *const argv[], size_t *index) {
    if (ps->n == GD_DEMO_PROCS_MAX)
        return gd_fail(GD_ERR_LIMIT, "more than %d children", GD_DEMO_PROCS_MAX);
    gd_demo_proc *p = &ps->p[ps->n];
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "%s", name);
    snprintf(p->log, sizeof p->log, "%s", log);
    int report[2];
    if (pipe2(report, O_CLOEXEC) != 0)
        return gd_fail(GD_ERR_IO, "cannot start %s: %s", name, strerror(errno));
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0) {
        close(report[0]);
        gd_demo_child(parent, log, argv, report[1]);
    }
    int fork_errno = errno;
    close(report[1]);
    int exec_errno = 0;
    ssize_t got = 0;
    if (pid > 0)
        do
            got = read(report[0], &exec_errno, sizeof exec_errno);
        while (got < 0 && errno == EINTR);
    close(report[0]);
    if (pid < 0)
        return gd_fail(GD_ERR_IO, "cannot start %s: %s", name, strerror(fork_errno));
    if (got == (ssize_t)sizeof exec_errno) {
        int st = 0;
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
        }
        return gd_fail(GD_ERR_IO, "cannot start %s (%s): %s", name, argv[0],
                       strerror(exec_errno));
    }
    p->pid = pid;
    if (index)
        *index = ps->n;
    ps->n++;
    return GD_OK;
}

/* Reaps child i if it ended (blocking when wait is set). */
static void gd_demo_reap(gd_demo_proc *p, bool wait) {
    if (p->pid <= 0)
        return;
    int st = 0;
    pid_t got;
    do
        got = waitpid(p->pid, &st, wait ? 0 : WNOHANG);
    while (got < 0 && errno == EINTR);
    if (got == p->pid || (got < 0 && errno == ECHILD)) {
        p->status = got == p->pid ? st : 0;
        p->pid = 0;
    }
}

bool gd_demo_running(gd_demo_procs *ps, size_t i) {
    gd_demo_reap(&ps->p[i], false);
    return ps->p[i].pid > 0;
}

gd_status gd_demo_wait(gd_demo_procs *ps, size_t i, long timeout_ms, int *exit_code) {
    for (long waited = 0; gd_demo_running(ps, i); waited += 20) {
        GD_TRY(gd_demo_check_stop());
        if (waited >= timeout_ms)
            return gd_fail(GD_ERR_TIMEOUT, "%s did not finish in %ld s", ps->p[i].name,
                           timeout_ms / 1000);
        gd_demo_sleep_ms(20);
    }
    int st = ps->p[i].status;
    ps->p[i].waited = true;
    *exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return GD_OK;
}

void gd_demo_exit_text(const gd_demo_proc *p, char *out, size_t cap) {
    if (p->pid > 0)
        snprintf(out, cap, "still running");
    else if (WIFEXITED(p->status))
        snprintf(out, cap, "exit status %d", WEXITSTATUS(p->status));
    else if (WIFSIGNALED(p->status))
        snprintf(out, cap, "signal %d", WTERMSIG(p->status));
    else
        snprintf(out, cap, "ended");
}

void gd_demo_stop_all(gd_demo_procs *ps, long grace_ms) {
    for (size_t i = 0; i < ps->n; i++)
        if (gd_demo_running(ps, i))
            kill(ps->p[i].pid, SIGTERM);
    /* Not gd_demo_sleep_ms: this runs after a stop signal too. */
    for (long waited = 0; waited < grace_ms; waited += 20) {
        bool any = false;
        for (size_t i = 0; i < ps->n; i++)
            any |= gd_demo_running(ps, i);
        if (!any)
            return;
        struct timespec ts = {0, 20 * 1000000L};
        nanosleep(&ts, NULL);
    }
    for (size_t i = 0; i < ps->n; i++)
        if (gd_demo_running(ps, i)) {
            kill(ps->p[i].pid, SIGKILL);
            gd_demo_reap(&ps->p[i], true);
        }
}

void gd_demo_log_tail(const gd_demo_proc *p, FILE *f, int lines) {
    int fd;
    struct stat st;
    if (gd_file_open_regular(p->log, 0, &fd, &st) != GD_OK)
        return;
    FILE *in = fdopen(fd, "r");
    if (in == NULL) {
        close(fd);
        return;
    }
    /* The last 8 KiB hold more lines than anyone wants to see here. */
    char buf[8192];
    if (fseek(in, 0, SEEK_END) == 0) {
        long end = ftell(in);
        fseek(in, end > (long)sizeof buf - 1 ? end - (long)sizeof buf + 1 : 0, SEEK_SET);
    }
    size_t len = fread(buf, 1, sizeof buf - 1, in);
    fclose(in);
    buf[len] = 0;
    while (len > 0 && buf[len - 1] == '\n')
        buf[--len] = 0;
    size_t start = len;
    for (int seen = 0; start > 0; start--)
        if (buf[start - 1] == '\n' && ++seen == lines)
            break;
    for (char *save = NULL, *line = strtok_r(buf + start, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save))
        fprintf(f, "  %s| %s\n", p->name, line);
}

static int gd_demo_remove_entry(const char *path, const struct stat *sb, int flag,
                                struct FTW *ftw) {
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path) == 0 || errno == ENOENT ? 0 : -1;
}

gd_status gd_demo_remove_tree(const char *dir) {
    if (nftw(dir, gd_demo_remove_entry, 16, FTW_DEPTH | FTW_PHYS) != 0 && errno != ENOENT)
        return gd_fail(GD_ERR_IO, "cannot remove %s: %s", dir, strerror(errno));
    return GD_OK;
}
