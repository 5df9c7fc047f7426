#!/bin/sh
# run.sh BUILD_DIR WORK_DIR: installs shardlab from BUILD_DIR into
# WORK_DIR/prefix, builds tests/consumer against it with find_package and
# checks that the program propagates the sharding.
set -eu
build=$1
work=$2
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work"
cmake --install "$build" --prefix "$work/prefix" > "$work.install.log" 2>&1 ||
  { cat "$work.install.log"; exit 1; }
cmake -S "$here" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$work/prefix" > "$work.configure.log" 2>&1 ||
  { cat "$work.configure.log"; exit 1; }
cmake --build "$work/build" > "$work.build.log" 2>&1 ||
  { cat "$work.build.log"; exit 1; }
out=$("$work/build/consumer")
echo "$out" | grep -q 'stablehlo.add %arg0, %arg0 {sdy.sharding = #sdy.sharding_per_value<\[<@mesh, \[{"x"}\]>\]>}' ||
  { echo "consumer output lacks the propagated sharding:"; echo "$out"; exit 1; }
echo "install-consumer: find_package(shardlab) build runs and propagates"
