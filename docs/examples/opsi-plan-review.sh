#!/usr/bin/env bash
# Posts a plan to opsi, prints the annotations, exits 1 at or above FAIL_AT, 2 when the review failed.
set -euo pipefail
plan_file="${1:?usage: opsi-plan-review.sh <plan output file>}"
fail_at="${FAIL_AT:-critical}"
body=$(mktemp)
status=$(jq -Rs '{plan: .}' "$plan_file" |
  curl -sS -o "$body" -w '%{http_code}' -X POST "${OPSI_URL:?}/api/v1/plan-review" \
    -H "Authorization: Bearer ${OPSI_TOKEN:?}" -H 'content-type: application/json' --data-binary @-)
if [ "$status" != 200 ]; then
  echo "plan review failed: HTTP $status $(jq -r .detail "$body" 2>/dev/null || cat "$body")" >&2
  exit 2
fi
jq -r '"Overall risk: \(.overall_risk) | \(.summary.add) to add, \(.summary.change) to change, \(.summary.destroy) to destroy | cost \(.cost.monthly_delta) USD/month | fixes \(.findings.fixes | length) findings, introduces \(.findings.introduces | length)",
       (.annotations[] | "[\(.risk)] \(.category) \(.address): \(.title)\n    \(.detail)\n    cites: \([.citations[] | "\(.kind)=\(.ref)"] | join(", "))")' "$body"
rank() { case "$1" in low) echo 1;; medium) echo 2;; high) echo 3;; critical) echo 4;; *) echo 9;; esac; }
if [ "$(rank "$(jq -r .overall_risk "$body")")" -ge "$(rank "$fail_at")" ]; then
  echo "Overall risk is at or above $fail_at: failing." >&2
  exit 1
fi
