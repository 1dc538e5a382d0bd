#!/usr/bin/env bash
# Builds the Faultline library's documentation (Sources/Faultline/Faultline.docc and the doc
# comments) with docc, and fails on any warning: a broken ``link``, an undocumented parameter.
# Uses its own build folder, so the ordinary .build is not rebuilt with other flags.
set -euo pipefail
cd "$(dirname "$0")/.."
graphs=.build-docs/symbol-graphs
rm -rf "$graphs" .build-docs/Faultline.doccarchive
mkdir -p "$graphs"
swift build --build-path .build-docs --target Faultline \
  -Xswiftc -emit-symbol-graph -Xswiftc -emit-symbol-graph-dir -Xswiftc "$PWD/$graphs" >/dev/null
# The product's own symbols and its extensions of other modules' types.
mkdir -p "$graphs/Faultline"
mv "$graphs"/Faultline.symbols.json "$graphs"/Faultline@*.symbols.json "$graphs/Faultline/"
docc convert Sources/Faultline/Faultline.docc \
  --additional-symbol-graph-dir "$graphs/Faultline" \
  --fallback-display-name Faultline --fallback-bundle-identifier org.faultline.Faultline \
  --output-path .build-docs/Faultline.doccarchive --warnings-as-errors
echo "docs: .build-docs/Faultline.doccarchive"
