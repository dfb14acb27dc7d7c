/* Listening sockets for the HTTP servers (common/listen.h). */
#include "common/listen.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/parse.h"

/* Connections the kernel queues before the server accepts them; the
 * server's own connection limit is what bounds work. */
#define GD_LISTEN_BACKLOG 128

typedef struct gd_listen_addr {
    struct sockaddr_storage ss;
    socklen_t len;
} gd_listen_addr;

static gd_status gd_listen_port(const char *address, const char *text, uint16_t *port) {
    uint64_t v;
    if (gd_parse_u64(&v, text) != GD_OK || v > 65535)
        return gd_fail(GD_ERR_INVALID, "listen address '%s': the port must be 0..65535", address);
    *port = (uint16_t)v;
    return GD_OK;
}

/* Splits "host:port" or "[v6]:port" into host text and the port's text. */
static gd_status gd_listen_split(const char *address, char *host, size_t host_cap,
                                 const char **port_text, bool *v6) {
    const char *host_start = address, *host_end;
    *v6 = address[0] == '[';
    if (*v6) {
        host_start++;
        host_end = strchr(host_start, ']');
        if (host_end == NULL || host_end[1] != ':')
            return gd_fail(GD_ERR_INVALID, "listen address '%s' must be [v6]:port", address);
        *port_text = host_end + 2;
    } else {
        host_end = strrchr(address, ':');
        if (host_end == NULL)
            return gd_fail(GD_ERR_INVALID, "listen address '%s' must be host:port", address);
        *port_text = host_end + 1;
    }
    size_t len = (size_t)(host_end - host_start);
    if (len == 0 || len >= host_cap)
        return gd_fail(GD_ERR_INVALID, "listen address '%s' has a bad host", address);
    memcpy(host, host_start, len);
    host[len] = '\0';
    return GD_OK;
}

static gd_status gd_listen_parse(const char *address, gd_listen_addr *addr, bool *loopback) {
    char host[INET6_ADDRSTRLEN];
    const char *port_text = NULL;
    bool v6;
    uint16_t port;
    GD_TRY(gd_listen_split(address, host, sizeof host, &port_text, &v6));
    GD_TRY(gd_listen_port(address, port_text, &port));
    memset(addr, 0, sizeof *addr);
    if (v6) {
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&addr->ss;
        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons(port);
        if (inet_pton(AF_INET6, host, &in6->sin6_addr) != 1)
            return gd_fail(GD_ERR_INVALID, "listen address '%s': bad IPv6 address", address);
        addr->len = sizeof *in6;
        *loopback = IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr);
        return GD_OK;
    }
    struct sockaddr_in *in = (struct sockaddr_in *)&addr->ss;
    in->sin_family = AF_INET;
    in->sin_port = htons(port);
    if (inet_pton(AF_INET, strcmp(host, "localhost") == 0 ? "127.0.0.1" : host, &in->sin_addr) != 1)
        return gd_fail(GD_ERR_INVALID, "listen address '%s': the host must be an IPv4 address, "
                       "localhost or [IPv6]", address);
    addr->len = sizeof *in;
    *loopback = (ntohl(in->sin_addr.s_addr) >> 24) == 127;
    return GD_OK;
}

/* The socket's bound address as "host:port" (IPv6 in brackets). */
static gd_status gd_listen_bound(int fd, const char *address, char *bound, size_t bound_cap) {
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    if (getsockname(fd, (struct sockaddr *)&ss, &len) != 0)
        return gd_fail(GD_ERR_NETWORK, "listening on %s: getsockname: %s", address, strerror(errno));
    char ip[INET6_ADDRSTRLEN] = "";
    if (ss.ss_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&ss;
        inet_ntop(AF_INET6, &in6->sin6_addr, ip, sizeof ip);
        snprintf(bound, bound_cap, "[%s]:%u", ip, (unsigned)ntohs(in6->sin6_port));
    } else {
        const struct sockaddr_in *in = (const struct sockaddr_in *)&ss;
        inet_ntop(AF_INET, &in->sin_addr, ip, sizeof ip);
        snprintf(bound, bound_cap, "%s:%u", ip, (unsigned)ntohs(in->sin_port));
    }
    return GD_OK;
}

/* Closes fd keeping the errno that explains the failure. */
static gd_status gd_listen_fail(int fd, const char *address, const char *what) {
    int err = errno;
    if (fd >= 0)
        close(fd);
    return gd_fail(GD_ERR_NETWORK, "cannot listen on %s: %s: %s", address, what, strerror(err));
}

gd_status gd_listen_open(const char *address, int *fd_out, char *bound, size_t bound_cap,
                         bool *loopback) {
    if (address == NULL)
        return gd_fail(GD_ERR_INVALID, "no listen address");
    gd_listen_addr addr;
    GD_TRY(gd_listen_parse(address, &addr, loopback));
    int fd = socket(addr.ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return gd_listen_fail(-1, address, "socket");
    int one = 1;
    /* A restarted daemon rebinds while old connections sit in TIME_WAIT. */
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0)
        return gd_listen_fail(fd, address, "SO_REUSEADDR");
    /* "[::]" means IPv6 only, so an IPv4 listener on the same port is
     * a separate, explicit choice. */
    if (addr.ss.ss_family == AF_INET6 &&
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one) != 0)
        return gd_listen_fail(fd, address, "IPV6_V6ONLY");
    if (bind(fd, (const struct sockaddr *)&addr.ss, addr.len) != 0)
        return gd_listen_fail(fd, address, "bind");
    if (listen(fd, GD_LISTEN_BACKLOG) != 0)
        return gd_listen_fail(fd, address, "listen");
    gd_status s = gd_listen_bound(fd, address, bound, bound_cap);
    if (s != GD_OK) {
        close(fd);
        return s;
    }
    *fd_out = fd;
    return GD_OK;
}

void gd_listen_close_if_same(int fd, const struct stat *was) {
    struct stat now;
    if (fstat(fd, &now) == 0 && now.st_dev == was->st_dev && now.st_ino == was->st_ino)
        close(fd);
}
