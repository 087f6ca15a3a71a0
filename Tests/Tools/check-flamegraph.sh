#!/usr/bin/env bash
# Renders a flame graph in headless Chromium (Debian's chromium, installed if missing) and
# checks that it drew: the PNG is not blank, and the DOM after the embedded script ran has
# the graph's title, the script's ready mark, a search result (the URL asks to search for
# every frame, so 100% must match) and, zoomed on a frame, the Reset Zoom button shown.
# Usage: Tests/Tools/check-flamegraph.sh [GRAPH.svg [SCREENSHOT.png]]
# Without a graph, profiles the demo program (Scripts/demo/demo.c) into out/check-flamegraph.svg.
set -euo pipefail
cd "$(dirname "$0")/../.."
source Scripts/lib/apt-install.sh
apt_install chromium fonts-dejavu-core python3

svg="${1:-}"
mkdir -p out
if [ -z "$svg" ]; then
  source Scripts/lib/build-dir.sh
  gcc -O2 -pthread Scripts/demo/demo.c -o out/demo
  svg=out/check-flamegraph.svg
  "$build/stacksampler" record --period 5ms -o "$svg" -- out/demo 1 >/dev/null
fi
png="${2:-${svg%.svg}.png}"
svg_url="file://$(realpath "$svg")"
height=$(grep -o '<svg [^>]*height="[0-9.]*"' "$svg" | head -1 | sed 's/.*height="\([0-9.]*\)"/\1/')
title=$(grep -o '<text id="title"[^>]*>[^<]*' "$svg" | head -1 | sed 's/.*>//')
frame=$(grep -o '<g><title>[^<]*' "$svg" | sed -n 2p | sed 's/<g><title>//; s/ ([^(]*$//')
chromium=(chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run --user-data-dir="$(mktemp -d)")

fail() { echo "check-flamegraph: FAIL: $*" >&2; exit 1; }

"${chromium[@]}" --window-size="1200,${height%.*}" --screenshot="$(realpath -m "$png")" "$svg_url" 2>/dev/null
verdict=$(python3 Tests/Tools/png_check.py "$png") || fail "the screenshot $png looks blank: $verdict"
echo "screenshot: $png ($verdict)"

dom=$("${chromium[@]}" --dump-dom --virtual-time-budget=2000 "$svg_url#search=." 2>/dev/null)
grep -qF "$title" <<<"$dom" || fail "the title '$title' is not in the rendered DOM"
grep -q 'data-ready="true"' <<<"$dom" || fail "the embedded script did not run to its end"
grep -q 'Matched: 100.00%' <<<"$dom" || fail "searching for every frame did not report 100% matched"
zoomed=$("${chromium[@]}" --dump-dom --virtual-time-budget=2000 "$svg_url#zoom=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1]))' "$frame")" 2>/dev/null)
grep -o '<text id="reset"[^>]*>' <<<"$zoomed" | grep -vq 'display="none"' || fail "zooming on '$frame' did not show Reset Zoom"
echo "check-flamegraph: OK: '$title' rendered, script ran, search and zoom work"
