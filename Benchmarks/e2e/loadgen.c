/* loadgen: drives a MIDI <-> OSC bridge from one side and receives what comes out of the other,
 * in one single-threaded process, timestamping both on CLOCK_MONOTONIC.
 *
 *   loadgen [options]
 *     --direction m2o|o2m   m2o (default): send ALSA events from our output port, receive OSC on
 *                           127.0.0.1:UDP_PORT. o2m: send OSC to 127.0.0.1:UDP_PORT, receive
 *                           ALSA events on our input port.
 *     --udp-port P          (default 57120)
 *     --format F            o2m only, the OSC we send: osmid (o2m's note_on ,iii channel note velocity
 *                           at the address for every device, "/" "*" "/note_on"), aseqosc (default scheme /midi/bench/1/note_on ,ii) or bare
 *     --connect C:P         connect our port to the bridge's (otherwise wait for the bridge to
 *                           subscribe to ours; we wait until some port has)
 *     --count N             events to send (default 3000)
 *     --rate R              paced: R events/s; 0 (default) = flat out, windowed
 *     --window W            flat out: at most W events sent but not yet received (default 16)
 *     --bundle N            o2m only, not with --pair: send N events per datagram, as one OSC bundle
 *                           ("immediately") of N messages, all N timed from its send (a chord);
 *                           paced, a bundle goes every N periods (default 1: plain messages)
 *     --bridge-pid PID      report the bridge's CPU time (utime+stime) over the run and VmHWM
 *     --bridge-pid-file F   the same, the PID read from file F once the bridge has subscribed
 *                           (the bridge usually starts after us)
 *     --label NAME          first field of the result line
 *     --settle-ms MS        after subscription, wait before sending (default 1000)
 *     --idle-ms MS          give up waiting for outputs after this long without one (default 3000)
 *     --latencies FILE      also write every event's send time and latency (µs), in sending order
 *     --warmup-ms MS        leave the events sent in the first MS ms out of p50/p99/max (the first
 *                           event's latency is reported on its own as first_us): a cold start is
 *                           not steady-state latency (default 0)
 *     --jitter-us J         paced: each gap between sends is the period moved by up to J µs either
 *                           way (uniform, fixed seed, so the mean rate stays R). Default: a quarter
 *                           of the gap; 0 sends strictly periodically. A strict period locks the
 *                           sends to the kernel's 4 ms scheduler tick: under emulation a tick costs
 *                           ~60 µs, and it then lands on every other event of one stream of a pair
 *                           and on none of the other's, so that p50 measures the phase, not the
 *                           bridge (BENCHMARKS.md, tenth round).
 *     --sysex N             m2o only: every event a SysEx message of N bytes (F0 and F7 included)
 *     --sinks K             m2o only: also bind K UDP ports from UDP_PORT + 100 up and never read
 *                           them, the further destinations of a bridge that fans out (the kernel
 *                           drops what does not fit; the bridge's sends still succeed)
 *     --tcp a|b|ab          m2o only: receive that stream's OSC over TCP instead of UDP, on the
 *                           same port number: listen before "ready", accept the bridge's
 *                           connection once it has subscribed, and count OSC 1.0 length-prefixed
 *                           frames (a bridge's destination with protocol "tcp"). With --pair,
 *                           "b" compares TCP with UDP to the same receiver in one run
 *     --pair LABEL          drive two bridges at once, taking turns event by event. The second one
 *                           ("stream b", reported as LABEL) uses our second port "loadgen-b" and
 *                           UDP_PORT + 1; --count, --rate and --window are per bridge. Paced, the
 *                           sends alternate half a period apart. Windowed, each bridge has its own
 *                           window and the result lines add overlap_events and overlap_eps: what
 *                           each bridge delivered until the first of the two was done, while both
 *                           shared the CPU. Both bridges then meet the same VM at the same
 *                           moments, which separate runs do not (under emulation one run's p50 or
 *                           rate can be twice another's for the same program).
 *
 * Events cycle note-on, control change, note-off (notes and values vary), so a bridge that
 * tracks notes passes every one. Outputs are matched to inputs in order (ALSA and loopback UDP
 * keep it); latencies are reported only when nothing was lost. The ALSA client and port are both
 * named "loadgen". Prints "ready" once its port exists, then one line (two with --pair):
 *
 *   RESULT label=.. mode=paced|window sent=N received=M lost=K seconds=S eps=E p50_us=..
 *          p99_us=.. max_us=.. cpu_ms=.. cpu_us_per_event=.. hwm_kb=..
 *
 * Build: gcc -O2 -o loadgen loadgen.c -lasound -lm
 */
#define _GNU_SOURCE
#include <alsa/asoundlib.h>
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* The jitter's random numbers: xorshift64, the same sequence every run. */
static uint64_t jitter_state = 0x9E3779B97F4A7C15u;
static int64_t jitter_ns(int64_t bound_ns) {
    if (bound_ns <= 0) return 0;
    jitter_state ^= jitter_state << 13;
    jitter_state ^= jitter_state >> 7;
    jitter_state ^= jitter_state << 17;
    return (int64_t)(jitter_state % (uint64_t)(2 * bound_ns + 1)) - bound_ns;
}

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void die(const char *what, int error) {
    fprintf(stderr, "loadgen: %s: %s\n", what, error < 0 ? snd_strerror(error) : strerror(errno));
    exit(69);
}

static int compare_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* utime + stime of a process in milliseconds, from /proc/PID/stat; -1 if unreadable. */
static long cpu_ms(int pid) {
    char path[64], buffer[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *file = fopen(path, "r");
    if (!file) return -1;
    size_t n = fread(buffer, 1, sizeof buffer - 1, file);
    fclose(file);
    buffer[n] = 0;
    char *p = strrchr(buffer, ')'); /* the command name may hold spaces */
    if (!p) return -1;
    unsigned long utime = 0, stime = 0;
    /* after ')': state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime */
    if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &utime, &stime) != 2) return -1;
    return (long)((utime + stime) * 1000 / sysconf(_SC_CLK_TCK));
}

static long hwm_kb(int pid) {
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", pid);
    FILE *file = fopen(path, "r");
    if (!file) return -1;
    long kb = -1;
    while (fgets(line, sizeof line, file))
        if (strncmp(line, "VmHWM:", 6) == 0) kb = atol(line + 6);
    fclose(file);
    return kb;
}

/* Writes an OSC int32 big-endian. */
static size_t put32(unsigned char *p, int32_t v) {
    p[0] = (unsigned char)(v >> 24); p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);  p[3] = (unsigned char)v;
    return 4;
}

/* Writes an OSC string (NUL-terminated, padded to 4). */
static size_t put_string(unsigned char *p, const char *s) {
    size_t n = strlen(s) + 1, padded = (n + 3) & ~(size_t)3;
    memset(p, 0, padded);
    memcpy(p, s, n - 1);
    return padded;
}

enum { NOTE_ON, CONTROL, NOTE_OFF };

/* The i-th event of the cycle: kind, channel (0..15), data1, data2. */
static void event_at(long i, int *kind, int *channel, int *data1, int *data2) {
    long cycle = i / 3;
    *kind = (int)(i % 3);
    *channel = 0;
    int note = 36 + (int)(cycle % 48);
    switch (*kind) {
    case NOTE_ON: *data1 = note; *data2 = 1 + (int)(cycle % 127); break;
    case CONTROL: *data1 = 1; *data2 = (int)(cycle % 128); break;
    default: *data1 = note; *data2 = 64; break;
    }
}

static size_t osc_for(const char *format, long i, unsigned char *out) {
    int kind, channel, d1, d2;
    event_at(i, &kind, &channel, &d1, &d2);
    static const char *osmid_names[] = {"note_on", "control_change", "note_off"};
    static const char *aseqosc_names[] = {"note_on", "cc", "note_off"};
    char address[64];
    size_t n = 0;
    if (strcmp(format, "osmid") == 0) {
        snprintf(address, sizeof address, "/*/%s", osmid_names[kind]);
        n += put_string(out + n, address);
        n += put_string(out + n, ",iii");
        n += put32(out + n, channel + 1);
    } else if (strcmp(format, "aseqosc") == 0) {
        snprintf(address, sizeof address, "/midi/bench/%d/%s", channel + 1, aseqosc_names[kind]);
        n += put_string(out + n, address);
        n += put_string(out + n, ",ii");
    } else {
        n += put_string(out + n, "/bare");
        n += put_string(out + n, ",ii");
    }
    n += put32(out + n, d1);
    n += put32(out + n, d2);
    return n;
}

/* One bridge's stream of events: what was sent when, and each one's latency. */
struct stream {
    const char *label;
    int port;                     /* our ALSA port */
    int fd;                       /* m2o: the UDP socket we receive on; o2m: the one we send from */
    struct sockaddr_in address;   /* the UDP port */
    long sent, received;
    uint64_t *sent_at, *latency, *received_at;
    uint64_t last_output;
    int tcp;                      /* m2o over TCP: `fd` is the accepted connection */
    int listener;                 /* its listening socket, from before "ready" */
    unsigned char header[4];      /* the length prefix being read, and how much of it */
    int header_bytes;
    long body_left;               /* bytes of the current frame still to come */
};

/* Counts the whole frames in `bytes`, carrying a frame cut across reads in the stream. */
static long count_frames(struct stream *s, const unsigned char *bytes, long size) {
    long frames = 0, i = 0;
    while (i < size) {
        if (s->body_left == 0) {
            s->header[s->header_bytes++] = bytes[i++];
            if (s->header_bytes < 4) continue;
            s->header_bytes = 0;
            s->body_left = (long)s->header[0] << 24 | s->header[1] << 16 | s->header[2] << 8 | s->header[3];
            if (s->body_left == 0) continue;
        }
        long take = size - i < s->body_left ? size - i : s->body_left;
        i += take;
        s->body_left -= take;
        if (s->body_left == 0) frames++;
    }
    return frames;
}

static void report(struct stream *s, const char *mode, uint64_t start, long warmup_ms, const char *latencies_path,
                   long cpu, long hwm, long stray, uint64_t overlap_end) {
    double seconds = (double)(s->last_output - start) / 1e9;
    long lost = s->sent - s->received;
    printf("RESULT label=%s mode=%s sent=%ld received=%ld lost=%ld seconds=%.3f eps=%.0f", s->label, mode, s->sent,
           s->received, lost, seconds, s->received / seconds);
    if (lost == 0 && s->received > 0) {
        if (latencies_path) {
            /* Every event's latency in order of sending, before sorting: to see when the slow
               ones happen. */
            FILE *out = fopen(latencies_path, "w");
            if (!out) die("fopen", 0);
            for (long i = 0; i < s->received; i++)
                fprintf(out, "%.0f %.0f\n", (s->sent_at[i] - s->sent_at[0]) / 1e3, s->latency[i] / 1e3);
            fclose(out);
        }
        long skip = 0;
        while (skip < s->received - 1 && s->sent_at[skip] - s->sent_at[0] < (uint64_t)warmup_ms * 1000000) skip++;
        printf(" first_us=%.0f", s->latency[0] / 1e3);
        uint64_t *steady = s->latency + skip;
        long measured = s->received - skip;
        qsort(steady, (size_t)measured, sizeof *steady, compare_u64);
        printf(" p50_us=%.0f p99_us=%.0f max_us=%.0f", steady[measured / 2] / 1e3,
               steady[(size_t)(measured * 99 / 100)] / 1e3, steady[measured - 1] / 1e3);
    } else {
        printf(" p50_us=- p99_us=- max_us=-");
    }
    if (cpu >= 0) printf(" cpu_ms=%ld cpu_us_per_event=%.1f", cpu, s->received ? cpu * 1000.0 / s->received : 0.0);
    if (hwm >= 0) printf(" hwm_kb=%ld", hwm);
    if (stray) printf(" other_events=%ld", stray);
    if (overlap_end > start) {
        /* Received by the time the first stream was done (from the receive times: the
           percentiles above sorted the latencies in place). */
        long overlap = 0;
        for (long i = 0; i < s->received; i++)
            if (s->received_at[i] <= overlap_end) overlap++;
        printf(" overlap_events=%ld overlap_eps=%.0f", overlap, overlap / ((double)(overlap_end - start) / 1e9));
    }
    printf("\n");
}

/* Whether some port is subscribed to ours (m2o) or ours to some port (o2m). */
static int subscribed(snd_seq_t *seq, int port, int m2o) {
    snd_seq_query_subscribe_t *query;
    snd_seq_query_subscribe_alloca(&query);
    snd_seq_addr_t self = {.client = (unsigned char)snd_seq_client_id(seq), .port = (unsigned char)port};
    snd_seq_query_subscribe_set_root(query, &self);
    snd_seq_query_subscribe_set_type(query, m2o ? SND_SEQ_QUERY_SUBS_READ : SND_SEQ_QUERY_SUBS_WRITE);
    snd_seq_query_subscribe_set_index(query, 0);
    return snd_seq_query_port_subscribers(seq, query) >= 0;
}

static int create_port(snd_seq_t *seq, const char *name) {
    /* Both directions' capabilities: osmid's JUCE lists a port as a MIDI input or output only
     * when it has both (a read-only port is not in `m2o -l`). */
    int port = snd_seq_create_simple_port(seq, name,
        SND_SEQ_PORT_CAP_READ | SND_SEQ_PORT_CAP_SUBS_READ | SND_SEQ_PORT_CAP_WRITE | SND_SEQ_PORT_CAP_SUBS_WRITE,
        SND_SEQ_PORT_TYPE_MIDI_GENERIC | SND_SEQ_PORT_TYPE_APPLICATION);
    if (port < 0) die("snd_seq_create_simple_port", port);
    return port;
}

int main(int argc, char **argv) {
    const char *direction = "m2o", *format = "osmid", *connect = NULL, *label = "run", *pid_file = NULL,
               *latencies_path = NULL, *pair_label = NULL, *tcp = "";
    int udp_port = 57120, window = 16, bridge_pid = 0, bundle = 1, sysex = 0, sinks = 0;
    long count = 3000, settle_ms = 1000, idle_ms = 3000, warmup_ms = 0, jitter_us = -1;
    double rate = 0;
    for (int i = 1; i < argc; i++) {
        const char *option = argv[i], *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (!value) { fprintf(stderr, "loadgen: %s needs a value (see the header of loadgen.c)\n", option); return 64; }
        i++;
        if (!strcmp(option, "--direction")) direction = value;
        else if (!strcmp(option, "--udp-port")) udp_port = atoi(value);
        else if (!strcmp(option, "--format")) format = value;
        else if (!strcmp(option, "--connect")) connect = value;
        else if (!strcmp(option, "--count")) count = atol(value);
        else if (!strcmp(option, "--rate")) rate = atof(value);
        else if (!strcmp(option, "--window")) window = atoi(value);
        else if (!strcmp(option, "--bundle")) bundle = atoi(value);
        else if (!strcmp(option, "--bridge-pid")) bridge_pid = atoi(value);
        else if (!strcmp(option, "--bridge-pid-file")) pid_file = value;
        else if (!strcmp(option, "--label")) label = value;
        else if (!strcmp(option, "--settle-ms")) settle_ms = atol(value);
        else if (!strcmp(option, "--idle-ms")) idle_ms = atol(value);
        else if (!strcmp(option, "--latencies")) latencies_path = value;
        else if (!strcmp(option, "--warmup-ms")) warmup_ms = atol(value);
        else if (!strcmp(option, "--jitter-us")) jitter_us = atol(value);
        else if (!strcmp(option, "--pair")) pair_label = value;
        else if (!strcmp(option, "--sysex")) sysex = atoi(value);
        else if (!strcmp(option, "--sinks")) sinks = atoi(value);
        else if (!strcmp(option, "--tcp")) tcp = value;
        else { fprintf(stderr, "loadgen: unknown option %s (see the header of loadgen.c)\n", option); return 64; }
    }
    int m2o = strcmp(direction, "m2o") == 0;
    if (!m2o && strcmp(direction, "o2m") != 0) { fprintf(stderr, "loadgen: --direction m2o or o2m\n"); return 64; }
    if (count <= 0 || window <= 0) { fprintf(stderr, "loadgen: --count and --window must be positive\n"); return 64; }
    if (pair_label && connect) {
        fprintf(stderr, "loadgen: --pair needs the bridges to subscribe themselves (no --connect)\n");
        return 64;
    }
    if (bundle < 1 || (bundle > 1 && (m2o || pair_label))) {
        fprintf(stderr, "loadgen: --bundle takes N >= 1, with --direction o2m and without --pair\n");
        return 64;
    }
    if ((sysex != 0 || sinks != 0) && (!m2o || sysex == 1 || sysex < 0 || sinks < 0 || sinks > 1000)) {
        fprintf(stderr, "loadgen: --sysex takes N >= 2 and --sinks 0...1000, with --direction m2o\n");
        return 64;
    }
    int streams = pair_label ? 2 : 1;
    unsigned char *sysex_message = sysex ? malloc((size_t)sysex) : NULL;
    for (int k = 0; k < sysex; k++) sysex_message[k] = k == 0 ? 0xF0 : k == sysex - 1 ? 0xF7 : (unsigned char)(k % 128);
    for (int k = 0; k < sinks; k++) {
        int fd = socket(AF_INET, SOCK_DGRAM, 0);
        struct sockaddr_in sink = {.sin_family = AF_INET, .sin_port = htons(udp_port + 100 + k)};
        sink.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (fd < 0 || bind(fd, (struct sockaddr *)&sink, sizeof sink) < 0) die("bind (--sinks)", 0);
    }

    snd_seq_t *seq;
    int err = snd_seq_open(&seq, "default", SND_SEQ_OPEN_DUPLEX, SND_SEQ_NONBLOCK);
    if (err < 0) die("snd_seq_open", err);
    snd_seq_set_client_name(seq, "loadgen");
    struct stream stream[2] = {{.label = label}, {.label = pair_label}};
    stream[0].port = create_port(seq, "loadgen");
    if (streams == 2) stream[1].port = create_port(seq, "loadgen-b");
    stream[0].tcp = m2o && strchr(tcp, 'a') != NULL;
    stream[1].tcp = m2o && streams == 2 && strchr(tcp, 'b') != NULL;
    for (int s = 0; s < streams; s++) {
        if (!stream[s].tcp) continue;
        /* Listening before "ready": the bridge connects as it starts. */
        int fd = socket(AF_INET, SOCK_STREAM, 0), on = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
        struct sockaddr_in at = {.sin_family = AF_INET, .sin_port = htons(udp_port + s)};
        at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (fd < 0 || bind(fd, (struct sockaddr *)&at, sizeof at) < 0 || listen(fd, 4) < 0) die("listen (--tcp)", 0);
        stream[s].listener = fd;
    }
    /* A big enough kernel pool that a window of events never blocks or overruns. */
    snd_seq_set_client_pool_output(seq, 2000);
    snd_seq_set_client_pool_input(seq, 2000);
    printf("ready\n");
    fflush(stdout);

    /* Wait until the bridges are subscribed (they connect themselves, or we connect to one). */
    uint64_t deadline = now_ns() + 120ull * 1000000000u;
    for (;;) {
        if (connect) {
            snd_seq_addr_t peer;
            if (snd_seq_parse_address(seq, &peer, connect) >= 0) {
                err = m2o ? snd_seq_connect_to(seq, stream[0].port, peer.client, peer.port)
                          : snd_seq_connect_from(seq, stream[0].port, peer.client, peer.port);
                if (err >= 0 || err == -EBUSY) break;
            }
        } else if (subscribed(seq, stream[0].port, m2o) && (streams == 1 || subscribed(seq, stream[1].port, m2o))) {
            break;
        }
        if (now_ns() > deadline) { fprintf(stderr, "loadgen: no bridge subscribed within 120 s\n"); return 69; }
        usleep(50000);
    }
    usleep((useconds_t)settle_ms * 1000);
    if (pid_file && !bridge_pid) {
        FILE *file = fopen(pid_file, "r");
        if (file) {
            if (fscanf(file, "%d", &bridge_pid) != 1) bridge_pid = 0;
            fclose(file);
        }
    }

    struct pollfd fds[8];
    int nfds = 0;
    for (int s = 0; s < streams; s++) {
        if (stream[s].tcp) {
            struct pollfd waiting = {.fd = stream[s].listener, .events = POLLIN};
            if (poll(&waiting, 1, 60000) != 1) { fprintf(stderr, "loadgen: no TCP connection within 60 s\n"); return 69; }
            int fd = accept4(stream[s].listener, NULL, NULL, SOCK_NONBLOCK);
            if (fd < 0) die("accept (--tcp)", 0);
            stream[s].fd = fd;
            fds[nfds++] = (struct pollfd){.fd = fd, .events = POLLIN};
            stream[s].sent_at = calloc((size_t)count, sizeof *stream[s].sent_at);
            stream[s].latency = calloc((size_t)count, sizeof *stream[s].latency);
            stream[s].received_at = calloc((size_t)count, sizeof *stream[s].received_at);
            if (!stream[s].sent_at || !stream[s].latency || !stream[s].received_at) die("calloc", 0);
            continue;
        }
        int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
        if (fd < 0) die("socket", 0);
        int buffer_size = 4 << 20;
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buffer_size, sizeof buffer_size);
        stream[s].fd = fd;
        stream[s].address = (struct sockaddr_in){.sin_family = AF_INET, .sin_port = htons(udp_port + s)};
        stream[s].address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (m2o) {
            if (bind(fd, (struct sockaddr *)&stream[s].address, sizeof stream[s].address) < 0) die("bind", 0);
            fds[nfds++] = (struct pollfd){.fd = fd, .events = POLLIN};
        }
        stream[s].sent_at = calloc((size_t)count, sizeof *stream[s].sent_at);
        stream[s].latency = calloc((size_t)count, sizeof *stream[s].latency);
        stream[s].received_at = calloc((size_t)count, sizeof *stream[s].received_at);
        if (!stream[s].sent_at || !stream[s].latency || !stream[s].received_at) die("calloc", 0);
    }
    if (!m2o) nfds = snd_seq_poll_descriptors(seq, fds, 8, POLLIN);

    long stray = 0;
    long cpu_start = bridge_pid ? cpu_ms(bridge_pid) : -1;
    uint64_t start = now_ns(), last_output = start, next_send = start;
    /* Paired, the two bridges' sends alternate, each bridge's `rate` apart. */
    uint64_t period = rate > 0 ? (uint64_t)(1e9 / rate / streams) : 0;
    int64_t jitter = jitter_us < 0 ? (int64_t)period / 4 : jitter_us * 1000;
    if (jitter > (int64_t)period) jitter = (int64_t)period;
    unsigned char datagram[2048];
    long total = count * streams, sent = 0, received = 0;
    stream[0].last_output = stream[1].last_output = start;

    while (received < total) {
        uint64_t now = now_ns();
        /* Send what is due. */
        while (sent < total) {
            /* Paced: the streams take turns. Windowed: the next stream in turn with room. */
            struct stream *s = NULL;
            if (rate > 0) {
                if (now < next_send) break;
                s = &stream[sent % streams];
            } else {
                for (int k = 0; k < streams && !s; k++) {
                    struct stream *candidate = &stream[(sent + k) % streams];
                    if (candidate->sent < count && candidate->sent - candidate->received < window) s = candidate;
                }
                if (!s) break;
            }
            if (m2o) {
                int kind, channel, d1, d2;
                event_at(s->sent, &kind, &channel, &d1, &d2);
                snd_seq_event_t event;
                snd_seq_ev_clear(&event);
                snd_seq_ev_set_source(&event, s->port);
                snd_seq_ev_set_subs(&event);
                snd_seq_ev_set_direct(&event);
                if (sysex) snd_seq_ev_set_sysex(&event, (unsigned)sysex, sysex_message);
                else if (kind == NOTE_ON) snd_seq_ev_set_noteon(&event, channel, d1, d2);
                else if (kind == CONTROL) snd_seq_ev_set_controller(&event, channel, d1, d2);
                else snd_seq_ev_set_noteoff(&event, channel, d1, d2);
                s->sent_at[s->sent] = now_ns();
                err = snd_seq_event_output_direct(seq, &event);
                if (err == -EAGAIN) break; /* kernel pool full: receive first */
                if (err < 0) die("snd_seq_event_output_direct", err);
            } else {
                unsigned char packet[2048];
                long n = bundle < count - s->sent ? bundle : count - s->sent;
                size_t size = 0;
                if (bundle > 1) {
                    /* "#bundle", time tag 1 ("immediately"), then each message after its size. */
                    size += put_string(packet, "#bundle");
                    size += put32(packet + size, 0);
                    size += put32(packet + size, 1);
                    for (long k = 0; k < n; k++) {
                        size_t length = osc_for(format, s->sent + k, packet + size + 4);
                        size += put32(packet + size, (int32_t)length);
                        size += length;
                    }
                } else {
                    size = osc_for(format, s->sent, packet);
                }
                uint64_t at = now_ns();
                for (long k = 0; k < n; k++) s->sent_at[s->sent + k] = at;
                if (sendto(s->fd, packet, size, 0, (struct sockaddr *)&s->address, sizeof s->address) < 0) {
                    if (errno == EAGAIN) break;
                    die("sendto", 0);
                }
                s->sent += n - 1;
                sent += n - 1;
                next_send += period * (uint64_t)(n - 1);
            }
            s->sent++;
            sent++;
            next_send += period + jitter_ns(jitter);
            if (rate > 0) now = now_ns();
        }
        /* Wait for outputs, or until the next paced send (never spin: the VM has one CPU and the
         * bridge needs it). */
        uint64_t timeout_ns = (uint64_t)idle_ms * 1000000u;
        if (sent < total && rate > 0) {
            now = now_ns();
            timeout_ns = next_send > now ? next_send - now : 0;
        } else if (sent < total && sent - received < window) {
            timeout_ns = 1000000; /* the kernel pool or socket was full */
        }
        struct timespec timeout = {.tv_sec = (time_t)(timeout_ns / 1000000000u),
                                   .tv_nsec = (long)(timeout_ns % 1000000000u)};
        int ready = ppoll(fds, (nfds_t)nfds, &timeout, NULL);
        if (ready < 0 && errno != EINTR) die("poll", 0);
        /* Drain everything that has arrived; a TCP read may hold several frames, each an event. */
        for (int s = 0; s < streams; s++) {
            if (!stream[s].tcp) continue;
            long got;
            while ((got = recv(stream[s].fd, datagram, sizeof datagram, 0)) > 0) {
                long frames = count_frames(&stream[s], datagram, got);
                uint64_t t = now_ns();
                for (long k = 0; k < frames; k++) {
                    struct stream *in = &stream[s];
                    if (in->received < in->sent) {
                        in->latency[in->received] = t - in->sent_at[in->received];
                        in->received_at[in->received] = t;
                    }
                    in->received++;
                    in->last_output = t;
                    received++;
                    last_output = t;
                }
            }
        }
        for (;;) {
            struct stream *got = NULL;
            if (m2o) {
                for (int s = 0; s < streams && !got; s++)
                    if (!stream[s].tcp && recv(stream[s].fd, datagram, sizeof datagram, 0) > 0) got = &stream[s];
            } else {
                snd_seq_event_t *event;
                int r = snd_seq_event_input(seq, &event);
                if (r >= 0 && event) {
                    int type = event->type;
                    if (type == SND_SEQ_EVENT_NOTEON || type == SND_SEQ_EVENT_NOTEOFF ||
                        type == SND_SEQ_EVENT_CONTROLLER)
                        got = streams == 2 && event->dest.port == stream[1].port ? &stream[1] : &stream[0];
                    else { stray++; continue; }
                } else if (r == -ENOSPC) {
                    fprintf(stderr, "loadgen: ALSA input overrun\n");
                    continue;
                }
            }
            if (!got) break;
            uint64_t t = now_ns();
            if (got->received < got->sent) {
                got->latency[got->received] = t - got->sent_at[got->received];
                got->received_at[got->received] = t;
            }
            got->received++;
            got->last_output = t;
            received++;
            last_output = t;
        }
        if (ready == 0 && timeout_ns > 0 && now_ns() - last_output >= (uint64_t)idle_ms * 1000000u &&
            (sent == total || rate == 0)) {
            break; /* nothing for idle_ms: the rest is lost */
        }
    }
    long cpu_end = bridge_pid ? cpu_ms(bridge_pid) : -1;
    long hwm = bridge_pid ? hwm_kb(bridge_pid) : -1;
    long cpu = cpu_start >= 0 && cpu_end >= 0 ? cpu_end - cpu_start : -1;
    const char *mode = rate > 0 ? "paced" : "window";
    /* Windowed pair: the moment the first stream had everything back. */
    uint64_t overlap_end = 0;
    if (streams == 2 && rate <= 0)
        overlap_end = stream[0].last_output < stream[1].last_output ? stream[0].last_output : stream[1].last_output;
    report(&stream[0], mode, start, warmup_ms, latencies_path, cpu, hwm, stray, overlap_end);
    if (streams == 2) report(&stream[1], mode, start, warmup_ms, NULL, -1, -1, 0, overlap_end);
    fflush(stdout);
    snd_seq_close(seq);
    return received == total ? 0 : 1;
}
