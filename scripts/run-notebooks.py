"""Executes every lesson in docs/notebooks/ headless and fails on any error cell.

Usage: python scripts/run-notebooks.py [OUTDIR]  (the python of an environment where the nbody
package, matplotlib, nbclient and ipykernel are installed). The executed copies go to OUTDIR
(default build/notebooks/), never over the lessons: those are committed without outputs.
"""
import pathlib
import sys
import time

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

root = pathlib.Path(__file__).resolve().parent.parent
out = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else root / "build" / "notebooks"
out.mkdir(parents=True, exist_ok=True)
failed = 0
for path in sorted((root / "docs" / "notebooks").glob("*.ipynb")):
    book = nbformat.read(path, as_version=4)
    t0 = time.monotonic()
    try:
        NotebookClient(book, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(out)}}).execute()
        print(f"ok      {path.name} ({time.monotonic() - t0:.1f} s)")
    except CellExecutionError as e:
        failed += 1
        print(f"FAILED  {path.name}: {str(e).splitlines()[-1] if str(e) else e}")
    nbformat.write(book, out / path.name)
print(f"{failed} of the notebooks failed" if failed else "every notebook ran without an error cell")
sys.exit(1 if failed else 0)
