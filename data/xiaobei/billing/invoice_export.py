"""发票台账导出：供财务部月末对账使用。

CSV 采用 UTF-8 with BOM，方便财务同事直接用 Excel 打开不乱码；
JSON 用于对接财务共享中心的接口，金额以字符串输出，避免浮点误差。
单次导出上限 10 万行，超出时请按月份分批导出（与北辰云前台的导出上限一致）。
"""
from __future__ import annotations

import csv
import json
from collections.abc import Iterable
from pathlib import Path

from .models import Invoice

MAX_ROWS = 100_000
CSV_HEADER = ["发票号码", "订单号", "购买方名称", "纳税人识别号", "开票日期",
              "票种", "不含税金额", "税额", "价税合计", "是否红冲"]
TYPE_LABEL = {"normal": "数电普票", "special": "数电专票"}


def _rows(invoices: Iterable[Invoice]) -> list[list[str]]:
    rows = []
    for inv in invoices:
        rows.append([
            inv.invoice_no, inv.order_no, inv.customer_name, inv.tax_id,
            inv.issued_at.strftime("%Y-%m-%d"), TYPE_LABEL[inv.invoice_type.value],
            f"{inv.net_amount:.2f}", f"{inv.tax_amount:.2f}", f"{inv.total:.2f}",
            "是" if inv.red_reversed else "否",
        ])
        if len(rows) > MAX_ROWS:
            raise ValueError(f"导出行数超过 {MAX_ROWS} 行，请缩小日期范围后重试")
    return rows


def export_invoices_csv(invoices: Iterable[Invoice], path: str | Path) -> int:
    """导出 CSV，返回写入的数据行数（不含表头）。"""
    rows = _rows(invoices)
    with open(path, "w", encoding="utf-8-sig", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(CSV_HEADER)
        writer.writerows(rows)
    return len(rows)


def export_invoices_json(invoices: Iterable[Invoice], path: str | Path) -> int:
    """导出 JSON 数组，字段名使用英文，便于接口对接。"""
    keys = ["invoice_no", "order_no", "customer_name", "tax_id", "issued_date",
            "invoice_type", "net_amount", "tax_amount", "total", "red_reversed"]
    records = []
    for row in _rows(invoices):
        record = dict(zip(keys, row))
        record["red_reversed"] = row[-1] == "是"
        records.append(record)
    Path(path).write_text(json.dumps(records, ensure_ascii=False, indent=2),
                          encoding="utf-8")
    return len(records)
