#!/bin/sh
# Builds the Inventory sample store: Faultline creates the tables and metadata from the
# model (exactly the DDL Core Data writes), then seed.sql adds the rows.
#
#   Samples/Inventory/build-store.sh [OUTPUT.sqlite] [FAULTLINE-BINARY]
#
# The tests run this script into a temporary folder and compare the result with the
# checked-in Inventory.sqlite, so the two cannot drift apart.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/Inventory.sqlite}
faultline=${2:-$here/../../.build/debug/faultline}
command -v sqlite3 >/dev/null || { echo "build-store.sh: needs the sqlite3 command (apt-get install sqlite3)" >&2; exit 1; }
rm -f "$out" "$out-wal" "$out-shm"
"$faultline" "$out" --model "$here/Inventory.xcdatamodeld" --write --sql-debug 0 -c '.quit'
sqlite3 "$out" < "$here/seed.sql"
