#!/usr/bin/env bash
# Registers, spills and the instruction mix of each force kernel's hottest loop, from the SASS.
# Needs nvcc and cuobjdump (the GPU machine has both; this one has no cuobjdump).
# Usage: bash scripts/sass-report.sh [arch=90]
set -euo pipefail
cd "$(dirname "$0")/.."
ARCH=${1:-90}
T=$(mktemp -d)
for f in gems31 tuned symmetric mixed; do
  nvcc -std=c++20 -O3 -arch=sm_$ARCH -Icuda_pipeline -Icuda_pipeline/include -Icommon --expt-relaxed-constexpr -cubin \
    -Xptxas -v -o "$T/$f.cubin" "cuda_pipeline/$f.cu" 2>"$T/$f.ptxas"
  grep -E "Compiling entry|registers|spill" "$T/$f.ptxas" | paste - - - |
    sed -E 's/ptxas info *: //g; s/Compiling entry function .(_Z[^ ]*). for .sm_[0-9]+./\1/' |
    grep -E "forces" | sed -E 's/\s+/ /g' | cut -c1-220
  cuobjdump -sass "$T/$f.cubin" >"$T/$f.sass"
done
# For each kernel: the backward branch spanning the most instructions is the inner loop; count
# its opcodes (without modifiers).
for f in gems31 tuned symmetric mixed; do
  awk '
    function hex(s,   i, v) { v = 0; s = tolower(s)
      for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
      return v }
    function report(   i, best, lo, hi, tgt, o, k, out, c) {
      best = -1
      for (i = 0; i < n; i++)
        if (op[i] ~ /^BRA/ && match(line[i], /BRA[^;]*0x[0-9a-f]+/)) {
          t = substr(line[i], RSTART, RLENGTH); sub(/.*0x/, "", t); tgt = hex(t)
          if (tgt < addr[i] && addr[i] - tgt > best) { best = addr[i] - tgt; lo = tgt; hi = addr[i] }
        }
      if (best < 0) return
      for (i = 0; i < n; i++) if (addr[i] >= lo && addr[i] <= hi) { o = op[i]; sub(/\..*/, "", o); c[o]++ }
      out = ""
      for (k in c) out = out k "=" c[k] " "
      printf "%s loop %d instr: %s\n", name, best / 16 + 1, out
    }
    /Function :/ { if (name != "") report(); name = $3; n = 0; next }
    match($0, /\/\*[0-9a-f]+\*\/ +(@!?U?P[0-9T] +)?[A-Z][A-Z0-9_.]*/) {
      f = substr($0, RSTART, RLENGTH); a = f; sub(/\*\/.*/, "", a); sub(/\/\*/, "", a)
      o = f; sub(/.*\*\/ +/, "", o); sub(/^@[^ ]+ +/, "", o)
      addr[n] = hex(a); op[n] = o; line[n] = $0; n++
    }
    END { if (name != "") report() }' "$T/$f.sass" | grep forces
done
rm -rf "$T"
