"""copy_relay: a copy's HTTP requests go to the broker, not to a socket
(SPEC §10 "effect" messages; paper §VI "Broker": the broker delivers each
request to its named destination only, from the copy cleared for it).

http.client.HTTPConnection and HTTPSConnection are replaced in every loaded
module by the classes below (copy_host.prepare); in a copy, connect() hands
http.client a _RelaySocket that collects the request bytes and asks the
broker with one "effect" message once the request is complete. Outside a
copy (chan is None: the germline, an unconfined baseline) they behave as the
originals (HTTPS refuses). copy_host.run sets chan."""

import base64
import errno
import http
import http.client
import io

chan = None  # the copy's Channel (copy_host.Channel), set by copy_host.run
_real_http = http.client.HTTPConnection


def _parse_head(raw):
    """(method, target, headers, chunked, length) of a request head."""
    line, _, fields = raw.partition(b"\r\n")
    parts = line.decode("latin-1").split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/"):
        raise http.client.HTTPException("germline: malformed request line %.80r" % bytes(line))
    msg = http.client.parse_headers(io.BytesIO(bytes(fields)))
    chunked = "chunked" in (msg.get("Transfer-Encoding") or "").lower()
    headers = [[k, v] for k, v in msg.items()
               if not (chunked and k.lower() == "transfer-encoding")]
    return parts[0], parts[1], headers, chunked, int(msg.get("Content-Length") or 0)


def _dechunk(raw):
    """The body of a complete chunked encoding, or None while incomplete."""
    body, pos = bytearray(), 0
    while True:
        eol = raw.find(b"\r\n", pos)
        if eol < 0:
            return None
        size = int(bytes(raw[pos:eol]).split(b";")[0], 16)
        if size == 0:
            return bytes(body) if raw.find(b"\r\n", eol + 2) >= 0 else None
        if len(raw) < eol + 2 + size + 2:
            return None
        body += raw[eol + 2:eol + 2 + size]
        pos = eol + 2 + size + 2


def _raw_response(reply):
    if reply.get("denied"):
        return None
    if reply.get("placeholder"):
        status, headers, body = 200, [["X-Germline", "placeholder"]], b""
    else:
        status = int(reply["status"])
        headers = [h for h in reply.get("headers") or []
                   if h[0].lower() not in ("transfer-encoding", "content-length", "connection")]
        body = base64.b64decode(reply.get("body") or "")
    try:
        reason = http.HTTPStatus(status).phrase
    except ValueError:
        reason = ""
    out = ["HTTP/1.1 %03d %s" % (status, reason)]
    out += ["%s: %s" % (k, v) for k, v in headers]
    out += ["Content-Length: %d" % len(body), "Connection: close", "", ""]
    return "\r\n".join(out).encode("latin-1", "replace") + body


class _RelaySocket:
    """Stands for the TCP connection: collects the request bytes, relays the
    request to the broker once it is complete, and serves the reply to
    http.client.HTTPResponse through makefile()."""

    def __init__(self, conn):
        self.conn = conn
        self.out = bytearray()
        self.head = None  # (method, target, headers, chunked, length) once known
        self.body_at = 0
        self.response = None

    def sendall(self, data):
        if self.response is not None:
            raise http.client.HTTPException("germline: one request per connection")
        self.out += data.encode("latin-1") if isinstance(data, str) else data
        if self.head is None:
            end = self.out.find(b"\r\n\r\n")
            if end < 0:
                return
            self.head, self.body_at = _parse_head(self.out[:end + 2]), end + 4
        method, target, headers, chunked, length = self.head
        if chunked:  # (slices only when the request may be complete)
            body = _dechunk(self.out[self.body_at:]) if self.out.endswith(b"0\r\n\r\n") else None
        elif len(self.out) - self.body_at >= length:
            body = bytes(self.out[self.body_at:self.body_at + length])
        else:
            body = None
        if body is not None:
            self.response = self._relay(method, target, headers, body)

    send = sendall

    def _relay(self, method, target, headers, body):
        conn = self.conn
        if "://" in target:  # absolute form (a proxy request): the URL is the target
            url = target
        else:
            host = conn._tunnel_host or conn.host
            port = conn._tunnel_port if conn._tunnel_host else conn.port
            if ":" in host:
                host = "[%s]" % host
            url = "%s://%s%s%s" % (conn.scheme, host,
                                   "" if port == conn.default_port else ":%d" % port, target)
        reply = chan.ask({"type": "effect", "method": method, "url": url,
                               "headers": headers,
                               "body": base64.b64encode(body).decode()}, "reply")
        if reply.get("error"):
            raise ConnectionError("germline: %s" % reply["error"])
        raw = _raw_response(reply)
        if raw is None:
            raise ConnectionRefusedError(
                errno.ECONNREFUSED, "germline: destination not declared: %s" % url)
        return raw

    def makefile(self, mode="rb", *args, **kw):
        if self.response is None:
            raise http.client.HTTPException("germline: incomplete request")
        return io.BytesIO(self.response)

    def settimeout(self, t):
        pass

    def setsockopt(self, *a):
        pass

    def close(self):
        pass


class HTTPConnection(_real_http):
    """http.client.HTTPConnection in a copy: the request goes to the broker."""
    scheme = "http"

    def connect(self):
        if chan is None:  # not in a copy
            return super().connect()
        self.sock = _RelaySocket(self)


class HTTPSConnection(HTTPConnection):
    """TLS is the broker's business: the ssl arguments are accepted and ignored."""
    scheme, default_port = "https", http.client.HTTPS_PORT

    def __init__(self, host, port=None, key_file=None, cert_file=None,
                 timeout=None, source_address=None, *, context=None,
                 check_hostname=None, blocksize=8192):
        super().__init__(host, port, timeout, source_address, blocksize=blocksize)

    def connect(self):
        if chan is None:
            raise ConnectionRefusedError(errno.ECONNREFUSED, "germline: no HTTPS outside a copy")
        super().connect()
