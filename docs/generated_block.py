"""The one way the docs' generators write: a block between two markers, rewritten or checked.

    python docs/gen_X.py          # rewrite the block
    python docs/gen_X.py --check  # exit 1 if it is out of date (a test runs this)
"""

from __future__ import annotations

import sys
from pathlib import Path


def write_block(path: Path, start: str, end: str, body: str, generator: str) -> int:
    """Put ``body`` between ``start`` and ``end`` in ``path`` (both markers kept); with ``--check`` on
    the command line only say whether that would change the file.  The exit status."""
    text = path.read_text()
    head, rest = text.split(start, 1)
    _, tail = rest.split(end, 1)
    new = f"{head}{start}\n{body}\n{end}{tail}"
    if "--check" in sys.argv:
        if new != text:
            print(f"{path.relative_to(path.parents[1])} is out of date: run python {generator}")
            return 1
        return 0
    path.write_text(new)
    return 0
