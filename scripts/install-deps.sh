#!/usr/bin/env bash
# install-deps.sh — install the Debian 12 (bookworm) packages needed to build,
# test and run libsupervise.
#
# Idempotent: when every package is already installed (checked with
# dpkg-query) it changes nothing and does not touch the network. Otherwise it
# runs `apt-get update` once and installs the missing set without
# recommends. Needs root (or sudo) for the install step; works without a TTY.
set -euo pipefail

PACKAGES=(
	cmake
	# scripts/lint.sh lists the sources with git ls-files
	git
	make
	gcc
	libc6-dev
	pkg-config
	libnng-dev
	libprotobuf-c-dev
	protobuf-c-compiler
	libcmocka-dev
	libconfig-dev
	python3
	procps
	# systemd-analyze verify of packaging/systemd (tests/systemd)
	systemd
	# static checks (scripts/lint.sh) and fuzzing (scripts/fuzz.sh: libFuzzer)
	clang
	# fuzz.sh links libFuzzer and ASan's runtime for clang
	libclang-rt-14-dev
	clang-format
	clang-tidy
	cppcheck
	# Python binding: ctypes, pytest, an offline venv install
	python3-pytest
	python3-venv
	python3-pip
	python3-setuptools
	python3-wheel
	# Ruby binding: ffi, minitest, gem build/install
	ruby
	ruby-ffi
	ruby-minitest
	# examples/prometheus: a real consumer (GitLab's client, C extension)
	ruby-prometheus-client-mmap
	python3-prometheus-client
	rake
	# Lua binding: a C module for Lua 5.4, busted, luarocks
	lua5.4
	liblua5.4-dev
	lua-busted
	lua-dkjson
	luarocks
	# conformance: a second, independent protobuf implementation
	python3-protobuf
	# man pages made from the docs' Markdown (cmake/manpages.cmake), and
	# rendered by tests/man with man and groff
	pandoc
	man-db
	groff-base
)

# is_installed PKG: true when dpkg records PKG as fully installed.
is_installed() {
	local status
	status=$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null) ||
		return 1
	[ "$status" = "installed" ]
}

if ! command -v dpkg-query >/dev/null 2>&1; then
	echo "install-deps: dpkg-query not found; this script supports Debian 12 only" >&2
	exit 1
fi

missing=()
for pkg in "${PACKAGES[@]}"; do
	is_installed "$pkg" || missing+=("$pkg")
done

if [ "${#missing[@]}" -eq 0 ]; then
	echo "install-deps: all ${#PACKAGES[@]} packages already installed"
	exit 0
fi

echo "install-deps: installing: ${missing[*]}"

SUDO=()
if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null 2>&1; then
		SUDO=(sudo)
	else
		echo "install-deps: need root to install: ${missing[*]}" >&2
		exit 1
	fi
fi

export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update
# Install the whole list, not just the missing part: apt-get leaves installed
# packages alone and this also repairs half-configured ones.
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive \
	apt-get install -y --no-install-recommends "${PACKAGES[@]}"

for pkg in "${PACKAGES[@]}"; do
	if ! is_installed "$pkg"; then
		echo "install-deps: $pkg is still not installed" >&2
		exit 1
	fi
done
echo "install-deps: done"
