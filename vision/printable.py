"""The printable layout: the felt with its seat zones and ArUco markers, at real size, as PNG and PDF.

``studtable vision layout --width-m W --depth-m D --seats N --out layout.pdf`` writes

* ``layout.pdf``: one page the size of the felt (plus a 10 mm margin), the picture embedded at
  ``--dpi``; print it at 100 % (no "fit to page") on a large-format printer or a textile printer;
* ``layout.png``: the same picture, its resolution recorded in the file (pHYs), for print shops;
* ``layout.layout.json``: the layout in table millimetres, for ``vision calibrate --layout``.

The felt is drawn in one felt green; the seat zones, their numbers (as the engine numbers seats:
seat 1 on the dealer's left, round the table) and the dealer's area are drawn in a darker shade
of the same hue, which the camera's felt test takes for felt (a white line would join the cards
lying on it into one blob).  The markers are black on white with a quiet zone, as the camera
needs them.

The PDF is written by hand (a page, one image XObject compressed with zlib): no PDF library.
"""

from __future__ import annotations

import struct
import zlib

import cv2
import numpy as np

from vision.calibration import aruco_dictionary
from vision.layout import TableLayout

MARGIN_MM = 10.0
FELT_BGR = (52, 110, 38)  # a felt green
INK_BGR = (30, 66, 22)  # the same hue, darker: lines and numbers the felt test takes for felt
PAPER_BGR = (255, 255, 255)


def layout_image(layout: TableLayout, dpi: float = 100.0) -> np.ndarray:
    """The layout as a top view at ``dpi`` (BGR), the dealer at the bottom."""
    px = dpi / 25.4
    a, b = layout.felt_a, layout.felt_b
    w, h = round((2 * a + 2 * MARGIN_MM) * px), round((2 * b + 2 * MARGIN_MM) * px)

    off = np.array([a + MARGIN_MM, b + MARGIN_MM])  # the felt's centre, mm from the page's top left

    def to_px(pts: np.ndarray) -> np.ndarray:
        p = (np.asarray(pts, np.float64) + off) * px
        fixed: np.ndarray = np.round(p * 16).astype(np.int32)  # 4 bits of sub-pixel precision for cv2's drawing
        return fixed

    img = np.full((h, w, 3), PAPER_BGR, np.uint8)
    cv2.fillPoly(img, [to_px(layout.felt_polygon(720))], FELT_BGR, cv2.LINE_AA, 4)
    line = max(1, round(3.0 * px))  # 3 mm lines
    for n, seat in sorted(layout.seats.items()):
        cv2.polylines(img, [to_px(np.array(seat.zone))], True, INK_BGR, line, cv2.LINE_AA, 4)
        # The number near the zone's back edge (the player's side), upright for the player.
        c = np.array(seat.center) - np.array(seat.forward) * 85.0
        _text(img, str(n), (c + off) * px, 40.0 * px, seat.forward)
    cv2.polylines(img, [to_px(np.array(layout.dealer))], True, INK_BGR, line, cv2.LINE_AA, 4)
    dic = aruco_dictionary()
    for mid, quad in layout.markers.items():
        q = np.array(quad)
        c = q.mean(axis=0)
        quiet = c + (q - c) * 1.5
        sticker = np.full((180, 180), 255, np.uint8)
        sticker[30:150, 30:150] = cv2.aruco.generateImageMarker(dic, mid, 120)
        dst = ((quiet + off) * px).astype(np.float32)
        x0, y0 = np.floor(dst.min(axis=0)).astype(int)
        x1, y1 = np.ceil(dst.max(axis=0)).astype(int)
        src = np.array([[0, 0], [180, 0], [180, 180], [0, 180]], np.float32)
        m = cv2.getPerspectiveTransform(src, (dst - [x0, y0]).astype(np.float32))
        size = (int(x1 - x0), int(y1 - y0))
        warped = cv2.warpPerspective(cv2.cvtColor(sticker, cv2.COLOR_GRAY2BGR), m, size, flags=cv2.INTER_NEAREST)
        mask = cv2.warpPerspective(np.full((180, 180), 255, np.uint8), m, size, flags=cv2.INTER_NEAREST)
        region = img[y0:y1, x0:x1]
        region[mask > 0] = warped[mask > 0]
    return img


def _text(img: np.ndarray, text: str, centre: np.ndarray, height_px: float, forward: tuple[float, float]) -> None:
    """``text`` centred at ``centre``, ``height_px`` tall, its top towards ``forward`` (the table's centre)."""
    font, scale = cv2.FONT_HERSHEY_DUPLEX, height_px / 22.0
    thick = max(1, round(height_px / 8))
    (tw, th), base = cv2.getTextSize(text, font, scale, thick)
    pad = thick + 2
    tile = np.zeros((th + base + 2 * pad, tw + 2 * pad), np.uint8)
    cv2.putText(tile, text, (pad, pad + th), font, scale, 255, thick, cv2.LINE_AA)
    # Upright for a player looking towards the centre: the tile's up (-y) along forward.
    angle = float(np.degrees(np.arctan2(forward[0], -forward[1])))
    r = int(np.hypot(*tile.shape)) // 2 + 2  # the rotated tile fits a square 2r wide
    rot = cv2.getRotationMatrix2D((tile.shape[1] / 2, tile.shape[0] / 2), -angle, 1.0)
    rot[:, 2] += np.array([r, r]) - np.array([tile.shape[1] / 2, tile.shape[0] / 2])
    mask = cv2.warpAffine(tile, rot, (2 * r, 2 * r))
    cx, cy = round(float(centre[0])), round(float(centre[1]))
    region = img[cy - r : cy + r, cx - r : cx + r]
    alpha = (mask[: region.shape[0], : region.shape[1]].astype(np.float32) / 255)[:, :, None]
    region[:] = (region * (1 - alpha) + np.array(INK_BGR, np.float32) * alpha).astype(np.uint8)


def png_bytes(img: np.ndarray, dpi: float) -> bytes:
    """The picture as PNG with its resolution recorded (a pHYs chunk: pixels per metre)."""
    ok, buf = cv2.imencode(".png", img)
    if not ok:
        raise ValueError("OpenCV could not encode the layout as PNG")
    data = buf.tobytes()
    ppm = round(dpi / 0.0254)
    body = b"pHYs" + struct.pack(">IIB", ppm, ppm, 1)
    chunk = struct.pack(">I", 9) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)
    end_of_ihdr = 8 + 8 + 13 + 4  # signature, IHDR's length and type, its 13 bytes, its CRC
    return data[:end_of_ihdr] + chunk + data[end_of_ihdr:]


def pdf_bytes(img: np.ndarray, dpi: float) -> bytes:
    """A one-page PDF whose page is the picture at ``dpi`` (real size when printed at 100 %)."""
    h, w = img.shape[:2]
    wpt, hpt = w / dpi * 72, h / dpi * 72
    if max(wpt, hpt) > 14400:
        raise ValueError(f"a page {wpt / 72:.0f} x {hpt / 72:.0f} in is larger than PDF allows (200 in)")
    rgb = np.ascontiguousarray(img[:, :, ::-1])
    image = zlib.compress(rgb.tobytes(), 6)
    content = f"q {wpt:.3f} 0 0 {hpt:.3f} 0 0 cm /Im0 Do Q\n".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        (f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {wpt:.3f} {hpt:.3f}] "
         "/Resources << /XObject << /Im0 4 0 R >> >> /Contents 5 0 R >>").encode(),
        (f"<< /Type /XObject /Subtype /Image /Width {w} /Height {h} /ColorSpace /DeviceRGB "
         f"/BitsPerComponent 8 /Filter /FlateDecode /Length {len(image)} >>\nstream\n").encode() + image + b"\nendstream",
        f"<< /Length {len(content)} >>\nstream\n".encode() + content + b"endstream",
    ]
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for n, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{n} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{o:010d} 00000 n \n".encode() for o in offsets)
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)
