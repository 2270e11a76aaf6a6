"""The release of bench/realistic.sh (make bench; issue 19 "a realistic
release"): a tool whose initialisation costs what real tools cost. At import
it loads Debian's python3-numpy (native extensions, BLAS), python3-pypdf
(which pulls in python3-cryptography for PDF encryption) and
python3-requests (urllib3, idna, charset detection) — the imports that make
a fresh process per call expensive and that the paper's 2-28x (Section VII)
comes from. Every function uses what was imported; none opens a socket.

noop             returns None: the cost of a call itself.
reduce           numpy reductions over args["values"] (a list of numbers):
                 n, sum, mean, standard deviation, min, max, a percentile
                 and the norm of the values as a square-ish matrix product.
pdf_roundtrip    a one-page PDF built with pypdf from the first item's text
                 (or args["text"]), written to memory and read back: the
                 page count, the extracted text's lines and the PDF's size
                 and SHA-256 (pypdf writes no date or random ID here, so the
                 bytes are the same in every copy).
prepare_request  a requests.Request prepared, never sent: method, URL with
                 the query string encoded, headers and the JSON body's size.
hold             sleeps args["seconds"] (default 0.5): the benchmark reads
                 a live copy's memory meanwhile.
"""
import hashlib
import io
import time

import numpy
import pypdf
import requests
from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject


def noop(call):
    return None


def reduce(call):
    xs = numpy.asarray(call.args.get("values") or [], dtype=numpy.float64)
    if xs.size == 0:
        return {"n": 0}
    side = int(numpy.sqrt(xs.size))
    m = xs[:side * side].reshape(side, side)
    return {"n": int(xs.size), "sum": float(xs.sum()), "mean": float(xs.mean()),
            "std": float(xs.std()), "min": float(xs.min()), "max": float(xs.max()),
            "p90": float(numpy.percentile(xs, 90)),
            "gram_norm": float(numpy.linalg.norm(m @ m.T))}


def _pdf_escape(s):
    return s.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def _one_page_pdf(lines):
    w = pypdf.PdfWriter()
    page = w.add_blank_page(width=612, height=792)
    font = DictionaryObject({NameObject("/Type"): NameObject("/Font"),
                             NameObject("/Subtype"): NameObject("/Type1"),
                             NameObject("/BaseFont"): NameObject("/Helvetica")})
    page[NameObject("/Resources")] = DictionaryObject(
        {NameObject("/Font"): DictionaryObject({NameObject("/F1"): w._add_object(font)})})
    ops = "BT /F1 10 Tf 12 TL 72 740 Td " + " ".join(
        "(%s) '" % _pdf_escape(line) for line in lines) + " ET"
    content = DecodedStreamObject()
    content.set_data(ops.encode("latin-1", "replace"))
    page[NameObject("/Contents")] = w._add_object(content)
    buf = io.BytesIO()
    w.write(buf)
    return buf.getvalue()


def pdf_roundtrip(call):
    text = call.args.get("text")
    if text is None:
        first = next(iter(call.items.values()), None)
        text = first.data.decode("utf-8", "replace") if first is not None else ""
    lines = [line[:90] for line in str(text).splitlines()[:50]]
    data = _one_page_pdf(lines)
    reader = pypdf.PdfReader(io.BytesIO(data))
    got = reader.pages[0].extract_text().splitlines()
    return {"pages": len(reader.pages), "lines": len(got), "first": got[:3],
            "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def prepare_request(call):
    a = call.args
    req = requests.Request(a.get("method", "POST"), a.get("url", "https://ocr.example/v1/ocr"),
                           params=a.get("params") or {}, headers=a.get("headers") or {},
                           json=a.get("json"))
    p = req.prepare()
    return {"method": p.method, "url": p.url, "headers": dict(p.headers),
            "body_bytes": len(p.body or b"")}


def hold(call):
    time.sleep(float(call.args.get("seconds", 0.5)))
    return None
