#!/usr/bin/env bash
# Build npgym data for verl: a training set (tiers easy:medium:hard = 5:4:1, the published best
# mix) and NP-Bench as the validation set, both as verl RL parquet.
#   bash examples/verl/prepare_data.sh [OUT_DIR] [N_PER_TASK] [--multi-turn]
#   bash examples/verl/prepare_data.sh --smoke [OUT_DIR]   # two easy MaxClique rows as both sets
set -euo pipefail
smoke=0
if [ "${1:-}" = --smoke ]; then
  smoke=1
  shift
fi
out=${1:-$HOME/data/npgym}
n=${2:-1000}
multi_turn=${3:-}
if [ "$smoke" = 1 ]; then
  npgym bench build -o "$out/train" --split train --tasks MaxClique --mix easy:1 --n 2 --workers 1
  npgym export "$out/train" --format verl --split-name train -o "$out/train.parquet"
  npgym export "$out/train" --format verl --split-name test -o "$out/test.parquet"
  echo "verl smoke data in $out/train.parquet and $out/test.parquet"
  exit 0
fi
npgym bench build -o "$out/train" --split train --mix easy:5,medium:4,hard:1 --n "$n"
npgym bench build -o "$out/np-bench"
npgym export "$out/train" --format verl --split-name train $multi_turn -o "$out/train.parquet"
npgym export "$out/np-bench" --format verl --split-name test $multi_turn -o "$out/test.parquet"
echo "verl data in $out/train.parquet and $out/test.parquet"
