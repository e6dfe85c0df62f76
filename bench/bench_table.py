"""Table latency: a card drawn at the simulated shoe -> the console's public/state updated.

The bench is the demo table's own (``dealer_console/demo/bench.py``: the demo is the composition
root and nothing outside ``dealer_console`` imports it), so this file runs it as a program with
the same arguments.  Usage: python bench/bench_table.py [--hands 20] [--brokers amqtt,mosquitto] [--floor 500] [--camera off|on|both]
       [--runs N] [--processes]
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

if __name__ == "__main__":
    root = Path(__file__).resolve().parents[1]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(root), env.get("PYTHONPATH", "")) if p)
    sys.exit(subprocess.call([sys.executable, "-m", "dealer_console.demo.bench", *sys.argv[1:]], env=env))
