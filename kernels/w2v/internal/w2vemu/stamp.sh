#!/bin/sh
# Records w2v.cu's SHA-256 in emu.cpp. Go's build cache does not see files
# a cgo source includes from outside its package, so without this a changed
# w2v.cu would leave a stale emulator; TestEmulatorStampIsCurrent (package
# w2v) fails until this has run (go generate ./kernels/w2v).
set -e
cd "$(dirname "$0")"
sum=$(sha256sum ../../w2v.cu | cut -c1-64)
sed -i "s|^// w2v.cu sha256: .*|// w2v.cu sha256: $sum|" emu.cpp
