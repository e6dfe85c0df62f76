/* shoe_link: device-side session, see shoe_link.h and hardware/PROTOCOL.md. */
#include "shoe_link.h"

#include <string.h>

#define RTO_INITIAL_MS 100u
#define RTO_MAX_MS 1000u
#define NAK_HOLDOFF_MS 30u
#define ANNOUNCE_MS 1000u
#define HEARTBEAT_MS 1000u
#define PARTIAL_MS 50u


static void send_frame(struct sl_link *l, uint8_t seq, uint8_t kind, const uint8_t *p, size_t n)
{
    uint8_t f[SP_MAX_FRAME];
    size_t len = sp_encode(f, seq, kind, p, n);
    if (len)
        l->write(f, len);
}

static void send_ident(struct sl_link *l, uint32_t nonce)
{
    uint8_t p[21];
    p[0] = 1; /* protocol version */
    memcpy(p + 1, l->firmware, 3);
    memcpy(p + 4, l->device_id, 8);
    p[12] = l->capabilities;
    p[13] = l->seat_antennas;
    p[14] = (uint8_t)(l->boot_count >> 8);
    p[15] = (uint8_t)l->boot_count;
    p[16] = l->reset_reason;
    sp_put_u32(p + 17, nonce);
    send_frame(l, 0, SP_IDENT, p, sizeof p);
}

static struct sl_event *at(struct sl_link *l, uint8_t i)
{
    return &l->queue[(uint8_t)(l->head + i) % SL_QUEUE];
}

/* Give sequence numbers to queued events while the window has room. */
static void fill(struct sl_link *l, uint32_t now)
{
    if (!l->ready)
        return;
    while (l->inflight < l->count && l->inflight < SL_WINDOW) {
        struct sl_event *e = at(l, l->inflight);
        send_frame(l, (uint8_t)(l->seq_base + l->inflight), e->kind, e->payload, e->len);
        if (l->inflight == 0)
            l->retx_at_ms = now + l->rto_ms;
        l->inflight++;
    }
}

static void resend_all(struct sl_link *l, uint32_t now)
{
    for (uint8_t i = 0; i < l->inflight; i++) {
        struct sl_event *e = at(l, i);
        send_frame(l, (uint8_t)(l->seq_base + i), e->kind, e->payload, e->len);
    }
    l->retx_at_ms = now + l->rto_ms;
}

static void on_ack(struct sl_link *l, uint8_t acked, uint32_t now)
{
    uint8_t n = (uint8_t)(acked - l->seq_base + 1);
    if (!l->inflight || n > l->inflight)
        return; /* stale */
    l->head = (uint8_t)((l->head + n) % SL_QUEUE);
    l->count = (uint8_t)(l->count - n);
    l->inflight = (uint8_t)(l->inflight - n);
    l->seq_base = (uint8_t)(l->seq_base + n);
    l->rto_ms = RTO_INITIAL_MS;
    l->retx_at_ms = now + l->rto_ms;
    fill(l, now);
}

static void nak(struct sl_link *l, uint32_t now)
{
    if (now - l->last_nak_ms < NAK_HOLDOFF_MS)
        return;
    l->last_nak_ms = now;
    send_frame(l, l->rx_next, SP_NAK, 0, 0);
}

static void on_frame(void *ctx, uint8_t seq, uint8_t kind, const uint8_t *p, uint8_t len)
{
    struct sl_link *l = ctx;
    uint32_t now = l->last_byte_ms;
    if (kind == SP_HELLO) {
        if (len != 5)
            return;
        uint32_t nonce = sp_get_u32(p + 1);
        if (nonce != l->nonce || !l->ready) {
            /* New session: sequence numbers from 0, unacknowledged events again. */
            l->nonce = nonce;
            l->ready = true;
            l->seq_base = 0;
            l->inflight = 0;
            l->rx_next = 0;
            l->rto_ms = RTO_INITIAL_MS;
            send_ident(l, nonce);
            fill(l, now);
        } else {
            send_ident(l, nonce);
        }
        return;
    }
    if (!l->ready)
        return;
    if (kind == SP_ACK) {
        on_ack(l, seq, now);
    } else if (kind == SP_NAK) {
        on_ack(l, (uint8_t)(seq - 1), now);
        if (l->inflight && l->seq_base == seq &&
            !(l->last_fast_seq == seq && now - l->last_fast_ms < NAK_HOLDOFF_MS)) {
            struct sl_event *e = at(l, 0);
            send_frame(l, seq, e->kind, e->payload, e->len);
            l->last_fast_seq = seq;
            l->last_fast_ms = now;
            l->retx_at_ms = now + l->rto_ms;
        }
    } else if (kind == SP_RESET) {
        if (seq == l->rx_next) {
            l->rx_next++;
            send_frame(l, seq, SP_ACK, 0, 0);
            l->reset_requested = true;
        } else if ((uint8_t)(l->rx_next - seq) <= 128) {
            send_frame(l, (uint8_t)(l->rx_next - 1), SP_ACK, 0, 0);
        } else {
            nak(l, now);
        }
    }
}

void sl_init(struct sl_link *l, sl_write_fn write, uint32_t now)
{
    /* Identity fields are set by the caller before or after; keep them. */
    l->ready = false;
    l->nonce = 0;
    l->counter = 0;
    l->head = l->count = l->inflight = 0;
    l->seq_base = 0;
    l->rto_ms = RTO_INITIAL_MS;
    l->rx_next = 0;
    l->overflowed = false;
    l->reset_requested = false;
    l->write = write;
    l->announce_at_ms = now;
    l->heartbeat_at_ms = now + HEARTBEAT_MS;
    l->last_byte_ms = now;
    l->last_nak_ms = now - NAK_HOLDOFF_MS;
    l->last_fast_ms = now - NAK_HOLDOFF_MS;
    l->last_fast_seq = 0;
    sp_decoder_init(&l->dec);
}

void sl_receive(struct sl_link *l, const uint8_t *data, size_t len, uint32_t now)
{
    uint32_t rejected = l->dec.bad_crc + l->dec.bad_trailer + l->dec.bad_length;
    if (len)
        l->last_byte_ms = now;
    sp_decoder_feed(&l->dec, data, len, on_frame, l);
    if (l->ready && l->dec.bad_crc + l->dec.bad_trailer + l->dec.bad_length != rejected)
        nak(l, now);
}

void sl_poll(struct sl_link *l, uint32_t now)
{
    if (l->dec.n && now - l->last_byte_ms >= PARTIAL_MS) {
        sp_decoder_abandon(&l->dec, on_frame, l);
        l->last_byte_ms = now;
    }
    if (!l->ready) {
        if ((int32_t)(now - l->announce_at_ms) >= 0) {
            send_ident(l, 0); /* boot notice */
            l->announce_at_ms = now + ANNOUNCE_MS;
        }
        return;
    }
    if (l->inflight && (int32_t)(now - l->retx_at_ms) >= 0) {
        l->rto_ms = l->rto_ms * 2 > RTO_MAX_MS ? RTO_MAX_MS : l->rto_ms * 2;
        resend_all(l, now);
    }
    if ((int32_t)(now - l->heartbeat_at_ms) >= 0) {
        uint8_t p[4];
        sp_put_u32(p, now);
        send_frame(l, 0, SP_HEARTBEAT, p, 4);
        l->heartbeat_at_ms = now + HEARTBEAT_MS;
    }
}

static bool push(struct sl_link *l, uint8_t kind, const uint8_t *p, uint8_t len, uint32_t now)
{
    if (l->count >= SL_QUEUE - 1 || len > SL_EVENT_MAX) {
        l->overflowed = true; /* reported once there is room, so the host learns events were lost */
        return false;
    }
    struct sl_event *e = at(l, l->count);
    e->kind = kind;
    e->len = len;
    memcpy(e->payload, p, len);
    l->count++;
    fill(l, now);
    return true;
}

static bool push_counted(struct sl_link *l, uint8_t kind, uint8_t *p, uint8_t len, uint32_t now)
{
    if (l->overflowed && l->count < SL_QUEUE - 2) {
        uint8_t e[5 + 16];
        l->overflowed = false;
        sp_put_u32(e, ++l->counter);
        e[4] = 4; /* queue overflow */
        memcpy(e + 5, "event queue full", 16);
        push(l, SP_DEVICE_ERROR, e, sizeof e, now);
    }
    sp_put_u32(p, ++l->counter);
    if (!push(l, kind, p, len, now)) {
        l->counter--;
        return false;
    }
    return true;
}

bool sl_card_drawn(struct sl_link *l, const uint8_t *uid, uint8_t uid_len, uint8_t quality, uint32_t now)
{
    uint8_t p[6 + 10];
    if (uid_len != 4 && uid_len != 7 && uid_len != 10)
        return false;
    p[4] = quality;
    p[5] = uid_len;
    memcpy(p + 6, uid, uid_len);
    return push_counted(l, SP_CARD_DRAWN, p, (uint8_t)(6 + uid_len), now);
}

bool sl_seat_tag(struct sl_link *l, uint8_t antenna, const uint8_t *uid, uint8_t uid_len, uint8_t quality,
                 uint32_t now)
{
    uint8_t p[7 + 10];
    if (uid_len != 4 && uid_len != 7 && uid_len != 10)
        return false;
    p[4] = antenna;
    p[5] = quality;
    p[6] = uid_len;
    memcpy(p + 7, uid, uid_len);
    return push_counted(l, SP_SEAT_TAG, p, (uint8_t)(7 + uid_len), now);
}

bool sl_shoe_state(struct sl_link *l, bool loaded, uint32_t now)
{
    uint8_t p[5];
    p[4] = loaded ? 1 : 0;
    return push_counted(l, SP_SHOE_STATE, p, 5, now);
}

bool sl_device_error(struct sl_link *l, uint8_t code, const char *detail, uint32_t now)
{
    uint8_t p[5 + 19];
    size_t n = strlen(detail);
    if (n > 19)
        n = 19;
    p[4] = code;
    memcpy(p + 5, detail, n);
    return push_counted(l, SP_DEVICE_ERROR, p, (uint8_t)(5 + n), now);
}
