/* One-way network latency for benchmarks: a TCP relay that holds every chunk a client
 * sends for DELAY_MS before writing it to the upstream; answers go back at once (as
 * `tc netem` adds latency on a link). Single thread, epoll, no parsing, so the delay
 * costs the measured host next to no CPU (tests/backends/tcpdelay.py runs it).
 *
 *   tcpdelay UPSTREAM_HOST UPSTREAM_PORT DELAY_MS
 *
 * prints "http://127.0.0.1:PORT" and relays until its standard input closes. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define CHUNK 65536
#define MAX_EVENTS 64

struct chunk {            /* client bytes waiting for their due time */
    struct chunk *next;
    struct link *link;
    long long due_ms;
    size_t len;           /* 0: the client closed its side */
    char data[];
};

struct link {
    int client, upstream;
    int client_done, upstream_done, open_chunks;
};

/* What epoll reports: one end of a link. */
struct end {
    struct link *link;
    int is_client;
};

static struct chunk *head, *tail;  /* due times only grow: a FIFO is a sorted queue */

static long long now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static void write_all(int fd, const char *buf, size_t len) {
    while (len > 0) {
        ssize_t n = write(fd, buf, len);
        if (n > 0) {
            buf += n;
            len -= (size_t)n;
        } else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
            struct pollfd p = {fd, POLLOUT, 0};
            poll(&p, 1, 1000);
        } else {
            return; /* the peer is gone: drop the rest */
        }
    }
}

static void maybe_free(struct link *l) {
    if (l->client_done && l->upstream_done && l->open_chunks == 0) {
        close(l->client);
        close(l->upstream);
        free(l);
    }
}

static int nonblocking(int fd) {
    return fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s UPSTREAM_HOST UPSTREAM_PORT DELAY_MS\n", argv[0]);
        return 2;
    }
    struct sockaddr_in up = {0};
    up.sin_family = AF_INET;
    up.sin_port = htons((unsigned short)atoi(argv[2]));
    if (inet_pton(AF_INET, argv[1], &up.sin_addr) != 1) {
        fprintf(stderr, "upstream host must be an IPv4 address\n");
        return 2;
    }
    long long delay = atoll(argv[3]);
    signal(SIGPIPE, SIG_IGN); /* a peer that went away is handled where write() fails */

    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in me = {0};
    me.sin_family = AF_INET;
    me.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t mlen = sizeof me;
    if (bind(lfd, (struct sockaddr *)&me, sizeof me) || listen(lfd, 512) ||
        getsockname(lfd, (struct sockaddr *)&me, &mlen)) {
        perror("listen");
        return 1;
    }
    nonblocking(lfd);
    printf("http://127.0.0.1:%d\n", ntohs(me.sin_port));
    fflush(stdout);

    int ep = epoll_create1(0);
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
    epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev);
    static struct end stdin_end; /* link == NULL, is_client == 0: standard input */
    ev.data.ptr = &stdin_end;
    epoll_ctl(ep, EPOLL_CTL_ADD, 0, &ev);
    static char buf[CHUNK];

    for (;;) {
        int timeout = -1;
        if (head) {
            long long wait = head->due_ms - now_ms();
            timeout = wait > 0 ? (int)wait : 0;
        }
        struct epoll_event events[MAX_EVENTS];
        int n = epoll_wait(ep, events, MAX_EVENTS, timeout);
        for (int i = 0; i < n; i++) {
            if (events[i].data.ptr == NULL) { /* new connections */
                int c;
                while ((c = accept(lfd, NULL, NULL)) >= 0) {
                    int u = socket(AF_INET, SOCK_STREAM, 0);
                    if (connect(u, (struct sockaddr *)&up, sizeof up)) {
                        close(u);
                        close(c);
                        continue;
                    }
                    setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                    setsockopt(u, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                    nonblocking(c);
                    nonblocking(u);
                    struct link *l = calloc(1, sizeof *l);
                    l->client = c;
                    l->upstream = u;
                    struct end *ce = malloc(sizeof *ce), *ue = malloc(sizeof *ue);
                    *ce = (struct end){l, 1};
                    *ue = (struct end){l, 0};
                    struct epoll_event e1 = {.events = EPOLLIN, .data.ptr = ce};
                    struct epoll_event e2 = {.events = EPOLLIN, .data.ptr = ue};
                    epoll_ctl(ep, EPOLL_CTL_ADD, c, &e1);
                    epoll_ctl(ep, EPOLL_CTL_ADD, u, &e2);
                }
                continue;
            }
            struct end *e = events[i].data.ptr;
            if (e == &stdin_end) {
                ssize_t r = read(0, buf, sizeof buf);
                if (r <= 0) return 0;
                continue;
            }
            struct link *l = e->link;
            int from_client = e->is_client;
            int fd = from_client ? l->client : l->upstream;
            ssize_t r = read(fd, buf, sizeof buf);
            if (r < 0 && (errno == EAGAIN || errno == EINTR)) continue;
            if (r <= 0) { /* this side is done reading */
                epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL);
                free(e);
                r = 0;
            }
            if (from_client || r == 0) {
                if (!from_client) { /* the server closed: pass it on at once */
                    shutdown(l->client, SHUT_WR);
                    l->upstream_done = 1;
                    maybe_free(l);
                    continue;
                }
                struct chunk *ch = malloc(sizeof *ch + (size_t)r);
                ch->next = NULL;
                ch->link = l;
                ch->due_ms = now_ms() + delay;
                ch->len = (size_t)r;
                memcpy(ch->data, buf, (size_t)r);
                l->open_chunks++;
                if (tail) tail->next = ch; else head = ch;
                tail = ch;
            } else {
                write_all(l->client, buf, (size_t)r);
            }
        }
        long long t = now_ms();
        while (head && head->due_ms <= t) {
            struct chunk *ch = head;
            head = ch->next;
            if (!head) tail = NULL;
            struct link *l = ch->link;
            if (ch->len) {
                write_all(l->upstream, ch->data, ch->len);
            } else {
                shutdown(l->upstream, SHUT_WR);
                l->client_done = 1;
            }
            l->open_chunks--;
            free(ch);
            maybe_free(l);
        }
    }
}
