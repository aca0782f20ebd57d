"""北辰云定价：门店阶梯价、付费周期折扣、优惠券与增值税。

价格口径（2025 版价目表，财务部 2024-12-20 发布）：
- 标价按「每门店每月」计，均为不含税价；
- 门店数量按累进阶梯计价，类似个税：第 11 家门店起才打 9 折，前 10 家仍按原价；
- 季付 95 折、年付 85 折，折扣只作用于订阅费，不作用于实施服务费和硬件；
- 优惠券在周期折扣之后抵扣，单笔订单最多抵扣订阅费的 20%；
- 增值税税率 6%（信息技术服务），开票时在不含税金额上计算。
"""
from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

from .models import CENT, BillingCycle, Plan

VAT_RATE = Decimal("0.06")

LIST_PRICE: dict[Plan, Decimal] = {
    Plan.BASIC: Decimal("199"),
    Plan.PRO: Decimal("399"),
    Plan.ENTERPRISE: Decimal("699"),
}

# (本档门店数上限, 折扣系数)；None 表示不设上限
STORE_TIERS: list[tuple[int | None, Decimal]] = [
    (10, Decimal("1.00")),
    (50, Decimal("0.90")),
    (200, Decimal("0.80")),
    (None, Decimal("0.70")),
]

CYCLE_MONTHS = {BillingCycle.MONTHLY: 1, BillingCycle.QUARTERLY: 3, BillingCycle.ANNUAL: 12}
CYCLE_RATE = {
    BillingCycle.MONTHLY: Decimal("1.00"),
    BillingCycle.QUARTERLY: Decimal("0.95"),
    BillingCycle.ANNUAL: Decimal("0.85"),
}
MAX_COUPON_RATIO = Decimal("0.20")


def money(value: Decimal) -> Decimal:
    """四舍五入到分。"""
    return value.quantize(CENT, rounding=ROUND_HALF_UP)


@dataclass(frozen=True)
class Quote:
    list_amount: Decimal      # 原价（阶梯价后、周期折扣前）
    cycle_discount: Decimal   # 季付/年付优惠
    coupon_discount: Decimal  # 优惠券抵扣
    net_amount: Decimal       # 不含税应付
    tax_amount: Decimal
    total: Decimal            # 含税应付


def monthly_store_fee(plan: Plan, store_count: int) -> Decimal:
    """按累进阶梯计算每月订阅费（不含税）。"""
    if store_count <= 0:
        raise ValueError("门店数量必须大于 0")
    price = LIST_PRICE[plan]
    fee = Decimal("0")
    lower = 0
    for upper, rate in STORE_TIERS:
        top = store_count if upper is None else min(store_count, upper)
        if top > lower:
            fee += price * rate * (top - lower)
        if upper is None or store_count <= upper:
            break
        lower = upper
    return money(fee)


def quote(plan: Plan, store_count: int, cycle: BillingCycle,
          coupon: Decimal = Decimal("0")) -> Quote:
    """生成订阅报价。

    >>> quote(Plan.PRO, 30, BillingCycle.ANNUAL).total
    Decimal('120791.66')
    """
    list_amount = money(monthly_store_fee(plan, store_count) * CYCLE_MONTHS[cycle])
    after_cycle = money(list_amount * CYCLE_RATE[cycle])
    cycle_discount = list_amount - after_cycle
    coupon_discount = min(coupon, money(after_cycle * MAX_COUPON_RATIO))
    net = after_cycle - coupon_discount
    tax = money(net * VAT_RATE)
    return Quote(list_amount, cycle_discount, coupon_discount, net, tax, net + tax)
