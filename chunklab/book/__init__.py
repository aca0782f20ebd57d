"""Material that exists for the book, kept apart from the runtime library.

Nothing outside this package imports it (a test checks); chapters do.

- :mod:`chunklab.book.apidoc` — the API appendix: Sphinx autodoc run in the chapter's kernel
- :mod:`chunklab.book.claims` — the articles' claims register and the side-by-side claim tables
- :mod:`chunklab.book.exercises` — the chapters' exercises and their self-checks
- :mod:`chunklab.book.labels` — the one Chinese name of each strategy family, miss symptom and metric
- :mod:`chunklab.book.tables` — the chapters' table helper (HTML and Markdown, cells escaped)
- :mod:`chunklab.book.pdfgen` — generates the PDFs of chapter 4 from the book's own corpus
- :mod:`chunklab.book.prose` — ``glue``: the values the prose shows with ``{eval}``, bound once
- :mod:`chunklab.book.reading_order` — reading-order questions about those PDFs
- :mod:`chunklab.book.source` — ``show_source``: listings of chunklab's source, the same on the site and in JupyterLab
"""
