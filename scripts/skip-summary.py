"""The skipped tests of the last ctest run in a build folder, counted by reason: one line per
reason, most first. Usage: skip-summary.py BUILD_DIR (reads Testing/Temporary/LastTest.log)."""
import collections
import re
import sys

log = open(f"{sys.argv[1]}/Testing/Temporary/LastTest.log", encoding="utf-8", errors="replace").read()
reasons = collections.Counter()
# GoogleTest prints "FILE:LINE: Skipped", the reason's lines, then "[  SKIPPED ] NAME (T ms)".
for m in re.finditer(r": Skipped\n(.*?)\n\[  SKIPPED \] \S+ \(", log, re.S):
    text = m.group(1).strip().splitlines()[-1].strip() if m.group(1).strip() else "no reason given"
    text = re.sub(r"^.*?\S+\s+unavailable:\s*", "", text)  # "... cuda:tuned   unavailable: why" -> "why"
    text = re.sub(r"\s*\([^()]*\)", "", text)            # the runtime's own detail in parentheses
    reasons[text[:100]] += 1
total = sum(reasons.values())
print(f"skipped {total}" + (":" if total else ""))
for text, count in reasons.most_common():
    print(f"  {count:4d}  {text}")
