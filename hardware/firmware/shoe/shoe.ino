/*
 * studtable RFID card shoe: ESP32 DevKit + MFRC522 (SPI), optional seat
 * antennas on further MFRC522 modules, a reed switch for "cards loaded".
 *
 * The protocol lives in ../shoe_proto.c and ../shoe_link.c (portable C, the
 * host tests compile them with gcc); this sketch only reads the hardware and
 * feeds the link.  Build with arduino-cli (see hardware/README.md); the build
 * copies the two .c files next to the sketch (arduino-cli compiles every .c in
 * the sketch folder).
 */
#include <Arduino.h>
#include <MFRC522.h>
#include <Preferences.h>
#include <SPI.h>
#include <esp_mac.h>
#include <esp_system.h>

extern "C" {
#include "shoe_link.h"
}

#define FW_MAJOR 1
#define FW_MINOR 0
#define FW_PATCH 0

#define PIN_SS_SHOE 5
#define PIN_RST 27
#define PIN_LOADED 33 /* reed switch to GND: LOW = cards in the shoe */
static const uint8_t SEAT_SS[] = {}; /* e.g. {13, 14, 16, 17, 21, 22, 25, 26} with seat antennas fitted */
#define N_SEATS (sizeof SEAT_SS / sizeof SEAT_SS[0])

static MFRC522 shoe_reader(PIN_SS_SHOE, PIN_RST);
static struct sl_link link_state;
static Preferences prefs;

static void uart_write(const uint8_t *data, size_t len) { Serial.write(data, len); }

static uint8_t reset_reason_code()
{
    switch (esp_reset_reason()) {
    case ESP_RST_POWERON: return 0;
    case ESP_RST_TASK_WDT:
    case ESP_RST_INT_WDT:
    case ESP_RST_WDT: return 1;
    case ESP_RST_BROWNOUT: return 2;
    case ESP_RST_SW: return 4;
    default: return 255;
    }
}

/* Read one card: its UID and a quality figure (255 = clean first read). */
static bool read_card(MFRC522 &r, uint8_t *uid, uint8_t *uid_len, uint8_t *quality)
{
    uint8_t q = 255;
    for (int attempt = 0; attempt < 3; attempt++) {
        if (r.PICC_IsNewCardPresent() && r.PICC_ReadCardSerial()) {
            *uid_len = r.uid.size;
            memcpy(uid, r.uid.uidByte, r.uid.size);
            *quality = q;
            r.PICC_HaltA();
            return true;
        }
        q = (uint8_t)(q - 64);
    }
    return false;
}

void setup()
{
    Serial.begin(115200);
    SPI.begin();
    pinMode(PIN_LOADED, INPUT_PULLUP);
    shoe_reader.PCD_Init();

    prefs.begin("shoe", false);
    uint16_t boot = (uint16_t)(prefs.getUShort("boot", 0) + 1); /* one flash write per boot */
    prefs.putUShort("boot", boot);

    uint8_t mac[6];
    esp_read_mac(mac, ESP_MAC_WIFI_STA);
    memset(link_state.device_id, 0, 8);
    memcpy(link_state.device_id, mac, 6);
    link_state.firmware[0] = FW_MAJOR;
    link_state.firmware[1] = FW_MINOR;
    link_state.firmware[2] = FW_PATCH;
    link_state.capabilities = 0x01 | (N_SEATS ? 0x02 : 0);
    link_state.seat_antennas = N_SEATS;
    link_state.boot_count = boot;
    link_state.reset_reason = reset_reason_code();
    sl_init(&link_state, uart_write, millis());

    byte v = shoe_reader.PCD_ReadRegister(MFRC522::VersionReg);
    if (v == 0x00 || v == 0xFF)
        sl_device_error(&link_state, 1, "MFRC522 not found", millis());
}

void loop()
{
    static bool loaded = false;
    static uint8_t last_uid[10];
    static uint8_t last_len = 0;
    static uint32_t last_seen = 0;
    uint32_t now = millis();

    uint8_t buf[64];
    size_t n = 0;
    while (Serial.available() && n < sizeof buf)
        buf[n++] = (uint8_t)Serial.read();
    sl_receive(&link_state, buf, n, now);

    bool is_loaded = digitalRead(PIN_LOADED) == LOW;
    if (is_loaded != loaded) {
        loaded = is_loaded;
        sl_shoe_state(&link_state, loaded, now);
    }

    uint8_t uid[10], len, q;
    if (read_card(shoe_reader, uid, &len, &q)) {
        /* The same tag seen again within 300 ms is the same card still at the
         * antenna, not a second draw. */
        bool same = len == last_len && !memcmp(uid, last_uid, len) && now - last_seen < 300;
        if (!same)
            sl_card_drawn(&link_state, uid, len, q, now);
        memcpy(last_uid, uid, len);
        last_len = len;
        last_seen = now;
    }

    sl_poll(&link_state, now);
    if (link_state.reset_requested) {
        Serial.flush();
        esp_restart();
    }
}
