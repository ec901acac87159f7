#!/bin/sh
# Records lda.cu's SHA-256 in emu.cpp. Go's build cache does not see files
# a cgo source includes from outside its package, so without this a changed
# lda.cu would leave a stale emulator; TestEmulatorStampIsCurrent (package
# lda) fails until this has run (go generate ./kernels/lda).
set -e
cd "$(dirname "$0")"
sum=$(sha256sum ../../lda.cu | cut -c1-64)
sed -i "s|^// lda.cu sha256: .*|// lda.cu sha256: $sum|" emu.cpp
