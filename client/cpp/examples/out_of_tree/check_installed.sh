#!/bin/sh
# Installs libetclient from BUILD_DIR into a temporary prefix, builds this example
# against it twice (CMake package, pkg-config), starts ET_SERVERD on a private socket
# and runs both builds on MODEL. Fails on any step.
#
#   check_installed.sh BUILD_DIR ET_SERVERD MODEL.pte
set -eu
build_dir=$1 serverd=$2 model=$3
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /tmp/etclient-installed-XXXXXX)
pid=
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

cmake --install "$build_dir" --component etclient --prefix "$work/prefix" >/dev/null
test -f "$work/prefix/include/etclient/client.h"
ls "$work"/prefix/lib*/libetclient.so* >/dev/null

# 1. find_package(etclient)
cmake -S "$here" -B "$work/cmake-build" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DCMAKE_BUILD_RULE_MESSAGES=OFF >/dev/null
cmake --build "$work/cmake-build" >/dev/null

# 2. pkg-config
pc=$(ls -d "$work"/prefix/lib*/pkgconfig | head -n1)
libdir=$(PKG_CONFIG_PATH=$pc pkg-config --variable=libdir etclient)
# shellcheck disable=SC2046
c++ -o "$work/hello-pc" "$here/main.cc" $(PKG_CONFIG_PATH=$pc pkg-config --cflags --libs etclient) \
  -Wl,-rpath,"$libdir"

# The example links libetclient alone: no gRPC, protobuf or runtime library named.
if ldd "$work/hello-pc" | grep -qE 'libet_|xnnpack|torch'; then
  echo "hello-pc links a runtime library:" >&2
  ldd "$work/hello-pc" >&2
  exit 1
fi

"$serverd" --socket "$work/s.sock" --log-level warn &
pid=$!
i=0
while [ ! -S "$work/s.sock" ]; do
  i=$((i + 1))
  [ $i -gt 300 ] && { echo "et-serverd did not start" >&2; exit 1; }
  sleep 0.1
done
for exe in "$work/cmake-build/hello" "$work/hello-pc"; do
  out=$("$exe" "$model" "$work/s.sock")
  echo "$out"
  echo "$out" | grep -q '^output 0: float32'
done
echo "installed package: built with CMake and pkg-config, both ran"
