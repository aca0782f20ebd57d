"""北辰云计费领域模型。

所有金额一律使用 Decimal，单位为人民币元，保留两位小数；
单价与小计均为不含税金额，增值税在开票时单独计算（见 pricing.VAT_RATE）。
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal
from enum import Enum

CENT = Decimal("0.01")


class Plan(str, Enum):
    """订阅版本。"""

    BASIC = "basic"            # 基础版
    PRO = "pro"                # 专业版
    ENTERPRISE = "enterprise"  # 旗舰版


class BillingCycle(str, Enum):
    MONTHLY = "monthly"
    QUARTERLY = "quarterly"
    ANNUAL = "annual"


class ItemKind(str, Enum):
    SUBSCRIPTION = "subscription"      # 门店订阅费
    IMPLEMENTATION = "implementation"  # 实施服务费（数据迁移、上线培训）
    HARDWARE = "hardware"              # 扫码枪、小票打印机等硬件
    SMS_PACK = "sms_pack"              # 会员营销短信包


class InvoiceType(str, Enum):
    NORMAL = "normal"    # 数电普票
    SPECIAL = "special"  # 数电专票


class RefundStatus(str, Enum):
    APPROVED = "approved"                # 自动通过
    PENDING_REVIEW = "pending_review"    # 等待人工审批
    WAITING_RED_INVOICE = "waiting_red"  # 等待红字发票完成
    REJECTED = "rejected"
    MANUAL = "manual"                    # 转人工（如硬件售后）
    PAID = "paid"


@dataclass
class LineItem:
    """订单明细行。gift_days 为促销赠送天数，附加在服务期末尾。"""

    sku: str
    kind: ItemKind
    description: str
    quantity: int
    unit_price: Decimal
    discount: Decimal = Decimal("0")
    service_start: date | None = None
    service_end: date | None = None
    gift_days: int = 0
    delivered: bool = False     # 实施服务是否已签署《实施完成确认单》
    units_used: int = 0         # 短信包已消耗条数

    @property
    def subtotal(self) -> Decimal:
        return (self.unit_price * self.quantity - self.discount).quantize(CENT)

    @property
    def service_days(self) -> int:
        if self.service_start is None or self.service_end is None:
            return 0
        return (self.service_end - self.service_start).days


@dataclass
class Invoice:
    invoice_no: str
    order_no: str
    customer_name: str
    tax_id: str                 # 统一社会信用代码
    issued_at: datetime
    invoice_type: InvoiceType = InvoiceType.NORMAL
    net_amount: Decimal = Decimal("0")
    tax_amount: Decimal = Decimal("0")
    red_reversed: bool = False  # 是否已红冲

    @property
    def total(self) -> Decimal:
        return self.net_amount + self.tax_amount


@dataclass
class Order:
    order_no: str               # 形如 BC2025031400123
    customer_id: str
    plan: Plan
    cycle: BillingCycle
    store_count: int
    paid_at: datetime
    payment_channel: str        # wechat / alipay / card / bank_transfer
    items: list[LineItem] = field(default_factory=list)
    cycle_discount: Decimal = Decimal("0")  # 季付/年付优惠金额（不含税）
    invoice: Invoice | None = None
    refunded_amount: Decimal = Decimal("0")

    def items_of(self, kind: ItemKind) -> list[LineItem]:
        return [item for item in self.items if item.kind == kind]

    @property
    def net_paid(self) -> Decimal:
        return sum((i.subtotal for i in self.items), Decimal("0"))


@dataclass
class Refund:
    refund_no: str
    order_no: str
    net_amount: Decimal
    tax_amount: Decimal
    status: RefundStatus
    rule: str                   # 命中的规则编号，例如 R2-7DAY
    approver_role: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def total(self) -> Decimal:
        return self.net_amount + self.tax_amount
