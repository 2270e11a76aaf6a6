#!/usr/bin/env bash
# Install, with apt-get, whatever of germline's Debian 12 packages is missing.
# Nothing is downloaded from anywhere but Debian's archive (SPEC §1).
# GL_SKIP_DEPS=1 skips the check (a machine managed by other means).
# GL_DEPS_DEB=1 also installs what `make deb` alone needs (lintian).
# GL_DEPS_CHECK=1 also installs what `make check` and `make fuzz` need: clang
# (the second compiler) and its sanitizer and libFuzzer runtimes.
# uidmap (newuidmap/newgidmap) is installed always: an unprivileged gl-run
# maps its delegated host uids with it.
set -euo pipefail
[ "${GL_SKIP_DEPS:-0}" = 1 ] && exit 0

pkgs=(
  build-essential pkg-config
  libsodium-dev libarchive-dev libjq-dev libonig-dev libseccomp-dev
  libcurl4-openssl-dev libssl-dev zlib1g-dev openssl jq
  python3 python3-dev python3-securesystemslib python3-nacl python3-cryptography time
  bats minisign
  bubblewrap nodejs
  groff-base
  python3-numpy python3-pypdf python3-requests
)
# make deb only (scripts/deb.sh checks the package with lintian)
[ "${GL_DEPS_DEB:-0}" = 1 ] && pkgs+=(lintian)
# make check and make fuzz only; the runtimes are a Recommends of clang-14,
# which --no-install-recommends below would leave out
[ "${GL_DEPS_CHECK:-0}" = 1 ] && pkgs+=(clang libclang-rt-14-dev)
# make check only: the real peers of stream destinations
# (tests/streams.bats: server-postgres and server-redis against them)
[ "${GL_DEPS_CHECK:-0}" = 1 ] && pkgs+=(postgresql-15 redis-server)
# newuidmap/newgidmap: gl-run as a user other than root maps its delegated
# host uids with them (docs/sandbox.md "Host uids"; make check's
# unprivileged pass); also for an operator who runs gl-run unprivileged
pkgs+=(uidmap)
# Node's headers (the Node germline's addon, hosts/node): nodesource's nodejs
# ships them; Debian's nodejs 18 has them in libnode-dev
[ -e /usr/include/node/node_api.h ] || pkgs+=(libnode-dev)
# npm: a separate Debian package (Debian 12: nodejs 18 + npm), bundled with
# nodesource's nodejs; only asked for when there is no npm at all.
command -v npm >/dev/null 2>&1 || pkgs+=(npm)

missing=()
for p in "${pkgs[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "deps: installing ${missing[*]}" >&2
if [ "$(id -u)" != 0 ]; then
  echo "deps: missing packages and not root; run as root or: apt-get install ${missing[*]}" >&2
  exit 2
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
