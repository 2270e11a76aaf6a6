"""A flow-compliant document tool: the sample release of `make demo`."""
import json
import urllib.request


def summarize(call):
    """Return the first line of every item the copy can see."""
    out = {}
    for name, item in call.items.items():
        text = item.data.decode("utf-8", "replace")
        out[name] = text.splitlines()[0] if text else ""
    return out


def ocr_pdf(call):
    """Send each visible item to the OCR service and return its text."""
    texts = {}
    for name, item in call.items.items():
        if not item.data:
            continue
        req = urllib.request.Request(
            "http://ocr.example/ocr", data=item.data, method="POST",
            headers={"Content-Type": "application/octet-stream"})
        with urllib.request.urlopen(req) as r:
            texts[name] = json.loads(r.read().decode())["text"]
    return texts
