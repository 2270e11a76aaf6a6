"""docs 1.0.0 (testbed/releases; docs/testbed.md "Releases"): the documents
server, flow-compliant.

- summarize: the first line of each visible item; contacts nobody.
- ocr_pdf: each visible item to the OCR service ocr.example; returns
  {name: text}.
- ocr_annotate: the invoice (args["invoice"], else the first item) to
  ocr.example; returns its text and the other items by name only.
"""
import docsutil


def summarize(call):
    return {n: docsutil.first_line(it.data) for n, it in call.items.items() if it.data}


def ocr_pdf(call):
    return {n: docsutil.ocr(n, it.data) for n, it in call.items.items() if it.data}


def ocr_annotate(call):
    names = list(call.items)
    inv = call.args.get("invoice") or (names[0] if names else "")
    item = call.items.get(inv)
    text = docsutil.ocr(inv, item.data) if item is not None and item.data else ""
    return {"invoice": inv, "text": text, "see_also": [n for n in names if n != inv]}
