"""The default progress hook: long work (the float64 set-up, a run's steps, a sweep) drawn as one
line on stderr, rewritten in place, once a task has taken more than a second, where someone sees
it: a terminal, or a notebook (Jupyter's kernel shows stderr under the cell). Elsewhere (a log, a
test run) it says nothing, as the library does."""
import sys
import time

_SHOW_AFTER_S = 1.0


def _seen() -> bool:
    err = sys.stderr
    if err is None:
        return False
    if "ipykernel" in sys.modules:  # a notebook's kernel: stderr is the cell's output
        return True
    try:
        return err.isatty()
    except (AttributeError, ValueError):
        return False


class Line:
    """A callable (label, done, total) that draws ``label: done/total (p%), elapsed, about s left``."""

    def __init__(self):
        self._task = None  # (label, total, start time, shown)

    def __call__(self, label: str, done: int, total: int) -> None:
        now = time.monotonic()
        if self._task is None or self._task[0] != label or self._task[1] != total or done == 0:
            self._task = [label, total, now, False]
        start = self._task[2]
        if not self._task[3] and (now - start < _SHOW_AFTER_S or not _seen()):
            return
        self._task[3] = True
        elapsed = now - start
        pct = 100.0 * done / total if total else 100.0
        left = f", about {elapsed * (total - done) / done:.0f} s left" if 0 < done < total else ""
        sys.stderr.write(f"\r{label}: {done}/{total} ({pct:.0f}%), {elapsed:.0f} s{left}\033[K")
        if done >= total:
            sys.stderr.write("\n")
            self._task = None
        sys.stderr.flush()
