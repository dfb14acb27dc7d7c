/* libgonka_diloco.so from a separate program: this file includes only the
 * public header and the C library, and links only the shared library, as a
 * host process embedding the plugin would. Every error the ABI documents
 * that needs no chain is played: bad arguments, a missing or malformed
 * config, a key open to others, an address in use; then a member opened
 * against a chain that is not there serves its status over HTTP and steps
 * into a CHAIN error, and closes. */
#include <arpa/inet.h>
#include <pthread.h>
#include <time.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plugin/include/gonka_diloco.h"

static int failures;
#define EXPECT(c)                                                             \
    do {                                                                      \
        if (!(c)) {                                                           \
            fprintf(stderr, "%s:%d: EXPECT(%s) failed\n", __FILE__, __LINE__, #c); \
            failures++;                                                       \
        }                                                                     \
    } while (0)

static char g_dir[] = "/tmp/gd-abi-XXXXXX";

static void write_file(const char *name, const char *text, mode_t mode) {
    char path[256];
    snprintf(path, sizeof path, "%s/%s", g_dir, name);
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        perror(path);
        exit(1);
    }
    fputs(text, f);
    fclose(f);
    chmod(path, mode);
}

/* A loopback port nobody listens on now (bound then released). */
static int free_port(int *holder) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &len) != 0)
        exit(1);
    if (holder) {
        listen(fd, 1);
        *holder = fd; /* kept open: the port is in use */
    } else {
        close(fd);
    }
    return ntohs(a.sin_port);
}

static void write_config(const char *name, const char *key, int port) {
    char text[2048];
    snprintf(text, sizeof text,
             "chain:\n  rpc: \"http://127.0.0.1:1\"\n  chain_id: \"test\"\n  key: \"%s/%s\"\n"
             "run: 1\nroles: [worker, validator]\ncollateral: \"100000ngonka\"\n"
             "hardware_class: \"cpu-test\"\nlisten: \"127.0.0.1:%d\"\n"
             "public_url: \"http://127.0.0.1:%d\"\nstate_dir: \"%s/state\"\nthreads: 1\n"
             "log_level: \"error\"\n",
             g_dir, key, port, port, g_dir);
    write_file(name, text, 0600);
}

static char *path_of(const char *name) {
    static char path[256];
    snprintf(path, sizeof path, "%s/%s", g_dir, name);
    return path;
}

/* GET /v1/status over a raw socket: the body's first bytes. */
static int http_status(const char *addr, char *body, size_t cap) {
    const char *colon = strrchr(addr, ':');
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(colon + 1)),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct timeval tv = {5, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0)
        return -1;
    const char req[] = "GET /v1/status HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    if (write(fd, req, sizeof req - 1) < 0)
        return -1;
    size_t got = 0;
    ssize_t n;
    while (got + 1 < cap && (n = read(fd, body + got, cap - 1 - got)) > 0)
        got += (size_t)n;
    body[got] = '\0';
    close(fd);
    return strncmp(body, "HTTP/1.1 200", 12) == 0 ? 0 : -1;
}

static volatile int g_stop;

static void *stop_later(void *arg) {
    (void)arg;
    struct timespec ts = {1, 500000000L};
    nanosleep(&ts, NULL);
    g_stop = 1;
    return NULL;
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(void) {
    if (mkdtemp(g_dir) == NULL)
        return 1;
    EXPECT(gonka_diloco_abi_version() == GONKA_DILOCO_ABI_VERSION);
    EXPECT(strlen(gonka_diloco_version()) > 0);
    char err[512];
    gonka_diloco *h = NULL;
    EXPECT(gonka_diloco_open(NULL, &h, err, sizeof err) == GONKA_DILOCO_ERR_INVALID);
    EXPECT(gonka_diloco_step(NULL, err, sizeof err) == GONKA_DILOCO_ERR_INVALID);
    EXPECT(gonka_diloco_status_json(NULL) == NULL);
    gonka_diloco_close(NULL);

    EXPECT(gonka_diloco_open(path_of("absent.yaml"), &h, err, sizeof err) ==
           GONKA_DILOCO_ERR_CONFIG);
    EXPECT(h == NULL && strstr(err, "absent.yaml") != NULL);
    write_file("bad.yaml", "chain: {rpc: 1}\nnonsense: true\n", 0600);
    EXPECT(gonka_diloco_open(path_of("bad.yaml"), &h, err, sizeof err) == GONKA_DILOCO_ERR_CONFIG);

    /* A key file is 64 hex digits or the key file format, 0600 only. */
    write_file("node.key", "4242424242424242424242424242424242424242424242424242424242424242\n",
               0600);
    write_file("open.key", "4242424242424242424242424242424242424242424242424242424242424242\n",
               0644);
    write_config("open.yaml", "open.key", free_port(NULL));
    EXPECT(gonka_diloco_open(path_of("open.yaml"), &h, err, sizeof err) == GONKA_DILOCO_ERR_KEY);
    EXPECT(strstr(err, "4242") == NULL); /* never the secret */

    int holder = -1;
    write_config("busy.yaml", "node.key", free_port(&holder));
    EXPECT(gonka_diloco_open(path_of("busy.yaml"), &h, err, sizeof err) ==
           GONKA_DILOCO_ERR_LISTEN);
    close(holder);

    write_config("node.yaml", "node.key", free_port(NULL));
    int rc = gonka_diloco_open(path_of("node.yaml"), &h, err, sizeof err);
    EXPECT(rc == GONKA_DILOCO_OK);
    if (rc != GONKA_DILOCO_OK) {
        fprintf(stderr, "open: %s\n", err);
        return 1;
    }
    /* A second daemon on the same state_dir stops at once, naming the first. */
    write_config("twin.yaml", "node.key", free_port(NULL));
    gonka_diloco *twin = NULL;
    EXPECT(gonka_diloco_open(path_of("twin.yaml"), &twin, err, sizeof err) ==
           GONKA_DILOCO_ERR_STATE);
    char pid[32];
    snprintf(pid, sizeof pid, "in use by process %ld", (long)getpid());
    EXPECT(twin == NULL && strstr(err, pid) != NULL);
    const char *addr = gonka_diloco_listen_address(h);
    EXPECT(addr != NULL && strncmp(addr, "127.0.0.1:", 10) == 0);
    char *status = gonka_diloco_status_json(h);
    EXPECT(status != NULL && strstr(status, "\"address\":\"gonka1") != NULL);
    gonka_diloco_free(status);
    char body[8192];
    EXPECT(addr && http_status(addr, body, sizeof body) == 0 && strstr(body, "\"roles\"") != NULL);
    /* No chain at 127.0.0.1:1: a step is a CHAIN error, retryable. */
    EXPECT(gonka_diloco_step(h, err, sizeof err) == GONKA_DILOCO_ERR_CHAIN);
    EXPECT(strlen(err) > 0);
    /* run() waits such an outage out with backoff (it is not fatal) and
     * returns OK once told to stop. */
    pthread_t t;
    double t0 = now();
    EXPECT(pthread_create(&t, NULL, stop_later, NULL) == 0);
    EXPECT(gonka_diloco_run(h, &g_stop, 50, err, sizeof err) == GONKA_DILOCO_OK);
    pthread_join(t, NULL);
    EXPECT(now() - t0 >= 1.4 && now() - t0 < 10);
    EXPECT(gonka_diloco_run(h, NULL, 50, err, sizeof err) == GONKA_DILOCO_ERR_INVALID);
    gonka_diloco_close(h);
    fprintf(stderr, "%s\n", failures ? "FAIL" : "all checks passed");
    return failures ? 1 : 0;
}
