#!/usr/bin/env bash
# Runs the differential fuzzer packed by scripts/gpu/diff_fuzz_pack.sh on
# every core of the GPU machine, one process (and seed) per core, through
# the carried loader; prints each seed's graphs and failures, the failures'
# first lines and the total. Reproducers are left under $OUT/s<seed>/.
# usage: diff_fuzz.sh unpack | diff_fuzz.sh fuzz GRAPHS_PER_PROCESS SECONDS FIRST_SEED
set -u
usage="usage: diff_fuzz.sh unpack | diff_fuzz.sh fuzz GRAPHS_PER_PROCESS SECONDS FIRST_SEED"
case "${1:-}" in
unpack) ;;
fuzz) [ $# -eq 4 ] || { echo "$usage" >&2; exit 2; } ;;
*) echo "$usage" >&2; exit 2 ;;
esac
for tool in xz cc; do # cc links each plan's kernels
  command -v $tool > /dev/null || { echo "diff_fuzz.sh: no '$tool' on this machine" >&2; exit 1; }
done
L=/tmp/gfz/lib # outside the working tree: kept between calls while warm
mkdir -p $L
# Every part carried in this call replaces what an earlier one left, through
# a temporary file, so a repack or an interrupted unpack never lingers.
for f in gpu-fz/a/*.xz gpu-fz/b/*.xz; do
  [ -e "$f" ] || continue
  n=$L/$(basename "${f%.xz}")
  xz -dc "$f" > "$n.part" && mv "$n.part" "$n" || exit 1
done
chmod +x $L/*
echo "libraries: $(ls $L | wc -l); cores: $(nproc); $(ldd --version | head -1)"
[ "$1" = unpack ] && exit 0
per=$2 seconds=$3 seed0=$4 n=$(nproc)
# A process a core: OpenBLAS single-threaded, the kernels' thread pool small
# (still more than one thread, so that it is exercised).
export OPENBLAS_NUM_THREADS=1 GENESIS_NUM_THREADS=2
fuzz="$L/ld-linux-x86-64.so.2 --library-path $L $L/genesis-diff-fuzz"
start=$(date +%s)
for i in $(seq 0 $((n - 1))); do
  s=$((seed0 + i))
  timeout "$seconds" $fuzz --graphs "$per" --seed $s --batch 48 --out "$OUT/s$s" > "$OUT/s$s.log" 2>&1 &
done
wait
echo "wall $(($(date +%s) - start)) s"
total=0 failed=0
for i in $(seq 0 $((n - 1))); do
  s=$((seed0 + i))
  # Graphs of completed batches (a process stopped by the timeout loses
  # only its running batch).
  done_=$(tr '\r' '\n' < "$OUT/s$s.log" | grep -oE '^\[diff-fuzz\] [0-9]+/' | tail -1 | grep -oE '[0-9]+')
  f=$(tr '\r' '\n' < "$OUT/s$s.log" | grep -oE '[0-9]+ failed' | tail -1 | grep -oE '[0-9]+')
  total=$((total + ${done_:-0})) failed=$((failed + ${f:-0}))
  echo "seed $s: ${done_:-0} graphs, ${f:-0} failed"
done
grep -h -A1 "FAIL graph" "$OUT"/s*.log | head -40
echo "TOTAL: $total graphs, $failed failed"
