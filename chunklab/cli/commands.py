"""The subcommands but ``matrix`` (in the package's ``__init__``): each takes the parsed arguments,
prints its report (or JSON) and returns the exit status."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from ..base import get_strategy, list_strategies
from ..core import Document
from ..datasets import load_corpus
from ..datasets.files import (HTML_SUFFIXES, PDF_SUFFIXES, extraction_info, extraction_lines, html_document,
                              pdf_document, read_text_file)
from ..datasets.questions import NAMED_SETS, check_questions, load_questions, summarize
from ..evaluation import compare
from ..evaluation.metrics import METRICS
from ..evaluation.stats import bootstrap_ci, paired_bootstrap
from ..params import loads_json, parse_params
from ..preprocess import pages_of, with_pages
from ..retrieval import CorpusIndex, Layout
from ..strategies.router import route_lines, route_table
from ..tools.audit import audit, format_report
from ..tools.report_explain import rank_text
from ..tools.versioning import canonical_config, index_version
from .configs import (eval_chunker, evaluate_chunker, filter_questions, load_inputs, say_ocr, settings_from_args,
                      side_chunker, where_fields, where_note, WHERE_KEYS)
from .engines import NEEDS_EMBEDDER, describe, retrieval_fields, retriever_name, side_settings, split_side
from .output import CLIError, cap, emit, warn
from .runs import against_baseline, baseline_text, check_save, load_run, save_run

__all__ = ["auto_routes", "cmd_strategies", "cmd_chunk", "cmd_text", "read_document", "page_ranges", "cmd_validate", "cmd_audit", "cmd_eval", "cmd_compare"]


def cmd_strategies(args) -> int:
    entries = list_strategies()

    def text() -> str:
        lines = []
        for e in entries:
            params = ", ".join(f"{k}={v['default']!r}" for k, v in e["params"].items())
            lines.append(f"{e['name']:<16} {e['family']:<11} {e['summary_zh']}\n{'':<28}{params}")
        return "\n".join(lines)

    emit(args, entries, text)
    return 0


def _pages_label(pages) -> str:
    if not pages:
        return ""
    return f"p.{pages[0]}" if len(pages) == 1 else f"p.{pages[0]}-{pages[-1]}"


def read_document(path: Path, args) -> Document:
    """One file as ``chunk`` and ``text`` read it, with the corpus loader's readers: a PDF through the
    preprocessing pipeline (``meta["spans"]`` gives its pages), another file through
    :func:`~chunklab.datasets.files.read_text_file` (same BOM, newline and UTF-8 rules, so the same
    offsets); ``--max-file-mb`` honoured (the PDF limits are set by ``main``)."""
    limit = cap(args)
    if path.is_dir():
        raise CLIError(f"{path} is a folder, not a file: {args.command} reads one file (give a folder to eval or "
                       f"validate as --corpus)", where=str(path))
    if path.suffix.lower() in PDF_SUFFIXES:  # the folder corpus's PDF reader: offsets into the extracted text
        doc = pdf_document(path, path.stem, path.name, max_file_bytes=limit)
        doc = Document(doc.id, doc.text, title=path.stem, meta={**doc.meta, "path": str(path)})
        if args.json and doc.meta.get("ocr_pages"):  # the text line says it otherwise
            warn([f"{path}: {doc.meta['ocr_pages']} of {doc.meta.get('n_pages')} pages were read by OCR (Tesseract)"])
        return doc
    try:
        text = read_text_file(path, limit)
    except FileNotFoundError:
        raise CLIError(f"file not found: {path}", where=str(path)) from None
    if path.suffix.lower() in HTML_SUFFIXES:  # the folder corpus's HTML reader: offsets into the visible text
        doc = html_document(text, path.stem, str(path))
        return Document(doc.id, doc.text, title=path.stem, meta=doc.meta)
    return Document(path.stem, text, title=path.stem, meta={"path": str(path)})


def cmd_chunk(args) -> int:
    doc = read_document(Path(args.file), args)
    strategy = get_strategy(args.strategy, **parse_params(args.param))
    chunks = with_pages(doc, strategy.split(doc))
    # One object, as `text --json` gives: which file and document, which strategy, then the chunks.
    payload = {
        "path": str(args.file), "doc_id": doc.id, "chars": len(doc.text), "strategy": strategy.name,
        "params": strategy.get_params(), "n_chunks": len(chunks),
        "chunks": [{"index": c.index, "start": c.start, "end": c.end, "length": len(c), "meta": dict(c.meta),
                    "context": c.context, "text": c.text} for c in chunks],
    }

    def text_out() -> str:
        ocr = f", {doc.meta['ocr_pages']} of them read by OCR" if doc.meta.get("ocr_pages") else ""
        cached = "; text read from the extraction cache" if (doc.meta.get("extract_cache") or {}).get("status") == "hit" else ""
        pdf = f" (text extracted from {doc.meta.get('n_pages')} PDF pages{ocr}){cached}" if doc.meta.get("type") == "pdf" else ""
        label = f"{strategy.name}({', '.join(f'{k}={v!r}' for k, v in strategy.changed_params().items())})"
        rows = [f"{label}: {len(chunks)} chunks from {len(doc.text)} characters{pdf}"]
        if strategy.name == "auto":       # which strategy auto chose for this file, and why
            rows += route_lines(route_table([doc], **strategy.get_params()), every=True)[1:]
        for c in chunks:
            preview = c.text[:60].replace("\n", "⏎")
            where = _pages_label(c.meta.get("pages"))
            rows.append(f"#{c.index:<4} [{c.start}:{c.end}] len={len(c):<5} {where + ' ' if where else ''}"
                        f"{c.meta.get('level', '')}  {preview}")
        return "\n".join(rows)

    emit(args, payload, text_out)
    return 0


def page_ranges(doc: Document) -> list[dict[str, int]]:
    """The pages of a document read from a PDF, ``[{"page", "start", "end"}]`` in text order, as
    offsets into its text (the first to the last character from that page); ``[]`` for other files.

    >>> page_ranges(Document("d", "ab\\ncd", meta={"spans": [{"page": 1, "start": 0, "end": 2},
    ...     {"page": 2, "start": 3, "end": 4}, {"page": 2, "start": 4, "end": 5}]}))
    [{'page': 1, 'start': 0, 'end': 2}, {'page': 2, 'start': 3, 'end': 5}]
    """
    pages: dict[int, dict[str, int]] = {}
    for s in doc.meta.get("spans") or ():
        p = pages.setdefault(s["page"], {"page": s["page"], "start": s["start"], "end": s["end"]})
        p["start"], p["end"] = min(p["start"], s["start"]), max(p["end"], s["end"])
    return sorted(pages.values(), key=lambda p: (p["start"], p["page"]))


def cmd_text(args) -> int:
    """The text of one file exactly as chunklab sees it (the offsets of chunks and questions refer to it);
    a PDF's page marks on lines of their own, outside the text."""
    doc = read_document(Path(args.file), args)
    if not args.json and doc.meta.get("ocr_pages"):  # with --json, read_document said it
        warn([f"{args.file}: {doc.meta['ocr_pages']} of {doc.meta.get('n_pages')} pages were read by OCR (Tesseract)"])
    pages = page_ranges(doc)
    payload = {"path": str(args.file), "doc_id": doc.id, "chars": len(doc.text), "pages": pages, "text": doc.text}
    info = extraction_info([doc])
    if info:  # where the text came from, and the glyph junk dropped from it (on stderr: stdout is the text)
        payload["extract_cache"] = (doc.meta.get("extract_cache") or {}).get("status")
        payload["glyphs_dropped"] = info["glyphs_dropped"].get(doc.id, {"cid": 0, "private_use": 0, "pages": []})
        print("\n".join(f"note: {line}" for line in extraction_lines(info)), file=sys.stderr)
    if doc.meta.get("source_kind") == "html":
        payload["source_kind"] = "html"

    def text_out() -> str:
        if not pages:
            return doc.text
        parts, at = [], 0
        for p in pages:
            piece = doc.text[at:p["start"]]
            if piece:
                parts.append(piece if piece.endswith("\n") else piece + "\n")
            parts.append(f"──── page {p['page']} (offset {p['start']}) ────\n")
            at = p["start"]
        parts.append(doc.text[at:])
        return "".join(parts)

    if args.json:
        emit(args, payload, text_out)
    else:  # not print: no newline added to the text
        sys.stdout.write(text_out())
    return 0


def cmd_validate(args) -> int:
    """Exit 0 when every evidence string is located (found exactly once, or pinned by offsets or
    occurrence), 1 when some line has a problem."""
    limit = cap(args)
    if args.corpus:
        corpus = say_ocr(load_corpus(args.corpus, max_file_bytes=limit))
    elif args.questions in NAMED_SETS:
        corpus = say_ocr(load_corpus(NAMED_SETS[args.questions][1], max_file_bytes=limit))
    else:
        raise CLIError("--corpus is required when --questions is a file", where="--corpus")
    # the same reading and locating rules as eval's load_questions: only the reporting differs
    questions, problems = check_questions(args.questions, corpus, max_file_bytes=limit)
    if args.where and questions:  # --where selects among the located questions; problems are all reported
        questions = filter_questions(questions, args)
    pinned = sum(q.pinned for q in questions)
    first: dict[str, str] = {}
    same_text = []  # a warning, not an error: a set may ask one thing about two documents
    for q in questions:
        text_key = " ".join(q.question.split())
        if text_key in first:
            same_text.append(f"questions {first[text_key]} and {q.id} have the same text: {q.question[:40]!r}")
        else:
            first[text_key] = q.id
    report = {"questions_file": args.questions, "corpus": corpus.name, "ok": not problems,
              **summarize(questions), **where_fields(args), "pinned": pinned, "problems": [p.to_json() for p in problems],
              "warnings": same_text}
    pdf_info = extraction_info(corpus.documents)
    if pdf_info:
        report["pdf_extraction"] = pdf_info
    if not args.json:
        warn(same_text)

    def text() -> str:
        lines = [f"{args.questions}: {len(questions)} questions located, {report['evidence']} evidence strings, "
                 f"corpus {corpus.name!r} ({len(corpus)} documents, {corpus.text_chars:,} chars){where_note(args)}",
                 "by type:       " + (", ".join(f"{k} {v}" for k, v in report["by_type"].items()) or "-"),
                 "by difficulty: " + (", ".join(f"{k} {v}" for k, v in report["by_difficulty"].items()) or "-")]
        if pinned:
            lines.append(f"pinned:        {pinned} questions locate their evidence by offsets or occurrence")
        lines.extend(extraction_lines(pdf_info))
        if problems:
            lines.append(f"FAILED: {len(problems)} problems on {len({p.line for p in problems})} lines:")
            lines.extend(f"  {p}" for p in problems)
        else:
            lines.append("OK: every evidence string found exactly once" if not pinned else
                         "OK: every evidence string found exactly once, or at its offsets / occurrence")
        return "\n".join(lines)

    emit(args, report, text)
    return 1 if problems else 0


def cmd_audit(args) -> int:
    """Every item of article 000's checklist as PASS or FAIL; exit 1 when some item fails."""
    limit = cap(args)
    if args.config:
        try:
            config = loads_json(read_text_file(args.config, limit))
        except json.JSONDecodeError as exc:
            raise CLIError(f"{args.config} is not valid JSON: {exc}", where=f"{args.config}:{exc.lineno}") from None
    else:
        config = {"strategy": args.strategy, "params": parse_params(args.param),
                  "use_context": args.context, "transcribe_tables": args.transcribe_tables}
    canon = canonical_config(config)
    corpus = load_corpus(args.corpus, max_file_bytes=limit)
    questions = load_questions(args.questions, corpus, max_file_bytes=limit) if args.questions else None
    items = audit(corpus, canon, questions, k=args.k, token_limit=args.token_limit)
    version = index_version(canon, corpus.documents)
    failed = sum(not it.passed for it in items)
    payload = {"corpus": args.corpus, "config": canon, "index_version": version, "ok": not failed,
               "items": [it._asdict() for it in items]}

    def text() -> str:
        head = (f"chunklab audit: {get_strategy(canon['strategy'], **canon['params'])!r} on {args.corpus}, "
                f"use_context={canon['use_context']}, transcribe_tables={canon['transcribe_tables']}, "
                f"index version {version}")
        return head + "\n" + format_report(items)

    emit(args, payload, text)
    return 1 if failed else 0


#: What ``eval --json`` lists for each question ("per_question"), so that a run can be compared later.
PER_QUESTION = ("hit", "mrr", "recall", "retrieved_chars")


def group_of(q, key: str) -> str:
    """The group of a question under ``eval --by KEY``: its type or difficulty (``"-"`` unlabeled), or the
    id of the document its evidence is in (``"a+b"`` for evidence in two documents)."""
    if key == "doc":
        return "+".join(dict.fromkeys(s.doc_id for s in getattr(q, "spans", ()) or ())) or "-"
    value = getattr(q, key, None)
    return str(value) if value is not None else "-"


def by_groups(result, questions, keys) -> dict[str, dict[str, dict[str, float]]]:
    """``{key: {group: {"questions", "hit", "hit_lo", "hit_hi", "mrr"}}}``: per group, the mean hit with its
    95% bootstrap interval over the group's questions, and the mean mrr; groups largest first."""
    by_id = {str(getattr(q, "id", i)): q for i, q in enumerate(questions)}
    hit, mrr = result.per_question["hit"], result.per_question["mrr"]
    out: dict[str, dict[str, dict[str, float]]] = {}
    for key in dict.fromkeys(keys):
        rows: dict[str, list[int]] = {}
        for i, qid in enumerate(result.question_ids):
            rows.setdefault(group_of(by_id[str(qid)], key), []).append(i)
        table = {}
        for group, idx in sorted(rows.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            ci = bootstrap_ci([float(hit[i]) for i in idx])
            table[group] = {"questions": len(idx), "hit": ci["mean"], "hit_lo": ci["lo"], "hit_hi": ci["hi"],
                            "mrr": float(sum(float(mrr[i]) for i in idx) / len(idx))}
        out[key] = table
    return out


def _by_text(by) -> list[str]:
    lines = []
    for key, table in by.items():
        width = max([len(key)] + [len(g) for g in table])
        lines.append(f"by {key}:")
        lines.append(f"  {key:<{width}}  {'questions':>9}  {'hit':>6}  {'95% CI':<16}  {'mrr':>6}")
        for g, r in table.items():
            lines.append(f"  {g:<{width}}  {r['questions']:>9}  {r['hit']:>6.3f}  [{r['hit_lo']:.3f}, {r['hit_hi']:.3f}]"
                         f"  {r['mrr']:>6.3f}")
    return lines


def cmd_eval(args) -> int:
    if args.misses < 0:
        raise CLIError(f"--misses must be an int >= 0, got {args.misses}")
    for key in args.by or ():
        if key not in WHERE_KEYS:
            raise CLIError(f"--by must be one of {', '.join(WHERE_KEYS)}, got {key!r}", where="--by")
    settings = settings_from_args(args)
    chunker = eval_chunker(args)
    base = load_run(args.baseline, cap(args)) if args.baseline else None  # a bad baseline fails before the run
    if args.save:
        check_save(args.save)
    corpus, questions = load_inputs(args)
    result = evaluate_chunker(corpus, questions, chunker, settings)
    summary = result.summary()
    by_id = {str(getattr(q, "id", i)): q for i, q in enumerate(questions)}
    layout = Layout(corpus.documents)
    depth = int(result.ranked.shape[1]) if result.ranked is not None else 0  # how deep the ranking went
    misses = []
    for case in result.bad_cases[: args.misses]:
        q = by_id.get(str(case["question_id"]))
        a, b = case["evidence"]  # global offsets: back to the document and its own offsets
        doc_id, start = layout.to_local(a)
        evidence = {"doc": doc_id, "start": start, "end": start + (b - a)}
        if corpus[doc_id].meta.get("spans"):  # a PDF: the pages the evidence is on
            evidence["pages"] = pages_of(corpus[doc_id], start, start + (b - a))
        misses.append({**case, "evidence": evidence, "question": getattr(q, "question", None),
                       "evidence_text": layout.text(a, b), "rank_text": rank_text(case["container_rank"], depth,
                                                    int((result.ranked[result.question_ids.index(case["question_id"])] >= 0).sum()))})
    payload = {**summary, **retrieval_fields(settings, summary), **where_fields(args)}
    pdf_info = extraction_info(corpus.documents)
    if pdf_info:
        payload["pdf_extraction"] = pdf_info
    routes = auto_routes(chunker.config, corpus.documents)
    if routes is not None:  # auto: each document's route, why, and any fallback
        payload["routes"] = routes
    payload["metric_rules"] = settings.metric_rules
    payload["metrics_explained"] = {m: d["doc"] for m, d in METRICS.items()}
    if args.misses:
        payload["misses"] = misses
    by = by_groups(result, questions, args.by) if args.by else {}
    if by:
        payload["by"] = by
    cols = {m: result.per_question[m] for m in PER_QUESTION if m in result.per_question}
    payload["per_question"] = [{"id": str(qid), **{m: float(c[i]) for m, c in cols.items()}}
                               for i, qid in enumerate(result.question_ids)]
    if chunker.placement is not None:
        payload = {**payload, "placement": chunker.placement}
    run = {"label": chunker.label, "corpus": corpus.name, "questions_file": args.questions}
    if args.save:
        save_run(args.save, payload, run)
    gate: dict | None = None
    if base is not None:
        gate, notes = against_baseline({**payload, "run": run}, base, args.baseline)
        payload = {**payload, "baseline": gate}
        if notes:
            payload["warnings"] = list(payload.get("warnings", ())) + notes
            if not args.json:
                warn(notes)
    if not args.json:  # with --json they are the summary's "warnings"
        warn(summary.get("warnings", ()))

    def text() -> str:
        k_used = result.k_used if result.k_used is not None else args.k
        lines = [f"{chunker.label} on {corpus.name}: {len(questions)} questions, k={k_used}"
                 + (f", budget={args.budget}" if args.budget else "") + f", {describe(settings, summary)}"
                 + where_note(args),
                 result.table(["hit", "hit_strict", "recall", "mrr", "complete_single", "precision", "iou",
                               "precision_omega", "duplication"]),
                 *_delivered(result, args),
                 "misses by symptom: " + ", ".join(f"{k} {v}" for k, v in result.symptoms.items()),
                 f"chunks {summary.get('chunks')}, mean length {summary.get('len_mean', 0):.0f}, "
                 f"boundary alignment {summary.get('boundary_alignment', 0):.1%}"]
        if chunker.placement is not None:
            pl = chunker.placement
            lines.append(f"the splitter's {pl.get('pieces', '?')} pieces: {pl.get('reported', '?')} placed at the "
                         f"offsets the library reported, {pl.get('searched', '?')} found by search, "
                         f"{pl.get('damaged', '?')} with a cut character")
        for m in misses:
            where = ("nothing retrieved" if m.get("nothing_retrieved") else
                     "the evidence is in no chunk" if not m["n_pieces"] else
                     "no chunk holds the evidence whole" if m["symptom"] in ("cut", "too_small") else
                     f"rank of a holding chunk {m['rank_text']}")
            pages = f" {_pages_label(m['evidence']['pages'])}" if m["evidence"].get("pages") else ""
            lines.append(f"  miss {m['question_id']} [{m['symptom']}] {where}{pages}: {(m['question'] or '')[:40]}")
        tail = baseline_text(gate) if gate is not None else []
        return "\n".join(lines[:2] + _by_text(by) + lines[2:] + extraction_lines(pdf_info) + route_lines(routes or [], every=args.routes) + list(METRIC_LEGEND) + tail)

    emit(args, payload, text)
    return 1 if gate is not None and gate["regressed"] else 0


def auto_routes(config: dict, documents) -> list[dict] | None:
    """Each document's route (:func:`~chunklab.strategies.router.route_table`) when ``config`` is the
    ``auto`` strategy, with its sizes; None for any other configuration."""
    if config.get("strategy") != "auto":
        return None
    return route_table(documents, **{k: v for k, v in config.items() if k != "strategy"})


def _delivered(result, args) -> list[str]:
    """With a budget, what each question was actually handed: a budget is a ceiling, so say how full."""
    if not args.budget:
        return []
    agg = result.aggregate["retrieved_chars"]
    unit = getattr(args, "budget_unit", "chars")
    line = (f"delivered per question: {agg['mean']:.0f} characters [{agg['lo']:.0f}, {agg['hi']:.0f}] "
            f"for a budget of {args.budget} {unit} (the last chunk cut to the room left)")
    if "retrieved_tokens" in result.aggregate:
        line += f", {result.aggregate['retrieved_tokens']['mean']:.0f} tokens"
    return [line]


#: The metrics ``compare`` tests, paired.
COMPARED = ("hit", "recall", "mrr", "iou", "precision_omega")
#: One line under eval's and compare's tables saying what the less familiar metrics mean.
METRIC_LEGEND = (
    "metrics: hit = a top-k chunk holds >= half of an evidence span; recall = share of evidence characters retrieved;",
    "  mrr = 1/rank of the first hit; precision, iou = Chroma's: evidence characters over retrieved characters;",
    "  precision_omega = Chroma's precision_Ω: the precision of retrieving exactly the chunks that overlap the evidence")


def _side(winner: str | None, args) -> str:
    """The winner column: ``A (its spec)`` or ``B (its spec)``, the spec as written with its ``@retriever``."""
    if winner is None:
        return "— (undecided: the interval includes 0)"
    if args.a == args.b:
        return winner
    return f"A ({args.a})" if winner == args.a else f"B ({args.b})"


def by_difficulty(ra, rb, questions, names: tuple[str, str]) -> dict[str, dict]:
    """Per difficulty label (when the questions carry one), hit of both sides paired: ``{level:
    {"questions", "mean_a", "mean_b", "diff", "lo", "hi", "significant", "winner"}}``, largest group
    first; ``{}`` when no question has a difficulty. Where hybrid retrieval helps the easy questions
    and hurts the hard ones, this is where it shows."""
    by_id = {str(getattr(q, "id", i)): q for i, q in enumerate(questions)}
    levels = [group_of(by_id[str(qid)], "difficulty") for qid in ra.question_ids]
    if all(level == "-" for level in levels):
        return {}
    pos = {q: i for i, q in enumerate(rb.question_ids)}
    out: dict[str, dict] = {}
    for level in sorted(set(levels), key=lambda g: (-levels.count(g), g)):
        idx = [i for i, g in enumerate(levels) if g == level]
        va = [float(ra.per_question["hit"][i]) for i in idx]
        vb = [float(rb.per_question["hit"][pos[ra.question_ids[i]]]) for i in idx]
        r = paired_bootstrap(va, vb, metric="hit")
        same = va == vb
        winner = None if same or not r["significant"] else names[0] if r["diff"] > 0 else names[1]
        out[level] = {"questions": len(idx), "mean_a": sum(va) / len(va), "mean_b": sum(vb) / len(vb),
                      "diff": r["diff"], "lo": r["lo"], "hi": r["hi"], "significant": bool(r["significant"]) and not same,
                      "winner": winner}
    return out


def cmd_compare(args) -> int:
    """Two configurations on the same questions, paired; a side may rank its own way
    (``CONFIG@RETRIEVER[:EMBEDDER]``, see :mod:`chunklab.cli.engines`)."""
    (spec_a, suffix_a), (spec_b, suffix_b) = split_side(args.a), split_side(args.b)
    settings = settings_from_args(args, embedder_alone=True)
    sa = side_settings(settings, suffix_a, args.embedder)
    sb = side_settings(settings, suffix_b, args.embedder)
    ranks = [suffix or (retriever_name(settings), None) for suffix in (suffix_a, suffix_b)]
    if args.embedder and not any(r in NEEDS_EMBEDDER and not own for r, own in ranks):
        raise CLIError(f"--embedder {args.embedder} is used by --retriever dense or hybrid, or by a side written "
                       f"CONFIG@dense; nothing here takes it (a side written CONFIG@dense:NAME names its own)",
                       where="--embedder")
    if (args.fusion or args.weights) and not any(r == "hybrid" for r, _ in ranks):
        flag = "--fusion" if args.fusion else "--weights"
        raise CLIError(f"{flag} says how hybrid retrieval fuses BM25 and dense, but neither side ranks with hybrid "
                       f"(write a side CONFIG@hybrid, or give --retriever hybrid)", where=flag)
    side_a, side_b = side_chunker(spec_a, args), side_chunker(spec_b, args)
    if args.splitter and "splitter" not in (spec_a.strip(), spec_b.strip()):
        raise CLIError("--splitter is given but neither side of compare is 'splitter' (write 'splitter' as A or B)",
                       where="--splitter")
    if args.splitter_args and not any(s.config.get("strategy") == "splitter" for s in (side_a, side_b)):
        raise CLIError("--splitter-args is given but neither side of compare is a splitter", where="--splitter-args")
    corpus, questions = load_inputs(args)
    # one BM25 index of the corpus serves both sides (a dense side does not use it)
    index = None if retriever_name(sa) == retriever_name(sb) == "dense" else CorpusIndex(corpus.documents,
                                                                                         tokenizer=settings.tokenizer)
    ra = evaluate_chunker(corpus, questions, side_a, sa, index=index)
    rb = evaluate_chunker(corpus, questions, side_b, sb, index=index)
    result = compare(ra, rb, names=(args.a, args.b), metrics=COMPARED)
    tok = settings.tokenizer_name
    sum_a, sum_b = ra.summary(), rb.summary()
    fields = {f"{key}_{x}": value for x, st, sm in (("a", sa, sum_a), ("b", sb, sum_b))
              for key, value in retrieval_fields(st, sm).items()}
    # per question, in A's order, so that a reader can test several comparisons together (paired_many)
    pos = {q: i for i, q in enumerate(rb.question_ids)}
    order = [pos[q] for q in ra.question_ids]
    per_q = {m: {"values_a": [float(x) for x in ra.per_question[m]],
                 "values_b": [float(rb.per_question[m][i]) for i in order]} for m in result}
    # each metric's entry says what was compared under which ruler (the sides' labels, k, budget)
    ruler = {"label_a": side_a.label, "label_b": side_b.label, "k": args.k, "budget": args.budget,
             "budget_unit": args.budget_unit if args.budget else None}
    shown_routes = []
    for x, side in (("a", side_a), ("b", side_b)):
        rows = auto_routes(side.config, corpus.documents)
        if rows is not None:  # an auto side: each document's route in every metric's entry
            ruler[f"routes_{x}"] = rows
            shown_routes += [f"{x.upper()}: {line}" if i == 0 else line
                             for i, line in enumerate(route_lines(rows, every=args.routes))]
    payload = {m: {**r, **ruler, "tokenizer": tok, **fields, **where_fields(args), **per_q[m],
                   "question_ids": list(ra.question_ids)}
               for m, r in result.items()}
    warn([f"{label}: {w}" for label, sm in ((args.a, sum_a), (args.b, sum_b)) for w in sm.get("warnings", ())])
    by_level = by_difficulty(ra, rb, questions, (args.a, args.b))
    if by_level:
        payload["hit"]["by_difficulty"] = by_level

    def text() -> str:
        lines = [f"A = {side_a.label}  — {describe(sa, sum_a, tokenizer=False)}",
                 f"B = {side_b.label}  — {describe(sb, sum_b, tokenizer=False)}",
                 f"{len(questions)} questions, k={args.k}" + (f", budget={args.budget}" if args.budget else "")
                 + f", tokenizer {tok}" + where_note(args),
                 *[f"{side}: {line}" for side, r in (("A", ra), ("B", rb)) for line in _delivered(r, args)],
                 f"{'metric':<16}{'A':>8}{'B':>8}{'A-B':>9}  95% CI            winner"]
        for m, r in result.items():
            lines.append(f"{m:<16}{r['mean_a']:>8.3f}{r['mean_b']:>8.3f}{r['diff']:>+9.3f}  "
                         f"[{r['lo']:+.3f}, {r['hi']:+.3f}]  {_side(r['winner'], args)}")
        if by_level:
            lines.append("hit by difficulty (paired, per group of questions; a small group has a wide interval):")
            lines.append(f"{'difficulty':<12}{'n':>5}{'A':>8}{'B':>8}{'A-B':>9}  95% CI            winner")
            for level, r in by_level.items():
                lines.append(f"{level:<12}{r['questions']:>5}{r['mean_a']:>8.3f}{r['mean_b']:>8.3f}{r['diff']:>+9.3f}  "
                             f"[{r['lo']:+.3f}, {r['hi']:+.3f}]  {_side(r['winner'], args)}")
        lines.extend(METRIC_LEGEND)
        return "\n".join(lines + extraction_lines(extraction_info(corpus.documents)) + shown_routes)

    emit(args, payload, text)
    return 0
