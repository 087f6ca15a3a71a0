#!/usr/bin/env bash
# Checks that `go tool pprof` (Debian's golang-go, installed if missing) reads StackSampler's
# pprof output and agrees with the folded output of the same run: self samples per function
# (-top) and every stack with its samples (-traces).
# Usage: Scripts/check-pprof.sh [PROFILE.folded PROFILE.pb.gz]
# Without arguments, profiles the demo program (Scripts/demo/demo.c) into out/check-pprof.*.
set -euo pipefail
cd "$(dirname "$0")/.."
source Scripts/lib/apt-install.sh
command -v go >/dev/null || apt_install golang-go

folded="${1:-}" pprof="${2:-}"
mkdir -p out
if [ -z "$folded" ]; then
  source Scripts/lib/build-dir.sh
  gcc -O2 -pthread Scripts/demo/demo.c -o out/demo
  folded=out/check-pprof.folded pprof=out/check-pprof.pb.gz
  "$build/stacksampler" record --period 5ms -o "$folded" -o "$pprof" -- out/demo 1 >/dev/null
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export HOME="$work" PPROF_TMPDIR="$work"

# Folded: samples per leaf, and per stack.
awk '{ count = $NF; sub(/ [0-9]+$/, ""); n = split($0, f, ";"); self[f[n]] += count }
     END { for (name in self) print name "\t" self[name] }' "$folded" | sort >"$work/folded-top"
awk '{ count = $NF; sub(/ [0-9]+$/, ""); stacks[$0] += count } END { for (s in stacks) print s "\t" stacks[s] }' "$folded" \
  | sort >"$work/folded-traces"

# pprof -top: flat flat% sum% cum cum% name; functions with self samples only.
go tool pprof -top -sample_index=samples "$pprof" 2>/dev/null \
  | awk '/^ *flat / { table = 1; next }
         table && $1 > 0 { name = $0; sub(/^ *[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+ +/, "", name); self[name] += $1 }
         END { for (name in self) print name "\t" self[name] }' | sort >"$work/pprof-top"

# pprof -traces: blocks between "-----------+" lines; labels, then "COUNT leaf", then callers.
go tool pprof -traces -sample_index=samples "$pprof" 2>/dev/null \
  | awk 'function flush() { if (n > 0) { s = frames[n]; for (i = n - 1; i >= 1; i--) s = s ";" frames[i]; stacks[s] += count }; n = 0 }
         /^-----------\+/ { flush(); next }
         /^ *thread_(name|id):/ { next }
         /^             / && n > 0 { line = $0; sub(/^ +/, "", line); frames[++n] = line; next }
         /^ *[0-9]+ / { count = $1; line = $0; sub(/^ *[0-9]+ +/, "", line); n = 1; frames[1] = line }
         END { flush(); for (s in stacks) print s "\t" stacks[s] }' | sort >"$work/pprof-traces"

fail() { echo "check-pprof: FAIL: $*" >&2; exit 1; }
[ -s "$work/folded-top" ] || fail "$folded has no samples"
diff -u "$work/folded-top" "$work/pprof-top" || fail "go tool pprof -top disagrees with $folded on self samples"
diff -u "$work/folded-traces" "$work/pprof-traces" || fail "go tool pprof -traces disagrees with $folded on stacks"
echo "check-pprof: OK: $(wc -l <"$work/pprof-top") functions and $(wc -l <"$work/pprof-traces") stacks agree with $folded"
go tool pprof -top -sample_index=samples "$pprof" 2>/dev/null | head -12
