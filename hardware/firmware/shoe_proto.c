/* shoe_proto: framing and CRC of the shoe link.  See shoe_proto.h. */
#include "shoe_proto.h"

#include <string.h>

uint16_t sp_crc16(uint16_t crc, const uint8_t *data, size_t len)
{
    /* Bitwise rather than table-driven: 512 bytes of table are not worth it
     * for a few hundred bytes a second. */
    for (size_t i = 0; i < len; i++) {
        crc ^= (uint16_t)((uint16_t)data[i] << 8);
        for (int b = 0; b < 8; b++)
            crc = (crc & 0x8000u) ? (uint16_t)((crc << 1) ^ 0x1021u) : (uint16_t)(crc << 1);
    }
    return crc;
}

size_t sp_encode(uint8_t *out, uint8_t seq, uint8_t kind, const uint8_t *payload, size_t len)
{
    if (len > SP_MAX_PAYLOAD)
        return 0;
    out[0] = SP_SOF;
    out[1] = (uint8_t)len;
    out[2] = seq;
    out[3] = kind;
    if (len)
        memcpy(out + 4, payload, len);
    uint16_t crc = sp_crc16(0xFFFFu, out + 1, len + 3);
    out[4 + len] = (uint8_t)(crc >> 8);
    out[5 + len] = (uint8_t)crc;
    out[6 + len] = SP_EOF;
    return len + SP_OVERHEAD;
}

void sp_decoder_init(struct sp_decoder *d)
{
    memset(d, 0, sizeof *d);
}

static void drop_front(struct sp_decoder *d, uint8_t k)
{
    memmove(d->buf, d->buf + k, (size_t)(d->n - k));
    d->n = (uint8_t)(d->n - k);
}

/* Decide about the buffer's head as far as the bytes held allow: the same
 * steps, in the same order, as FrameDecoder.feed in firmware_bridge/framing.py. */
static void process(struct sp_decoder *d, sp_frame_fn on_frame, void *ctx)
{
    for (;;) {
        uint8_t i = 0;
        while (i < d->n && d->buf[i] != SP_SOF)
            i++;
        if (i) {
            d->discarded += i;
            drop_front(d, i);
        }
        if (d->n < 2)
            return;
        uint8_t len = d->buf[1];
        if (len > SP_MAX_PAYLOAD) {
            d->bad_length++;
            d->discarded++;
            drop_front(d, 1);
            continue;
        }
        uint8_t total = (uint8_t)(len + SP_OVERHEAD);
        if (d->n < total)
            return;
        if (d->buf[total - 1] != SP_EOF) {
            d->bad_trailer++;
            d->discarded++;
            drop_front(d, 1);
            continue;
        }
        uint16_t crc = (uint16_t)((d->buf[total - 3] << 8) | d->buf[total - 2]);
        if (sp_crc16(0xFFFFu, d->buf + 1, (size_t)len + 3) != crc) {
            d->bad_crc++;
            d->discarded++;
            drop_front(d, 1);
            continue;
        }
        d->frames++;
        on_frame(ctx, d->buf[2], d->buf[3], d->buf + 4, len);
        drop_front(d, total);
    }
}

void sp_decoder_feed(struct sp_decoder *d, const uint8_t *data, size_t len, sp_frame_fn on_frame, void *ctx)
{
    for (size_t i = 0; i < len; i++) {
        /* process() leaves at most one incomplete candidate (< SP_MAX_FRAME bytes). */
        d->buf[d->n++] = data[i];
        process(d, on_frame, ctx);
    }
}

void sp_decoder_abandon(struct sp_decoder *d, sp_frame_fn on_frame, void *ctx)
{
    if (!d->n)
        return;
    d->bad_length++;
    d->discarded++;
    drop_front(d, 1);
    process(d, on_frame, ctx);
}
