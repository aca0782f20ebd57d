"""北辰云计费与退款模块（billing）。

对外暴露报价、退款策略与发票导出三组接口；legacy_sync 为旧 ERP 同步脚本，
自 v3.5 起已停用，保留在仓库中仅供对账追溯，不在此处导入。
"""
from .models import (BillingCycle, Invoice, InvoiceType, ItemKind, LineItem,
                     Order, Plan, Refund, RefundStatus)
from .pricing import VAT_RATE, monthly_store_fee, quote
from .refunds import RefundPolicyEngine, evaluate_refund
from .invoice_export import export_invoices_csv, export_invoices_json

__all__ = [
    "BillingCycle", "Invoice", "InvoiceType", "ItemKind", "LineItem", "Order",
    "Plan", "Refund", "RefundStatus", "VAT_RATE", "monthly_store_fee", "quote",
    "RefundPolicyEngine", "evaluate_refund", "export_invoices_csv",
    "export_invoices_json",
]
__version__ = "3.6.0"
