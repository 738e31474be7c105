#!/usr/bin/env bash
# Rewrite the report/ of every committed run folder under ROOT (default experiments/results) with the current
# report code. No GPU needed: a report is made from the run's results.json and receipt.json alone.
#   bash experiments/regenerate_reports.sh [ROOT]
set -euo pipefail
shopt -s extglob
cd "$(dirname "$0")/.."
root="${1:-experiments/results}"
find "$root" -type d -name report | sort | while read -r report; do
    run="$(dirname "$report")"
    compgen -G "$run/results.@(json|csv)?(.gz)" >/dev/null || continue  # plain or gzipped
    # only what `report` writes goes, so that a plot no longer drawn leaves no stale file behind
    rm -f "$report"/*.png "$report"/*.svg "$report"/report.md "$report"/report.html "$report"/summary.csv
    python3 -m gemmcompare report "$run" --in-place > /dev/null
    echo "rewrote $report"
done
# the pages link the PNGs beside them instead of embedding second copies (experiments/link_report_images.py)
python3 experiments/link_report_images.py "$root"
