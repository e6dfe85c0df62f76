"""Debian packages a command needs beyond pip: find what is missing, install it or say how, in one line.

pip brings every Python dependency, but some things only the system has: the shared libraries Qt's
window platform loads (``libxcb-icccm4``, ``libxcb-keysyms1``, ``libxcb-cursor0``, ...; without them
Qt aborts the process with SIGABRT and a message that names the wrong package), and Debian's card art
(``gnome-cards-data``, ``librsvg2-bin``).  ``missing_qt_packages()`` looks BEFORE Qt is loaded: it runs
``ldd`` on the Qt platform plugin that will be used and maps every library not found to its Debian
package.  ``provide()`` installs the packages when it may (root, apt-get present, not disabled by
``STUDTABLE_NO_APT=1``), else returns the one line that names them and the command.

An edge module (it runs programs); nothing in the cores imports it.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
from pathlib import Path

# Libraries whose Debian package is not simply the soname's name and number.
_PACKAGE_OF = {
    "libglib-2.0.so.0": "libglib2.0-0",
    "libgthread-2.0.so.0": "libglib2.0-0",
    "libgobject-2.0.so.0": "libglib2.0-0",
    "libxkbcommon-x11.so.0": "libxkbcommon-x11-0",
    "libX11-xcb.so.1": "libx11-xcb1",
    "libX11.so.6": "libx11-6",
    "libxcb-util.so.1": "libxcb-util1",
    "libEGL.so.1": "libegl1",
    "libGL.so.1": "libgl1",
    "libOpenGL.so.0": "libopengl0",
    "libGLX.so.0": "libglx0",
    "libfreetype.so.6": "libfreetype6",
    "libgssapi_krb5.so.2": "libgssapi-krb5-2",
    "libwayland-client.so.0": "libwayland-client0",
    "libwayland-cursor.so.0": "libwayland-cursor0",
    "libwayland-egl.so.1": "libwayland-egl1",
    "libSM.so.6": "libsm6",
    "libICE.so.6": "libice6",
}
_SONAME = re.compile(r"^(lib[\w.+-]+?)\.so\.(\d+)")

APT_HINT = "sudo apt-get install -y --no-install-recommends"


def package_for(soname: str) -> str:
    """The Debian package that ships ``soname`` (``libxcb-icccm.so.4`` -> ``libxcb-icccm4``)."""
    if soname in _PACKAGE_OF:
        return _PACKAGE_OF[soname]
    m = _SONAME.match(soname)
    if not m:
        return soname
    name, major = m.group(1).lower(), m.group(2)
    return f"{name}-{major}" if name[-1].isdigit() else f"{name}{major}"


def qt_platform() -> str:
    """The Qt platform plugin a window would use here: $QT_QPA_PLATFORM, else xcb on X11, else wayland."""
    chosen = os.environ.get("QT_QPA_PLATFORM", "").split(":")[0].split(";")[0]
    if chosen:
        return chosen
    if os.environ.get("DISPLAY"):
        return "xcb"
    if os.environ.get("WAYLAND_DISPLAY"):
        return "wayland"
    return "offscreen"


def _qt_dir() -> Path | None:
    spec = importlib.util.find_spec("PySide6")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def missing_libraries(binaries: list[Path]) -> list[str]:
    """The shared libraries ``ldd`` cannot find for any of ``binaries`` (sonames, sorted)."""
    if shutil.which("ldd") is None:
        return []
    found: set[str] = set()
    for binary in binaries:
        if not binary.exists():
            continue
        proc = subprocess.run(["ldd", str(binary)], capture_output=True, text=True, check=False)
        for line in proc.stdout.splitlines():
            if "not found" in line:
                found.add(line.split("=>")[0].strip())
    return sorted(found)


def missing_qt_packages(platform: str | None = None) -> list[str]:
    """Debian packages Qt's ``platform`` plugin (and QtWidgets) need and this machine lacks."""
    qt = _qt_dir()
    if qt is None:
        return []
    platform = platform or qt_platform()
    plugin_dir = qt / "Qt" / "plugins" / "platforms"
    binaries = list(plugin_dir.glob(f"libq{platform}.so"))
    binaries += list((qt / "Qt" / "lib").glob("libQt6Widgets.so.6"))
    if platform == "xcb":
        binaries += list((qt / "Qt" / "lib").glob("libQt6XcbQpa.so.6"))
        # Qt loads libxcb-cursor at run time (dlopen), so ldd does not list it: look for it by name.
        extra = [] if _have_library("libxcb-cursor.so.0") else ["libxcb-cursor0"]
    else:
        extra = []
    return sorted({package_for(lib) for lib in missing_libraries(binaries)} | set(extra))


def _have_library(soname: str) -> bool:
    if shutil.which("ldconfig") or Path("/sbin/ldconfig").exists():
        exe = shutil.which("ldconfig") or "/sbin/ldconfig"
        out = subprocess.run([exe, "-p"], capture_output=True, text=True, check=False).stdout
        return soname in out
    return any(Path(d, soname).exists() for d in ("/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
                                                     "/lib/x86_64-linux-gnu", "/usr/lib"))


def may_install() -> bool:
    return (os.geteuid() == 0 and shutil.which("apt-get") is not None
            and os.environ.get("STUDTABLE_NO_APT", "") not in ("1", "true", "yes"))


def provide(packages: list[str], what: str, echo: bool = True) -> str | None:
    """Install ``packages`` if this process may (root with apt-get), else return one line for the user:
    what needs them, which they are, and the command.  None: nothing is missing any more."""
    if not packages:
        return None
    if may_install():
        if echo:
            print(f"installing {' '.join(packages)} ({what})", flush=True)
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        ok = subprocess.run(["apt-get", "install", "-y", "-q", "--no-install-recommends", *packages],
                            env=env, capture_output=True, text=True, check=False)
        if ok.returncode != 0:  # the package lists may be missing on a fresh machine
            subprocess.run(["apt-get", "update", "-q"], env=env, capture_output=True, check=False)
            ok = subprocess.run(["apt-get", "install", "-y", "-q", "--no-install-recommends", *packages],
                                env=env, capture_output=True, text=True, check=False)
        if ok.returncode == 0:
            return None
        tail = (ok.stderr.strip().splitlines() or ["apt-get failed"])[-1]
        return f"{what} need {' '.join(packages)}, and apt-get could not install them ({tail})"
    return f"{what} need {' '.join(packages)}: {APT_HINT} {' '.join(packages)}"
