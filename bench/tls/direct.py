"""bench/tls.sh's unprotected baseline: the same GET as the bench-tls
release's https function, made N times by one persistent Python process
straight to the sink: a new TLS connection per call, verified against the
test CA with the name api.example, the token in the header.

    direct.py PORT CA_FILE TOKEN N   -> prints the mean ms per call
"""
import socket
import ssl
import sys
import time


def main():
    port, ca, token, n = int(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])
    ctx = ssl.create_default_context(cafile=ca)
    req = ("GET /bench HTTP/1.1\r\nHost: api.example\r\nAuthorization: Bearer %s\r\n"
           "Connection: close\r\n\r\n" % token).encode()
    t0 = time.perf_counter()
    for _ in range(n):
        with socket.create_connection(("127.0.0.1", port)) as raw:
            with ctx.wrap_socket(raw, server_hostname="api.example") as s:
                s.sendall(req)
                while s.recv(65536):
                    pass
    print("%.3f" % ((time.perf_counter() - t0) * 1000 / n))


main()
