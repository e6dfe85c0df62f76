"""engine/syspkgs.py: the system packages a window or the card art needs, found before Qt loads."""

from __future__ import annotations

import pytest

from engine import syspkgs


@pytest.mark.parametrize(("soname", "package"), [
    ("libxcb-icccm.so.4", "libxcb-icccm4"), ("libxcb-keysyms.so.1", "libxcb-keysyms1"),
    ("libxcb-cursor.so.0", "libxcb-cursor0"), ("libxkbcommon-x11.so.0", "libxkbcommon-x11-0"),
    ("libdbus-1.so.3", "libdbus-1-3"), ("libEGL.so.1", "libegl1"), ("libglib-2.0.so.0", "libglib2.0-0"),
    ("libxcb-render-util.so.0", "libxcb-render-util0"),
])
def test_a_missing_library_is_named_by_its_debian_package(soname: str, package: str) -> None:
    assert syspkgs.package_for(soname) == package


def test_without_permission_to_install_it_is_one_line_with_the_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STUDTABLE_NO_APT", "1")
    assert not syspkgs.may_install()
    line = syspkgs.provide(["libxcb-icccm4", "libxcb-keysyms1"], "the console and monitor windows")
    assert line == ("the console and monitor windows need libxcb-icccm4 libxcb-keysyms1: "
                    "sudo apt-get install -y --no-install-recommends libxcb-icccm4 libxcb-keysyms1")
    assert syspkgs.provide([], "anything") is None


def test_the_offscreen_platform_needs_nothing_missing_here() -> None:
    pytest.importorskip("PySide6")
    # The tests run Qt offscreen on this machine, so whatever that plugin needs is installed.
    assert syspkgs.missing_qt_packages("offscreen") == []
