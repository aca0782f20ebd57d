"""Write tiny PDFs by hand for tests: numbered objects, a cross-reference table and a trailer."""
from __future__ import annotations

from pathlib import Path


def write_pdf(path: Path, objs: list[bytes]) -> Path:
    """Write ``objs`` as objects 1..n of a PDF (object 1 is the catalog) to ``path`` and return it."""
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for i, body in enumerate(objs, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % i + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, xref)
    path.write_bytes(bytes(out))
    return path
