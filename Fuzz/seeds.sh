#!/usr/bin/env bash
# Writes the fuzz targets' seed inputs into Fuzz/.work/seeds/<target>/ (ignored by git):
# from this repository's samples and tests, and from /work/shared/corpus (or $FAULTLINE_CORPUS)
# when it is there. Corpus stores are copied to a temporary folder before SQLite reads them.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
final=Fuzz/.work/seeds
corpus=${FAULTLINE_CORPUS:-/work/shared/corpus}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Written aside and moved into place at the end, so a run that is reading the seeds (another
# target's, started at the same time) does not see a half-made folder.
out=$tmp/seeds
mkdir -p "$out"/{predicate,xml-model,compiled-model,shell}

# Names each seed by its content, so duplicates collapse.
put() { # target file
  local sum; sum=$(sha1sum "$2" | cut -c1-16)
  cp "$2" "$out/$1/$sum"
}
put_text() { # target text
  printf '%s' "$2" > "$tmp/seed"
  put "$1" "$tmp/seed"
}

# Predicates: every string literal of the predicate and SQL-compiler tests (those that do not
# parse still teach the fuzzer the syntax), and the `where` clauses of the tours and shell tests.
perl -ne 'while (/"((?:[^"\\]|\\.){3,})"/g) { my $s = $1; $s =~ s/\\(["\\])/$1/g; $s =~ s/\\n/\n/g; print "$s\0"; }' \
  Tests/FaultlinePredicateTests/*.swift Tests/FaultlineTests/PredicateSQL*.swift > "$tmp/literals"
perl -ne 'if (/\bwhere (.*?)(?: sort by | order by | show | limit | prefetch |"\)?\s*$|$)/i) { print "$1\0" }' \
  Samples/*/tour.fl Tests/FaultlineShellTests/*.swift >> "$tmp/literals"
# Written for the fixture's model (Inventory: Asset, Inventory, Location).
tr '\n' '\0' >> "$tmp/literals" <<'PREDICATES'
count > 3 AND location.label BEGINSWITH[c] "g"
ANY inventories.count BETWEEN {1, 10}
SUBQUERY(inventories, $i, $i.location.label LIKE[cd] "*a?").@count > 0
inventories.@sum.count >= 2 OR NOT (label IN {"Drill", "Garage"})
date < CAST(700000000, "NSDate") AND asset != nil
label MATCHES "[A-Z].*" || inventories.@avg.count < 1.5e1
ALL inventories.date > FUNCTION(now(), 'dateByAddingTimeInterval:', -86400)
asset.inventories.location.label CONTAINS[n] location.label
PREDICATES
while IFS= read -r -d '' s; do put_text predicate "$s"; done < "$tmp/literals"

# Xcode models: the samples', and the corpus's `contents` files.
for f in Samples/*/*.xcdatamodeld/*.xcdatamodel/contents; do put xml-model "$f"; done
if [ -d "$corpus" ]; then
  find "$corpus" -name contents -type f -print0 | while IFS= read -r -d '' f; do put xml-model "$f"; done
fi

# Compiled models: the samples' Z_MODELCACHE blobs (raw DEFLATE) and the archives inside them,
# the corpus's .mom files and its stores' Z_MODELCACHE blobs.
extract_cache() { # store → seeds (the store is copied first, with its -wal and -shm)
  local dir="$tmp/store"; rm -rf "$dir"; mkdir -p "$dir"
  cp "$1" "$dir/s.sqlite"
  for x in -wal -shm; do [ -f "$1$x" ] && cp "$1$x" "$dir/s.sqlite$x"; done
  sqlite3 "$dir/s.sqlite" "SELECT writefile('$dir/blob', Z_CONTENT) FROM Z_MODELCACHE LIMIT 1" >/dev/null 2>&1 || return 0
  [ -s "$dir/blob" ] || return 0
  put compiled-model "$dir/blob"
  perl -MCompress::Raw::Zlib -e 'local $/; my $in = <STDIN>; my ($i) = Compress::Raw::Zlib::Inflate->new(-WindowBits => -15);
    my $out; $i->inflate($in, $out); print $out' < "$dir/blob" > "$dir/archive" 2>/dev/null && [ -s "$dir/archive" ] && put compiled-model "$dir/archive"
  return 0
}
for s in Samples/*/*.sqlite; do extract_cache "$s"; done
if [ -d "$corpus" ]; then
  find "$corpus" -name '*.mom' -type f -print0 | while IFS= read -r -d '' f; do put compiled-model "$f"; done
  find "$corpus" -name '*.sqlite' -type f -print0 | while IFS= read -r -d '' f; do extract_cache "$f"; done
fi

# Shell scripts: each tour whole, and each of its command lines alone.
for f in Samples/*/tour.fl; do
  put shell "$f"
  grep -v '^--' "$f" | grep -v '^\s*$' | while IFS= read -r line; do put_text shell "$line"; done
done
cat > "$tmp/lines" <<'LINES'
fetch Inventory where count > 1 sort by date desc limit 2 offset 1 prefetch asset, location show count, asset.label
$1.location.inventories
show $1.asset where label BEGINSWITH "D"
insert Location label = "Shed"
set $1.count = 42
add $2 to $1.inventories
remove $2 from $1.inventories
delete $1
changes
undo
redo
rollback
save
explain fetch Asset where ANY inventories.count > 2
count Location where label LIKE[c] "g*"
.mode json
.sql 3
.model Inventory
.schema Asset
.history 2
.faults
.stats
.rows 1
.help fetch
LINES
while IFS= read -r line; do put_text shell "$line"; done < "$tmp/lines"
put shell "$tmp/lines"

mkdir -p "$final"
for t in predicate xml-model compiled-model shell; do
  rm -rf "$final/$t.old"
  [ ! -d "$final/$t" ] || mv "$final/$t" "$final/$t.old"
  mv "$out/$t" "$final/$t"
  rm -rf "$final/$t.old"
  printf '%-15s %4d seeds\n' "$t" "$(ls "$final/$t" | wc -l)"
done
[ -d "$corpus" ] || echo "(no corpus at $corpus: seeds from this repository only)"
