#!/bin/sh
# Regenerates the callgrind fixtures next to this folder (needs gcc and valgrind).
# The numbers hard-coded in tests/unit/test_callgrind.py come from callgrind_annotate on these
# files; re-run it and update the test after regenerating.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
prog=/tmp/dbdrift-cgprog
gcc -O0 -g -o "$prog" "$here/src/prog.c"
cg="valgrind -q --tool=callgrind"
cd "$here"
$cg --callgrind-out-file=small_n1000.out "$prog" 1000
$cg --callgrind-out-file=small_n5000.out "$prog" 5000
# instruction-level positions and jump lines; collect only inside f to keep the file small
$cg --dump-instr=yes --collect-jumps=yes --toggle-collect=f --callgrind-out-file=instr_jumps_f.out "$prog" 1000
# three dumps (parts) in one file, and the same as one file per dump
$cg --toggle-collect=main --dump-every-bb=20000 --combine-dumps=yes --callgrind-out-file=parts_combined.out "$prog" 1000
rm -rf dumps && mkdir dumps
$cg --toggle-collect=main --dump-every-bb=20000 --callgrind-out-file=dumps/cg.%p.out "$prog" 1000
chmod 644 ./*.out dumps/*
