"""Frame time of two versions of the detector, measured side by side in one process.

    python bench/bench_vision_ab.py aa7ffcc            # that commit's detector (vision/detect) against the working tree's
    python bench/bench_vision_ab.py aa7ffcc HEAD --deck anglo --rounds 12
    python bench/bench_vision_ab.py /tmp/detect_variant.py          # a file instead of a revision

Why: on a shared machine the frame time of one run wanders by a few milliseconds
from run to run, more than a change worth making saves.  Here both detectors read
the same frames, alternately, in one process, and the ratio of their medians is
what is reported.  Only the detector (``vision/detect``, once ``vision/detect.py``) and its compiled
inner loops (``vision/window_match.py``, ``vision/strip_match.py``, where the revision has them; the
detector's copy imports its own) are taken from the revision; the rest of the package (the deck
model, the enrollment) is the working tree's, so the two must agree on the deck file (they do while
``MODEL_VERSION`` is unchanged).

Same frames as the speed run of ``bench_vision.py``: 1920x1080, 8 seats at sixth
street, one core, CPU time of ``Detector.detect``.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # one core, before numpy loads BLAS

import argparse  # noqa: E402
import importlib.util  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

# this tree's packages, not the installed (editable) ones: run from a git worktree, the bench measures
# that worktree's code (without this line it imported the main checkout's vision)
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from types import ModuleType  # noqa: E402

import cv2  # noqa: E402

from vision.calibration import calibrate  # noqa: E402
from vision.deck import enroll, read_face_dir  # noqa: E402
from vision.deckart import face_dir  # noqa: E402
from vision.scene import FaceSet, render_scene  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
#: modules of ``vision`` outside the detector's package that travel with it (its compiled loops)
KERNELS = ("window_match", "strip_match")


def _rev_files(rev: str | None) -> dict[str, str]:
    """The detector's source at ``rev`` (None: the working tree): ``{"detect.py": text}`` for the
    single module it once was, ``{"detect/<file>.py": text, ...}`` for the package it is now, and
    ``{"<kernel>.py": text}`` for each of :data:`KERNELS` the revision has."""
    if rev is None:
        pkg = ROOT / "vision" / "detect"
        if pkg.is_dir():
            files = {f"detect/{f.name}": f.read_text() for f in sorted(pkg.glob("*.py"))}
        else:
            files = {"detect.py": (ROOT / "vision" / "detect.py").read_text()}
        files.update({f"{k}.py": (ROOT / "vision" / f"{k}.py").read_text() for k in KERNELS if (ROOT / "vision" / f"{k}.py").is_file()})
        return files
    listing = subprocess.run(["git", "-C", str(ROOT), "ls-tree", "-r", "--name-only", rev, "vision/"],
                             check=True, capture_output=True, text=True).stdout.split()
    names = [n for n in listing if n == "vision/detect.py" or (n.startswith("vision/detect/") and n.endswith(".py"))
             or n in {f"vision/{k}.py" for k in KERNELS}]
    return {n.removeprefix("vision/"): subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:{n}"], check=True,
                                                       capture_output=True, text=True).stdout for n in names}


def _own_imports(text: str, name: str, kernels: list[str]) -> str:
    """A module's source with its imports of the detector and of its kernels pointed at the copy ``name``."""
    for k in kernels:
        text = text.replace(f"vision.{k}", f"{name}.{k}")
    return text.replace("vision.detect", name)


def detect_module(rev: str | None, name: str, tmp: Path) -> ModuleType:
    """The detector as it was at ``rev`` (None: the working tree; a path: that file), loaded as module ``name``.

    The package ``vision.detect`` is copied under ``name`` with its own imports pointed at the copy,
    so that two versions live side by side; the rest of ``vision`` is the working tree's.
    """
    if rev is not None and rev.endswith(".py") and Path(rev).is_file():  # a variant kept aside while trying things
        spec = importlib.util.spec_from_file_location(name, Path(rev))
    else:
        files = _rev_files(rev)
        if "detect.py" in files:  # (a single module: its kernels are the working tree's)
            path = tmp / f"{name}.py"
            path.write_text(files["detect.py"])
            spec = importlib.util.spec_from_file_location(name, path)
        else:
            pkg = tmp / name
            pkg.mkdir()
            kernels = [k for k in KERNELS if f"{k}.py" in files]
            for rel, text in files.items():
                (pkg / rel.removeprefix("detect/")).write_text(_own_imports(text, name, kernels))
            spec = importlib.util.spec_from_file_location(name, pkg / "__init__.py", submodule_search_locations=[str(pkg)])
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("old", help="git revision of the detector to compare against")
    ap.add_argument("new", nargs="?", default=None, help="git revision (default: the working tree)")
    ap.add_argument("--deck", default="guyenne-classic")
    ap.add_argument("--frames", type=int, default=10, help="distinct frames (camera poses)")
    ap.add_argument("--rounds", type=int, default=8, help="passes over the frames")
    ap.add_argument("--seed", type=int, default=15000)
    args = ap.parse_args()
    cv2.setNumThreads(1)
    directory = face_dir(args.deck)
    faces, back = read_face_dir(directory)
    model = enroll(faces, back, args.deck)
    fs = FaceSet.load(directory)
    frames = []
    for k in range(args.frames):
        scene = render_scene(fs, args.seed + k, seats=8, street=6, all_active=True, close_up=False,
                             off_felt=False, half_turned=False)
        frames.append((scene.image, calibrate(scene.image, scene.layout)))
    tmp = tempfile.TemporaryDirectory()  # kept while the copies run (numba caches their compiled loops beside them)
    old = detect_module(args.old, "detect_old", Path(tmp.name))
    new = detect_module(args.new, "detect_new", Path(tmp.name))
    detectors = [(old.Detector(model, cal), new.Detector(model, cal)) for _img, cal in frames]
    for pair in detectors:
        for det in pair:
            det.at_showdown = False  # sixth street, as the service reads it and bench_vision.py's speed run (no tabled cards)
    for (img, _cal), (a, b) in zip(frames, detectors, strict=True):  # warm up both
        a.detect(img)
        b.detect(img)
    t_old: list[float] = []
    t_new: list[float] = []
    for _ in range(args.rounds):
        for (img, _cal), (a, b) in zip(frames, detectors, strict=True):
            for det, out in ((a, t_old), (b, t_new)):
                t0 = time.process_time()
                det.detect(img)
                out.append((time.process_time() - t0) * 1000)
    m_old, m_new = statistics.median(t_old), statistics.median(t_new)
    print(f"{args.deck}, {len(t_old)} frames each, one core, CPU time per frame (median):")
    print(f"  old {args.old}: {m_old:.2f} ms")
    print(f"  new {args.new or 'working tree'}: {m_new:.2f} ms")
    print(f"  new/old {m_new / m_old:.3f}")
    tmp.cleanup()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
