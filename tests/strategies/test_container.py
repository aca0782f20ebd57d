"""Container strategies (table, dialogue, qa_pair): golden examples and generated properties."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import chunklab
from chunklab import Document, check_chunks
from chunklab.params import ParamError
from chunklab.strategies.container import find_tables, find_turns, transcribe_row

HANDBOOK = """# 财务制度
## 差旅费
### 住宿标准
员工出差住宿按下表执行，超出部分自理。

表 3-2 住宿限额
| 城市 | 职级 | 住宿限额 |
|------|------|----------|
| 北京 | 总监及以下 | 600 元/晚 |
| 北京 | 总监以上 | 900 元/晚 |
| 上海 | 总监及以下 | 550 元/晚 | 含早餐 |
| 其他 |  |
注：港澳台另行规定。

## 交通
<table><caption>交通标准</caption>
<thead><tr><th rowspan="2">职级</th><th colspan="2">交通工具</th></tr>
<tr><th>火车</th><th>飞机</th></tr></thead>
<tbody><tr><td>总监以上</td><td>一等座</td><td>公务舱</td></tr>
<tr><td>其他</td><td colspan="2">二等座/经济舱</td></tr></tbody></table>
其余按实报销。
"""


def _split(name, text, title=None, **params):
    doc = Document("d", text, title=title)
    chunks = chunklab.get_strategy(name, **params).split(doc)
    assert check_chunks(doc, chunks) == []
    return chunks


# -- table ---------------------------------------------------------------------------

def test_table_whole_keeps_caption_note_and_ragged_rows():
    chunks = _split("table", HANDBOOK, title="员工手册", prefix=True)
    tables = [c for c in chunks if c.meta["level"] == "table"]
    assert len(tables) == 2
    md = tables[0]
    assert md.text.startswith("表 3-2 住宿限额\n| 城市 |") and md.text.endswith("注：港澳台另行规定。")
    assert md.meta["caption"] == "表 3-2 住宿限额"
    assert md.meta["ragged_rows"] == [3, 4]          # an extra cell, a missing cell: kept, recorded
    assert md.meta["path"] == ["财务制度", "差旅费", "住宿标准"]
    assert md.context == "员工手册 > 财务制度 > 差旅费 > 住宿标准"
    html = tables[1]
    assert html.text.startswith("## 交通\n<table>")   # a heading with only the table under it joins it
    assert html.meta["caption"] == "交通标准" and html.meta["format"] == "html"
    assert html.meta["header"] == ["职级", "交通工具 / 火车", "交通工具 / 飞机"]
    assert html.meta["merged_cells"] == 3
    others = [c for c in chunks if c.meta["level"] != "table"]
    assert others and all(c.meta["level"] == "recursive" and c.meta["fallback_from"] == "table" for c in others)
    assert others[-1].text == "其余按实报销。" and others[-1].meta["path"] == ["财务制度", "交通"]


def test_table_rows_mode_repeats_header_in_context_not_text():
    chunks = _split("table", HANDBOOK, mode="rows", rows=2)
    md = [c for c in chunks if c.meta.get("table") == 0]
    assert [c.meta["row_range"] for c in md] == [(1, 2), (3, 4)]
    assert "| 城市 | 职级 | 住宿限额 |" in md[0].text
    assert "城市" not in md[1].text
    assert md[1].context == "表 3-2 住宿限额\n| 城市 | 职级 | 住宿限额 |"
    assert md[1].embed_text.startswith("表 3-2 住宿限额\n| 城市 | 职级 | 住宿限额 |\n| 上海 |")


def test_table_transcription_rows_as_sentences():
    chunks = _split("table", HANDBOOK, transcribe=True)
    md = next(c for c in chunks if c.meta.get("table") == 0)
    lines = md.context.split("\n")
    assert lines[0] == "城市：北京；职级：总监及以下；住宿限额：600 元/晚"
    assert lines[2] == "城市：上海；职级：总监及以下；住宿限额：550 元/晚；列4：含早餐"
    assert lines[3] == "城市：其他"
    html = next(c for c in chunks if c.meta.get("table") == 1)
    assert "职级：其他；交通工具 / 火车：二等座/经济舱；交通工具 / 飞机：二等座/经济舱" in html.context
    assert "城市：北京" not in md.text


def test_transcription_auto_is_on_for_wide_tables_only():
    cols = [f"字段{i}" for i in range(12)]
    wide = "| " + " | ".join(cols) + " |\n|" + "---|" * 12 + "\n| " + " | ".join(str(i) for i in range(12)) + " |\n"
    c = _split("table", wide)[0]
    assert c.meta["transcribed"] and c.context.startswith("字段0：0；字段1：1")
    narrow = _split("table", HANDBOOK)
    assert not any(c.meta.get("transcribed") for c in narrow)
    assert _split("table", wide, transcribe=False)[0].context == ""


def test_table_longer_than_cap_is_cut_between_rows_and_a_long_row_is_flagged():
    rows = "".join(f"| 城市{i} | {i * 100} 元/晚 |\n" for i in range(30))
    text = "| 城市 | 限额 |\n|---|---|\n" + rows
    chunks = _split("table", text, target=120)
    assert len(chunks) > 3
    assert all(c.meta["level"] == "table_rows" and c.meta["fallback_from"] == "table" for c in chunks)
    assert all(len(c) <= 120 for c in chunks)
    assert all(c.text.startswith("| 城市") for c in chunks)     # every cut is at a row start
    long_row = "| 城市 | 说明 |\n|---|---|\n| 北京 | " + "很长的说明" * 40 + " |\n| 上海 | 短 |\n"
    chunks = _split("table", long_row, target=50)
    assert chunks[0].meta["oversize"] and "很长的说明很长的说明 |" in chunks[0].text


def test_broken_html_table_falls_back_with_failure_recorded():
    text = "说明文字。\n<table><tr><td>北京</td><td>600</td>\n<tr><td>上海</td>\n后面的文字没有闭合表格。"
    chunks = _split("table", text)
    failed = [c for c in chunks if c.meta.get("parse_failed")]
    assert failed and failed[0].meta["parse_error"].startswith("unclosed <table>")
    assert failed[0].meta["level"] == "recursive"
    chunks = _split("table", "<table><p>no rows</p></table>")
    assert chunks[0].meta["parse_error"] == "<table> without <tr> rows"


def test_no_tables_goes_to_recursive_and_tables_in_code_fences_are_ignored():
    text = "```\n| a | b |\n|---|---|\n| 1 | 2 |\n```\n普通段落。"
    chunks = _split("table", text)
    assert all(c.meta["level"] == "recursive" for c in chunks)
    assert find_tables(text) == []


def test_pipe_table_without_delimiter_row_and_bad_params():
    t = find_tables("| 城市 | 总监及以下 | 总监以上 |\n| 北京 | 600 元/晚 | 900 元/晚 |\n")[0]
    assert t.columns == ["城市", "总监及以下", "总监以上"] and len(t.rows) == 1
    assert transcribe_row(t.columns, t.rows[0].cells) == "城市：北京；总监及以下：600 元/晚；总监以上：900 元/晚"
    with pytest.raises(ParamError, match="mode must be one of"):
        chunklab.get_strategy("table", mode="cells")
    with pytest.raises(ParamError, match="transcribe must be one of"):
        chunklab.get_strategy("table", transcribe="yes")


# -- dialogue ---------------------------------------------------------------------------

CHAT = """【会话 2025-03-14 订单 88231】
[10:02:15] 用户：你好，我买的耳机左耳没声音，能退吗？
[10:02:40] 客服（小林）：您好，请问收货几天了？
[10:03:02] 用户：今天第5天。
还有发票要一起寄回吗？
[10:03:30] 客服（小林）：7 天内支持无理由退货，发票需要一起寄回。
[10:04:00] 用户：运费谁出？
[10:04:20] 客服（小林）：质量问题运费由我们承担，寄回后拍照上传单号即可。
【会话 2025-03-15 订单 90012】
2025-03-15 09:00 用户：发票抬头开错了。
2025-03-15 09:01 客服：请提供正确抬头，我们重开。
"""


def test_find_turns_recognises_speakers_timestamps_and_sessions():
    sessions = find_turns(CHAT)
    assert [s.title for s in sessions] == ["会话 2025-03-14 订单 88231", "会话 2025-03-15 订单 90012"]
    assert [t.speaker for t in sessions[0].turns] == ["用户", "客服（小林）"] * 3
    assert sessions[0].turns[1].time == "10:02:40"
    assert sessions[1].turns[0].time == "2025-03-15 09:00"
    # a continuation line belongs to the turn above
    assert "还有发票要一起寄回吗？" in CHAT[sessions[0].turns[2].start:sessions[0].turns[2].end]
    alice = find_turns("Alice: 嗨 Bob，下午 3 点有空吗？\nBob: 有空。\nAlice: 好的。\n")[0]
    assert [t.speaker for t in alice.turns] == ["Alice", "Bob", "Alice"]


def test_dialogue_windows_never_separate_a_reply_and_never_cross_sessions():
    chunks = _split("dialogue", CHAT, title="售后记录", turns=3, prefix=True)
    assert [c.meta["turn_range"] for c in chunks] == [(1, 2), (3, 4), (5, 6), (1, 2)]
    assert [c.meta["session"] for c in chunks] == [0, 0, 0, 1]
    for c in chunks:
        last = c.text.rstrip().split("\n")[-1]
        assert "客服" in last      # every window ends on a reply
    assert chunks[0].text.startswith("【会话 2025-03-14 订单 88231】\n[10:02:15] 用户：")
    assert chunks[3].context == "售后记录 > 会话 2025-03-15 订单 90012"
    assert chunks[0].meta["time"] == "10:02:15"


def test_dialogue_overlap_turns_and_cap():
    chunks = _split("dialogue", CHAT, turns=3, overlap_turns=1)
    assert [c.meta["turn_range"] for c in chunks[:3]] == [(1, 2), (2, 4), (4, 6)]
    small = _split("dialogue", CHAT, target=40)
    assert all(len(c) <= 40 or c.meta["level"] == "recursive" for c in small)
    assert any(c.meta.get("split_exchange") for c in small)    # recorded when the cap forces it
    with pytest.raises(ParamError, match=r"overlap_turns must be an int in \[0, turns\)"):
        chunklab.get_strategy("dialogue", turns=2, overlap_turns=2)


def test_dialogue_topic_breaks():
    text = ("用户：请问年假怎么申请？\n客服：年假在 OA 系统提交申请，年假需主管审批。\n"
            "用户：年假可以分几次休？\n客服：年假最多分三次休完。\n"
            "用户：另外报销发票抬头写什么？\n客服：发票抬头写公司全称和税号。\n"
            "用户：电子发票能报销吗？\n客服：电子发票可以报销，打印后提交。\n")
    plain = _split("dialogue", text, turns=20)
    assert len(plain) == 1
    topical = _split("dialogue", text, turns=20, topic_breaks=True, threshold=0.01)
    assert len(topical) == 2 and topical[1].text.startswith("用户：另外报销发票")
    assert topical[1].meta["topic_break"] is True and topical[1].meta["similarity"] < 0.01


def test_untimed_header_field_in_a_timestamped_transcript_is_not_a_turn():
    # "渠道：" occurs once per session, so it counts as a speaker; taken as a turn it became the
    # session's opener and windows ended between a user's question and the reply to it
    text = "".join(f"【会话 {k}】\n渠道：在线客服\n" + "".join(
        f"[10:0{i}:00] 用户：问题{k}{i}？\n[10:0{i}:30] 客服：回答{k}{i}。\n" for i in range(4)) for k in range(2))
    sessions = find_turns(text)
    assert [t.speaker for t in sessions[0].turns] == ["用户", "客服"] * 4
    assert text[sessions[0].turns[0].start:].startswith("【会话 0】\n渠道：在线客服\n[10:00:00] 用户")
    for c in _split("dialogue", text, turns=3):
        assert "客服" in c.text.rstrip().split("\n")[-1]


def test_no_turns_goes_to_recursive():
    chunks = _split("dialogue", "这是一段普通说明文字。没有任何对话。")
    assert chunks[0].meta["level"] == "recursive" and chunks[0].meta["no_turns"] is True
    assert chunks[0].meta["fallback_from"] == "dialogue"


# -- qa_pair ----------------------------------------------------------------------------------

FAQ = """# 报销常见问题
以下问题由财务部整理。

## 差旅
问：发票丢了怎么办？
答：请开具遗失证明，由部门负责人签字后提交。
问：出差补贴多久到账？
答：审批通过后 5 个工作日内到账。

### 住宿超标了能报吗？
超出部分需自理，特殊情况请提前申请。

Q: Can I claim taxi fares?
A: Yes, with receipts.
"""


def test_qa_pairs_one_chunk_per_question():
    chunks = _split("qa_pair", FAQ, title="财务FAQ", prefix=True)
    qa = [c for c in chunks if c.meta["level"] == "qa_pair"]
    assert [c.meta["question"] for c in qa] == [
        "发票丢了怎么办？", "出差补贴多久到账？", "住宿超标了能报吗？", "Can I claim taxi fares?"]
    assert qa[0].text == "## 差旅\n问：发票丢了怎么办？\n答：请开具遗失证明，由部门负责人签字后提交。"
    assert qa[2].text.startswith("### 住宿超标了能报吗？\n超出部分需自理")
    assert qa[3].meta["path"] == ["报销常见问题", "差旅", "Can I claim taxi fares?"]
    assert qa[1].context == "财务FAQ > 报销常见问题 > 差旅 > 出差补贴多久到账？"
    intro = chunks[0]
    assert intro.meta["level"] == "recursive" and intro.text.endswith("以下问题由财务部整理。")


def test_long_answer_is_cut_with_the_question_in_context():
    text = "问：病假工资怎么算？\n答：" + "按照当地最低工资标准的百分之八十执行，" * 20
    chunks = _split("qa_pair", text, target=100)
    assert len(chunks) > 1
    assert all(c.context == "问：病假工资怎么算？" and c.meta["level"] == "recursive" for c in chunks)
    assert all(c.meta["question"] == "病假工资怎么算？" for c in chunks)


def test_no_questions_goes_to_recursive():
    chunks = _split("qa_pair", "第一条 为了规范管理，制定本办法。")
    assert chunks[0].meta["no_questions"] is True and chunks[0].meta["level"] == "recursive"


# -- properties on generated containers --------------------------------------------------------

CELL = st.text(st.sampled_from(list("北京上海元晚职级总监 0123|\\<>")), max_size=12)


@st.composite
def markdown_tables(draw):
    ncol = draw(st.integers(1, 13))
    rows = draw(st.lists(st.lists(CELL, min_size=0, max_size=ncol + 2), max_size=12))
    head = "| " + " | ".join(f"列{i}" for i in range(ncol)) + " |\n"
    delim = draw(st.sampled_from(["|" + "---|" * ncol + "\n", ""]))
    body = "".join("| " + " | ".join(r) + " |\n" for r in rows)
    before = draw(st.sampled_from(["", "表 1 标准\n", "## 标题\n\n", "正文。\n\n", "<table><tr><td>x</td>\n"]))
    after = draw(st.sampled_from(["", "注：说明。\n", "\n后文。", "<table><tr><td>a</td></tr></table>"]))
    return before + head + delim + body + after


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=markdown_tables(), target=st.integers(1, 300), mode=st.sampled_from(["whole", "rows"]),
       rows=st.integers(1, 5), transcribe=st.sampled_from(["auto", True, False]))
def test_generated_tables_invariants(text, target, mode, rows, transcribe):
    chunks = _split("table", text, target=target, mode=mode, rows=rows, transcribe=transcribe)
    for c in chunks:
        assert len(c) <= target or c.meta.get("oversize"), c
        if c.meta.get("kind") == "table" and not c.meta.get("parse_failed"):
            assert c.meta["level"] in ("table", "table_rows")


SPEAKERS = st.sampled_from(["用户", "客服（小林）", "[10:02:15] 用户", "2025-03-14 10:02 客服", "Alice", "Bob"])
LINE = st.text(st.sampled_from(list("退款发票可以吗？。 abc")), max_size=30)


@st.composite
def dialogues(draw):
    parts = []
    for _ in range(draw(st.integers(0, 15))):
        kind = draw(st.integers(0, 9))
        if kind == 0:
            parts.append("【会话 " + draw(LINE) + "】\n")
        elif kind == 1:
            parts.append(draw(LINE) + "\n")
        else:
            parts.append(draw(SPEAKERS) + "：" + draw(LINE) + "\n")
    return "".join(parts)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=dialogues(), target=st.integers(1, 300), turns=st.integers(1, 6), overlap=st.integers(0, 5),
       topic=st.booleans())
def test_generated_dialogues_invariants(text, target, turns, overlap, topic):
    if overlap >= turns:
        overlap = turns - 1
    chunks = _split("dialogue", text, target=target, turns=turns, overlap_turns=overlap, topic_breaks=topic)
    for c in chunks:
        assert len(c) <= target or c.meta.get("oversize"), c
        if c.meta["level"] == "dialogue":
            assert c.meta["turns"] <= turns or c.meta["turns"] == c.meta["turn_range"][1] - c.meta["turn_range"][0] + 1
    for a, b in zip(chunks, chunks[1:]):
        if a.meta.get("session") != b.meta.get("session"):
            assert a.end <= b.start      # sessions never share text


@st.composite
def faqs(draw):
    parts = []
    for _ in range(draw(st.integers(0, 10))):
        kind = draw(st.integers(0, 4))
        line = draw(LINE)
        parts.append(["问：", "答：", "Q: ", "## ", ""][kind] + line + draw(st.sampled_from(["？", "", "?"])) + "\n")
    return "".join(parts)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=faqs(), target=st.integers(1, 300))
def test_generated_faqs_invariants(text, target):
    chunks = _split("qa_pair", text, target=target)
    for c in chunks:
        assert len(c) <= target or c.meta.get("oversize"), c
        if c.meta["level"] == "qa_pair":
            assert c.meta["question"]


def test_speaker_labels_of_several_words():
    from chunklab.strategies.container import find_turns

    chat = ("Agent Smith: hello, how can I help?\nJohn Doe: my refund is late.\n"
            "Agent Smith: let me check.\nJohn Doe: thanks.\n")
    assert [t.speaker for t in find_turns(chat)[0].turns] == ["Agent Smith", "John Doe", "Agent Smith", "John Doe"]
    zh = "客服 小林：您好，请问有什么可以帮您？\n用户：退款到账了吗？\n客服 小林：已经原路退回。\n"
    assert [t.speaker for t in find_turns(zh)[0].turns] == ["客服 小林", "用户", "客服 小林"]
    # prose and code with a colon are not turns, even next to a real turn or repeated
    prose = ("用户：能退吗？\nThe reason is: it was late.\nNote that: refunds take days.\n"
             "if not x:\n    pass\nif not x:\n    pass\n客服：可以。\n")
    assert [t.speaker for t in find_turns(prose)[0].turns] == ["用户", "客服"]
