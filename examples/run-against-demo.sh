#!/usr/bin/env bash
# Runs the partner examples the way a partner would, against a real demo server: `eds demo
# --serve` on free ports, then the incremental sync twice (the second run resumes from its
# checkpoint and must write nothing new). Used by CI; safe to run locally.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'kill "${server:-}" 2>/dev/null || true; rm -rf "$work"' EXIT
port=$(node -e "const s=require('net').createServer().listen(0,()=>{console.log(s.address().port);s.close()})")
media=$(node -e "const s=require('net').createServer().listen(0,()=>{console.log(s.address().port);s.close()})")
EDS_DATABASE_URL="$work/eds.sqlite" EDS_PORT=$port EDS_MEDIA_PORT=$media EDS_LOG_LEVEL=warn \
  node packages/server/bin/eds.js demo --serve > "$work/demo.json" 2> "$work/demo.log" &
server=$!
# The key's line is printed once the API answers (or, if it cannot start, before the process ends).
for _ in $(seq 1 300); do
  [ "$(wc -l < "$work/demo.json")" -ge 1 ] && break
  kill -0 "$server" 2>/dev/null || break
  sleep 0.2
done
key=$(node -e "console.log(JSON.parse(require('fs').readFileSync('$work/demo.json','utf8')).api_key)")
total=$(curl -sf -H "Authorization: Bearer $key" "http://127.0.0.1:$port/external/v1/encounters?limit=1" | node -e "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>console.log(JSON.parse(s).total))")
export EDS_BASE_URL="http://127.0.0.1:$port" EDS_API_KEY="$key"
sync() {
  node --import tsx examples/sync.ts --checkpoint "$work/checkpoint.json" --out "$work/encounters.ndjson" --since 2025-01-01T00:00:00Z --window-hours 720
}
sync
first=$(wc -l < "$work/encounters.ndjson")
sync
second=$(wc -l < "$work/encounters.ndjson")
unique=$(node -e "const l=require('fs').readFileSync('$work/encounters.ndjson','utf8').trim().split('\n');console.log(new Set(l.map(x=>JSON.parse(x).encounter_id)).size)")
echo "examples: demo total $total; sync wrote $first records ($unique distinct); resumed run added $((second - first))"
if [ "$unique" -ne "$total" ] || [ "$second" -ne "$first" ]; then
  echo "examples: FAILED (expected every encounter once and nothing new on resume)" >&2
  exit 1
fi
