#!/bin/sh
# make layers: refuse any #include that points up the layer order of lib/
# (docs/design/README.md "The map"). A folder may include its own headers and
# those of any folder before it in ORDER; cmd/ and hosts/ may include any.
# Usage: scripts/layers.sh [ROOT]   (exit 1 and one line per upward include)
set -eu
ROOT=${1:-.}
ORDER="core json release sign plan sandbox runtime evidence broker replay damp session"
cd "$ROOT"
rank() {
	i=0
	for l in $ORDER; do
		[ "$l" = "$1" ] && { echo $i; return; }
		i=$((i + 1))
	done
	echo -1
}
bad=0
for dir in lib/*/; do
	d=$(basename "$dir")
	r=$(rank "$d")
	if [ "$r" -lt 0 ]; then
		echo "layers: lib/$d is not in the order ($ORDER)" >&2
		bad=1
		continue
	fi
	for f in "$dir"*.c "$dir"*.h; do
		[ -e "$f" ] || continue
		# every quoted include names its folder: "sign/tuf.h"
		grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" |
			sed 's/^\([0-9]*\):.*"\([^"]*\)".*/\1 \2/' |
			while read -r line inc; do
				case $inc in
				*/*) t=${inc%%/*} ;;
				*)
					echo "$f:$line: \"$inc\" does not name its folder (write \"$d/$inc\")"
					continue
					;;
				esac
				tr=$(rank "$t")
				if [ "$tr" -lt 0 ]; then
					echo "$f:$line: \"$inc\": $t is not a layer"
				elif [ "$tr" -gt "$r" ]; then
					echo "$f:$line: \"$inc\" points up: $d may include only layers before it ($ORDER)"
				fi
			done
	done
done >"${TMPDIR:-/tmp}/layers.$$"
if [ -s "${TMPDIR:-/tmp}/layers.$$" ]; then
	cat "${TMPDIR:-/tmp}/layers.$$"
	bad=1
fi
rm -f "${TMPDIR:-/tmp}/layers.$$"
[ "$bad" = 0 ] && echo "layers: $(ls -d lib/*/ | wc -l) folders, no include points up"
exit "$bad"
