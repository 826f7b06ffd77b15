/* bare-forwarder: the floor for an ALSA <-> OSC bridge. Nothing but the two system calls a
 * bridge cannot avoid per event, so what any real bridge costs above this is its own work.
 *
 *   bare-forwarder [--connect CLIENT:PORT] UDP_PORT            MIDI -> OSC
 *   bare-forwarder --reverse [--connect CLIENT:PORT] UDP_PORT  OSC -> MIDI
 *
 * MIDI -> OSC: an ALSA client "bare-forwarder" with an input port; for every event read with a
 * blocking snd_seq_event_input, one fixed OSC message goes to 127.0.0.1:UDP_PORT with sendto.
 * OSC -> MIDI: for every datagram received on 127.0.0.1:UDP_PORT, one fixed note-on goes to the
 * output port's subscribers with snd_seq_event_output_direct.
 * --connect subscribes the given port to ours (or ours to it, reversed) at start-up.
 * Runs until SIGINT or SIGTERM; prints "ready" on stdout once set up.
 *
 * Build: gcc -O2 -o bare-forwarder bare-forwarder.c -lasound
 */
#include <alsa/asoundlib.h>
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

static volatile sig_atomic_t stopping;
static void on_signal(int number) { (void)number; stopping = 1; }

static void die(const char *what, int error) {
    fprintf(stderr, "bare-forwarder: %s: %s\n", what, error < 0 ? snd_strerror(error) : strerror(errno));
    exit(69);
}

int main(int argc, char **argv) {
    int reverse = 0;
    const char *connect = NULL;
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (strcmp(argv[i], "--reverse") == 0) reverse = 1;
        else if (strcmp(argv[i], "--connect") == 0 && i + 1 < argc) connect = argv[++i];
        else { fprintf(stderr, "usage: bare-forwarder [--reverse] [--connect CLIENT:PORT] UDP_PORT\n"); return 64; }
    }
    if (i != argc - 1) { fprintf(stderr, "usage: bare-forwarder [--reverse] [--connect CLIENT:PORT] UDP_PORT\n"); return 64; }
    int udp_port = atoi(argv[i]);

    struct sigaction action = {0};
    action.sa_handler = on_signal; /* no SA_RESTART: a blocking read returns EINTR */
    sigaction(SIGINT, &action, NULL);
    sigaction(SIGTERM, &action, NULL);

    snd_seq_t *seq;
    int err = snd_seq_open(&seq, "default", reverse ? SND_SEQ_OPEN_OUTPUT : SND_SEQ_OPEN_INPUT, 0);
    if (err < 0) die("snd_seq_open", err);
    snd_seq_set_client_name(seq, "bare-forwarder");
    int port = snd_seq_create_simple_port(seq, reverse ? "out" : "in",
        reverse ? SND_SEQ_PORT_CAP_READ | SND_SEQ_PORT_CAP_SUBS_READ
                : SND_SEQ_PORT_CAP_WRITE | SND_SEQ_PORT_CAP_SUBS_WRITE,
        SND_SEQ_PORT_TYPE_MIDI_GENERIC | SND_SEQ_PORT_TYPE_APPLICATION);
    if (port < 0) die("snd_seq_create_simple_port", port);
    if (connect) {
        snd_seq_addr_t peer;
        if ((err = snd_seq_parse_address(seq, &peer, connect)) < 0) die(connect, err);
        err = reverse ? snd_seq_connect_to(seq, port, peer.client, peer.port)
                      : snd_seq_connect_from(seq, port, peer.client, peer.port);
        if (err < 0) die("connect", err);
    }

    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (fd < 0) die("socket", 0);
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons(udp_port)};
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (reverse && bind(fd, (struct sockaddr *)&address, sizeof address) < 0) die("bind", 0);
    printf("ready\n");
    fflush(stdout);

    if (!reverse) {
        /* "/bare\0\0\0" ",ii\0" 60 100: a note-on's worth of OSC, the same for every event. */
        static const unsigned char message[] = {'/', 'b', 'a', 'r', 'e', 0, 0, 0, ',', 'i', 'i', 0,
                                                0, 0, 0, 60, 0, 0, 0, 100};
        while (!stopping) {
            snd_seq_event_t *event;
            err = snd_seq_event_input(seq, &event);
            if (err == -EINTR) continue;
            if (err == -ENOSPC) continue; /* input overrun: the kernel dropped events */
            if (err < 0) die("snd_seq_event_input", err);
            sendto(fd, message, sizeof message, 0, (struct sockaddr *)&address, sizeof address);
        }
    } else {
        snd_seq_event_t event;
        snd_seq_ev_clear(&event);
        snd_seq_ev_set_source(&event, port);
        snd_seq_ev_set_subs(&event);
        snd_seq_ev_set_direct(&event);
        snd_seq_ev_set_noteon(&event, 0, 60, 100);
        unsigned char datagram[2048];
        while (!stopping) {
            ssize_t size = recv(fd, datagram, sizeof datagram, 0);
            if (size < 0) {
                if (errno == EINTR) continue;
                die("recv", 0);
            }
            err = snd_seq_event_output_direct(seq, &event);
            if (err < 0 && err != -EINTR) die("snd_seq_event_output_direct", err);
        }
    }
    snd_seq_close(seq);
    return 0;
}
