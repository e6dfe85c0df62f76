/*
 * Host-side test of the firmware's framing and CRC against
 * hardware/test_vectors.json (the file the Python tests read too).
 *
 *   gcc -std=c99 -Wall -Wextra -Werror -I.. ../shoe_proto.c host_test.c -o host_test
 *   ./host_test ../../test_vectors.json
 *
 * Prints one line per vector ("ok <type> <name>" or "FAIL ...") and a final
 * "checked N vectors, F failures"; exits 1 on any failure.  The file has one
 * JSON object per line, so a few string searches read it without a JSON library.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shoe_proto.h"

#define MAXB 4096

static int failures, checked;

/* Finds "key": and returns a pointer to the value, or NULL. */
static const char *field(const char *line, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\": ", key);
    const char *p = strstr(line, pat);
    return p ? p + strlen(pat) : NULL;
}

/* Copies the JSON string value at p (which points at its opening quote). */
static int string_at(const char *p, char *out, size_t cap)
{
    if (!p || *p != '"')
        return -1;
    p++;
    size_t n = 0;
    while (*p && *p != '"' && n + 1 < cap)
        out[n++] = *p++;
    out[n] = 0;
    return 0;
}

static size_t unhex(const char *s, uint8_t *out)
{
    size_t n = 0;
    while (s[0] && s[1]) {
        unsigned v;
        sscanf(s, "%2x", &v);
        out[n++] = (uint8_t)v;
        s += 2;
    }
    return n;
}

static void hex(const uint8_t *b, size_t n, char *out)
{
    for (size_t i = 0; i < n; i++)
        sprintf(out + 2 * i, "%02x", b[i]);
    out[2 * n] = 0;
}

struct collected {
    char frames[16][2 * SP_MAX_FRAME + 1];
    int n;
};

static void collect(void *ctx, uint8_t seq, uint8_t kind, const uint8_t *payload, uint8_t len)
{
    struct collected *c = ctx;
    uint8_t f[SP_MAX_FRAME];
    size_t n = sp_encode(f, seq, kind, payload, len);
    if (c->n < 16)
        hex(f, n, c->frames[c->n]);
    c->n++;
}

/* Compares the frames collected with the JSON array of hex strings at p. */
static int same_frames(const struct collected *c, int from, const char *p)
{
    int i = from;
    if (!p || *p != '[')
        return 0;
    p++;
    char want[2 * SP_MAX_FRAME + 1];
    while (*p == '"' || *p == ' ' || *p == ',') {
        if (*p != '"') {
            p++;
            continue;
        }
        string_at(p, want, sizeof want);
        if (i >= c->n || strcmp(c->frames[i], want) != 0)
            return 0;
        i++;
        p = strchr(p + 1, '"') + 1;
    }
    return i == c->n;
}

static void report(int ok, const char *type, const char *name, const char *detail)
{
    checked++;
    if (!ok)
        failures++;
    printf("%s %s %s%s%s\n", ok ? "ok" : "FAIL", type, name, detail[0] ? ": " : "", detail);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s test_vectors.json\n", argv[0]);
        return 2;
    }
    FILE *f = fopen(argv[1], "r");
    if (!f) {
        perror(argv[1]);
        return 2;
    }
    static char line[16384];
    static char name[256], type[16], s[2 * MAXB + 1], want[2 * MAXB + 1], got[2 * MAXB + 1];
    static uint8_t bytes[MAXB], out[MAXB];
    while (fgets(line, sizeof line, f)) {
        if (string_at(field(line, "type"), type, sizeof type) < 0)
            continue;
        string_at(field(line, "name"), name, sizeof name);
        if (!strcmp(type, "crc")) {
            string_at(field(line, "data"), s, sizeof s);
            string_at(field(line, "crc"), want, sizeof want);
            size_t n = unhex(s, bytes);
            snprintf(got, sizeof got, "%04x", sp_crc16(0xFFFFu, bytes, n));
            static char detail[2 * (2 * MAXB + 1) + 16];
            detail[0] = 0;
            if (strcmp(got, want))
                snprintf(detail, sizeof detail, "got %s want %s", got, want);
            report(!strcmp(got, want), type, name, detail);
        } else if (!strcmp(type, "frame")) {
            int seq = atoi(field(line, "seq")), kind = atoi(field(line, "kind"));
            string_at(field(line, "payload"), s, sizeof s);
            string_at(field(line, "frame"), want, sizeof want);
            size_t n = unhex(s, bytes);
            size_t m = sp_encode(out, (uint8_t)seq, (uint8_t)kind, bytes, n);
            hex(out, m, got);
            int ok = !strcmp(got, want);
            /* And decoding the expected bytes gives back the same frame. */
            struct collected c = {0};
            struct sp_decoder d;
            sp_decoder_init(&d);
            n = unhex(want, bytes);
            sp_decoder_feed(&d, bytes, n, collect, &c);
            ok = ok && c.n == 1 && !strcmp(c.frames[0], want);
            report(ok, type, name, ok ? "" : got);
        } else if (!strcmp(type, "stream")) {
            string_at(field(line, "stream"), s, sizeof s);
            size_t n = unhex(s, bytes);
            struct collected c = {0};
            struct sp_decoder d;
            sp_decoder_init(&d);
            /* Feed one byte at a time: the way a UART interrupt delivers them. */
            for (size_t i = 0; i < n; i++)
                sp_decoder_feed(&d, bytes + i, 1, collect, &c);
            int ok = same_frames(&c, 0, field(line, "frames"));
            int before_idle = c.n;
            while (d.n)
                sp_decoder_abandon(&d, collect, &c);
            struct collected idle = {0};
            for (int i = before_idle; i < c.n && idle.n < 16; i++)
                strcpy(idle.frames[idle.n++], c.frames[i]);
            ok = ok && same_frames(&idle, 0, field(line, "after_idle"));
            report(ok, type, name, ok ? "" : "frames differ");
        }
    }
    fclose(f);
    printf("checked %d vectors, %d failures\n", checked, failures);
    return failures ? 1 : 0;
}
