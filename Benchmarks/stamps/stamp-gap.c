/* stamp-gap: how late a reader's own CLOCK_MONOTONIC stamp is against the sequencer's own
 * timestamp of the same event, the two ways a bridge can date an event it reads.
 *
 *   stamp-gap [--fifo PRIORITY] [--count N]      (reads from virmidi 0, client 16:0)
 *
 * Creates an input port that the kernel timestamps (real time, on a queue of ours, started at
 * a known CLOCK_MONOTONIC moment), subscribes it to 16:0, and reads events the way aseqosc's
 * input thread does (a blocking read, then everything waiting). For each event it prints
 * nothing; at the end one line: GAP count=N min_us=.. p50_us=.. p99_us=.. max_us=.. (read stamp minus
 * kernel stamp, both on CLOCK_MONOTONIC).
 *
 * Build: gcc -O2 -o stamp-gap stamp-gap.c -lasound
 */
#define _GNU_SOURCE
#include <alsa/asoundlib.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static int compare(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    int fifo = 0, count = 500;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--fifo")) fifo = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--count")) count = atoi(argv[i + 1]);
    }
    if (fifo > 0) {
        struct sched_param p = {.sched_priority = fifo};
        if (pthread_setschedparam(pthread_self(), SCHED_FIFO, &p) != 0) { perror("SCHED_FIFO"); return 1; }
    }
    snd_seq_t *seq;
    if (snd_seq_open(&seq, "default", SND_SEQ_OPEN_DUPLEX, 0) < 0) { fprintf(stderr, "snd_seq_open\n"); return 1; }
    snd_seq_set_client_name(seq, "stamp-gap");
    int queue = snd_seq_alloc_queue(seq);
    snd_seq_port_info_t *info;
    snd_seq_port_info_alloca(&info);
    snd_seq_port_info_set_name(info, "in");
    snd_seq_port_info_set_capability(info, SND_SEQ_PORT_CAP_WRITE | SND_SEQ_PORT_CAP_SUBS_WRITE);
    snd_seq_port_info_set_type(info, SND_SEQ_PORT_TYPE_APPLICATION);
    snd_seq_port_info_set_timestamping(info, 1);
    snd_seq_port_info_set_timestamp_real(info, 1);
    snd_seq_port_info_set_timestamp_queue(info, queue);
    if (snd_seq_create_port(seq, info) < 0) { fprintf(stderr, "create port\n"); return 1; }
    int port = snd_seq_port_info_get_port(info);
    /* The queue starts at 0; its real time against CLOCK_MONOTONIC, read just after. */
    snd_seq_start_queue(seq, queue, NULL);
    snd_seq_drain_output(seq);
    snd_seq_queue_status_t *status;
    snd_seq_queue_status_alloca(&status);
    int64_t before = now_ns();
    snd_seq_get_queue_status(seq, queue, status);
    int64_t after = now_ns();
    const snd_seq_real_time_t *q = snd_seq_queue_status_get_real_time(status);
    int64_t origin = (before + after) / 2 - ((int64_t)q->tv_sec * 1000000000 + q->tv_nsec);
    if (snd_seq_connect_from(seq, port, 16, 0) < 0) { fprintf(stderr, "connect from 16:0\n"); return 1; }
    printf("ready\n");
    fflush(stdout);
    int64_t *gaps = calloc((size_t)count, sizeof *gaps);
    int n = 0;
    while (n < count) {
        snd_seq_event_t *event;
        if (snd_seq_event_input(seq, &event) < 0) continue;
        int64_t read_at = now_ns();
        if (event->type != SND_SEQ_EVENT_NOTEON && event->type != SND_SEQ_EVENT_NOTEOFF) continue;
        int64_t kernel = origin + (int64_t)event->time.time.tv_sec * 1000000000 + event->time.time.tv_nsec;
        gaps[n++] = read_at - kernel;
    }
    qsort(gaps, (size_t)n, sizeof *gaps, compare);
    printf("GAP count=%d min_us=%.0f p50_us=%.0f p99_us=%.0f max_us=%.0f\n", n, gaps[0] / 1e3, gaps[n / 2] / 1e3,
           gaps[n * 99 / 100] / 1e3,
           gaps[n - 1] / 1e3);
    return 0;
}
