"""Chapter 4 exercises: table rows as sentences, where a function ends, the header in every
rows-chunk, and which handling each kind of content gets."""
from __future__ import annotations

import ast
import math

from hypothesis import strategies as st

from . import Exercise, Failure, exercise, property_check

# -- ex4-transcribe: a Markdown table row as a sentence (claim C6) ------------------------------------


def _cells(line: str) -> list[str]:
    s = line.strip()
    if s.startswith("|"):
        s = s[1:]
    if s.endswith("|"):
        s = s[:-1]
    return [c.strip() for c in s.split("|")]


def _reference_transcribe(header_line: str, row_line: str) -> str:
    names = _cells(header_line)
    parts = []
    for k, value in enumerate(_cells(row_line)):
        if not value:
            continue
        name = names[k] if k < len(names) and names[k] else f"列{k + 1}"
        parts.append(f"{name}：{value}")
    return "；".join(parts)


def _call_transcribe(candidate, header: str, row: str) -> str:
    got = candidate(header, row)
    if not isinstance(got, str):
        raise Failure(f"函数应返回一个字符串（一句话），你的函数返回了 {type(got).__name__}：{got!r}。")
    return got


def _check_transcribe_examples(candidate) -> None:
    header = "| 城市 | 城市类别 | 住宿 P1–P2 | 备注 |"
    cases = [
        ("| 北京 | 一类 | 500 | 总部所在地 |", "城市：北京；城市类别：一类；住宿 P1–P2：500；备注：总部所在地"),
        ("| 南京 | 二类 | 400 |  |", "城市：南京；城市类别：二类；住宿 P1–P2：400"),
        ("|南京|二类|400|—|", "城市：南京；城市类别：二类；住宿 P1–P2：400；备注：—"),
    ]
    for row, want in cases:
        got = _call_transcribe(candidate, header, row)
        if got != want:
            hint = ""
            if got.startswith("：") or "；：" in got or got.startswith("城市：；"):
                hint = "\n提示：行首和行尾的 | 切出了空字符串，列名和值错位了，先去掉两端的 | 再切分。"
            elif "：；" in got or got.endswith("："):
                hint = "\n提示：空单元格应当跳过，不要写出「备注：」这样没有值的项。"
            elif got.replace(" ", "") == want.replace(" ", "") and got != want:
                hint = "\n提示：注意去掉单元格两侧的空格，但列名内部的空格（住宿 P1–P2）要保留。"
            raise Failure(f"表头 {header!r}\n行   {row!r}\n应得到 {want!r}\n你的结果 {got!r}{hint}")


def _check_transcribe_ragged(candidate) -> None:
    # 表 1 of the travel policy has a row with fewer cells than the header; other tables have more
    header = "| 职级 | 飞机 | 高铁 / 动车 | 普通火车 | 轮船 |"
    short = "| M3（副总裁及以上） | 公务舱 | 商务座 | 软卧 |"
    want = "职级：M3（副总裁及以上）；飞机：公务舱；高铁 / 动车：商务座；普通火车：软卧"
    got = _call_transcribe(candidate, header, short)
    if got != want:
        raise Failure(f"少一格的行（表 1 的 M3 行）应得到 {want!r}，你的结果是 {got!r}。")
    got = _call_transcribe(candidate, "| 城市 | 限额 |", "| 上海 | 600 | 展会期间可上浮 |")
    want = "城市：上海；限额：600；列3：展会期间可上浮"
    if got != want:
        raise Failure(f"比表头多一格的行，多出的单元格不能丢，应命名为「列3」：应得到 {want!r}，你的结果是 {got!r}。"
                      "\n提示：zip(表头, 单元格) 会在较短的一边结束，悄悄丢掉多出的单元格。")


_WORD = st.text(st.sampled_from(list("城市住宿职级北京上海P12–/ ")), min_size=0, max_size=6)


def _check_transcribe_properties(candidate) -> None:
    def prop(names, values):
        names = [n.strip() or f"列名{i}" for i, n in enumerate(names)]
        header = "| " + " | ".join(names) + " |"
        row = "| " + " | ".join(values) + " |"
        want = _reference_transcribe(header, row)
        got = _call_transcribe(candidate, header, row)
        if got != want:
            raise Failure(f"表头 {header!r}\n行   {row!r}\n应得到 {want!r}\n你的结果 {got!r}")

    property_check(prop, st.lists(_WORD, min_size=1, max_size=5), st.lists(_WORD, min_size=1, max_size=6))


def _wrong_transcribe_split(header_line: str, row_line: str) -> str:
    # splits on "|" without removing the outer pipes: names and values are shifted by the empty first cell
    return "；".join(f"{n.strip()}：{v.strip()}" for n, v in zip(header_line.split("|"), row_line.split("|"))
                    if v.strip())


def _wrong_transcribe_zip(header_line: str, row_line: str) -> str:
    # zip() drops the cells beyond the header
    return "；".join(f"{n}：{v}" for n, v in zip(_cells(header_line), _cells(row_line)) if v)


def _wrong_transcribe_empty(header_line: str, row_line: str) -> str:
    # keeps empty cells ("备注：")
    names, values = _cells(header_line), _cells(row_line)
    return "；".join(f"{names[k] if k < len(names) else f'列{k + 1}'}：{v}" for k, v in enumerate(values))


exercise(Exercise(
    id="ex4-transcribe",
    title="练习 4.1 把表格的一行转写成句子",
    task="实现 transcribe(header_line, row_line) -> str：两个参数都是 Markdown 表格的一行（如 '| 城市 | 限额 |'），"
         "返回「列名：值」用「；」连接的一句话；空单元格跳过；比表头多出的单元格命名为「列N」（N 从 1 数起）。",
    checks=[("手算的三行（含空单元格、两端无空格）", _check_transcribe_examples),
            ("参差行：少一格、多一格", _check_transcribe_ragged),
            ("随机表头与随机行", _check_transcribe_properties)],
    solution=_reference_transcribe,
    wrong=[_wrong_transcribe_split, _wrong_transcribe_zip, _wrong_transcribe_empty],
))


# -- ex4-function-end: where does a function end? --------------------------------------------------------


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _reference_function_end(source: str, def_line: int) -> int:
    lines = source.split("\n")
    base = _indent(lines[def_line - 1])
    last = def_line
    for i in range(def_line, len(lines)):          # lines[i] is line i + 1
        line = lines[i]
        if not line.strip():
            continue                               # blank lines never end a function
        if _indent(line) <= base and not line.lstrip().startswith("#"):
            break
        if not line.lstrip().startswith("#"):
            last = i + 1
    return last


_BODY = [
    ["x = 1"],
    ["return x"],
    ["# a comment inside", "y = 2"],
    ["if x:", "    x += 1", "", "    return x"],
    ["for i in range(3):", "    pass"],
    ["total = (1 +", "         2)"],
    ["def inner():", "    return 3", "", "z = inner()"],
]


@st.composite
def _programs(draw):
    """Small Python modules with functions (some nested, some inside a class), blank lines,
    comments between statements, and the 1-based line of one def to ask about."""
    lines: list[str] = []
    defs: list[int] = []

    def emit_function(indent: str, name: str) -> None:
        defs.append(len(lines) + 1)
        if draw(st.booleans()):
            lines.append(f"{indent}def {name}(a,")
            lines.append(f"{indent}        b=2):")
        else:
            lines.append(f"{indent}def {name}(a):")
        for _ in range(draw(st.integers(1, 3))):
            body = draw(st.sampled_from(_BODY))
            if body[0].startswith("def "):
                defs.append(len(lines) + 1)
            lines.extend(indent + "    " + b if b else "" for b in body)
            if draw(st.booleans()):
                lines.append("")

    for k in range(draw(st.integers(1, 3))):
        kind = draw(st.integers(0, 1 if k == 0 else 2))   # the first item defines a function
        if kind == 0:
            emit_function("", f"f{k}")
        elif kind == 1:
            lines.append(f"class C{k}:")
            for j in range(draw(st.integers(1, 2))):
                emit_function("    ", f"m{j}")
                if draw(st.booleans()):
                    lines.append("")
        else:
            lines.append(f"X{k} = {k}")
        for _ in range(draw(st.integers(0, 2))):
            lines.append("")
        if draw(st.booleans()):
            lines.append("# section comment")
    lines.append("")
    return "\n".join(lines), draw(st.sampled_from(defs))


def _ast_end(source: str, def_line: int) -> int:
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.lineno == def_line:
            return node.end_lineno
    raise AssertionError(f"no def at line {def_line}")


def _numbered(source: str) -> str:
    return "\n".join(f"{i:>3}│{line}" for i, line in enumerate(source.split("\n"), 1))


def _call_end(candidate, source: str, def_line: int) -> int:
    got = candidate(source, def_line)
    if isinstance(got, bool) or not isinstance(got, int):
        raise Failure(f"函数应返回一个整数（最后一行的行号，从 1 数起），你的函数返回了 {got!r}。")
    return got


def _check_end_example(candidate) -> None:
    src = ("def refund(order):\n"
           "    if order.paid:\n"
           "        return 1\n"
           "\n"
           "    return 0\n"
           "\n"
           "\n"
           "def audit():\n"
           "    pass\n")
    for line, want in ((1, 5), (8, 9)):
        got = _call_end(candidate, src, line)
        if got != want:
            hint = ""
            if line == 1 and got == 3:
                hint = "\n提示：函数体里的空行（第 4 行）不表示函数结束，要看下一个非空行的缩进。"
            elif line == 1 and got in (6, 7):
                hint = "\n提示：函数结尾的空行不属于函数，返回最后一行代码的行号。"
            elif line == 1 and got >= 8:
                hint = "\n提示：和 def 同样缩进的下一行（第 8 行的 def audit）已经不属于这个函数了：比较缩进时要用 <=。"
            raise Failure(f"对下面的代码，第 {line} 行的函数应在第 {want} 行结束，你的结果是 {got}。\n"
                          f"{_numbered(src)}{hint}")


def _check_end_properties(candidate) -> None:
    def prop(program):
        source, def_line = program
        want = _ast_end(source, def_line)
        got = _call_end(candidate, source, def_line)
        if got != want:
            raise Failure(f"第 {def_line} 行的函数，ast 给出的结束行（end_lineno）是 {want}，你的结果是 {got}：\n"
                          f"{_numbered(source)}")

    property_check(prop, _programs(), max_examples=200)


def _wrong_end_blank(source: str, def_line: int) -> int:
    # stops at the first blank line
    lines = source.split("\n")
    i = def_line
    while i < len(lines) and lines[i].strip():
        i += 1
    return i


def _wrong_end_trailing(source: str, def_line: int) -> int:
    # includes the blank and comment lines after the body
    lines = source.split("\n")
    base = _indent(lines[def_line - 1])
    i = def_line
    while i < len(lines) and (not lines[i].strip() or _indent(lines[i]) > base or lines[i].lstrip().startswith("#")):
        i += 1
    return i


def _wrong_end_less(source: str, def_line: int) -> int:
    # "<" instead of "<=": a sibling at the same indentation is taken into the function
    lines = source.split("\n")
    base = _indent(lines[def_line - 1])
    last = def_line
    for i in range(def_line, len(lines)):
        if lines[i].strip() and _indent(lines[i]) < base:
            break
        if lines[i].strip():
            last = i + 1
    return last


exercise(Exercise(
    id="ex4-function-end",
    title="练习 4.2 函数在哪一行结束",
    task="实现 function_end(source, def_line) -> int：source 是一段 Python 源码，def_line 是某个 def 所在的行号"
         "（从 1 数起）；只看缩进，返回这个函数最后一行代码的行号，与 ast 的 end_lineno 一致。"
         "函数体里的空行和注释行不结束函数，结尾的空行、注释不算在函数里。",
    checks=[("手算的例子：函数体里有空行", _check_end_example),
            ("随机生成的模块（嵌套函数、类里的方法、多行签名），与 ast 对比", _check_end_properties)],
    solution=_reference_function_end,
    wrong=[_wrong_end_blank, _wrong_end_trailing, _wrong_end_less],
))


# -- ex4-rows-header: the header in every rows-chunk ---------------------------------------------------------


def _reference_rows_chunks(table: str, rows: int) -> list[str]:
    lines = [ln for ln in table.split("\n") if ln.strip()]
    head, body = lines[:2], lines[2:]
    return ["\n".join(head + body[i:i + rows]) for i in range(0, len(body), rows)]


def _table(n_rows: int, width: int = 3) -> str:
    head = "| 城市 | " + " | ".join(f"住宿 P{k}" for k in range(1, width)) + " |"
    delim = "|" + "---|" * width
    body = [f"| 城市{i} | " + " | ".join(str(300 + 50 * i + k) for k in range(1, width)) + " |"
            for i in range(1, n_rows + 1)]
    return "\n".join([head, delim, *body])


def _call_rows(candidate, table: str, rows: int) -> list[str]:
    got = candidate(table, rows)
    if not isinstance(got, list) or not all(isinstance(c, str) for c in got):
        raise Failure(f"函数应返回字符串的列表（每块一个字符串），你的函数返回了 {got!r}。")
    return got


def _check_rows(candidate, table: str, rows: int) -> None:
    lines = table.split("\n")
    head, delim, body = lines[0], lines[1], lines[2:]
    got = _call_rows(candidate, table, rows)
    want_n = math.ceil(len(body) / rows)
    shown = f"（{len(body)} 行数据，rows={rows}）"
    if len(got) != want_n:
        hint = "\n提示：最后不足 rows 行的那一组也要成块。" if len(got) == len(body) // rows else ""
        raise Failure(f"应切成 {want_n} 块{shown}，你的结果是 {len(got)} 块。{hint}")
    seen: list[str] = []
    for i, chunk in enumerate(got):
        cl = chunk.split("\n")
        if cl[:2] != [head, delim]:
            what = "表头行" if cl[:1] != [head] else "分隔行 |---|"
            raise Failure(f"第 {i + 1} 块没有以{what}开头{shown}：\n{chunk}\n"
                          "每一块都要先重复表头和分隔行，否则 500、600 这些数字不知道是哪一列。")
        data = cl[2:]
        if any(ln in (head, delim) for ln in data):
            raise Failure(f"第 {i + 1} 块里表头出现了不止一次：\n{chunk}")
        if not data or len(data) > rows:
            raise Failure(f"第 {i + 1} 块有 {len(data)} 行数据，应在 1 到 rows={rows} 行之间{shown}：\n{chunk}")
        seen.extend(data)
    if seen != body:
        raise Failure(f"所有块的数据行按顺序拼起来应恰好是原表的数据行{shown}；"
                      f"缺少 {[r for r in body if r not in seen][:2]}，多出 {[r for r in seen if r not in body][:2]}。")


def _check_rows_examples(candidate) -> None:
    _check_rows(candidate, _table(5), 2)
    _check_rows(candidate, _table(3), 3)
    _check_rows(candidate, _table(1), 4)


def _check_rows_properties(candidate) -> None:
    def prop(n_rows, rows, width):
        _check_rows(candidate, _table(n_rows, width), rows)

    property_check(prop, st.integers(1, 25), st.integers(1, 8), st.integers(2, 12), max_examples=120)


def _wrong_rows_first_only(table: str, rows: int) -> list[str]:
    # the header only in the first chunk
    lines = table.split("\n")
    out = ["\n".join(lines[i:i + rows]) for i in range(2, len(lines), rows)]
    out[0] = "\n".join(lines[:2]) + "\n" + out[0]
    return out


def _wrong_rows_drop_tail(table: str, rows: int) -> list[str]:
    # drops the last, incomplete group
    lines = table.split("\n")
    head, body = lines[:2], lines[2:]
    return ["\n".join(head + body[i:i + rows]) for i in range(0, len(body) - rows + 1, rows)]


def _wrong_rows_no_delim(table: str, rows: int) -> list[str]:
    # repeats the header line but not the |---| line, so the chunk is no longer a Markdown table
    lines = table.split("\n")
    head, body = lines[0], lines[2:]
    return ["\n".join([head] + body[i:i + rows]) for i in range(0, len(body), rows)]


exercise(Exercise(
    id="ex4-rows-header",
    title="练习 4.3 按行切表格，每块重复表头",
    task="实现 rows_chunks(table, rows) -> list[str]：table 是一张 Markdown 表格（表头行、分隔行 |---|、若干数据行），"
         "按每块至多 rows 行数据切分，每块都以表头行和分隔行开头，最后不足 rows 行的一组也成块。",
    checks=[("三张手算的小表", _check_rows_examples), ("随机行数、随机 rows、宽表", _check_rows_properties)],
    solution=_reference_rows_chunks,
    wrong=[_wrong_rows_first_only, _wrong_rows_drop_tail, _wrong_rows_no_delim],
))


# -- ex4-route: which handling each kind of content gets (a decision, the chapter's takeaways) ----------

#: The documents of the exercise (a description, the document) and the first thing ingestion does with each.
ROUTE_CASES = [
    ("billing/refunds.py：能解析的 Python 文件", {"kind": "python", "parses": True}, "code"),
    ("billing/legacy_sync.py：留着合并冲突标记、解析失败的 Python 文件", {"kind": "python", "parses": False}, "recursive"),
    ("差旅办法：带 Markdown 表格的制度文档", {"kind": "markdown", "tables": True}, "table"),
    ("远程办公管理办法：没有表格的 Markdown 文档", {"kind": "markdown", "tables": False}, "recursive"),
    ("客服记录：【会话】标题下一轮轮“[时间] 说话人：”", {"kind": "chat"}, "dialogue"),
    ("人事 FAQ：“问：……答：……”", {"kind": "faq"}, "qa_pair"),
    ("双栏排版、有文本层的 PDF", {"kind": "pdf", "text_layer": True}, "pipeline"),
    ("扫描进来的入职通知（PDF 里只有图片）", {"kind": "pdf", "text_layer": False}, "ocr"),
]

#: Why the right answer is right, in the chapter's words (section in brackets).
ROUTE_WHY = {
    "code": "代码有语法树给出的精确边界：code 一个函数/类一块，context 带“路径 :: 签名”，放得下的函数不会被切开（4.1）",
    "recursive": "",
    "table": "表格要“不在行中间下刀 + 每块能找回表头”：table 按行切、表题和表头进 context（4.2）",
    "dialogue": "对话的单元是发言轮次：dialogue 按轮次开窗，窗口只在回答之后结束，问答不会被拆开（4.3）",
    "qa_pair": "FAQ 的单元是问答对：qa_pair 一问一答一块，问句进 meta（4.3）",
    "pipeline": "PDF 先过 pipeline：按栏恢复阅读顺序、去页眉页脚、重建表格，之后才能切；逐行读会把双栏的证据拆散（4.4）",
    "ocr": "扫描页没有文本层，不做 OCR 它就不在索引里，而且流水线不会报错；先 OCR，再进 pipeline（4.4）",
}
ROUTE_ANSWERS = sorted(ROUTE_WHY)


def _reference_route(doc: dict) -> str:
    kind = doc["kind"]
    if kind == "python":
        return "code" if doc["parses"] else "recursive"
    if kind == "markdown":
        return "table" if doc["tables"] else "recursive"
    if kind == "pdf":
        return "pipeline" if doc["text_layer"] else "ocr"
    return {"chat": "dialogue", "faq": "qa_pair"}[kind]


def _route_why(doc: dict, want: str) -> str:
    if want != "recursive":
        return ROUTE_WHY[want]
    if doc["kind"] == "python":
        return ("文件解析失败时 code 没有语法树可用，只能回退到 recursive；把 parse_failed 和报错记下来，"
                "解析失败率要监控（4.1）")
    return "没有表格、代码、对话这类结构的普通文档，按段落和句子切的 recursive 就是默认（第 2 章）"


def _check_route(candidate) -> None:
    for what, doc, want in ROUTE_CASES:
        got = candidate(dict(doc))
        if got not in ROUTE_ANSWERS:
            raise Failure(f"route({doc!r}) 应返回 {', '.join(map(repr, ROUTE_ANSWERS))} 之一，你的函数返回了 {got!r}。")
        if got != want:
            raise Failure(f"{what}：route({doc!r}) 应返回 {want!r}，你的函数返回了 {got!r}。\n"
                          f"为什么：{_route_why(doc, want)}。")


def _wrong_route_all_recursive(doc: dict) -> str:
    # one strategy for everything: the chapter's opening mistake
    return "recursive"


def _wrong_route_code_always(doc: dict) -> str:
    # never looks at whether the file parses
    return "code" if doc["kind"] == "python" else _reference_route(doc)


def _wrong_route_no_ocr(doc: dict) -> str:
    # every PDF straight into the pipeline, scanned or not
    return "pipeline" if doc["kind"] == "pdf" else _reference_route(doc)


exercise(Exercise(
    id="ex4-route",
    title="练习 4.4 每类内容交给谁",
    task="实现 route(doc) -> str：doc 是一个描述文档的字典（kind 为 python / markdown / chat / faq / pdf，"
         "python 带 parses，markdown 带 tables，pdf 带 text_layer），返回入库时对它做的第一件事："
         "切分策略 'code'、'recursive'、'table'、'dialogue'、'qa_pair' 之一，或 PDF 的 'pipeline'（有文本层）/ 'ocr'（扫描件）。",
    checks=[("小北知识库里的八类文档", _check_route)],
    solution=_reference_route,
    wrong=[_wrong_route_all_recursive, _wrong_route_code_always, _wrong_route_no_ocr],
))
