"""The ladder's table of docs/ladder.md (each rung, its source and its H100 figure) as JSON for the
page, so that the page shows the figures the docs hold. Usage: ladder_table.py ladder.md out.json"""
import json
import sys


def rows(markdown):
    lines = iter(markdown.splitlines())
    for line in lines:
        if line.startswith("| rung |"):
            break
    else:
        raise SystemExit(f"no ladder table (a row starting '| rung |') in {sys.argv[1]}")
    next(lines)  # | --- | ...
    for line in lines:
        if not line.startswith("|"):
            return
        cells = [c.strip().replace("`", "") for c in line.strip().strip("|").split("|")]
        yield {"rung": cells[0], "source": cells[1], "h100": cells[4]}


if __name__ == "__main__":
    with open(sys.argv[1], encoding="utf-8") as f:
        table = {"source": "docs/ladder.md", "device": "NVIDIA H100 80GB HBM3", "rows": list(rows(f.read()))}
    with open(sys.argv[2], "w", encoding="utf-8") as f:
        json.dump(table, f, indent=1, ensure_ascii=False)
