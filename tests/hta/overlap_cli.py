"""What the HTA tests share: the release CLI they run."""

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CLI = Path(os.environ.get("OVERLAP_LAB_CLI", ROOT / "target" / "release" / "overlap-lab"))


def cli(*args):
    """Runs the CLI; its standard output, or a failed assertion with its error."""
    assert CLI.exists(), f"{CLI} is missing: cargo build --release -p overlap-lab"
    done = subprocess.run([str(CLI), *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout
