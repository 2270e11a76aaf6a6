#!/usr/bin/env bats
# lib/sign/fetch.h: the TUF repository transport over HTTP(S) (issue 16, SPEC §3),
# driven by tests/unit/fetch_drive.c against tests/fixtures/tuf/serve.py on
# loopback, whose special paths play the adversary's mirror (paper §III).
# Where a mechanism can be switched off, the reference is curl(1) without it
# (the damage shown), then fetch with it (refused).
bats_require_minimum_version 1.5.0
load helpers
load fixtures/tuf/serve

DRIVE=$GL_ROOT/build/tests/fetch_drive
case "$GL_BIN" in *asan*) DRIVE=$GL_ROOT/build/asan/tests/fetch_drive ;; esac
drive() { "$DRIVE" "$@"; }

setup() {
  gl_setup
  unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY ALL_PROXY all_proxy NO_PROXY no_proxy GL_PROXY
  mkdir -p www/dir/sub
  printf 'hello\n' >www/a.txt
  printf 'deep\n' >www/dir/sub/b.txt
  head -c 2000000 /dev/zero >www/two-mb
  serve_start WWW www
  U=http://127.0.0.1:$WWW_PORT
}
teardown() { serve_stop_all; }

@test "fetch: a file and a path with '/' arrive whole, with their sha256" {
  run -0 drive "$U/a.txt"
  json '.ok and .status == 200 and .len == 6 and .redirects == 0'
  [ "$(json -r .sha256)" = "$(sha256sum <www/a.txt | cut -d' ' -f1)" ]
  run -0 drive "$U/dir/sub/b.txt"
  [ "$(json -r .sha256)" = "$(sha256sum <www/dir/sub/b.txt | cut -d' ' -f1)" ]
}

@test "fetch: a status other than 200 is refused 'fetch' naming the URL and the status; 403, 404 and 410 are 'missing'" {
  run -1 drive "$U/no-such.json"
  json '.error == "fetch" and .status == 404 and .missing == true'
  json -r .detail | grep -F "$U/no-such.json: HTTP status 404"
  run -1 drive "$U/_/status/410"
  json '.error == "fetch" and .missing == true'
  run -1 drive "$U/_/status/403"
  json '.error == "fetch" and .missing == true'
  run -1 drive "$U/_/status/500"
  json '.error == "fetch" and .status == 500 and .missing == false'
  json -r .detail | grep -F "HTTP status 500"
  run -1 drive "$U/_/status/204"
  json '.error == "fetch" and .len == 0'
}

@test "fetch: length cap — off (curl without a cap) reads 2 MB; on: refused 'length' at cap+1, never more than the cap delivered" {
  # reference: no cap, the whole body is taken
  run -0 curl -s -o body "$U/two-mb"
  [ "$(stat -c %s body)" -eq 2000000 ]
  run -1 drive --max 1000000 "$U/two-mb"
  json '.error == "length"'
  # the Content-Length announced the size: refused before the body
  json '.len == 0'
  json -r .detail | grep -F 'Content-Length 2000000 is over the cap of 1000000 bytes'
  # exactly at the cap: accepted
  run -0 drive --max 2000000 "$U/two-mb"
  json '.len == 2000000'
}

@test "fetch: an endless body (no Content-Length) is refused 'length' once the cap is passed" {
  run -1 drive --max 100000 "$U/_/endless"
  json '.error == "length" and .len <= 100000'
  json -r .detail | grep -F 'more than the cap of 100000 bytes'
  # and so into a file: the file holds no more than the cap
  run -1 drive --max 100000 --out part "$U/_/endless"
  json '.error == "length"'
  [ "$(stat -c %s part)" -le 100000 ]
}

@test "fetch: a lying Content-Length — huge: refused before the body; small: only that many bytes are taken; short: refused 'fetch'" {
  run -1 drive --max 100000 "$U/_/hugelen"
  json '.error == "length" and .len == 0'
  run -0 drive --max 100000 "$U/_/lie/5"
  json '.len == 5'
  run -1 drive "$U/_/short"
  json '.error == "fetch"'
}

@test "fetch: the total time bound — a trickling body is refused 'fetch' (timed out)" {
  run -1 drive --timeout-ms 1000 "$U/_/trickle"
  json '.error == "fetch"'
  json -r .detail | grep -F "$U/_/trickle: timed out"
}

@test "fetch: same-origin redirects are followed at most 3 times; a 4th is refused" {
  run -0 drive "$U/_/hop/2/a.txt"
  json '.ok and .redirects == 3 and .len == 6'
  run -1 drive "$U/_/hop/3/a.txt"
  json '.error == "fetch"'
  json -r .detail | grep -F 'more than 3 redirects'
}

@test "fetch: a redirect to another host — off (curl -L) follows it; on: refused 'fetch' naming both, no request reaches the other host" {
  run -0 curl -sfL "$U/_/other/a.txt"
  [ "$output" = hello ]
  grep -q '"host": "localhost:' "$WWW_LOG"
  : >"$WWW_LOG"
  run -1 drive "$U/_/other/a.txt"
  json '.error == "fetch" and .status == 302'
  json -r .detail | grep -F "$U/_/other/a.txt: redirected to http://localhost:$WWW_PORT/a.txt, another host"
  ! grep -q '"host": "localhost:' "$WWW_LOG"
}

@test "fetch: proxy variables — off (curl) obeys http_proxy; on: ignored; GL_PROXY or --proxy is used" {
  mkdir px
  serve_start PX px
  # reference: curl sends the request to the proxy named in the environment
  run -0 env http_proxy=http://127.0.0.1:$PX_PORT curl -sf "$U/a.txt"
  [[ "$output" == via-proxy* ]]
  grep -qF "\"path\": \"$U/a.txt\"" "$PX_LOG"
  : >"$PX_LOG"
  run -0 env http_proxy=http://127.0.0.1:$PX_PORT HTTP_PROXY=http://127.0.0.1:$PX_PORT \
    ALL_PROXY=http://127.0.0.1:$PX_PORT "$DRIVE" "$U/a.txt"
  json '.len == 6'
  [ ! -s "$PX_LOG" ]
  run -0 env GL_PROXY=http://127.0.0.1:$PX_PORT "$DRIVE" "$U/a.txt"
  json ".len == $(printf 'via-proxy %s\n' "$U/a.txt" | wc -c)"
  grep -qF "\"path\": \"$U/a.txt\"" "$PX_LOG"
  : >"$PX_LOG"
  run -0 drive --proxy "http://127.0.0.1:$PX_PORT" "$U/a.txt"
  grep -qF "\"path\": \"$U/a.txt\"" "$PX_LOG"
}

@test "fetch: http and https only" {
  run -1 drive "file://$PWD/www/a.txt"
  json '.error == "fetch"'
  json -r .detail | grep -F 'not an http:// or https:// URL'
  run -1 drive "ftp://127.0.0.1:$WWW_PORT/a.txt"
  json '.error == "fetch"'
}

@test "fetch: https verifies the certificate with the system's store — off (curl -k) reads a self-signed server; on: refused" {
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
    -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 \
    -keyout tls.key -out tls.crt 2>/dev/null
  serve_start TLS www --tls "$PWD/tls.crt" "$PWD/tls.key"
  T=https://127.0.0.1:$TLS_PORT
  run -0 curl -skf "$T/a.txt"
  [ "$output" = hello ]
  run -1 drive "$T/a.txt"
  json '.error == "fetch" and .status == 0'
  json -r .detail | grep -iE 'certificate|SSL'
  # what fails is the trust, not the server: with its certificate named
  # as the CA, curl reads it
  run -0 curl -sf --cacert tls.crt "$T/a.txt"
  [ "$output" = hello ]
}

@test "fetch: 40 MB streamed into a file with the right sha256; a cap one byte short refuses it before the body" {
  head -c 41943040 /dev/urandom >www/big.tar.gz
  want=$(sha256sum <www/big.tar.gz | cut -d' ' -f1)
  run -0 drive --max 41943040 --out got "$U/big.tar.gz"
  json ".len == 41943040 and .sha256 == \"$want\""
  cmp got www/big.tar.gz
  run -1 drive --max 41943039 --out got2 "$U/big.tar.gz"
  json '.error == "length" and .len == 0'
  [ "$(stat -c %s got2)" -eq 0 ]
}
