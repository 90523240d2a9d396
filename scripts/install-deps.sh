#!/usr/bin/env bash
# Installs the Debian packages autocat needs, only those that are missing.
# dpkg-dev and file: cpack's Debian package (dpkg-shlibdeps); python3-venv
# and python3-wheel: `pip install .` into a virtual environment, offline;
# doxygen: the API reference (`doc` target) and its test.
set -euo pipefail

packages=(
  g++ cmake ninja-build pkg-config
  libxapian-dev xapian-tools python3-xapian xapian-omega
  libicu-dev
  libboost-serialization-dev
  nlohmann-json3-dev libcli11-dev
  libcpp-httplib-dev
  chromium chromium-driver python3-selenium
  zlib1g-dev
  libgtest-dev
  python3-dev pybind11-dev python3-xapian
  libbenchmark-dev
  clang-format
  clang libclang-rt-14-dev
  dpkg-dev file python3-venv python3-wheel
  doxygen
)

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "autocat: all build dependencies are installed"
  exit 0
fi

echo "autocat: installing ${missing[*]}"
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
