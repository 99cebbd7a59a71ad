#!/bin/sh
# The wheel set the Dockerfile installs, fetched for linux/amd64 and linux/arm64 without
# Docker: KnowHub's wheels (the hub, its SDK and its contracts), then every dependency as a released wheel for Python 3.11 on
# glibc (the image's base, Debian bookworm: glibc 2.36), exactly as its builder stage asks
# (--only-binary=:all:). Fails, naming the package, when one has no wheel for a platform.
#
#   sh scripts/image_wheels.sh [DIR]      # default: build/image-wheels
set -eu
cd "$(dirname "$0")/.."
out=${1:-build/image-wheels}
python=${PYTHON:-.venv/bin/python}

rm -rf "$out"
"$python" -m pip wheel --quiet --no-deps --wheel-dir "$out/knowhub" . ./clients/python ./protos
for arch in x86_64 aarch64; do
    # pip takes the platform tags literally: every manylinux level up to glibc 2.36.
    platforms="--platform manylinux2014_$arch"
    for minor in $(seq 17 36); do
        platforms="$platforms --platform manylinux_2_${minor}_$arch"
    done
    # shellcheck disable=SC2086
    "$python" -m pip download --quiet --only-binary=:all: $platforms --python-version 3.11 \
        --implementation cp --dest "$out/$arch" "$out"/knowhub/knowhub*.whl
    echo "linux/$arch: $(ls "$out/$arch" | wc -l) wheels in $out/$arch"
done
