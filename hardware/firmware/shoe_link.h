/*
 * shoe_link: the device side of the shoe link's session layer
 * (hardware/PROTOCOL.md, "Sessions" and "Reliable delivery").
 *
 * Portable C99 like shoe_proto.c: the board code passes in the time in
 * milliseconds and a function that writes bytes to the UART; nothing here
 * touches hardware, so it also compiles (and is smoke-tested) on the host.
 */
#ifndef SHOE_LINK_H
#define SHOE_LINK_H

#include <stdbool.h>
#include <stdint.h>

#include "shoe_proto.h"

#define SL_WINDOW 8u
#define SL_QUEUE 64u /* events held while the host is away; overflow -> DEVICE_ERROR code 4 */
#define SL_EVENT_MAX 24u

typedef void (*sl_write_fn)(const uint8_t *data, size_t len);

struct sl_event {
    uint8_t kind, len;
    uint8_t payload[SL_EVENT_MAX];
};

struct sl_link {
    /* identity (IDENT payload fields) */
    uint8_t firmware[3];
    uint8_t device_id[8];
    uint8_t capabilities, seat_antennas, reset_reason;
    uint16_t boot_count;
    /* session */
    bool ready;
    uint32_t nonce;
    uint32_t counter;
    /* sender: queue[head .. head+count) in order; the first `inflight` have sequence numbers */
    struct sl_event queue[SL_QUEUE];
    uint8_t head, count, inflight;
    uint8_t seq_base; /* sequence number of queue[head] */
    uint32_t rto_ms, retx_at_ms, last_fast_ms;
    uint8_t last_fast_seq;
    bool overflowed;
    /* receiver (host -> device: only RESET) */
    uint8_t rx_next;
    uint32_t last_nak_ms;
    /* timers */
    uint32_t announce_at_ms, heartbeat_at_ms, last_byte_ms;
    struct sp_decoder dec;
    sl_write_fn write;
    bool reset_requested;
};

void sl_init(struct sl_link *l, sl_write_fn write, uint32_t now_ms);
void sl_receive(struct sl_link *l, const uint8_t *data, size_t len, uint32_t now_ms);
void sl_poll(struct sl_link *l, uint32_t now_ms);
/* Queue game events; the counter is assigned here. Return false when the queue is full. */
bool sl_card_drawn(struct sl_link *l, const uint8_t *uid, uint8_t uid_len, uint8_t quality, uint32_t now_ms);
bool sl_seat_tag(struct sl_link *l, uint8_t antenna, const uint8_t *uid, uint8_t uid_len, uint8_t quality,
                 uint32_t now_ms);
bool sl_shoe_state(struct sl_link *l, bool loaded, uint32_t now_ms);
bool sl_device_error(struct sl_link *l, uint8_t code, const char *detail, uint32_t now_ms);

#endif
