#!/usr/bin/env bash
# make deb: build/deb/germline_VERSION_ARCH.deb, built with dpkg-deb from a
# control file written here (docs/install.md says why not debhelper), then
# checked by lintian (no error allowed; warnings are printed).
#   GL_DEB_NO_LINTIAN=1 scripts/deb.sh   skip lintian (tests that only install)
#   GL_DEB_OUT=DIR scripts/deb.sh        build in DIR (default build/deb)
# Expects `make build` done (the Makefile's deb target does it).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
version=$(sed -n 's/^#define GL_VERSION "\(.*\)"$/\1/p' lib/core/util.h)
arch=$(dpkg --print-architecture)
[ -n "$version" ] || { echo "deb: no GL_VERSION in lib/core/util.h" >&2; exit 2; }
out=${GL_DEB_OUT:-$root/build/deb}
mkdir -p "$out"
out=$(cd "$out" && pwd)
stage=$out/germline
deb=$out/germline_${version}_${arch}.deb
rm -rf "$stage" "$deb"
mkdir -p "$stage/DEBIAN"
umask 022

# the installed tree, as `make install PREFIX=/usr` lays it out
make --no-print-directory install DESTDIR="$stage" PREFIX=/usr >/dev/null
elves=("$stage"/usr/bin/gl-* "$stage/usr/lib/germline/gl-exec-host")
# the Node germline's addon and preload (docs/exec.md), where Node's headers were
node_so=()
for f in germline.node gl-atfork.so; do
  [ -e "$stage/usr/lib/germline/$f" ] && node_so+=("$stage/usr/lib/germline/$f")
done
strip --strip-unneeded --remove-section=.comment --remove-section=.note \
  "${elves[@]}" "$stage/usr/lib/germline/_germline.so" "${node_so[@]}"
gzip -9n "$stage"/usr/share/man/man1/*.1 "$stage"/usr/share/man/man7/*.7

# Debian policy 12.5/12.7: copyright and (native package) changelog
doc=$stage/usr/share/doc/germline
install -d -m 0755 "$doc"
date_r=$(date -R -u -d "@$(git log -1 --format=%ct 2>/dev/null || date +%s)")
printf '%s\n' \
  "germline ($version) unstable; urgency=medium" "" \
  "  * Package built by make deb (scripts/deb.sh) from the germline tree." "" \
  " -- germline maintainers <maintainers@users.noreply.a-seed-923b7062.example>  $date_r" \
  | gzip -9n >"$doc/changelog.gz"
cat >"$doc/copyright" <<'EOF'
germline: run untrusted AI-agent tools in sandboxed copies forked from a
data-free germline process.

Copyright 2026 the germline authors (maintainers@users.noreply.a-seed-923b7062.example).

The source tree carries no licence statement yet; until one is chosen, no
licence is granted beyond what the authors grant in writing. The design is the
paper "Signed, Sealed, Leaked: Trust Beyond Signature for MCP Toolchains".
EOF
chmod 0644 "$doc/changelog.gz" "$doc/copyright"

# Depends: the shared libraries the ELF files need, as dpkg-shlibdeps derives
# them from the installed packages' shlibs/symbols files (libjq1, libsodium23,
# libseccomp2, libarchive13, libcurl4, libc6, … and whatever a later link adds),
# plus the Python that _germline.so was built for (its C API is per version).
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/debian"
printf 'Source: germline\n\nPackage: germline\nArchitecture: any\n' >"$tmp/debian/control"
shlibs=$(cd "$tmp" && dpkg-shlibdeps -O "${elves[@]}" \
  "$stage/usr/lib/germline/_germline.so" "${node_so[@]}" 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
[ -n "$shlibs" ] || { echo "deb: dpkg-shlibdeps found no dependencies" >&2; exit 2; }
pyver=$(/usr/bin/python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
pynext=$(/usr/bin/python3 -c 'import sys; print("%d.%d" % (sys.version_info[0], sys.version_info[1] + 1))')
size=$(du -sk --exclude=DEBIAN "$stage" | cut -f1)

cat >"$stage/DEBIAN/control" <<EOF
Package: germline
Version: $version
Architecture: $arch
Maintainer: germline maintainers <maintainers@users.noreply.a-seed-923b7062.example>
Installed-Size: $size
Depends: $shlibs, python3 (>= $pyver), python3 (<< $pynext)
Recommends: nodejs
Section: admin
Priority: optional
Description: run untrusted AI-agent tools in sandboxed, data-free copies
 germline runs the calls of signed AI-agent tools (MCP servers and tool
 packages) in disposable copies forked from a germline process that never
 held user data. Each copy sees only the items its destinations are cleared
 for; outbound requests go through a broker that compares the copies'
 requests and records witnesses when they differ.
 .
 The commands gl-sign, gl-verify, gl-plan, gl-run, gl-replay and gl-damp read
 and write JSON Lines; see germline(7).
EOF
(cd "$stage" && find usr -type f -print0 | sort -z | xargs -0 md5sum) >"$stage/DEBIAN/md5sums"
chmod 0644 "$stage/DEBIAN/control" "$stage/DEBIAN/md5sums"

dpkg-deb --root-owner-group -Zxz --build "$stage" "$deb" >/dev/null
echo "deb: $deb"
dpkg-deb -f "$deb" Package Version Architecture Depends
if [ "${GL_DEB_NO_LINTIAN:-0}" != 1 ]; then
  command -v lintian >/dev/null || { echo "deb: lintian missing (GL_DEPS_DEB=1 scripts/deps.sh)" >&2; exit 2; }
  # no error allowed; warnings and notes are shown
  lintian --fail-on error --tag-display-limit 0 "$deb"
  echo "deb: lintian: no errors"
fi
