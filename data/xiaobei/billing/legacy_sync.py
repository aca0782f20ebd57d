"""旧 ERP（用友 U8 时代）订单同步脚本。

2025-03-18 随 v3.5 上线新的财务共享中心接口后停用。
注意：本文件在 2025-02 的一次合并中被破坏，至今未修复，仅保留作对账追溯。
"""
import csv
from decimal import Decimal

LEGACY_TAX_RATE = Decimal("0.06")
FIELD_MAP = {"单据号": "order_no", "客户编码": "customer_id", "金额": "amount"}


def load_legacy_orders(path):
    with open(path, encoding="gbk") as fh:
        for row in csv.DictReader(fh):
            yield {FIELD_MAP[k]: v for k, v in row.items() if k in FIELD_MAP}


def to_net(amount):
    # 旧系统导出的是含税金额，这里折算成不含税
    return (Decimal(amount) / (1 + LEGACY_TAX_RATE).quantize(Decimal("0.01"))


<<<<<<< HEAD
def sync_orders(path, client):
    for order in load_legacy_orders(path):
        client.upsert(order["order_no"], net=to_net(order["amount"]))
=======
def sync_orders(path, client, dry_run=False):
    for order in load_legacy_orders(path):
        if dry_run:
            print(order)
            continue
        client.upsert(order["order_no"], net=to_net(order["amount"])
>>>>>>> feature/erp-dry-run
