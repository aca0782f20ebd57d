"""Test PDFs made from the 小北 corpus, deterministically, at build time.

Chapter 4 needs PDFs whose *content is known*: only then can extraction,
reading order, table recovery and OCR be scored against the truth. Nothing
here is committed; :func:`build_pdfs` typesets sections of the 小北 Markdown
documents with a small layout engine of its own and renders them with
matplotlib's PDF backend (TrueType/Type 42 font embedding, so the text layer
carries real Unicode and real glyph positions). The same inputs always give
byte-identical files (no creation date, seeded noise), so they can be cached.

The set (:data:`SPECS`):

``handbook_ch3``
    员工手册 第三章, single column, 4 pages.
``remote_work_2col``
    远程办公管理办法 set in two columns (title spanning both), 2 pages.
``travel_table``
    差旅费用管理办法 第四章 and 第二十一条, with 表 2 and 表 3 drawn as ruled tables, 2 pages.
``benefits_split``
    员工福利制度 from 6.3 to the end: 表 2 (福利项目汇总, 11 rows) runs over the page break,
    its header row repeated on the next page, as a long table is printed.
``scanned_notice``
    入职指南 from "写在前面" to 1.2, rasterised at 200 dpi, rotated by 1.5 degrees, with
    grey noise and specks, embedded as an image: a page with no text layer.

Every page of the digital PDFs carries a running header (``北辰智联 内部资料``
on the left, the document title on the right) and a footer
``第 N 页 / 共 M 页``. :func:`write_bad_pdfs` adds the broken inputs the tests
need: a truncated file, a password-protected one, one with an empty page, a
file that is not a PDF at all, and an empty file.

Coordinates follow pdfplumber: points (1/72 inch), origin at the top-left of
the page, ``y`` growing downwards; A4 is 595 x 842 points.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Iterable

from ..datasets import load_corpus
from ..viz.fonts import cjk_font_path

__all__ = [
    "PAGE_WIDTH", "PAGE_HEIGHT", "HEADER_LEFT", "SPECS", "GeneratedPdf", "build_pdfs",
    "write_bad_pdfs", "plain_blocks", "default_pdf_dir", "EXTERNAL_PDFS", "external_dir", "external_pdf",
    "external_missing_reason", "answer_key",
]

PAGE_WIDTH, PAGE_HEIGHT = 595.0, 842.0
#: Left half of the running header on every digital page.
HEADER_LEFT = "北辰智联 内部资料"
#: Bumped whenever the layout changes, so cached PDFs are rebuilt.
GENERATOR_VERSION = 3

# Characters that may not start a line (closing punctuation) or end one (opening
# punctuation): the simplest form of Chinese line-breaking rules (禁则).
_NO_LINE_START = set("，。、；：！？）》」』】〕”’%)]}.,;:!?·")
_NO_LINE_END = set("（《「『【〔“‘([{")
# Runs that must not be broken across lines: Latin words, numbers like 1,200 or 4.2.1.
_UNBREAKABLE = re.compile(r"[A-Za-z0-9][A-Za-z0-9.,%/:@_\-–]*")


@dataclass(frozen=True)
class Spec:
    """What to typeset: a section of one corpus document, and how."""

    name: str
    doc_id: str                  # id in load_corpus("xiaobei")
    start: str | None            # first line of the section (a heading), None: from the top
    stop: str | None             # first line after the section, None: to the end
    layout: str                  # "single", "two_column" or "scan"
    size: float = 10.5           # body font size in points
    split_tables: bool = False   # a table that does not fit runs on to the next page, header repeated


#: The generated PDFs, in build order.
SPECS: tuple[Spec, ...] = (
    Spec("handbook_ch3", "employee_handbook", "## 第三章 考勤与休假", "## 第四章", "single", 10.5),
    Spec("remote_work_2col", "remote_work_policy", None, "## 第五章", "two_column", 9.5),
    Spec("travel_table", "travel_expense_policy", "## 第四章 住宿费", "**第二十二条", "single", 10.5),
    Spec("scanned_notice", "onboarding_guide", "## 写在前面", "### 1.3", "scan", 12.0),
    Spec("benefits_split", "benefits_policy", "### 6.3", None, "single", 10.5, split_tables=True),
)


@dataclass
class GeneratedPdf:
    """One generated file and its ground truth.

    ``page_texts[i]`` is the body text typeset on page ``i + 1`` (one line per
    typeset line, no headers or footers); ``source_text`` is the plain text of
    the section (Markdown markers removed), paragraphs separated by blank
    lines; ``tables`` holds each ruled table's rows of cells.
    """

    name: str
    path: str
    doc_id: str
    title: str
    layout: str
    n_pages: int
    page_texts: list[str]
    source_text: str
    tables: list[list[list[str]]] = field(default_factory=list)
    headers: list[str] = field(default_factory=list)


# -- Markdown to plain blocks ---------------------------------------------------------------

@dataclass
class _Block:
    kind: str                    # "title", "heading", "para", "caption", "table"
    text: str = ""
    level: int = 0
    rows: list[list[str]] = field(default_factory=list)


def _strip_inline(s: str) -> str:
    return s.replace("**", "").replace("`", "").strip()


def plain_blocks(markdown: str) -> list[_Block]:
    """Markdown of the 小北 documents as plain blocks, one per non-blank line.

    ``#`` headings become ``title``/``heading`` blocks, ``> `` lines plain
    paragraphs, pipe tables ``table`` blocks (delimiter row dropped), a bold
    line starting ``表`` a ``caption``; ``**`` and backticks are removed.

    >>> [(b.kind, b.text) for b in plain_blocks("# 办法\\n\\n**第一条 目的。** 为了规范。")]
    [('title', '办法'), ('para', '第一条 目的。 为了规范。')]
    """
    blocks: list[_Block] = []
    table: list[list[str]] | None = None
    for raw in markdown.splitlines():
        line = raw.strip()
        if line.startswith("|"):
            cells = [_strip_inline(c) for c in line.strip("|").split("|")]
            if all(re.fullmatch(r":?-{2,}:?", c) for c in cells):
                continue
            if table is None:
                table = []
                blocks.append(_Block("table", rows=table))
            table.append(cells)
            continue
        table = None
        if not line:
            continue
        m = re.match(r"(#{1,6})\s+(.*)", line)
        if m:
            level = len(m.group(1))
            blocks.append(_Block("title" if level == 1 else "heading", _strip_inline(m.group(2)), level))
        elif line.startswith(">"):
            blocks.append(_Block("para", _strip_inline(line.lstrip("> "))))
        elif re.match(r"\*\*表\s*\d", line):
            blocks.append(_Block("caption", _strip_inline(line)))
        else:
            blocks.append(_Block("para", _strip_inline(line)))
    return blocks


def _section(text: str, start: str | None, stop: str | None) -> str:
    lines = text.splitlines()
    i = 0
    if start is not None:
        i = next(k for k, ln in enumerate(lines) if ln.startswith(start))
    j = len(lines)
    if stop is not None:
        j = next((k for k, ln in enumerate(lines) if k > i and ln.startswith(stop)), len(lines))
    return "\n".join(lines[i:j])


# -- measuring and wrapping ------------------------------------------------------------------

@lru_cache(maxsize=None)
def _font_path() -> str:
    return str(cjk_font_path())


@lru_cache(maxsize=None)
def _face():
    from matplotlib.ft2font import FT2Font
    face = FT2Font(_font_path())
    face.set_size(100, 72)
    return face


@lru_cache(maxsize=None)
def _advance(ch: str) -> float:
    """Advance width of ``ch`` in em (1.0 for a CJK ideograph)."""
    from matplotlib.ft2font import LoadFlags
    glyph = _face().load_char(ord(ch), flags=LoadFlags.NO_HINTING)
    return glyph.linearHoriAdvance / 65536 / 100


def _width(text: str, size: float) -> float:
    return sum(_advance(c) for c in text) * size


def _tokens(text: str) -> list[str]:
    """Units that wrapping never splits: one CJK character, or one Latin word/number run."""
    out, pos = [], 0
    for m in _UNBREAKABLE.finditer(text):
        out.extend(text[pos:m.start()])
        out.append(m.group())
        pos = m.end()
    out.extend(text[pos:])
    return out


def _wrap(text: str, width: float, size: float) -> list[str]:
    """Greedy line filling with simple kinsoku: closing punctuation never starts a line
    (it hangs past the margin), opening punctuation never ends one."""
    lines: list[str] = []
    cur: list[str] = []
    cur_w = 0.0
    for tok in _tokens(text):
        w = _width(tok, size)
        if cur and cur_w + w > width + 0.01 and tok not in _NO_LINE_START and not (tok == " "):
            carry: list[str] = []
            while cur and cur[-1] in _NO_LINE_END:
                carry.insert(0, cur.pop())
            lines.append("".join(cur).rstrip())
            cur = carry
            cur_w = sum(_width(t, size) for t in cur)
            if not cur and tok == " ":
                continue
        cur.append(tok)
        cur_w += w
    if cur:
        lines.append("".join(cur).rstrip())
    return [ln for ln in lines if ln]


# -- the typesetter ---------------------------------------------------------------------------

@dataclass
class _Page:
    texts: list[tuple[float, float, float, str]] = field(default_factory=list)   # (x, baseline, size, text)
    rules: list[tuple[float, float, float, float]] = field(default_factory=list)  # (x0, y0, x1, y1)
    body: list[str] = field(default_factory=list)


class _Typesetter:
    MARGIN_X, TOP, BOTTOM, GUTTER = 64.0, 78.0, 770.0, 20.0

    def __init__(self, n_columns: int, size: float) -> None:
        self.size = size
        self.leading = size * 1.65
        self.n_columns = n_columns
        self.pages: list[_Page] = []
        self._new_page()

    def _new_page(self, top: float | None = None) -> None:
        self.pages.append(_Page())
        self.col = 0
        self.frame_top = self.TOP if top is None else top
        self.y = self.frame_top

    def _columns(self) -> list[tuple[float, float]]:
        width = PAGE_WIDTH - 2 * self.MARGIN_X
        if self.n_columns == 1:
            return [(self.MARGIN_X, PAGE_WIDTH - self.MARGIN_X)]
        w = (width - self.GUTTER) / 2
        return [(self.MARGIN_X, self.MARGIN_X + w), (PAGE_WIDTH - self.MARGIN_X - w, PAGE_WIDTH - self.MARGIN_X)]

    def _advance_column(self) -> None:
        if self.col + 1 < self.n_columns:
            self.col += 1
            self.y = self.frame_top
        else:
            self._new_page()

    def _room(self, height: float) -> bool:
        return self.y + height <= self.BOTTOM

    def full_width(self, text: str, size: float, after: float) -> None:
        """A line across all columns (the title): only at the top of a page."""
        x0, x1 = self.MARGIN_X, PAGE_WIDTH - self.MARGIN_X
        for line in _wrap(text, x1 - x0, size):
            self.y += size
            self.pages[-1].texts.append((x0 + (x1 - x0 - _width(line, size)) / 2, self.y, size, line))
            self.pages[-1].body.append(line)
            self.y += size * 0.6
        self.y += after
        self.frame_top = self.y

    def paragraph(self, text: str, size: float | None = None, before: float = 0.0, keep_next: float = 0.0) -> None:
        """Wrap ``text`` into the current column; ``keep_next`` points of room must remain
        below its first line (a heading is not left alone at the foot of a column)."""
        size = size or self.size
        leading = size * 1.65
        x0, x1 = self._columns()[self.col]
        lines = _wrap(text, x1 - x0, size)
        if self.y > self.frame_top:
            self.y += before
        if not self._room(leading + keep_next):
            self._advance_column()
        for line in lines:
            if not self._room(leading):
                self._advance_column()
            x0, _ = self._columns()[self.col]
            self.pages[-1].texts.append((x0, self.y + size, size, line))
            self.pages[-1].body.append(line)
            self.y += leading

    def table(self, rows: list[list[str]], size: float, split: bool = False) -> None:
        x0, x1 = self._columns()[self.col]
        pad = 4.0
        n = max(len(r) for r in rows)
        rows = [r + [""] * (n - len(r)) for r in rows]
        natural = [max(_width(r[j], size) for r in rows) + 2 * pad for j in range(n)]
        avail = x1 - x0
        if sum(natural) <= avail:
            widths = natural
        else:   # shrink the widest columns first, down to 4 characters
            widths = list(natural)
            floor = 4 * size + 2 * pad
            while sum(widths) > avail:
                j = max(range(n), key=lambda k: widths[k])
                if widths[j] <= floor:
                    break
                widths[j] = max(floor, widths[j] - (sum(widths) - avail))
        leading = size * 1.45
        wrapped = [[_wrap(c, widths[j] - 2 * pad, size) or [""] for j, c in enumerate(r)] for r in rows]
        heights = [max(len(c) for c in r) * leading + 2 * pad for r in wrapped]
        total = sum(heights)
        self.y += size * 0.4
        xs = [x0]
        for w in widths:
            xs.append(xs[-1] + w)
        if not split or self._room(total) or not self._room(heights[0] + heights[1 if len(heights) > 1 else 0]):
            if not self._room(total):
                self._advance_column()
            self._table_part(list(zip(wrapped, heights)), xs, size, pad, leading)
            return
        # split: as many rows as fit here, the rest on the next page under a repeated header row
        part = [(wrapped[0], heights[0])]
        used = heights[0]
        for r, h in zip(wrapped[1:], heights[1:]):
            if not self._room(used + h):
                self._table_part(part, xs, size, pad, leading)
                self._advance_column()
                part, used = [(wrapped[0], heights[0])], heights[0]
            part.append((r, h))
            used += h
        self._table_part(part, xs, size, pad, leading)

    def _table_part(self, rows, xs, size, pad, leading) -> None:
        page = self.pages[-1]
        y = self.y
        page.rules.append((xs[0], y, xs[-1], y))
        for r, h in rows:
            for j, cell_lines in enumerate(r):
                for k, line in enumerate(cell_lines):
                    if line:
                        page.texts.append((xs[j] + pad, y + pad + size * 0.95 + k * leading, size, line))
            page.body.append("\t".join("".join(c) for c in r))
            y += h
            page.rules.append((xs[0], y, xs[-1], y))
        for x in xs:
            page.rules.append((x, self.y, x, y))
        self.y = y + size


def _typeset(blocks: list[_Block], layout: str, size: float, split_tables: bool = False) -> list[_Page]:
    ts = _Typesetter(2 if layout == "two_column" else 1, size)
    for b in blocks:
        if b.kind == "title":
            ts.full_width(b.text, size * 1.6, after=size)
        elif b.kind == "heading":
            hsize = size * (1.3 if b.level == 2 else 1.15)
            ts.paragraph(b.text, hsize, before=size * 0.8, keep_next=3 * ts.leading)
        elif b.kind == "caption":
            ts.paragraph(b.text, size, before=size * 0.4, keep_next=4 * ts.leading)
        elif b.kind == "table":
            ts.table(b.rows, size * 0.9, split=split_tables)
        else:
            ts.paragraph(b.text, size, before=size * 0.45)
    return ts.pages


# -- rendering ----------------------------------------------------------------------------------

def _running(page: _Page, number: int, total: int, title: str) -> None:
    size = 8.5
    page.texts.append((_Typesetter.MARGIN_X, 44.0, size, HEADER_LEFT))
    page.texts.append((PAGE_WIDTH - _Typesetter.MARGIN_X - _width(title, size), 44.0, size, title))
    page.rules.append((_Typesetter.MARGIN_X, 50.0, PAGE_WIDTH - _Typesetter.MARGIN_X, 50.0))
    footer = f"第 {number} 页 / 共 {total} 页"
    page.texts.append(((PAGE_WIDTH - _width(footer, size)) / 2, 806.0, size, footer))


def _scan_image(page: _Page, dpi: int, angle: float, seed: int):
    """The page as a grey image: text drawn at ``dpi``, rotated by ``angle`` degrees, noise added."""
    import numpy as np
    from PIL import Image, ImageDraw, ImageFilter, ImageFont

    s = dpi / 72.0
    img = Image.new("L", (round(PAGE_WIDTH * s), round(PAGE_HEIGHT * s)), 255)
    draw = ImageDraw.Draw(img)
    fonts: dict[float, object] = {}
    for x, y, size, text in page.texts:
        font = fonts.setdefault(size, ImageFont.truetype(_font_path(), round(size * s)))
        draw.text((x * s, y * s), text, font=font, fill=25, anchor="ls")
    img = img.rotate(angle, resample=Image.Resampling.BICUBIC, fillcolor=255)
    img = img.filter(ImageFilter.GaussianBlur(0.6))
    rng = np.random.default_rng(seed)
    arr = np.asarray(img, dtype=np.float32)
    arr = arr * 0.92 + 10 + rng.normal(0.0, 14.0, arr.shape)          # grey paper, sensor noise
    specks = rng.random(arr.shape) < 0.0008                             # dust
    arr[specks] = rng.uniform(0, 120, int(specks.sum()))
    return np.clip(arr, 0, 255).astype(np.uint8)


def _render(pages: list[_Page], path: Path, scan: dict | None = None) -> None:
    import matplotlib
    from matplotlib.backends.backend_pdf import PdfPages
    from matplotlib.figure import Figure
    from matplotlib.font_manager import FontProperties
    from matplotlib.lines import Line2D

    W, H = PAGE_WIDTH, PAGE_HEIGHT
    props: dict[float, FontProperties] = {}
    with matplotlib.rc_context({"pdf.fonttype": 42}):
        with PdfPages(path, metadata={"CreationDate": None}) as pdf:
            for page in pages:
                fig = Figure(figsize=(W / 72, H / 72), dpi=72)
                if scan is not None:
                    ax = fig.add_axes((0, 0, 1, 1))
                    ax.axis("off")
                    ax.imshow(_scan_image(page, **scan), cmap="gray", vmin=0, vmax=255,
                              interpolation="none", aspect="auto")
                else:
                    for x, y, size, text in page.texts:
                        fp = props.setdefault(size, FontProperties(fname=_font_path(), size=size))
                        fig.text(x / W, 1 - y / H, text, fontproperties=fp, va="baseline", ha="left")
                    for x0, y0, x1, y1 in page.rules:
                        fig.add_artist(Line2D([x0 / W, x1 / W], [1 - y0 / H, 1 - y1 / H], linewidth=0.6,
                                              color="black", transform=fig.transFigure))
                pdf.savefig(fig)


# -- the public entry points ----------------------------------------------------------------------

def default_pdf_dir() -> Path:
    """``$CHUNKLAB_PDF_DIR`` if set, else ``_build/pdfs`` at the repository root."""
    env = os.environ.get("CHUNKLAB_PDF_DIR")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[2] / "_build" / "pdfs"


def _fingerprint(spec: Spec, source: str) -> str:
    h = hashlib.sha256(f"{GENERATOR_VERSION}|{spec!r}|".encode())
    h.update(source.encode())
    return h.hexdigest()[:16]


def build_pdfs(out_dir: str | Path | None = None, names: Iterable[str] | None = None,
               force: bool = False) -> dict[str, GeneratedPdf]:
    """Generate the PDFs of :data:`SPECS` (or those in ``names``) into ``out_dir``.

    ``out_dir`` defaults to :func:`default_pdf_dir`. A file is rebuilt only when
    its source section or the generator changed (a fingerprint is kept in
    ``manifest.json``) or ``force`` is true. Returns name -> :class:`GeneratedPdf`.
    """

    out = Path(out_dir) if out_dir is not None else default_pdf_dir()
    out.mkdir(parents=True, exist_ok=True)
    manifest_path = out / "manifest.json"
    try:
        manifest = json.loads(manifest_path.read_text("utf-8"))
    except (OSError, ValueError):
        manifest = {}
    wanted = set(names) if names is not None else None
    if wanted is not None:
        unknown = wanted - {s.name for s in SPECS}
        if unknown:
            raise ValueError(f"unknown PDF name(s) {sorted(unknown)}; known: {[s.name for s in SPECS]}")
    corpus = load_corpus("xiaobei")
    result: dict[str, GeneratedPdf] = {}
    for spec in SPECS:
        if wanted is not None and spec.name not in wanted:
            continue
        doc = corpus[spec.doc_id]
        section = _section(doc.text, spec.start, spec.stop)
        fp = _fingerprint(spec, section)
        path = out / f"{spec.name}.pdf"
        entry = manifest.get(spec.name)
        if not force and entry and entry.get("fingerprint") == fp and path.is_file():
            info = dict(entry["info"])
            info["path"] = str(path)
            result[spec.name] = GeneratedPdf(**info)
            continue
        blocks = plain_blocks(section)
        if spec.start is not None and doc.title and spec.layout != "scan":
            blocks.insert(0, _Block("title", doc.title, 1))   # a section still gets its document's title
        pages = _typeset(blocks, spec.layout, spec.size, spec.split_tables)
        scan = None
        if spec.layout == "scan":
            scan = {"dpi": 200, "angle": 1.5, "seed": 12}
        else:
            for k, page in enumerate(pages, 1):
                _running(page, k, len(pages), doc.title or spec.doc_id)
        _render(pages, path, scan)
        source = "\n\n".join(
            b.text if b.kind != "table" else "\n".join("\t".join(r) for r in b.rows) for b in blocks)
        info = GeneratedPdf(
            name=spec.name, path=str(path), doc_id=spec.doc_id, title=doc.title or spec.doc_id,
            layout=spec.layout, n_pages=len(pages), page_texts=["\n".join(p.body) for p in pages],
            source_text=source, tables=[b.rows for b in blocks if b.kind == "table"],
            headers=[] if scan else [HEADER_LEFT, doc.title or spec.doc_id],
        )
        result[spec.name] = info
        manifest[spec.name] = {"fingerprint": fp, "info": {k: v for k, v in asdict(info).items() if k != "path"}}
    tmp = manifest_path.with_suffix(".tmp")
    tmp.write_text(json.dumps(manifest, ensure_ascii=False, indent=1), "utf-8")
    tmp.replace(manifest_path)
    return result


def write_bad_pdfs(out_dir: str | Path, good_pdf: str | Path) -> dict[str, Path]:
    """Broken inputs for the robustness tests, made from ``good_pdf``.

    ``truncated``: the first 40% of the bytes; ``encrypted``: the same pages
    protected with the user password ``"xiaobei"`` (pypdf, AES-128);
    ``empty_page``: its first page, a blank page, then its second page;
    ``not_pdf``: a text file named ``.pdf``; ``zero_bytes``: an empty file.
    """
    from pypdf import PdfReader, PdfWriter

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    data = Path(good_pdf).read_bytes()
    paths = {name: out / f"{name}.pdf" for name in ("truncated", "encrypted", "empty_page", "not_pdf", "zero_bytes")}
    paths["truncated"].write_bytes(data[: int(len(data) * 0.4)])
    reader = PdfReader(str(good_pdf))
    writer = PdfWriter()
    for page in reader.pages:
        writer.add_page(page)
    writer.encrypt(user_password="xiaobei", owner_password="xiaobei-owner", algorithm="AES-128")
    with open(paths["encrypted"], "wb") as fh:
        writer.write(fh)
    writer = PdfWriter()
    writer.add_page(reader.pages[0])
    writer.add_blank_page(width=PAGE_WIDTH, height=PAGE_HEIGHT)
    if len(reader.pages) > 1:
        writer.add_page(reader.pages[1])
    with open(paths["empty_page"], "wb") as fh:
        writer.write(fh)
    paths["not_pdf"].write_text("这不是 PDF 文件，只是改了扩展名的文本。\n", "utf-8")
    paths["zero_bytes"].write_bytes(b"")
    return paths


# -- real PDFs nobody here wrote ------------------------------------------------------------------

#: Real Chinese PDFs for chapter 4 (file name in ``_build/external`` -> where it comes from):
#: example files from the documentation of Debian's ``texlive-lang-chinese`` (LaTeX Project Public
#: License). ``tools/system_deps.sh`` fetches the .deb once with ``apt-get download`` and extracts
#: only these files; nothing is installed and nothing is committed.
EXTERNAL_PDFS: dict[str, str] = {
    "exam-zh-example-multiple.pdf": "usr/share/doc/texlive-doc/xelatex/exam-zh/examples/example-multiple.pdf",
    "njurepo-example.pdf": "usr/share/doc/texlive-doc/latex/njurepo/example.pdf",
}
EXTERNAL_PACKAGE = "texlive-lang-chinese"


def external_dir() -> Path:
    """``$CHUNKLAB_EXTERNAL_DIR`` if set, else ``_build/external`` at the repository root."""
    env = os.environ.get("CHUNKLAB_EXTERNAL_DIR")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[2] / "_build" / "external"


def external_pdf(name: str) -> Path | None:
    """The path of the real PDF ``name`` (a key of :data:`EXTERNAL_PDFS`), or None when it is absent."""
    if name not in EXTERNAL_PDFS:
        raise ValueError(f"unknown external PDF {name!r}; known: {sorted(EXTERNAL_PDFS)}")
    path = external_dir() / name
    return path if path.is_file() and path.stat().st_size > 0 else None


def external_missing_reason(name: str) -> str | None:
    """Why :func:`external_pdf` gives None, with the command that fetches it (None when present)."""
    if external_pdf(name) is not None:
        return None
    return (f"{external_dir() / name} is absent: run `bash tools/system_deps.sh book` (it fetches the "
            f"{EXTERNAL_PACKAGE} .deb with `apt-get download` and extracts /{EXTERNAL_PDFS[name]})")


def answer_key() -> dict:
    """The hand-made answer key for the real PDFs (``data/external/answer_key.json``)."""
    path = Path(__file__).resolve().parents[2] / "data" / "external" / "answer_key.json"
    return json.loads(path.read_text("utf-8"))
