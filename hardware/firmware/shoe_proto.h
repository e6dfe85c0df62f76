/*
 * shoe_proto: the byte layer of the shoe link (hardware/PROTOCOL.md).
 *
 * Portable C99 with no Arduino or ESP-IDF headers, so the host test program
 * (test/host_test.c) compiles it with gcc and checks it against
 * hardware/test_vectors.json, the same file the Python side is tested with.
 */
#ifndef SHOE_PROTO_H
#define SHOE_PROTO_H

#include <stddef.h>
#include <stdint.h>

#define SP_SOF 0xA5u
#define SP_EOF 0x7Eu
#define SP_MAX_PAYLOAD 48u
#define SP_OVERHEAD 7u
#define SP_MAX_FRAME (SP_MAX_PAYLOAD + SP_OVERHEAD)

enum sp_kind {
    SP_HELLO = 0x01,
    SP_IDENT = 0x02,
    SP_HEARTBEAT = 0x03,
    SP_ACK = 0x04,
    SP_NAK = 0x05,
    SP_CARD_DRAWN = 0x20,
    SP_SEAT_TAG = 0x21,
    SP_SHOE_STATE = 0x22,
    SP_DEVICE_ERROR = 0x23,
    SP_RESET = 0x30
};

/* CRC-16/CCITT-FALSE (CRC-16/IBM-3740): poly 0x1021, init 0xFFFF, no reflection,
 * no final xor.  sp_crc16(0xFFFF, "123456789", 9) == 0x29B1. */
uint16_t sp_crc16(uint16_t crc, const uint8_t *data, size_t len);

/* Writes one frame into out (at least len + SP_OVERHEAD bytes); returns its
 * length, or 0 if len > SP_MAX_PAYLOAD. */
size_t sp_encode(uint8_t *out, uint8_t seq, uint8_t kind, const uint8_t *payload, size_t len);

typedef void (*sp_frame_fn)(void *ctx, uint8_t seq, uint8_t kind, const uint8_t *payload, uint8_t len);

struct sp_decoder {
    uint8_t buf[SP_MAX_FRAME];
    uint8_t n;
    uint32_t frames, bad_length, bad_trailer, bad_crc, discarded;
};

void sp_decoder_init(struct sp_decoder *d);
/* Feed received bytes; on_frame is called for each frame whose CRC checked. */
void sp_decoder_feed(struct sp_decoder *d, const uint8_t *data, size_t len, sp_frame_fn on_frame, void *ctx);
/* The line has been idle: give up the partial candidate at the head of the
 * buffer (its LEN was probably corrupt) and rescan what follows it. */
void sp_decoder_abandon(struct sp_decoder *d, sp_frame_fn on_frame, void *ctx);

/* Big-endian helpers for payloads. */
static inline void sp_put_u32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16); p[2] = (uint8_t)(v >> 8); p[3] = (uint8_t)v;
}
static inline uint32_t sp_get_u32(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

#endif
