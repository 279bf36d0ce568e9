#!/usr/bin/env bash
# make_certs.sh DIR: a CA (DIR/ca.pem) and a server certificate it signs for 127.0.0.1 and
# localhost (DIR/server.pem, key DIR/server.key, unencrypted), valid for a day, made with the
# openssl command for the suites that run the official clients over TLS (nothing secret is
# checked in).
set -euo pipefail
dir=${1:?usage: make_certs.sh DIR}
cd "$dir"
ec=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
openssl req -x509 "${ec[@]}" -keyout ca.key -out ca.pem -days 1 -subj "/CN=Zest compat test CA" 2>/dev/null
openssl req "${ec[@]}" -keyout server.key -out server.csr -subj "/CN=localhost" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n' >server.ext
openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem \
  -days 1 -extfile server.ext 2>/dev/null
