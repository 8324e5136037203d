#!/bin/sh
# Stands in for `bd` in the benchmark sandboxes: runs the real (fake) bd and appends
# "<start ns> <end ns> <subcommand>" to $BENCH_BD_TIMES, so bd's own time can be told apart.
start=$(date +%s%N)
"$BENCH_REAL_BD" "$@"
code=$?
end=$(date +%s%N)
echo "$start $end $1" >> "$BENCH_BD_TIMES"
exit $code
