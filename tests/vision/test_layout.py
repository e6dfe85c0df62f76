"""The printable layout: PDF and PNG at real size for any table, calibrated from a camera's view of it."""

from __future__ import annotations

import json
import re
import struct
import zlib
from pathlib import Path

import cv2
import numpy as np

from engine.cli import main
from vision.calibration import Calibration
from vision.layout import TableLayout, default_layout, table_layout

DPI = 40


def _pdf_parts(pdf: bytes) -> tuple[list[float], bytes]:
    """The page's MediaBox and the image stream, checking the cross-reference table on the way."""
    assert pdf.startswith(b"%PDF-1.4\n") and pdf.rstrip().endswith(b"%%EOF")
    xref = int(pdf[pdf.rindex(b"startxref") + 9 :].split()[0])
    assert pdf[xref:].startswith(b"xref\n")
    lines = pdf[xref:].split(b"\n")
    count = int(lines[1].split()[1])
    offsets = [int(line.split()[0]) for line in lines[3 : 2 + count]]
    for n, off in enumerate(offsets, start=1):
        assert pdf[off:].startswith(f"{n} 0 obj\n".encode()), n
    box = re.search(rb"/MediaBox \[0 0 ([0-9.]+) ([0-9.]+)\]", pdf)
    assert box is not None
    length = int(re.search(rb"/Subtype /Image .*?/Length (\d+)", pdf, re.S).group(1))  # type: ignore[union-attr]
    start = pdf.index(b"stream\n", pdf.index(b"/Subtype /Image")) + 7
    return [float(box.group(1)), float(box.group(2))], pdf[start : start + length]


def test_the_layout_is_written_at_real_size_for_the_tables_dimensions(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "t.pdf"
    assert main(["vision", "layout", "--width-m", "1.8", "--depth-m", "1.0", "--seats", "6",
                 "--dpi", str(DPI), "--out", str(out)]) == 0
    assert "print at 100 %" in capsys.readouterr().out
    (w_pt, h_pt), stream = _pdf_parts(out.read_bytes())
    # The page is the felt and a 10 mm margin, in points (1/72 in), to a fraction of a millimetre.
    assert abs(w_pt / 72 * 25.4 - 1820) < 1 and abs(h_pt / 72 * 25.4 - 1020) < 1
    png = (tmp_path / "t.png").read_bytes()
    ppm = struct.unpack(">II", png[png.index(b"pHYs") + 4 : png.index(b"pHYs") + 12])
    assert ppm == (round(DPI / 0.0254),) * 2
    img = cv2.imdecode(np.frombuffer(png, np.uint8), cv2.IMREAD_COLOR)
    assert img.shape[:2] == (round(1020 * DPI / 25.4), round(1820 * DPI / 25.4))
    assert zlib.decompress(stream) == np.ascontiguousarray(img[:, :, ::-1]).tobytes()  # the PDF holds the PNG's picture
    layout = TableLayout.from_dict(json.loads((tmp_path / "t.layout.json").read_text()))
    assert layout == table_layout(1800, 1000, 6) and sorted(layout.seats) == [1, 2, 3, 4, 5, 6]


def test_the_shipped_layout_is_the_one_for_its_dimensions() -> None:
    for n in range(2, 9):
        assert default_layout(n) == table_layout(1540, 880, n)


def test_a_table_too_small_for_its_seats_is_refused_in_one_line(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["vision", "layout", "--width-m", "1.1", "--depth-m", "0.8", "--seats", "8",
                 "--out", str(tmp_path / "x.pdf")]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "\n" not in err and "make the table bigger" in err
    assert not (tmp_path / "x.pdf").exists()


def test_calibrating_from_the_printed_layout_keeps_the_engines_seat_numbers(tmp_path: Path) -> None:
    """A camera's view of the printed layout (the PNG seen in perspective), calibrated for three seats
    in play: the calibration has seats 1, 3 and 6 (not 1, 2, 3), each where the print has it."""
    out = tmp_path / "t.pdf"
    assert main(["vision", "layout", "--width-m", "1.8", "--depth-m", "1.0", "--seats", "6",
                 "--dpi", str(DPI), "--out", str(out)]) == 0
    layout = table_layout(1800, 1000, 6)
    sheet = cv2.imread(str(tmp_path / "t.png"))
    h, w = sheet.shape[:2]
    camera = np.array([[150, 90], [1790, 60], [1870, 1040], [60, 1000]], np.float32)
    warp = cv2.getPerspectiveTransform(np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32), camera)
    view = cv2.warpPerspective(sheet, warp, (1920, 1080), flags=cv2.INTER_AREA, borderValue=(90, 90, 90))
    cv2.imwrite(str(tmp_path / "view.png"), view)
    cal_path = tmp_path / "cal.json"
    assert main(["vision", "calibrate", "--image", str(tmp_path / "view.png"), "--layout", str(tmp_path / "t.layout.json"),
                 "--in-play", "1,3,6", "--out", str(cal_path)]) == 0
    cal = Calibration.from_dict(json.loads(cal_path.read_text()))
    assert sorted(cal.layout.seats) == [1, 3, 6]
    px = DPI / 25.4
    for n in (1, 3, 6):
        assert cal.layout.seats[n] == layout.seats[n]
        centre = np.array(layout.seats[n].center)
        on_sheet = (centre + np.array([900.0 + 10, 500.0 + 10])) * px  # the felt centre on the sheet, mm
        expected = cv2.perspectiveTransform(on_sheet.reshape(1, 1, 2), warp).reshape(2)
        assert np.linalg.norm(cal.to_image(centre[None])[0] - expected) < 3, n
    assert main(["vision", "calibrate", "--image", str(tmp_path / "view.png"), "--layout", str(tmp_path / "t.layout.json"),
                 "--in-play", "1,9", "--out", str(cal_path)]) == 1
