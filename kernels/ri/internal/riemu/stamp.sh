#!/bin/sh
# Records ri.cu's SHA-256 in emu.cpp. Go's build cache does not see files
# a cgo source includes from outside its package, so without this a changed
# ri.cu would leave a stale emulator; TestEmulatorStampIsCurrent (package
# ri) fails until this has run (go generate ./kernels/ri).
set -e
cd "$(dirname "$0")"
sum=$(sha256sum ../../ri.cu | cut -c1-64)
sed -i "s|^// ri.cu sha256: .*|// ri.cu sha256: $sum|" emu.cpp
