"""The helpers behind chapter 2: each test checks a property the chapter's prose relies on."""
from __future__ import annotations

from types import SimpleNamespace

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

import chunklab  # noqa: E402
from chunklab.base import FAMILIES  # noqa: E402
from chunklab.book.labels import FAMILY_ZH  # noqa: E402
from chunklab.book.lessons import ch2_geometry as geo  # noqa: E402
from chunklab.book.lessons import ch2_linguistic as lin  # noqa: E402
from chunklab.book.lessons import ch2_registry as reg  # noqa: E402
from chunklab.book.lessons import ch2_scorecard as card  # noqa: E402
from chunklab.book.lessons import ch2_semantic as sem  # noqa: E402
from chunklab.book.lessons import ch2_structure as struct  # noqa: E402
from chunklab.book.lessons import ch2_tools as tools  # noqa: E402
from chunklab.core import Chunk, Document  # noqa: E402
from chunklab.datasets import load_corpus  # noqa: E402
from chunklab.datasets.questions import load_questions  # noqa: E402


@pytest.fixture(scope="module")
def xiaobei():
    return load_corpus("xiaobei")


@pytest.fixture(scope="module")
def labour():
    return list(load_corpus("laws:labour"))


@pytest.fixture(scope="module")
def labour_structure(labour):
    return geo.law_structure(labour)


@pytest.fixture(scope="module")
def passage(xiaobei):
    text = xiaobei["employee_handbook"].text
    return Document("p", text[text.index("### 3.7 其他假期"):text.index("### 3.10")].strip())


def test_family_tree_holds_every_registered_strategy_once_in_book_order():
    tree = reg.family_tree()
    names = [n for v in tree.values() for n in v]
    assert sorted(names) == sorted(s["name"] for s in chunklab.list_strategies())
    assert len(names) == len(set(names))
    assert list(tree) == [f for f in FAMILIES if f in tree]
    assert set(reg.FAMILY_CUE) >= set(tree)


def test_family_diagram_draws_every_family_in_chinese_and_every_strategy():
    import matplotlib.pyplot as plt

    fig = reg.family_diagram()
    texts = {t.get_text() for t in fig.axes[0].texts}
    assert {FAMILY_ZH[f] for f in reg.family_tree()} <= texts
    assert {s["name"] for s in chunklab.list_strategies()} <= texts
    plt.close(fig)


def test_knob_demo_min_acts_only_when_the_merge_fits_target(passage):
    n = reg.knob_demo(passage)["numbers"]
    assert n["min_idle_at_200"] and n["min_acts_at_400"] and n["target_idle_within_max"]
    assert n["min_n_400_min"] < n["min_n_400"]


def test_law_structure_fixed_cuts_more_articles_than_recursive_and_clause(labour_structure):
    n = labour_structure["numbers"]
    assert n["cut_fixed"] > n["cut_rec"] >= 0 and n["cut_fixed"] > n["cut_clause"]
    assert n["align_rec"] > 0.95 > n["align_fixed"]
    assert len(labour_structure["articles"]) == len(labour_structure["cut_flags"]["fixed 512"]) == n["n_articles"]
    assert [r.cid for r in labour_structure["claims"]] == ["C15", "C21", "C21", "C18", "C18"]
    assert n["c15_width_ratio"] > 0


def test_first_cut_is_an_article_no_chunk_holds(labour):
    doc = next(d for d in labour if d.id == "中华人民共和国劳动合同法")
    chunks = chunklab.chunk(doc, "fixed", size=512)
    cut = geo.first_cut(doc, chunks)
    art = next(a for a in doc.meta["articles"] if a["number"] == cut["article"])
    assert art["start"] < cut["cut_at"] < art["end"]
    assert not any(c.start <= art["start"] and art["end"] <= c.end for c in chunks)


def test_sliding_windows_never_cut_an_article_shorter_than_the_overlap(labour, labour_structure):
    n = geo.sliding_cost(labour, labour_structure, window=512, step=256)["numbers"]
    assert n["sw_fit_cut"] == 0 and n["sw_guard"] == 256
    assert n["sw_cut"] < labour_structure["numbers"]["cut_fixed"]
    assert 1.8 < n["sw_inflation"] < 2.1


def test_the_window_guarantee_is_window_minus_step_not_step():
    # an article of length L <= window - step lies whole in some window; here step > window / 2
    text = "".join(chr(0x4e00 + i % 500) for i in range(3000))
    spans = [(c.start, c.end) for c in chunklab.chunk(text, "sliding_window", window=300, step=200)]
    for start in range(0, 2700, 7):
        assert any(a <= start and start + 100 <= b for a, b in spans)          # 100 = window - step
    assert not all(any(a <= s and s + 150 <= b for a, b in spans) for s in range(0, 2700, 7))   # 150 <= step, > 100


def test_token_safety_naive_cuts_break_characters_and_the_strategy_does_not():
    doc = Document("d", "劳动者依法享有平等就业和自主择业的权利。" * 300)
    r = geo.token_safety(doc, size=64)
    assert r["numbers"]["naive_bad"] > 0 and r["numbers"]["safe_bad"] == 0 and "\ufffd" in r["example"]
    assert r["claims"][0].cid == "C28"


def test_recursive_on_text_without_marks_is_fixed(xiaobei):
    n = lin.degenerate_recursive(xiaobei["employee_handbook"])["numbers"]
    assert n["identical_when_stripped"] and n["deg_rec_orig"] > 0.9 > n["deg_fix_orig"]
    assert n["deg_rec_plain"] == n["deg_fix_plain"]


def test_long_article_cuts_are_all_at_least_target(labour_structure):
    r = lin.long_article_cuts(labour_structure, target=512) if labour_structure["numbers"]["cut_rec"] else None
    if r is not None:
        doc, art, chunks, at = r["example"]
        assert r["all_long"] and art["start"] < at < art["end"]


def test_heading_straddles_markdown_never_and_sentence_often(xiaobei):
    md = [d for d in xiaobei if d.meta.get("type") == "markdown"][:8]
    n = lin.heading_straddles(md)["numbers"]
    assert n["straddle_markdown"] == 0 and n["straddle_sentence"] > 0.3


def test_heading_straddles_corrects_its_two_comparisons_together(xiaobei):
    md = [d for d in xiaobei if d.meta.get("type") == "markdown"][:8]
    n = lin.heading_straddles(md)["numbers"]
    assert "Holm 校正" in n["straddle_vs_fixed"] and "Holm 校正" in n["straddle_vs_rec"]


def test_rate_diffs_holm_widens_the_interval_of_the_first_test():
    rng = np.random.default_rng(1)
    a = {f"d{i}": list(rng.random(20) < 0.5) for i in range(12)}
    b = {f"d{i}": list(rng.random(20) < 0.3) for i in range(12)}
    plain, held = lin.rate_diff(a, b), lin.rate_diffs_holm(a, {"b": b, "a": a})
    assert held["b"]["diff"] == pytest.approx(plain["diff"])
    assert held["b"]["lo"] <= plain["lo"] and held["b"]["hi"] >= plain["hi"] and held["b"]["level"] == 0.975
    assert held["a"]["diff"] == 0 and not held["a"]["significant"]


def test_rate_diff_is_zero_for_identical_flags_and_signed():
    a = {"x": [True, False, True], "y": [False, False]}
    assert lin.rate_diff(a, a) == {"diff": 0.0, "lo": 0.0, "hi": 0.0}
    b = {"x": [False, False, False], "y": [False, False]}
    assert lin.rate_diff(a, b)["diff"] == pytest.approx(2 / 5)


def test_paragraph_equals_recursive_on_laws_and_falls_back_on_dialogues(xiaobei, labour, labour_structure):
    r = lin.paragraph_fallback([xiaobei["support_dialogues"]], labour, labour_structure["chunks"]["recursive 512"])
    assert r["numbers"]["para_same_on_laws"] and r["numbers"]["para_fb"] == 1.0
    assert r["rows"][0][0] == "support_dialogues"


def test_ocr_line_cuts_find_mid_word_cuts_with_a_word_splitter(xiaobei):
    def two_char_words(text):   # every pair of characters is a word: any cut between a pair is "in a word"
        return [(text[i:i + 2], i, i + 2) for i in range(1, len(text) - 1, 2)]

    r = lin.ocr_line_cuts(xiaobei["scanned_notice_ocr"], xiaobei["employee_handbook"], two_char_words)
    n = r["numbers"]
    assert n["wrap_ocr"] > 0.9 > n["wrap_handbook"] and 0 < n["ocr_in_word_n"] <= n["ocr_cuts"]


def test_markdown_min_merges_tiny_sections(xiaobei):
    md = [d for d in xiaobei if d.meta.get("type") == "markdown"]
    n = struct.markdown_min(md)["numbers"]
    assert n["md_tiny_150"] < n["md_tiny_0"] < 0.2 and n["md_n_150"] < n["md_n_0"]
    assert n["md_median_0"] > 100     # "some" sections are one or two sentences, not "many"


def test_clause_cuts_only_long_or_unnumbered_articles(labour, labour_structure):
    r = struct.clause_levels(labour, labour_structure)
    assert r["numbers"]["numbered_short_cut"] == 0
    assert sum(r["levels"].values()) == len(labour_structure["chunks"]["clause 512"])
    assert r["levels_text"].startswith("条款本身 ") and "clause" not in r["levels_text"]


def test_html_demo_loses_its_heading_tree_when_headings_are_styled():
    page = "<h2>第三章</h2><h3>3.1 年假</h3><p>满一年的，年休假五天。</p><h3>3.2 病假</h3><p>按基本工资的60%发放。</p>" * 3
    n = struct.html_demo(page)["numbers"]
    assert n["html_markup"] > 0.2 and n["styled_with_path"] == 0 < n["html_chunks"]


def test_routing_rows_account_for_every_document(xiaobei):
    rows = struct.routing_rows(list(xiaobei))
    assert sum(r[2] for r in rows) == len(list(xiaobei))
    assert ("类 OCR 文本（几乎无标点、断行）", "fixed") in {(r[0], r[1]) for r in rows}
    assert struct.inner_tables(list(xiaobei))["inner_tables"] > 0


def test_without_headings_keeps_every_body_character():
    doc = Document("d", "# 标题\n第一段。\n## 二\n第二段。\n### 三\n第三段。")
    plain, bounds = sem.without_headings(doc)
    assert plain.text == "第一段。\n第二段。\n第三段。" and bounds == [5, 10]


def test_prose_documents_are_the_unstructured_ones(xiaobei):
    ids = {d.id for d in sem.prose_docs(list(xiaobei))}
    assert {"meeting_minutes_2025q2", "org_announcements"} <= ids
    assert not ids & {d.id for d in sem.policy_docs(list(xiaobei))}


def test_semantic_vs_fixed_judges_only_questions_inside_the_documents(xiaobei):
    docs, qs = sem.prose_docs(list(xiaobei)), load_questions("xiaobei")
    r = sem.semantic_vs_fixed(docs, qs, corpus=list(xiaobei), settings={"buffer": 0, "threshold": "std", "k": 1.0},
                              embedder="lsa", engines=("bm25",), n_boot=200)
    ids = {d.id for d in docs}
    assert r["numbers"]["n_q"] == sum(all(s.doc_id in ids for s in q.spans) for q in qs) > 0
    assert r["numbers"]["n_corpus"] == len(list(xiaobei)) and set(r["tests"]) == {"bm25"}
    assert r["numbers"]["n_sem"] == len(r["chunks"]["semantic"])


def test_adjacent_pairs_counts_neighbours_retrieved_together():
    chunks = [Chunk("a", i, 2 * i, 2 * i + 2, "甲乙") for i in range(4)] + [Chunk("b", 0, 0, 2, "丙丁")]
    result = SimpleNamespace(ranked=np.array([[0, 1, 2, 4], [0, 2, 4, -1]]), k_used=4)
    assert sem.adjacent_pairs(result, chunks).tolist() == [2.0, 0.0]


def test_container_strategies_keep_every_unit_and_fixed_splits_some(xiaobei):
    r = card.container_units(xiaobei)
    assert all(row[3].endswith("：0.0%") for row in r["rows"])
    assert all(v > 0 for v in r["numbers"].values())


def test_self_describing_code_chunks(xiaobei):
    doc = xiaobei["billing/refunds"]
    syms = card.code_symbols(doc)
    assert card.self_describing(chunklab.chunk(doc, "code"), syms) == 1.0
    assert card.self_describing(chunklab.chunk(doc, "recursive", target=1500), syms) < 1.0


class _FakeE5:
    """Two characters per token, a limit of 10 tokens; a vector that depends only on what it reads."""
    max_tokens = 10

    def token_counts(self, texts):
        return [(len(t) + 1) // 2 for t in texts]

    def embed_passages(self, texts):
        out = []
        for t in texts:
            v = np.zeros(8)
            for ch in t[:20]:
                v[ord(ch) % 8] += 1
            out.append(v / np.linalg.norm(v))
        return np.array(out)


def test_e5_limit_reads_the_longest_prefix_within_the_limit_and_the_tail_is_invisible():
    lim = card.E5Limit(_FakeE5())
    assert lim.visible("甲" * 50) == 20 and lim.visible("甲" * 5) == 5
    demo = lim.truncation_demo([Chunk("d", 0, 0, 30, "甲乙" * 15)], filler="丙" * 30)
    assert demo["seen"] == 20 and demo["same_swapped"] == pytest.approx(1.0)
    rows = card.limit_claims(lim, demo)
    assert [r.cid for r in rows] == ["C13", "C14"]


def test_hidden_questions_are_those_past_the_readable_prefix():
    lim = card.E5Limit(_FakeE5())
    chunks = [Chunk("d", 0, 0, 40, "甲" * 40)]
    q = lambda a, b: SimpleNamespace(spans=[SimpleNamespace(doc_id="d", start=a, end=b)])  # noqa: E731
    assert card.hidden_questions(lim, chunks, [q(25, 30), q(5, 10), q(15, 25)]) == [0]


def test_lost_characters_and_offset_audit():
    doc = Document("d", "甲。乙。丙。")
    assert tools.lost_characters(doc, ["甲", "乙", "丙"])["n_lost"] == 3

    def pairs(text, size, overlap):
        ours = chunklab.chunk(text, "fixed", size=size)
        theirs = [SimpleNamespace(metadata={"start_index": c.start + (c.index == 1)}) for c in ours]
        return theirs, ours

    audit = tools.offset_audit(pairs, [("x", [Document("e", "甲" * 1000)], [(200, 0), (50, 0)])])
    assert [r[3] for r in audit["rows"]] == [1, 1] and audit["wrong_real"] == 1 and audit["total_real"] == 5


def test_scorecard_figure_has_one_bar_per_strategy_in_each_panel():
    import matplotlib.pyplot as plt

    fake = {n: {"cut": 0.01 * i, "fb": 0.02 * i} for i, (n, _) in enumerate(card.SCORECARD)}
    fig = card.scorecard_figure(fake)
    assert [len(ax.patches) for ax in fig.axes] == [len(fake), len(fake)]
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == list(fake)
    assert {t.get_text() for t in fig.legends[0].get_texts()} == {FAMILY_ZH[f] for f in reg.family_tree()}
    plt.close(fig)


def test_boundary_vs_fixed_corrects_every_boundary_strategy_together():
    rng = np.random.default_rng(0)
    docs = np.repeat(np.arange(20), 10)
    fixed = (rng.random(200) < 0.3).astype(float)
    fake = {"fixed": {"cut_flags": fixed}, "token": {"cut_flags": fixed},
            "recursive": {"cut_flags": np.zeros(200)}, "sentence_window": {"cut_flags": fixed},
            "markdown": {"cut_flags": fixed}}
    res = card.boundary_vs_fixed(fake, docs)
    assert set(res) == {"recursive", "markdown"}          # no geometric strategy, no sentence window
    assert all(r["m"] == 2 and r["method"] == "holm" for r in res.values())
    assert res["recursive"]["significant"] and res["recursive"]["diff"] > 0
    assert res["markdown"]["diff"] == 0 and not res["markdown"]["significant"]


def test_c2_note_says_what_the_interval_allows():
    worse = sem.c2_note({"diff": -0.07, "lo": -0.12, "hi": -0.01, "significant": True}, policy=True)
    assert worse.startswith("语义切分显著更差")
    unclear = sem.c2_note({"diff": 0.10, "lo": -0.07, "hi": 0.31, "significant": False}, policy=False)
    assert "点估计" in unclear and "跨过 0" in unclear and "显著" not in unclear
    tie = sem.c2_note({"diff": 0.0, "lo": -0.24, "hi": 0.24, "significant": False}, policy=False)
    assert "有利" not in tie and "相同" in tie
    below = sem.c2_note({"diff": -0.008, "lo": -0.05, "hi": 0.04, "significant": False}, policy=True)
    assert "排除了原文的 +6 个百分点" in below


def test_drop_points_reads_the_fall_from_the_lower_ends():
    t = {"bm25": {"lo": -0.090}, "hybrid": {"lo": -0.113}, "dense": {"lo": -0.255}}
    assert sem.drop_points(t, ("bm25", "hybrid")) == "9 到 11 个百分点"
    assert sem.drop_points(t, ("hybrid", "bm25")) == "9 到 11 个百分点"
    assert sem.drop_points(t, ("bm25",)) == "9 个百分点"
    with pytest.raises(ValueError):
        sem.drop_points({"bm25": {"lo": 0.01}, "hybrid": {"lo": -0.1}}, ("bm25", "hybrid"))
