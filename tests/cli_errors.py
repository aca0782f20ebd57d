"""The check every CLI error test makes: exit 2 and one line on stderr, ``error: ...``, no traceback."""
from __future__ import annotations

from chunklab.cli import main


def one_line_error(capsys, argv, *fragments) -> str:
    """Run ``python -m chunklab ARGV`` in-process; assert it fails with one line naming each fragment."""
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ") and "Traceback" not in err, err
    for f in fragments:
        assert f in err, err
    return err
