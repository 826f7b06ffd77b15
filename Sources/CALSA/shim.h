// libasound's sequencer API sets event fields through function-like macros, which Swift cannot
// import; these static inline wrappers give each macro a callable name and nothing more.
#ifndef ASEQOSC_CALSA_SHIM_H
#define ASEQOSC_CALSA_SHIM_H
#include <alsa/asoundlib.h>
#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

// libasound reports errors by printing them from a variadic callback; Swift cannot define a
// variadic C function, so the quiet handler lives here and aseqosc reports errors itself.
static void aseqosc_quiet_error_handler(const char *file, int line, const char *function, int err,
                                        const char *fmt, ...) {
    (void)file; (void)line; (void)function; (void)err; (void)fmt;
}
static inline void aseqosc_silence_alsa_errors(void) {
    snd_lib_error_set_handler(aseqosc_quiet_error_handler);
}

static inline void aseqosc_ev_clear(snd_seq_event_t *ev) { snd_seq_ev_clear(ev); }
static inline void aseqosc_ev_set_source(snd_seq_event_t *ev, unsigned char port) {
    snd_seq_ev_set_source(ev, port);
}
static inline void aseqosc_ev_set_subs(snd_seq_event_t *ev) { snd_seq_ev_set_subs(ev); }
static inline void aseqosc_ev_set_dest(snd_seq_event_t *ev, unsigned char client, unsigned char port) {
    snd_seq_ev_set_dest(ev, client, port);
}
static inline void aseqosc_ev_set_direct(snd_seq_event_t *ev) { snd_seq_ev_set_direct(ev); }
static inline void aseqosc_ev_set_fixed(snd_seq_event_t *ev) { snd_seq_ev_set_fixed(ev); }
// A fixed-size event's type and data, written here: Swift reaches a field of the imported `data`
// union by copying the whole union out and back per field, C by one store each. The rest of the union is cleared, as in a new event.
static inline void aseqosc_ev_set_note_data(snd_seq_event_t *ev, snd_seq_event_type_t type, unsigned char channel,
                                            unsigned char note, unsigned char velocity) {
    ev->type = type;
    memset(&ev->data, 0, sizeof ev->data);
    ev->data.note.channel = channel;
    ev->data.note.note = note;
    ev->data.note.velocity = velocity;
}
static inline void aseqosc_ev_set_control_data(snd_seq_event_t *ev, snd_seq_event_type_t type, unsigned char channel,
                                               unsigned int param, int value) {
    ev->type = type;
    memset(&ev->data, 0, sizeof ev->data);
    ev->data.control.channel = channel;
    ev->data.control.param = param;
    ev->data.control.value = value;
}
static inline void aseqosc_ev_set_bare(snd_seq_event_t *ev, snd_seq_event_type_t type) {
    ev->type = type;
    memset(&ev->data, 0, sizeof ev->data);
}
static inline void aseqosc_ev_set_variable(snd_seq_event_t *ev, unsigned int length, const void *data) {
    snd_seq_ev_set_variable(ev, length, data);
}
static inline void aseqosc_ev_schedule_real(snd_seq_event_t *ev, int queue, int relative,
                                            unsigned int sec, unsigned int nsec) {
    snd_seq_real_time_t time = { sec, nsec };
    snd_seq_ev_schedule_real(ev, queue, relative, &time);
}
static inline int aseqosc_ev_is_variable(const snd_seq_event_t *ev) {
    return snd_seq_ev_is_variable(ev);
}
// snd_seq_ev_ext is a packed struct, whose fields Swift cannot reach reliably.
static inline unsigned int aseqosc_ev_ext_length(const snd_seq_event_t *ev) { return ev->data.ext.len; }
static inline const void *aseqosc_ev_ext_data(const snd_seq_event_t *ev) { return ev->data.ext.ptr; }
// What libasound does for a variable-length event it finds in what it read from the kernel
// (snd_seq_event_retrieve_buffer): the data follows the event, in whole cells; the event's data
// pointer is set to there. Returns how many cells the data takes.
static inline unsigned int aseqosc_ev_attach_ext_data(snd_seq_event_t *ev) {
    ev->data.ext.ptr = ev + 1;
    return (ev->data.ext.len + sizeof *ev - 1) / sizeof *ev;
}
#endif
