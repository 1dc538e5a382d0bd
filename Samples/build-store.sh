#!/bin/sh
# Builds a sample store: Faultline creates the tables and metadata from the sample's model
# (the DDL Core Data writes), then the sample's seed.sql adds the rows.
#
#   Samples/build-store.sh NAME [OUTPUT.sqlite] [FAULTLINE-BINARY]
#
# NAME is a folder here (Inventory, Recipes, Triage, Books). The tests run this script into
# a temporary folder and compare the result with the checked-in store, so they cannot drift.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
name=${1:?usage: build-store.sh NAME [OUTPUT.sqlite] [FAULTLINE-BINARY]}
out=${2:-$here/$name/$name.sqlite}
faultline=${3:-$here/../.build/debug/faultline}
[ -f "$here/$name/seed.sql" ] || { echo "build-store.sh: no sample named $name (no $here/$name/seed.sql)" >&2; exit 1; }
command -v sqlite3 >/dev/null || { echo "build-store.sh: needs the sqlite3 command (apt-get install sqlite3)" >&2; exit 1; }
rm -f "$out" "$out-wal" "$out-shm"
"$faultline" "$out" --model "$here/$name/$name.xcdatamodeld" --write --sql-debug 0 -c '.quit'
sqlite3 "$out" < "$here/$name/seed.sql"
