"""Print, per config, where the engine and the expected findings differ.

Run from analyzer/: `../.venv/bin/python -m tests.precision.show [config ...]`. Used to update
DISAGREEMENTS.md and shrink known_wrong.py after an engine change.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

from tests.precision.harness import (
    all_cases,
    analyse_dump,
    analyse_files,
    compare,
    install,
    missing_modules,
    nginx,
    relative,
)


def main(names: list[str]) -> int:
    """Differences of the named configs (all when none); exit 1 when any differ."""
    work = Path(tempfile.mkdtemp(prefix="precision-"))
    differ = False
    try:
        for case in all_cases():
            if names and case.name not in names:
                continue
            if missing_modules(case.root):
                print(f"{case.name}: skipped, needs {' '.join(missing_modules(case.root))}")
                continue
            prefix = work / case.name
            install(case, prefix, work / "certs")
            test = nginx(prefix, "-t")
            if test.returncode == 0:
                report = analyse_dump(nginx(prefix, "-T").stdout)
            else:
                report = analyse_files(prefix / "nginx.conf")
            problems = compare(case, relative(report, prefix))
            verdict = "accepted" if test.returncode == 0 else "rejected"
            print(f"{case.name}: nginx {verdict}, {'agrees' if not problems else 'differs'}")
            for problem in problems:
                print(f"    {problem}")
            differ = differ or bool(problems)
    finally:
        shutil.rmtree(work)
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
