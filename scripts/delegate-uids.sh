#!/usr/bin/env bash
# Delegate a range of host ids to each USER given (default: root and nobody,
# the users make check runs gl-run as) in /etc/subuid and /etc/subgid, so
# that every copy gets a host uid of its own (docs/sandbox.md "Host uids").
# A user who has an entry already keeps it. A new range starts at 2^30
# (0x40000000) or past every range either file holds, whichever is higher,
# and never holds an id of the passwd or group databases. Root only; what it
# adds it prints. Run by make check; an operator may run it too, or write
# the lines by hand (NAME:START:COUNT, as for rootless Podman).
set -euo pipefail
COUNT=65536
[ "$(id -u)" = 0 ] || { echo "delegate-uids: run as root" >&2; exit 2; }
users=("$@")
[ ${#users[@]} -gt 0 ] || users=(root nobody)
touch /etc/subuid /etc/subgid

# the first id past every range of both files, and at least 2^30
next_free() {
  awk -F: 'NF == 3 && $2 ~ /^[0-9]+$/ && $3 ~ /^[0-9]+$/ { e = $2 + $3; if (e > m) m = e }
    END { if (m < 1073741824) m = 1073741824; print m }' /etc/subuid /etc/subgid
}

# does any account or group hold an id of [start, start + COUNT)?
taken() {
  getent passwd | awk -F: -v s="$1" -v n="$COUNT" '$3 >= s && $3 < s + n { f = 1 } END { exit !f }' ||
    getent group | awk -F: -v s="$1" -v n="$COUNT" '$3 >= s && $3 < s + n { f = 1 } END { exit !f }'
}

for u in "${users[@]}"; do
  id "$u" >/dev/null 2>&1 || { echo "delegate-uids: no user $u" >&2; exit 2; }
  if grep -q "^$u:" /etc/subuid && grep -q "^$u:" /etc/subgid; then
    continue
  fi
  start=$(next_free)
  while taken "$start"; do start=$((start + COUNT)); done
  grep -q "^$u:" /etc/subuid || echo "$u:$start:$COUNT" >>/etc/subuid
  grep -q "^$u:" /etc/subgid || echo "$u:$start:$COUNT" >>/etc/subgid
  echo "delegate-uids: $u:$start:$COUNT in /etc/subuid and /etc/subgid" >&2
done
