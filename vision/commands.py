"""The vision subcommands of ``studtable``: enroll, detect, calibrate, layout, run, render.

These are the edges: they read and write files and open cameras, then call the
pure core (:mod:`vision.deck`, :mod:`vision.detect`, :mod:`vision.calibration`,
:mod:`vision.tracking`).  Errors are printed for a dealer or technician, not as
tracebacks, and the exit status is non-zero.

CLI contract (relied on by other tools; keep it exact):

* ``studtable vision enroll --faces DIR --out DECKFILE``
* ``studtable vision detect --deck DECKFILE IMAGE`` prints exactly one JSON
  object ``{"cards": [{"card", "face_up", "center", "corners"}]}``; any picture of
  cards will do: without the layout's ArUco markers the card scale is estimated
  from the cards in it (:mod:`vision.scale`; where every card touches another, from
  the card height it reads best at).  Cards tabled at a showdown are read
  too, unless ``--phase street`` says the picture is of a street.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path
from typing import Any


def register(sub: Any) -> None:
    """Add ``studtable vision ...`` to the ``studtable`` parser."""
    vision = sub.add_parser("vision", help="overhead cameras: deck enrollment, calibration, card detection")
    vsub = vision.add_subparsers(dest="vision_command", metavar="SUBCOMMAND")
    vsub.required = True

    p = vsub.add_parser("enroll", help="learn a deck from its 52 flat face images (+ optional back.png)")
    p.add_argument("--faces", type=Path, help="directory of As.png, Td.png, 9c.png, ... and optionally back.png")
    p.add_argument("--camera", help="enroll live instead: camera index or stream URL; show each card in turn")
    p.add_argument("--calibration", type=Path, help="calibration file (needed with --camera)")
    p.add_argument("--out", type=Path, required=True, help="deck file to write")
    p.add_argument("--name", default=None, help="deck name stored in the file (default: the directory name)")
    p.set_defaults(handler=_enroll)

    p = vsub.add_parser("detect", help="find and read the cards in one image; prints one JSON object")
    p.add_argument("--deck", type=Path, required=True, help="deck file from 'vision enroll'")
    p.add_argument("--calibration", type=Path, default=None,
                   help="calibration file (default: the layout's ArUco markers in the image itself, or without "
                        "them the card scale estimated from the cards in the image)")
    p.add_argument("--phase", choices=("unknown", "street", "showdown"), default="unknown",
                   help="the table's phase when the picture was taken: 'street' reads rows and down cards only, "
                        "'showdown' also cards tabled at the showdown (fanned, heaped); default unknown: both, "
                        "as at a showdown")
    p.add_argument("image", type=Path)
    p.set_defaults(handler=_detect)

    p = vsub.add_parser("calibrate", help="find the layout's ArUco markers; write the calibration and a preview")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--image", type=Path, help="a picture from the mounted camera")
    src.add_argument("--camera", help="camera index, video file or stream URL (one frame is taken)")
    p.add_argument("--seats", type=int, default=8, help="seats on the printed layout (2-8; default 8)")
    p.add_argument("--width-m", type=float, default=1.54, help="the printed felt's width in metres (default 1.54)")
    p.add_argument("--depth-m", type=float, default=0.88, help="the printed felt's depth in metres (default 0.88)")
    p.add_argument("--layout", type=Path, default=None,
                   help="the layout file `vision layout` wrote (instead of --seats/--width-m/--depth-m)")
    p.add_argument("--in-play", default=None,
                   help="the seats in play, e.g. 1,4,6 (default all): the others' zones are left out, and these keep "
                        "their numbers, as the engine numbers seats")
    p.add_argument("--card-width-mm", type=float, default=63.0, help="width of the cards in use (poker: 63)")
    p.add_argument("--out", type=Path, required=True, help="calibration file to write (JSON)")
    p.add_argument("--preview", type=Path, default=None, help="PNG with the zones drawn (default: next to --out)")
    p.set_defaults(handler=_calibrate)

    p = vsub.add_parser("layout", help="the printable layout with its ArUco markers, at real size (PDF and PNG)")
    p.add_argument("--width-m", type=float, default=1.54, help="the felt's width in metres (default 1.54)")
    p.add_argument("--depth-m", type=float, default=0.88, help="the felt's depth in metres (default 0.88)")
    p.add_argument("--seats", type=int, default=8, help="seats round the table (2-8; default 8)")
    p.add_argument("--dpi", type=float, default=100.0, help="resolution of the picture (default 100)")
    p.add_argument("--out", type=Path, required=True,
                   help="PDF to write; the PNG and the layout file (for `vision calibrate --layout`) go beside it")
    p.set_defaults(handler=_layout)

    p = vsub.add_parser("run", help="the vision service: read a camera, publish observations")
    p.add_argument("--config", type=Path, default=None,
                   help="the table file: this camera's source, calibration, deck, and the broker (with --device)")
    p.add_argument("--camera", default=None, help="camera index (0), video file, or stream URL")
    p.add_argument("--calibration", type=Path, default=None)
    p.add_argument("--deck", type=Path, default=None)
    p.add_argument("--table", default="t1", help="table id on the bus (default t1)")
    p.add_argument("--device", default=None, help="this camera's device id on the bus (default cam1)")
    p.add_argument("--session", type=int, default=None,
                   help="restart counter for the wire contract (default: one more than the last run's, kept in "
                        "--state-file)")
    p.add_argument("--state-file", type=Path, default=None,
                   help="file that keeps the session counter across restarts (default: beside --calibration, "
                        "CALIBRATION.session)")
    p.add_argument("--stable-frames", type=int, default=None,
                   help="frames a change must hold before it is reported (default 5, or the table file's)")
    p.add_argument("--vanish-s", type=float, default=None,
                   help="seconds a seat must show fewer cards (a hand over them) before that is reported "
                        "(default 2, or the table file's; 0 believes it at once)")
    p.add_argument("--max-frames", type=int, default=None, help="stop after this many frames")
    p.add_argument("--stall", type=float, default=2.0,
                   help="seconds without a frame before a live camera is reported offline (default 2)")
    p.add_argument("--nice", type=int, default=10,
                   help="lower the service's priority to this niceness, so that the shoe, the engine and the "
                        "screens on the same machine go first (default 10; 0 leaves it)")
    p.add_argument("--busy", type=float, default=1.0,
                   help="share of one core the frame loop may use, resting after each frame (a live camera's "
                        "frames meanwhile are skipped); default 1 (no rest)")
    p.add_argument("--broker", default="", help="HOST:PORT of the table's broker (default: print the messages)")
    p.add_argument("--broker-dir", default="", help="directory from `studtable broker config` (the vision login)")
    p.add_argument("--user", default="", help="broker username (instead of --broker-dir)")
    p.add_argument("--password", default="", help="broker password")
    p.set_defaults(handler=_run)

    p = vsub.add_parser("render", help="render a test scene from an Aisleriot deck (image + ground truth JSON)")
    p.add_argument("--deck-art", default="anglo", help="Aisleriot deck name (default anglo)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--seats", type=int, default=None)
    p.add_argument("--out", type=Path, required=True, help="image to write (.png or .jpg)")
    p.add_argument("--faces-out", type=Path, default=None, help="also copy the deck's flat faces here (for enroll)")
    p.set_defaults(handler=_render)


def _fail(msg: str) -> int:
    print(f"error: {msg}", file=sys.stderr)
    return 1


def _enroll(args: argparse.Namespace) -> int:
    from vision.deck import EnrollmentError, enroll, read_face_dir, save

    if args.faces is None and args.camera is None:
        return _fail("give --faces DIR (52 flat face images) or --camera SOURCE (live enrollment)")
    try:
        if args.camera is not None:
            from vision.enroll_live import enroll_from_camera

            if args.calibration is None:
                return _fail("live enrollment needs --calibration (the camera must know where the card lies)")
            faces, back = enroll_from_camera(args.camera, args.calibration)
            name = args.name or "live"
        else:
            faces, back = read_face_dir(args.faces)
            name = args.name or args.faces.resolve().name
        model = enroll(faces, back, name)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        save(model, args.out)
    except (EnrollmentError, OSError) as exc:
        return _fail(str(exc))
    print(f"deck {name!r} enrolled: 52 faces{' and the back' if back is not None else ' (no back.png: face-down cards are told by not matching any face)'} -> {args.out}")
    return 0


def _load_image(path: Path) -> Any:
    import cv2

    if not path.is_file():
        raise OSError(f"image {path} does not exist")
    img = cv2.imread(str(path), cv2.IMREAD_COLOR)
    if img is None:
        raise OSError(f"{path} is not an image OpenCV can read (PNG, JPEG, ...)")
    return img


def _detect(args: argparse.Namespace) -> int:
    from vision.calibration import Calibration, CalibrationError, calibrate
    from vision.deck import EnrollmentError, load
    from vision.detect import Detector
    from vision.layout import default_layout

    try:
        model = load(args.deck)
        img = _load_image(args.image)
        at_showdown = {"unknown": None, "street": False, "showdown": True}[args.phase]
        calib: Calibration | None = None
        if args.calibration is not None:
            calib = Calibration.from_dict(json.loads(args.calibration.read_text()))
        else:
            # The printed layout's markers are the same for any number of seats; without them, read_picture.
            with contextlib.suppress(CalibrationError):
                calib = calibrate(img, default_layout(8))
        if calib is None:
            from vision.scale import read_picture

            dets = read_picture(img, model, at_showdown)
        else:
            detector = Detector(model, calib)
            detector.at_showdown = at_showdown
            dets = detector.detect(img)
    except (EnrollmentError, CalibrationError, OSError, ValueError) as exc:
        return _fail(str(exc))
    cards = [d.to_json() for d in dets if not d.half_turned]
    print(json.dumps({"cards": cards}))
    return 0


def _calibrate(args: argparse.Namespace) -> int:
    import cv2

    from vision.calibration import CalibrationError, calibrate, draw_preview

    try:
        if args.image is not None:
            img = _load_image(args.image)
        else:
            from vision.service import open_capture

            cap = open_capture(args.camera)
            ok, img = cap.read()
            cap.release()
            if not ok:
                raise OSError(f"video source {args.camera!r} opened but gave no frame")
        layout = _calibration_layout(args)
        if args.card_width_mm != layout.card_width_mm:
            from dataclasses import replace

            layout = replace(layout, card_width_mm=args.card_width_mm)
        calib = calibrate(img, layout)
    except (CalibrationError, OSError, ValueError) as exc:
        return _fail(str(exc))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(calib.dumps())
    preview = args.preview or args.out.with_suffix(".preview.png")
    cv2.imwrite(str(preview), draw_preview(img, calib))
    print(
        f"calibrated from markers {list(calib.markers_seen)} (fit error {calib.reprojection_mm:.2f} mm) -> {args.out}; "
        f"preview {preview}"
    )
    return 0


def _calibration_layout(args: argparse.Namespace) -> Any:
    """The layout ``vision calibrate`` fits: the file ``vision layout`` wrote, or the one for
    --seats/--width-m/--depth-m; with --in-play, only those seats (keeping their numbers)."""
    from dataclasses import replace

    from vision.layout import TableLayout, table_layout

    if args.layout is not None:
        layout = TableLayout.from_dict(json.loads(args.layout.read_text()))
    else:
        layout = table_layout(args.width_m * 1000, args.depth_m * 1000, args.seats)
    if args.in_play:
        try:
            wanted = sorted({int(s) for s in str(args.in_play).split(",")})
        except ValueError:
            raise ValueError(f"--in-play takes seat numbers separated by commas, e.g. 1,4,6; not {args.in_play!r}") from None
        unknown = [s for s in wanted if s not in layout.seats]
        if unknown:
            raise ValueError(f"--in-play names seats {unknown} that the layout does not have (it has "
                             f"{sorted(layout.seats)})")
        layout = replace(layout, seats={n: s for n, s in layout.seats.items() if n in wanted})
    return layout


def _layout(args: argparse.Namespace) -> int:
    from vision.layout import LayoutError, table_layout
    from vision.printable import layout_image, pdf_bytes, png_bytes

    try:
        if not 20 <= args.dpi <= 600:
            raise ValueError(f"--dpi must be between 20 and 600, not {args.dpi}")
        layout = table_layout(args.width_m * 1000, args.depth_m * 1000, args.seats)
        img = layout_image(layout, args.dpi)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        pdf = args.out if args.out.suffix.lower() == ".pdf" else args.out.with_suffix(".pdf")
        png, lay = pdf.with_suffix(".png"), pdf.with_suffix(".layout.json")
        pdf.write_bytes(pdf_bytes(img, args.dpi))
        png.write_bytes(png_bytes(img, args.dpi))
        lay.write_text(json.dumps(layout.to_dict(), indent=1))
    except (LayoutError, ValueError, OSError) as exc:
        return _fail(str(exc))
    h, w = img.shape[:2]
    print(f"layout {args.width_m:g} x {args.depth_m:g} m felt, {args.seats} seats -> {pdf} "
          f"({w / args.dpi * 25.4:.0f} x {h / args.dpi * 25.4:.0f} mm: print at 100 %, no scaling), {png} "
          f"({w}x{h} px at {args.dpi:g} dpi), {lay} (for `vision calibrate --layout`)")
    return 0


def _run(args: argparse.Namespace) -> int:
    import logging

    from engine import wire
    from vision.calibration import Calibration, CalibrationError
    from vision.deck import EnrollmentError, load
    from vision.detect import Detector
    from vision.service import (
        PhaseGate,
        VisionCore,
        lower_priority,
        next_session,
        run_capture,
        session_file_for,
        state_listener,
    )
    from vision.tracking import Tracker

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s", stream=sys.stderr)
    _from_table_file(args)
    for name in ("camera", "calibration", "deck"):
        if getattr(args, name) is None:
            return _fail(f"give --{name} (or --config the table file with its [[cameras]])")
    try:
        model = load(args.deck)
        calib = Calibration.from_dict(json.loads(args.calibration.read_text()))
    except (EnrollmentError, CalibrationError, OSError, ValueError) as exc:
        return _fail(str(exc))
    if args.session is not None and args.session < 1:
        return _fail(f"--session must be 1 or more, not {args.session}")
    try:
        tracker = Tracker(calib.layout, 5 if args.stable_frames is None else args.stable_frames,
                          vanish_s=2.0 if args.vanish_s is None else args.vanish_s)
    except ValueError as exc:
        return _fail(str(exc).replace("stable_frames", "--stable-frames").replace("vanish_s", "--vanish-s"))
    if not 0 < args.busy <= 1:
        return _fail(f"--busy must be a share of one core, more than 0 and at most 1, not {args.busy}")
    if args.nice > 0:
        lower_priority(args.nice)
    if args.session is None:
        args.session = next_session(args.state_file or session_file_for(args.calibration))
    logging.getLogger(__name__).info("vision %s: session %d", args.device, args.session)

    bus = None
    # The table's phase from the engine's public state (tabled cards only at the showdown): the core
    # is made once the bus is up, so the listener reaches it through this holder.
    gate = PhaseGate()
    if args.broker:
        from engine.bus import BusClient, BusError
        from engine.configfile import broker_login, parse_host_port

        where = args.config
        host, port = parse_host_port(args.broker, where, "broker" if where else "--broker")
        user, password = broker_login("vision", broker_dir=args.broker_dir, user=args.user, password=args.password,
                                      file=where, key="broker.credentials" if where else "--broker-dir",
                                      device=args.device)
        try:
            bus = BusClient(host=host, port=port, username=user, password=password,
                            table=args.table, device=args.device, role="vision", session=args.session,
                            version="1", capabilities=["up_cards", "down_count", "off_felt", "half_turned"],
                            on_message=state_listener(gate))
            bus.subscribe(wire.Channel.STATE)
            bus.start()
        except (BusError, ValueError) as exc:
            return _fail(str(exc))

    def publish(msg: wire.Message) -> None:
        if bus is None:
            print(json.dumps({"topic": msg.topic, "payload": wire.encode(msg).decode()}), flush=True)
        elif msg.channel is wire.Channel.AVAIL:
            bus.set_available(msg.kind == wire.AVAILABILITY_ONLINE)
        else:
            # The bus client numbers what it sends (seq) and says online/birth at every connect.
            bus.publish(msg.channel, msg.kind, **msg.body)

    core = VisionCore(Detector(model, calib, reuse=True), tracker, publish,
                      args.table, args.device, args.session, gate=gate, expect_state=bus is not None)
    try:
        if args.stall <= 0:
            return _fail(f"--stall must be a positive number of seconds, not {args.stall}")
        n = run_capture(args.camera, core, max_frames=args.max_frames, stall_s=args.stall, busy=args.busy)
    except (OSError, ValueError) as exc:
        return _fail(str(exc))
    finally:
        if bus is not None:
            bus.stop()
    fps = core.last.fps if core.last else 0.0
    print(f"processed {n} frames at {fps:.1f} frames/s", file=sys.stderr)
    return 0


def _from_table_file(args: argparse.Namespace) -> None:
    """``--config TABLE_FILE [--device cam-1]``: this camera's settings from the table file
    (engine/tableconfig.py); options given on the command line win."""
    if args.config is None:
        args.device = args.device or "cam1"
        return
    from engine import tableconfig

    cfg = tableconfig.load(args.config)
    cam = cfg.camera(args.device)
    args.device = cam.device
    args.table = cfg.table
    args.camera = args.camera or cam.source
    args.calibration = args.calibration or Path(cam.calibration)
    args.deck = args.deck or Path(cam.deck)
    args.broker = args.broker or cfg.broker
    args.broker_dir = args.broker_dir or cfg.credentials
    if args.stable_frames is None:
        args.stable_frames = cam.stable_frames
    if args.vanish_s is None:
        args.vanish_s = cam.vanish_s
    if args.state_file is None:  # the session counter where the table keeps its services' state
        args.state_file = Path(cfg.state_dir) / f"{cam.device}.session"


def _render(args: argparse.Namespace) -> int:
    import shutil

    import cv2

    from vision.deckart import DeckArtError, face_dir
    from vision.scene import FaceSet, render_scene

    try:
        d = face_dir(args.deck_art)
    except DeckArtError as exc:
        return _fail(str(exc))
    scene = render_scene(FaceSet.load(d), args.seed, seats=args.seats)
    cv2.imwrite(str(args.out), scene.image)
    truth = {
        "seats": {str(k): v for k, v in scene.seats().items()},
        "cards": [
            {"card": c.code, "face_up": c.face_up, "role": c.role, "seat": c.seat,
             "center": [round(float(v), 1) for v in c.center],
             "corners": [[round(float(x), 1), round(float(y), 1)] for x, y in c.corners]}
            for c in scene.cards if c.in_view
        ],
    }
    args.out.with_suffix(".truth.json").write_text(json.dumps(truth, indent=1))
    if args.faces_out is not None:
        shutil.copytree(d, args.faces_out, dirs_exist_ok=True)
    print(f"{args.out} ({len(truth['cards'])} cards), truth {args.out.with_suffix('.truth.json')}")
    return 0
