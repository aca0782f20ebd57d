"""Per-chapter analysis helpers: what a chapter computes for its prose, called in one line.

A chapter's visible cells are the ones a reader should read and run; the analysis behind a
table, a claims row or a sentence's numbers lives here, one module per chapter
(``chunklab.book.lessons.ch1`` ... ``ch7``), tested in ``tests/test_lessons_*.py``. The modules
return plain data (dicts, rows, results); the chapter binds them for its prose with ``glue``.

Like :mod:`chunklab.book.exercises`, the modules are chapter material and are documented by the
chapters that call them, not one by one in Appendix A.
"""
